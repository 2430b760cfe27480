"""Where a DHG-Bench model's Cora epoch goes, and what one robustness point and the whole RQ3 grid cost on one core.

Issue 61 plans the robustness grid (10 models x 50 perturbation settings x 5 seeds on Cora) from per-run costs.
The shipped points' ``efficiency.epoch_time_s`` is wall-clock time taken while other jobs shared the 2 cores, so it
overstates a core's work (DPHGNN 1.37-1.77 s, AllSetTransformer 0.74-1.34 s against about 0.3 s of CPU each). This
script measures CPU time (``time.process_time`` of this one-thread process, which other jobs' load does not inflate):

* per model (its Cora node config, ``models/configs/<Model>.yaml``; built as ``benchmarks/dhgbench_reference.py``
  builds ours, the trainer's optimiser): the median training epoch (zero_grad, forward, cross-entropy on the
  protocol's train split, backward, step) and the median evaluation forward (eval mode, no grad), after ``--warmup``;
* ``--profile``: one profiled training epoch (``torch.profiler``), the operators with the largest self CPU time and
  their share, so a speed-up can aim at them;
* the cost of one robustness point, ``epochs x (train + eval / eval_every)`` from the config, and of the grid
  (every perturbation's ratios from :mod:`hypergvl.models.perturb`, ``--seeds`` seeds), in core-hours. Perturbed
  data (feature noise fills the sparse features in) can cost more than the clean set timed here: ``--perturb
  KIND:RATIO`` times a perturbed copy instead.

    OMP_NUM_THREADS=1 python benchmarks/hnn_epoch_speed.py --models DPHGNN AllSetTransformer SheafHyperGNN HGNN --profile
    OMP_NUM_THREADS=1 python benchmarks/hnn_epoch_speed.py --models DPHGNN --perturb feature_noise:0.9
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from hypergvl.models import perturb as P
from hypergvl.models.study.common import load_node_dataset
from hypergvl.models.study.robustness import make_hook
from hypergvl.models.trainer import make_optimizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dhgbench_reference import build_ours, our_config  # noqa: E402
from epoch_time import default_raw_root, split  # noqa: E402

MODELS = ("DPHGNN", "AllSetTransformer", "SheafHyperGNN", "HGNN")


def load(raw_root: Path, perturbation: str | None):
    """Cora as a robustness point trains on it: loaded as the study loads it, perturbed with seed 0 (``KIND:RATIO``,
    default none: ``remove_incidence:0``) on a train split of half the nodes (``epoch_time.split``, the protocol's
    size), then the singleton hyperedges added, by the study's own hook
    (:func:`hypergvl.models.study.robustness.make_hook`)."""
    kind, ratio = (perturbation or "remove_incidence:0").split(":")
    data, _ = load_node_dataset("cora", str(raw_root), add_self_loops=False)
    train, _ = split(data.num_nodes, 0)
    options = {"by": "column"} if kind == "feature_mask" else {}
    data, parts, _ = make_hook(kind, float(ratio), perturb_self_loops=False, options=options)(data, {"train": train}, 0)
    return data.x, data.y, data.hyperedge_index, data.num_hyperedges, parts["train"]


def measure(name: str, batch: tuple, args: argparse.Namespace) -> dict:
    x, y, hyperedge_index, num_hyperedges, train = batch
    model = build_ours(name, x.shape[1], int(y.max()) + 1, 0, (x, hyperedge_index, num_hyperedges))
    cfg = our_config(name).trainer
    optimizer = make_optimizer(model.parameters(), cfg)

    def epoch() -> None:
        model.train()
        optimizer.zero_grad()
        F.cross_entropy(model(x, hyperedge_index, num_hyperedges)[train], y[train]).backward()
        optimizer.step()

    def evaluate() -> None:
        model.eval()
        with torch.no_grad():
            model(x, hyperedge_index, num_hyperedges)

    def timed(fn) -> float:
        for _ in range(args.warmup):
            fn()
        times = []
        for _ in range(args.epochs):
            start = time.process_time()
            fn()
            times.append(time.process_time() - start)
        return statistics.median(times)

    row = {"model": name, "train_s": timed(epoch), "eval_s": timed(evaluate), "epochs": cfg.epochs,
           "eval_every": cfg.eval_every, "ops": []}
    if args.profile:
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            epoch()
        events = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
        total = sum(e.self_cpu_time_total for e in events)
        row["ops"] = [(e.key, e.self_cpu_time_total / 1e6, e.self_cpu_time_total / total) for e in events[:6]]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--epochs", type=int, default=5, help="timed epochs (and evaluations) per model")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=5, help="seeds per grid cell")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--perturb", default=None, metavar="KIND:RATIO")
    parser.add_argument("--raw-root", type=Path, default=default_raw_root())
    parser.add_argument("--out", type=Path, default=None, help="also write the table as Markdown here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    settings = sum(len(p.grid) for p in P.PERTURBATIONS.values())
    batch = load(args.raw_root, args.perturb)
    lines = [(f"Cora{' ' + args.perturb if args.perturb else ''}, one thread, CPU time (median of {args.epochs}); "
              f"grid: {settings} perturbation settings x {args.seeds} seeds"),
             f"{'model':<20}{'train s/ep':>11}{'eval s':>9}{'epochs':>7}{'point s':>9}{'grid core-h':>12}"]
    print("\n".join(lines), flush=True)
    total = 0.0
    for name in args.models:
        r = measure(name, batch, args)
        point = r["epochs"] * (r["train_s"] + r["eval_s"] / r["eval_every"])
        grid_h = point * settings * args.seeds / 3600
        total += grid_h
        rows = [f"{name:<20}{r['train_s']:>11.3f}{r['eval_s']:>9.3f}{r['epochs']:>7}{point:>9.1f}{grid_h:>12.2f}"]
        rows += [f"    {share:6.1%} {seconds:7.3f} s  {op}" for op, seconds, share in r["ops"]]
        print("\n".join(rows), flush=True)
        lines += rows
    lines.append(f"{'total':<56}{total:>12.2f}")
    print(lines[-1])
    if args.out:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=False, capture_output=True,
                                text=True, cwd=Path(__file__).parent).stdout.strip() or "unknown"
        command = "python benchmarks/hnn_epoch_speed.py " + " ".join(argv if argv is not None else sys.argv[1:])
        loadavg = " ".join(f"{v:.2f}" for v in os.getloadavg())
        args.out.write_text(f"Commit `{commit}`, `{command}`, load average {loadavg} (1, 5, 15 min) at the end.\n\n"
                            "```\n" + "\n".join(lines) + "\n```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
