"""Node-classification prompts (appendix G) on the real node datasets, the category names, the tolerant parser, and
the baseline:neighbors answerer, checked against brute force on the loaded data."""
from collections import Counter

import numpy as np
import pytest

from hypergvl.evaluators.adapters import Sample, make_adapter
from hypergvl.evaluators.baselines import majority_neighbor_label
from hypergvl import Hypergraph
from hypergvl.text import TEXT_REPS
from hypergvl.router.categories import CATEGORIES, Category, label_names
from hypergvl.router.nodeclf import NodeProblem, Structure, node_prompt, parse_category, sample_problem


@pytest.fixture(scope="module")
def cora(shared_data):
    import hypergvl.models.datasets as md

    data = md.load("cora", raw_root=shared_data, features="none", add_self_loops=False)
    return data, Structure.from_data(data), label_names("cora", data.y.tolist())


def test_sampled_subgraphs_are_connected_small_and_label_the_others_truly(cora):
    data, s, cats = cora
    y = data.y.tolist()
    members = [set(e) for e in data.hyperedges()]
    rng = np.random.default_rng(0)
    targets = rng.choice(s.eligible(), size=25, replace=False)
    sizes = []
    for i, t in enumerate(targets):
        p = sample_problem(s, "cora", cats, int(t), 40, rng, f"cora/0/{i}")
        h = p.hypergraph
        sizes.append(h.num_vertices)
        assert p.target == t and p.nodes[0] == t and len(set(p.nodes)) == len(p.nodes) <= 40
        assert h.is_connected()
        assert p.label == cats[y[t]].name
        assert list(p.known) == [cats[y[v]].name for v in p.nodes[1:]]  # the true labels, v1.. in order
        for e in h.hyperedges:  # every sub-hyperedge lies inside one real hyperedge
            assert any({p.nodes[v] for v in e} <= m for m in members)
        prompt = node_prompt(p, "n_set")
        known = prompt.split("Known labels in the subgraph:\n")[1].split("\nTarget Node Content:")[0].splitlines()
        assert len(known) == h.num_vertices - 1 and not any(line.startswith("v0:") for line in known)
        assert "v0" in prompt and "Not available" in prompt and all(c.name in prompt for c in cats)
    assert max(sizes) == 40  # the walk does reach n on Cora


def test_cora_category_names_follow_the_published_class_sizes(cora):
    data, _, cats = cora
    counts = Counter(data.y.tolist())
    assert [c.name for c in cats][:2] == ["Genetic Algorithms", "Theory"]  # HyperGCN's order is not Planetoid's
    assert all(counts[i] == c.size for i, c in enumerate(cats))
    with pytest.raises(ValueError, match="cannot name it"):
        label_names("cora", [0] * 10 + list(range(7)))
    with pytest.raises(ValueError, match="no category table"):
        label_names("walmart", [0])
    assert len(label_names("dblp-ca", list(range(6)))) == 6 and set(CATEGORIES) >= {"cora-ca", "pubmed", "citeseer"}


@pytest.mark.parametrize("response,expected", [
    ("Neural Networks", "Neural Networks"), ("neural_networks", "Neural Networks"), ("Ans: Theory.", "Theory"),
    ("<think>maybe Theory</think> Rule Learning", "Rule Learning"), ("It is **Case Based**!", "Case Based"),
    ("I'd say Reinforcement Learning, not Theory", "Reinforcement Learning"), ("no idea", None)])
def test_category_parser_is_tolerant(response, expected):
    names = [c.name for c in CATEGORIES["cora"]]
    assert parse_category(response, names) == expected


def test_category_parser_reads_distinctive_words():
    names = [c.name for c in CATEGORIES["pubmed"]]
    assert parse_category("Type 2", names) == "Diabetes Mellitus Type 2"
    assert parse_category("diabetes mellitus experimental", names) == "Diabetes Mellitus, Experimental"
    assert parse_category("Diabetes Mellitus", names) is None


def _problem(edges, n, known):
    cats = tuple(Category(name, f"about {name}", None) for name in ("Alpha", "Beta", "Gamma"))
    return NodeProblem("x", "toy", tuple(range(n)), Hypergraph(n, edges), tuple(known), "Alpha", cats)


@pytest.mark.parametrize("rep", list(TEXT_REPS))
def test_neighbors_baseline_takes_the_majority_of_the_targets_neighbours(rep):
    # v0's neighbours: v1 (Beta), v2 (Gamma), v3 (Gamma); v4, v5 (Beta) are not its neighbours
    p = _problem([[0, 1, 2], [0, 3], [3, 4, 5]], 6, ["Beta", "Gamma", "Gamma", "Beta", "Beta"])
    assert majority_neighbor_label(node_prompt(p, rep)) == "Gamma"
    # a tie among neighbours goes to the label more frequent overall
    p = _problem([[0, 1, 2], [2, 3]], 4, ["Beta", "Gamma", "Gamma"])
    assert majority_neighbor_label(node_prompt(p, rep)) == "Gamma"


def test_neighbors_adapter_answers_node_prompts_and_refuses_others():
    a = make_adapter("baseline:neighbors")
    p = _problem([[0, 1], [1, 2]], 3, ["Beta", "Alpha"])
    assert a.generate([Sample(node_prompt(p, "ho_inc")), Sample("Q: How many vertices?")]) == [
        "Beta", "I cannot answer: not a node-classification prompt"]
    assert a.info().name == "baseline:neighbors"
    with pytest.raises(ValueError, match="baseline:neighbors"):
        make_adapter("baseline:nearest")
