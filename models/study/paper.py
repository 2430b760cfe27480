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


#: a seed whose score lies this many points or more below the median of its row's seeds has collapsed
COLLAPSE_DROP = 10.0


def single_class_seed(task: str, test: dict[str, float], classes: Optional[int] = None) -> bool:
    """Whether a seed's stored test metrics show a model that predicts one class for every item. Points store
    metrics, not predictions or class counts, so the rule reads what each task stores:

    - fairness (node classification with ΔDP and ΔEO): both gaps exactly 0. One predicted class gives equal
      positive rates in both groups, so both gaps vanish; a model that predicts both classes leaves both exactly 0
      only by coincidence of counts.
    - hypergraph classification (accuracy and macro-F1 over ``classes``): the macro-F1 equals, within 0.01, that of
      a constant prediction with the seed's accuracy ``a`` (the one predicted class's F1 ``2a / (1 + a)``, the
      others' 0, averaged over ``classes``).
    - hyperedge prediction (AUROC): exactly 50, as one score for every candidate gives.
    - node classification by accuracy alone: not decidable from the stored metrics (``False``).
    """
    if "delta_dp" in test and "delta_eo" in test:
        return test["delta_dp"] == 0.0 and test["delta_eo"] == 0.0
    if task == "graph" and classes and "macro_f1" in test:
        a = test["accuracy"] / 100
        return abs(test["macro_f1"] - 100 * 2 * a / (1 + a) / classes) < 0.01
    if task == "hyperedge" and "auroc" in test:
        return test["auroc"] == 50.0
    return False


def degenerate_note(task: str, tests: list[dict[str, float]], metric: str,
                    classes: Optional[int] = None) -> Optional[str]:
    """The flag of a row from its seeds' test metrics (in seed order): ``"single class in all N seeds"``,
    ``"single class in k of N seeds"``, ``"seeds collapse: ..."`` (a seed :data:`COLLAPSE_DROP` points or more
    below the median of the row's seeds), or ``None``."""
    single = [k for k, t in enumerate(tests) if single_class_seed(task, t, classes)]
    if single and len(single) == len(tests):
        return f"single class in all {len(tests)} seeds"
    if single:
        return f"single class in {len(single)} of {len(tests)} seeds (seed {', '.join(map(str, single))})"
    if not tests or not all(metric in t for t in tests):  # a summary without per-seed metrics: nothing to judge
        return None
    values = sorted(t[metric] for t in tests)
    mid = len(values) // 2
    median = values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
    low = [k for k, t in enumerate(tests) if median - t[metric] >= COLLAPSE_DROP]
    if low:
        return (f"seeds collapse: seed {', '.join(map(str, low))} at "
                f"{', '.join(f'{tests[k][metric]:.2f}' for k in low)}, median {median:.2f}")
    return None
