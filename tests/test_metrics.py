"""The evaluate-loadable metric folders: loading offline, documented examples, values against independent truth
(scikit-learn, hand counts, a pandas group-by), and clear errors for hostile input."""
from __future__ import annotations

import doctest
import os
import re
import sys
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, average_precision_score, f1_score, roc_auc_score

evaluate = pytest.importorskip("evaluate")

ROOT = Path(__file__).resolve().parents[1]
NAMES = ("hypergraph_fairness", "hyperedge_prediction", "hypergraph_classification", "hypergvl_accuracy")
_LOADED: dict[str, object] = {}


def load(name: str):
    """``evaluate.load`` from the folder, once per session (each compute starts from an empty cache)."""
    if name not in _LOADED:
        _LOADED[name] = evaluate.load(str(ROOT / "evaluators" / name))
    return _LOADED[name]


def fresh(name: str):
    """A new instance with its own cache file, for calls that fail: evaluate keeps a failed call's cache-file lock,
    so the next call using the same file would wait a second for it."""
    return evaluate.load(str(ROOT / "evaluators" / name), experiment_id=uuid.uuid4().hex)


def test_offline_and_private_hf_home():
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert Path(os.environ["HF_HOME"]).resolve() != Path.home() / ".cache" / "huggingface"


@pytest.mark.parametrize("name", NAMES)
def test_loads_from_folder(name):
    metric = load(name)
    assert isinstance(metric, evaluate.Metric)
    # evaluate copied the script into the private HF_HOME module cache: nothing came from a global cache.
    assert Path(sys.modules[type(metric).__module__].__file__).resolve().is_relative_to(
        Path(os.environ["HF_HOME"]).resolve())
    assert metric.name == name
    assert metric.info.citation.strip() and metric.info.description.strip()
    # BibTeX as LaTeX reads it: one backslash before a command, and every entry closed
    assert "\\\\" not in metric.info.citation
    assert metric.info.citation.count("{") == metric.info.citation.count("}")
    assert set(metric.info.features) >= {"references"}


def test_metric_path_lists_every_folder():
    import hypergvl.evaluators as evaluators

    folders = sorted(p.parent.name for p in (ROOT / "evaluators").glob("*/*.py") if p.stem == p.parent.name)
    assert sorted(evaluators.METRIC_NAMES) == folders == sorted(NAMES)
    assert evaluators.metric_path("hypergvl_accuracy") == str(ROOT / "evaluators" / "hypergvl_accuracy")
    with pytest.raises(ValueError, match="choose one of hypergvl_accuracy, hypergraph_fairness"):
        evaluators.metric_path("accuracy")


def _card_doctest(text: str) -> str:
    """The ```python blocks of a metric card that hold doctest prompts, as one doctest text."""
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return "\n".join(block for block in blocks if ">>>" in block)


