import json

import networkx as nx
import pytest
from hypothesis import given, settings, strategies as st

from hypergvl import Hypergraph

E1 = Hypergraph(5, [[0, 1, 2], [1, 2, 3], [2, 3, 4]])


@pytest.mark.parametrize("n, edges, needle", [
    (3, [[0, 3]], "e0"), (3, [[0], []], "e1"), (3, [[0, -1]], "e0"), (3, [[0, 1.5]], "e0"),
    (3, [[1, 1]], "repeats"), (3, [[0], ["1"]], "e1"), (0, [], "num_vertices"), ("3", [], "num_vertices"),
    (3, [[True, 1]], "e0"), (3, "01", "list"),
])
def test_invalid_input_names_the_offending_hyperedge(n, edges, needle):
    with pytest.raises(ValueError, match=needle):
        Hypergraph(n, edges)


@pytest.mark.parametrize("text", ["", "[]", '{"num_vertices": 3}', '{"num_vertices": 3, "hyperedges": 5}',
                                  '{"num_vertices": 3, "hyperedges": [[0, 9]]}', "{nope"])
def test_invalid_json(text):
    with pytest.raises(ValueError):
        Hypergraph.from_json(text)


def test_basic_structure_on_e1_example():
    assert E1.degrees == (1, 2, 3, 2, 1)
    assert E1.neighbors(0) == (1, 2) and E1.neighbors(2) == (0, 1, 3, 4)
    h = Hypergraph(4, [[0, 1], [0, 2, 3], [3]])
    assert h.neighbors(0, min_order=3) == (2, 3) and h.neighbors(3, min_order=2) == (0, 2)
    assert h.incidence_matrix().tolist() == [[1, 1, 0], [1, 0, 0], [0, 1, 0], [0, 1, 1]]
    assert h.clique_expansion()[0][2]["hyperedges"] == [1]


hypergraphs = st.integers(1, 12).flatmap(lambda n: st.lists(
    st.sets(st.integers(0, n - 1), min_size=1, max_size=n), max_size=15).map(lambda es: Hypergraph(n, es)))


@settings(max_examples=60, deadline=None)
@given(hypergraphs)
def test_json_round_trip_and_matrix_views(h):
    assert Hypergraph.from_json(h.to_json()) == h
    inc = h.incidence_matrix()
    assert inc.sum(axis=1).tolist() == list(h.degrees)
    adj = h.adjacency_matrix()
    expected = nx.to_numpy_array(h.clique_expansion(), nodelist=range(h.num_vertices), dtype=int)
    assert (adj == expected).all()
    star = h.star_expansion()
    assert star.number_of_edges() == int(inc.sum())
    for v in range(h.num_vertices):
        assert set(h.neighbors(v)) == set(h.clique_expansion()[v])
    assert h.is_connected() == nx.is_connected(h.clique_expansion())


def test_relabel_is_an_isomorphism():
    h = Hypergraph(5, [[0, 1], [1, 2, 3], [4]])
    g = h.relabel([4, 3, 2, 1, 0], [2, 0, 1])
    assert g.hyperedges == ((0,), (3, 4), (1, 2, 3))
    assert json.loads(g.to_json())["num_vertices"] == 5
