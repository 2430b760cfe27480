"""benchmarks/reproduce_dhgbench.py: the paper tables cover part 2's nine models (DHG-Bench Tables 1, A6, A7; A8
through hypergvl.models.study.paper), and the fairness rows read the study's seed points (hand-made here, so the mean,
population std and pass/miss/OOM/not-run states are known) without training anything."""
import json
from pathlib import Path

import pytest

from benchmark_scripts import load_script

from hypergvl.models import trainer as TR
from hypergvl.models.study import common

PART2 = ("LEGCN", "HyperND", "PhenomNN", "SheafHyperGNN", "HJRL", "DPHGNN", "HyperGT", "EHNN", "T-HyperGNN")
NO_GRAPH = ("EHNN", "T-HyperGNN")  # refused for hypergraph classification (appendix C.1), absent from Table A7


@pytest.fixture(scope="module")
def rd():
    return load_script("reproduce_dhgbench")


def test_paper_tables_cover_part_two(rd):
    for model in PART2:
        for ds in ("cora", "cora-ca", "twitch-gamers"):
            assert model in rd.PAPER[("node", ds)]["accuracy"]
        for ds in ("cora", "cora-ca"):
            assert model in rd.PAPER[("hyperedge", ds)]["auroc"] and model in rd.PAPER[("hyperedge", ds)]["ap"]
        for ds in rd._GRAPH_SETS:
            assert (model in rd.PAPER[("graph", ds)]["accuracy"]) == (model not in NO_GRAPH)
    # cells read off the paper by hand (Table A6: EHNN Cora AUROC, T-HyperGNN Cora-CA AP; Table A7: DPHGNN
    # Steam-Player accuracy, HyperGT Twitter-Friend Macro-F1)
    assert rd.PAPER[("hyperedge", "cora")]["auroc"]["EHNN"] == (78.99, 0.99)
    assert rd.PAPER[("hyperedge", "cora-ca")]["ap"]["T-HyperGNN"] == (69.65, 0.53)
    assert rd.PAPER[("graph", "steam-player")]["accuracy"]["DPHGNN"] == (51.36, 1.72)
    assert rd.PAPER[("graph", "twitter-friend")]["macro_f1"]["HyperGT"] == (47.49, 5.11)


def _config(model: str, dataset: str, task: str = "node", overrides=()) -> dict:
    """The resolved config today's code gives the row, as a point stores it (JSON round trip)."""
    return TR.config_doc(model, dataset, task, TR.resolve_config(model, task, dataset, None, overrides))["config"]


def _point(root: Path, model: str, dataset: str, seed: int, acc: float, status: str = "ok",
           config: dict | None = None) -> None:
    eff = {"train_time_to_best_val_s": 1.0, "epoch_time_s": 0.1, "best_val_epoch": 10, "epochs_run": 10,
           "time_to_best_val_with_eval_s": 1.2, "peak_memory_mib": 500.0, "memory_method": "m", "time_method": "t",
           "device": "cpu"}
    metrics = {part: {"accuracy": acc, "delta_dp": 1.0, "delta_eo": 1.0} for part in ("test", "val")}
    fields = {"seed": seed, "metrics": metrics, "efficiency": eff,
              "config": config or _config(model, dataset)} if status == "ok" else {"seed": seed}
    doc = common.make_point("fairness", model, dataset, status, **fields)
    path = root / "points" / dataset / model / f"seed{seed}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def test_fairness_rows(rd, tmp_path, capsys):
    _point(tmp_path, "LEGCN", "german", 0, 70.0)
    _point(tmp_path, "LEGCN", "german", 1, 73.0)  # mean 71.5, population std 1.5; paper 70.88 ± 3.22: pass
    _point(tmp_path, "HyperND", "bail", 0, 80.0)  # paper 89.75 ± 2.41: 9.75 > max(4.82, 1.5), a miss
    _point(tmp_path, "PhenomNN", "credit", 0, 79.0)  # the paper has OOM there: nothing to compare
    _point(tmp_path, "EHNN", "german", 0, 0.0, status="oom")
    cells = rd.fairness_cells(tmp_path)
    row = rd.fairness_row("LEGCN", "german", cells)
    assert row["status"] == "pass" and row["runs"] == 2 and row["paper"] == (70.88, 3.22)
    assert row["ours"] == pytest.approx((71.5, 1.5))
    assert rd.fairness_row("HyperND", "bail", cells)["status"] == "miss"
    assert rd.fairness_row("PhenomNN", "credit", cells)["status"] == "paper OOM"
    assert rd.fairness_row("EHNN", "german", cells)["status"] == "oom"
    assert rd.fairness_row("EHNN", "bail", cells)["status"] == "not run"
    assert rd.fairness_row("HJRL", "bail", cells)["status"] == "not run (paper OOM)"

    out = tmp_path / "report"
    assert rd.main(["--models", "LEGCN", "HyperND", "--datasets", "german", "bail", "cora", "--tasks", "fairness",
                    "--fairness-points", str(tmp_path), "--out", str(out)]) == 0
    table = (out / "table.md").read_text()
    assert "| fairness | german | LEGCN | accuracy | 71.50 ± 1.50 | 2 | 70.88 ± 3.22 | +0.62 | pass |" in table
    assert "1 of 2 comparable results pass" in table
    assert [r["status"] for r in rd.table_rows(json.loads((out / "table.json").read_text()))] == ["pass", "not run", "not run",
                                                                                  "miss"]
    capsys.readouterr()
    assert rd.main(["--models", "LEGCN", "--datasets", "german", "--tasks", "fairness", "--fairness-points",
                    str(tmp_path / "absent"), "--out", str(out)]) == 2
    assert "no fairness study results" in capsys.readouterr().err


