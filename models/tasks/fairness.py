"""Accuracy and the group-fairness gaps of DHG-Bench appendix B.5: the one implementation in the suite.

Used by node classification (:class:`hypergvl.models.tasks.NodeClassification`, whenever the dataset has a binary
sensitive attribute and two classes), by the ``hypergraph_fairness`` metric (``evaluators/hypergraph_fairness``)
and so by the fairness study (``hypergvl study fairness``). Appendix B.5: "We focus on a binary
classification task, with target label y in {0,1} and binary sensitive attribute s in {0,1}":

    ΔDP = |P(ŷ=1 | s=0) − P(ŷ=1 | s=1)|                      (eq. 2, demographic parity)
    ΔEO = |P(ŷ=1 | s=1, y=1) − P(ŷ=1 | s=0, y=1)|            (eq. 4, equalized odds as the paper writes it:
                                                             true positive rates only, as the reference code)

All three values are in percent, as in Table A8.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["fairness_metrics", "EMPTY_GROUP_CHOICES"]

#: what :func:`fairness_metrics` does when a gap's conditioning group is empty
EMPTY_GROUP_CHOICES = ("nan", "raise")


def fairness_metrics(pred: Any, y: Any, sensitive: Any, *, empty_group: str = "nan") -> dict[str, float]:
    """Accuracy, ΔDP and ΔEO in percent of binary predictions ``pred``, labels ``y`` and sensitive attribute
    ``sensitive`` (DHG-Bench appendix B.5, eqs. 2 and 4).

    A gap whose conditioning group (s=0, s=1, s=1 and y=1, s=0 and y=1, checked in that order) is empty is
    ``nan`` with ``empty_group="nan"`` (the trainer: a small split may miss a group) or raises ``ValueError``
    naming the group with ``empty_group="raise"`` (the metric). Inputs of different lengths, no inputs or a
    value other than 0/1 raise ``ValueError``.
    """
    if empty_group not in EMPTY_GROUP_CHOICES:
        raise ValueError(f"empty_group must be one of {', '.join(EMPTY_GROUP_CHOICES)}; got {empty_group!r}")
    arrays = [np.asarray(a).reshape(-1) for a in (pred, y, sensitive)]
    if not len(arrays[0]) == len(arrays[1]) == len(arrays[2]):
        raise ValueError(f"pred, y and sensitive differ in length: {', '.join(str(len(a)) for a in arrays)}")
    if len(arrays[0]) == 0:
        raise ValueError("no predictions given")
    for name, a in zip(("pred", "y", "sensitive"), arrays):
        if not np.isin(a, (0, 1)).all():
            raise ValueError(f"fairness metrics need binary {name}; got values {sorted(set(a.tolist()))[:5]}")
    pred, y, s = (a.astype(np.int64) for a in arrays)

    def rate(group: np.ndarray, description: str) -> float:
        if group.any():
            return float(pred[group].mean())
        if empty_group == "raise":
            raise ValueError(f"empty group: no node with {description}; the fairness gaps are undefined")
        return math.nan

    p_s0, p_s1 = rate(s == 0, "s=0"), rate(s == 1, "s=1")
    tpr_s1, tpr_s0 = rate((s == 1) & (y == 1), "s=1 and y=1"), rate((s == 0) & (y == 1), "s=0 and y=1")
    return {"accuracy": 100.0 * float(np.mean(pred == y)), "delta_dp": 100.0 * abs(p_s0 - p_s1),
            "delta_eo": 100.0 * abs(tpr_s1 - tpr_s0)}
