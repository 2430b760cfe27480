"""T-HyperGNN (issue 12): the tensor messages against the reference's enumerated multisets (nothing cut, and the
random cut of large hyperedges), the closed forms, the cached first layer, and the faster training step (cached
sparse first-layer input, column-major output weight, embedding-bag products), outputs and gradients, on random small
hypergraphs with an isolated node and an order-1 hyperedge (``hnn_toys.random_hypergraph``)."""
from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
import torch

from hnn_toys import param_grads, random_hypergraph, sparse_features
from hypergvl.models.nn import build_model
from hypergvl.models.nn.sparse import SparseOperator
from hypergvl.models.nn.thypergnn import adjacency_coefficient


# ------------------------------------------------------------------------------------------------- exact computation

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


# ------------------------------------------------------------------------------------------------- faster evaluation

def enumerated_messages(x, edges, m):
    """Per node, the sum over its hyperedges e (|e| <= M) of a(|e|)/d_v times, over the size-M multisets of e
    that contain every member, with one v removed, the number of distinct orderings times the product."""
    out = []
    for v in range(x.size(0)):
        mine = [e for e in edges if v in e]
        if not mine:
            out.append(x[v])
            continue
        total = torch.zeros_like(x[v])
        for e in mine:
            for comb in itertools.combinations_with_replacement(e, m):
                if set(comb) == set(e):
                    rest = list(comb)
                    rest.remove(v)
                    total = total + (adjacency_coefficient(len(e), m) / len(mine)
                                     * len(set(itertools.permutations(rest))) * x[rest].prod(0))
        out.append(total)
    return torch.stack(out)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("m,layers", [(4, 1), (3, 2), (1, 1)])
def test_thypergnn_training_step_equals_enumerated_multisets(seed, m, layers):
    """The cached first-layer input (a sparse operator for sparse features, dense otherwise) and the
    column-major output weight: outputs and every gradient equal the enumeration's."""
    edges, hei, n = random_hypergraph(seed, max_order=m)
    torch.manual_seed(seed)
    model = build_model("T-HyperGNN", in_channels=40, hidden_channels=5, out_channels=2, num_layers=layers,
                        max_cardinality=m).double()
    sparse = sparse_features(n, 40, 0.04, seed)
    # (M = 1: every message is the constant a(1)/d_v, so even sparse features give a dense input)
    kinds = ((sparse, SparseOperator if m > 1 else torch.Tensor),
             (torch.randn(n, 40, dtype=torch.float64), torch.Tensor))
    for x, kind in kinds:
        model.zero_grad()
        out = model(x, hei)
        out.square().sum().backward()
        assert isinstance(model._cache._entries[0][-1], kind)  # the layer-0 input, cached last
        fast = param_grads(model)
        model.zero_grad()
        h = x.to_dense() if x.layout != torch.strided else x
        for w, b in zip(model.weights, model.biases):
            h = torch.relu(torch.cat([h, enumerated_messages(h, edges, m)], 1) @ w + b)
        naive = h @ model.out_weight + model.out_bias
        naive.square().sum().backward()
        torch.testing.assert_close(out, naive)
        for k, g in param_grads(model).items():
            torch.testing.assert_close(fast[k], g, msg=k)


def test_thypergnn_output_weight_stays_column_major_through_state_dict_and_reset():
    model = build_model("T-HyperGNN", in_channels=3, hidden_channels=5, out_channels=2)
    other = build_model("T-HyperGNN", in_channels=3, hidden_channels=5, out_channels=2)
    other.load_state_dict(model.state_dict())
    assert torch.equal(other.out_weight, model.out_weight)
    assert other.out_weight.shape == (5, 2) and other.out_weight.stride() == (1, 5)
    other.reset_parameters()
    assert other.out_weight.stride() == (1, 5) and not torch.equal(other.out_weight, model.out_weight)


def test_thypergnn_bag_operator_products_and_gradient_equal_the_dense_matrix():
    """embedding_bag products over a sparse matrix with empty rows and columns: A @ W and A^T G exactly."""
    from hypergvl.models.nn.sparse import BagOperator
    a = torch.zeros(6, 5, dtype=torch.float64)
    a[0, 1], a[0, 4], a[2, 1], a[3, 0], a[5, 4], a[5, 2] = 1.5, -2.0, 0.5, 3.0, 1.0, -1.0  # rows 1, 4 empty
    row, col = a.nonzero(as_tuple=True)
    op = BagOperator(row, col, a[row, col], (6, 5))
    w = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    torch.testing.assert_close(op @ w, a @ w)
    assert torch.autograd.gradcheck(lambda t: op @ t, (w,))
    with torch.no_grad():
        torch.testing.assert_close(op @ w, a @ w)
