"""The paper's 7 textual representations: exact appendix E.1 strings; every registered one: lossless round trips,
recognised by its marker alone, the ISM form."""
import pytest
from hypothesis import given, settings, strategies as st

from hypergvl import Hypergraph, text
from hypergvl.paper import PAPER_TEXT_REPS
from hypergvl.tasks import generate_problem

E1 = Hypergraph(5, [[0, 1, 2], [1, 2, 3], [2, 3, 4]])
HEAD = "G describes a hypergraph among vertices v0, v1, v2, v3, and v4 and"
EXPECTED = {
    "lo_inc": f"{HEAD} hyperedges e0, e1, and e2. In this hypergraph: Vertex v0 is connected to vertices v1, v2. Vertex v1 is "
              "connected to vertices v0, v2, v3. Vertex v2 is connected to vertices v0, v1, v3, v4. Vertex v3 is connected "
              "to vertices v1, v2, v4. Vertex v4 is connected to vertices v2, v3.",
    "n_pair": "In an undirected hypergraph, (i,j) means that vertex i and vertex j are connected with an undirected "
              f"hyperedge. {HEAD} hyperedges e0, e1, and e2. The connection relation between vertices in G are: (v0, v1) "
              "(v0, v2) (v1, v2) (v1, v3) (v2, v3) (v2, v4) (v3, v4).",
    "adj_mat": f"{HEAD} among hyperedges e0, e1, and e2. The adjacency matrix between the vertices of the hypergraph is "
               "[[0,1,1,0,0,] , [1,0,1,1,0,] , [1,1,0,1,1,] , [0,1,1,0,1,] , [0,0,1,1,0,]]",
    "ho_neigh": f"{HEAD} hyperedges e0, e1, and e2. In this hypergraph: Vertex v0 is connected to hyperedge e0. Vertex v1 is "
                "connected to hyperedges e0, e1. Vertex v2 is connected to hyperedges e0, e1, e2. Vertex v3 is connected to "
                "hyperedges e1, e2. Vertex v4 is connected to hyperedge e2. Hyperedge e0 is connected to vertices v0, v1, v2. "
                "Hyperedge e1 is connected to vertices v1, v2, v3. Hyperedge e2 is connected to vertices v2, v3, v4.",
    "inc_mat": f"{HEAD} hyperedges e0, e1, and e2. The incidence matrix of the hypergraph is [[1,0,0,], [1,1,0,], [1,1,1,], "
               "[0,1,1,], [0,0,1,]]",
    "n_set": "In an undirected hypergraph, (i, j, k) means that vertex i, vertex j, and vertex k are connected with an "
             "undirected hyperedge. G describes a hypergraph among vertices v0, v1, v2, v3, and v4, and among hyperedges "
             "e0, e1, and e2. The hyperedges in G are: (v0, v1, v2), (v1, v2, v3), (v2, v3, v4).",
    "ho_inc": f"{HEAD} among hyperedges e0, e1, and e2. In this hypergraph: Vertex v0 is connected to vertices v1, v2 with "
              "hyperedge e0. Vertex v1 is connected to vertices v0, v2 with hyperedge e0, to vertices v2, v3 with hyperedge "
              "e1. Vertex v2 is connected to vertices v0, v1 with hyperedge e0, to vertices v1, v3 with hyperedge e1, to "
              "vertices v3, v4 with hyperedge e2. Vertex v3 is connected to vertices v1, v2 with hyperedge e1, to vertices "
              "v2, v4 with hyperedge e2. Vertex v4 is connected to vertices v2, v3 with hyperedge e2.",
}


def test_registry_has_the_papers_seven_representations():
    assert set(PAPER_TEXT_REPS) == set(EXPECTED)
    assert [r for r in text.TEXT_REPS if r in EXPECTED] == list(PAPER_TEXT_REPS)  # in order, whatever else there is
    with pytest.raises(ValueError, match="n_set"):
        text.encode("nope", E1)


@pytest.mark.parametrize("rep", sorted(EXPECTED))
def test_appendix_e1_strings_exactly(rep):
    assert text.encode(rep, E1) == EXPECTED[rep]


hypergraphs = st.integers(1, 20).flatmap(lambda n: st.lists(
    st.sets(st.integers(0, n - 1), min_size=1, max_size=min(n, 6)), min_size=1, max_size=25)
    .map(lambda es: Hypergraph(n, es)))


@settings(max_examples=200, deadline=None)
@given(hypergraphs)
def test_lossless_encodings_round_trip(h):
    for rep in text.lossless():
        assert text.parse(rep, text.encode(rep, h)) == h, rep


@settings(max_examples=100, deadline=None)
@given(hypergraphs)
def test_vertex_vertex_encodings_round_trip_the_clique_expansion(h):
    for rep in ("lo_inc", "n_pair", "adj_mat"):
        back = text.parse(rep, text.encode(rep, h))
        assert back.num_vertices == h.num_vertices
        assert (back.adjacency_matrix() == h.adjacency_matrix()).all(), rep


@settings(max_examples=100, deadline=None)
@given(hypergraphs, hypergraphs)
def test_each_text_is_recognised_as_its_representation_alone(h, g):
    """The symbolic baseline finds a prompt's representation by the registered markers: each marker occurs in its
    own representation's text, also in the ISM two-hypergraph form, and in no other's."""
    for rep in text.TEXT_REPS:
        assert text.recognise(text.encode(rep, h)) == rep
        assert text.recognise(text.ism_text(rep, h, g)) == rep
    with pytest.raises(ValueError, match="unknown text representation"):
        text.recognise("G describes a hypergraph among vertices v0 and hyperedges e0.")


def test_ism_two_hypergraph_form():
    row = generate_problem("ISM", 0, "small", index=1)
    t = row["text_n_set"]
    assert t.startswith("There are two hypergraphs: H and G. The description of H is: In an undirected")
    assert "H describes a hypergraph" in t and "The description of G is: In an undirected" in t
    for rep in text.lossless():
        h, g = text.parse_ism(rep, row[f"text_{rep}"])
        assert h.to_json() == row["hypergraph"] and g.to_json() == row["hypergraph2"]
