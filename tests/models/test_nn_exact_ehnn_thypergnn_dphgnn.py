"""Issue 12: EHNN, T-HyperGNN and DPHGNN. Each exact, scalable computation against its naive formula (dense
incidence, enumerated multisets) on random small hypergraphs with isolated nodes and order-1 hyperedges, and
the refusal of hypergraph classification (DHG-Bench appendix C.1)."""
from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
import torch

from hnn_toys import random_hypergraph
from hypergvl.models.nn import MODELS, build_model
from hypergvl.models.nn.ehnn import order_encoding
from hypergvl.models.nn.registry import task_refusal
from hypergvl.models.nn.thypergnn import adjacency_coefficient


def dense_incidence(edges, num_nodes):
    h = torch.zeros(num_nodes, len(edges))
    for j, e in enumerate(edges):
        h[e, j] = 1.0
    return h


# ------------------------------------------------------------------------------------------------------ EHNN

def naive_ehnn(model, x, edges, num_nodes):
    """EHNN-MLP written from the paper's MLP form with a dense incidence matrix H (N x M)."""
    h = dense_incidence(edges, num_nodes)
    order = h.sum(0)
    deg = h.sum(1, keepdim=True)

    def pe(k, d):
        return order_encoding(torch.as_tensor(k).reshape(-1), d)

    def cat(t, p):
        return torch.cat([t, p.expand(t.size(0), -1)], dim=1)

    out = x
    for i, conv in enumerate(model.convs):
        d = conv.lin.out_features
        v2e, e2v = conv.v2e, conv.e2v
        z = conv.lin(out)
        z = z + v2e.mlp1(v2e.norms[0](z))
        x0, x1v, x1e = z.mean(0, keepdim=True), z, (h.t() @ z) / order[:, None]
        x0 = x0 + v2e.mlp2(cat(v2e.norms[1](x0), pe(0, d)))
        x1v = x1v + v2e.mlp2(cat(v2e.norms[1](x1v), pe(1, d)))
        x1e = x1e + v2e.mlp2(cat(v2e.norms[1](x1e), pe(1, d)))
        xv, xe = x0 + x1v, x0 + x1e
        xv = xv + v2e.mlp3(cat(v2e.norms[2](xv), pe(1, d)))
        xe = xe + v2e.mlp3(torch.cat([v2e.norms[2](xe), pe(order.long(), d)], 1))
        xv, xe = torch.relu(xv + v2e.bias(torch.tensor([1]))), torch.relu(xe + v2e.bias(order.long()))
        xv = xv + e2v.mlp1(cat(e2v.norms[0](xv), pe(1, d)))
        xe = xe + e2v.mlp1(torch.cat([e2v.norms[0](xe), pe(order.long(), d)], 1))
        x0 = torch.cat([xv, xe]).mean(0, keepdim=True)
        x1 = (xv + h @ xe) / (1 + deg)
        x0 = x0 + e2v.mlp2(cat(e2v.norms[1](x0), pe(0, d)))
        x1 = x1 + e2v.mlp2(cat(e2v.norms[1](x1), pe(1, d)))
        z = x0 + x1
        out = z + e2v.mlp3(e2v.norms[2](z)) + e2v.bias
    return model.decoder(out)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("num_layers", [1, 2])
def test_ehnn_sparse_equals_dense_incidence(seed, num_layers):
    edges, hei, n = random_hypergraph(seed)
    torch.manual_seed(seed)
    model = build_model("EHNN", in_channels=4, hidden_channels=6, out_channels=3, num_layers=num_layers).eval()
    x = torch.randn(n, 4)
    with torch.no_grad():
        torch.testing.assert_close(model(x, hei), naive_ehnn(model, x, edges, n), rtol=1e-5, atol=1e-5)


def test_ehnn_order_encoding_is_the_transformer_table():
    k, d = torch.arange(7), 6
    table = torch.zeros(7, d)
    div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
    table[:, 0::2], table[:, 1::2] = torch.sin(k[:, None] * div), torch.cos(k[:, None] * div)
    torch.testing.assert_close(order_encoding(k, d), table)


