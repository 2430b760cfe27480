"""The speed and memory rewrites of AllDeepSets, AllSetTransformer, ED-HNN and UniGAT compute the same function.

Each rewritten step is compared with the per-incidence formula it replaced (the previous implementation, kept
here only as the reference: gather to the incidences, compute there, scatter back) on small random hypergraphs
with an isolated node, order-1 hyperedges and a duplicate incidence. Outputs and every parameter's gradient must
agree in evaluation mode and in training mode (same seed, so the same dropout masks). The shared aggregations
are checked against loops over the incidences, the sparse input LayerNorm against the dense one, and the memory
claim (no ``nnz x C`` tensor kept for the backward) with autograd's saved-tensor hooks.
"""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.utils import scatter, softmax

from hnn_toys import random_hypergraph
from hypergvl.models.nn import allset, build_model, edhnn, unignn
from hypergvl.models.nn.base import Linear, StructureCache, dense, prepare_input
from hypergvl.models.nn.dropout import dropout as drop
from hypergvl.models.nn.sparse import Incidence, aggregation, inv, weighted_aggregation
from hypergvl.models.nn.mlp import MLP


def hypergraph(seed: int, num_nodes: int = 11, num_edges: int = 8):
    """``random_hypergraph`` (isolated last node, an order-1 hyperedge) plus one node listed twice in a hyperedge."""
    edges, index, n = random_hypergraph(seed, num_nodes, num_edges)
    j = max(range(len(edges)), key=lambda i: len(edges[i]))
    index = torch.cat([index, torch.tensor([[edges[j][0]], [j]])], dim=1)
    return index, n, len(edges)


# ------------------------------------------------------------------ the previous implementations (reference)

def old_pma(pma, x, source, target, num_targets):
    k = pma.lin_k(x).view(-1, pma.heads, pma.head_channels)
    v = pma.lin_v(x).view(-1, pma.heads, pma.head_channels)
    score = F.leaky_relu((k * pma.seed).sum(-1), 0.2)[source]
    alpha = softmax(score, target, num_nodes=num_targets).unsqueeze(-1)
    out = scatter(v[source] * alpha, target, dim=0, dim_size=num_targets, reduce="sum") + pma.seed
    out = pma.ln0(out.reshape(num_targets, -1))
    return pma.ln1(out + F.relu(pma.rff(out)))


def old_deepsets(block, x, source, target, num_targets):
    h = drop(F.relu(block.enc(x) if isinstance(block.enc, MLP) else dense(x)), block.dropout, block.training)
    h = scatter(h[source], target, dim=0, dim_size=num_targets, reduce=block.aggregate)
    return F.relu(block.dec(h))


def old_setgnn(model, x, hyperedge_index, num_hyperedges=None):
    inc = model.incidence(x, hyperedge_index, num_hyperedges)
    v, e, n, m = inc.node, inc.edge, inc.num_nodes, inc.num_edges
    h = model.features(x)
    block = old_pma if isinstance(model.v2e[0], allset.PMA) else old_deepsets
    layers = []
    if model.gpr:
        layers.append(F.relu(model.gpr_mlp(h)))
    else:
        h = drop(h, model.input_dropout, model.training)
    for v2e, e2v in zip(model.v2e, model.e2v):
        h = drop(F.relu(block(v2e, h, v, e, m)), model.dropout, model.training)
        h = F.relu(block(e2v, h, e, v, n))
        layers.append(h)
        h = drop(h, model.dropout, model.training)
    if model.gpr:
        h = model.gpr_weights(torch.stack(layers, dim=-1)).squeeze(-1)
    return model.decoder(h)


def old_equivset(conv, x, x0, inc):
    v, e = inc.node, inc.edge
    m = scatter(conv.phi(x)[v], e, dim=0, dim_size=inc.num_edges, reduce=conv.aggregate)
    message = m[e] if isinstance(conv.rho, nn.Identity) else conv.rho(torch.cat([x[v], m[e]], dim=-1))
    out = scatter(message, v, dim=0, dim_size=inc.num_nodes, reduce=conv.aggregate)
    return conv.varphi(torch.lerp(out, x0, conv.alpha))


