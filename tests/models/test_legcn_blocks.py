"""LEGCN's blocked layers (bounded memory at Yelp scale) equal the one-pass layers, values and gradients."""
from __future__ import annotations

import pytest
import torch

from hnn_toys import output_and_grads, random_hypergraph
from hypergvl.models.nn import build_model
from hypergvl.models.nn import legcn


@pytest.mark.parametrize("layers,kw", [(1, {}), (2, {}), (3, {"vertex_weight": 0.3, "edge_weight": 2.0}),
                                       (2, {"expansion": "isolated"})])
def test_blocked_layers_equal_one_pass(monkeypatch, layers, kw):
    _, hei, n = random_hypergraph(4, num_nodes=15, num_edges=11, max_order=5)  # isolated node, order-1 edge
    torch.manual_seed(0)
    model = build_model("LEGCN", in_channels=5, hidden_channels=6, out_channels=3, num_layers=layers,
                        dropout=0.0, **kw).double()
    x = torch.randn(n, 5, dtype=torch.float64)
    full = output_and_grads(model, x, hei)
    blocks = []
    real = legcn.LEGCN._block
    monkeypatch.setattr(legcn.LEGCN, "_block", lambda self, i, s, e, *a: blocks.append((i, s, e)) or
                        real(self, i, s, e, *a))
    monkeypatch.setattr(legcn, "BLOCK_ELEMENTS", 20)  # 3 incidences per block at width 6
    monkeypatch.setattr(legcn, "BLOCK_THRESHOLD", 20)
    blocked = output_and_grads(model, x, hei)
    assert len({b for b in blocks if b[0] == 0}) > 3  # the blocked path ran, in several blocks
    for got, want in zip(blocked, full):
        torch.testing.assert_close(got, want)


def test_blocked_training_gradient_replays_the_dropout_masks(monkeypatch):
    """With dropout on, the checkpointed blocks must recompute the forward's masks in backward: the autograd
    gradient equals a finite difference of the forward under the same seed."""
    _, hei, n = random_hypergraph(5, num_nodes=15, num_edges=11)
    model = build_model("LEGCN", in_channels=5, hidden_channels=6, out_channels=3, dropout=0.5).double().train()
    x = torch.randn(n, 5, dtype=torch.float64)
    monkeypatch.setattr(legcn, "BLOCK_ELEMENTS", 20)
    monkeypatch.setattr(legcn, "BLOCK_THRESHOLD", 20)
    w = torch.randn(n, 3, dtype=torch.float64)

    def loss():
        torch.manual_seed(7)
        return (model(x, hei) * w).sum()

    torch.manual_seed(1)
    other = model(x, hei)
    first = loss()
    assert not torch.allclose(first, (other * w).sum())  # dropout is active
    first.backward()
    weight = model.lins[0].weight
    for idx in [(0, 0), (3, 2), (5, 4)]:
        with torch.no_grad():
            weight[idx] += 1e-6
            up = loss()
            weight[idx] -= 2e-6
            down = loss()
            weight[idx] += 1e-6
        torch.testing.assert_close(weight.grad[idx], (up - down) / 2e-6, rtol=1e-5, atol=1e-7)
