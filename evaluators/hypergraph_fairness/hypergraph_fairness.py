# Copyright 2025 The HyperGVL suite authors. Licensed under the Apache License, Version 2.0.
"""Group fairness of a binary node classifier: accuracy, demographic parity and equalized odds gaps.

DHG-Bench, appendix B.5 "Fairness Evaluation Metrics": "We focus on a binary classification task, with
target label y in {0,1} and binary sensitive attribute s in {0,1}."

    ΔDP = |P(ŷ=1 | s=0) − P(ŷ=1 | s=1)|                      (eq. 2)
    ΔEO = |P(ŷ=1 | s=1, y=1) − P(ŷ=1 | s=0, y=1)|            (eq. 4)

All three values are reported in percent, as in DHG-Bench Table A8. The formulas live in one place,
:func:`hypergvl.models.tasks.fairness.fairness_metrics`, which node classification in :mod:`hypergvl.models.trainer` uses too.
"""

import datasets
import evaluate
import numpy as np
from hypergvl.evaluators._inputs import check_numbers
from hypergvl.evaluators.citations import DHGBENCH, DWORK2012, HARDT2016
from hypergvl.models.tasks.fairness import fairness_metrics

_DESCRIPTION = """
Accuracy, demographic parity gap (ΔDP) and equalized odds gap (ΔEO) of binary predictions across the two groups
of a binary sensitive attribute, exactly as defined in DHG-Bench appendix B.5:

    ΔDP = |P(ŷ=1 | s=0) − P(ŷ=1 | s=1)|
    ΔEO = |P(ŷ=1 | s=1, y=1) − P(ŷ=1 | s=0, y=1)|

ΔEO follows the paper's equation (4): it compares true positive rates only (the "equal opportunity" form).
All values are percentages in [0, 100]. Lower ΔDP / ΔEO is fairer; higher accuracy is better.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `int`): predicted labels ŷ, each 0 or 1 (take the argmax of the logits first).
    references (`list` of `int`): ground-truth labels y, each 0 or 1.
    sensitive_attributes (`list` of `int`): the sensitive attribute s of each node, each 0 or 1.
Returns:
    accuracy (`float`): percentage of predictions equal to the reference, in [0, 100].
    delta_dp (`float`): demographic parity gap in percentage points, in [0, 100].
    delta_eo (`float`): equalized odds gap (true positive rates) in percentage points, in [0, 100].
Raises:
    ValueError: a value that is not 0 or 1, inputs of different lengths, or an empty group (no node with s=0, no
        node with s=1, or no positive node in one of the groups).
Examples:
    >>> fairness = evaluate.load("evaluators/hypergraph_fairness")
    >>> results = fairness.compute(
    ...     predictions=[1, 1, 0, 0, 1, 0],
    ...     references=[1, 0, 1, 1, 1, 0],
    ...     sensitive_attributes=[0, 0, 0, 1, 1, 1])
    >>> print({k: round(v, 2) for k, v in results.items()})
    {'accuracy': 50.0, 'delta_dp': 33.33, 'delta_eo': 0.0}
"""

_CITATION = DHGBENCH + DWORK2012 + HARDT2016


def _binary(name, values):
    """Return ``values`` as an int8 array, or raise ValueError naming the first value that is not 0 or 1."""
    array = np.asarray(values, dtype=np.float64)
    bad = np.flatnonzero((array != 0) & (array != 1))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{name} must be binary (0 or 1); {name}[{i}] = {values[i]!r}")
    return array.astype(np.int8)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class HypergraphFairness(evaluate.Metric):
    """Accuracy, ΔDP and ΔEO (DHG-Bench appendix B.5), in percent."""

    def _info(self):
        # float64, not int64: datasets would silently truncate 0.7 to 0 before the binary check.
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("float64"),
                    "references": datasets.Value("float64"),
                    "sensitive_attributes": datasets.Value("float64"),
                }
            ),
            reference_urls=["https://github.com/Coco-Hut/DHG-Bench"],
        )

    def add_batch(self, *, predictions=None, references=None, sensitive_attributes=None):
        """Add predicted labels, true labels and sensitive attributes, checking every element is 0 or 1."""
        columns = {"predictions": predictions, "references": references, "sensitive_attributes": sensitive_attributes}
        check_numbers(columns)
        for name, values in columns.items():
            _binary(name, values)
        super().add_batch(**columns)

    def _compute(self, predictions, references, sensitive_attributes):
        y_hat = _binary("predictions", predictions)
        y = _binary("references", references)
        s = _binary("sensitive_attributes", sensitive_attributes)
        # The one implementation of the formulas, shared with node classification in the trainer.
        return fairness_metrics(y_hat, y, s, empty_group="raise")
