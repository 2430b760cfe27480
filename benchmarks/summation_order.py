"""Does a row retrain to the digit on another CPU? The same seed and config trained with 1 and with 2 torch threads.

Why (issue 61): DPHGNN's Cora node points under DHG-Bench's code behaviour (``model.star=directed
model.dropout_mode=dhgbench model.hgconv_degree=dhgbench``) were trained on 2026-12-05 at commit 00db7f3 with one
thread and end at 73.26-80.80 (``benchmarks/results/points/DPHGNN/cora/node+dhgbench``). The same command at the same
commit on this session's machine (AMD EPYC, one thread) ends seed 0 at 62.19 instead of 78.29, and every part of
the pipeline is bitwise the same as the reproduction's for the stable models (SheafHyperGNN's and PhenomNN's
robustness clean cells equal their reproduction points seed for seed). The number of threads changes only the order
in which torch sums floating-point values (its reductions split over threads), not the data, split, initial
weights or dropout draws, so training one seed at 1 and 2 threads measures how far that order alone moves a row:
the only difference between one CPU and another that a deterministic pipeline leaves.

Protocol: ``hypergvl.models.trainer.run_experiment`` (the reproduction's own call, ``benchmarks/reproduce_dhgbench.py``
``run_row``), node classification on Cora from ``--raw-root``, per model and seed once with ``torch.set_num_threads(1)``
and once with 2 threads, in one process (each run builds its model and data afresh from the seed). A stable model
(HGNN) is the control: its two runs should agree to the printed digit.

    .venv/bin/python benchmarks/summation_order.py --raw-root ../shared/data [--seeds 0 1 2] [--models DPHGNN]
        [--epochs N] [--out benchmarks/results/summation_order.md]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reproduce_dhgbench import REFERENCE_BEHAVIOURS  # noqa: E402

#: (label, model, options): DPHGNN in both behaviours, HGNN as the stable control
RUNS = (("HGNN", "HGNN", ()), ("DPHGNN (default)", "DPHGNN", ()),
        ("DPHGNN (DHG-Bench's code: " + " ".join(REFERENCE_BEHAVIOURS["DPHGNN"]["node"]) + ")", "DPHGNN",
         REFERENCE_BEHAVIOURS["DPHGNN"]["node"]))
THREADS = (1, 2)


def accuracy(model: str, options: tuple, seed: int, threads: int, raw_root: str, dataset: str = "cora",
             extra: tuple = ()) -> float:
    """Test accuracy (%) of one node-classification run of ``model`` on ``dataset`` at ``threads`` torch threads."""
    import torch

    from hypergvl.models.trainer import run_experiment

    before = torch.get_num_threads()  # the caller's (a test process's) setting is put back after the run
    torch.set_num_threads(threads)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            s = run_experiment(model, dataset, "node", out=Path(tmp), runs=1, seeds=[seed],
                               overrides=list(options) + list(extra), raw_root=raw_root, progress=False)
    finally:
        torch.set_num_threads(before)
    return s["runs"][0]["metrics"]["test"]["accuracy"]


def table(rows: list[tuple[str, int, list[float]]]) -> str:
    out = ["| model | seed | " + " | ".join(f"{t} thread{'s' * (t > 1)}" for t in THREADS) + " | difference |",
           "|---|---|" + "---|" * (len(THREADS) + 1)]
    for label, seed, accs in rows:
        out.append(f"| {label} | {seed} | " + " | ".join(f"{a:.2f}" for a in accs)
                   + f" | {accs[-1] - accs[0]:+.2f} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--raw-root", default="../shared/data")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--models", nargs="+", default=None, help="only these models (default: HGNN and DPHGNN)")
    ap.add_argument("--epochs", type=int, default=None, help="train this many epochs (default: the configs' 100)")
    ap.add_argument("--out", type=Path, default=None, help="write the Markdown table here (default: print it)")
    args = ap.parse_args(argv)
    from hypergvl.provenance import provenance

    prov = provenance(None)
    rows = []
    extra = (f"epochs={args.epochs}",) if args.epochs else ()
    for label, model, options in RUNS:
        if args.models and model not in args.models:
            continue
        for seed in args.seeds:
            rows.append((label, seed, [accuracy(model, options, seed, t, args.raw_root, extra=extra)
                                       for t in THREADS]))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    text = "\n".join([
        "# One seed, 1 and 2 torch threads (benchmarks/summation_order.py)", "",
        f"Commit {prov['commit'][:7]}{' (dirty)' if prov['dirty'] else ''}; command: `python "
        f"benchmarks/summation_order.py --raw-root ../shared/data --seeds {' '.join(map(str, args.seeds))}"
        + (f" --models {' '.join(args.models)}" if args.models else "")
        + (f" --epochs {args.epochs}" if args.epochs else "") + "`"
        "; Cora node classification, the reproduction's configs (100 epochs unless `--epochs`; the last epoch), test "
        "accuracy %.", "",
        table(rows), ""])
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
