"""Reproduce the AllSet / ED-HNN node-classification numbers under their protocol (``--set protocol=allset``).

    python benchmarks/reproduce_allset.py --train [--models ...] [--datasets cora cora-ca] [--runs 3]
        [--out DIR] [--raw-root DIR]                      # train (resumable), writing per-seed points as they come
    python benchmarks/reproduce_allset.py --points benchmarks/results/allset/points   # the table, from the points

The protocol (``models/protocols.py``): 50/25/25 random splits (seed ``k`` for run ``k``), the test accuracy at the
epoch of the best validation accuracy (the first of equal ones, as AllSet's ``argmax``), 500 epochs and the
per-dataset hyperparameters AllSet's and ED-HNN's repositories publish, the general setting for the others.
``--train`` trains one seed of every row before the next seed of any (so an interrupted job leaves every row with
the same seeds), with one thread (``torch.set_num_threads(1)``) in this one process; finished runs under ``--out``
are reused and each finished seed is exported at once as a point under ``--export-points`` (default
``benchmarks/results/allset/points/<model>/<dataset>/node-allset/seed<k>.json``, the format of
``benchmarks/reproduce_dhgbench.py --export-points``).

The table compares the mean over the points' seeds with the published mean ± std (ED-HNN Table 2; its baseline
rows are AllSet's Table 3 protocol) under DHG-Bench's reproduction pass rule (``reproduce_dhgbench.within``:
within two published standard deviations or 1.5 points), and names a cause or a candidate cause for each miss
(:data:`MISS_CAUSES`). As there, a point whose resolved config differs from what today's code resolves for the row
is ``stale`` and not compared.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
from functools import partial
from pathlib import Path
from typing import Callable

import torch

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "benchmarks"):  # the project, and the DHG-Bench reproduction script beside this one
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import reproduce_dhgbench as rd

from hypergvl.models import trainer as TR

OVERRIDES = ("protocol=allset",)
FOLDER = "node-allset"
RESULTS = ROOT / "benchmarks" / "results" / "allset"
POINTS = RESULTS / "points"
TABLE = RESULTS / "reproduce_allset.md"
MODELS = ("MLP", "HGNN", "HCHA", "HNHN", "HyperGCN", "UniGCNII", "CEGCN", "CEGAT", "AllDeepSets",
          "AllSetTransformer", "ED-HNN")
DATASETS = ("cora", "cora-ca")

#: ED-HNN (arXiv 2207.06680) Table 2, Cora and Cora-CA columns, mean ± std over 10 runs. Not read from the paper
#: itself (no stored copy of it or of AllSet's Table 3 holds the table text): read from three later papers that
#: reprint the rows, identical in all three: HAMP (Ma et al., "How Particle System Theory Enhances Hypergraph
#: Message Passing", Table 1: "our results are consistent with those reported by ED-HNN"), PEF-HNN (Li et al.,
#: AAAI 2026, Table 1) and HyperSheaflets (AAAI 2026, page 6). MLP, CEGCN and CEGAT (AllSet Table 3 only) are in
#: none of them: "not sourced".
PUBLISHED = {
    "HGNN": ((79.39, 1.36), (82.64, 1.65)),
    "HCHA": ((79.14, 1.02), (82.55, 0.97)),
    "HNHN": ((76.36, 1.92), (77.19, 1.49)),
    "HyperGCN": ((78.45, 1.26), (79.48, 2.08)),
    "UniGCNII": ((78.81, 1.05), (83.60, 1.14)),
    "AllDeepSets": ((76.88, 1.80), (81.97, 1.50)),
    "AllSetTransformer": ((78.58, 1.47), (83.63, 1.47)),
    "ED-HNN": ((80.31, 1.35), (83.97, 1.55)),
}
PUBLISHED_SOURCE = ("ED-HNN Table 2 as reprinted, identically, in HAMP Table 1, PEF-HNN Table 1 and HyperSheaflets "
                    "page 6")

#: AllSet's own HyperGCN beside ours on our data (benchmarks/allset_reference.py), read into HyperGCN's causes
HYPERGCN_REFERENCE = RESULTS / "hypergcn_reference.json"


def _hypergcn_cause(dataset: str) -> str:
    """HyperGCN's miss on ``dataset``, in the numbers of :data:`HYPERGCN_REFERENCE` (so the text cannot drift)."""
    if not HYPERGCN_REFERENCE.exists():
        return "cause not found"
    ref = json.loads(HYPERGCN_REFERENCE.read_text())
    rows, seeds = ref["results"][dataset], ref["seeds"]
    lap = rows["laplacian"]
    pattern, elsewhere = "the same pattern", ""
    if lap["entries_differing"]:  # the extreme members of a hyperedge whose members have equal features tie
        pattern = (f"patterns that differ at {lap['entries_differing']} entries (a hyperedge whose members have "
                   "equal features, so its extreme members tie and the two codes break the tie differently; the "
                   f"rows of its {lap['nodes_touched']} members differ with it)")
        elsewhere = " elsewhere"

    def mean(side: str) -> str:
        values = [r["test"] for r in rows[side].values()]
        return f"{statistics.mean(values):.2f} ± {statistics.pstdev(values):.2f}"  # the table's population std
    return (f"located, not in our model code: AllSet's own HyperGCN ({ref['reference']}, src/models.py and "
            f"src/utils.py, benchmarks/allset_reference.py) trained on our data and splits, seeds {seeds[0]}-"
            f"{seeds[-1]}, gives {mean('reference')}, ours under the same conditions {mean('ours')}; both without "
            "singleton hyperedges, as AllSet's train.py:359-360 trains HyperGCN and this row does (task.self_loops "
            f"false); on one random direction the two Laplacians ({lap['nnz_reference']} and "
            f"{lap['nnz_ours']} non-zeros) have {pattern} and agree to {lap['max_difference_elsewhere']:.0e}"
            f"{elsewhere}. So the reference code does not give the published number on our data; its own data files are "
            "not reachable offline")