def test_fairness_reference_behaviour_rows(rd, tmp_path):
    """``--reference-behaviour`` on fairness reads a second study folder, whose points must have been trained with
    the model's REFERENCE_BEHAVIOURS options: ED-HNN's Bail cell there is compared beside its default cell, and a
    point trained without the options (a default cell copied in) reads stale, not a result."""
    default, behaviour = tmp_path / "default", tmp_path / "behaviour"
    options = rd.REFERENCE_BEHAVIOURS["ED-HNN"]["fairness"]
    assert options == ("model.dropout_order=dhgbench",)
    _point(default, "ED-HNN", "bail", 0, 58.0)  # paper 94.26 ± 0.77: a miss
    for k, acc in enumerate((93.0, 94.0)):  # mean 93.5: a pass
        _point(behaviour, "ED-HNN", "bail", k, acc, config=_config("ED-HNN", "bail", overrides=options))
    _point(behaviour, "LEGCN", "bail", 0, 95.0)  # trained under LEGCN's default expansion, not the option
    row = rd.fairness_row("ED-HNN", "bail", rd.fairness_cells(behaviour), behaviour=True)
    assert row["status"] == "pass" and row["options"] == options and row["ours"] == pytest.approx((93.5, 0.5))
    stale = rd.fairness_row("LEGCN", "bail", rd.fairness_cells(behaviour), behaviour=True)
    assert stale["status"] == "stale" and "model.expansion" in stale["note"]

    out = tmp_path / "report"
    assert rd.main(["--models", "ED-HNN", "MLP", "--datasets", "bail", "german", "--tasks", "fairness",
                    "--reference-behaviour", "--fairness-points", str(default), "--fairness-behaviour-points",
                    str(behaviour), "--out", str(out)]) == 0
    table = (out / "table.md").read_text()
    assert ("| fairness | bail | ED-HNN | `model.dropout_order=dhgbench` | 93.50 ± 0.50 | 2 | 94.26 ± 0.77 | -0.76 "
            "| pass | 58.00 ± 0.00 miss |") in table
    assert "1 of 1 comparable results pass with the reference's behaviour" in table
    assert "Not run (1): ED-HNN german fairness." in table  # MLP has no reference behaviour: no row


def test_refused_rows_say_so(rd, tmp_path):
    row = rd.run_row("EHNN", "rhg-3", "graph", 1, tmp_path, None, report_only=True)
    assert row["status"] == "refused" and row["note"].startswith("model EHNN does not support task 'graph'")
    assert rd.run_row("HyperND", "rhg-3", "graph", 1, tmp_path, None, report_only=True)["status"] == "not run"


def test_reference_behaviour_options_are_valid_and_each_changes_the_config(rd):
    """Every REFERENCE_BEHAVIOURS option is a key its model accepts, with a value other than the one the default
    row resolves to (an option equal to the default would make the second table repeat the first)."""
    from hypergvl.models import trainer as TR
    from hypergvl.models.nn import build_model
    for model, per_task in rd.REFERENCE_BEHAVIOURS.items():
        for task, options in per_task.items():
            dataset = rd.TASK_OF[task][0]
            base = rd.PROTOCOLS[task]["paper"] if task in rd.PROTOCOLS else ()
            trained_as = "node" if task == "fairness" else task  # the fairness study trains node classification
            default = TR.resolve_config(model, trained_as, dataset, overrides=base)
            cfg = TR.resolve_config(model, trained_as, dataset, overrides=base + options)
            for option in options:
                key = option.split("=")[0].split(".")[1]
                assert cfg.model[key] != default.model.get(key), (model, task, option)
            build_model(model, in_channels=4, hidden_channels=8, out_channels=2, **cfg.model)


