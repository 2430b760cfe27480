"""Time per epoch of the slowest DHG-Bench runs at two commits of this repository, in one run of this script.

The time per epoch of hypergraph classification and of the dense models on Bail, the code before the speed work on
them beside the new, in one run. "Before" is ``f429f51`` (the parent of ``1595191``, where that work began); the new
is ``HEAD``. Both are exported with ``git archive`` into a temporary folder and run the same way, so neither side is
this checkout's installed package (``checkout_import.py`` maps ``hypergvl`` onto each export):

* each (commit, case) in its own subprocess, ``torch.set_num_threads(--threads)``, the ``hypergvl`` package mapped
  onto that export as ``pyproject.toml``'s ``package-dir`` maps it (any installed or editable ``hypergvl`` finder
  removed first), then that commit's own ``hypergvl`` command line with ``trainer.epochs=--epochs``, one seed:
  ``hypergvl study fairness --datasets bail --models MODEL`` for the Bail cases (Table A8's config, the fairness
  study's 50/25/25 split) and ``hypergvl train --task graph --set task.protocol=paper`` for the graph cases (Table
  A7's protocol: batches of 256 graphs, hyperedges merged across the graphs of a batch);
* the sides alternate case by case (before, after, next case), so both see the same machine load;
* from the run record each commit's trainer writes (``runs/run_0.json``, the same fields at both commits): the
  median training epoch (``epoch_times_s``: forward, loss, backward, optimiser step) of a run of ``2 --epochs``
  epochs, and the evaluation per epoch (the validation and test splits, checkpoints) with ``trainer.eval_every=1``:
  the non-training time (``total_time_s - sum(epoch_times_s)``) of that run less that of a run of ``--epochs``
  epochs, over ``--epochs``, so one-time costs cancel (the first epoch's lazily built structures, the first
  evaluation's imports: scikit-learn for macro-F1 is 1.2 s);
* the projected run is ``epochs x train + epochs / eval_every x eval`` with the config's epochs and evaluation
  interval as the new commit resolves them (Bail: 200-300 epochs evaluated every epoch; graph runs: 200-300 epochs
  evaluated every 20th), i.e. one seed of the shipped grids.

    python benchmarks/speed_since.py --raw-root ../shared/data                      # every case, 3 epochs
    python benchmarks/speed_since.py --raw-root ../shared/data --cases bail:ED-HNN graph:HGNN:rhg-10:standard

The table is printed and, with ``--out FILE``, written as Markdown with the commits, command and machine load.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "f429f51"  # the code before the speed work on these runs (the parent of 1595191)
#: (task, model, dataset, graph protocol): the graph run the README once said took "about 6 minutes" (HGNN on
#: RHG-10 by its command, the standard protocol), HGNN and the slowest A7 cells of DPHGNN and HyperGT under the paper
#: protocol (Table A7's), and the dense models on Bail (Table A8's slowest cells)
CASES = (("graph", "HGNN", "rhg-10", "standard"), ("graph", "HGNN", "rhg-10", "paper"),
         ("graph", "DPHGNN", "imdb-dir-genre", "paper"), ("graph", "HyperGT", "rhg-10", "paper"),
         ("bail", "DPHGNN", "bail", None), ("bail", "ED-HNN", "bail", None),
         ("bail", "AllSetTransformer", "bail", None), ("bail", "HyperGT", "bail", None))

#: run in each subprocess: map ``hypergvl`` onto the export, then that commit's CLI
_BOOT = r"""
import sys
benchmarks, root, threads, *argv = sys.argv[1:]
sys.path.insert(0, benchmarks)
import torch
torch.set_num_threads(int(threads))
from checkout_import import import_hypergvl_from
module = import_hypergvl_from(root)
import hypergvl.cli, hypergvl.models.trainer, hypergvl.models.nn
for m in (module, hypergvl.cli, hypergvl.models.trainer, hypergvl.models.nn):  # this export's, not an installed one
    assert m.__file__.startswith(root + "/"), (m.__name__, m.__file__, root)
