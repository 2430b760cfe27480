"""Quiet by default: a run whose output is not a terminal (a log file, CI) holds no progress bars, no library INFO
lines and no warnings; the commands' own lines are still there."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from hypergvl.cli import main

BAR_MARKS = ("\r", "it/s]", "%|", "Writing model shards")


def _run(*argv: str, cwd) -> subprocess.CompletedProcess:
    """``hypergvl ARGV`` with stdout and stderr piped (not a terminal), warnings shown as Python shows them."""
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    env.pop("TQDM_DISABLE", None)
    return subprocess.run([sys.executable, "-m", "hypergvl", *argv], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600)


def _folder(path):
    rng = np.random.default_rng(0)
    path.mkdir()
    (path / "hyperedges.txt").write_text("".join(" ".join(map(str, rng.choice(40, 4, replace=False))) + "\n"
                                                 for _ in range(30)))
    (path / "labels.txt").write_text("".join(f"{i % 3}\n" for i in range(40)))
    np.save(path / "features.npy", rng.normal(size=(40, 8)).astype(np.float32))
    return path


def test_a_training_run_into_a_log_has_no_bars_and_no_library_info_lines(tmp_path):
    data = _folder(tmp_path / "mine")
    p = _run("train", "--model", "HGNN", "--task", "node", "--dataset", f"./{data.name}", "--runs", "2", "--out",
             "out", "--set", "epochs=3", "hidden=8", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    text = p.stdout + p.stderr
    assert not [m for m in BAR_MARKS if m in text], text[-3000:]
    assert "numexpr" not in text and "INFO numexpr" not in text
    assert not [line for line in p.stderr.splitlines() if line.startswith("INFO ") and "hypergvl" not in line]
    assert "Warning" not in p.stderr, p.stderr[-3000:]
    assert "HGNN" in p.stdout  # the result line is still printed


def test_report_writes_no_warning(small_build, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["evaluate", "--dataset", str(small_build), "--model", "baseline:random", "--out", str(run),
                 "--tasks", "VC", "--limit", "30", "--no-progress"]) == 0  # no reasoning task: one empty panel
    p = _run("report", str(run), "--out", str(tmp_path / "report"), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stderr == "", p.stderr  # no matplotlib legend warning (and nothing else)
    assert any((tmp_path / "report").glob("*.png"))


def test_datasets_help_reads_as_text(tmp_path):
    p = _run("datasets", "--help", cwd=tmp_path)
    assert p.returncode == 0 and "``" not in p.stdout and ":mod:" not in p.stdout