@pytest.mark.parametrize("name", NAMES)
def test_documented_examples_run(name, monkeypatch):
    monkeypatch.chdir(ROOT)  # the examples load "evaluators/<name>" relative to the checkout, as a user would
    module = sys.modules[type(load(name)).__module__]
    card = (ROOT / "evaluators" / name / "README.md").read_text(encoding="utf-8")
    for label, text in (("_KWARGS_DESCRIPTION", module._KWARGS_DESCRIPTION), ("README.md", _card_doctest(card))):
        test = doctest.DocTestParser().get_doctest(text, {"evaluate": evaluate}, f"{name} {label}", None, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        runner.run(test, out=lambda s: None)
        result = runner.summarize(verbose=False)
        assert result.attempted > 0 and result.failed == 0, f"{name} {label}: {result}"


@pytest.mark.parametrize("name", NAMES)
def test_metric_card_sections(name):
    card = (ROOT / "evaluators" / name / "README.md").read_text(encoding="utf-8")
    front = re.match(r"---\n(.*?)\n---\n", card, flags=re.S)
    assert front, "YAML front matter"
    import yaml

    meta = yaml.safe_load(front.group(1))
    assert {"title", "tags", "description"} <= set(meta) and {"evaluate", "metric"} <= set(meta["tags"])
    for heading in ("## Metric Description", "## How to Use", "### Inputs", "### Output Values", "### Examples",
                    "## Limitations and Bias", "## Citation"):
        assert heading in card, heading


# ----------------------------------------------------------------------------------------------- fairness
def _fairness_by_counting(y_hat, y, s):
    """DHG-Bench B.5 eqs. (2) and (4) by counting, in percent."""
    def rate(rows):
        return sum(y_hat[i] for i in rows) / len(rows)

    idx = range(len(y))
    dp = abs(rate([i for i in idx if s[i] == 0]) - rate([i for i in idx if s[i] == 1]))
    eo = abs(rate([i for i in idx if s[i] == 1 and y[i] == 1]) - rate([i for i in idx if s[i] == 0 and y[i] == 1]))
    return {"accuracy": 100 * sum(a == b for a, b in zip(y_hat, y)) / len(y), "delta_dp": 100 * dp,
            "delta_eo": 100 * eo}


def test_fairness_hand_computed():
    metric = load("hypergraph_fairness")
    # s=0: acceptance 3/4; s=1: 1/4 -> ΔDP 50. Positives: s=0 {0,1} both accepted (TPR 1); s=1 {4,5}: one (1/2).
    # Correct: nodes 0, 1, 3, 4, 6, 7 -> 75%.
    out = metric.compute(predictions=[1, 1, 1, 0, 1, 0, 0, 0], references=[1, 1, 0, 0, 1, 1, 0, 0],
                         sensitive_attributes=[0, 0, 0, 0, 1, 1, 1, 1])
    assert out == pytest.approx({"accuracy": 75.0, "delta_dp": 50.0, "delta_eo": 50.0})
    # A constant predictor is perfectly "fair" under both gaps.
    out = metric.compute(predictions=[1] * 6, references=[1, 0, 1, 1, 0, 1], sensitive_attributes=[0, 1, 0, 1, 0, 1])
    assert out == pytest.approx({"accuracy": 400 / 6, "delta_dp": 0.0, "delta_eo": 0.0})
    # Maximal disparity: everybody in s=0 accepted, nobody in s=1.
    out = metric.compute(predictions=[1, 1, 0, 0], references=[1, 0, 1, 0], sensitive_attributes=[0, 0, 1, 1])
    assert out == pytest.approx({"accuracy": 50.0, "delta_dp": 100.0, "delta_eo": 100.0})


@pytest.mark.parametrize("seed", range(5))
def test_fairness_random_against_counting(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 300))
    y_hat, y, s = (rng.integers(0, 2, n).tolist() for _ in range(3))
    s[:2], y[:2] = [0, 1], [1, 1]  # both groups have a positive node
    out = load("hypergraph_fairness").compute(predictions=y_hat, references=y, sensitive_attributes=s)
    assert out == pytest.approx(_fairness_by_counting(y_hat, y, s), abs=1e-9)
    assert all(0 <= v <= 100 for v in out.values())


@pytest.mark.parametrize("inputs, message", [
    (([1, 2, 0], [1, 0, 1], [0, 1, 1]), "predictions must be binary"),
    (([1, 0, 0], [1, 0.5, 1], [0, 1, 1]), "references must be binary"),
    (([1, 0, 0], [1, 0, 1], [0, -1, 1]), "sensitive_attributes must be binary"),
    (([1, 0.7, 0], [1, 0, 1], [0, 1, 1]), "predictions must be binary"),
    (([1, float("nan"), 0], [1, 0, 1], [0, 1, 1]), "predictions must be binary"),
    (([1, 0, 0], [1, 0, 1], [0, 0, 0]), "empty group: no node with s=1"),
    (([1, 0, 0], [1, 0, 1], [1, 1, 1]), "empty group: no node with s=0"),
    (([1, 0, 0], [0, 1, 1], [0, 1, 1]), "empty group: no node with s=0 and y=1"),
    (([1, 0], [1, 0, 1], [0, 1, 1]), "differ in length"),
    (([], [], []), "no predictions"),
    (([1, None, 0], [1, 0, 1], [0, 1, 1]), r"predictions\[1\] must be a number"),
    (("101", [1, 0, 1], [0, 1, 1]), "must be a list"),
])
def test_fairness_errors(inputs, message):
    predictions, references, sensitive = inputs
    with pytest.raises(ValueError, match=message):
        fresh("hypergraph_fairness").compute(predictions=predictions, references=references,
                                             sensitive_attributes=sensitive)