def test_ehnn_output_depends_on_the_hyperedge_orders():
    """The order encodings reach the output: a hypergraph with the same node-hyperedge pairs
    merged differently gives another result (a test that an order-blind model would fail)."""
    torch.manual_seed(0)
    model = build_model("EHNN", in_channels=3, hidden_channels=4, out_channels=2).eval()
    x = torch.randn(4, 3)
    a = model(x, torch.tensor([[0, 1, 2, 3], [0, 0, 1, 1]]))
    b = model(x, torch.tensor([[0, 1, 2, 3], [0, 0, 0, 1]]))
    assert not torch.allclose(a, b)


# ------------------------------------------------------------------------------------------- T-HyperGNN

def naive_messages(x, neighbourhoods, m):
    """The reference's TMessagePassing, node by node: for each hyperedge (member list) of v, the multisets of
    size m drawn from it that contain every member, one v removed, weighted by their distinct orderings."""
    out = []
    for v, edges in enumerate(neighbourhoods):
        if not edges:
            out.append(x[v])
            continue
        total = torch.zeros_like(x[v])
        for edge in edges:
            c = len(edge)
            coef = adjacency_coefficient(c, m) / len(edges)
            if c == m:
                others = [u for u in edge if u != v]
                total += coef * math.factorial(m - 1) * x[others].prod(0)
                continue
            for comb in itertools.combinations_with_replacement(edge, m):
                if set(comb) != set(edge):
                    continue
                rest = list(comb)
                rest.remove(v)
                perms = len(set(itertools.permutations(rest)))
                total += coef * perms * x[rest].prod(0)
        out.append(total)
    return torch.stack(out)


def model_rows(model, x, hei):
    """The member lists the model multiplies for each target (its first entry)."""
    inc = model.incidence(x, hei, None)
    from hypergvl.models.nn.thypergnn import TensorRows
    rows = TensorRows(inc, model.m, model.seed)
    per_node = [[] for _ in range(x.size(0))]
    for r, _ in rows.groups:
        for row in r.tolist():
            per_node[row[0]].append(row)
    return per_node