def test_reference_behaviour_rows_train_with_their_options_in_their_own_folder(rd, tmp_path, monkeypatch):
    calls, asked = [], []

    def fake_run_experiment(model, dataset, task, *, out, runs, overrides, **kw):
        calls.append((out, tuple(overrides)))
        asked.append(runs)
        return {"mean": 77.0, "std": 0.5, "runs": [{}] * runs, "test_metrics": {"macro_f1": {"mean": 1, "std": 0}}}
    monkeypatch.setattr(rd.TR, "run_experiment", fake_run_experiment)
    row = rd.run_row("DPHGNN", "cora", "node", 2, tmp_path, None, behaviour=True)
    assert calls[-1] == (tmp_path / "DPHGNN" / "cora" / "node+dhgbench", rd._DPHGNN_CODE)
    assert row["status"] == "pass" and row["options"] == rd._DPHGNN_CODE  # paper 76.40 ± 1.36
    rd.run_row("DPHGNN", "rhg-3", "graph", 2, tmp_path, None, {"graph": "paper"}, behaviour=True)
    assert calls[-1] == (tmp_path / "DPHGNN" / "rhg-3" / "graph-paper+dhgbench",
                         ("task.protocol=paper",) + rd._DPHGNN_CODE + ("model.attention_scope=batch",))
    rd.run_row("DPHGNN", "rhg-3", "graph", 2, tmp_path, None, {"graph": "paper"})
    assert calls[-1] == (tmp_path / "DPHGNN" / "rhg-3" / "graph-paper", ("task.protocol=paper",))
    # a folder holding more finished runs than asked is summarised over all of them, not cut to --runs
    runs_dir = tmp_path / "DPHGNN" / "rhg-3" / "graph-paper" / "runs"
    runs_dir.mkdir(parents=True)
    for k in range(5):
        (runs_dir / f"run_{k}.json").write_text("{}")
    rd.run_row("DPHGNN", "rhg-3", "graph", 2, tmp_path, None, {"graph": "paper"})
    assert asked == [2, 2, 2, 5]


def test_behaviour_only_trains_the_named_seeds_of_the_behaviour_rows_alone(rd, tmp_path, monkeypatch):
    """--reference-behaviour --behaviour-only --seeds 2 3: the reference-behaviour row trains seeds 2 and 3 (and
    no default row: it is read, here not run), and --export-points writes those seeds' points, which join the
    seed 0-1 points of an earlier part into one 0..3 row."""
    calls = []

    def fake_run_experiment(model, dataset, task, *, out, runs, overrides, seeds=None, **kw):
        calls.append((Path(out).name, seeds))
        (Path(out) / "runs").mkdir(parents=True, exist_ok=True)
        (Path(out) / "config.json").write_text(json.dumps(
            {"model": model, "dataset": dataset, "task": task, "config": _config("HGNN", "cora")}))
        for k in seeds:
            (Path(out) / "runs" / f"run_{k}.json").write_text(json.dumps(
                {"seed": k, "metrics": {"test": {"accuracy": 70.0 + k}, "val": {"accuracy": 1.0}},
                 "selected_epoch": 100, "epochs_run": 100}))
        return {"mean": 72.5, "std": 0.5, "runs": [{}] * len(seeds), "test_metrics": {}}
    monkeypatch.setattr(rd.TR, "run_experiment", fake_run_experiment)
    points = tmp_path / "points" / "DPHGNN" / "cora" / "node+dhgbench"
    points.mkdir(parents=True)
    for k in (0, 1):
        (points / f"seed{k}.json").write_text("{}")
    assert rd.main(["--models", "DPHGNN", "--datasets", "cora", "--tasks", "node", "--out", str(tmp_path / "o"),
                    "--reference-behaviour", "--behaviour-only", "--seeds", "2", "3",
                    "--export-points", str(tmp_path / "points")]) == 0
    assert calls == [("node+dhgbench", [2, 3])]
    assert rd.main(["--models", "DPHGNN", "--datasets", "cora", "--tasks", "node", "--out", str(tmp_path / "o"),
                    "--reference-behaviour", "--behaviour-only", "--seeds", "0"]) == 0
    assert calls[-1] == ("node+dhgbench", [0, 2, 3])  # the folder's summary covers the seeds it finished before
    assert sorted(p.name for p in points.iterdir()) == ["seed0.json", "seed1.json", "seed2.json", "seed3.json"]
    assert json.loads((points / "seed3.json").read_text())["metrics"]["test"]["accuracy"] == 73.0
    assert not (tmp_path / "points" / "DPHGNN" / "cora" / "node").exists()  # the default row was not run
    with pytest.raises(SystemExit):
        rd.main(["--models", "DPHGNN", "--datasets", "cora", "--tasks", "node", "--behaviour-only"])
    with pytest.raises(SystemExit):
        rd.main(["--models", "DPHGNN", "--datasets", "cora", "--tasks", "node", "--report-only", "--seeds", "1"])