_ALLDEEPSETS = ("located: the width. At the DHG-Bench config's hidden 64 (which the protocol used before) AllSet's own "
                "SetGNN, run on our Cora data and splits, collapses as ours did (seeds 0-2: 40.62 / 44.31 / 61.45; "
                "ours 38.55 / 51.55 / 51.99), and with the same weights the two give the same outputs and gradients; "
                "AllSet searched MLP_hidden over 64..512 and at 256 both reach the published number on Cora (ours "
                "77.45, AllSet's 77.30, seeds 0-2). The protocol now takes 256")
#: (model, dataset) -> the cause, or a named candidate, of a miss (written after the numbers were measured), or a
#: function that writes it from the measurement's shipped file when the table is made
MISS_CAUSES: dict[tuple[str, str], str | Callable[[], str]] = {
    ("HyperGCN", "cora"): partial(_hypergcn_cause, "cora"),
    ("HyperGCN", "cora-ca"): partial(_hypergcn_cause, "cora-ca"),
    ("AllDeepSets", "cora"): _ALLDEEPSETS, ("AllDeepSets", "cora-ca"): _ALLDEEPSETS + " (measured on Cora)",
}


def published(model: str, dataset: str) -> tuple[float, float] | None:
    cols = PUBLISHED.get(model)
    return None if cols is None or dataset not in DATASETS else cols[DATASETS.index(dataset)]


def resolved(model: str, dataset: str) -> dict:
    """The resolved config today's code gives the row (as a point stores it)."""
    cfg = TR.resolve_config(model, "node", dataset, None, OVERRIDES)
    return TR.config_doc(model, dataset, "node", cfg)["config"]


def row_from_points(model: str, dataset: str, points: Path) -> dict:
    """One row of the table from ``points/<model>/<dataset>/node-allset``: ours (mean and population std over the
    seeds), the published number and pass / miss / not sourced / stale / not run."""
    row = {"task": "node", "dataset": dataset, "model": model, "metric": "accuracy", "folder": FOLDER,
           "paper": published(model, dataset)}
    summary, why = rd.points_summary(points / model / dataset / FOLDER, resolved(model, dataset))
    if summary is None:
        row.update(status="not run") if why == "not run" else row.update(status="stale", note=why)
        return row
    acc = summary["test_metrics"]["accuracy"]
    row.update(ours=(acc["mean"], acc["std"]), runs=len(summary["runs"]), commits=rd._commits(summary["provenance"]),
               setting=summary["runs"][0]["config"]["protocol"]["setting"])
    row["status"] = "not sourced" if row["paper"] is None else (
        "pass" if rd.within(row["ours"][0], row["paper"]) else "miss")
    if row["status"] == "miss":
        cause = MISS_CAUSES.get((model, dataset), "cause not found")
        row["note"] = cause() if callable(cause) else cause
    return row


