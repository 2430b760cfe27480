"""Time to a refusal, and to ``hypergvl datasets list`` / ``--help``: every refusal a user can cause in ``train``,
``study``, ``datasets``, ``evaluate`` and ``router train``, today beside the code at ``--before`` (default: the commit
before the name table, the fast refusals and the quiet logs), in one run.

Each case runs ``hypergvl ARGS`` in a fresh interpreter through a probe that reports the exit status and whether
torch was imported; the wall time includes the interpreter's start. ``--before``'s tree is read with ``git archive``
into a temporary folder and imported from there (:mod:`checkout_import`), in the same interpreter and environment
(``HF_HUB_OFFLINE=1`` unless a case says otherwise, no ``HYPERGVL_RAW_ROOT``, an empty download cache). Today's
side must give the case's exit status and message, without a traceback; the before side is timed as it comes (it may
train, retry or print a traceback: its exit status and last line are printed). Each case runs ``--repeat`` times per
side, alternating; the median is printed, with the ratio before / today.

    .venv/bin/python benchmarks/cli_errors.py [--repeat 3] [--before COMMIT] [--cases SUBSTRING ...]
    .venv/bin/python benchmarks/cli_errors.py --smoke     # today's side of three cases, once (about 10 s)

The ``openai:`` and ``--backbone`` cases need a small build, a run and a PRM (made once with today's code, about a
minute); ``--smoke`` skips them and the before side.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "452434f"  # the last commit before hypergvl.models.names, the fast refusals and the quiet logs
TRAIN = ["train", "--task", "node", "--out", "{tmp}/out"]


class Case(NamedTuple):
    argv: list[str]
    rc: int          # today's exit status
    message: str     # what today's output must hold
    needs: str = ""  # "setup": the build, run and PRM made once; "": nothing
    env: dict = {}
    torch: bool = False  # whether today's side may import torch (a --set value's range: the trainer's config checks it)


CASES = {
    "datasets list": Case(["datasets", "list"], 0, "twitter-friend"),
    "datasets --help": Case(["datasets", "--help"], 0, "hypergvl datasets list"),
    "datasets build coraa": Case(["datasets", "build", "coraa", "--out", "{tmp}/out"], 2,
                                 "unknown dataset 'coraa'; did you mean cora"),
    "train: unknown model": Case([*TRAIN, "--model", "HGNNN", "--dataset", "cora"], 2, "did you mean HGNN"),
    "train --dataset coraa": Case([*TRAIN, "--model", "HGNN", "--dataset", "coraa"], 2,
                                  "unknown dataset 'coraa'; did you mean cora"),
    "train --set lrr=0.1": Case([*TRAIN, "--model", "HGNN", "--dataset", "cora", "--set", "lrr=0.1"], 2,
                                "unknown key 'lrr'; did you mean lr?"),
    "train --set lr=abc (a type)": Case([*TRAIN, "--model", "HGNN", "--dataset", "cora", "--raw-root", "{raw}",
                                         "--set", "lr=abc"], 2, "--set: lr: expected float, got 'abc'"),
    "train --set lr=-1 (a value)": Case([*TRAIN, "--model", "HGNN", "--dataset", "cora", "--raw-root", "{raw}",
                                         "--set", "lr=-1"], 2, "lr must be > 0", torch=True),
    "train: wrong --raw-root": Case([*TRAIN, "--model", "HGNN", "--dataset", "cora", "--raw-root", "{tmp}/nope"], 2,
                                    "no such folder"),
    "train: offline, no raw data": Case([*TRAIN, "--model", "HGNN", "--dataset", "cora"], 2,
                                        "offline (HF_HUB_OFFLINE) and its raw files are neither"),
    "train --modle": Case(["train", "--modle", "HGNN", "--task", "node", "--dataset", "cora", "--out", "{tmp}/o"], 2,
                          "unknown flag --modle (did you mean --model?)"),
    "study --datasets coraa": Case(["study", "robustness", "--datasets", "coraa", "--out", "{tmp}/out"], 2,
                                   "unknown dataset 'coraa'; did you mean cora"),
    "study: unknown model": Case(["study", "fairness", "--models", "HGNNN", "--out", "{tmp}/out"], 2, "HGNNN"),
    "evaluate --text-reps N-Sett": Case(["evaluate", "--dataset", "{build}", "--model", "baseline:random", "--out",
                                         "{tmp}/out", "--text-reps", "N-Sett"], 2,
                                        "unknown representation 'N-Sett' (did you mean n_set?)", "setup"),
    "evaluate --modle": Case(["evaluate", "--modle", "baseline:random", "--dataset", "x", "--out", "{tmp}/o"], 2,
                             "unknown flag --modle (did you mean --model"),
    "evaluate openai: no server": Case(["evaluate", "--dataset", "{build}", "--model", "openai:m", "--base-url",
                                        "http://127.0.0.1:{port}/v1", "--out", "{tmp}/out", "--no-progress"], 2,
                                       "nothing listens at 127.0.0.1", "setup"),
    "router train --backbone typo": Case(["router", "train", "--prm", "{prm}", "--out", "{tmp}/out", "--backbone",
                                          "microsoft/deberta-v3-bsae", "--no-progress"], 2,
                                         "--backbone microsoft/deberta-v3-bsae: not a loadable Hub model", "setup"),
}
SMOKE = ["datasets list", "train --dataset coraa", "evaluate --modle"]  # one a front door; no setup, no torch

_PROBE = """import json, sys, time
root = {root!r}
if root:
    sys.path.insert(0, {bench!r})
    from checkout_import import import_hypergvl_from
    import_hypergvl_from(root)
