"""benchmarks/speed_since.py: the same case timed at two commits, each from its own ``git archive`` export (not the
installed package), in one run, with a row of the printed table per case; bad cases are refused before anything runs."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from benchmark_scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT.parent / "shared" / "data"
speed = load_script("speed_since")


def test_cases_parse_and_bad_ones_are_refused():
    assert speed.parse_case("bail:ED-HNN") == ("bail", "ED-HNN", "bail", None)
    assert speed.parse_case("graph:HGNN:rhg-10") == ("graph", "HGNN", "rhg-10", "paper")
    assert speed.parse_case("graph:HGNN:rhg-10:standard") == ("graph", "HGNN", "rhg-10", "standard")
    for bad in ("bail", "node:HGNN:cora", "graph:HGNN", "graph:HGNN:rhg-10:allset"):
        with pytest.raises(Exception, match="expected bail:MODEL"):
            speed.parse_case(bad)
    with pytest.raises(SystemExit):
        speed.main(["--cases", "bail:MLP", "--epochs", "1"])


def test_projection_uses_the_evaluation_interval():
    row = {"task": "graph (paper)", "model": "HGNN", "dataset": "rhg-10", "schedule": (300, 20),
           "before": {"train_s": 0.5, "rest_s": 1.0}, "after": {"train_s": 0.25, "rest_s": 1.0}}
    line = speed.table([row], "a" * 40, "b" * 40).splitlines()[2]
    # 300 x 0.5 + 15 x 1.0 = 165 s before, 300 x 0.25 + 15 = 90 s after
    assert "| 2.00x | 1.83x | 300, 20 | 165 s | 90 s |" in line


@pytest.mark.skipif(not (RAW / "HyperGCL" / "data" / "fair_data" / "bail").is_dir(), reason="needs ../shared/data")
def test_two_commits_in_one_run(tmp_path):
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    before = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "HEAD~1"], capture_output=True, text=True)
    if head.returncode or before.returncode:
        pytest.skip("needs a git checkout with history")
    out = tmp_path / "speed.md"
    rc = speed.main(["--raw-root", str(RAW), "--cases", "bail:MLP", "--epochs", "2", "--before", "HEAD~1",
                     "--out", str(out)])
    assert rc == 0
    text = out.read_text()
    assert f"at {before.stdout.strip()[:7]} and {head.stdout.strip()[:7]}" in text
    row = next(line for line in text.splitlines() if line.startswith("| fairness | bail | MLP |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    for cell in cells[3:5]:  # train / eval seconds per epoch, both sides measured
        train, evaluation = (float(v) for v in cell.split(" / "))
        assert 0 < train < 5 and abs(evaluation) < 5
    assert re.fullmatch(r"\d+\.\d\dx", cells[5]) and cells[7] == "100, 1"
    # the same commit on both sides is refused
    with pytest.raises(SystemExit):
        speed.main(["--raw-root", str(RAW), "--cases", "bail:MLP", "--before", "HEAD", "--after", "HEAD"])