def old_unigat(conv, x, inc, first_aggregate):
    v, e, n = inc.node, inc.edge, inc.num_nodes
    h = conv.lin(x).view(n, conv.heads, conv.out_channels)
    he = scatter(h[v], e, dim=0, dim_size=inc.num_edges, reduce="sum")
    if first_aggregate == "mean":
        he = he * inv(inc.deg_e).view(-1, 1, 1)
    score = F.leaky_relu((he * conv.att_e).sum(-1), conv.negative_slope)[e]
    alpha = drop(softmax(score, v, num_nodes=n), conv.attention_dropout, conv.training)
    return scatter(he[e] * alpha.unsqueeze(-1), v, dim=0, dim_size=n, reduce="sum").reshape(n, -1)


OLD = {"AllDeepSets": (allset._SetGNN, old_setgnn), "AllSetTransformer": (allset._SetGNN, old_setgnn),
       "ED-HNN": (edhnn.EquivSetConv, old_equivset), "UniGAT": (unignn.UniGATConv, old_unigat)}


def _run(model, x, index, m, seed):
    torch.manual_seed(seed)
    model.zero_grad()
    out = model(x, index, m)
    probe = torch.linspace(-1.0, 1.0, out.numel(), dtype=out.dtype).view_as(out)
    (out * probe).sum().backward()
    return out.detach(), {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}


def assert_same_function(name, monkeypatch, layout="csr", seed=0, modes=("eval", "train"), size=(11, 8), **kwargs):
    index, n, m = hypergraph(seed, *size)
    torch.manual_seed(seed)
    model = build_model(name, in_channels=7, hidden_channels=6, out_channels=3, **kwargs).double()
    x = torch.rand(n, 7, dtype=torch.float64) * (torch.rand(n, 7) < 0.4)  # sparse-looking, one-hot-ish rows
    x[0] = 0.0                                                               # an all-zero row
    xin = x.to_sparse_csr() if layout == "csr" else x
    cls, old = OLD[name]
    for mode in modes:
        model.train(mode == "train")
        new_out, new_grad = _run(model, xin, index, m, seed + 1)
        with monkeypatch.context() as patch:
            patch.setattr(cls, "forward", old)
            old_out, old_grad = _run(model, xin, index, m, seed + 1)
        torch.testing.assert_close(new_out, old_out, rtol=1e-9, atol=1e-10)
        assert new_grad.keys() == old_grad.keys() and new_grad
        for key in new_grad:
            torch.testing.assert_close(new_grad[key], old_grad[key], rtol=1e-8, atol=1e-10, msg=f"{mode} {key}")


# ------------------------------------------------------------------------------------- model equalities

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


@pytest.mark.parametrize("kwargs, size", [
    ({}, (11, 8)),                                                           # defaults: 2-layer MLPs, ln, mean
    ({}, (7, 12)),                                                           # more hyperedges than nodes
    ({"mlp1_layers": 0, "mlp2_layers": 1, "mlp3_layers": 1, "num_layers": 2}, (11, 8)),  # the Cora config's shape
    ({"mlp1_layers": 0, "mlp2_layers": 1, "mlp3_layers": 1, "num_layers": 2}, (7, 12)),
    ({"mlp2_layers": 1, "aggregate": "sum", "input_norm": False, "activation": "relu"}, (7, 12)),
    ({"mlp2_layers": 1, "normalization": "none", "alpha": 0.0}, (11, 8)),
    ({"mlp2_layers": 0, "mlp1_layers": 1}, (11, 8)),
    ({"mlp2_layers": 3, "aggregate": "sum", "dropout_order": "dhgbench"}, (7, 12)),
    ({"normalization": "bn"}, (11, 8)),
])
def test_edhnn_same_function(kwargs, size, monkeypatch):
    assert_same_function("ED-HNN", monkeypatch, size=size, **kwargs)


