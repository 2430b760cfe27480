"""AllDeepSets and AllSetTransformer: the speed and memory rewrites compute the same function as the per-incidence
formula they replaced (``hnn_toys.assert_same_function``: outputs and every gradient, evaluation and training with
the same dropout masks), also with a loss on some nodes (the live-rows backward); the sparse input LayerNorm
against the dense one and the bag attention against the weighted aggregation."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from hnn_toys import assert_same_function, hypergraph_with_duplicate, old_setgnn
from hypergvl.models.nn import allset, build_model
from hypergvl.models.nn.base import Linear, StructureCache, prepare_input
from hypergvl.models.nn.sparse import Incidence, weighted_aggregation


@pytest.mark.parametrize("kwargs", [
    {},                                                                     # defaults: ln, input norm, sum
    {"aggregate": "mean", "gpr": True, "num_layers": 2, "dropout": 0.3},
    {"normalization": "none", "mlp_num_layers": 1},
    {"normalization": "bn", "aggregate": "mean"},
    {"input_norm": False, "mlp_num_layers": 3},
])
@pytest.mark.parametrize("layout", ["csr", "dense"])
def test_alldeepsets_same_function(kwargs, layout, monkeypatch):
    assert_same_function("AllDeepSets", monkeypatch, layout, **kwargs)


@pytest.mark.parametrize("kwargs", [{}, {"heads": 2, "gpr": True, "num_layers": 2},
                                    {"heads": 3, "mlp_num_layers": 1, "normalization": "bn"}])
@pytest.mark.parametrize("layout, size", [("csr", (11, 8)), ("dense", (11, 8)), ("csr", (7, 12))])
def test_allsettransformer_same_function(kwargs, layout, size, monkeypatch):
    """Fewer hyperedges than nodes and more: the value map applied before or after pooling, both directions."""
    assert_same_function("AllSetTransformer", monkeypatch, layout, size=size, **kwargs)


@pytest.mark.parametrize("kwargs", [{"gpr": True, "num_layers": 2, "dropout": 0.4},
                                    {"gpr": False, "num_layers": 2, "decoder_num_layers": 3}])
@pytest.mark.parametrize("layout, size", [("csr", (11, 8)), ("dense", (11, 8)), ("csr", (7, 12))])
def test_allsettransformer_loss_on_some_nodes_same_function(kwargs, layout, size, monkeypatch):
    """A loss over some nodes only (zero gradient rows: the live-rows backward), in training (same dropout
    masks): outputs and every gradient equal the per-incidence formula's."""
    from hypergvl.models.nn import live_rows
    monkeypatch.setattr(live_rows, "LIVE_MIN_WEIGHTS", 1)  # the toy maps are narrow: the live-rows backward anyway
    index, n, m = hypergraph_with_duplicate(5, *size)
    torch.manual_seed(0)
    model = build_model("AllSetTransformer", in_channels=7, hidden_channels=6, out_channels=3, **kwargs).double()
    x = torch.rand(n, 7, dtype=torch.float64) * (torch.rand(n, 7) < 0.4)
    xin = x.to_sparse_csr() if layout == "csr" else x
    rows = torch.arange(n) % 3 == 1
    model.train()

    def run():
        torch.manual_seed(3)
        model.zero_grad()
        out = model(xin, index, m)
        F.cross_entropy(out[rows], torch.arange(n)[rows] % 3).backward()
        return out.detach(), {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
    new_out, new_grad = run()
    with monkeypatch.context() as patch:
        patch.setattr(allset._SetGNN, "forward", old_setgnn)
        old_out, old_grad = run()
    torch.testing.assert_close(new_out, old_out, rtol=1e-9, atol=1e-10)
    assert new_grad.keys() == old_grad.keys()
    for key in new_grad:
        torch.testing.assert_close(new_grad[key], old_grad[key], rtol=1e-8, atol=1e-10, msg=key)


def test_sparse_layer_norm_linear_equals_dense():
    torch.manual_seed(0)
    x = torch.rand(6, 9, dtype=torch.float64) * (torch.rand(6, 9) < 0.5)
    x[1] = 0.0
    coo = x.to_sparse().coalesce()
    idx, val = coo.indices(), coo.values()
    idx = torch.cat([idx, torch.tensor([[2], [8]])], dim=1)                # a stored zero counts like a zero
    val = torch.cat([val, torch.zeros(1, dtype=torch.float64)])
    op = prepare_input(StructureCache(), torch.sparse_coo_tensor(idx, val, x.shape))
    norm, lin = nn.LayerNorm(9).double(), Linear(9, 4).double()
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.5, 0.5)
    got = allset.layer_norm_linear(op, norm, lin)
    expected = lin(norm(x))
    torch.testing.assert_close(got, expected)
    grads = torch.autograd.grad(got.square().sum(), [norm.weight, norm.bias, lin.weight, lin.bias])
    want = torch.autograd.grad(expected.square().sum(), [norm.weight, norm.bias, lin.weight, lin.bias])
    for g, w in zip(grads, want):
        torch.testing.assert_close(g, w)


@pytest.mark.parametrize("to", ["edge", "node"])
def test_bag_attention_equals_weighted_aggregation_with_gradients(to):
    index, n, m = hypergraph_with_duplicate(4)
    inc = Incidence(index, n, m, torch.float64)
    g = torch.Generator().manual_seed(2)
    num_src = n if to == "edge" else m
    weight = torch.rand(inc.nnz, dtype=torch.float64, generator=g, requires_grad=True)
    x = torch.randn(num_src, 5, dtype=torch.float64, generator=g, requires_grad=True)
    out = allset.bag_attention(inc, to, weight, x)
    expected = weighted_aggregation(inc, to, weight, x)
    torch.testing.assert_close(out, expected)
    up = torch.randn(out.shape, dtype=torch.float64, generator=g)
    for a, c in zip(torch.autograd.grad((out * up).sum(), (weight, x)),
                    torch.autograd.grad((expected * up).sum(), (weight, x))):
        torch.testing.assert_close(a, c)
