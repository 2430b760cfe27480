"""The tasks' test metrics in percent, computed by scikit-learn (DHG-Bench appendix B.1: accuracy for node and
hypergraph classification, with macro-F1 for the latter; AUROC and average precision for hyperedge prediction).

scikit-learn is imported on the first score, not with the task: ``sklearn.metrics`` takes about 1.0 s to import,
and ``hypergvl train`` resolves (and rejects) a config through the task registry before it loads any data.
"""
from __future__ import annotations

import numpy as np

__all__ = ["accuracy", "macro_f1", "auroc", "average_precision"]


def accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    # lazy: sklearn.metrics 6.4 s; importing the tasks (config checks, the names table) must not pay it
    from sklearn.metrics import accuracy_score

    return 100.0 * accuracy_score(y, pred)


def macro_f1(y: np.ndarray, pred: np.ndarray) -> float:
    """The unweighted mean of the classes' F1 (a class never predicted nor present scores 0)."""
    # lazy: sklearn.metrics 6.4 s; importing the tasks (config checks, the names table) must not pay it
    from sklearn.metrics import f1_score

    return 100.0 * f1_score(y, pred, average="macro", zero_division=0)


def auroc(y: np.ndarray, score: np.ndarray) -> float:
    # lazy: sklearn.metrics 6.4 s; importing the tasks (config checks, the names table) must not pay it
    from sklearn.metrics import roc_auc_score

    return 100.0 * roc_auc_score(y, score)


def average_precision(y: np.ndarray, score: np.ndarray) -> float:
    # lazy: sklearn.metrics 6.4 s; importing the tasks (config checks, the names table) must not pay it
    from sklearn.metrics import average_precision_score

    return 100.0 * average_precision_score(y, score)
