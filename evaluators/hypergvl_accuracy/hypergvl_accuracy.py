# Copyright 2025 The HyperGVL suite authors. Licensed under the Apache License, Version 2.0.
"""HyperGVL accuracy: verify raw LVLM responses against the benchmark rows and aggregate as the paper does.

HyperGVL, sec. 3.2 / Table 3: accuracy per task, "Avg.U and Avg.R represent the average accuracy across
understanding and reasoning tasks"; sec. 3.4 / Table 4: the same per textual and per visual representation;
sec. 3.5 / Fig. 4: per hypergraph scale for synthetic and real-world hypergraphs. Each response is checked by
:func:`hypergvl.tasks.score_response`'s verifier against the row's ``reference`` column (task, hypergraph(s),
parameters, canonical answer), so any valid answer to a planning task (3-CL, SHC, HHM) counts, not only the
stored one. Sec. 3.1: "the factually accurate answers with incorrect formats are also considered to be correct
after manual review"; the grading rules of ``hypergvl.answers`` (``SCORER_VERSION``) stand in for that review.

The computation is :func:`hypergvl.evaluators.accuracy.accuracy_scores` (the harness and the Space call it too).
Speed: the 84,000 samples of the benchmark share 2,400 references (one per meta problem), so each distinct
reference string is parsed once (``parse_reference``), and each distinct (reference, response) pair is verified
once (``TASKS[task].verify``, what ``score_response`` runs per call).
"""

import datasets
import evaluate
from hypergvl.evaluators._inputs import check_strings
from hypergvl.evaluators.accuracy import accuracy_scores, parse_row_reference

_DESCRIPTION = """
Accuracy of raw model responses on the HyperGVL benchmark. Every response is read as a careful human grader
would (the grading rules of the metric card, scorer version 2: the text after the last "Ans:" and after a closed
reasoning block; format echoes, placeholders and two contradicting answers unparsed) and verified against the row's `reference` (the task, its hypergraph(s), its
parameters and the canonical answer): counts and sets must match exactly, a planning answer (3-coloring, strict
hypercycle, Hamiltonian path) is accepted when it is a valid solution of the instance. Results mirror the paper:
overall accuracy, accuracy per task, Avg.U (mean over the understanding tasks VC, HEC, Ne, DVC, OEC, ONe),
Avg.R (mean over the reasoning tasks OSP, OMF, ISM, 3-CL, SHC, HHM), the share of unparseable responses, and
optional breakdowns by textual representation, visual representation, scale and source (Tables 3-4, Fig. 4).
All rates are percentages in [0, 100].
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): the raw model responses, one per benchmark sample.
    references (`list` of `str`): the `reference` column of the same rows (JSON with keys `task`, `hypergraph`,
        `hypergraph2`, `params`, `answer`).
    text_reps (`list` of `str`, optional): textual representation of each sample (e.g. "N-Set"); adds
        `by_text_rep`.
    visual_reps (`list` of `str`, optional): visual representation of each sample (e.g. "Enc-Hy"); adds
        `by_visual_rep`.
    scales (`list` of `str`, optional): "small", "medium" or "large" per sample; adds `by_scale`.
    sources (`list` of `str`, optional): "synthetic" or "real" per sample; adds `by_source` (and
        `by_source_and_scale`, keyed "source/scale", when `scales` is given too).
    return_verdicts (`bool`, default False): also return the per-sample `correct`, `unparsed` and `parsed` lists.
Returns:
    accuracy (`float`): percentage of correct responses over all samples, in [0, 100].
    per_task (`dict` of `str` to `float`): accuracy per task code present, in [0, 100], in the paper's task order.
    avg_u (`float` or `None`): mean of `per_task` over the understanding tasks present (None when none is).
    avg_r (`float` or `None`): mean of `per_task` over the reasoning tasks present (None when none is).
    unparsed_rate (`float`): percentage of responses with no recognisable answer, in [0, 100].
    num_samples (`int`): number of samples; `per_task_count` (`dict`): samples per task.
    by_text_rep, by_visual_rep, by_scale, by_source, by_source_and_scale (`dict` of `str` to `dict`), when the
        matching lists are given: the same statistics (accuracy, per_task, avg_u, avg_r, unparsed_rate,
        num_samples, per_task_count) for each group.
Raises:
    ValueError: lists of different lengths, a prediction that is not a string, or a reference that is not a
        HyperGVL row reference (not JSON, not an object, unknown task, missing keys).
Examples:
    >>> import json
    >>> metric = evaluate.load("evaluators/hypergvl_accuracy")
    >>> ref = json.dumps({"task": "VC", "hypergraph": {"num_vertices": 3, "hyperedges": [[0, 1], [1, 2]]},
    ...                   "hypergraph2": None, "params": {}, "answer": "3"})
    >>> results = metric.compute(predictions=["Ans: 3", "There are 4 vertices. Ans: 4", "I cannot tell."],
    ...                          references=[ref, ref, ref])
    >>> round(results["accuracy"], 2), round(results["per_task"]["VC"], 2), round(results["unparsed_rate"], 2)
    (33.33, 33.33, 33.33)
    >>> results["avg_u"] == results["per_task"]["VC"], results["avg_r"]
    (True, None)
"""

_CITATION = """\
@article{wei2026hypergvl,
  title={HyperGVL: Benchmarking and Improving Large Vision-Language Models in Hypergraph Understanding and
         Reasoning},
  author={Wei, Yanbin and Kang, Chun and Li, Siwei and Che, Haoxuan and Chen, Yang and Liu, Hua and Liu, Jian and
          Liu, Zhuang and Ouyang, Can and Xing, Fei and Sha, Lei and Liu, Rui and Zhang, Yu and Kwok, James},
  journal={arXiv preprint arXiv:2604.15648},
  year={2026}
}
"""

@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class HypergvlAccuracy(evaluate.Metric):
    """Verified accuracy on HyperGVL with the paper's aggregations (Tables 3-4, Fig. 4), in percent."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
            reference_urls=["https://arxiv.org/abs/2604.15648"],
        )

    def add_batch(self, *, predictions=None, references=None):
        """Add responses and row references, checking every response is a string and every reference valid."""
        check_strings({"predictions": predictions, "references": references})
        parsed = self.__dict__.setdefault("_parsed_references", {})  # handed to _compute, which empties it
        for i, text in enumerate(references):
            if text not in parsed:
                parsed[text] = parse_row_reference(i, text)
        super().add_batch(predictions=predictions, references=references)

    def add(self, *, prediction=None, reference=None):
        """Add one response and its row reference."""
        self.add_batch(predictions=[prediction], references=[reference])

    def _compute(self, predictions, references, text_reps=None, visual_reps=None, scales=None, sources=None,
                 return_verdicts=False):
        return accuracy_scores(predictions, references, text_reps, visual_reps, scales, sources, return_verdicts,
                               parsed_references=self.__dict__.pop("_parsed_references", {}))
