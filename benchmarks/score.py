"""Scoring speed: 84,000 HyperGVL responses through ``evaluate.load("evaluators/hypergvl_accuracy")``, beside the
scorer version 1 parser measured in the same run.

HyperGVL has 2,400 meta problems x 35 representation pairs = 84,000 samples, so each row reference appears 35
times. The metric parses each distinct reference once and verifies each distinct (reference, response) pair
once. Measured in the same run, on the same samples:

* scorer version 1: the same metric with every task's parser replaced by a frozen copy of the version 1 parser
  (``V1_SOURCE`` below, verbatim from ``hypergvl_dataset/answers.py`` before the version 2 grading rules); the bar
  is a version 2 run no more than 1.5x slower;
* naive: ``score_response(json.loads(reference), response)`` per sample, re-parsing the reference every time;
* per-call: ``score_response(reference, response)`` per sample (the core memoises parsed reference strings).

The responses are a seeded, hostile mix of the ways models answer: a bare "Ans: X", verbose reasoning ending in
"Ans: X", a bare answer, no answer, a long closed ``<think>`` block full of names, numbers and guessed answers
followed by a Markdown answer, reasoning cut inside an open ``<think>``, the question echoed with format
templates, a restated question with a Markdown table, and 5-30 KB of brackets, names and digits before the answer;
X is the right answer or another problem's answer of the same task.

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

from hypergvl.answers import SCORER_VERSION
from hypergvl.tasks import TASKS, Task, Verdict, generate_problem, score_response

METRIC = str(Path(__file__).resolve().parents[1] / "evaluators" / "hypergvl_accuracy")
SCALES = ("small", "medium", "medium", "large")  # the paper's 1:2:1 scale ratio
NOISE = ("{v1,", "(e2[", "]) ", "12 ", "v3:c1 ", "Ans", "<think", " no ", "**", "：")


def build(problems: int, reps: int, seed: int) -> tuple[list[str], list[str]]:
    """``problems`` meta problems spread over the 12 tasks, ``reps`` responses each."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in tqdm(range(problems), desc="generating meta problems", unit="problem"):
        code = list(TASKS)[i % len(TASKS)]
        rows.append(generate_problem(code, seed + i, SCALES[(i // len(TASKS)) % len(SCALES)]))
    by_task: dict[str, list[str]] = {}
    for row in rows:
        by_task.setdefault(row["task"], []).append(row["answer"])

    def names(k: int) -> str:
        return " ".join(f"v{rng.integers(20)} is in e{rng.integers(30)} (order {rng.integers(2, 6)})."
                        for _ in range(k))

    predictions, references = [], []
    for row in rows:
        others = by_task[row["task"]]
        for _ in range(reps):
            answer = row["answer"] if rng.random() < 0.4 else others[rng.integers(len(others))]
            kind = rng.integers(9)
            if kind == 0:
                text = f"Ans: {answer}"
            elif kind == 1:
                text = f"Let me look at the hypergraph. {names(int(rng.integers(3, 12)))} So the result follows. Ans: {answer}"
            elif kind == 2:
                text = answer
            elif kind == 3:
                text = "I cannot determine this from the description."
            elif kind == 4:
                guesses = " ".join(f"Maybe Ans: {others[rng.integers(len(others))]}? {names(4)}" for _ in range(6))
                text = f"<think>\n{guesses}\nSo 3 + 2 = 5, or 4?\n</think>\n\n**Ans:** **{answer}**"
            elif kind == 5:
                text = f"<think>\n{names(10)} so maybe Ans: {answer}? no wait, let me re-check e{rng.integers(30)}"
            elif kind == 6:
                text = f"{row['question']}\nAns: {{v1,v2,...}} [Yes/No] Cycle:[e0,e1,…]"
            elif kind == 7:
                table = "\n".join(f"| e{i} | v{rng.integers(20)}, v{rng.integers(20)} | {rng.integers(2, 6)} |"
                                  for i in range(8))
                text = f"{row['question'][3:]}\n\n| hyperedge | vertices | order |\n|---|---|---|\n{table}\n\nAns: {answer}"
            else:
                noise = "".join(rng.choice(NOISE, size=int(rng.integers(1000, 6000))))
                text = f"{noise}\nAns: {answer}"
            predictions.append(text)
            references.append(row["reference"])
    return predictions, references


# ------------------------------------------------------------------ frozen copy: the scorer version 1 parser
V1_SOURCE = r'''
_THINK_END = "</think>"
_INT = re.compile(r"-?\d+")
_VERT = re.compile(r"\bv(\d+)\b", re.IGNORECASE)
_EDGE = re.compile(r"\be(\d+)\b", re.IGNORECASE)
_GROUP = re.compile(r"[\[{(]([^\[\]{}()]*)[\]})]")
_YESNO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_EMPTY = re.compile(r"\W*(no\b|none\b|empty\b|nothing\b|\{\s*\}|\[\s*\]|∅)", re.IGNORECASE)
_NO_PATH = re.compile(r"\W*no\s+path\b", re.IGNORECASE)
_COLOUR = re.compile(r"\bv(\d+)\s*[:=]\s*c?([0-9]+)\b", re.IGNORECASE)


def answer_region(response: object) -> tuple[str, bool]:
    """(text to read the answer from, whether it follows an explicit ``Ans:``)."""
    if not isinstance(response, str):
        return "", False
    text = response
    end = text.rfind(_THINK_END)
    if end >= 0:
        text = text[end + len(_THINK_END):]
    else:
        start = text.find("<think>")
        if start >= 0:
            text = text[:start]  # unfinished reasoning: only what precedes it can be an answer
    lower = text.lower()
    best = -1
    for marker in ("ans:", "answer:"):
        at = lower.rfind(marker)
        if at >= 0:
            best = max(best, at + len(marker))
    if best >= 0:
        return text[best:].strip(), True
    return text.strip(), False


def _to_int(token: str) -> int | str:
    digits = token.lstrip("-")
    if len(digits) > MAX_DIGITS:
        return "overflow"
    return int(token)


def parse_int(response: object, allow_no_path: bool = False) -> int | str | None:
    """First integer after ``Ans:`` (else the last one in the response); ``"No path"`` when allowed."""
    region, anchored = answer_region(response)
    if allow_no_path and _NO_PATH.match(region):
        return "No path"
    if anchored:
        m = _INT.search(region)
        return _to_int(m.group()) if m else None
    last = None
    for last in _INT.finditer(region):
        pass
    if allow_no_path and last is None and re.search(r"\bno\s+path\b", region, re.IGNORECASE):
        return "No path"
    return _to_int(last.group()) if last else None


def _ids(pattern: re.Pattern, text: str) -> list[int]:
    return [int(x) if len(x) <= MAX_DIGITS else -1 for x in pattern.findall(text)]


def parse_vertex_set(response: object) -> frozenset[int] | None:
    """A set of vertex ids: ``{v1,v2}``, ``[v1, v2]``, ``v1 and v2``; ``No neighbors`` is the empty set."""
    region, anchored = answer_region(response)
    if anchored:
        if _EMPTY.match(region):
            return frozenset()
        group = _GROUP.search(region)
        if group:
            return frozenset(_ids(_VERT, group.group(1)))
        first_line = region.split("\n", 1)[0]
        ids = _ids(_VERT, first_line)
        return frozenset(ids) if ids else None
    groups = [g for g in _GROUP.findall(region) if _VERT.search(g) or not g.strip()]
    if groups:
        return frozenset(_ids(_VERT, groups[-1]))
    if re.search(r"\bno (n-)?neighbou?rs\b", region, re.IGNORECASE):
        return frozenset()
    return None


def parse_yes_no(response: object) -> str | None:
    region, anchored = answer_region(response)
    found = _YESNO.search(region) if anchored else None
    if not anchored:
        for found in _YESNO.finditer(region):
            pass
    return found.group(1).capitalize() if found else None


def parse_coloring(response: object) -> dict[int, int] | list | None:
    """``Coloring:[v0:c0,v1:c1,...]`` → {vertex: colour}; a vertex given twice yields an invalid (list) answer."""
    region, anchored = answer_region(response)
    if not anchored:
        at = region.lower().rfind("coloring")
        if at < 0:
            return None
        region = region[at:]
    pairs = [(int(v) if len(v) <= MAX_DIGITS else -1, int(c) if len(c) <= MAX_DIGITS else -1)
             for v, c in _COLOUR.findall(region)]
    if not pairs:
        return None
    colouring = dict(pairs)
    return colouring if len(colouring) == len(pairs) else pairs


def parse_edge_sequence(response: object, marker: str) -> list[int] | None:
    """``Cycle:[e0,e3,e2]`` / ``Path:[e0,e1]`` → hyperedge ids in order."""
    region, anchored = answer_region(response)
    lower = region.lower()
    at = lower.rfind(marker.lower())
    if at >= 0:
        region = region[at + len(marker):]
    elif not anchored:
        return None
    group = _GROUP.search(region)
    ids = _ids(_EDGE, group.group(1) if group else region.split("\n", 1)[0])
    return ids or None
'''
V1: dict = {}
exec(compile("import re\nMAX_DIGITS = 12\n" + V1_SOURCE, "scorer-v1-answers", "exec"), V1)  # noqa: S102 (our code)
V1_PARSE = {
    **{code: V1["parse_int"] for code in ("VC", "HEC", "DVC", "OEC", "OMF")},
    "OSP": lambda r: V1["parse_int"](r, allow_no_path=True),
    "Ne": V1["parse_vertex_set"], "ONe": V1["parse_vertex_set"], "ISM": V1["parse_yes_no"],
    "3-CL": V1["parse_coloring"],
    "SHC": lambda r: V1["parse_edge_sequence"](r, "cycle:"), "HHM": lambda r: V1["parse_edge_sequence"](r, "path:"),
}


def v1_verify(task: Task, ref, response: str) -> Verdict:
    """Version 1's Task.verify: its parser, then the task's check (the checks cost the same in both versions)."""
    parsed = V1_PARSE[task.code](response)
    if parsed is None:
        return Verdict(False, True, None)
    return Verdict(bool(task.check(parsed, ref)), False, task.canonical(parsed))


def timed_compute(predictions: list[str], references: list[str], v1: bool) -> tuple[float, dict]:
    """Seconds of one ``metric.compute`` (and its result), with the version 1 parser when ``v1``."""
    metric = evaluate.load(METRIC)
    if v1:
        for task in TASKS.values():
            task.verify = (lambda t: lambda ref, response: v1_verify(t, ref, response))(task)
    try:
        start = time.perf_counter()
        result = metric.compute(predictions=predictions, references=references)
        return time.perf_counter() - start, result
    finally:
        for task in TASKS.values():
            task.__dict__.pop("verify", None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=2400, help="distinct meta problems (paper: 2,400)")
    parser.add_argument("--reps", type=int, default=35, help="responses per problem (paper: 7 x 5 = 35)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=2, help="timed runs of each parser (the best counts)")
    args = parser.parse_args()

    predictions, references = build(args.problems, args.reps, args.seed)
    n = len(predictions)
    print(f"samples: {n:,} ({len(set(references)):,} distinct references, "
          f"{len(set(zip(references, predictions))):,} distinct (reference, response) pairs, "
          f"{sum(map(len, predictions)) / 1e6:.1f} M characters)")

    v1_times, times = [], []
    for _ in range(args.repeat):  # interleaved, best of each: neither parser pays for a cold start alone
        v1_time, v1_result = timed_compute(predictions, references, v1=True)
        fast, result = timed_compute(predictions, references, v1=False)
        v1_times.append(v1_time)
        times.append(fast)
    v1_time, fast = min(v1_times), min(times)

    start = time.perf_counter()
    naive_correct = sum(score_response(json.loads(r), p).correct for r, p in zip(references, predictions))
    naive = time.perf_counter() - start

    start = time.perf_counter()
    per_call_correct = sum(score_response(r, p).correct for r, p in zip(references, predictions))
    per_call = time.perf_counter() - start

    agree = round(100.0 * naive_correct / n, 9) == round(result["accuracy"], 9) and naive_correct == per_call_correct
    label = f"hypergvl_accuracy, scorer version {SCORER_VERSION}"
    print(f"best of {args.repeat} interleaved runs each")
    print(f"{label:48s} {fast:7.2f} s  {1e6 * fast / n:7.1f} us/sample")
    print(f"{'the same metric, scorer version 1 parser':48s} {v1_time:7.2f} s  {1e6 * v1_time / n:7.1f} us/sample"
          f"  ratio v{SCORER_VERSION}/v1 = {fast / v1_time:.2f}x (bar: 1.5x)")
    print(f"{'naive loop (reference re-parsed per sample)':48s} {naive:7.2f} s  {1e6 * naive / n:7.1f} us/sample"
          f"  ratio naive/metric = {naive / fast:.1f}x")
    print(f"{'per-call score_response (core memo by string)':48s} {per_call:7.2f} s  {1e6 * per_call / n:7.1f} "
          f"us/sample  ratio per-call/metric = {per_call / fast:.1f}x")
    for name, r in ((f"v{SCORER_VERSION}", result), ("v1", v1_result)):
        print(f"scorer {name}: accuracy {r['accuracy']:.2f}%  Avg.U {r['avg_u']:.2f}  Avg.R {r['avg_r']:.2f}  "
              f"unparsed {r['unparsed_rate']:.2f}%")
    print(f"version {SCORER_VERSION}: same verdicts as the per-sample loops: {agree}")


if __name__ == "__main__":
    main()
