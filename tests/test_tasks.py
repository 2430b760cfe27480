"""The paper's 12 tasks against independent truth (networkx, brute force), planted plans, corrupted answers; every
registered task (a task added beyond them too) against its own contract: deterministic rows, its question recognised
by its pattern, its reference answer graded right and its random guess format-valid."""
import json
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hypergvl_checker as checker
from hypergvl import Hypergraph, generators, solvers
from hypergvl.paper import PAPER_TASKS
from hypergvl.tasks import TASKS, generate_problem, get_task, score_response, task_codes

SCALES = ("small", "medium", "large")


def test_registry_has_the_papers_twelve_tasks_with_levels():
    assert PAPER_TASKS == ("VC", "HEC", "Ne", "DVC", "OEC", "ONe", "OSP", "OMF", "ISM", "3-CL", "SHC", "HHM")
    assert task_codes()[:len(PAPER_TASKS)] == PAPER_TASKS  # the paper's first, whatever else is registered
    assert [TASKS[c].level for c in PAPER_TASKS] == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    with pytest.raises(ValueError, match="VC, HEC"):
        get_task("XYZ")


@pytest.mark.parametrize("code", task_codes())
def test_every_registered_task_keeps_its_contract(code):
    import random

    task = TASKS[code]
    for scale in SCALES:
        for seed in range(4):
            row = generate_problem(code, seed, scale, index=seed)
            assert row["task"] == code and task.pattern.match(row["question"]), row["question"]
            assert score_response(row["reference"], f"Ans: {row['answer']}").correct
            guess = task.guess(random.Random(seed), row["num_vertices"], row["num_hyperedges"], json.loads(row["params"]))
            assert not score_response(row["reference"], f"Ans: {guess}").unparsed, guess


@pytest.mark.parametrize("code", PAPER_TASKS)  # the independent re-derivation knows the paper's tasks
def test_generated_rows_match_independent_rederivation(code):
    for scale in SCALES:
        for seed in range(12):
            row = generate_problem(code, seed, scale, index=seed)
            checker.check_row(row)
            assert score_response(row["reference"], f"Ans: {row['answer']}").correct


@pytest.mark.parametrize("code", task_codes())
def test_same_seed_same_row(code):
    assert generate_problem(code, 7, "medium") == generate_problem(code, 7, "medium")
    assert generate_problem(code, 7, "medium") != generate_problem(code, 8, "medium")


def test_ism_is_balanced_by_index_and_labels_agree_with_networkx():
    labels = [generate_problem("ISM", 0, s, index=i)["answer"] for s in SCALES for i in range(10)]
    assert labels.count("Yes") == labels.count("No")


def test_ism_no_instances_keep_counts_and_order_multiset():
    for i in range(1, 20, 2):
        row = generate_problem("ISM", 3, "medium", index=i)
        a, b = json.loads(row["hypergraph"]), json.loads(row["hypergraph2"])
        assert row["answer"] == "No" and a["num_vertices"] == b["num_vertices"]
        assert sorted(map(len, a["hyperedges"])) == sorted(map(len, b["hyperedges"]))


# ------------------------------------------------------------------ solvers on arbitrary hypergraphs
hypergraphs = st.integers(2, 9).flatmap(lambda n: st.lists(
    st.sets(st.integers(0, n - 1), min_size=1, max_size=min(n, 4)), min_size=1, max_size=10)
    .map(lambda es: Hypergraph(n, es)))


@settings(max_examples=150, deadline=None)
@given(hypergraphs, st.data())
def test_osp_and_omf_against_networkx(h, data):
    s, t = data.draw(st.lists(st.integers(0, h.num_vertices - 1), min_size=2, max_size=2, unique=True))
    edges = [set(e) for e in h.hyperedges]
    d = solvers.shortest_path_length(h, s, t)
    assert ("No path" if d is None else str(d)) == checker.osp(h.num_vertices, edges, s, t)
    assert str(solvers.max_flow(h, s, t)) == checker.omf(h.num_vertices, edges, s, t)


@settings(max_examples=150, deadline=None)
@given(hypergraphs, st.data())
def test_isomorphism_against_networkx_star_expansion(h, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 10**6)))
    g = generators.isomorphic_copy(h, rng)
    assert solvers.is_isomorphic(h, g)
    # a random edit of g: compare with networkx whatever the truth is
    edges = [list(e) for e in g.hyperedges]
    i = int(rng.integers(len(edges)))
    edges[i] = sorted({int(v) for v in rng.choice(h.num_vertices, size=len(edges[i]), replace=False)})
    k = Hypergraph(h.num_vertices, edges)
    expected = checker.ism((h.num_vertices, [set(e) for e in h.hyperedges]), (k.num_vertices, [set(e) for e in k.hyperedges]))
    assert ("Yes" if solvers.is_isomorphic(h, k) else "No") == expected


