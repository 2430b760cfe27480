"""Worst-case grading time: the slowest adversarial response of each task at the Space's size limit, graded by
today's parser beside the parser before the linear-time rewrite, measured in the same run.

A degenerate model output (runs of blanks, brackets, digits, repeated ``Ans:``) reaches the same grader in
``hypergvl evaluate``, ``hypergvl score`` and the Space. Before the rewrite, ``answers._HEDGE_AFTER`` and its
siblings (``[ \\t]*\\)?[ \\t]*,?[ \\t]*...``: optional runs over the same characters) backtracked polynomially after a
number followed by blanks: 400 spaces took about a minute. The target is every task's worst response at
``Limits.max_response_chars`` (65,536 characters) graded in under 50 ms.

The responses are :func:`adversarial` (also the corpus of ``tests/test_answers.py``'s property test): every atom
repeated to the size, and every answer-like prefix followed by every filler motif, once and as repeated blocks.
Today's parser is timed on all of them (best of ``--repeat``); the earlier parser
(``hypergvl_dataset/answers.py`` at ``BEFORE``, read with ``git show``) is timed in a child process, stopped after
``--cap-s`` seconds, on each task's worst response of today's and on the reported attack (``Ans: 1``, 1,000 blanks, ``x``).

An ``n`` in a response's name fills the size; an ``m`` ends the filler inside the answer region
(``answers.MAX_REGION``), where it is read.

    .venv/bin/python benchmarks/grading_worst_case.py [--size 65536] [--cap-s 10] [--tasks CODE ...]
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "82f79fb"  # the last commit with the backtracking patterns
SIZE = 65_536  # hypergvl.space.scoring.Limits.max_response_chars
TARGET_MS = 50.0
TASK_CODES = ("VC", "HEC", "Ne", "DVC", "OEC", "ONe", "OSP", "OMF", "ISM", "3-CL", "SHC", "HHM")

ATOMS = (" ", "\t", "\n", ")", "(", ",", "or", "/", "|", "Ans:", "**Ans:**", "[", "]", "{", "}", "1", "9", "v1",
         "e1", "c1", "-", "+", "=", "is ", "degree ", ":", "_", "*", ".", "no ", "yes ", "maybe ", "if ", "one ",
         "red ", "$", "\\", "Coloring:", "Path:", "Cycle:", "but ", "between ", "<think>", "</think>")
PREFIXES = ("", "1", "Ans: 1", "Ans: v1", "Ans: yes", "Ans: Coloring:[v1", "Ans: Path:[e1", "Ans:", "v1", "e1",
            "Ans: 1 or", "degree", "Coloring:", "Cycle:[e1")
MOTIFS = (" ", "\t", "(", ")", " (", ") ", ", ", " ,", "\t ", " \t", "1 ", " 1", "v1 ", "e1 ", "or ", " or", "- ",
          " -", ": ", "::", "is", "=", " = ", " : ", "[", "]", "{v1", "Ans: ", "1.", "**")


def adversarial(size: int = SIZE) -> list[tuple[str, str]]:
    """(name, response) pairs of at most ``size`` characters built to stress the grader's patterns."""
    from hypergvl.answers import MAX_REGION

    region = min(size, MAX_REGION) - 10  # a filler run that ends inside the answer region the grader reads
    out = [(f"{a!r} x n", a * (size // len(a))) for a in ATOMS]
    for pre in PREFIXES:
        for motif in MOTIFS:
            for n, shown in (((size - len(pre) - 1) // len(motif), "n"), ((region - len(pre)) // len(motif), "m")):
                out.append((f"{pre!r} + {motif!r} x {shown} + 'x'", pre + motif * n + "x"))
            block = pre + motif * 50
            out.append((f"({pre!r} + {motif!r} x 50) x n", block * (size // len(block))))
    return out


def references(codes: tuple[str, ...] = TASK_CODES) -> dict[str, str]:
    """A large problem's reference of each task in ``codes``."""
    from hypergvl.tasks import generate_problem

    return {code: generate_problem(code, 0, "large")["reference"] for code in codes}


def _grade(reference: str, response: str) -> None:
    from hypergvl.tasks import score_response

    score_response(reference, response)


def best_time(reference: str, response: str, repeat: int) -> float:
    """Seconds of the fastest of ``repeat`` gradings."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        _grade(reference, response)
        best = min(best, time.perf_counter() - t0)
    return best


def _before_child(source: str, reference: str, response: str, conn) -> None:
    from hypergvl import answers, tasks

    module = types.ModuleType("answers_before")
    exec(compile(source, "answers_before.py", "exec"), module.__dict__)  # noqa: S102 - the project's own history
    swapped = [name for name, mod in sys.modules.items()  # every task module that parses through ``answers``
               if name.startswith("hypergvl.tasks") and getattr(mod, "answers", None) is answers]
    assert swapped, f"no module of {tasks.__name__} reads hypergvl.answers: the before column would time today's parser"
    for name in swapped:
        sys.modules[name].answers = module
    t0 = time.perf_counter()
    _grade(reference, response)
    conn.send(time.perf_counter() - t0)


def before_time(source: str, reference: str, response: str, cap_s: float) -> float | None:
    """Seconds the earlier parser takes, or None when it is still running after ``cap_s`` (then stopped)."""
    ctx = mp.get_context("fork")
    here, there = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_before_child, args=(source, reference, response, there))
    child.start()
    ready = here.poll(cap_s + 5)  # the child's start-up is not counted: it reports its own grading time
    if ready:
        seconds = here.recv()
        child.join()
        return seconds if seconds <= cap_s else None
    child.kill()
    child.join()
    return None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=SIZE)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--cap-s", type=float, default=10.0, help="stop the earlier parser after this many seconds")
    p.add_argument("--tasks", nargs="+", choices=TASK_CODES, default=list(TASK_CODES), metavar="CODE",
                   help="grade these tasks only (default: all 12)")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    try:
        source = subprocess.run(["git", "-C", str(ROOT), "show", f"{BEFORE}:hypergvl_dataset/answers.py"],
                                check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        source = None
        print(f"(no git history with {BEFORE}: the earlier parser is not measured)")
    refs = references(tuple(args.tasks))
    corpus = adversarial(args.size)
    attack = "Ans: 1" + " " * 1_000 + "x"  # the reported attack: blanks after a number, inside the region
    print(f"{len(corpus)} adversarial responses of at most {args.size:,} characters, {len(refs)} tasks; "
          f"best of {args.repeat}")
    print(f"| task | worst response today | today (ms) | before, same response | before, 'Ans: 1' + 1,000 blanks + 'x' |")
    print("|---|---|---|---|---|")
    worst_all = 0.0
    for code, ref in refs.items():
        times = [(best_time(ref, text, 1), name, text) for name, text in corpus]
        times.sort(reverse=True)
        worst = max(((best_time(ref, text, args.repeat), name, text) for _, name, text in times[:5]))
        worst_all = max(worst_all, worst[0])

        def shown(seconds):
            return f"> {args.cap_s:g} s (stopped)" if seconds is None else f"{seconds * 1e3:,.1f} ms"

        old_same = shown(before_time(source, ref, worst[2], args.cap_s)) if source else "-"
        old_attack = shown(before_time(source, ref, attack, args.cap_s)) if source else "-"
        print(f"| {code} | `{worst[1]}` | {worst[0] * 1e3:.1f} | {old_same} | {old_attack} |", flush=True)
    verdict = "meets" if worst_all * 1e3 < TARGET_MS else "misses"
    print(f"\nworst of all tasks today: {worst_all * 1e3:.1f} ms ({verdict} the {TARGET_MS:g} ms target)")
    return 0 if worst_all * 1e3 < TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