def naive_thypergnn(model, x, neighbourhoods):
    msg = naive_messages(x, neighbourhoods, model.m)
    h = torch.relu(torch.cat([x, msg], 1) @ model.weights[0] + model.biases[0])
    return h @ model.out_weight + model.out_bias


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("m,max_order", [(5, 4), (4, 4), (3, 3), (2, 2), (1, 1)])
def test_thypergnn_equals_enumerated_multisets(seed, m, max_order):
    """Hyperedges no larger than M (nothing cut): the model against the reference's enumeration, built from
    the hyperedge lists alone."""
    edges, hei, n = random_hypergraph(seed, max_order=max_order)
    torch.manual_seed(seed)
    model = build_model("T-HyperGNN", in_channels=3, hidden_channels=5, out_channels=2, max_cardinality=m)
    x = torch.randn(n, 3, dtype=torch.float64).float()
    neighbourhoods = [[e for e in edges if v in e] for v in range(n)]
    with torch.no_grad():
        torch.testing.assert_close(model(x, hei), naive_thypergnn(model, x, neighbourhoods), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("m", [2, 3])
def test_thypergnn_cuts_large_hyperedges_to_the_target_and_m_minus_1_members(m):
    edges, hei, n = random_hypergraph(7, num_nodes=10, num_edges=8, max_order=6)
    assert max(map(len, edges)) > m
    torch.manual_seed(0)
    model = build_model("T-HyperGNN", in_channels=3, hidden_channels=4, out_channels=2, max_cardinality=m)
    x = torch.randn(n, 3)
    per_node = model_rows(model, x, hei)
    for v in range(n):
        mine = [e for e in edges if v in e]
        assert len(per_node[v]) == len(mine)  # one member list per hyperedge of v
        small = Counter(tuple(sorted(e)) for e in mine if len(e) <= m)  # kept whole
        assert not small - Counter(tuple(sorted(r)) for r in per_node[v])
        for row in per_node[v]:
            assert row[0] == v and len(set(row)) == len(row) == min(m, len(row))
            assert any(set(row) <= set(e) for e in mine if len(e) >= len(row))
    with torch.no_grad():
        torch.testing.assert_close(model(x, hei), naive_thypergnn(model, x, per_node), rtol=1e-4, atol=1e-5)
    # another seed cuts differently (the choice is random), the same seed reproduces it
    other = build_model("T-HyperGNN", in_channels=3, hidden_channels=4, out_channels=2, max_cardinality=m, seed=1)
    assert model_rows(other, x, hei) != per_node
    assert model_rows(model, x, hei) == per_node


def test_thypergnn_self_loop_and_full_hyperedge_closed_forms():
    """A self-loop gives x_v^(M-1)/d_v, a hyperedge of exactly M members the product of the others / d_v."""
    from hypergvl.models.nn.sparse import Incidence
    from hypergvl.models.nn.thypergnn import TensorRows, tensor_message
    x = torch.tensor([[2.0, -1.0], [3.0, 0.5], [0.5, 4.0], [1.5, 1.0]])
    hei = torch.tensor([[0, 0, 1, 2, 3], [0, 1, 1, 1, 1]])  # {0}, {0, 1, 2, 3}
    inc = Incidence(hei, 4, 2, torch.float32)
    msg = tensor_message(x, TensorRows(inc, 4, 0), 4)
    torch.testing.assert_close(msg[0], (x[0] ** 3 + x[1] * x[2] * x[3]) / 2)
    torch.testing.assert_close(msg[3], x[0] * x[1] * x[2])


def test_thypergnn_first_layer_messages_are_computed_once():
    edges, hei, n = random_hypergraph(0)
    model = build_model("T-HyperGNN", in_channels=3, hidden_channels=4, out_channels=2)
    x = torch.randn(n, 3)
    model(x, hei)
    cached = len(model._cache)
    model(x, hei).sum().backward()
    assert len(model._cache) == cached and all(p.grad is not None for p in model.parameters())


# ----------------------------------------------------------------------------------------- task refusal

@pytest.mark.parametrize("name", ["EHNN", "T-HyperGNN"])
def test_tensor_models_refuse_hypergraph_classification(name):
    refusal = task_refusal(name, "graph")
    assert refusal and "appendix C.1" in refusal and name in refusal
    assert task_refusal(name, "node") is None and task_refusal(name, "hyperedge") is None


def test_only_the_tensor_models_refuse_a_task():
    from hypergvl.models.tasks import TASKS
    refusing = {n for n, cls in MODELS.items() if getattr(cls, "unsupported_tasks", {})}
    assert refusing == {"EHNN", "T-HyperGNN"}
    assert all(set(MODELS[n].unsupported_tasks) <= set(TASKS) for n in refusing)  # names of real tasks


def test_register_model_rejects_a_malformed_refusal():
    from hypergvl.models.nn import register_model

    class Bad(torch.nn.Module):
        paper = "x http://example.org"
        unsupported_tasks = {"graph": ""}

        def __init__(self, in_channels, hidden_channels, out_channels, num_layers=2, dropout=0.5):
            super().__init__()
    with pytest.raises(TypeError, match="unsupported_tasks"):
        register_model("__bad_refusal__")(Bad)
    assert "__bad_refusal__" not in MODELS


def test_trainer_refuses_with_the_reason(tmp_path, capsys):
    from hypergvl.models.train import main as train_main
    code = train_main(["--model", "EHNN", "--dataset", "rhg-10", "--task", "graph", "--runs", "1",
                    "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "does not support task 'graph'" in err and "appendix C.1" in err
    assert not (tmp_path / "out").exists()  # refused before anything was written or loaded


# ----------------------------------------------------------------------------------------------- DPHGNN

def _dense(op):
    return op.to_dense()


def _rownorm(a):
    s = a.sum(1, keepdim=True)
    return torch.where(s > 0, a / s.clamp_min(1e-30), torch.zeros_like(a))


@pytest.mark.parametrize("seed", range(3))
def test_dphgnn_structure_operators_equal_the_dense_reference_formulas(seed):
    from hypergvl.models.nn.sparse import Incidence
    from hypergvl.models.nn.dphgnn import _Structure
    edges, hei, n = random_hypergraph(seed)
    h = dense_incidence(edges, n)
    m = h.size(1)
    inc = Incidence(hei, n, m, torch.float32)
    s = _Structure(inc, "undirected")
    eye = torch.eye(n)
    clique = (h @ h.t() > 0).float()  # the reference's binary clique graph, diagonal included
    torch.testing.assert_close(_dense(s.a_cg), _rownorm(clique) + eye)
    torch.testing.assert_close(_dense(s.l_cg), torch.diag(clique.sum(1)) - clique)
    a_beta = h @ torch.diag(1 / h.sum(0)) @ h.t() + eye
    d = a_beta.sum(1)
    l_hgnn = torch.diag(d ** -0.5) @ a_beta @ torch.diag(d ** -0.5)
    torch.testing.assert_close(_dense(s.l_hgnn), l_hgnn)
    torch.testing.assert_close(_dense(s.l_sym), eye - l_hgnn)
    torch.testing.assert_close(_dense(s.l_rw), eye - torch.diag(1 / d) @ a_beta)
    dv = h.sum(1)
    de = torch.stack([dv[h[:, j] > 0].mean() for j in range(m)])
    hg = torch.diag(torch.where(dv > 0, dv ** -0.5, torch.zeros_like(dv))) @ h @ torch.diag(de ** -0.5 / h.sum(0)) @ h.t()
    torch.testing.assert_close(s.hgconv.to_dense(), hg)
    star = torch.zeros(n + m, n + m)
    star[:n, n:] = h  # node -> hyperedge, the reference's directed star graph
    for kind, a in (("directed", star), ("undirected", star + star.t())):
        st = _Structure(inc, kind)
        torch.testing.assert_close(_dense(st.a_sg), _rownorm(a) + torch.eye(n + m))
        torch.testing.assert_close(_dense(st.l_sg), torch.diag(a.sum(1)) - a)


def naive_hypergcn(edges, x, r, n, mediators):
    """The reference's hypergcn_expansion (dict of weights, + I), then D^-1/2 A D^-1/2 and D - A."""
    proj = (x @ r).squeeze(1)
    weights = {}
    for edge in edges:
        p = proj[edge]
        se, ie = edge[int(torch.argmax(p))], edge[int(torch.argmin(p))]
        c = max(2 * len(edge) - 3, 1) if mediators else len(edge)
        pairs = [(se, ie), (ie, se)]
        if mediators:
            pairs += [pair for u in edge if u not in (se, ie) for pair in ((se, u), (ie, u), (u, se), (u, ie))]
        for pair in pairs:
            weights[pair] = weights.get(pair, 0.0) + 1.0 / c
    a = torch.eye(n)
    for (i, j), w in weights.items():
        a[i, j] += w
    d = a.sum(1)
    return torch.diag(d ** -0.5) @ a @ torch.diag(d ** -0.5), torch.diag(d) - a


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mediators", [True, False])
def test_dphgnn_hypergcn_graph_equals_the_reference_loop(seed, mediators):
    from hypergvl.models.nn.sparse import Incidence
    from hypergvl.models.nn.dphgnn import hypergcn_graph
    edges, hei, n = random_hypergraph(seed, max_order=5)
    x = torch.randn(n, 4)
    inc = Incidence(hei, n, len(edges), torch.float32)
    a, lap = hypergcn_graph(inc, x, mediators, seed=3)
    r = torch.rand(4, 1, generator=torch.Generator().manual_seed(3))
    a_ref, lap_ref = naive_hypergcn(edges, x, r, n, mediators)
    torch.testing.assert_close(_dense(a), a_ref)
    torch.testing.assert_close(_dense(lap), lap_ref)


@pytest.mark.parametrize("heads", [1, 2])
def test_dphgnn_attention_equals_dense_multihead_attention(heads):
    """SDPA attention against torch's MultiheadAttention (which forms the N x N weights) on the same weights."""
    from hypergvl.models.nn.dphgnn import TopologyAwareAttention
    torch.manual_seed(heads)
    taa = TopologyAwareAttention(5, 4, heads)
    taa.reset_parameters()
    mha = torch.nn.MultiheadAttention(4, heads)
    with torch.no_grad():
        mha.in_proj_weight.copy_(taa.in_proj_weight)
        mha.in_proj_bias.copy_(taa.in_proj_bias)
        mha.out_proj.weight.copy_(taa.out_proj.weight)
        mha.out_proj.bias.copy_(taa.out_proj.bias)
    q, k, v = torch.randn(3, 11, 5).unbind(0)
    expected, weights = mha(taa.q(q), taa.k(k), taa.v(v))
    assert weights.shape == (11, 11)
    torch.testing.assert_close(taa(q, k, v), expected, rtol=1e-5, atol=1e-6)


def _dphgnn(**kwargs):
    torch.manual_seed(0)
    return build_model("DPHGNN", in_channels=4, hidden_channels=6, out_channels=3, expansion_dim=8,
                       expansion_hidden=5, attention_dim=4, spectral_dim=3, fc_dim=5, **kwargs)


def test_graph_groups_give_block_diagonal_dense_attention():
    """Attention within each graph (one SDPA call per graph size) against dense softmax attention with the
    block-diagonal mask, on graphs of sizes 1 to 5, nodes listed out of graph order, two heads."""
    import torch.nn.functional as F

    from hypergvl.models.nn.sparse import GraphGroups
    torch.manual_seed(0)
    sizes = [3, 1, 5, 3, 2, 5, 5]
    batch = torch.repeat_interleave(torch.arange(len(sizes)), torch.tensor(sizes))
    batch = batch[torch.randperm(batch.numel())]
    q, k, v = torch.randn(3, 2, batch.numel(), 4, dtype=torch.float64).unbind(0)
    scores = q @ k.transpose(1, 2) / 2.0
    scores = scores.masked_fill(batch[:, None] != batch[None, :], float("-inf"))
    expected = torch.softmax(scores, -1) @ v
    def block(g, n, *qkv):
        qkv = (t.view(2, g, n, -1).transpose(0, 1) for t in qkv)
        return F.scaled_dot_product_attention(*qkv).transpose(0, 1).reshape(2, g * n, -1)
    torch.testing.assert_close(GraphGroups(batch).apply(block, q, k, v), expected)


def _hypergt(**kwargs):
    torch.manual_seed(0)
    return build_model("HyperGT", in_channels=4, hidden_channels=6, out_channels=3, heads=2, random_features=5,
                       positional_encoding="none", **kwargs)


@pytest.mark.parametrize("build", [_dphgnn, _hypergt], ids=["DPHGNN", "HyperGT"])
def test_attention_scope_graph_keeps_each_graph_to_itself(build):
    """In a block-diagonal batch, ``attention_scope="graph"`` gives every graph the output it has alone, and a
    gradient; the reference's ``"batch"`` scope mixes the graphs; on one hypergraph (no ``batch``) the two agree."""
    graphs = [random_hypergraph(s, num_nodes=n) for s, n in ((0, 7), (1, 9), (2, 7))]
    xs = [torch.randn(n, 4, generator=torch.Generator().manual_seed(n + i)) for i, (_, _, n) in enumerate(graphs)]
    offsets = torch.tensor([0] + [n for _, _, n in graphs]).cumsum(0)
    edge_offsets = torch.tensor([0] + [len(e) for e, _, _ in graphs]).cumsum(0)
    hei = torch.cat([h + torch.stack([offsets[i], edge_offsets[i]])[:, None] for i, (_, h, _) in enumerate(graphs)], 1)
    batch = torch.repeat_interleave(torch.arange(3), torch.tensor([n for _, _, n in graphs]))
    x, m = torch.cat(xs), int(edge_offsets[-1])
    out = {}
    for scope in ("graph", "batch"):
        model = build(attention_scope=scope).eval()
        with torch.no_grad():
            out[scope], out[scope, None] = model(x, hei, m, batch=batch), model(x, hei, m)
            alone = torch.cat([model(xi, h, len(e)) for xi, (e, h, _) in zip(xs, graphs)])
        if scope == "graph":
            torch.testing.assert_close(out[scope], alone, rtol=1e-5, atol=1e-6)
            model.train()(x, hei, m, batch=batch).square().sum().backward()
            grads = [p.grad for p in model.parameters() if p.requires_grad]
            assert all(g is not None and torch.isfinite(g).all() for g in grads)
            assert any(g.abs().sum() > 0 for g in grads)
        else:
            assert not torch.allclose(out[scope], alone, rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(out["batch"], out["batch", None])  # the reference's scope ignores ``batch``
    torch.testing.assert_close(out["graph", None], out["batch", None])  # one hypergraph: one scope
    with pytest.raises(ValueError, match="attention_scope"):
        build(attention_scope="global")


def test_task_module_gives_batch_only_to_encoders_that_take_it():
    from hypergvl.models.tasks import base as T
    seen = {}

    class Plain(torch.nn.Module):
        def forward(self, x, hyperedge_index, num_hyperedges):
            return x

    class Batched(Plain):
        def forward(self, x, hyperedge_index, num_hyperedges, batch=None):
            seen["batch"] = batch
            return x

    class Head(torch.nn.Module):
        def forward(self, z, batch, num_graphs):
            return z

    x, hei, batch = torch.randn(3, 2), torch.tensor([[0, 1, 2], [0, 0, 1]]), torch.tensor([0, 0, 1])
    for enc in (Plain(), Batched()):
        T.TaskModule(enc, Head())(x, hei, 2, batch=batch, num_graphs=2)  # Plain would raise on a ``batch``
    assert seen["batch"] is batch


def test_dphgnn_directed_star_makes_every_hyperedge_token_the_same():
    edges, hei, n = random_hypergraph(1)
    x = torch.randn(n, 4)
    tokens = {}
    for star in ("directed", "undirected"):
        model = _dphgnn(star=star).eval()
        inc = model.incidence(x, hei, None)
        from hypergvl.models.nn.dphgnn import _Structure
        z = model.gcn_star(x, _Structure(inc, star).a_sg, pad=len(edges))
        tokens[star] = z
    assert torch.allclose(tokens["directed"][n:], tokens["directed"][n].expand(len(edges), -1))
    assert not torch.allclose(tokens["undirected"][n:], tokens["undirected"][n].expand(len(edges), -1))


def test_dphgnn_hgconv_degree_changes_only_the_final_convolution():
    """``hgconv_degree="dhgbench"`` is the reference's ``scatter_reduce(..., reduce="mean")`` into zeros (run here as
    the reference runs it); every other operator, and every parameter, stays as it is."""
    from hypergvl.models.nn.sparse import Incidence
    from hypergvl.models.nn.dphgnn import _Structure
    edges, hei, n = random_hypergraph(4)
    h = dense_incidence(edges, n)
    m = h.size(1)
    inc = Incidence(hei, n, m, torch.float32)
    plain, reference = _Structure(inc, "directed"), _Structure(inc, "directed", "dhgbench")
    v, e = hei
    dv = h.sum(1)
    de = torch.zeros(m).scatter_reduce(0, e, dv[v], reduce="mean").pow(-0.5)  # the reference's HypergraphConv
    de[de.isinf()] = 1
    expected = torch.diag(torch.where(dv > 0, dv ** -0.5, torch.zeros_like(dv))) @ h @ torch.diag(de / h.sum(0)) @ h.t()
    torch.testing.assert_close(reference.hgconv.to_dense(), expected)
    assert not torch.allclose(plain.hgconv.to_dense(), expected)
    for name in ("a_cg", "l_cg", "l_hgnn", "l_sym", "l_rw", "a_sg", "l_sg", "l_sg_nodes"):
        assert torch.equal(_dense(getattr(plain, name)), _dense(getattr(reference, name))), name
    a, b = _dphgnn(), _dphgnn(hgconv_degree="dhgbench")
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    x = torch.randn(n, 4)
    with torch.no_grad():
        assert not torch.allclose(a.eval()(x, hei), b.eval()(x, hei))
    with pytest.raises(ValueError, match="hgconv_degree"):
        _dphgnn(hgconv_degree="include_self")


def test_dphgnn_dropout_mode_changes_only_the_dropout_rates():
    edges, hei, n = random_hypergraph(2)
    x = torch.randn(n, 4)
    plain, reference = _dphgnn(dropout=0.0, expansion_dropout=0.0), _dphgnn(dropout=0.0, expansion_dropout=0.0,
                                                                           dropout_mode="dhgbench")
    assert plain._dropouts() == (0.0, 0.0) and reference._dropouts() == (0.3, 0.5)
    assert _dphgnn(dropout=0.2)._dropouts() == (0.2, 0.2)
    with torch.no_grad():
        evaluated = plain.eval()(x, hei)
        torch.testing.assert_close(reference.eval()(x, hei), evaluated)  # same function without dropout
        torch.testing.assert_close(plain.train()(x, hei), evaluated)  # dropout 0: training = evaluation
        assert not torch.allclose(reference.train()(x, hei), evaluated)  # the hard-coded rates act