# ----------------------------------------------------------------------------------------------- sklearn metrics
@pytest.mark.parametrize("seed", range(5))
def test_hyperedge_prediction_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 500))
    labels = rng.integers(0, 2, n)
    labels[:2] = [0, 1]
    scores = np.round(rng.normal(size=n) + labels * rng.uniform(0, 2), 1)  # rounding makes ties
    out = load("hyperedge_prediction").compute(prediction_scores=scores.tolist(), references=labels.tolist())
    assert out["auroc"] == pytest.approx(100 * roc_auc_score(labels, scores))
    assert out["ap"] == pytest.approx(100 * average_precision_score(labels, scores))
    # numpy arrays in, same result
    again = load("hyperedge_prediction").compute(prediction_scores=scores, references=labels)
    assert again == pytest.approx(out)


def test_hyperedge_prediction_extremes():
    metric = load("hyperedge_prediction")
    assert metric.compute(prediction_scores=[3, 2, 1, 0], references=[1, 1, 0, 0]) == {"auroc": 100.0, "ap": 100.0}
    out = metric.compute(prediction_scores=[0, 1, 2, 3], references=[1, 1, 0, 0])
    assert out["auroc"] == 0.0 and out["ap"] == pytest.approx(100 * (1 / 3 + 2 / 4) / 2)


@pytest.mark.parametrize("scores, labels, message", [
    ([0.1, 0.2], [1, 1], "single class"),
    ([0.1, float("nan")], [1, 0], "finite"),
    ([0.1, float("inf")], [1, 0], "finite"),
    ([0.1, 0.2], [1, 2], "must be 0 or 1"),
    ([0.1, 0.2, 0.3], [1, 0], "differ in length"),
    ([[0.1], [0.2]], [1, 0], "must be a number"),
    (None, [1, 0], "missing"),
])
def test_hyperedge_prediction_errors(scores, labels, message):
    with pytest.raises(ValueError, match=message):
        fresh("hyperedge_prediction").compute(prediction_scores=scores, references=labels)


@pytest.mark.parametrize("seed", range(5))
def test_hypergraph_classification_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(5, 400)), int(rng.integers(2, 11))
    y = rng.integers(0, k, n)
    y_hat = np.where(rng.random(n) < 0.6, y, rng.integers(0, k + 1, n))  # class k never in references
    out = load("hypergraph_classification").compute(predictions=y_hat.tolist(), references=y.tolist())
    assert out["accuracy"] == pytest.approx(100 * accuracy_score(y, y_hat))
    assert out["macro_f1"] == pytest.approx(100 * f1_score(y, y_hat, average="macro", zero_division=0))


@pytest.mark.parametrize("predictions, references, message", [
    ([0, 1.5], [0, 1], "integer class ids"),
    ([0, float("nan")], [0, 1], "integer class ids"),
    ([0, 1e300], [0, 1], "integer class ids"),
    ([0, "1"], [0, 1], "must be a number"),
    ({"a": 1}, [0], "must be a list"),
    ([], [], "no predictions"),
])
def test_hypergraph_classification_errors(predictions, references, message):
    with pytest.raises(ValueError, match=message):
        fresh("hypergraph_classification").compute(predictions=predictions, references=references)


# ----------------------------------------------------------------------------------------------- HyperGVL accuracy
SCALES = ("small", "medium", "large")