from hypergvl.cli import main
sys.exit(main(argv))
"""


def parse_case(text: str) -> tuple:
    """``bail:MODEL`` or ``graph:MODEL:DATASET[:PROTOCOL]`` (``paper``, the default, or ``standard``)."""
    parts = text.split(":")
    if parts[0] == "bail" and len(parts) == 2:
        return "bail", parts[1], "bail", None
    if parts[0] == "graph" and len(parts) in (3, 4) and (parts[3:] or ["paper"])[0] in ("paper", "standard"):
        return "graph", parts[1], parts[2], (parts[3:] or ["paper"])[0]
    raise argparse.ArgumentTypeError(f"{text!r}: expected bail:MODEL or graph:MODEL:DATASET[:paper|standard]")


def export(commit: str, into: Path) -> tuple[str, Path]:
    """``commit``'s tree in ``into/<full sha>`` (``git archive``), and the full sha."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{commit}^{{commit}}"],
                         capture_output=True, text=True, check=True).stdout.strip()
    folder = into / sha
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", sha], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return sha, folder


def cli_args(case: tuple, epochs: int, out: Path) -> list[str]:
    task, model, dataset, protocol = case
    if task == "bail":
        return ["study", "fairness", "--datasets", dataset, "--models", model, "--runs", "1", "--threads", "1",
                "--set", f"trainer.epochs={epochs}", "trainer.eval_every=1", "--out", str(out)]
    return ["train", "--model", model, "--dataset", dataset, "--task", "graph", "--runs", "1", "--no-progress",
            "--set", f"task.protocol={protocol}", f"trainer.epochs={epochs}", "trainer.eval_every=1", "--out",
            str(out)]


