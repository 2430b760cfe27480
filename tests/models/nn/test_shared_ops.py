"""The operators the models share: the incidence aggregations (plain and weighted, also through an operator) against
loops over the incidences with gradchecks, the live-rows linear map against ``F.linear``, and ``dropout`` /
``relu_dropout`` against the bool mask, bit for bit; on small random hypergraphs with an isolated node, an order-1
hyperedge and a duplicate incidence; ``scatter`` and ``softmax`` against ``torch_geometric.utils``' own, bit for bit,
and against loops."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from hnn_toys import hypergraph_with_duplicate
from hypergvl.models.nn.dropout import dropout as drop
from hypergvl.models.nn.sparse import Incidence, aggregation, scatter, softmax, weighted_aggregation


# ------------------------------------------------------------------------------------------- scatter and softmax

@pytest.mark.parametrize("reduce", ["sum", "mean", "min", "max"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_equals_pyg_bit_for_bit_and_a_loop(reduce, dim):
    from torch_geometric.utils import scatter as pyg_scatter

    g = torch.Generator().manual_seed(5)
    src = torch.randn(4, 7, 3, generator=g, requires_grad=True)
    index = torch.tensor([0, 2, 2, 5, 0, 2, 5][:src.size(dim)])
    ours = scatter(src, index, dim, dim_size=7, reduce=reduce)  # slots 1, 3, 4 and 6 are empty
    theirs = pyg_scatter(src, index, dim, dim_size=7, reduce=reduce)
    assert torch.equal(ours, theirs)
    grad = torch.randn(ours.shape, generator=g)
    (g_ours,) = torch.autograd.grad(ours, src, grad)
    (g_theirs,) = torch.autograd.grad(theirs, src, grad)
    assert torch.equal(g_ours, g_theirs)
    moved = src.detach().movedim(dim, 0)
    expected = torch.zeros((7, *moved.shape[1:]))
    for slot in index.unique():
        rows = moved[index == slot]
        expected[slot] = {"sum": rows.sum(0), "mean": rows.mean(0), "min": rows.amin(0), "max": rows.amax(0)}[reduce]
    torch.testing.assert_close(ours.detach().movedim(dim, 0), expected)
    inferred = scatter(src, index, dim, reduce=reduce)  # dim_size from the index
    assert torch.equal(inferred, ours.narrow(dim, 0, int(index.max()) + 1))


def test_scatter_refuses_what_it_does_not_compute():
    with pytest.raises(ValueError, match="unknown reduce 'mul'; choose one of sum, add, mean, min, max"):
        scatter(torch.ones(3), torch.tensor([0, 1, 1]), reduce="mul")
    with pytest.raises(ValueError, match="one-dimensional"):
        scatter(torch.ones(3), torch.tensor([[0, 1, 1]]))


@pytest.mark.parametrize("shape", [(9,), (9, 4)])
def test_softmax_equals_pyg_bit_for_bit_and_sums_to_one_per_group(shape):
    from torch_geometric.utils import softmax as pyg_softmax

    g = torch.Generator().manual_seed(6)
    src = (30 * torch.randn(shape, generator=g)).requires_grad_()
    index = torch.tensor([3, 0, 3, 3, 1, 0, 6, 1, 3])
    ours, theirs = softmax(src, index, num_nodes=8), pyg_softmax(src, index, num_nodes=8)
    assert torch.equal(ours, theirs)
    grad = torch.randn(shape, generator=g)
    assert torch.equal(torch.autograd.grad(ours, src, grad)[0], torch.autograd.grad(theirs, src, grad)[0])
    for slot in index.unique():
        torch.testing.assert_close(ours[index == slot].sum(0), torch.ones(shape[1:]))
        torch.testing.assert_close(ours[index == slot], torch.softmax(src[index == slot], 0))
    assert torch.equal(softmax(src, index), ours)  # the group count from the index


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