@pytest.fixture(scope="module")
def benchmark_rows():
    tasks = pytest.importorskip("hypergvl.tasks")
    return [tasks.generate_problem(code, seed, SCALES[seed % 3]) for code in tasks.TASKS for seed in range(3)]


def _responses(rows, rng):
    """Per row several samples: right answer, another row's answer, verbose, no answer at all."""
    samples = []
    for row in rows:
        for rep in range(6):
            other = rows[int(rng.integers(len(rows)))]["answer"]
            text = [f"Ans: {row['answer']}", f"Ans: {other}", f"Thinking... Ans: {row['answer']}",
                    "no idea", "", f"Ans: {row['answer']}"][int(rng.integers(6))]
            samples.append({"response": text, "reference": row["reference"], "task": row["task"],
                            "text_rep": f"T{rep % 3}", "visual_rep": f"V{rep % 2}", "scale": row["scale"],
                            "source": "real" if rep == 5 else "synthetic"})
    return samples


def _expected(frame: pd.DataFrame) -> dict:
    """The paper's averages, computed here: Avg.U over its six understanding tasks, Avg.R over its six reasoning
    tasks, and Avg.Ext over any task beyond them."""
    from hypergvl.paper import PAPER_REASONING, PAPER_TASKS, PAPER_UNDERSTANDING

    per_task = (100 * frame.groupby("task")["correct"].mean()).to_dict()
    u = [v for t, v in per_task.items() if t in PAPER_UNDERSTANDING]
    r = [v for t, v in per_task.items() if t in PAPER_REASONING]
    x = [v for t, v in per_task.items() if t not in PAPER_TASKS]
    return {"accuracy": 100 * frame["correct"].mean(), "per_task": per_task, "avg_u": np.mean(u) if u else None,
            "avg_r": np.mean(r) if r else None, "avg_ext": np.mean(x) if x else None,
            "unparsed_rate": 100 * frame["unparsed"].mean(),
            "num_samples": len(frame), "per_task_count": frame.groupby("task").size().to_dict()}


def _assert_summary(got: dict, want: dict):
    assert got["num_samples"] == want["num_samples"] and got["per_task_count"] == want["per_task_count"]
    for key in ("accuracy", "avg_u", "avg_r", "avg_ext", "unparsed_rate"):
        assert got[key] == pytest.approx(want[key]), key
    assert got["per_task"] == pytest.approx(want["per_task"])


def test_hypergvl_accuracy_against_per_sample_loop_and_groupby(benchmark_rows):
    from hypergvl.paper import PAPER_UNDERSTANDING
    from hypergvl.tasks import score_response, task_codes

    samples = _responses(benchmark_rows, np.random.default_rng(0))
    frame = pd.DataFrame(samples)
    verdicts = [score_response(s["reference"], s["response"]) for s in samples]
    frame["correct"] = [v.correct for v in verdicts]
    frame["unparsed"] = [v.unparsed for v in verdicts]
    assert 0 < frame["correct"].mean() < 1 and frame["unparsed"].any()  # the data exercise every branch

    out = load("hypergvl_accuracy").compute(
        predictions=frame["response"].tolist(), references=frame["reference"].tolist(),
        text_reps=frame["text_rep"].tolist(), visual_reps=frame["visual_rep"].tolist(),
        scales=frame["scale"].tolist(), sources=frame["source"].tolist(), return_verdicts=True)
    assert out["correct"] == frame["correct"].tolist() and out["unparsed"] == frame["unparsed"].tolist()
    assert out["parsed"] == [v.parsed for v in verdicts]
    _assert_summary(out, _expected(frame))
    assert list(out["per_task"]) == list(task_codes())  # the paper's column order, then any task beyond it
    assert out["avg_u"] == pytest.approx(np.mean([out["per_task"][t] for t in PAPER_UNDERSTANDING]))
    assert out["averaged_over"]["accuracy"] == list(task_codes())
    frame["source_scale"] = frame["source"] + "/" + frame["scale"]
    for key, column in (("by_text_rep", "text_rep"), ("by_visual_rep", "visual_rep"), ("by_scale", "scale"),
                        ("by_source", "source"), ("by_source_and_scale", "source_scale")):
        groups = dict(tuple(frame.groupby(column)))
        assert set(out[key]) == set(groups), key
        for label, part in groups.items():
            _assert_summary(out[key][label], _expected(part))


