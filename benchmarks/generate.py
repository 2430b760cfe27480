"""Generate and solve 2,400 meta problems (12 tasks x 200, no rendering); print problems/s and the slowest.

Reference in the same run: the same rows with the answers re-derived by the independent networkx/brute-force
checker of the test suite (tests/hypergvl_checker.py), printed as a ratio.

    .venv/bin/python benchmarks/generate.py [--per-task 200] [--source synthetic]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from hypergvl.paper import PAPER_TASKS  # noqa: E402
from hypergvl.tasks import generate_problem  # noqa: E402

SCALE_MIX = ["small", "medium", "medium", "large"]  # 1:2:1


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--per-task", type=int, default=200)
    p.add_argument("--source", choices=["synthetic", "real"], default="synthetic")
    args = p.parse_args()
    import hypergvl_checker

    rows, slowest, per_task = [], (0.0, ""), {}
    start = time.perf_counter()
    for code in PAPER_TASKS:
        t_task = time.perf_counter()
        for i in range(args.per_task):
            t0 = time.perf_counter()
            row = generate_problem(code, 0, SCALE_MIX[i % 4], args.source, index=i)
            dt = time.perf_counter() - t0
            if dt > slowest[0]:
                slowest = (dt, f"{row['id']} ({row['scale']}, {row['num_vertices']} vertices, "
                               f"{row['num_hyperedges']} hyperedges)")
            rows.append(row)
        per_task[code] = (time.perf_counter() - t_task) / args.per_task
    total = time.perf_counter() - start
    t0 = time.perf_counter()
    for row in rows:
        hypergvl_checker.check_row(row)
    ref = time.perf_counter() - t0
    print(f"{len(rows)} meta problems in {total:.2f} s: {len(rows) / total:.0f} problems/s (one core)")
    print("per task (ms/problem): " + ", ".join(f"{c} {1000 * t:.1f}" for c, t in per_task.items()))
    print(f"slowest instance: {1000 * slowest[0]:.1f} ms  {slowest[1]}")
    print(f"reference: re-deriving/checking the same rows independently (networkx, brute force) took {ref:.2f} s; "
          f"ratio generate+solve / check = {total / ref:.1f}")


if __name__ == "__main__":
    main()