@settings(max_examples=100, deadline=None)
@given(hypergraphs)
def test_search_solvers_agree_with_brute_force(h):
    n = h.num_vertices
    import itertools
    # 3-colouring: exists iff brute force finds one
    col = solvers.find_3coloring(h)
    brute = any(solvers.check_coloring(h, c) for c in itertools.product(range(3), repeat=n))
    assert (col is not None) == brute and (col is None or solvers.check_coloring(h, col))
    # strict hypercycle, the question's definition (E.2, C: k >= 2, cyclically consecutive hyperedges share exactly
    # one vertex), against brute force over hyperedge sequences of length 2..5
    edges = [set(e) for e in h.hyperedges]
    for k in range(1, min(h.num_hyperedges, 5) + 1):
        for seq in itertools.permutations(range(h.num_hyperedges), k):
            by_question = k >= 2 and all(len(edges[seq[i]] & edges[seq[(i + 1) % k]]) == 1 for i in range(k))
            assert solvers.check_strict_hypercycle(h, seq) == by_question, seq
    # the search (rows are built with it) finds the longer cycles with distinct shared vertices
    cyc = solvers.find_strict_hypercycle(h)
    if cyc is not None:
        assert checker.valid_cycle(edges, "".join(f"e{i}" for i in cyc)) and solvers.check_strict_hypercycle(h, cyc)
    elif h.num_hyperedges <= 6:
        for k in range(3, min(h.num_hyperedges, 5) + 1):
            for seq in itertools.permutations(range(h.num_hyperedges), k):
                assert not checker.valid_cycle(edges, "".join(f"e{i}" for i in seq))


def test_hamiltonian_path_against_brute_force():
    import itertools
    rng = random.Random(0)
    for _ in range(60):
        n = rng.randint(3, 6)
        h = Hypergraph(n, {tuple(sorted(rng.sample(range(n), rng.randint(2, 3)))) for _ in range(rng.randint(2, 7))})
        found = solvers.find_hamiltonian_path(h, 0, n - 1)
        brute = any(solvers.check_hamiltonian_path(h, 0, n - 1, p)
                    for p in itertools.permutations(range(h.num_hyperedges), n - 1))
        assert (found is not None) == brute
        if found:
            assert checker.valid_ham_path(n, [set(e) for e in h.hyperedges], 0, n - 1,
                                          "".join(f"e{i}" for i in found[0]))


# ------------------------------------------------------------------ planted plans and corruptions
@pytest.mark.parametrize("seed", range(25))
def test_planted_solutions_pass_the_verifier(seed):
    rng = np.random.default_rng(seed)
    for scale in SCALES:
        h, colours = generators.planted_3cl(scale, rng)
        assert solvers.check_coloring(h, colours) and min(map(len, h.hyperedges)) >= 2 and h.is_connected()
        h, cycle = generators.planted_shc(scale, rng)
        assert solvers.check_strict_hypercycle(h, cycle) and h.is_connected()
        h, s, t, path = generators.planted_hhm(scale, rng)
        assert solvers.check_hamiltonian_path(h, s, t, path) and h.num_hyperedges <= 1.5 * h.num_vertices


def _corruptions(row):
    ans = row["answer"]
    task = row["task"]
    if task in ("VC", "HEC", "DVC", "OEC", "OSP", "OMF"):
        return [f"Ans: {int(ans) + 1}", f"Ans: {int(ans) - 1}", "Ans: No path" if ans != "No path" else "Ans: 3"]
    if task in ("Ne", "ONe"):
        n = row["num_vertices"]
        vs = set() if ans == "No neighbors" else {int(x) for x in ans[2:-1].split(",v")}
        extra = next(v for v in range(n) if v not in vs and v != json.loads(row["params"])["vertex"])
        out = ["Ans: {" + ",".join(f"v{v}" for v in sorted(vs | {extra})) + "}"]
        if vs:
            out.append("Ans: {" + ",".join(f"v{v}" for v in sorted(vs)[1:]) + "}" if len(vs) > 1 else "Ans: No neighbors")
        return out
    if task == "ISM":
        return ["Ans: " + ("No" if ans == "Yes" else "Yes")]
    ids = [int(x) for x in ans.split("[")[1].rstrip("]").replace("e", "").replace("v", "").split(",")] if task != "3-CL" else None
    if task == "3-CL":
        h = json.loads(row["hypergraph"])
        e = h["hyperedges"][0]
        mono = ans
        for v in e:  # make the first hyperedge monochromatic
            mono = mono.replace(f"v{v}:c1", f"v{v}:c0").replace(f"v{v}:c2", f"v{v}:c0")
        return [f"Ans: {mono}", "Ans: " + ans.replace(",v0:", ",v0:").rsplit(",", 1)[0] + "]",
                "Ans: Coloring:[" + ",".join(f"v{v}:c3" for v in range(row["num_vertices"])) + "]"]
    prefix = "Cycle" if task == "SHC" else "Path"
    # (closing a cycle by repeating its first hyperedge writes the same cycle, so the repeat is of the second)
    seqs = [ids[:-1], ids + [ids[1]], list(reversed(ids))[1:] + [ids[0]] * 0 + [(max(ids) + 1)]]
    if task == "HHM":
        seqs.append(ids[1:] + ids[:1] if len(ids) > 2 else ids[:-1])
    return [f"Ans: {prefix}:[" + ",".join(f"e{i}" for i in s) + "]" for s in seqs]