def _summary(path: Path, mean: float, std: float, runs: int) -> None:
    path.mkdir(parents=True)
    (path / "summary.json").write_text(json.dumps({  # the keys the trainer's one reader requires, as a run writes them
        "model": path.parts[-3], "dataset": path.parts[-2], "task": path.name.split("+")[0].split("-")[0],
        "test_metrics": {}, "mean": mean, "std": std, "runs": [{"provenance": {"commit": "0" * 40}}] * runs}))


def test_reference_behaviour_table_from_finished_rows(rd, tmp_path):
    """--report-only --reference-behaviour: the second table sets each finished reference-behaviour row beside
    its default row (here DPHGNN on Cora: the paper's model misses, the reference's code passes), names the rows
    not run and those trained under other options than the registry's now (stale: SheafHyperGNN's folder holds a
    run without its option), and models without such options (EHNN) get no row there."""
    _summary(tmp_path / "DPHGNN" / "cora" / "node", 48.84, 27.17, 3)
    _summary(tmp_path / "DPHGNN" / "cora" / "node+dhgbench", 77.10, 0.53, 3)
    _summary(tmp_path / "EHNN" / "cora" / "node", 77.50, 0.40, 3)
    stale = tmp_path / "SheafHyperGNN" / "cora" / "node+dhgbench"
    _summary(stale, 70.0, 1.0, 2)
    old = rd.TR.config_doc("SheafHyperGNN", "cora", "node", rd.TR.resolve_config("SheafHyperGNN", "node", "cora"))
    (stale / "config.json").write_text(json.dumps(old))
    out = tmp_path / "report"
    assert rd.main(["--models", "DPHGNN", "EHNN", "HyperND", "SheafHyperGNN", "--datasets", "cora", "--tasks",
                    "node", "--out", str(tmp_path), "--report-only", "--reference-behaviour"]) == 0
    table = (tmp_path / "table.md").read_text()
    first, second = table.split("With DHG-Bench's code behaviour")
    assert "| node | cora | DPHGNN | accuracy | 48.84 ± 27.17 | 3 | 76.40 ± 1.36 | -27.56 | miss |" in first
    assert "1 of 2 comparable results pass (" in first
    assert ("| node | cora | DPHGNN | `model.star=directed model.dropout_mode=dhgbench model.hgconv_degree=dhgbench` "
            "| 77.10 ± 0.53 | 3 | 76.40 ± 1.36 | +0.70 | pass | 48.84 ± 27.17 miss |") in second
    assert "1 of 1 comparable results pass with the reference's behaviour: " in second
    assert "Not run (1): HyperND cora node." in second
    assert "Stale (1): SheafHyperGNN cora node." in second
    assert "EHNN" not in second
    assert not out.exists()
    rows = rd.table_rows(json.loads((tmp_path / "table.json").read_text()))
    assert [(r["model"], "options" in r, r["status"]) for r in rows] == [
        ("DPHGNN", False, "miss"), ("EHNN", False, "pass"), ("HyperND", False, "not run"),
        ("SheafHyperGNN", False, "not run"), ("DPHGNN", True, "pass"), ("HyperND", True, "not run"),
        ("SheafHyperGNN", True, "stale")]
    assert "restriction_grad" in rows[-1]["note"]


# ------------------------------------------------------------------------------ shipped tables from shipped points

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "benchmarks" / "results" / "reproduction.md"


def _shipped_command() -> list[str]:
    """The arguments of the command the shipped table's header names (``Produced by `python ...```)."""
    import shlex
    line = next(x for x in SHIPPED.read_text().splitlines() if x.startswith("Produced by `"))
    args = shlex.split(line.split("`")[1])
    assert args[:2] == ["python", "benchmarks/reproduce_dhgbench.py"] and "--points" in args
    return args[2:]


