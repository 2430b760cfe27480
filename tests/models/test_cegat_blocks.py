"""CEGAT's blocked attention (bounded memory at Yelp scale) equals the one-pass layer, values and gradients."""
from __future__ import annotations

import pytest
import torch

from hnn_toys import output_and_grads, random_hypergraph
from hypergvl.models.nn import build_model
from hypergvl.models.nn import cegat


def _model_and_data(seed: int, concat: bool):
    edges, hei, n = random_hypergraph(seed, num_nodes=14, num_edges=10, max_order=5)
    torch.manual_seed(seed)
    model = build_model("CEGAT", in_channels=6, hidden_channels=4, out_channels=3, num_layers=2, heads=3,
                        concat=concat, use_bn=False, dropout=0.0)
    return model, torch.randn(n, 6), hei


@pytest.mark.parametrize("seed,concat", [(0, True), (1, False), (2, True)])
def test_blocked_attention_equals_one_pass(monkeypatch, seed, concat):
    model, x, hei = _model_and_data(seed, concat)
    full = output_and_grads(model, x, hei)
    calls = []
    real = cegat.target_blocks
    monkeypatch.setattr(cegat, "target_blocks", lambda *a: calls.append(real(*a)) or calls[-1])
    monkeypatch.setattr(cegat, "BLOCK_ELEMENTS", 24)  # a few edges per block at 3 heads x 4 channels
    blocked = output_and_grads(model, x, hei)
    assert calls and max(len(b) for b in calls) > 3  # the blocked path ran, in several blocks
    for got, want in zip(blocked, full):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_target_blocks_cover_whole_neighbourhoods():
    target = torch.tensor([0, 0, 0, 1, 3, 3, 4, 4, 4, 4, 4, 5])  # node 2 has no edge; node 4 alone exceeds 3
    blocks = cegat.target_blocks(target, 6, 3)
    assert blocks[0][0] == 0 and blocks[-1][1] == target.numel() and blocks[-1][3] == 6
    for (s, e, lo, hi), (s2, _, lo2, _) in zip(blocks, blocks[1:]):
        assert e == s2 and hi == lo2
    for s, e, lo, hi in blocks:
        assert bool(((target[s:e] >= lo) & (target[s:e] < hi)).all())
        assert e - s <= 3 or hi - lo == 1
    assert (6, 11, 4, 5) in blocks


def test_clique_edges_are_sorted_by_target_and_include_every_self_loop():
    _, hei, n = random_hypergraph(3, num_nodes=12, num_edges=8)
    inc = build_model("CEGAT", in_channels=2, hidden_channels=2, out_channels=2).incidence(torch.zeros(n, 2), hei, None)
    source, target = cegat.clique_edges_with_loops(inc)
    assert bool((target[1:] >= target[:-1]).all())
    pairs = set(zip(source.tolist(), target.tolist()))
    assert all((v, v) in pairs for v in range(n)) and len(pairs) == source.numel()
