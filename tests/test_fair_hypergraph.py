"""The fairness sets' hypergraphs are HyperGCL's rule applied to their features (benchmarks/fair_hypergraph.py):
checked against German's upstream file, which HyperGCL published itself (independent of this project), and on a toy
with a tie, where the rule keeps every tied neighbour."""
import numpy as np

from benchmark_scripts import load_script

FH = load_script("fair_hypergraph")


def test_the_rule_keeps_five_other_nodes_and_every_tie():
    x = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0]])
    edges = FH.rule_hyperedges(x, block=3)
    assert edges[0] == {1, 2, 3, 4, 5} and 0 not in edges[0]
    assert edges[3] == {0, 1, 2, 4, 5, 6}  # nodes 0 and 6 tie as the 5th nearest
    tie = FH.rule_hyperedges(np.array([[0.0], [1.0], [-1.0], [2.0], [-2.0], [3.0], [-3.0]]))
    assert tie[0] == {1, 2, 3, 4, 5, 6}  # the 5th and 6th nearest lie at the same distance: both kept


def test_german_upstream_hypergraph_is_the_rule(shared_data):
    r = FH.compare(shared_data, "german")
    assert r["identical"] == r["nodes"] == r["hyperedges_in_file"] == 1000
