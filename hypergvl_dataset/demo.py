"""``make demo``: build a small HyperGVL benchmark, score the two baselines on it, print the Table 3-style report.

    hypergvl demo [--out demo_out] [--per-task 4]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .cli import main as hypergvl


def run(argv: list[str]) -> None:
    print("$ hypergvl " + " ".join(argv), flush=True)
    rc = hypergvl(argv)
    if rc:
        sys.exit(rc)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="hypergvl demo", description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("demo_out"))
    p.add_argument("--per-task", type=int, default=4)
    args = p.parse_args(argv)
    bench = args.out / "hypergvl"
    run(["sample", "--task", "HHM", "--seed", "0", "--scale", "small"])
    run(["build", "--out", str(bench), "--per-task", str(args.per_task)])
    for model in ("symbolic", "random"):
        run(["evaluate", "--dataset", str(bench), "--model", f"baseline:{model}", "--out",
             str(args.out / f"eval-{model}")])
    run(["report", str(args.out / "eval-symbolic"), str(args.out / "eval-random"), "--out", str(args.out / "report")])
    print(f"\nThe benchmark is in {bench}. Load it with:\n"
          f"    cd {bench.resolve().parent} && python -c \"from datasets import load_dataset; "
          f"print(load_dataset('hypergvl', split='test'))\"\n"
          f"Report and heatmaps: {args.out / 'report'}")


if __name__ == "__main__":
    main()