def test_hypergvl_accuracy_order_and_duplicates_do_not_matter(benchmark_rows):
    samples = _responses(benchmark_rows, np.random.default_rng(1))
    metric = load("hypergvl_accuracy")
    base = metric.compute(predictions=[s["response"] for s in samples], references=[s["reference"] for s in samples])
    order = np.random.default_rng(2).permutation(len(samples))
    shuffled = metric.compute(predictions=[samples[i]["response"] for i in order],
                              references=[samples[i]["reference"] for i in order])
    _assert_summary(shuffled, base)
    tripled = metric.compute(predictions=[s["response"] for s in samples] * 3,
                             references=[s["reference"] for s in samples] * 3)
    assert tripled["accuracy"] == pytest.approx(base["accuracy"]) and tripled["num_samples"] == 3 * len(samples)


def test_hypergvl_accuracy_accepts_any_string(benchmark_rows):
    hostile = ["", " ", "Ans:", "Ans: " * 1000, "Ans: " + "9" * 5000, "\x00\x1b[31m", "Ans: {v1,v2,", "Ans: 💥",
               "Ans: Coloring:[v0:c9]", "Ans: Cycle:[e999999999999]", "Ans: Path:[]", "x" * 200_000, "Ans: -1e309"]
    rows = benchmark_rows
    predictions = [h for h in hostile for _ in rows]
    references = [row["reference"] for _ in hostile for row in rows]
    out = load("hypergvl_accuracy").compute(predictions=predictions, references=references)
    assert out["num_samples"] == len(predictions) and 0 <= out["accuracy"] <= 100


@pytest.mark.parametrize("kwargs, message", [
    ({"predictions": ["Ans: 3", None]}, r"predictions\[1\] must be a string"),
    ({"predictions": ["Ans: 3"]}, "differ in length"),
    ({"predictions": "Ans: 3"}, "must be a list"),
    ({"references": ["{not json", "{}"]}, r"references\[0\] is not a HyperGVL row reference"),
    ({"references": ["[1, 2]", "[1, 2]"]}, "is not a HyperGVL row reference"),
    ({"references": ['{"task": "XYZ", "hypergraph": {"num_vertices": 2, "hyperedges": []}, "params": {},'
                     ' "answer": "2"}'] * 2}, "unknown task"),
    ({"scales": ["small"]}, "differ in length"),
    ({"sources": ["real", 3]}, r"sources\[1\] must be a string"),
    ({"predictions": [], "references": []}, "no predictions"),
])
def test_hypergvl_accuracy_errors(benchmark_rows, kwargs, message):
    reference = benchmark_rows[0]["reference"]
    call = {"predictions": ["Ans: 3", "Ans: 4"], "references": [reference, reference], **kwargs}
    with pytest.raises(ValueError, match=message):
        fresh("hypergvl_accuracy").compute(**call)


def test_metrics_load_by_metric_path_from_another_folder(tmp_path, monkeypatch):
    """The README's form works wherever the user stands; the relative checkout path does not."""
    from hypergvl.evaluators import metric_path

    monkeypatch.chdir(tmp_path)
    metric = evaluate.load(metric_path("hypergvl_accuracy"))
    from hypergvl.tasks import generate_problem

    row = generate_problem("VC", 0, "small")
    out = metric.compute(predictions=[f"Ans: {row['answer']}"], references=[row["reference"]])
    assert out["accuracy"] == 100.0
    with pytest.raises(FileNotFoundError):
        evaluate.load("evaluators/hypergvl_accuracy")
