"""The operators the models share: the incidence aggregations (plain and weighted, also through an operator) against
loops over the incidences with gradchecks, the live-rows linear map against ``F.linear``, and ``dropout`` /
``relu_dropout`` against the bool mask, bit for bit; on small random hypergraphs with an isolated node, an order-1
hyperedge and a duplicate incidence."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from hnn_toys import hypergraph_with_duplicate
from hypergvl.models.nn.dropout import dropout as drop
from hypergvl.models.nn.sparse import Incidence, aggregation, weighted_aggregation


# -------------------------------------------------------------------------------------------- incidence aggregations

def _incidence(seed: int = 3):
    index, n, m = hypergraph_with_duplicate(seed)
    return Incidence(index, n, m, torch.float64), index


@pytest.mark.parametrize("to", ["edge", "node"])
@pytest.mark.parametrize("heads", [None, 2])
def test_weighted_aggregation_matches_loop_and_gradcheck(to, heads):
    inc, index = _incidence()
    dst, src = (index[1], index[0]) if to == "edge" else (index[0], index[1])
    num_dst, num_src = (inc.num_edges, inc.num_nodes) if to == "edge" else (inc.num_nodes, inc.num_edges)
    head = () if heads is None else (heads,)
    w = torch.rand(inc.nnz, *head, dtype=torch.float64, requires_grad=True)
    x = torch.randn(num_src, *head, 2, dtype=torch.float64, requires_grad=True)
    expected = torch.zeros(num_dst, *head, 2, dtype=torch.float64)
    for p in range(inc.nnz):
        expected[dst[p]] += w[p].detach().unsqueeze(-1) * x[src[p]].detach()
    torch.testing.assert_close(weighted_aggregation(inc, to, w, x), expected)
    assert torch.autograd.gradcheck(lambda w, x: weighted_aggregation(inc, to, w, x), (w, x))


@pytest.mark.parametrize("heads", [None, 2])
def test_weighted_aggregation_through_an_operator(heads):
    """``through=B`` attends over ``z = B @ x`` (UniGAT: the hyperedges pooled from the nodes) without keeping z."""
    inc, index = _incidence(4)
    pool = aggregation(inc, "edge", "mean")
    head = () if heads is None else (heads,)
    w = torch.rand(inc.nnz, *head, dtype=torch.float64, requires_grad=True)
    x = torch.randn(inc.num_nodes, *head, 2, dtype=torch.float64, requires_grad=True)
    z = (pool.to_dense() @ x.detach().reshape(inc.num_nodes, -1)).view(inc.num_edges, *head, 2)
    expected = torch.zeros(inc.num_nodes, *head, 2, dtype=torch.float64)
    for p in range(inc.nnz):
        expected[index[0, p]] += w[p].detach().unsqueeze(-1) * z[index[1, p]]
    torch.testing.assert_close(weighted_aggregation(inc, "node", w, x, through=pool), expected)
    assert torch.autograd.gradcheck(lambda w, x: weighted_aggregation(inc, "node", w, x, through=pool), (w, x))


@pytest.mark.parametrize("to", ["edge", "node"])
@pytest.mark.parametrize("reduce", ["sum", "mean"])
def test_aggregation_matches_loop(to, reduce):
    inc, index = _incidence()
    dst, src = (index[1], index[0]) if to == "edge" else (index[0], index[1])
    num_dst, num_src = (inc.num_edges, inc.num_nodes) if to == "edge" else (inc.num_nodes, inc.num_edges)
    x = torch.randn(num_src, 5, dtype=torch.float64)
    expected = torch.zeros(num_dst, 5, dtype=torch.float64)
    for t in range(num_dst):
        members = [int(src[p]) for p in range(inc.nnz) if dst[p] == t]  # a duplicate incidence counts twice
        if members:
            expected[t] = x[members].sum(0) / (len(members) if reduce == "mean" else 1)
    torch.testing.assert_close(aggregation(inc, to, reduce) @ x, expected)


# --------------------------------------------------------------------------------------------- live rows and dropout

@pytest.mark.parametrize("share", [0.3, 0.95])
def test_live_rows_linear_equals_linear_with_gradients(share, monkeypatch):
    """The backward over the rows with a nonzero gradient (few live rows, and nearly all: the plain path) gives
    F.linear's output and all three gradients."""
    from hypergvl.models.nn import live_rows
    from hypergvl.models.nn.live_rows import live_rows_linear
    monkeypatch.setattr(live_rows, "LIVE_MIN_WEIGHTS", 1)  # the toy map is narrow
    g = torch.Generator().manual_seed(1)
    x = torch.randn(40, 6, dtype=torch.float64, generator=g, requires_grad=True)
    w = torch.randn(5, 6, dtype=torch.float64, generator=g, requires_grad=True)
    b = torch.randn(5, dtype=torch.float64, generator=g, requires_grad=True)
    up = torch.randn(40, 5, dtype=torch.float64, generator=g) * (torch.rand(40, 1, generator=g) < share)
    up[3, 2] = 1e-300  # one tiny entry keeps its row live
    out = live_rows_linear(x, w, b)
    torch.testing.assert_close(out, F.linear(x, w, b), rtol=0, atol=0)
    fast = torch.autograd.grad((out * up).sum(), (x, w, b))
    slow = torch.autograd.grad((F.linear(x, w, b) * up).sum(), (x, w, b))
    for a, c in zip(fast, slow):
        torch.testing.assert_close(a, c, rtol=1e-12, atol=1e-300)
    assert fast[0][3].abs().sum() > 0 and not fast[0][(up == 0).all(1)].any()


@pytest.mark.parametrize("p", [0.2, 0.5, 0.3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dropout_and_relu_dropout_equal_the_bool_mask_bit_for_bit(p, dtype):
    """The same random stream and comparisons: ``dropout`` (float-compared mask) gives the values of the bool mask
    of ``keep_mask`` times 1/(1-p), dense and sparse, and ``relu_dropout`` those of ReLU then ``dropout``, with
    the gradient of the two ops."""
    from hypergvl.models.nn.dropout import keep_mask, relu_dropout
    from hypergvl.models.nn.sparse import SparseOperator
    x = torch.randn(301, 7, dtype=dtype, requires_grad=True)
    up = torch.randn(301, 7, dtype=dtype)
    torch.manual_seed(5)
    expected = drop(F.relu(x), p, True)
    (g_expected,) = torch.autograd.grad((expected * up).sum(), x)
    torch.manual_seed(5)
    out = relu_dropout(x, p, True)
    (g,) = torch.autograd.grad((out * up).sum(), x)
    assert torch.equal(out, expected) and torch.equal(g, g_expected)
    torch.manual_seed(5)
    a = drop(x.detach(), p, True)
    torch.manual_seed(5)
    assert torch.equal(a, x.detach() * keep_mask(x.numel(), p, x.device).view_as(x).to(dtype).mul_(1 / (1 - p)))
    rows, cols = (x.detach().abs() > 0.5).nonzero(as_tuple=True)
    sp = SparseOperator(rows, cols, x.detach()[rows, cols], tuple(x.shape))
    torch.manual_seed(5)
    kept = drop(sp, p, True).values
    torch.manual_seed(5)
    assert torch.equal(kept, sp.values * keep_mask(sp.values.numel(), p, x.device).to(dtype).mul_(1 / (1 - p)))
    assert (out == 0).sum() > (F.relu(x) == 0).sum()  # the mask dropped entries