def test_shipped_reproduction_table_is_rebuilt_from_its_points(rd, tmp_path, capsys):
    """benchmarks/results/reproduction.md is what the script prints from the shipped per-seed points (trained rows
    under benchmarks/results/points, fairness rows from space/seed_studies/fairness) with today's code: every
    point's config equals what the code resolves now, or its row would read stale and the table would differ."""
    assert rd.main(_shipped_command() + ["--out", str(tmp_path)]) == 0
    capsys.readouterr()
    rebuilt = (tmp_path / "table.md").read_text()
    assert SHIPPED.read_text().endswith("\n" + rebuilt)
    rows = rd.table_rows(json.loads((tmp_path / "table.json").read_text()))
    assert not [r for r in rows if r["status"] == "stale"]
    trained = [r for r in rows if r["task"] != "fairness" and r["status"] in ("pass", "miss")]
    assert trained and all(not any(c.startswith("pre-provenance") for c in r["commits"]) for r in trained)


def test_every_shipped_miss_names_its_cause(rd):
    """Issue 40's bar, made symmetric and measured (issue 61): every missed row of the shipped tables prints its
    entry of benchmarks/dhgbench_misses.py and every entry names a row of its table that misses (an entry left
    behind by a row that now passes, or by a renamed row, fails); the footer of each table counts the misses BAR or
    more points off the paper, above or below it, whose cause is not located, and a located cause names evidence."""
    misses = rd.dhgbench_misses
    text = SHIPPED.read_text()
    parsed = rd.markdown_rows(text)
    tables = [{(rd._label(r), r["dataset"], r["model"]): (float(r["diff"]), r["cause"]) for r in rows
               if r["status"] == "miss"} for rows in parsed]
    uncommitted = [{(rd._label(r), r["dataset"], r["model"]) for r in rows if r["uncommitted"]} for rows in parsed]
    assert len(tables) == 2 and len(tables[0]) > 50
    footers = [line for line in text.splitlines() if " comparable results pass" in line]
    assert len(footers) == 2
    for rows, entries, footer, apart in zip(tables, (misses.MISSES, misses.BEHAVIOUR), footers, uncommitted):
        assert set(entries) == set(rows), "entries without a missed row, or missed rows without an entry"
        unlocated = 0
        for key, (diff, cause) in rows.items():
            assert cause == entries[key].text, key
            assert misses.located(cause) == (not cause.startswith(misses.NOT_LOCATED))
            if misses.located(cause):
                assert entries[key].evidence, f"{key}: a located cause names its evidence"
            unlocated += abs(diff) >= misses.BAR and not misses.located(cause) and key not in apart
        assert f"; {unlocated} misses {misses.BAR:.0f} or more points off (above or below) have no located cause" \
            in footer
    # the example: CEGCN's Steam-Player miss lies 13.49 above the paper and is counted, not exempt
    assert not misses.located(tables[0][("graph (paper)", "steam-player", "CEGCN")][1])


def test_every_number_a_cause_quotes_is_in_its_evidence(rd):
    """Each number a cause quotes (seed indices and counts aside) is found, as printed, in the evidence the entry
    names (a shipped table row without its cause column, a shipped results file, or shipped points) or in its own
    row; nothing cites docs prose."""
    misses = rd.dhgbench_misses
    cells = misses.table_cells()
    for entries, behaviour in ((misses.MISSES, False), (misses.BEHAVIOUR, True)):
        for key, entry in entries.items():
            assert misses.unsupported_numbers(key, entry, behaviour, cells) == [], key
            for ref in entry.evidence:
                assert not ref.startswith("file:docs"), (key, ref)
    # the DPHGNN Cora entry quotes DHG-Bench's class from training_stability.md, not a shared instability
    dphgnn = misses.MISSES[("node", "cora", "DPHGNN")]
    assert "73.71-76.51" in dphgnn.text and misses.STABILITY in dphgnn.evidence


