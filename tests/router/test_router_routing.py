"""Routing policies (hypergvl.evaluators.routing, and WiseHyGR's router:DIR from hypergvl.router.policies) alone and through ``hypergvl evaluate --routing``: one sample per meta problem,
the chosen combination recorded, rand reproducible, oracle never below any other routing on the run it was built
from."""
import json
from collections import Counter

import pytest

from hypergvl.build_folder import load_rows
from hypergvl.evaluators.harness import evaluate_model
from hypergvl.cli import main as cli
from hypergvl.vqa import combinations
from hypergvl.evaluators.routing import make_policy, spec_forms

ROWS = [{"id": f"HEC-{i:05d}", "task": "HEC", "question": "Q"} for i in range(100 * len(combinations()))]


@pytest.mark.parametrize("spec", ["", "bogus", "rand:x", "rand:-1", "top:1", "oracle:", "router:", "oracle"])
def test_bad_specs_say_what_is_valid(spec):
    with pytest.raises(ValueError) as err:
        make_policy(spec)
    assert "\n" not in str(err.value)
    assert spec_forms() in str(err.value) or "samples.jsonl" in str(err.value)


def test_rand_is_uniform_seeded_per_problem_and_reproducible():
    a = make_policy("rand:7").choose(ROWS)
    assert a == make_policy("rand:7").choose(ROWS)
    assert a[::-1] == make_policy("rand:7").choose(ROWS[::-1])  # per problem: independent of order and neighbours
    assert a != make_policy("rand:8").choose(ROWS)
    assert make_policy("rand").name == "rand:0"
    assert make_policy("rand").choose(ROWS) == make_policy("rand:0").choose(ROWS)
    counts = Counter(a)
    assert set(counts) == set(combinations())  # uniform over every registered pair
    chi2 = sum((c - 100) ** 2 / 100 for c in counts.values())
    from scipy.stats import chi2 as chi2_law

    assert chi2 < chi2_law.ppf(1 - 1e-4, len(counts) - 1)  # p < 1e-4 beyond this


def test_top_is_n_set_with_enc_hy():
    p = make_policy("top")
    assert p.name == "top" and p.choose(ROWS[:3]) == [("n_set", "enc_hy")] * 3


def test_oracle_picks_the_best_combination_and_names_a_missing_problem(tmp_path):
    lines = []
    for meta, good in (("A-00001", {("ho_inc", "sh_inc"), ("inc_mat", "bi_inc")}), ("A-00002", set())):
        for t, v in combinations():
            lines.append(json.dumps({"id": f"{meta}/{t}/{v}", "meta_id": meta, "text_rep": t, "visual_rep": v,
                                     "correct": (t, v) in good}))
    (tmp_path / "samples.jsonl").write_text("\n".join(lines) + "\n")
    p = make_policy(f"oracle:{tmp_path}")
    assert p.choose([{"id": "A-00001"}, {"id": "A-00002"}]) == [("ho_inc", "sh_inc"), combinations()[0]]
    with pytest.raises(ValueError, match="A-00003"):
        p.choose([{"id": "A-00003"}])


@pytest.fixture(scope="module")
def routed(small_build, symbolic_run, tiny_router, tmp_path_factory):
    out = tmp_path_factory.mktemp("routed")
    specs = {"router": f"router:{tiny_router}", "rand": "rand:3", "rand-again": "rand:3", "top": "top",
             "oracle": f"oracle:{symbolic_run}"}
    res = {k: evaluate_model(str(small_build), "baseline:symbolic", out / k, routing=s, progress=False)
           for k, s in specs.items()}
    logs = {k: [json.loads(l) for l in (out / k / "samples.jsonl").read_text().splitlines()] for k in specs}
    return specs, res, logs


def test_routed_runs_answer_exactly_the_chosen_sample_of_each_meta_problem(routed, small_build):
    specs, res, logs = routed
    rows = load_rows(str(small_build))
    text_rows = rows.select_columns([c for c in rows.column_names if not c.startswith("image_")]).to_list()
    for key, spec in specs.items():
        policy = make_policy(spec)
        chosen = dict(zip([r["id"] for r in text_rows], policy.choose(text_rows)))
        log = logs[key]
        assert sorted(r["meta_id"] for r in log) == sorted(chosen)  # exactly one sample per meta problem
        for r in log:
            assert (r["text_rep"], r["visual_rep"]) == chosen[r["meta_id"]] and r["routing"] == policy.name
            assert r["id"] == f"{r['meta_id']}/{r['text_rep']}/{r['visual_rep']}"
        assert res[key]["selection"]["routing"] == policy.name and res[key]["num_samples"] == len(chosen)


def test_rand_routing_is_reproducible_and_oracle_is_an_upper_bound(routed, symbolic_run):
    specs, res, logs = routed
    def same(r):
        return {k: v for k, v in r.items() if k != "latency_s"}

    assert [same(r) for r in logs["rand"]] == [same(r) for r in logs["rand-again"]]
    exhaustive = [json.loads(l) for l in (symbolic_run / "samples.jsonl").read_text().splitlines()]
    solvable = {r["meta_id"] for r in exhaustive if r["correct"]}
    oracle = {r["meta_id"]: r["correct"] for r in logs["oracle"]}
    assert {m for m, ok in oracle.items() if ok} == solvable  # right wherever any combination is right
    for key in specs:
        assert res["oracle"]["scores"]["accuracy"] >= res[key]["scores"]["accuracy"]
    for t, v in combinations():  # and above every fixed combination
        fixed = [r["correct"] for r in exhaustive if (r["text_rep"], r["visual_rep"]) == (t, v)]
        assert res["oracle"]["scores"]["accuracy"] >= 100.0 * sum(fixed) / len(fixed)
    assert res["top"]["scores"]["accuracy"] == 100.0  # symbolic is exact on N-Set


def test_cli_routing_flag_and_bad_spec(small_build, tmp_path, capsys):
    assert cli(["evaluate", "--dataset", str(small_build), "--model", "baseline:symbolic", "--out",
                str(tmp_path / "t"), "--routing", "top", "--tasks", "VC", "--no-progress"]) == 0
    recs = [json.loads(l) for l in (tmp_path / "t" / "samples.jsonl").read_text().splitlines()]
    assert len(recs) == 8 and {(r["text_rep"], r["visual_rep"], r["routing"]) for r in recs} == {
        ("n_set", "enc_hy", "top")}
    assert cli(["evaluate", "--dataset", str(small_build), "--model", "baseline:symbolic", "--out",
                str(tmp_path / "b"), "--routing", "best", "--no-progress"]) != 0
    assert spec_forms() in capsys.readouterr().err
