"""Hooks of the HyperGVL tasks for lmms-eval (``lmms-eval --include_path evaluators/lmms_eval``).

HyperGVL sec. 3.1: "For all LVLMs, the zero-shot setting is adopted for the evaluation. The LVLMs are required to
provide answers in predefined formats". A lmms-eval document is one meta-problem row; each subtask shows it in one
(text, visual) representation pair, named by its ``lmms_eval_specific_kwargs`` (``text_rep``, ``visual_rep``;
``visual_rep: none`` is the text-only track of sec. 3.3). The prompt and the image are those ``hypergvl evaluate``
sends: :func:`hypergvl.vqa.expand` makes them, and the image is decoded to RGB as the ``hf:`` adapter
decodes it. Responses are graded by :func:`hypergvl.tasks.score_response` and aggregated by the
``hypergvl_accuracy`` metric: accuracy, Avg.U and Avg.R ("the average accuracy across understanding and reasoning
tasks", sec. 3.2, Table 3) and the share of unparsed answers, in percent.

The data: ``$HYPERGVL_DATASET``, a build folder (``hypergvl build --out DIR``) or a Hub dataset id; ``hypergvl``
when unset (the folder ``hypergvl build`` writes without ``--out``, else that Hub id). The task YAMLs read
``DATASET_PATH`` and ``DATASET_KWARGS`` (a local build is cached under its own sha256, as the harness
caches it). Loaded as ``hypergvl.evaluators.lmms_eval.utils``, so it needs the ``hypergvl`` package installed.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

from hypergvl.answers import SCORER_VERSION  # noqa: F401 - the tasks' version (metadata.version)

# imports inside functions: lmms-eval imports this module while it indexes its task folders, whichever tasks are
# asked for, so the hooks import what they use (0.3 s: the task registry, the expansion, the renderers) when called.
ENV = "HYPERGVL_DATASET"
PREFIX = "hypergvl_"
METRICS = ("accuracy", "avg_u", "avg_r", "unparsed_rate")


@functools.lru_cache(maxsize=1)
def _dataset() -> tuple[str, dict]:
    """(``dataset_path``, ``dataset_kwargs``) of ``$HYPERGVL_DATASET``, read once a task YAML asks for them."""
    name = os.environ.get(ENV, "hypergvl")
    path = Path(name).expanduser()
    if not path.is_dir():
        return name, {}
    from hypergvl.build_folder import build_cache_dir, dataset_info

    sha = dataset_info(str(path))["build_sha256"]
    if sha is None:
        raise ValueError(f"${ENV}={name} holds no parquet shards: not a `hypergvl build` folder")
    return str(path.resolve()), {"cache_dir": build_cache_dir(sha)}


def __getattr__(name: str):
    """``DATASET_PATH`` and ``DATASET_KWARGS``, computed on first use (importing this module reads no data)."""
    if name == "DATASET_PATH":
        return _dataset()[0]
    if name == "DATASET_KWARGS":
        return dict(_dataset()[1])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def task_name(text_rep: str, visual_rep: str) -> str:
    """The lmms-eval task of a representation pair: ``hypergvl_<text rep>_<visual rep>`` (``..._none`` text only)."""
    return f"{PREFIX}{text_rep}_{visual_rep}"


def pair_of(task: str) -> tuple[str, str]:
    """The (text rep, visual rep) of a task named by :func:`task_name`; ValueError for any other name."""
    from hypergvl.vqa import TEXT_ONLY, VISUAL_REPS
    from hypergvl.text import TEXT_REPS

    for t in TEXT_REPS:
        for v in (*VISUAL_REPS, TEXT_ONLY):
            if task == task_name(t, v):
                return t, v
    raise ValueError(f"{task!r} is not a HyperGVL lmms-eval task (hypergvl_<text rep>_<visual rep>)")


def _sample(doc: dict, text_rep: str, visual_rep: str) -> dict:
    from hypergvl.vqa import expand

    return expand([doc], (text_rep,), (visual_rep,))[0]


def doc_to_text(doc: dict, lmms_eval_specific_kwargs: dict) -> str:
    """The text representation, then the appendix E.2 question: the harness's prompt. It does not depend on the
    image, and lmms-eval also asks for it with the image columns removed, so it is taken from the text-only sample."""
    from hypergvl.vqa import TEXT_ONLY

    return _sample(doc, lmms_eval_specific_kwargs["text_rep"], TEXT_ONLY)["prompt"]


def doc_to_visual(doc: dict, lmms_eval_specific_kwargs: dict) -> list:
    """The rendered representation as one RGB image, or no image on the text-only track."""
    from hypergvl.evaluators.adapters import _pil_image

    kwargs = lmms_eval_specific_kwargs
    image = _sample(doc, kwargs["text_rep"], kwargs["visual_rep"])["image"]
    return [] if image is None else [_pil_image(image)]


def process_results(doc: dict, results: list) -> dict:
    """The verdict of the response (lmms-eval hands it stripped of surrounding white space) for every metric."""
    from hypergvl.tasks import score_response

    if "reference" not in doc:
        raise ValueError("this is a questions-only set: lmms-eval cannot grade it; run it with `hypergvl evaluate` "
                         "or import its logged samples with `hypergvl import-lmms-eval` and `hypergvl score`")
    verdict = score_response(doc["reference"], results[0])
    item = {"id": doc["id"], "task": doc["task"], "reference": doc["reference"], "response": results[0],
            "parsed": verdict.parsed, "correct": verdict.correct, "unparsed": verdict.unparsed}
    return {m: item for m in METRICS}


@functools.lru_cache(maxsize=1)
def _metric():
    # lazy: evaluate 19 s (it pulls datasets); lmms-eval imports this module to index its tasks
    import evaluate

    from hypergvl.evaluators import metric_path

    return evaluate.load(metric_path("hypergvl_accuracy"))


@functools.lru_cache(maxsize=4)
def _scores(pairs: tuple) -> dict:
    references, responses = zip(*pairs)
    return _metric().compute(predictions=list(responses), references=list(references))


def _aggregate(key: str, items: list) -> float:
    """One statistic of the ``hypergvl_accuracy`` summary of a subtask (NaN where it is None: Avg.U of a selection
    without understanding tasks). The four statistics of a subtask share one computation."""
    value = _scores(tuple((i["reference"], i["response"]) for i in items))[key]
    return float("nan") if value is None else float(value)


def aggregate_accuracy(items: list) -> float:
    return _aggregate("accuracy", items)


def aggregate_avg_u(items: list) -> float:
    return _aggregate("avg_u", items)


def aggregate_avg_r(items: list) -> float:
    return _aggregate("avg_r", items)


def aggregate_unparsed_rate(items: list) -> float:
    return _aggregate("unparsed_rate", items)
