"""Tests of models/train.py: configuration order and errors, end-to-end runs of the three tasks, resume."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from hnn_toys import graph_set, planted
from benchmark_scripts import load_script
from hypergvl.models import config as CFG
from hypergvl.models import trainer as TR
from hypergvl.models.train import main as train_main

ROOT = Path(__file__).resolve().parents[2]
_DATA = ROOT / ".." / "shared" / "data"
RAW = os.environ.get("HYPERGVL_RAW_ROOT") or str(_DATA)
needs_data = pytest.mark.skipif(not (Path(RAW) / "HyperGCN").exists(), reason="shared raw data absent")


# ----------------------------------------------------------------------------------------------- fixtures

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/models/conftest.py


class FakeModel(torch.nn.Module):
    """Stands in for a registered model with typed keyword arguments."""

    def __init__(self, in_channels, hidden_channels, out_channels, num_layers=2, dropout=0.5, *, heads: int = 1,
                 mode: str = "a", lr: float = 0.0, flag: bool = False):
        super().__init__()
        if heads < 1:
            raise ValueError(f"heads must be >= 1, got {heads}")


@pytest.fixture
def fake_registry(monkeypatch):
    from hypergvl.models.nn import MODELS

    monkeypatch.setattr(CFG, "_model_registry", lambda: {**MODELS, "Fake": FakeModel})


# ----------------------------------------------------------------------------------------------- configuration

def test_shipped_hgnn_cora_config_is_the_design_protocol():
    cfg = TR.resolve_config("HGNN", "node", "cora")
    t = cfg.trainer
    assert (t.hidden, t.lr, t.weight_decay, t.epochs, t.num_layers, t.dropout) == (128, 1e-3, 0.0, 100, 2, 0.5)
    assert t.select == "last" and cfg.model == {"symmetric": False}
    assert cfg.sources["trainer.select"] == "task node default"
    assert TR.resolve_config("HGNN", "hyperedge", "cora").trainer.select == "best_val"
    g = TR.resolve_config("HGNN", "graph", "rhg-10")
    assert (g.trainer.epochs, g.task.graph_pooling, g.task.embed_dim) == (300, "max", 64)


def test_precedence_defaults_then_file_then_command_line(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("node:\n  default: {lr: 0.01, epochs: 7, hidden: 16}\n  toy: {epochs: 9, train_frac: 0.6}\n")
    cfg = TR.resolve_config("MLP", "node", "toy", f, ["epochs=11", "weight_decay=5e-4"])
    t = cfg.trainer
    assert (t.lr, t.epochs, t.hidden, t.weight_decay, t.dropout) == (0.01, 11, 16, 5e-4, 0.5)
    assert cfg.task.train_frac == 0.6 and cfg.task.val_frac == 0.25
    assert cfg.sources["trainer.epochs"] == "--set" and cfg.sources["trainer.lr"] == "c.yaml [node.default]"
    assert cfg.sources["task.train_frac"] == "c.yaml [node.toy]" and "trainer.dropout" not in cfg.sources
    assert TR.resolve_config("MLP", "node", "TOY", f).trainer.epochs == 9  # dataset names are case-insensitive
    assert TR.resolve_config("MLP", "node", "other", f).trainer.epochs == 7
    assert TR.resolve_config("MLP", "node", "other").trainer.epochs == 100  # no config file for MLP: defaults


def test_unknown_key_names_the_key_and_the_valid_ones(tmp_path):
    with pytest.raises(TR.ConfigError, match=r"unknown key 'lrate'.*valid keys: trainer: .*\blr\b"):
        TR.resolve_config("HGNN", "node", "cora", overrides=["lrate=0.1"])
    with pytest.raises(TR.ConfigError, match="model: symmetric"):
        TR.resolve_config("HGNN", "node", "cora", overrides=["heads=2"])
    f = tmp_path / "c.yaml"
    f.write_text("graph:\n  rhg-3: {pooling: max}\n")  # a typo in a section not used by this run
    with pytest.raises(TR.ConfigError, match=r"\[graph.rhg-3\]: unknown key 'pooling'"):
        TR.resolve_config("HGNN", "node", "cora", f)
    f.write_text("edge:\n  default: {}\n")
    with pytest.raises(TR.ConfigError, match="unknown task section 'edge'"):
        TR.resolve_config("HGNN", "node", "cora", f)
    with pytest.raises(TR.ConfigError, match="does not exist"):
        TR.resolve_config("HGNN", "node", "cora", tmp_path / "missing.yaml")


@pytest.mark.parametrize("item,pattern", [
    ("lr=abc", r"lr: expected float, got 'abc'"),
    ("epochs=1.5", r"epochs: expected int"),
    ("epochs=0", r"epochs must be >= 1"),
    ("dropout=1.5", r"dropout must be in \[0, 1\)"),
    ("select=sometimes", r"select: expected one of auto, last, best_val"),
    ("symmetric=maybe", r"symmetric: expected bool"),
    ("train_frac=0.9", r"train_frac \+ val_frac < 1"),
    ("lr", r"--set expects key=value"),
])
def test_bad_values_are_errors(item, pattern):
    with pytest.raises(TR.ConfigError, match=pattern):
        TR.resolve_config("HGNN", "node", "cora", overrides=[item])


def test_model_kwargs_checked_against_the_constructor_signature(fake_registry):
    assert CFG.model_kwarg_types(FakeModel) == {"heads": int, "mode": str, "lr": float, "flag": bool}
    with pytest.raises(TR.ConfigError, match=r"'lr' is ambiguous; write one of trainer.lr, model.lr"):
        TR.resolve_config("Fake", "node", "x", overrides=["lr=0.1"])
    cfg = TR.resolve_config("Fake", "node", "x", overrides=["heads=4", "flag=true", "model.lr=0.5", "trainer.lr=0.1"])
    assert cfg.model == {"heads": 4, "flag": True, "lr": 0.5} and cfg.trainer.lr == 0.1
    with pytest.raises(TR.ConfigError, match="heads: expected int, got 'x'"):
        TR.resolve_config("Fake", "node", "x", overrides=["heads=x"])
    with pytest.raises(TR.ConfigError, match="model Fake: heads must be >= 1"):
        TR.resolve_config("Fake", "node", "x", overrides=["heads=0"])


def test_unknown_model_task_dataset_list_the_choices():
    with pytest.raises(TR.ConfigError, match=r"unknown model 'HGNNN'; valid models: .*HGNN"):
        TR.resolve_config("HGNNN", "node", "cora")
    with pytest.raises(TR.ConfigError, match="unknown HNN task 'nodes'; choose one of graph, hyperedge, node"):
        TR.resolve_config("HGNN", "nodes", "cora")
    with pytest.raises(TR.ConfigError, match=r"unknown dataset 'coraa'; valid datasets: .*cora-ca"):
        TR.load_dataset("coraa", None)


def test_cli_errors_exit_non_zero(tmp_path, capsys, monkeypatch):
    out = tmp_path / "o"
    for f in ("hypergraph", "labels"):  # a raw root that passes the check before torch (the files are never read)
        (tmp_path / "raw/HyperGCN/data/cocitation/cora").mkdir(parents=True, exist_ok=True)
        (tmp_path / f"raw/HyperGCN/data/cocitation/cora/{f}.pickle").write_bytes(b"")
    monkeypatch.setenv("HYPERGVL_RAW_ROOT", str(tmp_path / "raw"))
    assert train_main(["--model", "HGNN", "--dataset", "cora", "--task", "node", "--out", str(out),
                    "--set", "lr=abc"]) == 2
    assert "error: --set: lr: expected float" in capsys.readouterr().err
    assert not out.exists()
    assert train_main(["--model", "HGNN", "--dataset", "cora", "--task", "node", "--out", str(out), "--runs", "0"]) == 2
    proc = subprocess.run([sys.executable, "-m", "hypergvl.models.train", "--model", "Nope", "--dataset", "cora", "--task",
                           "node", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "unknown model 'Nope'" in proc.stderr and "Traceback" not in proc.stderr


def test_a_mistyped_model_or_task_is_refused_before_torch_loads(tmp_path):
    """hypergvl train reads the model and task names from hypergvl.models.names (tests/models/test_names.py checks
    it equals the registries), so a typo is answered without importing the trainer (torch, the model zoo: 5-6 s)."""
    code = ("import sys\nfrom hypergvl.models.train import main\nrc = main(sys.argv[1:])\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\nsys.exit(rc)")
    for argv, message in ((["--model", "HGNNN", "--task", "node"], "unknown model 'HGNNN'; did you mean HGNN"),
                          (["--model", "hgnn", "--task", "node"], "unknown model 'hgnn'; did you mean HGNN"),
                          (["--model", "HGNN", "--task", "nodes"], "unknown task 'nodes'; did you mean node?")):
        proc = subprocess.run([sys.executable, "-c", code, *argv, "--dataset", "cora", "--out", str(tmp_path / "o")],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert not (tmp_path / "o").exists()


# ----------------------------------------------------------------------------------------------- end to end

def _check_summary(out, summary, model, task, metric, runs):
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk == json.loads(json.dumps(summary))
    assert (on_disk["model"], on_disk["task"], on_disk["metric"]) == (model, task, metric)
    values = [r["metrics"]["test"][metric] for r in on_disk["runs"]]
    assert len(values) == runs and [r["seed"] for r in on_disk["runs"]] == list(range(runs))
    assert on_disk["mean"] == pytest.approx(np.mean(values)) and on_disk["std"] == pytest.approx(np.std(values))
    assert all(0 <= v <= 100 for v in values)
    r = on_disk["runs"][0]
    assert r["peak_memory_mib"] > 0 and "resident set size" in r["memory_method"]
    assert r["epoch_time_s"]["median"] > 0 and 0 < r["time_to_best_val_s"] <= r["total_time_s"]
    assert on_disk["config"]["trainer"]["epochs"] == r["epochs_run"]
    assert sorted(p.name for p in (out / "runs").iterdir()) == [f"run_{i}.json" for i in range(runs)]
    assert json.loads((out / "runs" / "run_0.json").read_text()) == r
    assert not (out / "checkpoints").exists() and not list(out.rglob("*.tmp"))
    # provenance: the summary and each run name the checkout's commit, the resolved config and the seeds
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    for rec, seeds in [(on_disk["provenance"], list(range(runs)))] + [(x["provenance"], [x["seed"]])
                                                                       for x in on_disk["runs"]]:
        assert rec["commit"] == (head or None) and rec["seeds"] == seeds and rec["device"] == "cpu"
        assert rec["config"] == on_disk["config"] and torch.__version__.startswith(rec["versions"]["torch"])


@pytest.mark.parametrize("task,data,metric,extra", [
    ("node", planted, "accuracy", []),
    ("hyperedge", lambda: planted(m=80), "auroc", ["batch_size=16"]),
    ("graph", graph_set, "accuracy", ["batch_size=8", "graph_pooling=max"]),
])
def test_end_to_end_each_task_writes_summary(tmp_path, task, data, metric, extra):
    out = tmp_path / task
    summary = TR.run_experiment("HGNN", "synthetic", task, out=out, runs=2, data=data(), progress=False,
                                overrides=["epochs=4", "hidden=8", "eval_every=1", *extra])
    _check_summary(out, summary, "HGNN", task, metric, 2)
    # the one reader of the file gives back what the trainer wrote
    assert TR.read_summary(out) == json.loads(json.dumps(summary, default=str))
    if task == "hyperedge":
        assert set(summary["test_metrics"]) >= {"auroc", "ap", "auroc_sized", "auroc_motif", "auroc_clique"}
    if task == "graph":
        assert set(summary["test_metrics"]) == {"accuracy", "macro_f1"}


def test_task_and_dataset_kinds_must_match(tmp_path):
    with pytest.raises(TR.ConfigError, match="task 'graph' needs a collection of hypergraphs"):
        TR.run_experiment("MLP", "planted", "graph", out=tmp_path, runs=1, data=planted(), progress=False)


@needs_data
@pytest.mark.parametrize("task,dataset,metric", [("node", "cora", "accuracy"), ("hyperedge", "cora-ca", "auroc"),
                                                 ("graph", "twitter-friend", "accuracy")])
def test_cli_on_real_data(tmp_path, capsys, task, dataset, metric):
    out = tmp_path / "o"
    argv = ["--model", "HGNN", "--dataset", dataset, "--task", task, "--runs", "1", "--out", str(out),
            "--raw-root", RAW, "--set", "epochs=1", "--no-progress"]
    assert train_main(argv) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    summary = json.loads((out / "summary.json").read_text())
    assert line == f"HGNN {dataset} {task}: test {metric} {summary['mean']:.2f} ± {summary['std']:.2f} (1 run)"
    _check_summary(out, summary, "HGNN", task, metric, 1)


# ----------------------------------------------------------------------------------------------- resume

def test_resume_gives_the_uninterrupted_result(tmp_path, monkeypatch, capsys, shared_data):
    monkeypatch.setenv("HYPERGVL_RAW_ROOT", str(shared_data))  # the CLI checks the raw files are there first
    data = planted(seed=4)
    kw = dict(runs=2, data=data, progress=False,
              overrides=["epochs=7", "hidden=8", "checkpoint_every=2", "select=best_val", "dropout=0.3"])
    full = TR.run_experiment("HGNN", "planted", "node", out=tmp_path / "full", **kw)

    real_save = TR._save_checkpoint

    def save_then_die(accelerator, ckpt, state):
        real_save(accelerator, ckpt, state)
        if ckpt.name == "run_1" and state.epoch == 4:
            raise KeyboardInterrupt

    out = tmp_path / "cut"
    monkeypatch.setattr(TR, "_save_checkpoint", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        TR.run_experiment("HGNN", "planted", "node", out=out, **kw)
    monkeypatch.setattr(TR, "_save_checkpoint", real_save)
    assert (out / "runs" / "run_0.json").exists() and not (out / "runs" / "run_1.json").exists()
    assert json.loads((out / "checkpoints" / "run_1" / "loop_state.json").read_text())["epoch"] == 4
    with pytest.raises(TR.ConfigError, match="already holds results; pass --resume"):
        TR.run_experiment("HGNN", "planted", "node", out=out, **kw)
    with pytest.raises(TR.ConfigError, match=r"configuration differs .*trainer.epochs: saved 7, now 8"):
        TR.run_experiment("HGNN", "planted", "node", out=out, resume=True,
                          **{**kw, "overrides": kw["overrides"] + ["epochs=8"]})

    resumed = TR.run_experiment("HGNN", "planted", "node", out=out, resume=True, **kw)
    keys = ("metrics", "selected_epoch", "best_val_epoch", "epochs_run", "history")
    for a, b in zip(full["runs"], resumed["runs"]):
        assert {k: a[k] for k in keys} == {k: b[k] for k in keys}
    assert (resumed["mean"], resumed["std"]) == (full["mean"], full["std"])
    assert not (out / "checkpoints").exists()
    # the command line with fewer runs than the folder holds: refused, and the summary of both runs stays as it is
    # (run_experiment itself summarises runs 0..runs-1, which the studies use to read one seed's record)
    summary = (out / "summary.json").read_bytes()
    assert TR.finished_runs(out) == 2 and TR.finished_runs(tmp_path / "absent") == 0
    assert train_main(["--model", "HGNN", "--dataset", "cora", "--task", "node", "--runs", "1", "--out", str(out),
                    "--resume", "--no-progress"]) == 2
    assert "holds 2 finished runs, more than --runs 1; pass --runs 2 or more" in capsys.readouterr().err
    assert (out / "summary.json").read_bytes() == summary


@pytest.mark.slow
@needs_data
def test_accelerate_launch_runs_the_same_module(tmp_path):
    accelerate = Path(sys.executable).with_name("accelerate")
    out = tmp_path / "o"
    cmd = [str(accelerate), "launch", "--cpu", "--num_processes", "1", "--num_machines", "1", "--mixed_precision",
           "no", "--dynamo_backend", "no", "-m", "hypergvl.models.train", "--model", "HGNN", "--dataset", "cora", "--task",
           "node", "--runs", "1", "--out", str(out), "--raw-root", RAW, "--set", "epochs=3", "--no-progress"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "HGNN cora node: test accuracy" in proc.stdout
    assert json.loads((out / "summary.json").read_text())["environment"]["num_processes"] == 1


# ----------------------------------------------------------------------------------------------- shipped configs

def test_every_shipped_config_section_resolves_and_builds_its_model():
    import yaml

    files = sorted(CFG.CONFIG_DIR.glob("*.yaml"))
    assert {f.stem for f in files} >= {"HGNN", "MLP", "HCHA", "CEGCN", "CEGAT", "HyperGCN", "HNHN", "UniGCNII",
                                       "AllSetTransformer", "ED-HNN", "TF-HNN"}
    for f in files:
        for task, sections in yaml.safe_load(f.read_text()).items():
            for dataset in sections:
                cfg = TR.resolve_config(f.stem, task, dataset)  # builds a tiny model with the resolved arguments
                assert cfg.trainer.select in ("last", "best_val")


def load_reproduction_script():
    """benchmarks/reproduce_dhgbench.py as a module (benchmarks/ is not a package)."""
    return load_script("reproduce_dhgbench")


def test_reproduction_script_pass_rule_and_transcription():
    repro = load_reproduction_script()
    assert repro.PAPER[("node", "cora")]["accuracy"]["HGNN"] == (77.90, 1.17)
    assert repro.PAPER[("hyperedge", "cora-ca")]["ap"]["HyperGCN"] == (93.42, 0.89)
    assert repro.PAPER[("graph", "twitter-friend")]["macro_f1"]["HNHN"] == (39.40, 3.14)
    # every Table A7 row transcribed has a cell for each graph set (accuracy and macro-F1), part 1's eleven included
    a7 = repro.PAPER[("graph", "rhg-10")]["accuracy"]
    assert {"MLP", "CEGCN", "CEGAT", "HGNN", "HyperGCN", "HCHA", "TF-HNN", "HNHN", "UniGCNII", "AllSetTransformer",
            "ED-HNN"} <= set(a7)
    assert len(repro._GRAPH_SETS) == 6
    assert all(set(repro.PAPER[("graph", d)][m]) == set(a7) for d in repro._GRAPH_SETS for m in ("accuracy", "macro_f1"))
    assert repro.within(79.0, (77.90, 1.17)) and not repro.within(80.3, (77.90, 1.17))  # 2 std = 2.34
    assert repro.within(52.0, (50.54, 0.23)) and not repro.within(52.1, (50.54, 0.23))  # floor of 1.5 points


def test_reproduction_report_only_reads_finished_summaries_and_trains_nothing(tmp_path):
    repro = load_reproduction_script()
    done = tmp_path / "HGNN" / "cora-ca" / "hyperedge-paper"
    done.mkdir(parents=True)
    (done / "summary.json").write_text(json.dumps({"model": "HGNN", "dataset": "cora-ca", "task": "hyperedge",
                                                   "mean": 88.0, "std": 1.0, "runs": [{}, {}, {}],
                                                   "test_metrics": {"ap": {"mean": 90.0, "std": 0.5}}}))
    row = repro.run_row("HGNN", "cora-ca", "hyperedge", 5, tmp_path, None, {"hyperedge": "paper"}, report_only=True)
    assert row["status"] == "pass" and row["runs"] == 3 and row["ours2"] == (90.0, 0.5)  # paper 89.16 ± 1.11
    missing = repro.run_row("HGNN", "cora", "node", 5, tmp_path, None, report_only=True)
    assert missing["status"] == "not run" and not (tmp_path / "HGNN" / "cora").exists()
    assert "| hyperedge (paper) | cora-ca | HGNN | auroc | 88.00 ± 1.00 | 3 |" in repro.render([row, missing])
    graph = repro.run_row("HGNN", "rhg-10", "graph", 5, tmp_path, None, {"graph": "standard"}, report_only=True)
    assert graph["protocol"] == "standard" and graph["status"] == "not run"
    # under the paper protocol the reference's singleton hyperedges for HyperGCN and TF-HNN come along
    assert "task.self_loops=true" in repro.PAPER_MODEL_OVERRIDES[("graph", "HyperGCN")]
    assert ("graph", "HGNN") not in repro.PAPER_MODEL_OVERRIDES


def test_read_summary_is_none_for_an_unfinished_folder_and_names_a_bad_file(tmp_path):
    assert TR.read_summary(tmp_path) is None
    (tmp_path / "summary.json").write_text('{"model": "HGNN", "data')
    with pytest.raises(ValueError, match="summary.json: not a JSON file"):
        TR.read_summary(tmp_path)
    (tmp_path / "summary.json").write_text('{"accuracy": 1}')
    with pytest.raises(TR.NotATrainerSummary, match="test_metrics"):
        TR.read_summary(tmp_path)


def test_reproduction_paper_overrides_resolve_and_build():
    """Every reference-behaviour switch the script adds is a valid key with a value its model accepts."""
    from hypergvl.models.nn import build_model
    repro = load_reproduction_script()
    for (task, model), extra in repro.PAPER_MODEL_OVERRIDES.items():
        dataset = repro.TASK_OF[task][0]
        cfg = TR.resolve_config(model, task, dataset, overrides=repro.PROTOCOLS[task]["paper"] + extra)
        assert cfg.task.protocol == "paper"
        build_model(model, in_channels=4, hidden_channels=8, out_channels=2, **cfg.model)


def test_a_run_whose_loss_stops_being_finite_is_stopped_with_a_clear_error(tmp_path, monkeypatch, capsys, shared_data):
    monkeypatch.setenv("HYPERGVL_RAW_ROOT", str(shared_data))  # the CLI checks the raw files are there first
    """A NaN loss makes every weight NaN after the step: the run stops at the end of that epoch naming the run,
    epoch and loss (not an sklearn 'Input contains NaN' from AUROC later, nor a silent accuracy of argmax(NaN))."""
    from hypergvl.models.tasks.node import NodeClassification

    real_loss, calls = NodeClassification.loss, []

    def loss_then_nan(self, module, batch):
        calls.append(1)
        out = real_loss(self, module, batch)
        return out * float("nan") if len(calls) == 3 else out

    monkeypatch.setattr(NodeClassification, "loss", loss_then_nan)
    with pytest.raises(TR.TrainingDiverged, match=r"seed 0 .*: the training loss is nan at epoch 3 \(lr 0.01\)"):
        TR.run_experiment("HGNN", "planted", "node", out=tmp_path / "a", runs=1, data=planted(), progress=False,
                          overrides=["epochs=5", "hidden=8", "lr=0.01"])
    assert not (tmp_path / "a" / "runs" / "run_0.json").exists()  # no record of a meaningless result
    calls.clear()
    monkeypatch.setattr(TR, "load_dataset", lambda *a, **k: planted())
    assert train_main(["--model", "HGNN", "--dataset", "cora", "--task", "node", "--runs", "1", "--out",
                       str(tmp_path / "b"), "--no-progress", "--set", "epochs=5", "hidden=8"]) == 1
    assert "the run diverged" in capsys.readouterr().err


@pytest.mark.parametrize("select,epochs,want", [("best_val", 5, [2, 4]), ("last", 5, [2, 4, 5]),
                                                ("best_val", 1, [1])])
def test_evaluation_schedule_follows_the_reference(tmp_path, select, epochs, want):
    """Evaluations fall on multiples of eval_every (the reference's display_step); the last epoch is added only
    when the selection reports it or nothing else was evaluated, so best_val never picks an off-schedule epoch."""
    summary = TR.run_experiment("MLP", "synthetic", "node", out=tmp_path, runs=1, data=planted(), progress=False,
                                overrides=[f"epochs={epochs}", "hidden=8", "eval_every=2", f"select={select}"])
    run = summary["runs"][0]
    assert [h["epoch"] for h in run["history"]] == want
    assert run["selected_epoch"] in want
