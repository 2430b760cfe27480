"""Evaluation side of the suite.

* ``evaluators/<name>/<name>.py`` + ``README.md``: metric folders loadable with
  ``evaluate.load("evaluators/<name>")`` (``hypergvl_accuracy``, ``hypergraph_fairness``,
  ``hyperedge_prediction``, ``hypergraph_classification``).
* :mod:`hypergvl.evaluators.adapters`: the model adapters (``hf:``, ``openai:``) the LVLM harness calls.
"""
from pathlib import Path

METRICS_DIR = Path(__file__).resolve().parent
METRIC_NAMES = ("hypergvl_accuracy", "hypergraph_fairness", "hyperedge_prediction", "hypergraph_classification")


def metric_path(name: str) -> str:
    """Absolute path of a metric folder, for ``evaluate.load(metric_path("hypergvl_accuracy"))``."""
    if name not in METRIC_NAMES:
        raise ValueError(f"unknown metric {name!r}; choose one of {', '.join(METRIC_NAMES)}")
    return str(METRICS_DIR / name)
