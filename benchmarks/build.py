"""Wall time and peak memory of `hypergvl build`, at two sizes, to show memory stays flat in the problem count.

Each build runs in a fresh subprocess; peak RSS is the largest resident set of that process or any of its worker
processes (``getrusage(RUSAGE_CHILDREN).ru_maxrss``, one figure per build because each build uses a fresh
grandparent process). Reference in the same run: the small build.

    .venv/bin/python benchmarks/build.py [--sizes 20 200] [--workers 2] [--keep DIR] [--tasks CODE ...]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """
import resource, subprocess, sys, time
t = time.perf_counter()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def run(per_task: int, out: Path, workers: int, tasks: list[str] | None = None) -> tuple[float, float, float]:
    cmd = [sys.executable, "-c", PROBE, sys.executable, "-m", "hypergvl", "build", "--out", str(out),
           "--per-task", str(per_task), "--workers", str(workers), "--no-progress",
           *(["--tasks", *tasks] if tasks else [])]
    wall, rss_kib = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
    size = sum(p.stat().st_size for p in out.rglob("*.parquet")) / 2**20
    return float(wall), float(rss_kib) / 1024, size


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[20, 200], help="meta problems per task")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--keep", type=Path, help="keep the largest build here")
    p.add_argument("--tasks", nargs="+", metavar="CODE", help="build these tasks only (default: all 12)")
    args = p.parse_args()
    n_tasks = len(args.tasks) if args.tasks else 12
    tmp = Path(tempfile.mkdtemp(prefix="hypergvl-build-bench-"))
    rows = []
    for n in args.sizes:
        out = tmp / f"b{n}" / "hypergvl"
        wall, rss, mib = run(n, out, args.workers, args.tasks)
        rows.append((n, wall, rss, mib))
        print(f"--per-task {n:4d} ({n_tasks * n:5d} meta problems, {35 * n_tasks * n:6d} QA samples): "
              f"wall {wall:7.1f} s, {n_tasks * n / wall:5.1f} problems/s, peak RSS {rss:6.0f} MiB, "
              f"parquet {mib:6.1f} MiB", flush=True)
    (n0, w0, r0, _), (n1, w1, r1, _) = rows[0], rows[-1]
    print(f"{n1 / n0:.0f}x the problems: {w1 / w0:.1f}x the time, {r1 / r0:.2f}x the peak memory "
          f"({args.workers} workers)")
    if args.keep:
        shutil.rmtree(args.keep, ignore_errors=True)
        shutil.move(str(tmp / f"b{n1}" / "hypergvl"), str(args.keep))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
