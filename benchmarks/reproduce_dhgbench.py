"""Reproduce DHG-Bench's effectiveness tables with this project's models, tasks and trainer.

    python benchmarks/reproduce_dhgbench.py --models HGNN MLP --datasets cora cora-ca [--runs 5]
        [--tasks node hyperedge graph] [--hyperedge-protocol paper|paper-logits|held-out] [--graph-protocol paper|standard]
        [--out DIR] [--raw-root DIR] [--threads 1] [--reference-behaviour [--behaviour-only]] [--seeds K ...]

For every model x dataset x task it can run with the available raw data, it trains with
``hypergvl.models.trainer.run_experiment`` (the shipped ``models/configs/<MODEL>.yaml``; finished runs under ``--out`` are
reused, so an interrupted reproduction continues where it stopped) and prints, side by side, the project's
mean ± std over seeds 0..runs-1 and the paper's number: Table 1 (node accuracy: Cora, Cora-CA, Twitch-gamers),
Table A6 (hyperedge prediction AUROC and AP: Cora, Cora-CA) and Table A7 (hypergraph classification accuracy and
Macro-F1: RHG-10, RHG-3, IMDB-Dir-Form, IMDB-Dir-Genre, Steam-Player, Twitter-Friend). ``--tasks fairness``
(German, Bail, Credit) trains nothing: it reads the per-seed points of the fairness study
(``hypergvl study fairness``, appendix B.5; default ``--fairness-points space/seed_studies/fairness``) and
sets their test accuracy beside Table A8's (``hypergvl.models.study.paper``); a cell the study has not run reads
``not run``, one the paper reports as out of memory ``paper OOM``. A result passes when it
lies within two of the paper's standard deviations or 1.5 points of the paper's mean, whichever is larger. The
table is also written to ``DIR/table.md``, ``DIR/table.json`` and drawn in ``DIR/ours_vs_paper.png``.

Hyperedge prediction has two protocols. The paper's numbers come from the reference as it was at publication:
its split kept a greedy node cover in training, its encoder ran on the full hypergraph (validation and test
hyperedges included), model selection scored the training positives, the metric averaged per-kind AUROCs, and the
loss squashed scores twice before BCE with logits.
``--hyperedge-protocol paper`` (the default here) trains that way (``task.protocol=paper``; see
``hypergvl.models.tasks.HyperedgePrediction``) to compare like with like; ``held-out`` uses the trainer's default, where
the encoder sees the training hyperedges only (what a user should report), and expects lower numbers;
``paper-logits`` is the paper protocol with the loss on the scores, as the paper's text says (``task.paper_loss=logits``:
the reference's double sigmoid is where HNHN, HyperGCN and LEGCN collapse, docs/reproduction.md).

Hypergraph classification likewise: ``--graph-protocol paper`` (the default here) uses the reference's split
(``random_split`` seeded with 42 + seed) and its batching, where PyG's default collation offsets hyperedge ids by
node counts so that a graph with more hyperedges than nodes merges hyperedges with the next graphs of its batch
(``task.protocol=paper``), plus the singleton hyperedges the reference adds for HyperGCN and TF-HNN;
``standard`` batches block-diagonally. Under both paper protocols HNHN uses the reference's normalisation
(``model.normalisation=allset``), and ED-HNN on hypergraph classification places dropout as the reference does
(``model.dropout_order=dhgbench``: none on the one-hot degree features). UniGCNII's shipped config is what the
reference code runs under every protocol (mean aggregation, ReLU, input dropout equal to dropout; see
``models/configs/UniGCNII.yaml``). Results go to ``DIR/<model>/<dataset>/<task>-<protocol>`` for these two tasks
and ``DIR/<model>/<dataset>/node`` for node classification.

A paper number that only a reference bug reproduces is said so in the table rather than made a default: the
default rows train each model as its paper defines it, and ``--reference-behaviour`` adds, for every
row whose model has options in :data:`REFERENCE_BEHAVIOURS` for that task (DHG-Bench's code where it departs from
the model's paper: docs/reproduction.md, "Reference behaviours"), a row trained with those options as well, in
``DIR/<model>/<dataset>/<task>[-<protocol>]+dhgbench``, and a second table of them, each beside the default
row's result. With ``--report-only`` that table lists the finished ones and names the rest. The fairness rows'
reference behaviours are read, as the default ones are, from the fairness study's points, trained with the options
by ``hypergvl study fairness --set OPTIONS`` into ``--fairness-behaviour-points``.

Each missed row of either table ends in its measured cause (``dhgbench_misses.py``: a switch that closes it, the
reference's own code on the same task, or a statistic; ``not located:`` where none does).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hypergvl.atomic import write_text  # noqa: E402
from hypergvl.models import trainer as TR  # noqa: E402
from hypergvl.models.nn.registry import task_refusal  # noqa: E402
from hypergvl.models.study import common as study_common  # noqa: E402
from hypergvl.models.study import paper as study_paper  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dhgbench_misses  # noqa: E402

# (task, dataset) -> metric -> model -> (mean, std): DHG-Bench Tables 1, A6 and A7, read from the paper tables' CSVs
# (hypergvl.models.study.paper, which holds Table A8 too)
PAPER = {(task, ds): metrics for task in ("node", "hyperedge", "graph")
         for ds, metrics in study_paper.paper_table(task).items()}
_GRAPH_SETS = tuple(study_paper.paper_table("graph"))  # Table A7's six, in its order
SECOND_METRIC = {"node": None, "hyperedge": "ap", "graph": "macro_f1", "fairness": None}
# the reference's set_task_args adds no singleton hyperedges for edge prediction (except HyperND, and Pokec)
PROTOCOLS = {"hyperedge": {"paper": ("task.protocol=paper",), "held-out": (),
                           "paper-logits": ("task.protocol=paper", "task.paper_loss=logits")},
             "graph": {"paper": ("task.protocol=paper",), "standard": ()}}
# per model under the paper protocol: the reference's hg_cls loop adds self-loops for HyperGCN and TF-HNN
# (train_agent.py), and its HNHN normalises by AllSet's unpowered degree sums (generate_HNHN_norm)
PAPER_MODEL_OVERRIDES = {**{("graph", m): ("task.self_loops=true",) for m in ("HyperGCN", "TF-HNN")},
                         **{(t, "HNHN"): ("model.normalisation=allset",) for t in ("graph", "hyperedge")},
                         ("graph", "ED-HNN"): ("model.dropout_order=dhgbench",)}
_DPHGNN_CODE = ("model.star=directed", "model.dropout_mode=dhgbench", "model.hgconv_degree=dhgbench")
_HYPERGT_CODE = ("model.link_loss_weight=0", "model.tau=1.0", "model.hyperedge_features=zero")
#: model -> task -> the options under which the model computes what DHG-Bench's code computes, where that departs
#: from the model's paper and moves results (``--reference-behaviour``; docs/reproduction.md, "Reference behaviours").
REFERENCE_BEHAVIOURS = {
    "LEGCN": dict.fromkeys(("node", "hyperedge", "graph", "fairness"), ("model.expansion=isolated",)),
    # fairness (Table A8): ED-HNN drops no input feature (its Bail collapse is input dropout on [-1, 1] features);
    # HNHN normalises with AllSet's unpowered degree sums, as it already does under the paper protocols above
    "ED-HNN": {"fairness": ("model.dropout_order=dhgbench",)},
    "HNHN": {"fairness": ("model.normalisation=allset",)},
    "HyperND": dict.fromkeys(("node", "fairness"), ("model.label_diffusion=false",)),
    "SheafHyperGNN": dict.fromkeys(("node", "hyperedge", "graph"), ("model.restriction_grad=false",)),
    "HJRL": {"node": ("model.reconstruction=dhgbench",)},
    "DPHGNN": {"node": _DPHGNN_CODE, "hyperedge": _DPHGNN_CODE,
               "graph": _DPHGNN_CODE + ("model.attention_scope=batch",)},
    # hypergraph classification's configs already take the reference's random encodings (no one structure to
    # learn them for)
    "HyperGT": {"node": ("model.positional_encoding=random",) + _HYPERGT_CODE,
                "fairness": ("model.positional_encoding=random",) + _HYPERGT_CODE,
                "hyperedge": ("model.positional_encoding=random",) + _HYPERGT_CODE,
                "graph": _HYPERGT_CODE + ("model.attention_scope=batch",)},
}
BEHAVIOUR_SUFFIX = "+dhgbench"
TASK_OF = {"node": ("cora", "cora-ca", "twitch-gamers"), "hyperedge": ("cora", "cora-ca"), "graph": _GRAPH_SETS,
           "fairness": ("german", "bail", "credit")}
FAIRNESS_POINTS = ROOT / "space" / "seed_studies" / "fairness"
#: the fairness study's points of the reference-behaviour rows (``hypergvl study fairness --set OPTIONS --out DIR``
#: into one folder; read by ``--reference-behaviour`` with ``--tasks fairness``)
FAIRNESS_BEHAVIOUR_POINTS = ROOT / "benchmarks" / "results" / "fairness_dhgbench"
#: the shipped per-seed points of the trained rows (``--points``, ``--export-points``)
POINTS = ROOT / "benchmarks" / "results" / "points"
POINT_SCHEMA = "hypergvl.reproduction.point"
PRE_PROVENANCE = "pre-provenance: written before results recorded their commit"


within = study_paper.within  # the pass rule: |ours - paper mean| <= max(2 * paper std, 1.5)
FLAGGED = "degenerate"  # the status of a row within the pass rule whose seeds predict one class or collapse
#: the statuses of a row compared with the paper
COMPARED = ("pass", "miss", FLAGGED)
OFF = 3.0  # a pass this many points or more off the paper's mean is counted in the headline


def _classes(task: str, dataset: str) -> int | None:
    """The number of classes of a hypergraph-classification set (its registered paper statistics)."""
    if task != "graph":
        return None
    from hypergvl.models.datasets.registry import get_spec
    return get_spec(dataset).paper_stats.get("classes")


NO_COMMIT = "no recorded commit"  # in a row's flag: some of its seeds name no commit; the row is not counted


def counted(r: dict) -> bool:
    """Whether a row enters the pass counts: compared with the paper, and every seed names the commit it was
    trained at (a row with a seed that does not is shown, flagged, and listed apart)."""
    return r["status"] in COMPARED and not r.get("uncommitted")


def _judge(row: dict, tests: list[dict], provenances: list[dict] | None = None) -> None:
    """The row's status from its mean beside the paper's (pass / miss / no paper number), and its flag
    (:func:`hypergvl.models.study.paper.degenerate_note` over its seeds' test metrics): a flagged row within the
    pass rule is counted apart from the passes (``degenerate``)."""
    row["flag"] = study_paper.degenerate_note(row["task"], tests, row["metric"], _classes(row["task"],
                                                                                        row["dataset"]))
    if row["paper"] is None:
        return
    row["status"] = "pass" if within(row["ours"][0], row["paper"]) else "miss"
    if row["status"] == "pass" and row["flag"]:
        row["status"] = FLAGGED
    missing = [k for k, rec in enumerate(provenances or []) if not (rec or {}).get("commit")]
    if missing:
        row["uncommitted"] = missing
        row["flag"] = "; ".join(filter(None, [row["flag"], f"{NO_COMMIT} for {len(missing)} of "
                                                            f"{len(provenances)} seeds: not counted"]))


def _fmt(v: tuple[float, float] | None) -> str:
    return "-" if v is None else f"{v[0]:.2f} ± {v[1]:.2f}"


def _label(r: dict) -> str:
    """The task as a table prints it: with its protocol where it has one (``hyperedge (paper)``)."""
    return f"{r['task']} ({r['protocol']})" if r.get("protocol") else r["task"]


def _cause(r: dict, behaviour: bool = False) -> str:
    """A missed row's measured cause (:mod:`dhgbench_misses`); nothing for other rows."""
    return dhgbench_misses.cause(_label(r), r["dataset"], r["model"], behaviour) if r["status"] == "miss" else ""


def _commits(provenances: list[dict]) -> list[str]:
    """The distinct commits of the records (``<commit>+dirty`` where the tree was dirty; the pre-provenance
    marker for records without one), in first-seen order."""
    out = []
    for rec in provenances:
        tag = PRE_PROVENANCE if not rec.get("commit") else rec["commit"][:12] + ("+dirty" if rec.get("dirty") else "")
        if tag not in out:
            out.append(tag)
    return out


def config_difference(saved: dict, now: dict) -> str | None:
    """How a point's resolved ``config`` differs from the one today's code resolves (``None``: the same). A point
    written before configs recorded the model's constructor defaults (``model_defaults``) is compared on the rest;
    the caller says that its defaults are unrecorded. A field added to the configs later that a point does not record
    counts as its value from before the field existed (``FIELDS_ADDED_LATER`` in ``hypergvl.models.trainer``)."""
    if "model_defaults" not in saved:
        now = {k: v for k, v in now.items() if k != "model_defaults"}
    saved = TR.fill_fields_added_later(saved, now)
    return None if saved == now else TR._dict_diff(saved, now)


def export_points(run_dir: Path, dest: Path) -> list[Path]:
    """The per-seed points of a run folder (``config.json`` and ``runs/run_<k>.json``) as small JSON files
    ``dest/seed<k>.json``: the seed's selected test and validation metrics, its resolved config and provenance
    (no checkpoints, histories or timings beyond the epoch count). A seed's config is the one its provenance
    recorded when it was trained (the folder's ``config.json`` is rewritten by a later resume, e.g. with fields added
    to the configs since: ``FIELDS_ADDED_LATER``)."""
    config = json.loads((run_dir / "config.json").read_text())
    written = []
    for k in TR.finished_seeds(run_dir):  # every finished seed, also of a folder trained with --seeds
        rec = json.loads((run_dir / "runs" / f"run_{k}.json").read_text())
        doc = {"schema": POINT_SCHEMA, "schema_version": 1, "model": config["model"], "dataset": config["dataset"],
               "task": config["task"], "folder": run_dir.name, "seed": rec["seed"], "metrics": rec["metrics"],
               "selected_epoch": rec["selected_epoch"], "epochs_run": rec["epochs_run"],
               "config": (rec.get("provenance") or {}).get("config") or config["config"], "provenance": rec.get("provenance") or {"commit": None,
                                                                                   "note": PRE_PROVENANCE}}
        TR.write_json_atomic(dest / f"seed{rec['seed']}.json", doc)
        written.append(dest / f"seed{rec['seed']}.json")
    return written


def points_summary(folder: Path, now: dict) -> tuple[dict | None, str | None]:
    """``(summary, None)`` from the per-seed points in ``folder`` (seeds 0..k-1: mean and population std of
    every test metric), or ``(None, why)``: no points, a gap in the seeds, or a point whose config differs from
    ``now`` (today's resolved config of the row)."""
    docs = sorted((json.loads(p.read_text()) for p in folder.glob("seed*.json")), key=lambda d: d["seed"])
    if not docs:
        return None, "not run"
    if [d["seed"] for d in docs] != list(range(len(docs))):
        return None, f"seeds {[d['seed'] for d in docs]} are not 0..{len(docs) - 1}"
    for d in docs:
        if diff := config_difference(d["config"], now):
            return None, f"seed {d['seed']} trained under another configuration ({diff})"
    names = sorted(set.intersection(*(set(d["metrics"]["test"]) for d in docs)))
    test = {k: dict(zip(("mean", "std"), TR.mean_std([d["metrics"]["test"][k] for d in docs]))) for k in names}
    return {"test_metrics": test, "runs": docs, "provenance": [d.get("provenance") or {} for d in docs],
            "defaults_recorded": all("model_defaults" in d["config"] for d in docs)}, None


def run_row(model: str, dataset: str, task: str, runs: int, out: Path, raw_root: str | None,
            protocols: dict[str, str] | None = None, report_only: bool = False, behaviour: bool = False,
            points: Path | None = None, seeds: list[int] | None = None) -> dict:
    """One model x dataset x task: train (or reuse finished runs; with ``report_only`` only read a finished
    summary; with ``points`` read the row's per-seed points under ``points/<model>/<dataset>/<folder>``, trains
    nothing) and compare with the paper. ``seeds`` trains those seeds only (the row summarises them and the seeds
    its folder finished before; a grid split over processes exports each part's points into one folder).
    ``protocols`` maps a task with protocols to the one to use (default: ``paper``). ``behaviour``: with the
    model's :data:`REFERENCE_BEHAVIOURS` options for the task (which it must have), in a folder of its own. A
    finished folder or point set trained under another configuration than the one the code resolves now is
    ``stale`` and not compared."""
    row = {"task": task, "dataset": dataset, "model": model, "metric": TR.get_task(task).metric}
    overrides, run_dir = (), out / model / dataset / task
    if task in PROTOCOLS:
        protocol = (protocols or {}).get(task, "paper")
        row["protocol"] = protocol
        overrides = PROTOCOLS[task][protocol]
        if protocol.startswith("paper"):
            overrides += PAPER_MODEL_OVERRIDES.get((task, model), ())
        run_dir = out / model / dataset / f"{task}-{protocol}"
    if behaviour:
        row["options"] = REFERENCE_BEHAVIOURS[model][task]
        overrides += row["options"]
        run_dir = run_dir.with_name(run_dir.name + BEHAVIOUR_SUFFIX)
    ref = PAPER.get((task, dataset), {})
    row["paper"] = ref.get(row["metric"], {}).get(model)
    second = SECOND_METRIC[task]
    row["paper2"] = ref.get(second, {}).get(model) if second else None
    if refusal := task_refusal(model, task):  # EHNN and T-HyperGNN on hypergraph classification (appendix C.1)
        row.update(status="refused", note=refusal)
        return row
    t0 = time.perf_counter()
    row["folder"] = run_dir.name
    if points is not None:
        now = TR.config_doc(model, dataset, task, TR.resolve_config(model, task, dataset, None, overrides))
        summary, why = points_summary(points / model / dataset / run_dir.name, now["config"])
        if summary is None:
            row.update(status="not run") if why == "not run" else row.update(status="stale", note=why)
            return row
        row["commits"] = _commits(summary["provenance"])
        summary["mean"], summary["std"] = (summary["test_metrics"][row["metric"]][k] for k in ("mean", "std"))
    elif report_only:
        summary = TR.read_summary(run_dir)
        if summary is None:
            row.update(status="not run")
            return row
        cfg = TR.resolve_config(model, task, dataset, None, overrides)
        if diff := TR.saved_config_difference(run_dir, TR.config_doc(model, dataset, task, cfg)):
            row.update(status="stale", note=f"trained under another configuration ({diff})")
            return row
        row["commits"] = _commits([r.get("provenance") or {} for r in summary["runs"]])
    else:
        if seeds is not None:  # and the seeds the folder finished before, so that its summary covers them all
            seeds = sorted(set(seeds) | set(TR.finished_seeds(run_dir)))
        try:  # a folder holding more finished runs than asked is summarised over all of them
            summary = TR.run_experiment(model, dataset, task, out=run_dir, runs=max(runs, TR.finished_runs(run_dir)),
                                        overrides=overrides, raw_root=raw_root, resume=True,
                                        progress=sys.stderr.isatty(), seeds=seeds)
        except (TR.ConfigError, TR.TrainingDiverged) as e:  # the grid goes on with its other rows
            row.update(status="skipped", note=str(e))
            return row
        row["commits"] = _commits([r.get("provenance") or {} for r in summary["runs"]])
    row["ours"] = (summary["mean"], summary["std"])
    row["runs"] = len(summary["runs"])
    if second:
        m = summary["test_metrics"][second]
        row["ours2"] = (m["mean"], m["std"])
    row["seconds"] = time.perf_counter() - t0
    row["status"] = "no paper number"
    _judge(row, [(r.get("metrics") or {}).get("test") or {} for r in summary["runs"]],
           summary.get("provenance") or [r.get("provenance") or {} for r in summary["runs"]])
    return row


def fairness_cells(root: Path) -> dict[tuple[str, str], dict]:
    """The fairness study's cells under ``root`` (its seed points merged), keyed by (model, dataset)."""
    try:
        points = study_common.iter_points([root])
    except TR.ConfigError:
        raise TR.ConfigError(f"no fairness study results at {root} (see --fairness-points)") from None
    return {(c["model"], c["dataset"]): c for c in study_common.aggregate(points) if c["study"] == "fairness"}


def fairness_row(model: str, dataset: str, cells: dict[tuple[str, str], dict], behaviour: bool = False) -> dict:
    """One model x fairness dataset: the study's test accuracy (mean ± std over its seeds) beside Table A8's.
    As in :func:`run_row`, a cell whose seed points were trained under another configuration than the one the
    code resolves now (the study's ``--set`` overrides applied; with ``behaviour``, the model's
    :data:`REFERENCE_BEHAVIOURS` options for fairness instead, so a cell trained under other options is stale) is
    ``stale`` and not compared."""
    row = {"task": "fairness", "dataset": dataset, "model": model, "metric": "accuracy", "paper2": None,
           "paper": study_paper.paper_value(model, dataset, "accuracy")}
    if behaviour:
        row["options"] = REFERENCE_BEHAVIOURS[model]["fairness"]
    oom = study_paper.paper_oom(model, dataset)
    cell = cells.get((model, dataset))
    if cell is None or cell["status"] != "ok":
        row["status"] = "not run" if cell is None else cell["status"]
        row["status"] += " (paper OOM)" if oom else ""
        return row
    docs = [json.loads(Path(p).read_text()) for p in cell.get("_points") or [] if p]
    options = row["options"] if behaviour else cell.get("overrides") or ()
    now = TR.config_doc(model, dataset, "node", TR.resolve_config(model, "node", dataset, None, options))["config"]
    for d in docs:
        if diff := config_difference(d.get("config") or {}, now):
            row.update(status="stale", note=f"seed {d['seed']} trained under another configuration ({diff})")
            return row
    acc = cell["metrics"]["test"]["accuracy"]
    row.update(ours=(acc["mean"], acc["std"]), runs=cell["runs"], source=cell.get("_path"),
               commits=_commits([d.get("provenance") or {} for d in docs]))
    row["status"] = "paper OOM" if oom else "no paper number"
    docs = sorted(docs, key=lambda d: d["seed"])
    _judge(row, [d["metrics"]["test"] for d in docs], [d.get("provenance") or {} for d in docs])
    return row


def render_behaviours(pairs: list[tuple[dict, dict]]) -> str:
    """The ``--reference-behaviour`` table: each finished reference-behaviour row beside its default row's result;
    the unfinished ones named after it."""
    head = ("| task | dataset | model | options | ours | runs | paper | diff | result | default row | flag | "
            "cause of a miss |")
    lines = [head, "|" + "---|" * 12]
    finished = COMPARED + ("no paper number",)
    for default, r in pairs:
        if r["status"] not in finished:
            continue
        diff = "-" if r.get("paper") is None else f"{r['ours'][0] - r['paper'][0]:+.2f}"
        lines.append(f"| {_label(r)} | {r['dataset']} | {r['model']} | `{' '.join(r['options'])}` | "
                     f"{_fmt(r['ours'])} | {r['runs']} | {_fmt(r.get('paper'))} | {diff} | {r['status']} | "
                     f"{_fmt(default.get('ours'))} {default['status']} | {r.get('flag') or ''} | "
                     f"{_cause(r, behaviour=True)} |")
    done = [r for _, r in pairs if counted(r)]
    lines.append(f"\n{sum(r['status'] == 'pass' for r in done)} of {len(done)} comparable results pass with the "
                 f"reference's behaviour{_qualifiers(done)}.{_uncommitted([r for _, r in pairs])}")
    rest: dict[str, list[str]] = {}
    for _, r in pairs:
        if r["status"] not in finished:
            rest.setdefault(r["status"], []).append(f"{r['model']} {r['dataset']} {r['task']}")
    for status, names in rest.items():
        lines.append(f"{status[0].upper()}{status[1:]} ({len(names)}): " + "; ".join(names) + ".")
    return "\n".join(lines)


def table_rows(doc: list | dict) -> list[dict]:
    """The rows of a ``table.json``: version 2 holds them under ``rows`` beside its provenance; version 1 (before
    provenance) is the bare list."""
    return doc if isinstance(doc, list) else doc["rows"]


def render_provenance(rows: list[dict]) -> str:
    """One line: how many finished rows come from each commit (or carry no provenance)."""
    count: dict[str, int] = {}
    for r in rows:
        for c in r.get("commits", []):
            count[c] = count.get(c, 0) + 1
    if not count:
        return "Provenance: no finished row."
    return "Provenance (finished rows per commit their seeds were trained at): " + "; ".join(
        f"{c}: {n}" for c, n in count.items()) + "."


def markdown_rows(text: str) -> list[list[dict]]:
    """The rows of each reproduction table in a Markdown file this script wrote (the default table, then the
    ``--reference-behaviour`` one if present), each as ``{"task", "protocol", "dataset", "model", "status", "diff",
    "paper", "flag", "cause"}`` (``diff`` the printed ours - paper, ``cause`` the last column, ``flag`` the one
    before it)."""
    tables: list[list[dict]] = []
    for line in text.splitlines():
        if line.startswith("| task | dataset | model |"):
            tables.append([])
        elif tables and line.startswith("| ") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            task, _, protocol = cells[0].partition(" (")
            tables[-1].append({"task": task, "protocol": protocol.rstrip(")") or None, "dataset": cells[1],
                               "model": cells[2], "status": cells[8], "diff": cells[7], "cause": cells[-1],
                               "flag": cells[-2], "paper": cells[6], "uncommitted": NO_COMMIT in cells[-2]})
    return tables


def _pass_counts(rows: list[dict]) -> tuple[str, str, str]:
    """``("N of M", "node a of b, ...", "; hyperedge under `P`: c of d...")``: the pass/miss rows under the paper
    protocol (or none), per task, and the rows under each other protocol, per task and protocol."""
    done = [r for r in rows if counted(r)]

    def tally(rs: list[dict]) -> str:
        return f"{sum(r['status'] == 'pass' for r in rs)} of {len(rs)}"

    main = [r for r in done if r.get("protocol") in (None, "paper")]
    per = ", ".join(f"{t} {tally([r for r in main if r['task'] == t])}" for t in TASK_OF
                    if any(r["task"] == t for r in main))
    other: dict[tuple[str, str], list[dict]] = {}
    for r in done:
        if r.get("protocol") not in (None, "paper"):
            other.setdefault((r["task"], r["protocol"]), []).append(r)
    extra = "".join(f"; {t} under `{p}`: {tally(rs)}" for (t, p), rs in sorted(other.items()))
    return tally(main), per, extra


def count_summary(rows: list[dict]) -> str:
    """``N of M comparable rows pass (node a of b, ...)``: pass/miss rows overall and per task, under the paper
    protocol (or none); rows under another protocol are counted after it, per task and protocol."""
    total, per, extra = _pass_counts(rows)
    return f"{total} comparable rows pass" + (f" ({per})" if per else "") + extra


#: the shipped tables whose counts docs/reproduction.md quotes, in its order
COUNTED_TABLES = ("benchmarks/results/reproduction.md",)
COUNTS_BEGIN = "<!-- counts generated by: python benchmarks/reproduce_dhgbench.py --counts -->"
COUNTS_END = "<!-- end of generated counts -->"


def counts_block(root: Path = ROOT) -> str:
    """The block of pass counts in docs/reproduction.md, generated from the shipped tables
    (:data:`COUNTED_TABLES`) and the fairness study's ``models/study/results/report.json``."""
    lines = [COUNTS_BEGIN]
    for name in COUNTED_TABLES:
        text = (root / name).read_text()
        tables = markdown_rows(text)
        line = f"- `{name}`: {count_summary(tables[0])}"
        over = next((x.split(". Over all ", 1)[1] for x in text.splitlines() if ". Over all " in x), None)
        if over:  # the table's own footer: the rule's tolerance range, degenerate rows, passes off by over 3
            line += f". Pass rule |ours - paper| <= max(2 paper std, 1.5); over all {over.rstrip('.')}"
        if len(tables) > 1:
            line += f"; with the reference's behaviour (second table) {count_summary(tables[1])}"
        lines.append(line + ".")
    report = json.loads((root / "models" / "study" / "results" / "report.json").read_text())
    compared = [r for r in report.get("fairness", []) if "pass" in r]
    cells = [r for r in compared if not r.get("uncommitted")]
    per = []
    for ds in TASK_OF["fairness"]:
        here = [r for r in cells if r["dataset"] == ds]
        if here:
            per.append(f"{ds} {len({r['model'] for r in here})} models: " + ", ".join(
                f"{m} {sum(r['pass'] for r in here if r['metric'] == m)} of {sum(r['metric'] == m for r in here)}"
                for m in ("accuracy", "delta_dp", "delta_eo")))
    flagged = sum(bool(r.get("flag")) and r["pass"] is False and study_paper.within(
        r["ours"], (r["paper_mean"], r["paper_std"]), floor=1.5 if r["metric"] == "accuracy" else 0.0) for r in cells)
    lines.append(f"- `models/study/results/fairness_table_a8.md` (Table A8 cells): {sum(r['pass'] for r in cells)} "
                 f"of {len(cells)} pass, {flagged} more within the rule are degenerate (one class in every seed, or "
                 "collapsed seeds) and not counted; " + "; ".join(per) + "; not counted, a seed without a recorded "
                 f"commit: {len(compared) - len(cells)} cells.")
    return "\n".join(lines + [COUNTS_END])


def render(rows: list[dict]) -> str:
    head = ("| task | dataset | model | metric | ours | runs | paper | diff | result | 2nd metric: ours | paper | "
            "flag | cause of a miss |")
    lines = [head, "|" + "---|" * 13]
    for r in rows:
        diff = "-" if r.get("ours") is None or r.get("paper") is None else f"{r['ours'][0] - r['paper'][0]:+.2f}"
        second = SECOND_METRIC[r["task"]] or ""
        lines.append(f"| {_label(r)} | {r['dataset']} | {r['model']} | {r['metric']} | {_fmt(r.get('ours'))} | "
                     f"{r.get('runs', '-')} | {_fmt(r.get('paper'))} | {diff} | {r['status']} | "
                     f"{second} {_fmt(r.get('ours2'))} | {_fmt(r.get('paper2'))} | {r.get('flag') or ''} | "
                     f"{_cause(r)} |")
    total, _, extra = _pass_counts(rows)  # the paper protocol's rows, then each other protocol's
    done = [r for r in rows if counted(r)]
    lines.append(f"\n{total} comparable results pass (|ours - paper| <= max(2 paper std, 1.5)){extra}. "
                 f"Over all {len(done)} compared rows{_qualifiers(done)}.{_uncommitted(rows)}")
    return "\n".join(lines)


def _uncommitted(rows: list[dict]) -> str:
    """The sentence listing the compared rows left out of the counts because a seed names no commit."""
    out = [r for r in rows if r["status"] in COMPARED and r.get("uncommitted")]
    if not out:
        return ""
    return (f" Not counted, a seed without a recorded commit ({len(out)}): "
            + "; ".join(f"{r['model']} {r['dataset']} {_label(r)} ({r['status']})" for r in out) + ".")


def _qualifiers(done: list[dict]) -> str:
    """What the pass counts leave out: the tolerance range of the rows, the rows within it counted apart as
    degenerate, the passes more than :data:`OFF` points off, and the misses :data:`dhgbench_misses.BAR` or more
    points off (either side) whose cause is not located (the table's cause column)."""
    if not done:
        return ""
    tol = [max(2 * r["paper"][1], 1.5) for r in done]
    passes = [r for r in done if r["status"] == "pass"]
    off = [r for r in passes if abs(r["ours"][0] - r["paper"][0]) > OFF]
    flagged = [r for r in done if r["status"] == FLAGGED]
    unlocated = [r for r in done if r["status"] == "miss" and abs(r["ours"][0] - r["paper"][0]) >= dhgbench_misses.BAR
                 and not dhgbench_misses.located(_cause(r, behaviour="options" in r))]
    return (f": the tolerance max(2 paper std, 1.5) ranges from ±{min(tol):.2f} to ±{max(tol):.2f}; "
            f"{len(flagged)} within it are degenerate (one class in every seed, or collapsed seeds; flag column) "
            f"and not counted as passes; {len(off)} of the {len(passes)} passes lie more than {OFF:.0f} points off "
            f"the paper; {len(unlocated)} misses {dhgbench_misses.BAR:.0f} or more points off (above or below) have "
            "no located cause")


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [r for r in rows if r.get("ours") and r.get("paper")]
    if not done:
        return
    fig, ax = plt.subplots(figsize=(6, 6))
    for task, marker in (("node", "o"), ("hyperedge", "^"), ("graph", "s"), ("fairness", "D")):
        pts = [r for r in done if r["task"] == task]
        if pts:
            ax.errorbar([r["paper"][0] for r in pts], [r["ours"][0] for r in pts],
                        xerr=[r["paper"][1] for r in pts], yerr=[r["ours"][1] for r in pts], fmt=marker,
                        label=task, alpha=0.8)
    lo = min(min(r["paper"][0], r["ours"][0]) for r in done) - 3
    hi = max(max(r["paper"][0], r["ours"][0]) for r in done) + 3
    ax.plot([lo, hi], [lo, hi], "k--", lw=1)
    ax.set(xlabel="DHG-Bench paper (%)", ylabel="this project (%)", title="DHG-Bench reproduction",
           xlim=(lo, hi), ylim=(lo, hi))
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _progress(task: str, dataset: str, label: str, row: dict) -> None:
    print(f"{task:9s} {dataset:15s} {label:18s} ours {_fmt(row.get('ours')):16s} paper {_fmt(row.get('paper')):16s} "
          f"{row['status']}", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--counts", action="store_true",
                   help="alone: print the block of pass counts in docs/reproduction.md, generated from the "
                        "shipped tables")
    p.add_argument("--models", nargs="+", required=True)
    p.add_argument("--datasets", nargs="+", required=True)
    p.add_argument("--tasks", nargs="+", default=["node", "hyperedge", "graph", "fairness"], choices=sorted(TASK_OF))
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--hyperedge-protocol", nargs="+", default=["paper"], choices=sorted(PROTOCOLS["hyperedge"]),
                   help="paper: the reference's protocol at publication (task.protocol=paper: the encoder sees "
                        "every hyperedge, ...); paper-logits: the same with the loss on the scores; held-out: the "
                        "encoder sees only the training hyperedges (default: paper; several: a row for each)")
    p.add_argument("--graph-protocol", nargs="+", default=["paper"], choices=sorted(PROTOCOLS["graph"]),
                   help="paper: the reference's split and batching (task.protocol=paper: hyperedge ids offset by "
                        "node counts, ...); standard: block-diagonal batches (default: paper)")
    p.add_argument("--out", type=Path, default=ROOT / "out" / "reproduce_dhgbench")
    p.add_argument("--fairness-points", type=Path, default=FAIRNESS_POINTS,
                   help="folder of fairness study points read for --tasks fairness (default: the shipped ones)")
    p.add_argument("--fairness-behaviour-points", type=Path, default=FAIRNESS_BEHAVIOUR_POINTS,
                   help="folder of fairness study points trained with REFERENCE_BEHAVIOURS' options, read for "
                        "--tasks fairness --reference-behaviour (default: the shipped ones)")
    p.add_argument("--raw-root", default=None, help="local raw data folder (default: $HYPERGVL_RAW_ROOT)")
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    p.add_argument("--report-only", action="store_true",
                   help="train nothing: tabulate the finished results under --out (missing rows read 'not run')")
    p.add_argument("--points", type=Path, default=None,
                   help="train nothing: tabulate the rows from the per-seed points under this folder (the shipped "
                        "ones: benchmarks/results/points); a point trained under another config than today's is stale")
    p.add_argument("--export-points", type=Path, default=None,
                   help="after tabulating, write the per-seed points of every finished row under --out to this folder")
    p.add_argument("--reference-behaviour", action="store_true",
                   help="also train (or, with --report-only, read) each row whose model has options reproducing "
                        "DHG-Bench's code (REFERENCE_BEHAVIOURS) with them, and tabulate those rows separately")
    p.add_argument("--behaviour-only", action="store_true",
                   help="with --reference-behaviour: train the reference-behaviour rows only; the default rows are "
                        "read from --out if finished (as with --report-only), not trained")
    p.add_argument("--seeds", nargs="+", type=int, default=None,
                   help="train these seeds of each row only (instead of 0..runs-1; to split a row over processes: "
                        "each part's --export-points writes its seeds into the same points folder)")
    if argv is None:
        argv = sys.argv[1:]
    if list(argv) == ["--counts"]:  # docs/reproduction.md's generated block, from the shipped tables only
        print(counts_block())
        return 0
    if "--counts" in argv:
        p.error("--counts takes no other arguments")
    args = p.parse_args(argv)
    if args.behaviour_only and not args.reference_behaviour:
        p.error("--behaviour-only needs --reference-behaviour")
    if args.seeds is not None and (args.report_only or args.points is not None):
        p.error("--seeds names seeds to train; --report-only and --points train nothing")
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(args.threads)

    rows, pairs = [], []
    if "fairness" in args.tasks and set(args.datasets) & set(TASK_OF["fairness"]):
        try:
            cells = fairness_cells(args.fairness_points)
            behaviour_cells = (fairness_cells(args.fairness_behaviour_points)
                               if args.reference_behaviour and args.fairness_behaviour_points.exists() else {})
        except TR.ConfigError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    protocols_of = {"hyperedge": args.hyperedge_protocol, "graph": args.graph_protocol}
    for task in args.tasks:
        for dataset in args.datasets:
            if dataset not in TASK_OF[task]:
                continue
            for k, protocol in enumerate(protocols_of.get(task, [None])):
                for model in args.models:
                    if task == "fairness":
                        row = fairness_row(model, dataset, cells)
                    else:
                        row = run_row(model, dataset, task, args.runs, args.out, args.raw_root, {task: protocol},
                                      args.report_only or args.behaviour_only, points=args.points,
                                      seeds=args.seeds)
                    rows.append(row)
                    _progress(task, dataset, model, row)
                    if k == 0 and args.reference_behaviour and task in REFERENCE_BEHAVIOURS.get(model, {}):
                        pairs.append((row, fairness_row(model, dataset, behaviour_cells, behaviour=True)
                                      if task == "fairness" else
                                      run_row(model, dataset, task, args.runs, args.out, args.raw_root,
                                              {task: protocol}, args.report_only, behaviour=True,
                                              points=args.points, seeds=args.seeds)))
                        _progress("", "", "  " + BEHAVIOUR_SUFFIX, pairs[-1][1])
    if not rows:
        print("nothing to run: no requested dataset belongs to a requested task", file=sys.stderr)
        return 2
    table = render(rows)
    if args.reference_behaviour:
        table += ("\n\nWith DHG-Bench's code behaviour (--reference-behaviour; README, table of reference "
                  "behaviours)\n\n" + render_behaviours(pairs))
    table += "\n\n" + render_provenance(rows + [r for _, r in pairs])
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.export_points is not None:
        for r in rows + [r for _, r in pairs]:
            if r["task"] != "fairness" and r["status"] in COMPARED + ("no paper number",):
                export_points(args.out / r["model"] / r["dataset"] / r["folder"],
                              args.export_points / r["model"] / r["dataset"] / r["folder"])
    from hypergvl.provenance import provenance

    TR.write_json_atomic(args.out / "table.json", {"schema": "hypergvl.reproduction.table", "schema_version": 2,
                                                   "provenance": provenance(vars(args)),
                                                   "rows": rows + [r for _, r in pairs]})
    write_text(args.out / "table.md", table + "\n")
    plot(rows, args.out / "ours_vs_paper.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
