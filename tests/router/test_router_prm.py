"""PRM dataset (hypergvl.router.prm) on hand-made samples.jsonl files: ties, averaging across models, uninformative problems,
the 8:2 split by meta problem, and the router input regenerated from the references."""
import pytest

from hypergvl.tasks import generate_problem
from hypergvl.router.prm import PRMConfig, build_prm, load_prm, main, split_meta_ids
from hypergvl.vqa import combinations
from router_fixtures import write_run

N = len(combinations())  # the registered pairs: the runs below are exhaustive over them
TASKS = ("HEC", "OSP", "VC", "ISM", "Ne", "SHC", "OEC", "DVC", "ONe", "OMF")


@pytest.fixture(scope="module")
def problems():
    """Ten real meta problems (one per task), keyed by meta id."""
    rows = [generate_problem(t, seed=3, scale="small", index=i) for i, t in enumerate(TASKS)]
    return {r["id"]: r for r in rows}


@pytest.fixture(scope="module")
def two_runs(problems, tmp_path_factory):
    ids = sorted(problems)
    hec, osp, vc, ism = (problems_id(problems, t) for t in ("HEC", "OSP", "VC", "ISM"))
    base = tmp_path_factory.mktemp("runs")

    def m1(meta, c):
        if meta == hec:  # n_set+enc_hy and ho_inc+bi_inc right for model 1 ...
            return c in {("n_set", "enc_hy"), ("ho_inc", "bi_inc")}
        if meta == osp:  # a tie of two for both models
            return c in {("n_set", "st_inc"), ("inc_mat", "cli_exp")}
        if meta == vc:
            return True  # all right: uninformative
        if meta == ism:
            return False  # all wrong: uninformative
        return c == combinations()[(ids.index(meta) * 7) % N]

    def m2(meta, c):
        if meta == hec:  # ... and n_set+enc_hy and lo_inc+enc_hy for model 2: only n_set+enc_hy averages 1.0
            return c in {("n_set", "enc_hy"), ("lo_inc", "enc_hy")}
        return m1(meta, c)

    return write_run(base / "a", problems, m1, "model-a"), write_run(base / "b", problems, m2, "model-b")


def problems_id(problems, task):
    return next(m for m, r in problems.items() if r["task"] == task)


def pairs_by_meta(prm):
    out = {}
    for split in ("train", "validation"):
        for r in prm[split]:
            out.setdefault(r["meta_id"], set()).add(prm.labels[r["label"]])
    return out


def test_averaging_across_models_and_ties(two_runs, problems, tmp_path):
    s = build_prm(PRMConfig(tuple(map(str, two_runs)), str(tmp_path / "prm")), progress=False)
    got = pairs_by_meta(load_prm(tmp_path / "prm"))
    assert got[problems_id(problems, "HEC")] == {"n_set+enc_hy"}  # 1.0 beats the 0.5s of either model alone
    assert got[problems_id(problems, "OSP")] == {"n_set+st_inc", "inc_mat+cli_exp"}  # a tie: two (p, R_p) pairs
    assert len(got[problems_id(problems, "VC")]) == N and len(got[problems_id(problems, "ISM")]) == N
    assert s["num_uninformative"] == 2 and s["num_meta_problems"] == 10
    rows = [r for sp in load_prm(tmp_path / "prm").values() for r in sp]
    osp = [r for r in rows if r["meta_id"] == problems_id(problems, "OSP")]
    assert all(r["num_best"] == 2 and r["best_accuracy"] == 1.0 and r["informative"] for r in osp)
    assert sum(r["informative"] is False for r in rows) == 2 * N


def test_drop_uninformative_and_card(two_runs, problems, tmp_path):
    s = build_prm(PRMConfig(tuple(map(str, two_runs)), str(tmp_path / "prm"), drop_uninformative=True), progress=False)
    got = pairs_by_meta(load_prm(tmp_path / "prm"))
    assert problems_id(problems, "VC") not in got and problems_id(problems, "ISM") not in got and len(got) == 8
    assert s["num_uninformative"] == 2 and s["uninformative_dropped"]
    card = (tmp_path / "prm" / "README.md").read_text()
    assert "model-a" in card and "model-b" in card and "2 are uninformative" in card and "dropped" in card
    assert "| `n_set+enc_hy` |" in card and "split: validation" in card


def test_router_input_is_the_builders_ho_neigh_text_and_question(two_runs, problems, tmp_path):
    build_prm(PRMConfig((str(two_runs[0]),), str(tmp_path / "prm")), progress=False)
    for split in load_prm(tmp_path / "prm").values():
        for r in split:
            assert r["description"] == problems[r["meta_id"]]["text_ho_neigh"]
            assert r["question"] == problems[r["meta_id"]]["question"]


def test_split_is_by_meta_problem_8_to_2_and_seeded(two_runs, tmp_path):
    splits = {}
    for seed in (0, 0, 1):
        out = tmp_path / f"prm{len(splits)}-{seed}"
        build_prm(PRMConfig(tuple(map(str, two_runs)), str(out), seed=seed), progress=False)
        prm = load_prm(out)
        train, val = {r["meta_id"] for r in prm["train"]}, {r["meta_id"] for r in prm["validation"]}
        assert not train & val and len(train | val) == 10 and len(val) == 2
        splits[len(splits)] = val
    assert splits[0] == splits[1]
    ids = [f"P-{i:03d}" for i in range(100)]
    a, b = split_meta_ids(ids, 5), split_meta_ids(ids, 6)
    assert sum(v == "validation" for v in a.values()) == 20 and a == split_meta_ids(ids, 5) and a != b


def test_incomplete_or_mismatched_runs_are_refused(two_runs, problems, tmp_path):
    lines = (two_runs[0] / "samples.jsonl").read_text().splitlines()
    short = tmp_path / "short"
    short.mkdir()
    (short / "samples.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(ValueError, match=rf"lacks 1 of the {N} combinations of meta problem .*-\d{{5}}"):
        build_prm(PRMConfig((str(short),), str(tmp_path / "x")), progress=False)
    fewer = tmp_path / "fewer"
    fewer.mkdir()
    (fewer / "samples.jsonl").write_text("\n".join(lines[N:]) + "\n")
    with pytest.raises(ValueError, match="different meta problems"):
        build_prm(PRMConfig((str(two_runs[0]), str(fewer)), str(tmp_path / "y")), progress=False)
    assert main(["--results", str(tmp_path / "nothing"), "--out", str(tmp_path / "z"), "--no-progress"]) == 2