def test_the_cause_check_catches_a_made_up_number(rd):
    """The check is not vacuous: a number put into a cause but held by no evidence is reported, even when the same
    number is printed in the table's cause column (which the evidence never reads); an evidence reference that
    does not resolve, or that points at prose, is refused."""
    misses = rd.dhgbench_misses
    key = ("node", "cora", "LEGCN")
    real = misses.MISSES[key]
    assert misses.unsupported_numbers(key, real) == []
    fake = misses.Cause(real.text.replace("74.83", "74.38"), real.evidence)
    assert misses.unsupported_numbers(key, fake) == ["74.38"]
    cells = misses.table_cells()
    cells["table"][key] += " | " + fake.text  # as if the cause column were read: it is not
    assert "74.38" in cells["table"][key]
    assert misses.unsupported_numbers(key, fake) == ["74.38"]
    assert misses.quoted_numbers("seeds 0-2 gave 1.2e-7 over 5 seeds on [-1, 1], seed 3 tau 1") == ["1.2e-7"]
    for ref in ("table:node|cora|NoSuchModel", "file:docs/reproduction.md", "file:benchmarks/results/absent.md",
                "points:benchmarks/results/points/HGNN/absent", "web:example"):
        with pytest.raises(ValueError):
            misses.evidence_text(ref)


def test_causes_that_cite_the_behaviour_under_the_loss_on_the_scores_match_their_points(rd):
    """The second table prints its behaviour rows under the paper protocol only; the causes that cite the same options
    with the loss on the scores quote the mean test AUROC of the shipped `hyperedge-paper-logits+dhgbench` points."""
    folders = sorted(rd.POINTS.glob("*/*/hyperedge-paper-logits+dhgbench"))
    assert len(folders) == 4
    for folder in folders:
        seeds = [json.loads(f.read_text()) for f in sorted(folder.glob("seed*.json"))]
        assert [d["seed"] for d in seeds] == [0, 1, 2, 3, 4]
        mean, _ = TR.mean_std([d["metrics"]["test"]["auroc"] for d in seeds])
        model, dataset = folder.parent.parent.name, folder.parent.name
        assert f"5 seeds) {mean:.2f}" in rd.dhgbench_misses.BEHAVIOUR[("hyperedge (paper)", dataset, model)].text, \
            folder


def test_a_changed_default_marks_the_affected_shipped_points_stale(rd, monkeypatch):
    """Flip HyperND's constructor default label_diffusion (as the code once had it): its shipped Cora points,
    trained with label diffusion, become stale; HGNN's are untouched."""
    from hypergvl.models.nn import MODELS
    init = MODELS["HyperND"].__init__
    monkeypatch.setattr(init, "__kwdefaults__", {**init.__kwdefaults__, "label_diffusion": False})
    row = rd.run_row("HyperND", "cora", "node", 2, Path("unused"), None, points=rd.POINTS)
    assert row["status"] == "stale" and "model_defaults.label_diffusion: saved True, now False" in row["note"]
    assert rd.run_row("HGNN", "cora", "node", 5, Path("unused"), None, points=rd.POINTS)["status"] == "pass"


def test_a_field_added_later_reads_as_its_old_behaviour_and_no_other(rd):
    """``task.paper_loss`` and ``task.paper_validation`` came after the A6 points: a point that does not record them
    was trained with the reference's behaviour, so it is current under today's defaults and stale under another."""
    point = json.loads((rd.POINTS / "HGNN" / "cora" / "hyperedge-paper" / "seed0.json").read_text())
    assert "paper_loss" not in point["config"]["task"]
    for sets, same in (((), True), (("paper_loss=logits",), False)):  # today's default; the paper's text
        now = TR.config_doc("HGNN", "cora", "hyperedge", TR.resolve_config(
            "HGNN", "hyperedge", "cora", None, ["protocol=paper", *sets]))["config"]
        diff = rd.config_difference(point["config"], now)
        assert (diff is None) == same, diff
        assert same or "task.paper_loss: saved 'double_sigmoid', now 'logits'" in diff


def test_stale_fairness_points_are_not_compared(rd, tmp_path):
    cfg = _config("LEGCN", "german")
    cfg["trainer"]["lr"] = 0.5  # trained under another learning rate than the shipped config's
    _point(tmp_path, "LEGCN", "german", 0, 70.0, config=cfg)
    row = rd.fairness_row("LEGCN", "german", rd.fairness_cells(tmp_path))
    assert row["status"] == "stale" and "trainer.lr: saved 0.5" in row["note"]


