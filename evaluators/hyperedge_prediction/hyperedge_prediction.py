# Copyright 2025 The HyperGVL suite authors. Licensed under the Apache License, Version 2.0.
"""Hyperedge prediction quality: AUROC and AP of candidate-hyperedge scores against 0/1 labels.

DHG-Bench, sec. 3 / appendix B: "AUROC (area under the ROC curve) and AP (average precision) for hyperedge
prediction"; reported in percent (Table A6). The statistics are computed by scikit-learn.
"""

import datasets
import evaluate
import numpy as np
from hypergvl.evaluators._inputs import check_numbers
from hypergvl.evaluators.citations import DHGBENCH, SCIKIT_LEARN
from sklearn.metrics import average_precision_score, roc_auc_score

_DESCRIPTION = """
Area under the ROC curve (AUROC) and average precision (AP) of hyperedge scores, the two hyperedge prediction
metrics of DHG-Bench (Table A6). Each candidate hyperedge (a true hyperedge, label 1, or a sampled negative,
label 0) gets a real-valued score; both metrics only use the ranking of the scores. Values are percentages in
[0, 100]; 50 is chance level for AUROC, the positive rate for AP.
"""

_KWARGS_DESCRIPTION = """
Args:
    prediction_scores (`list` of `float`): one finite score per candidate hyperedge, higher = more likely real
        (a probability or a logit).
    references (`list` of `int`): 1 for a real hyperedge, 0 for a negative sample.
Returns:
    auroc (`float`): area under the ROC curve, in percent, in [0, 100].
    ap (`float`): average precision (scikit-learn's step-wise definition), in percent, in [0, 100].
Raises:
    ValueError: a label that is not 0 or 1, a score that is NaN or infinite, inputs of different lengths, or
        labels of only one class (AUROC is undefined).
Examples:
    >>> metric = evaluate.load("evaluators/hyperedge_prediction")
    >>> results = metric.compute(prediction_scores=[0.9, 0.8, 0.3, 0.6, 0.1], references=[1, 1, 0, 0, 1])
    >>> print({k: round(v, 2) for k, v in results.items()})
    {'auroc': 66.67, 'ap': 86.67}
"""

_CITATION = DHGBENCH + SCIKIT_LEARN


def _scores_and_labels(prediction_scores, references):
    """(float scores, int labels), or ValueError naming the first non-finite score or non-binary label."""
    scores = np.asarray(prediction_scores, dtype=np.float64)
    labels = np.asarray(references, dtype=np.float64)
    bad = np.flatnonzero((labels != 0) & (labels != 1))
    if bad.size:
        raise ValueError(f"references must be 0 or 1; references[{bad[0]}] = {references[bad[0]]!r}")
    bad = np.flatnonzero(~np.isfinite(scores))
    if bad.size:
        raise ValueError(f"prediction_scores must be finite; prediction_scores[{bad[0]}] = {scores[bad[0]]!r}")
    return scores, labels.astype(np.int64)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class HyperedgePrediction(evaluate.Metric):
    """AUROC and AP of hyperedge scores (DHG-Bench Table A6), in percent."""

    def _info(self):
        # references as float64: datasets would silently truncate a label of 0.5 to 0 under int64.
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"prediction_scores": datasets.Value("float64"), "references": datasets.Value("float64")}
            ),
            reference_urls=[
                "https://scikit-learn.org/stable/modules/generated/sklearn.metrics.roc_auc_score.html",
                "https://scikit-learn.org/stable/modules/generated/sklearn.metrics.average_precision_score.html",
            ],
        )

    def add_batch(self, *, prediction_scores=None, references=None):
        """Add candidate scores and 0/1 labels, checking every score is finite and every label 0 or 1."""
        check_numbers({"prediction_scores": prediction_scores, "references": references})
        _scores_and_labels(prediction_scores, references)
        super().add_batch(prediction_scores=prediction_scores, references=references)

    def _compute(self, prediction_scores, references):
        scores, labels = _scores_and_labels(prediction_scores, references)
        if np.unique(labels).size < 2:
            raise ValueError("references hold a single class; AUROC and AP need both positives and negatives")
        return {
            "auroc": float(100.0 * roc_auc_score(labels, scores)),
            "ap": float(100.0 * average_precision_score(labels, scores)),
        }
