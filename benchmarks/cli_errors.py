"""Time to a refusal: ``hypergvl train`` refusing a bad ``--set`` key, a bad value and an unknown model,
``hypergvl study`` an unknown model and ``hypergvl router train`` a PRM that is not there, today beside the code at
``BEFORE``, in one run. Since ``BEFORE``: the models and tasks stopped importing ``torch_geometric`` (whose import
loads ``transformers``) and ``scikit-learn`` (``hypergvl.models.nn.sparse.scatter``/``softmax``,
``hypergvl.models.tasks.scores``); ``hypergvl study`` checks ``--models`` and builds its parser from the names in the
sources, before torch, PyG and the dataset catalogue; ``hypergvl router train`` reads the PRM before torch,
accelerate and transformers.

``BEFORE``'s tree is read with ``git archive`` into a temporary folder laid out as the installed namespace
(``hypergvl`` -> ``hypergvl_dataset``, ``hypergvl.models`` -> ``models``, ...) and put first on ``PYTHONPATH``; both
sides run in the same interpreter and environment (``HF_HUB_OFFLINE=1``: the missing PRM is named as a Hub id, so
both sides give the same message; the study's is worded anew today, and each case names what both sides'
errors must say). Each case runs ``--repeat`` times per side, alternating; the median wall time is
printed. ``hypergvl train``'s unknown model is refused before any model is imported, on both sides: the control.

    .venv/bin/python benchmarks/cli_errors.py [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "1641c35"  # the last commit whose models import torch_geometric and whose tasks import sklearn.metrics
TRAIN = ["train", "--task", "node", "--dataset", "cora", "--out", "{out}"]
CASES = {  # the command line ({out}: a fresh temporary folder), and what both sides' error must name
    "train: unknown --set key": ([*TRAIN, "--model", "HGNN", "--set", "bogus=1"], "bogus"),
    "train: bad value": ([*TRAIN, "--model", "HGNN", "--set", "lr=-1"], "lr must be > 0"),
    "train: unknown model": ([*TRAIN, "--model", "HGNNN"], "unknown model 'HGNNN'"),
    "study: unknown model": (["study", "fairness", "--models", "HGNNN", "--out", "{out}"], "HGNNN"),
    "router train: missing PRM": (["router", "train", "--prm", "nobody/no-such-prm", "--out", "{out}"],
                                  "nobody/no-such-prm is neither a PRM folder nor a reachable Hub dataset"),
}
LAYERS = ("models", "evaluators", "router", "space")  # pyproject.toml's package-dir, below hypergvl_dataset


def before_tree(where: Path) -> Path:
    """``BEFORE``'s sources under ``where``, importable as ``hypergvl``; returns the folder for ``PYTHONPATH``."""
    src = where / "src"
    src.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", BEFORE], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    for layer in LAYERS:
        (src / "hypergvl_dataset" / layer).symlink_to(src / layer)
    root = where / "root"
    root.mkdir()
    (root / "hypergvl").symlink_to(src / "hypergvl_dataset")
    return root


def run(args: list[str], pythonpath: Path | None) -> tuple[float, str]:
    code = "import sys; from hypergvl.cli import main; sys.exit(main(sys.argv[1:]))"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-c", code, *(a.format(out=f"{out}/run") for a in args)]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=out)
        wall = time.perf_counter() - t0
    if p.returncode == 0 or "Traceback" in p.stderr:
        raise SystemExit(f"{args}: expected a clean config error, got rc {p.returncode}:\n{p.stderr[-2000:]}")
    return wall, p.stderr.strip().splitlines()[-1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    print(f"| case | error | {BEFORE} (s) | today (s) | ratio |\n| --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        root = before_tree(Path(tmp))
        for name, (args, shared) in CASES.items():
            times: dict[str, list[float]] = {"before": [], "today": []}
            messages = {}
            for _ in range(a.repeat):
                for side, path in (("before", root), ("today", None)):
                    wall, messages[side] = run(args, path)
                    times[side].append(wall)
            if not all(shared in m for m in messages.values()):
                raise SystemExit(f"{name}: expected both errors to name {shared!r}: {messages}")
            b, t = statistics.median(times["before"]), statistics.median(times["today"])
            print(f"| {name} | `{messages['today'][:50]}...` | {b:.2f} | {t:.2f} | {b / t:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
