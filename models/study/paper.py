"""DHG-Bench's published numbers, the ones the project compares with: Table 1 (node classification), Table A6
(hyperedge prediction), Table A7 (hypergraph classification) and Table A8 (fairness, appendix C.3).

Each table is data, one CSV under ``paper_tables/`` shaped like the paper's: a row per method, a column per
``dataset/metric``, cells ``mean±std`` or ``OOM`` (transcribed from the paper; ``../shared/reference/dhgbench-models.md``
section 13 has A8 verbatim, and ``tests/test_dhgbench_paper_cells.py`` compares all 536 cells with the paper's text).
The paper's "UniGNN" row is this library's UniGCNII (section 3.2: "we report only UniGCNII"). Models without a row
(AllDeepSets, UniGCN, UniGAT, UniGIN) are shown without a paper value.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path
from typing import Optional

Pair = Optional[tuple[float, float]]  # (mean, std); None is the paper's OOM

TABLES = Path(__file__).resolve().parent / "paper_tables"
TABLE_FILES = {"node": "table1_node.csv", "hyperedge": "tableA6_hyperedge.csv", "graph": "tableA7_graph.csv",
               "fairness": "tableA8_fairness.csv"}


def _cell(text: str) -> Pair:
    if text == "OOM":
        return None
    mean, std = text.split("±")
    return float(mean), float(std)


@lru_cache(maxsize=None)
def paper_table(task: str) -> dict[str, dict[str, dict[str, Pair]]]:
    """The paper's table for ``task`` (node, hyperedge, graph, fairness): dataset -> metric -> model -> cell, in the
    paper's order."""
    if task not in TABLE_FILES:
        raise ValueError(f"no DHG-Bench table for task {task!r}; choose one of {', '.join(TABLE_FILES)}")
    table: dict[str, dict[str, dict[str, Pair]]] = {}
    with open(TABLES / TABLE_FILES[task], newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            model = row.pop("model")
            for column, text in row.items():
                dataset, metric = column.split("/")
                table.setdefault(dataset, {}).setdefault(metric, {})[model] = _cell(text)
    return table


FAIRNESS_METRICS = ("accuracy", "delta_dp", "delta_eo")


def paper_value(model: str, dataset: str, metric: str) -> Pair:
    """Table A8's cell (``None`` where the paper has no row for ``model``, or says OOM)."""
    return paper_table("fairness").get(dataset, {}).get(metric, {}).get(model)


def paper_oom(model: str, dataset: str) -> bool:
    """Whether Table A8 lists ``model`` on ``dataset`` as out of memory."""
    cells = paper_table("fairness").get(dataset, {}).get("accuracy", {})
    return model in cells and cells[model] is None


def within(ours: float, paper: tuple[float, float], *, floor: float = 1.5) -> bool:
    """The issue's pass rule: ``|ours - paper| <= max(2 * paper std, floor)`` (floor 1.5 points for accuracy;
    the gaps use ``floor=0``: within 2 paper std)."""
    return abs(ours - paper[0]) <= max(2 * paper[1], floor)