def test_points_round_trip_a_run_folder(rd, tmp_path):
    """export_points writes one small file per seed that points_summary reads back to the folder's mean and
    population std; a seed gap is refused."""
    run = tmp_path / "run" / "node"
    doc = {"model": "HGNN", "dataset": "cora", "task": "node", "config": _config("HGNN", "cora")}
    (run / "runs").mkdir(parents=True)
    (run / "config.json").write_text(json.dumps(doc))
    for k, acc in enumerate((70.0, 74.0)):
        rec = {"seed": k, "metrics": {"test": {"accuracy": acc}, "val": {"accuracy": 1.0}}, "selected_epoch": 100,
               "epochs_run": 100, "history": [{"epoch": 1}] * 100}
        (run / "runs" / f"run_{k}.json").write_text(json.dumps(rec))
    dest = tmp_path / "points"
    assert [p.name for p in rd.export_points(run, dest)] == ["seed0.json", "seed1.json"]
    assert "history" not in json.loads((dest / "seed0.json").read_text())
    summary, why = rd.points_summary(dest, doc["config"])
    assert why is None and summary["test_metrics"]["accuracy"] == {"mean": 72.0, "std": 2.0}
    (dest / "seed0.json").unlink()
    assert rd.points_summary(dest, doc["config"]) == (None, "seeds [1] are not 0..0")


def test_docs_counts_are_generated_from_the_shipped_tables(rd):
    doc = (ROOT / "docs" / "reproduction.md").read_text()
    assert rd.counts_block() in doc
    for name in rd.COUNTED_TABLES:  # the block's totals agree with each table's own pass line
        text = (ROOT / name).read_text()
        first = rd.count_summary(rd.markdown_rows(text)[0]).split(" comparable")[0]
        assert f"\n{first} comparable results pass (" in text, name


def test_every_shipped_result_names_its_provenance():
    """Each shipped point and summary carries a provenance record: a commit, or (written before results recorded
    one) an explicit pre-provenance marker with the commit that shipped it, never an invented commit."""
    from hypergvl.provenance import of
    files = sorted((ROOT / "space" / "seed_studies").rglob("*.json")) + sorted(
        (ROOT / "benchmarks" / "results" / "points").rglob("*.json"))
    assert len(files) > 300
    for f in files:
        doc = json.loads(f.read_text())
        rec = of(doc)
        assert rec, f
        if rec.get("commit") is None:
            assert rec.get("pre_provenance") is True and len(rec["shipped_in"]) == 40, f
        else:
            assert len(rec["commit"]) == 40 and rec["config"] == doc["config"], f
            assert all(of(r).get("commit") for r in doc.get("runs", [])), f


# ------------------------------------------------------------------------------ degenerate rows (issue 61)

def test_single_class_rule_from_stored_metrics():
    """A model that predicts one class: fairness gaps both exactly 0; a macro-F1 equal to a constant prediction's
    (binary set, accuracy 60%: F1 of the predicted class 2 * 0.6 / 1.6 = 75%, macro 37.5%); an AUROC of exactly 50.
    A seed 10 points or more below its row's median has collapsed."""
    from hypergvl.models.study import paper
    assert paper.single_class_seed("fairness", {"accuracy": 70.0, "delta_dp": 0.0, "delta_eo": 0.0})
    assert not paper.single_class_seed("fairness", {"accuracy": 70.0, "delta_dp": 0.0, "delta_eo": 0.4})
    assert paper.single_class_seed("graph", {"accuracy": 60.0, "macro_f1": 37.5}, classes=2)
    assert not paper.single_class_seed("graph", {"accuracy": 60.0, "macro_f1": 58.0}, classes=2)
    assert paper.single_class_seed("hyperedge", {"auroc": 50.0})
    assert not paper.single_class_seed("node", {"accuracy": 30.0})
    tests = [{"accuracy": a} for a in (78.0, 34.0, 77.0, 76.0, 79.0)]
    assert paper.degenerate_note("node", tests, "accuracy") == "seeds collapse: seed 1 at 34.00, median 77.00"
    zero = {"accuracy": 70.0, "delta_dp": 0.0, "delta_eo": 0.0}
    assert paper.degenerate_note("fairness", [zero] * 3, "accuracy") == "single class in all 3 seeds"
    assert paper.degenerate_note("node", [{}], "accuracy") is None


