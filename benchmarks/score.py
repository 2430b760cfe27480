"""Scoring speed: 84,000 HyperGVL responses through ``evaluate.load("evaluators/hypergvl_accuracy")``.

HyperGVL has 2,400 meta problems x 35 representation pairs = 84,000 samples, so each row reference appears 35
times. The metric parses each distinct reference once and verifies each distinct (reference, response) pair
once. References measured in the same run:

* naive: ``score_response(json.loads(reference), response)`` per sample, re-parsing the reference every time;
* per-call: ``score_response(reference, response)`` per sample (the core memoises parsed reference strings).

Responses are a seeded mix of formats: bare "Ans: X", verbose reasoning ending in "Ans: X" (unique text), a bare
answer, and no answer at all, with X the right answer or another problem's answer of the same task.

    .venv/bin/python benchmarks/score.py            # full size; --problems 240 for a quick run
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import evaluate
import numpy as np
from tqdm import tqdm

from hypergvl_dataset.tasks import TASKS, score_response

METRIC = str(Path(__file__).resolve().parents[1] / "evaluators" / "hypergvl_accuracy")
SCALES = ("small", "medium", "medium", "large")  # the paper's 1:2:1 scale ratio


def build(problems: int, reps: int, seed: int) -> tuple[list[str], list[str]]:
    """``problems`` meta problems spread over the 12 tasks, ``reps`` responses each."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in tqdm(range(problems), desc="generating meta problems", unit="problem"):
        code = list(TASKS)[i % len(TASKS)]
        rows.append(TASKS[code].generate(seed + i, SCALES[(i // len(TASKS)) % len(SCALES)]))
    by_task: dict[str, list[str]] = {}
    for row in rows:
        by_task.setdefault(row["task"], []).append(row["answer"])
    predictions, references = [], []
    for row in rows:
        others = by_task[row["task"]]
        for _ in range(reps):
            answer = row["answer"] if rng.random() < 0.4 else others[rng.integers(len(others))]
            kind = rng.integers(4)
            if kind == 0:
                text = f"Ans: {answer}"
            elif kind == 1:
                steps = " ".join(f"v{rng.integers(20)} is in e{rng.integers(30)}." for _ in range(rng.integers(3, 12)))
                text = f"Let me look at the hypergraph. {steps} So the result follows. Ans: {answer}"
            elif kind == 2:
                text = answer
            else:
                text = "I cannot determine this from the description."
            predictions.append(text)
            references.append(row["reference"])
    return predictions, references


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=2400, help="distinct meta problems (paper: 2,400)")
    parser.add_argument("--reps", type=int, default=35, help="responses per problem (paper: 7 x 5 = 35)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    predictions, references = build(args.problems, args.reps, args.seed)
    n = len(predictions)
    print(f"samples: {n:,} ({len(set(references)):,} distinct references, "
          f"{len(set(zip(references, predictions))):,} distinct (reference, response) pairs)")

    metric = evaluate.load(METRIC)
    start = time.perf_counter()
    result = metric.compute(predictions=predictions, references=references)
    fast = time.perf_counter() - start

    start = time.perf_counter()
    naive_correct = sum(score_response(json.loads(r), p).correct for r, p in zip(references, predictions))
    naive = time.perf_counter() - start

    start = time.perf_counter()
    per_call_correct = sum(score_response(r, p).correct for r, p in zip(references, predictions))
    per_call = time.perf_counter() - start

    agree = round(100.0 * naive_correct / n, 9) == round(result["accuracy"], 9) and naive_correct == per_call_correct
    print(f"{'hypergvl_accuracy (evaluate compute)':48s} {fast:7.2f} s  {1e6 * fast / n:7.1f} us/sample")
    print(f"{'naive loop (reference re-parsed per sample)':48s} {naive:7.2f} s  {1e6 * naive / n:7.1f} us/sample"
          f"  ratio naive/metric = {naive / fast:.1f}x")
    print(f"{'per-call score_response (core memo by string)':48s} {per_call:7.2f} s  {1e6 * per_call / n:7.1f} "
          f"us/sample  ratio per-call/metric = {per_call / fast:.1f}x")
    print(f"accuracy {result['accuracy']:.2f}%  Avg.U {result['avg_u']:.2f}  Avg.R {result['avg_r']:.2f}  "
          f"unparsed {result['unparsed_rate']:.2f}%  same verdicts as the loops: {agree}")


if __name__ == "__main__":
    main()
