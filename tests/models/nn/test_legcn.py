"""LEGCN (issue 12): a GCN on the explicitly built line graph (and the ``isolated`` expansion), and the blocked layers
(bounded memory at Yelp scale) against the one-pass layers, values and gradients, dropout masks included."""
from __future__ import annotations

import pytest
import torch

from hnn_toys import SEEDS, inv, output_and_grads, random_hypergraph
from hypergvl.models.nn import build_model
from hypergvl.models.nn import legcn


# ------------------------------------------------------------------------------------------------- exact computation

def naive_legcn(model, x, hei, n, line_graph=True):
    """A GCN on the explicitly built line graph (dense P x P), features copied to incidences, mean back."""
    v, e = hei
    p = v.numel()
    if line_graph:
        a = (model.vertex_weight * (v[:, None] == v[None, :]).double()
             + model.edge_weight * (e[:, None] == e[None, :]).double())
        a.fill_diagonal_(1.0)
    else:
        a = torch.eye(p, dtype=torch.float64)
    d = a.sum(1).pow(-0.5)
    a_hat = d[:, None] * a * d[None, :]
    z = x.double()[v]
    for i, (lin, bias) in enumerate(zip(model.lins, model.biases)):
        z = a_hat @ (z @ lin.weight.double().t()) + bias.double()
        if i < len(model.lins) - 1:
            z = torch.relu(z)
    out = torch.zeros(n, z.size(1), dtype=torch.float64).index_add_(0, v, z)
    return out * inv(torch.bincount(v, minlength=n).double())[:, None]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weights", [(1.0, 1.0), (0.3, 2.0)])
def test_legcn_equals_gcn_on_the_explicit_line_graph(seed, weights):
    _, hei, n = random_hypergraph(seed)
    torch.manual_seed(seed)
    model = build_model("LEGCN", in_channels=4, hidden_channels=6, out_channels=3, num_layers=3,
                        vertex_weight=weights[0], edge_weight=weights[1]).double().eval()
    x = torch.randn(n, 4, dtype=torch.float64)
    with torch.no_grad():
        out = model(x, hei)
    torch.testing.assert_close(out, naive_legcn(model, x, hei, n))
    assert torch.all(out[n - 1] == 0)  # the isolated node has no line node


def test_legcn_isolated_expansion_removes_exactly_the_line_graph_edges():
    _, hei, n = random_hypergraph(5)
    torch.manual_seed(0)
    line = build_model("LEGCN", in_channels=4, hidden_channels=6, out_channels=3).double().eval()
    iso = build_model("LEGCN", in_channels=4, hidden_channels=6, out_channels=3, expansion="isolated").double()
    iso.load_state_dict(line.state_dict())
    iso.eval()
    x = torch.randn(n, 4, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(iso(x, hei), naive_legcn(iso, x, hei, n, line_graph=False))
        assert not torch.allclose(iso(x, hei), line(x, hei))
    # with the broken expansion, a 1-layer LEGCN is a linear map of each node's own features
    one = build_model("LEGCN", in_channels=4, hidden_channels=6, out_channels=3, num_layers=1,
                      expansion="isolated").double().eval()
    with torch.no_grad():
        expected = x @ one.lins[0].weight.t() + one.biases[0]
        covered = torch.bincount(hei[0], minlength=n) > 0
        torch.testing.assert_close(one(x, hei)[covered], expected[covered])


# ---------------------------------------------------------------------------------------------------- blocked layers

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