def test_a_degenerate_row_within_the_rule_is_not_a_pass(rd, tmp_path):
    """Hand-made German points: one model at the paper's accuracy with both gaps 0 in every seed reads
    `degenerate`, not `pass`, and the footer counts it apart."""
    for k, acc in enumerate((70.0, 71.0)):
        _point(tmp_path, "LEGCN", "german", k, acc)
    cells_dir = tmp_path
    for k, acc in enumerate((70.0, 70.8)):
        eff = {"train_time_to_best_val_s": 1.0, "epoch_time_s": 0.1, "best_val_epoch": 10, "epochs_run": 10,
               "time_to_best_val_with_eval_s": 1.2, "peak_memory_mib": 500.0, "memory_method": "m",
               "time_method": "t", "device": "cpu"}
        metrics = {part: {"accuracy": acc, "delta_dp": 0.0, "delta_eo": 0.0} for part in ("test", "val")}
        doc = common.make_point("fairness", "EHNN", "german", "ok", seed=k, metrics=metrics, efficiency=eff,
                                config=_config("EHNN", "german"))
        path = cells_dir / "points" / "german" / "EHNN" / f"seed{k}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
    cells = rd.fairness_cells(tmp_path)
    row = rd.fairness_row("EHNN", "german", cells)
    assert row["status"] == "degenerate" and row["flag"] == "single class in all 2 seeds"
    assert rd.fairness_row("LEGCN", "german", cells)["status"] == "pass"
    out = tmp_path / "report"
    assert rd.main(["--models", "LEGCN", "EHNN", "--datasets", "german", "--tasks", "fairness",
                    "--fairness-points", str(tmp_path), "--out", str(out)]) == 0
    footer = [x for x in (out / "table.md").read_text().splitlines() if "comparable results pass" in x][0]
    assert footer.startswith("1 of 2 comparable results pass")
    assert "1 within it are degenerate" in footer and "0 of the 1 passes lie more than 3 points off" in footer


def test_shipped_ehnn_german_is_flagged_and_the_headline_states_its_rule(rd):
    """EHNN on German predicts one class in all five shipped seeds (both gaps 0.00): it reads degenerate, not pass;
    the headline names the rule, its tolerance range and how many passes lie more than 3 points off."""
    rows = rd.markdown_rows(SHIPPED.read_text())[0]
    ehnn = next(r for r in rows if (r["task"], r["dataset"], r["model"]) == ("fairness", "german", "EHNN"))
    assert ehnn["status"] == "degenerate" and ehnn["flag"] == "single class in all 5 seeds"
    compared = [r for r in rows if r["status"] in rd.COMPARED and not r["uncommitted"]]
    tol = [max(2 * float(r["paper"].split(" ± ")[1]), 1.5) for r in compared]
    passes = [r for r in compared if r["status"] == "pass"]
    off = sum(abs(float(r["diff"])) > 3 for r in passes)
    flagged = sum(r["status"] == "degenerate" for r in compared)
    footer = next(x for x in SHIPPED.read_text().splitlines() if "comparable results pass (" in x)
    assert (f"the tolerance max(2 paper std, 1.5) ranges from ±{min(tol):.2f} to ±{max(tol):.2f}; {flagged} within "
            f"it are degenerate") in footer
    assert f"{off} of the {len(passes)} passes lie more than 3 points off the paper" in footer


def test_coverage_table_lists_every_item_of_the_paper():
    """docs/reproduction.md's coverage table: each of DHG-Bench's result tables and figures once, reproduced /
    partly / absent, a reason and a way for every gap; the sets it names as absent for Table 1 and A6 are registered
    loaders with no row in the shipped table, and the sets the shipped table has are named where it is partly."""
    from hypergvl.models.datasets.registry import get_spec
    doc = (ROOT / "docs" / "reproduction.md").read_text()
    block = doc.split("<!-- coverage table: checked by tests/test_reproduce_tables.py -->")[1].split(
        "<!-- end of coverage table -->")[0]
    rows = [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in block.splitlines()
            if line.startswith("| ") and not line.startswith("| item")]
    items = [r[0] for r in rows]
    assert items == ["Table 1", "Table A5", "Table A6", "Table A7", "Table A8", *(f"Figure {k}" for k in range(1, 6)),
                     "Figure A2", "Figure A3", "Figure A4"]
    for item, _, state, where, how in rows:
        assert state in ("reproduced", "partly", "absent"), item
        if state != "reproduced":
            assert ("features absent offline" in where or "set not shipped" in where) and how not in ("", "-"), item
    shipped = SHIPPED.read_text()
    for item, task, absent in (("Table 1", "node", ("pubmed", "dblp-ca", "walmart", "trivago", "actor", "pokec",
                                                     "yelp")),
                               ("Table A6", "hyperedge", ("pubmed", "dblp-ca", "actor", "pokec"))):
        row = rows[items.index(item)]
        for ds in absent:
            get_spec(ds)  # a registered loader: only the raw files are missing
            assert f"| {task} " not in shipped or f"| {ds} |" not in shipped, (item, ds)
            assert ds.lower() in row[3].lower().replace("pubmed", "pubmed"), (item, ds)