@pytest.mark.parametrize("kwargs", [{"mlp2_layers": 2}, {"mlp2_layers": 3, "aggregate": "sum"},
                                    {"mlp2_layers": 2, "input_norm": False}])
def test_edhnn_chunked_messages_same_function(kwargs, monkeypatch):
    """Above CHUNK_FLOATS the per-incidence MLP runs chunk by chunk under checkpoint; chunks of 4 incidences here.
    With one hidden layer the dropout masks are the same as in one piece, so training mode agrees too."""
    monkeypatch.setattr(edhnn, "CHUNK_FLOATS", 24)
    modes = ("eval", "train") if kwargs["mlp2_layers"] == 2 else ("eval",)
    assert_same_function("ED-HNN", monkeypatch, modes=modes, **kwargs)


@pytest.mark.parametrize("kwargs", [{}, {"heads": 3, "first_aggregate": "sum", "use_norm": True},
                                    {"heads": 1, "num_layers": 3, "attention_dropout": 0.0}])
def test_unigat_same_function(kwargs, monkeypatch):
    assert_same_function("UniGAT", monkeypatch, **kwargs)


# ------------------------------------------------------------------------------ shared pieces, by loops

def _incidence(seed: int = 3):
    index, n, m = hypergraph(seed)
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


# -------------------------------------------------------------------------------------- memory claims

def _saved_shapes(model, x, index, m):
    shapes = []

    def pack(t):
        shapes.append(tuple(t.shape))
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(x, index, m).sum().backward()
    return shapes


@pytest.mark.parametrize("name, kwargs", [
    ("ED-HNN", {"mlp1_layers": 0, "mlp2_layers": 1, "mlp3_layers": 1}),
    ("ED-HNN", {"mlp2_layers": 2, "chunk": True}),
    ("UniGAT", {"heads": 2}),
    ("AllSetTransformer", {"heads": 2}),
    ("AllDeepSets", {}),
])
def test_no_incidence_by_channel_tensor_kept_for_backward(name, kwargs, monkeypatch):
    """The rewrites keep at most per-incidence scalars (one per head) for the backward, never ``nnz x C``."""
    if kwargs.pop("chunk", False):
        monkeypatch.setattr(edhnn, "CHUNK_FLOATS", 64)
    index, n, m = hypergraph(5, num_nodes=12, num_edges=9)
    index = torch.cat([index, index], dim=1)                                # nnz distinct from N and M
    nnz = index.size(1)
    assert nnz not in (n, m)
    torch.manual_seed(0)
    model = build_model(name, in_channels=5, hidden_channels=8, out_channels=2, **kwargs).train()
    shapes = _saved_shapes(model, torch.rand(n, 5), index, m)
    assert shapes
    kept = [s for s in shapes if s and s[0] == nnz and len(s) > 1 and s[-1] >= 4]
    assert not kept, kept


# ------------------------------------------------------------- session 9: live rows, bag attention, dropout

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


@pytest.mark.parametrize("to", ["edge", "node"])
def test_bag_attention_equals_weighted_aggregation_with_gradients(to):
    index, n, m = hypergraph(4)
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


@pytest.mark.parametrize("kwargs", [{"gpr": True, "num_layers": 2, "dropout": 0.4},
                                    {"gpr": False, "num_layers": 2, "decoder_num_layers": 3}])
@pytest.mark.parametrize("layout, size", [("csr", (11, 8)), ("dense", (11, 8)), ("csr", (7, 12))])
def test_allsettransformer_loss_on_some_nodes_same_function(kwargs, layout, size, monkeypatch):
    """A loss over some nodes only (zero gradient rows: the live-rows backward), in training (same dropout
    masks): outputs and every gradient equal the per-incidence formula's."""
    from hypergvl.models.nn import live_rows
    monkeypatch.setattr(live_rows, "LIVE_MIN_WEIGHTS", 1)  # the toy maps are narrow: the live-rows backward anyway
    index, n, m = hypergraph(5, *size)
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