@pytest.mark.parametrize("code", PAPER_TASKS)
def test_verifier_rejects_corrupted_answers(code):
    rejected = 0
    for seed in range(8):
        row = generate_problem(code, seed, "medium", index=seed)
        for bad in _corruptions(row):
            verdict = score_response(row["reference"], bad)
            if code == "HHM" and bad.endswith("]") and verdict.correct:
                # a rotated sequence can still be a valid plan: confirm independently
                assert checker.valid_ham_path(row["num_vertices"], [set(e) for e in json.loads(row["hypergraph"])["hyperedges"]],
                                              *json.loads(row["params"]).values(), bad)
                continue
            if code == "SHC" and verdict.correct:
                # dropping a hyperedge of a 3-cycle leaves a 2-cycle, which the question's definition admits
                edges = [set(e) for e in json.loads(row["hypergraph"])["hyperedges"]]
                seq = [int(x) for x in bad.split("[")[1].rstrip("]").replace("e", "").split(",")]
                assert len(seq) == len(set(seq)) >= 2
                assert all(len(edges[seq[i]] & edges[seq[(i + 1) % len(seq)]]) == 1 for i in range(len(seq)))
                continue
            assert not verdict.correct, (code, row["answer"], bad)
            rejected += 1
    assert rejected >= 8


def test_verifier_accepts_other_valid_plans():
    row = generate_problem("3-CL", 1, "small", index=1)
    # permuting colour names keeps a colouring valid
    perm = {"c0": "c1", "c1": "c2", "c2": "c0"}
    alt = "Coloring:[" + ",".join(f"{v}:{perm[c]}" for v, c in (p.split(":") for p in row["answer"][10:-1].split(","))) + "]"
    assert alt != row["answer"] and score_response(row["reference"], f"Ans: {alt}").correct
    row = generate_problem("SHC", 2, "medium", index=2)
    ids = row["answer"][7:-1].split(",")
    rotated = "Cycle:[" + ",".join(ids[1:] + ids[:1]) + "]"
    reversed_ = "Cycle:[" + ",".join(reversed(ids)) + "]"
    assert score_response(row["reference"], rotated).correct and score_response(row["reference"], reversed_).correct


def test_bad_references_are_clear_errors():
    for bad in ["{}", "not json", json.dumps({"task": "NOPE", "hypergraph": {}, "params": {}, "answer": ""}), "[1]"]:
        with pytest.raises(ValueError):
            score_response(bad, "Ans: 1")
    row = generate_problem("VC", 0, "small")
    assert score_response(row["reference"], None).unparsed
    assert score_response(json.loads(row["reference"]), f"Ans: {row['answer']}").correct


def test_question_texts_follow_appendix_e2():
    q = {c: generate_problem(c, 0, "small")["question"] for c in PAPER_TASKS}
    assert q["VC"] == "Q: How many vertices are in the hypergraph G? List the answer after “Ans:”."
    assert q["HEC"] == "Q: How many hyperedges are in the hypergraph G? List the answer after “Ans:”."
    assert q["ISM"].startswith("Q: Are these two hypergraphs isomorphic? (Two hypergraphs are isomorphic if there")
    assert q["3-CL"].endswith("List the answer after “Ans:” as “Coloring:[v0:c0,v1:c1,…]”.")
    assert q["SHC"].endswith("List the hypercycle after “Ans:” as “Cycle:[e0,e1,…]”.")
    assert "(Hamiltonian path = path visiting all vertices exactly once)" in q["HHM"]
    assert "(Degree = number of hyperedges the vertex belongs to)" in q["DVC"]
    assert "where each hyperedge’s capacity equals its order? If no flow exists, answer “0”." in q["OMF"]