def _run(root: Path, case: tuple, epochs: int, args: argparse.Namespace, out: Path) -> dict:
    """``root``'s CLI on ``case`` for ``epochs`` epochs in a subprocess: its run record."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS=str(args.threads))
    if args.raw_root:
        env["HYPERGVL_RAW_ROOT"] = str(Path(args.raw_root).resolve())
    proc = subprocess.run([sys.executable, "-c", _BOOT, str(ROOT / "benchmarks"), str(root), str(args.threads),
                           *cli_args(case, epochs, out)], capture_output=True, text=True, env=env,
                          timeout=args.timeout_s)
    records = sorted(out.rglob("run_0.json"))
    if proc.returncode != 0 or not records:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"{case} at {root.name[:7]}: exit {proc.returncode}: " + " / ".join(tail))
    return json.loads(records[0].read_text())


def time_case(root: Path, case: tuple, args: argparse.Namespace, out: Path) -> dict:
    """The median training epoch of a ``2 --epochs`` run, and the evaluation per epoch as the difference of the
    non-training time of that run and of an ``--epochs`` run, over ``--epochs``: one-time costs (the first epoch's
    lazily built structures, the first evaluation's imports) cancel."""
    short, long = (_run(root, case, n, args, out / str(n)) for n in (args.epochs, 2 * args.epochs))
    rest = [r["total_time_s"] - sum(r["epoch_times_s"]) for r in (short, long)]
    return {"train_s": statistics.median(long["epoch_times_s"]), "rest_s": (rest[1] - rest[0]) / args.epochs,
            "device": long.get("device")}


def config_schedule(case: tuple) -> tuple[int, int] | None:
    """``(epochs, eval_every)`` of one seed of the shipped grid, as this checkout resolves the case's config."""
    try:
        from hypergvl.models.config import resolve_config
    except ImportError:
        return None
    task, model, dataset, protocol = case
    overrides = (f"task.protocol={protocol}",) if task == "graph" else ()
    trainer = resolve_config(model, "graph" if task == "graph" else "node", dataset, overrides=overrides).trainer
    return trainer.epochs, trainer.eval_every


def table(rows: list[dict], before: str, after: str) -> str:
    lines = [f"| task | dataset | model | before {before[:7]}: train / eval s per epoch | after {after[:7]}: train / "
             f"eval s per epoch | before / after (train) | before / after (projected run) | epochs, eval every | "
             f"projected run before | projected run after |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b, a = r["before"], r["after"]
        if "error" in b or "error" in a:
            lines.append(f"| {r['task']} | {r['dataset']} | {r['model']} | {b.get('error', '')} | "
                         f"{a.get('error', '')} | - | - | - | - | - |")
            continue
        epochs, every = r["schedule"] or (1, 1)
        run_b, run_a = (epochs * s["train_s"] + epochs // every * s["rest_s"] for s in (b, a))
        schedule = f"{epochs}, {every}" if r["schedule"] else "- (one epoch)"
        lines.append(f"| {r['task']} | {r['dataset']} | {r['model']} | {b['train_s']:.3f} / {b['rest_s']:.3f} | "
                     f"{a['train_s']:.3f} / {a['rest_s']:.3f} | {b['train_s'] / a['train_s']:.2f}x | "
                     f"{run_b / run_a:.2f}x | {schedule} | {run_b:,.0f} s | {run_a:,.0f} s |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", default=BEFORE, help=f"the code before the speed work (default {BEFORE})")
    p.add_argument("--after", default="HEAD", help="the new commit (default HEAD; uncommitted edits are not timed)")
    p.add_argument("--cases", nargs="+", type=parse_case, default=list(CASES),
                   help="bail:MODEL or graph:MODEL:DATASET[:paper|standard] (default: the eight above)")
    p.add_argument("--epochs", type=int, default=3,
                   help="epochs of the shorter timed run; the longer has twice as many (default 3)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--raw-root", default=os.environ.get("HYPERGVL_RAW_ROOT"),
                   help="raw data laid out like ../shared/data (default $HYPERGVL_RAW_ROOT)")
    p.add_argument("--timeout-s", type=float, default=1800, help="per subprocess (default 1800)")
    p.add_argument("--out", type=Path, default=None, help="also write the table as Markdown here")
    args = p.parse_args(argv)
    if args.epochs < 2:
        p.error("--epochs must be at least 2 (the median training epoch needs more than the first)")
    work = Path(tempfile.mkdtemp(prefix="speed_since_"))
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = os.getloadavg()[0]
    try:
        sides = {"before": export(args.before, work / "trees")}
        sides["after"] = export(args.after, work / "after")
        if sides["after"][0] == sides["before"][0]:
            p.error(f"--before and --after are the same commit ({sides['after'][0][:7]})")
        rows = []
        for i, case in enumerate(args.cases):
            row = {"task": f"graph ({case[3]})" if case[0] == "graph" else "fairness", "model": case[1],
                   "dataset": case[2],
                   "schedule": config_schedule(case)}
            for side, (sha, tree) in sides.items():
                out = work / "runs" / f"{i}-{side}"
                try:
                    row[side] = time_case(tree, case, args, out)
                except (RuntimeError, subprocess.TimeoutExpired) as exc:
                    row[side] = {"error": str(exc).replace("|", "/")}
                print(f"{row['task']} {case[2]} {case[1]} {side} {sha[:7]}: {row[side]}", file=sys.stderr, flush=True)
            rows.append(row)
        text = table(rows, sides["before"][0], sides["after"][0])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(text, end="")
    if args.out:
        command = "python benchmarks/speed_since.py " + " ".join(argv if argv is not None else sys.argv[1:])
        args.out.write_text(
            f"# The slowest DHG-Bench runs: time per epoch at {sides['before'][0][:7]} and {sides['after'][0][:7]}\n\n"
            f"`{command}`, started {started}, {args.threads} torch thread(s), {args.epochs} epochs per timed run, "
            f"load average {load:.1f} at the start ({os.cpu_count()} cores). Method: the docstring of "
            f"`benchmarks/speed_since.py`.\n\n" + text)
    return 1 if any("error" in r["before"] or "error" in r["after"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
