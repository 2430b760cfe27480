"""Hooks of the HyperGVL text-only tasks for lm-evaluation-harness (``lm_eval --include_path evaluators/lm_eval``).

lm-eval loads this file by its path (``!function utils.NAME`` in the YAML files), once per task, so it holds no
state: the documents come from :func:`hypergvl.evaluators.lm_eval.docs` (the build read once a process) and every
response is graded by :func:`hypergvl.tasks.score_response`; the statistics are those of
:func:`hypergvl.evaluators.accuracy.accuracy_scores`, the one implementation behind the ``hypergvl_accuracy`` metric,
``hypergvl evaluate`` and the Space.
"""
from __future__ import annotations

from datasets import Dataset, DatasetDict

from hypergvl.answers import SCORER_VERSION  # noqa: F401 - the tasks' version (metadata.version)
from hypergvl.evaluators.accuracy import accuracy_scores
from hypergvl.evaluators.lm_eval import docs, metrics_of
from hypergvl.tasks import score_response


def load_docs(hypergvl_task: str, text_reps=None, **_) -> DatasetDict:
    """lm-eval's ``custom_dataset``: called with the task's ``metadata`` (``hypergvl_task``, ``text_reps``; a
    ``--metadata '{"text_reps": [...]}'`` narrows the representations) and the model arguments, which it ignores."""
    return DatasetDict({"test": Dataset.from_list(docs(hypergvl_task, text_reps))})


def process_results(doc: dict, results: list) -> dict:
    """The verdict of the response, under every statistic its task reports."""
    verdict = score_response(doc["reference"], results[0])
    item = {"id": doc["id"], "reference": doc["reference"], "response": results[0], "parsed": verdict.parsed,
            "correct": verdict.correct, "unparsed": verdict.unparsed}
    return {m: item for m in metrics_of(doc["task"])}


def _statistic(key: str, items: list) -> float:
    value = accuracy_scores([i["response"] for i in items], [i["reference"] for i in items])[key]
    return float("nan") if value is None else float(value)


def aggregate_accuracy(items: list) -> float:
    return _statistic("accuracy", items)


def aggregate_avg_u(items: list) -> float:
    return _statistic("avg_u", items)


def aggregate_avg_r(items: list) -> float:
    return _statistic("avg_r", items)


def aggregate_unparsed_rate(items: list) -> float:
    return _statistic("unparsed_rate", items)
