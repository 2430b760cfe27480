"""Issue 12, part 2b: EHNN and T-HyperGNN. Each exact, scalable computation against its naive formula (dense
incidence, enumerated multisets) on random small hypergraphs with isolated nodes and order-1 hyperedges, and
the refusal of hypergraph classification (DHG-Bench appendix C.1)."""
from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
import torch

from models.nn import MODELS, build_model
from models.nn.ehnn import order_encoding
from models.nn.registry import task_refusal
from models.nn.thypergnn import adjacency_coefficient


def random_hypergraph(seed: int, num_nodes: int = 9, num_edges: int = 6, max_order: int = 4):
    """Random hyperedges of orders 1..max_order over nodes 0..num_nodes-2; the last node is isolated and at
    least one hyperedge has order 1."""
    g = torch.Generator().manual_seed(seed)
    edges = [[int(torch.randint(num_nodes - 1, (1,), generator=g))]]
    for _ in range(num_edges - 1):
        k = int(torch.randint(1, max_order + 1, (1,), generator=g))
        edges.append(sorted(torch.randperm(num_nodes - 1, generator=g)[:k].tolist()))
    hei = torch.tensor([[v for e in edges for v in e], [j for j, e in enumerate(edges) for _ in e]])
    return edges, hei, num_nodes


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
    from models.nn.thypergnn import TensorRows
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
    from models.nn._common import Incidence
    from models.nn.thypergnn import TensorRows, tensor_message
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
    refusing = {n for n, cls in MODELS.items() if getattr(cls, "unsupported_tasks", {})}
    assert refusing == {"EHNN", "T-HyperGNN"}


def test_trainer_refuses_with_the_reason(tmp_path, capsys):
    from models import train as TR
    code = TR.main(["--model", "EHNN", "--dataset", "rhg-10", "--task", "graph", "--runs", "1",
                    "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "does not support task 'graph'" in err and "appendix C.1" in err
    assert not (tmp_path / "out").exists()  # refused before anything was written or loaded
