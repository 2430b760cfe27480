"""HyperGVL accuracy, computed: the one implementation behind the ``hypergvl_accuracy`` metric
(``evaluators/hypergvl_accuracy/``), ``hypergvl evaluate``/``score`` and the Space.

HyperGVL, sec. 3.2 / Table 3: accuracy per task, "Avg.U and Avg.R represent the average accuracy across
understanding and reasoning tasks" (the paper's six and six, :data:`hypergvl.paper.AVERAGES`, whatever else is
registered; a task beyond the paper's twelve counts in neither but in ``avg_ext``, its own average); sec. 3.4 / Table 4: the same per textual and per visual representation;
sec. 3.5 / Fig. 4: per hypergraph scale for synthetic and real-world hypergraphs. Each response is checked by the
task's verifier against the row's ``reference``; each distinct reference is parsed once and each distinct
(reference, response) pair verified once.

Calling :func:`accuracy_scores` directly costs nothing beyond numpy and the task verifiers; loading the metric
through ``evaluate`` imports transformers' pipelines (about 6 s), which the command line does not need.
"""
from __future__ import annotations

import gc

import numpy as np

from hypergvl.paper import averaged_over, averages
from hypergvl.tasks import TASKS, parse_reference, task_codes

from ._inputs import check_strings

__all__ = ["accuracy_scores", "parse_row_reference"]

_GROUPINGS = (("text_reps", "by_text_rep"), ("visual_reps", "by_visual_rep"), ("scales", "by_scale"),
              ("sources", "by_source"))


def parse_row_reference(index, text):
    """The row reference, parsed and validated once; ValueError naming the row otherwise."""
    try:
        return parse_reference(text)
    except ValueError as error:
        raise ValueError(f"references[{index}] is not a HyperGVL row reference: {error}") from None


def _summaries(group_of, num_groups, task_of, correct, unparsed, codes):
    """Per-group statistics from integer group and task indices (one bincount each, no Python loop per sample)."""
    num_tasks = len(codes)
    cell = group_of * num_tasks + task_of
    total = np.bincount(cell, minlength=num_groups * num_tasks).reshape(num_groups, num_tasks)
    right = np.bincount(cell, weights=correct, minlength=num_groups * num_tasks).reshape(num_groups, num_tasks)
    missed = np.bincount(group_of, weights=unparsed, minlength=num_groups)
    out = []
    for g in range(num_groups):
        n = int(total[g].sum())
        per_task = {codes[t]: float(100.0 * right[g, t] / total[g, t]) for t in range(num_tasks) if total[g, t]}
        out.append(
            {
                "accuracy": 100.0 * float(right[g].sum()) / n,
                "per_task": per_task,
                **averages(per_task),
                "unparsed_rate": 100.0 * float(missed[g]) / n,
                "num_samples": n,
                "per_task_count": {codes[t]: int(total[g, t]) for t in range(num_tasks) if total[g, t]},
            }
        )
    return out


def accuracy_scores(predictions, references, text_reps=None, visual_reps=None, scales=None, sources=None,
                    return_verdicts=False, parsed_references=None) -> dict:
    """The ``hypergvl_accuracy`` output (its card lists the keys); ``parsed_references``: reference string ->
    parsed reference, already parsed by the caller."""
    n = len(predictions)
    if n == 0:
        raise ValueError("no predictions given")
    groupings = {"text_reps": text_reps, "visual_reps": visual_reps, "scales": scales, "sources": sources}
    check_strings({"predictions": predictions, **{k: v for k, v in groupings.items() if v is not None}})

    codes = list(task_codes())  # every task registered now, the paper's first: the order of ``per_task``
    task_index = {code: t for t, code in enumerate(codes)}
    parsed_by_add_batch = parsed_references or {}
    entries = {}  # reference string -> (Reference, task index)
    verdicts = {}  # (reference string, response) -> Verdict
    task_of = np.empty(n, dtype=np.int64)
    results = []
    # Pause the cyclic garbage collector, which would otherwise rescan the growing caches again and again
    # (measurable on 84,000 samples); reference counting still frees everything, cycles go once it resumes.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for i, (response, reference_text) in enumerate(zip(predictions, references)):
            entry = entries.get(reference_text)
            if entry is None:
                reference = parsed_by_add_batch.get(reference_text) or parse_row_reference(i, reference_text)
                entry = entries[reference_text] = (reference, task_index[reference.task])
            task_of[i] = entry[1]
            verdict = verdicts.get((reference_text, response))
            if verdict is None:
                verdict = verdicts[(reference_text, response)] = TASKS[entry[0].task].verify(entry[0], response)
            results.append(verdict)
    finally:
        if collecting:
            gc.enable()
    correct = np.fromiter((v.correct for v in results), dtype=np.float64, count=n)
    unparsed = np.fromiter((v.unparsed for v in results), dtype=np.float64, count=n)

    def summarise(labels):
        names, group_of = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
        rows = _summaries(group_of.ravel(), len(names), task_of, correct, unparsed, codes)
        return dict(zip(names.tolist(), rows))

    output = _summaries(np.zeros(n, dtype=np.int64), 1, task_of, correct, unparsed, codes)[0]
    output["averaged_over"] = averaged_over(output["per_task"])  # the tasks each average is taken over
    for name, key in _GROUPINGS:
        if groupings[name] is not None:
            output[key] = summarise(groupings[name])
    if sources is not None and scales is not None:
        output["by_source_and_scale"] = summarise([f"{a}/{b}" for a, b in zip(sources, scales)])
    if return_verdicts:
        output["correct"] = [bool(v.correct) for v in results]
        output["unparsed"] = [bool(v.unparsed) for v in results]
        output["parsed"] = [v.parsed for v in results]
    return output