def render(rows: list[dict]) -> str:
    lines = [("<!-- generated by: python benchmarks/reproduce_allset.py --points benchmarks/results/allset/points "
              "--table benchmarks/results/allset/reproduce_allset.md -->"),
             "# AllSet / ED-HNN protocol (`--set protocol=allset`): node classification, Cora and Cora-CA", "",
             "Ours: mean ± population std over the seeds shipped in `points/` (the protocol's 10 runs, or fewer where "
             "this shared 2-core CPU did not allow them: the `seeds` column). Published: " + PUBLISHED_SOURCE + " (10 runs, torch's "
             "sample std). Pass: |ours - published| <= max(2 published std, 1.5), DHG-Bench's reproduction rule. "
             "`setting`: `tuned`, the per-dataset values the authors published; `fallback`, AllSet's general "
             "setting (`models/protocols.py`).", "",
             "| dataset | model | setting | ours | seeds | published | diff | result | cause or candidate (misses) |",
             "|" + "---|" * 9]
    for r in rows:
        diff = "-" if r.get("ours") is None or r.get("paper") is None else f"{r['ours'][0] - r['paper'][0]:+.2f}"
        lines.append(f"| {r['dataset']} | {r['model']} | {r.get('setting', '-')} | {rd._fmt(r.get('ours'))} | "
                     f"{r.get('runs', '-')} | {rd._fmt(r.get('paper')) if r.get('paper') else 'not sourced'} | "
                     f"{diff} | {r['status']} | {r.get('note', '') if r['status'] in ('miss', 'stale') else ''} |")
    done = [r for r in rows if r["status"] in ("pass", "miss")]
    lines.append(f"\n{sum(r['status'] == 'pass' for r in done)} of {len(done)} comparable rows pass; "
                 f"{sum(r['status'] == 'not sourced' for r in rows)} trained rows have no sourced published number.")
    lines.append("\n" + rd.render_provenance(rows))
    return "\n".join(lines) + "\n"


def train(models: list[str], datasets: list[str], runs: int, out: Path, raw_root: str | None,
          export: Path) -> None:
    """Seed by seed over every row: train seed ``k`` (reusing finished runs) and export the row's points."""
    for k in range(runs):
        for dataset in datasets:
            for model in models:
                run_dir = out / model / dataset / FOLDER
                if TR.finished_runs(run_dir) <= k:
                    s = TR.run_experiment(model, dataset, "node", out=run_dir, runs=k + 1, overrides=OVERRIDES,
                                          raw_root=raw_root, resume=True, progress=False)
                    rec = s["runs"][k]
                    print(f"{model:18s} {dataset:8s} seed {k}: {rec['metrics']['test']['accuracy']:.2f} "
                          f"(epoch {rec['selected_epoch']}, {rec['total_time_s']:.0f} s)", flush=True)
                rd.export_points(run_dir, export / model / dataset / FOLDER)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", action="store_true", help="train the rows (resumable) and export their points")
    p.add_argument("--points", type=Path, default=None, help="tabulate from the points under this folder")
    p.add_argument("--models", nargs="+", default=list(MODELS))
    p.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    p.add_argument("--runs", type=int, default=3, help="seeds 0..runs-1 per row (default 3; the protocol runs 10)")
    p.add_argument("--out", type=Path, default=ROOT / "out" / "reproduce_allset")
    p.add_argument("--export-points", type=Path, default=POINTS)
    p.add_argument("--raw-root", default=None, help="local raw data folder (default: $HYPERGVL_RAW_ROOT)")
    p.add_argument("--table", type=Path, default=None, help="write the table here (default: print it)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.train == (args.points is not None):
        p.error("give exactly one of --train and --points")
    try:
        for m in args.models:
            TR.model_class(m)
        if args.train:
            torch.set_num_threads(1)
            train(args.models, args.datasets, args.runs, args.out, args.raw_root, args.export_points)
            return 0
        rows = [row_from_points(m, ds, args.points) for ds in args.datasets for m in args.models]
    except TR.ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    table = render(rows)
    if args.table is None:
        print(table, end="")
    else:
        args.table.parent.mkdir(parents=True, exist_ok=True)
        args.table.write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
