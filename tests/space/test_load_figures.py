"""The load figures space/README.md quotes are the shipped run's (benchmarks/results/space_load.md), and the run
names the commit the README says."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _rows(text: str, header: str) -> list[list[str]]:
    lines = text[text.index(header):].splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def test_readme_load_rows_are_the_shipped_runs():
    results = (ROOT / "benchmarks" / "results" / "space_load.md").read_text()
    commit = re.search(r"^Commit: (\w+)[;\n]", results, re.M).group(1)
    shipped = {r[0]: r for r in _rows(results, "| visitors | load average (1 min) at start / end | events |")}
    readme = (ROOT / "space" / "README.md").read_text()
    quoted = [r for r in _rows(readme, "| visitors | code | load average (1 min) |") if r[1] == commit]
    assert [r[0] for r in quoted] == list(shipped), "the README quotes every level of the shipped run"
    for r in quoted:
        s = shipped[r[0]]
        assert r[2] == s[1].replace(" / ", " -> ")
        assert r[3].replace(",", "") == s[2] and r[4] == s[3]
        assert [float(x) for x in r[5:8]] == [float(x) for x in s[4:7]]