from hypergvl.cli import main
try:
    rc = main(sys.argv[1:])
except SystemExit as e:
    rc = e.code if isinstance(e.code, int) else 2
except BaseException as e:  # the before side may crash: a traceback counts as its answer
    import traceback
    traceback.print_exc()
    rc = 1
print("@@probe " + json.dumps({{"rc": rc, "torch": "torch" in sys.modules}}), file=sys.stderr)
"""


def before_tree(where: Path, commit: str) -> Path:
    """``commit``'s sources exported under ``where`` (a checkout's layout, imported by :mod:`checkout_import`)."""
    src = where / "before"
    src.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    return src


def free_port() -> int:
    with socket.socket() as s:  # bound, then closed: nothing listens there afterwards
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def setup(where: Path) -> dict:
    """A small build, a baseline run over it and a PRM (today's code), for the evaluate and router cases."""
    hg = [sys.executable, "-m", "hypergvl"]
    steps = [["build", "--out", f"{where}/build", "--per-task", "2", "--tasks", "VC", "HEC", "--workers", "1",
              "--no-progress"],
             ["evaluate", "--dataset", f"{where}/build", "--model", "baseline:symbolic", "--out", f"{where}/run",
              "--no-progress"],
             ["router", "prm", "--results", f"{where}/run", "--out", f"{where}/prm", "--no-progress"]]
    for step in steps:
        p = subprocess.run(hg + step, capture_output=True, text=True, cwd=where)
        if p.returncode != 0:
            raise SystemExit(f"setup {step[0]} failed:\n{p.stderr[-2000:]}")
    return {"build": f"{where}/build", "prm": f"{where}/prm"}


def run(case: Case, root: Path | None, fill: dict, timeout: float) -> dict:
    """One run of ``case`` on one side: wall time, exit status, torch imported, last line, whole output."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONWARNINGS": "ignore", **case.env}
    env.pop("HYPERGVL_RAW_ROOT", None)
    with tempfile.TemporaryDirectory() as tmp:
        env["HYPERGVL_CACHE"] = f"{tmp}/cache"
        cora = Path(tmp) / "raw" / "HyperGCN" / "data" / "cocitation" / "cora"
        cora.mkdir(parents=True)  # {raw}: a raw root that passes the check before torch (its files are never read)
        for name in ("hypergraph", "labels"):
            (cora / f"{name}.pickle").write_bytes(b"")
        args = [a.format(tmp=tmp, raw=f"{tmp}/raw", port=free_port(), **fill) for a in case.argv]
        code = _PROBE.format(root=str(root) if root else "", bench=str(ROOT / "benchmarks"))
        t0 = time.perf_counter()
        try:
            p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
                               cwd=tmp, timeout=timeout)
            out, err = p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            out, err = str(e.stdout or ""), str(e.stderr or "") + f"\n(timed out after {timeout:.0f} s)"
        wall = time.perf_counter() - t0
    lines = [line for line in err.splitlines() if line.strip()]
    probe = next((json.loads(line[8:]) for line in reversed(lines) if line.startswith("@@probe ")),
                 {"rc": None, "torch": None})
    said = [line for line in lines if not line.startswith("@@probe ")]
    last = said[-1] if said else (out.strip().splitlines() or [""])[-1]
    return {"wall": wall, **probe, "last": last, "text": out + err}


def check_today(name: str, case: Case, result: dict) -> None:
    if result["rc"] != case.rc or case.message not in result["text"] or "Traceback" in result["text"]:
        raise SystemExit(f"{name}: today expected exit {case.rc} and {case.message!r}; got exit {result['rc']}:\n"
                         f"{result['text'][-2000:]}")
    if result["torch"] and not case.torch:
        raise SystemExit(f"{name}: today imported torch")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", default=BEFORE, help=f"the commit to compare with (default {BEFORE})")
    ap.add_argument("--cases", nargs="+", metavar="SUBSTRING", help="only the cases whose name holds one of these")
    ap.add_argument("--timeout", type=float, default=180.0, help="give up on one run after this many seconds")
    ap.add_argument("--smoke", action="store_true", help=f"today's side of {len(SMOKE)} cases, once, no setup")
    a = ap.parse_args(argv)
    names = SMOKE if a.smoke else list(CASES)
    if a.cases:
        names = [n for n in names if any(s in n for s in a.cases)]
    if not names:
        ap.error("no case selected")
    with tempfile.TemporaryDirectory() as tmp:
        fill = setup(Path(tmp)) if any(CASES[n].needs for n in names) else {}
        if a.smoke:
            print("| case | exit | today (s) | torch |\n| --- | --- | --- | --- |")
            for name in names:
                r = run(CASES[name], None, fill, a.timeout)
                check_today(name, CASES[name], r)
                print(f"| {name} | {r['rc']} | {r['wall']:.2f} | {'yes' if r['torch'] else 'no'} |")
            return 0
        root = before_tree(Path(tmp), a.before)
        print(f"| case | exit {a.before} | exit today | {a.before} (s) | today (s) | ratio | torch {a.before} / "
              f"today | {a.before}'s last line | today's message |\n| --- | --- | --- | --- | --- | --- | --- | --- "
              "| --- |")
        for name in names:
            case = CASES[name]
            results: dict[str, list[dict]] = {"before": [], "today": []}
            for _ in range(a.repeat):
                for side, path in (("before", root), ("today", None)):
                    results[side].append(run(case, path, fill, a.timeout))
            for r in results["today"]:
                check_today(name, case, r)
            b, t = (statistics.median(r["wall"] for r in results[s]) for s in ("before", "today"))
            rb, rt = results["before"][-1], results["today"][-1]
            torch = "/".join("yes" if r["torch"] else "no" for r in (rb, rt))
            print(f"| {name} | {rb['rc']} | {rt['rc']} | {b:.2f} | {t:.2f} | {b / t:.1f}x | {torch} | "
                  f"`{rb['last'][:60]}` | `{rt['last'][:70]}` |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
