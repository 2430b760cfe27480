"""Tests of models/study (DHG-Bench RQ2-RQ4): the shared fairness formula, clean data staying clean, OOM handling,
time to best validation, resumability, and the end-to-end run of the three studies plus the report on real data.

Truth: hand-computed fairness gaps, a pandas group-by, the evaluate metric on the same predictions, sums of the
recorded epoch times, and the point JSON files read directly (not through the report).
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import evaluate
import numpy as np
import pandas as pd
import pytest
import torch

from hypergvl.evaluators import metric_path
from hypergvl.models import tasks as T
from hypergvl.models.study import common as C
from hypergvl.models.study import efficiency as EFF
from hypergvl.models.study import fairness as FAIR
from hypergvl.models.study import report as REP
from hypergvl.models.study import robustness as ROB
from hypergvl.models.study.__main__ import main as study_main
from hypergvl.models.config import ConfigError
from hypergvl.models.trainer import run_experiment


def _raw_root():
    env = os.environ.get("HYPERGVL_RAW_ROOT")
    root = Path(env) if env else Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
    return root.resolve() if (root / "HyperGCN").is_dir() and (root / "HyperGCL").is_dir() else None


ROOT = _raw_root()
needs_data = pytest.mark.skipif(ROOT is None, reason="real data folder (../shared/data or $HYPERGVL_RAW_ROOT) absent")
QUICK = ["epochs=10"]


# ---------------------------------------------------------------------------------------------------- fairness

def test_fairness_hand_computed():
    # s=0: nodes 0-4, ŷ = 1,1,0,0,1 -> 3/5; s=1: nodes 5-7, ŷ = 1,0,0 -> 1/3; ΔDP = |3/5 - 1/3| = 4/15
    # positives (y=1): s=0 {0, 2, 4}: ŷ 1,0,1 -> 2/3; s=1 {5, 6}: ŷ 1,0 -> 1/2; ΔEO = 1/6
    pred = [1, 1, 0, 0, 1, 1, 0, 0]
    y = [1, 0, 1, 0, 1, 1, 1, 0]
    s = [0, 0, 0, 0, 0, 1, 1, 1]
    out = T.fairness_metrics(pred, y, s)
    assert out["delta_dp"] == pytest.approx(100 * 4 / 15)
    assert out["delta_eo"] == pytest.approx(100 / 6)
    assert out["accuracy"] == pytest.approx(100 * 5 / 8)  # correct: 0, 3, 4, 5, 7
    with pytest.raises(ValueError, match="empty group: no node with s=0 and y=1"):
        T.fairness_metrics([1, 0], [0, 1], [0, 1], empty_group="raise")
    assert math.isnan(T.fairness_metrics([1, 0], [0, 1], [0, 1])["delta_eo"])


@pytest.mark.parametrize("seed", range(4))
def test_fairness_against_pandas_groupby(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 400))
    df = pd.DataFrame({"pred": rng.integers(0, 2, n), "y": rng.integers(0, 2, n), "s": rng.integers(0, 2, n)})
    df.loc[:3, ["y", "s"]] = [[1, 0], [1, 1], [0, 0], [0, 1]]
    acceptance = df.groupby("s")["pred"].mean()
    tpr = df[df.y == 1].groupby("s")["pred"].mean()
    out = T.fairness_metrics(df.pred, df.y, df.s)
    assert out["delta_dp"] == pytest.approx(100 * abs(acceptance[0] - acceptance[1]))
    assert out["delta_eo"] == pytest.approx(100 * abs(tpr[1] - tpr[0]))
    assert out["accuracy"] == pytest.approx(100 * (df.pred == df.y).mean())


def test_metric_and_trainer_agree_on_the_same_predictions():
    rng = np.random.default_rng(0)
    n = 120
    y = torch.tensor(rng.integers(0, 2, n))
    x = torch.tensor(rng.standard_normal((n, 4)) + y.numpy()[:, None] * 0.5, dtype=torch.float32)
    hes = [sorted(rng.choice(n, 3, replace=False).tolist()) for _ in range(40)]
    from hypergvl.models.datasets.data import HypergraphData
    data = HypergraphData(x=x, y=y, hyperedge_index=T.hyperedge_index_from_list(hes), num_hyperedges=40, num_nodes=n,
                          sensitive=torch.tensor(rng.integers(0, 2, n)), name="fair")
    task = T.NodeClassification(data, T.NodeTaskConfig(), 0, hidden=4)
    torch.manual_seed(0)
    module = T.TaskModule(torch.nn.Linear(4, 2), task.build_head())
    module.forward = lambda x_, hei, m: module.head(module.encoder(x_))  # a plain linear classifier
    res = task.evaluate(module)
    pred = module(task.x, None, None).argmax(-1).numpy()
    metric = evaluate.load(metric_path("hypergraph_fairness"))
    for part in ("val", "test"):
        idx = task.split[part].numpy()
        got = metric.compute(predictions=pred[idx].tolist(), references=y.numpy()[idx].tolist(),
                             sensitive_attributes=data.sensitive.numpy()[idx].tolist())
        assert got == {k: res[part][k] for k in ("accuracy", "delta_dp", "delta_eo")}  # identical, not approx


# ------------------------------------------------------------------------------------------------ robustness

def _synthetic(seed=0):
    return C.synthetic_hypergraph(80, 40, 3.5, 6, 3, seed=seed, name="synthetic")


def _accuracies(summary):
    return [r["metrics"]["test"]["accuracy"] for r in summary["runs"]] + \
        [r["metrics"]["val"]["accuracy"] for r in summary["runs"]]


def test_clean_perturbed_clean_gives_equal_clean_runs(tmp_path):
    data = _synthetic()
    x0, y0, h0 = data.x.clone(), data.y.clone(), data.hyperedge_index.clone()
    clean1 = run_experiment("HGNN", "synthetic", "node", out=tmp_path / "a", runs=1, overrides=QUICK, data=data,
                            progress=False)
    for kind, ratio in (("remove_incidence", 0.5), ("feature_noise", 0.9), ("label_noise", 0.2)):
        hook = ROB.make_hook(kind, ratio, perturb_self_loops=True, options={})
        pert = run_experiment("HGNN", "synthetic", "node", out=tmp_path / kind, runs=1, overrides=QUICK, data=data,
                              progress=False, perturb=hook)
        assert pert["runs"][0]["perturbation"]["changed"] > 0
        assert _accuracies(pert) != _accuracies(clean1)  # the perturbation did reach the run
    clean2 = run_experiment("HGNN", "synthetic", "node", out=tmp_path / "b", runs=1, overrides=QUICK, data=data,
                            progress=False)
    assert _accuracies(clean1) == _accuracies(clean2)
    assert torch.equal(data.x, x0) and torch.equal(data.y, y0) and torch.equal(data.hyperedge_index, h0)


def test_ratio_zero_equals_the_unperturbed_run(tmp_path):
    from hypergvl.models.datasets.processing import add_self_loops

    raw = C.synthetic_hypergraph(80, 40, 3.5, 6, 3, seed=1)  # (already has singletons; add_self_loops is a no-op)
    plain = run_experiment("MLP", "s", "node", out=tmp_path / "p", runs=1, overrides=QUICK, data=add_self_loops(raw),
                           progress=False)
    zero = run_experiment("MLP", "s", "node", out=tmp_path / "z", runs=1, overrides=QUICK, data=raw, progress=False,
                          perturb=ROB.make_hook("add_incidence", 0.0, perturb_self_loops=False, options={}))
    assert _accuracies(plain) == _accuracies(zero)


def test_perturb_hook_is_refused_outside_node_classification(tmp_path):
    with pytest.raises(ConfigError, match="node classification only"):
        run_experiment("MLP", "s", "hyperedge", out=tmp_path, runs=1, data=_synthetic(),
                       perturb=ROB.make_hook("label_noise", 0.1, perturb_self_loops=True, options={}))


def test_robustness_is_resumable(tmp_path, monkeypatch):
    data = _synthetic()
    monkeypatch.setattr(ROB, "load_node_dataset", lambda name, root, add_self_loops: (data, C.describe(data)))
    first = ROB.run(["MLP"], ["synthetic"], ["label_noise"], tmp_path, ratios=[0.0, 0.1], runs=1, overrides=QUICK,
                    progress=False)
    assert [p["status"] for p in first] == ["ok", "ok"]

    def boom(*a, **k):
        raise AssertionError("a finished point was retrained")

    monkeypatch.setattr(ROB, "run_experiment", boom)
    again = ROB.run(["MLP"], ["synthetic"], ["label_noise"], tmp_path, ratios=[0.0, 0.1], runs=1, overrides=QUICK,
                    progress=False)
    assert [p["metrics"] for p in again] == [p["metrics"] for p in first]
    with pytest.raises(ConfigError, match="unknown perturbation"):
        ROB.run(["MLP"], ["synthetic"], ["shuffle"], tmp_path)
    with pytest.raises(ConfigError, match="unknown model"):
        ROB.run(["NoSuchNet"], ["synthetic"], ["label_noise"], tmp_path)


def test_a_killed_study_recomputes_only_the_missing_seeds(tmp_path, monkeypatch):
    data = _synthetic()
    monkeypatch.setattr(ROB, "load_node_dataset", lambda name, root, add_self_loops: (data, C.describe(data)))
    real = ROB.run_experiment
    trained = []

    def killed_at_seed_2(*a, runs, **k):
        if runs == 3:
            raise KeyboardInterrupt  # the study is killed while training seed 2
        trained.append(runs - 1)
        return real(*a, runs=runs, **k)

    monkeypatch.setattr(ROB, "run_experiment", killed_at_seed_2)
    args = (["MLP"], ["synthetic"], ["label_noise"], tmp_path)
    with pytest.raises(KeyboardInterrupt):
        ROB.run(*args, ratios=[0.1], runs=3, overrides=QUICK, progress=False)
    cell = tmp_path / "robustness" / "points" / "synthetic" / "label_noise" / "MLP" / "r0.10"
    runs_dir = tmp_path / "robustness" / "train" / "synthetic" / "label_noise" / "MLP" / "r0.10" / "runs"
    assert sorted(f.name for f in cell.iterdir()) == ["seed0.json", "seed1.json"] and trained == [0, 1]

    def files():
        return {f.name: f.stat().st_mtime_ns for d in (cell, runs_dir) for f in d.iterdir()}

    before = files()

    def spy(*a, runs, **k):
        summary = real(*a, runs=runs, **k)
        trained.append(runs - 1)
        return summary

    monkeypatch.setattr(ROB, "run_experiment", spy)
    trained.clear()
    docs = ROB.run(*args, ratios=[0.1], runs=3, overrides=QUICK, progress=False)
    after = files()
    assert [d["seed"] for d in docs] == [0, 1, 2] and trained == [2]
    assert {n: after[n] for n in before} == before  # seeds 0 and 1: neither retrained nor rewritten
    assert {"seed2.json", "run_2.json"} <= set(after)

    # a seed lost entirely (point and trainer record): only it is recomputed, and it comes out the same
    seed1 = json.loads((cell / "seed1.json").read_text())
    (cell / "seed1.json").unlink()
    (runs_dir / "run_1.json").unlink()
    before = files()
    trained.clear()
    docs = ROB.run(*args, ratios=[0.1], runs=3, overrides=QUICK, progress=False)
    after = files()
    assert trained == [1] and {n: after[n] for n in before} == before
    assert docs[1]["metrics"] == seed1["metrics"] and docs[1]["perturbation"] == seed1["perturbation"]


def test_a_cell_split_over_seeds_equals_the_full_run(tmp_path, monkeypatch, capsys):
    """--seeds: one cell's seeds trained by separate invocations into one folder come out as the full run's."""
    data = _synthetic()
    monkeypatch.setattr(ROB, "load_node_dataset", lambda name, root, add_self_loops: (data, C.describe(data)))
    args = (["MLP"], ["synthetic"], ["label_noise"])
    full = ROB.run(*args, tmp_path / "full", ratios=[0.1], runs=3, overrides=QUICK, progress=False)
    split = tmp_path / "split"
    assert [d["seed"] for d in ROB.run(*args, split, ratios=[0.1], seeds=[2], overrides=QUICK,
                                       progress=False)] == [2]
    assert [d["seed"] for d in ROB.run(*args, split, ratios=[0.1], seeds=[1, 0], overrides=QUICK,
                                       progress=False)] == [0, 1]
    monkeypatch.setattr(ROB, "run_experiment", lambda *a, **k: pytest.fail("a finished seed was retrained"))
    merged = ROB.run(*args, split, ratios=[0.1], runs=3, overrides=QUICK, progress=False)
    assert [d["metrics"] for d in merged] == [d["metrics"] for d in full]
    for bad in (["1", "1"], ["-1"]):
        assert study_main(["fairness", "--datasets", "german", "--models", "MLP", "--out", str(tmp_path / "x"),
                           "--seeds", *bad]) == 2
        assert "--seeds must be distinct integers >= 0" in capsys.readouterr().err


def test_a_mistyped_model_or_kind_is_refused_before_torch_loads(tmp_path):
    """hypergvl study reads the model and perturbation names from hypergvl.models.names (as hypergvl train does,
    tests/models/test_names.py checks it equals the registries), so a typo or --help is answered without importing
    torch, PyG or the dataset catalogue (a bad --models had taken 9 s), and nothing is written."""
    from hypergvl.models.study import __main__ as cli

    code = ("import sys\nfrom hypergvl.models.study.__main__ import main\ntry:\n    rc = main(sys.argv[1:])\n"
            "except SystemExit as e:\n    rc = e.code\nassert 'torch' not in sys.modules, 'torch was imported'\n"
            "sys.exit(rc)")
    out = tmp_path / "o"
    for argv, message in (
            (["fairness", "--models", "MLP", "HGNNN"], "unknown model 'HGNNN'; did you mean HGNN"),
            (["robustness", "--datasets", "cora", "--models", "hgnn"], "unknown model 'hgnn'; did you mean HGNN"),
            (["robustness", "--datasets", "cora", "--kinds", "noise"], "invalid choice: 'noise'"),
            (["efficiency", "--models", "Nope"], "unknown model 'Nope'")):
        proc = subprocess.run([sys.executable, "-c", code, *argv, "--out", str(out)], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert not out.exists()
    assert cli.build_parser().parse_args(["fairness", "--out", "x"]).datasets == list(FAIR.FAIRNESS_DATASETS)
    assert cli.build_parser().parse_args(["efficiency", "--out", "x"]).datasets == list(EFF.EFFICIENCY_DATASETS)


def test_aggregate_merges_seed_points_and_reads_version_1():
    rng = np.random.default_rng(0)
    acc = rng.uniform(50, 90, 4)
    pert = {"kind": "label_noise", "ratio": 0.1, "level": "supervision"}
    seeds = [C.make_point("robustness", "MLP", "d", "ok", seed=s, metrics={"test": {"accuracy": a}, "val": {}},
                          efficiency={"train_time_to_best_val_s": s + 1.0, "epoch_time_s": 0.1, "best_val_epoch": s,
                                      "epochs_run": 9, "time_to_best_val_with_eval_s": s + 2.0,
                                      "peak_memory_mib": 100.0 + s, "memory_method": "m", "time_method": "t",
                                      "device": "cpu"},
                          perturbation={**pert, "changed": 10 + s, "train_nodes": 40, "incidences": 99})
             for s, a in zip((3, 0, 2, 1), acc)]  # out of order on purpose
    v1_same = {**C.make_point("robustness", "MLP", "d", "ok", runs=1, seeds=[0], perturbation=pert,
                              metrics={"test": {"accuracy": C.stats([1.0])}, "val": {}}), "schema_version": 1}
    v1_other = {**C.make_point("fairness", "MLP", "german", "ok", runs=5, seeds=list(range(5)),
                               metrics={"test": {"accuracy": C.stats([70.0] * 5)}, "val": {}}), "schema_version": 1}
    cells = C.aggregate(seeds + [v1_same, v1_other])
    assert len(cells) == 2  # the version-1 point of the robustness cell gives way to its seed points
    fair, rob = cells
    assert fair is v1_other
    order = np.array([1, 3, 2, 0])  # acc of seeds 0, 1, 2, 3
    got = rob["metrics"]["test"]["accuracy"]
    assert got["values"] == pytest.approx(acc[order].tolist())
    assert got["mean"] == pytest.approx(acc.mean()) and got["std"] == pytest.approx(acc.std(ddof=0))
    assert rob["runs"] == 4 and rob["seeds"] == [0, 1, 2, 3]
    assert rob["perturbation"]["changed"] == [10, 11, 12, 13]
    assert rob["efficiency"]["best_val_epoch"] == [0, 1, 2, 3]
    assert rob["efficiency"]["peak_memory_mib"]["mean"] == pytest.approx(101.5)
    # a seed that ran out of memory makes the cell an OOM cell
    oom = C.make_point("robustness", "MLP", "d", "oom", seed=4, oom="out of memory", memory_cap_gib=1.0,
                       perturbation=pert)
    (cell,) = C.aggregate(seeds + [oom])
    assert cell["status"] == "oom" and cell["memory_cap_gib"] == 1.0


# ------------------------------------------------------------------------------------------------ efficiency

def test_time_to_best_val_is_the_sum_of_epoch_times(tmp_path):
    s = run_experiment("MLP", "synthetic", "node", out=tmp_path, runs=2, overrides=["epochs=12"], data=_synthetic(),
                       progress=False)
    for r in s["runs"]:
        assert len(r["epoch_times_s"]) == 12
        assert r["train_time_to_best_val_s"] == pytest.approx(sum(r["epoch_times_s"][:r["best_val_epoch"]]))
        assert r["time_to_best_val_s"] >= r["train_time_to_best_val_s"]  # evaluation time is excluded from the first
    timing = C.summary_timing(s)
    assert timing["train_time_to_best_val_s"]["values"] == [r["train_time_to_best_val_s"] for r in s["runs"]]


def _address_space_after_imports_gib() -> float:
    """VmPeak of a fresh interpreter that imported what the efficiency subprocess imports (the data classes'
    torch_geometric and the scores' scikit-learn included: the models and tasks import neither)."""
    code = ("import hypergvl.models.study.common, hypergvl.models.nn, accelerate, torch, torch_geometric, "
            "sklearn.metrics; "
            "torch.zeros(1000, 1000).sum(); "
            "print([l for l in open('/proc/self/status') if l.startswith('VmPeak')][0].split()[1])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    return int(out.stdout.split()[-1]) / 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux")
def test_oversized_run_is_recorded_as_oom_and_the_study_continues(tmp_path):
    # a cap 0.35 GiB above what the interpreter and torch take: the Yelp-scale synthetic hypergraph's features alone
    # are 361 MiB, so it runs out; the tiny Trivago-like one after it fits
    cap = round(max(1.5, _address_space_after_imports_gib() + 0.35), 2)
    points = EFF.run(["MLP"], tmp_path, datasets=["synthetic-yelp"], overrides=["epochs=2"], memory_cap_gib=cap,
                     progress=False)
    points += EFF.run(["MLP"], tmp_path, datasets=["synthetic-trivago"], overrides=["epochs=2"], memory_cap_gib=cap,
                      scale=0.002, progress=False)
    assert [p["status"] for p in points] == ["oom", "ok"]
    assert points[0]["memory_cap_gib"] == cap and f"{cap} GiB" in points[0]["oom"]
    assert points[1]["dataset_info"]["synthetic"] is True
    on_disk = C.read_point(C.point_path(tmp_path, "efficiency", "synthetic-yelp", "MLP", C.seed_tag(0)))
    assert on_disk["status"] == "oom" and on_disk["seed"] == 0
    # rerun at the same cap: the OOM point is kept, not retried
    again = EFF.run(["MLP"], tmp_path, datasets=["synthetic-yelp"], memory_cap_gib=cap, progress=False)
    assert again[0]["created"] == points[0]["created"]


def test_synthetic_hypergraph_has_the_requested_size():
    d = C.synthetic_hypergraph(500, 300, 4.0, 7, 5, seed=3)
    d.validate()
    assert d.num_nodes == 500 and d.x.shape == (500, 7) and d.num_classes == 5
    sizes = torch.bincount(d.hyperedge_index[1], minlength=d.num_hyperedges)
    singles = d.num_hyperedges - 300
    assert singles >= 0
    assert abs(float(sizes[:300].float().mean()) - 4.0) < 0.35  # Poisson sizes, repeats merged
    assert C.SYNTHETIC["synthetic-yelp"] == {"like": "Yelp", "nodes": 50758, "hyperedges": 679302, "mean_order": 6.66,
                                             "features": 1862, "classes": 9}
    assert C.SYNTHETIC["synthetic-trivago"]["nodes"] == 172738 and C.SYNTHETIC["synthetic-trivago"]["classes"] == 160


def test_points_are_versioned(tmp_path):
    doc = C.make_point("fairness", "M", "d", "ok", metrics={"test": {"accuracy": C.stats([1.0, float("nan")])}})
    assert doc["schema"] == C.SCHEMA and doc["schema_version"] == C.SCHEMA_VERSION
    assert doc["metrics"]["test"]["accuracy"]["values"] == [1.0, None]  # NaN is not JSON
    path = tmp_path / "p.json"
    C.write_point(path, {**doc, "schema_version": C.SCHEMA_VERSION + 1})
    with pytest.raises(ConfigError, match="schema version"):
        C.read_point(path)
    C.write_point(path, {**doc, "schema_version": 1})  # the per-cell layout of version 1 is still read
    assert C.read_point(path)["schema_version"] == 1


def test_a_seed_point_carries_the_provenance_of_the_run_that_trained_it():
    """A point made from a resumed summary names the process that trained the seed, not the one writing it; a
    point of a run from before provenance gets the writer's record with the point's config and seed."""
    run = {"seed": 1, "metrics": {"test": {"accuracy": 70.0}, "val": {"accuracy": 71.0}},
           "train_time_to_best_val_s": 1.0, "epoch_time_s": {"mean": 0.1}, "best_val_epoch": 3, "epochs_run": 4,
           "time_to_best_val_s": 1.2, "peak_memory_mib": 9.0, "memory_method": "m", "device": "cpu"}
    trained = {"commit": "0" * 40, "dirty": False, "config": {"x": 1}, "seeds": [1]}
    summary = {"select": "last", "config": {"x": 1}, "runs": [{**run, "provenance": trained}]}
    assert C.seed_point("fairness", "M", "d", summary, 1)["provenance"] == trained
    old = C.seed_point("fairness", "M", "d", {**summary, "runs": [run]}, 1)["provenance"]
    assert old["seeds"] == [1] and old["config"] == {"x": 1} and old["device"] == "cpu" and "versions" in old


# ------------------------------------------------------------------------------------------------ end to end

def _md_cells(path: Path) -> list[list[str]]:
    rows = []
    for line in path.read_text().splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return rows


def _cell(mean, std):
    return f"{mean:.2f}±{std:.2f}"


@needs_data
def test_end_to_end_three_studies_and_report(tmp_path):
    out = tmp_path / "res"
    raw = ["--raw-root", str(ROOT), "--no-progress", "--set", *QUICK]
    assert study_main(["robustness", "--datasets", "cora", "--models", "HGNN", "MLP", "--kinds", "remove_incidence",
                       "feature_noise", "--ratios", "0", "0.5", "--runs", "1", "--out", str(out), *raw]) == 0
    assert study_main(["fairness", "--datasets", "german", "--models", "HGNN", "MLP", "--runs", "1", "--out",
                       str(out), *raw]) == 0
    assert study_main(["efficiency", "--datasets", "cora", "--models", "HGNN", "MLP", "--out", str(out), *raw]) == 0
    rep = tmp_path / "report"
    assert study_main(["report", "--in", str(out), "--out", str(rep)]) == 0

    for name in ("robustness.md", "fairness.md", "efficiency.md", "README.md", "report.json",
                 "figures/robustness_structure.png", "figures/robustness_feature.png", "figures/fairness_ranks.png",
                 "figures/efficiency.png"):
        assert (rep / name).exists() and (rep / name).stat().st_size > 0, name
    for png in (rep / "figures").glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # robustness: every cell of the grid tables equals its point file
    points = sorted((out / "robustness" / "points").glob("cora/*/*/*/*.json"))
    assert len(points) == 8 and all(p.name == "seed0.json" for p in points)  # one file per seed
    text = (rep / "robustness.md").read_text()
    for p in points:
        doc = json.loads(p.read_text())
        assert doc["schema_version"] == 2 and doc["seed"] == 0
        kind, model, ratio = p.parts[-4], p.parts[-3], float(p.parts[-2][1:])
        section = text.split(f"### cora: {kind} ")[1].split("###")[0]
        header, *rows = [r for r in _md_cells_text(section)]
        col = header.index(f"{ratio:g}")
        row = next(r for r in rows if r[0] == model)
        assert row[col] == _cell(doc["metrics"]["test"]["accuracy"], 0.0)  # one run: std 0
        changed = doc["perturbation"]["changed"]
        assert (changed == 0) if ratio == 0 else (changed > 0)

    # fairness: Table A8 layout equals the points
    rows = _md_cells(rep / "fairness.md")
    header = rows[0]
    for model in ("HGNN", "MLP"):
        doc = json.loads((out / "fairness" / "points" / "german" / model / "seed0.json").read_text())
        row = next(r for r in rows if r[0] == model and len(r) == len(header))
        for metric, label in (("accuracy", "Acc"), ("delta_dp", "ΔDP"), ("delta_eo", "ΔEO")):
            assert row[header.index(f"german {label}")] == _cell(doc["metrics"]["test"][metric], 0.0)

    # efficiency: accuracy and times equal the points; time to best = sum of the epoch times of the train runs
    rows = _md_cells(rep / "efficiency.md")
    for model in ("HGNN", "MLP"):
        doc = json.loads((out / "efficiency" / "points" / "cora" / model / "seed0.json").read_text())
        assert doc["status"] == "ok"
        row = next(r for r in rows if r[0] == model)
        e = doc["efficiency"]
        assert row[1] == _cell(doc["metrics"]["test"]["accuracy"], 0.0)
        assert row[2] == f"{e['train_time_to_best_val_s']:.2f}"
        run = json.loads((out / "efficiency" / doc["train_dir"] / "runs" / "run_0.json").read_text())
        assert e["train_time_to_best_val_s"] == pytest.approx(sum(run["epoch_times_s"][:run["best_val_epoch"]]))

    # the report's JSON carries the same numbers
    record = json.loads((rep / "report.json").read_text())
    assert record["schema_version"] == C.SCHEMA_VERSION
    assert {r["cell"] for r in record["robustness"]} <= set(text.replace("|", " ").split())


def test_committed_result_tables_equal_their_report_json():
    res = Path(__file__).resolve().parents[2] / "models" / "study" / "results"
    record = json.loads((res / "report.json").read_text())
    # the main table only: the comparison below it has as many columns since it gained its flag column
    rows = _md_cells_text((res / "fairness_table_a8.md").read_text().split("### Beside")[0])
    header = rows[0]
    table = {r[0]: r for r in rows[1:] if len(r) == len(header)}
    labels = {"accuracy": "Acc", "delta_dp": "ΔDP", "delta_eo": "ΔEO"}
    cells = [r for r in record["fairness"] if "cell" in r]
    assert cells
    for r in cells:
        assert table[r["model"]][header.index(f"{r['dataset']} {labels[r['metric']]}")] == r["cell"]
        assert r["cell"] == _cell(r["mean"], r["std"])
    eff = _md_cells(res / "efficiency.md")
    for r in record.get("efficiency", []):
        row = next(x for x in eff if x[0] == r["model"] and x[1:] == r["cells"])
        assert row[3] == f"{r['epoch_time_ms']:.2f}"


def _md_cells_text(section: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("|---")]


def test_scatter_labels_overlap_neither_each_other_nor_a_marker():
    """The efficiency figure's labels (issue 61: they overlapped): twelve markers, six of them nearly on one spot
    and two labels sharing a start, get labels whose drawn boxes are pairwise disjoint, cover no other marker and
    stay inside the axes; checked on the rendered extents."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xy = [(7.0 + 0.05 * i, 78.7 + 0.03 * (i % 2)) for i in range(6)] + \
        [(2.0, 74.0), (3.0, 80.0), (30.0, 81.0), (60.0, 78.0), (12.0, 77.0), (14.0, 76.0)]
    names = ["HyperGCN", "HCHA", "HGNN", "CEGCN", "UniGCN", "UniGIN", "HNHN", "TF-HNN", "UniGAT", "AllSetTransformer",
             "LEGCN", "MLP"]
    sizes = [40.0] * 6 + [40.0, 80.0, 200.0, 540.0, 60.0, 40.0]
    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    ax.scatter(*zip(*xy), s=sizes)
    ax.set_xscale("log")
    ax.margins(x=0.08, y=0.1)
    fig.tight_layout()
    labels = REP.label_points(ax, xy, names, sizes)
    fig.canvas.draw()  # as savefig does: every label at its final place
    renderer = fig.canvas.get_renderer()
    # the text's own box (an Annotation's extent includes its leader line, which may cross another label)
    boxes = [matplotlib.text.Text.get_window_extent(a, renderer) for a in labels]
    assert sorted(a.get_text() for a in labels) == sorted(names)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), (a, b)
    frame = ax.get_window_extent(renderer)
    assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1 for b in boxes)
    centres = ax.transData.transform(xy)
    px = fig.dpi / 72
    for a, box in zip(labels, boxes):
        for (cx, cy), s, name in zip(centres, sizes, names):
            r = math.sqrt(s) / 2 * px
            if name != a.get_text():
                assert not (box.x0 < cx + r and cx - r < box.x1 and box.y0 < cy + r and cy - r < box.y1), name
    plt.close(fig)


def test_report_refuses_empty_input(tmp_path):
    with pytest.raises(ConfigError, match="no study points"):
        REP.build([tmp_path], tmp_path / "out")
    assert study_main(["report", "--in", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2


def test_fairness_refuses_a_dataset_without_sensitive_attribute(tmp_path, monkeypatch):
    data = _synthetic()
    monkeypatch.setattr(FAIR, "load_node_dataset", lambda name, root: (data, C.describe(data)))
    with pytest.raises(ConfigError, match="no binary sensitive attribute"):
        FAIR.run(["MLP"], tmp_path, datasets=["synthetic"], runs=1)


def test_committed_study_tables_are_rebuilt_from_the_shipped_points(tmp_path):
    """models/study/results' fairness, efficiency and robustness tables are what `hypergvl.models.study report` writes
    from the points shipped in space/seed_studies (nothing else), below each file's command comment."""
    from hypergvl.models.study import report
    root = Path(__file__).resolve().parents[2]
    seeds = root / "space" / "seed_studies"
    report.build([seeds / "fairness", seeds / "efficiency", seeds / "robustness"], tmp_path)
    for name, shipped in (("fairness", "fairness_table_a8.md"), ("efficiency", "efficiency.md"),
                          ("robustness", "robustness_cora.md")):
        text = (root / "models" / "study" / "results" / shipped).read_text()
        body = text.split("\n", 1)[1] if text.startswith("<!--") else text
        assert (tmp_path / f"{name}.md").read_text() == body, shipped


def test_fairness_variants_table_is_rebuilt_from_its_shipped_points(tmp_path):
    """models/study/results/fairness_variants.md (DPHGNN on German with the reference's code) is the report of the
    points in benchmarks/results/fairness_variants, up to the rank section."""
    from hypergvl.models.study import report
    root = Path(__file__).resolve().parents[2]
    report.build([root / "benchmarks" / "results" / "fairness_variants" / "fairness"], tmp_path)
    built = (tmp_path / "fairness.md").read_text()
    text = (root / "models" / "study" / "results" / "fairness_variants.md").read_text()
    start = text.index("## Fairness (DHG-Bench RQ4")
    assert text[start:] == built[:built.index("### Average ranks")].rstrip() + "\n"
    assert "| DPHGNN | 69.92±2.23 | 0.00±0.00 | 0.00±0.00 |" in text


def test_seeds_trained_with_other_options_are_another_cell_and_the_report_refuses_to_mix_them(tmp_path, monkeypatch):
    """A model's robustness row is one configuration: seeds trained with other ``--set`` options never merge into a
    cell, a report of cells with two option sets for one model is refused, and the options of a row are printed."""
    data = _synthetic()
    monkeypatch.setattr(ROB, "load_node_dataset", lambda name, root, add_self_loops: (data, C.describe(data)))
    ROB.run(["MLP"], ["synthetic"], ["label_noise"], tmp_path / "a", ratios=[0.0], runs=1, overrides=QUICK,
            progress=False)
    ROB.run(["MLP"], ["synthetic"], ["label_noise"], tmp_path / "b", ratios=[0.1], runs=1, seeds=[1],
            overrides=QUICK + ["hidden=8"], progress=False)
    pa, pb = C.iter_points([tmp_path / "a"]), C.iter_points([tmp_path / "b"])
    # the same cell but for the options: seed 0 without, seed 1 with hidden=8
    moved = {**pb[0], "perturbation": {**pb[0]["perturbation"], "ratio": 0.0}}
    assert len(C.aggregate(pa + [moved])) == 2
    with pytest.raises(ConfigError, match=r"MLP on synthetic: .*hidden=8.* report them from separate folders"):
        REP.build([tmp_path / "a", tmp_path / "b"], tmp_path / "mixed")
    REP.build([tmp_path / "b"], tmp_path / "out")
    text = (tmp_path / "out" / "robustness.md").read_text()
    assert "Trained with options (`--set`) in every cell: MLP on synthetic: " in text
    assert "`hidden=8`" in text


def test_robustness_without_the_clean_ratio_says_how_to_get_the_change(tmp_path, monkeypatch):
    data = _synthetic()
    monkeypatch.setattr(ROB, "load_node_dataset", lambda name, root, add_self_loops: (data, C.describe(data)))
    ROB.run(["MLP"], ["synthetic"], ["label_noise"], tmp_path / "points", ratios=[0.1, 0.2], runs=1, overrides=QUICK,
            progress=False)
    REP.build([tmp_path / "points"], tmp_path / "out")
    text = (tmp_path / "out" / "robustness.md").read_text()
    assert "add 0 to the study's `--ratios`" in text and "| acc r=0 |" not in text
