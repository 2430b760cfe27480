# Copyright 2025 The HyperGVL suite authors. Licensed under the Apache License, Version 2.0.
"""Hypergraph classification quality: accuracy and macro-F1 of predicted class ids.

DHG-Bench, sec. 3 / appendix B: "both accuracy and Macro-F1 score for hypergraph classification"; reported in
percent (Table A7, "Acc and F1_ma"). The statistics are computed by scikit-learn.
"""

import datasets
import evaluate
import numpy as np
from hypergvl.evaluators._inputs import check_numbers
from hypergvl.evaluators.citations import DHGBENCH, SCIKIT_LEARN
from sklearn.metrics import accuracy_score, f1_score

_DESCRIPTION = """
Accuracy and macro-averaged F1 of predicted class ids, the two hypergraph classification metrics of DHG-Bench
(Table A7). Macro-F1 is the unweighted mean of the per-class F1 scores over every class that appears in the
references or the predictions, so rare classes weigh as much as frequent ones. Values are percentages in [0, 100].
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `int`): predicted class id of each hypergraph (the argmax of the logits).
    references (`list` of `int`): true class id of each hypergraph.
Returns:
    accuracy (`float`): percentage of hypergraphs classified correctly, in [0, 100].
    macro_f1 (`float`): macro-averaged F1 score in percent, in [0, 100] (a class with no prediction and no
        reference is not counted; a class predicted but never correct contributes 0).
Raises:
    ValueError: a class id that is not a whole number, inputs of different lengths, or no input at all.
Examples:
    >>> metric = evaluate.load("evaluators/hypergraph_classification")
    >>> results = metric.compute(predictions=[0, 2, 1, 0, 0, 1], references=[0, 1, 2, 0, 1, 1])
    >>> print({k: round(v, 2) for k, v in results.items()})
    {'accuracy': 50.0, 'macro_f1': 40.0}
"""

_CITATION = DHGBENCH + SCIKIT_LEARN


def _class_ids(name, values):
    """Return ``values`` as an int64 array, or raise ValueError naming the first non-integral value."""
    array = np.asarray(values, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(array) | (array != np.round(array)) | (np.abs(array) > 2**53))
    if bad.size:
        raise ValueError(f"{name} must be integer class ids; {name}[{bad[0]}] = {values[bad[0]]!r}")
    return array.astype(np.int64)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class HypergraphClassification(evaluate.Metric):
    """Accuracy and macro-F1 of hypergraph class predictions (DHG-Bench Table A7), in percent."""

    def _info(self):
        # float64, not int64: datasets would silently truncate a class id of 1.5 to 1.
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("float64"), "references": datasets.Value("float64")}
            ),
            reference_urls=[
                "https://scikit-learn.org/stable/modules/generated/sklearn.metrics.accuracy_score.html",
                "https://scikit-learn.org/stable/modules/generated/sklearn.metrics.f1_score.html",
            ],
        )

    def add_batch(self, *, predictions=None, references=None):
        """Add predicted and true class ids, checking every element is a whole number."""
        check_numbers({"predictions": predictions, "references": references})
        _class_ids("predictions", predictions)
        _class_ids("references", references)
        super().add_batch(predictions=predictions, references=references)

    def _compute(self, predictions, references):
        y_hat = _class_ids("predictions", predictions)
        y = _class_ids("references", references)
        if y.size == 0:
            raise ValueError("no predictions given")
        return {
            "accuracy": float(100.0 * accuracy_score(y, y_hat)),
            "macro_f1": float(100.0 * f1_score(y, y_hat, average="macro", zero_division=0)),
        }
