"""benchmarks/results/summation_order.md is what benchmarks/summation_order.py prints: HGNN's rows (the stable
control, equal at 1 and 2 threads) rebuilt in the default suite, DPHGNN's seed-0 rows (the unstable model, whose
runs move with the order of floating-point sums) in the slow suite."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from benchmark_scripts import BENCHMARKS, load_script

RESULTS = BENCHMARKS / "results" / "summation_order.md"
RAW = Path(os.environ.get("HYPERGVL_RAW_ROOT", BENCHMARKS.parents[1] / "shared" / "data"))
needs_data = pytest.mark.skipif(not RAW.is_dir(), reason="needs ../shared/data ($HYPERGVL_RAW_ROOT)")


def _rows(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(f"| {prefix}")]


def _rebuilt(tmp_path: Path, models: list[str], seeds: list[str]) -> str:
    out = tmp_path / "s.md"
    assert load_script("summation_order").main(["--raw-root", str(RAW), "--models", *models, "--seeds", *seeds,
                                                 "--out", str(out)]) == 0
    return out.read_text()


@needs_data
def test_the_stable_control_rebuilds_and_is_equal_at_one_and_two_threads(tmp_path):
    got = _rows(_rebuilt(tmp_path, ["HGNN"], ["0"]), "HGNN |")
    assert got == _rows(RESULTS.read_text(), "HGNN | 0 |")
    assert got[0].endswith("| +0.00 |")


@pytest.mark.slow
@needs_data
def test_dphgnn_seed_0_rebuilds_and_moves_with_the_thread_count(tmp_path):
    got = _rows(_rebuilt(tmp_path, ["DPHGNN"], ["0"]), "DPHGNN")
    assert got == [r for r in _rows(RESULTS.read_text(), "DPHGNN") if "| 0 |" in r]
    assert all("| +0.00 |" not in r for r in got)


def test_the_docs_paragraph_quotes_only_shipped_numbers():
    """docs/reproduction.md's paragraph on rows that do not retrain on another CPU restates measurements: each
    two-decimal number in it is a cell of summation_order.md's table, a shipped DPHGNN Cora node seed, or a cell of
    reproduction.md."""
    import json
    import re

    docs = (BENCHMARKS.parent / "docs" / "reproduction.md").read_text()
    start = docs.index("Rows that do not retrain to the digit on another CPU")
    paragraph = docs[start:docs.index("\n\n", start)]
    table = " ".join(_rows(RESULTS.read_text(), ""))
    points = BENCHMARKS / "results" / "points" / "DPHGNN" / "cora" / "node+dhgbench"
    seeds = {f"{json.loads(p.read_text())['metrics']['test']['accuracy']:.2f}" for p in points.glob("seed*.json")}
    reproduction = (BENCHMARKS / "results" / "reproduction.md").read_text()
    quoted = re.findall(r"\b\d+\.\d\d\b", paragraph)
    assert len(quoted) >= 7
    for number in quoted:
        assert f" {number} " in table or number in seeds or f" {number} " in reproduction, number
