"""The grading corpus: hand-written model responses with the verdict a careful human grader gives, run through the
hypergvl_accuracy metric; and the invariant that no response repeating only the question or its format is ever
graded correct.

The corpus (``tests/grading_corpus/*.yaml``, problems in ``references.yaml``) covers every grading rule of the
metric card (reasoning blocks, the answer region, placeholders and two answers, whole-token integers, number words,
"no path", sets, Yes/No verdicts, plans checked against the hypergraph) and the ways models answer: reasoning
before the answer, restated questions, lists, tables, Markdown, LaTeX, hedging, cut-off reasoning.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from hypergvl.hypergraph import Hypergraph
from hypergvl.paper import PAPER_TASKS
from hypergvl.tasks import TASKS, Instance, generate_problem, score_response, task_codes

CORPUS = Path(__file__).resolve().parent / "grading_corpus"
VERDICTS = ("correct", "wrong", "unparsed")


def _reference(spec: dict) -> str:
    h = Hypergraph.from_json(spec["hypergraph"])
    h2 = Hypergraph.from_json(spec["hypergraph2"]) if spec.get("hypergraph2") else None
    answer = spec.get("answer") or TASKS[spec["task"]].solve(Instance(h, spec["params"], h2))
    return json.dumps({"task": spec["task"], "hypergraph": spec["hypergraph"], "hypergraph2": spec.get("hypergraph2"),
                       "params": spec["params"], "answer": answer}, sort_keys=True)


@pytest.fixture(scope="module")
def references() -> dict[str, str]:
    spec = yaml.safe_load((CORPUS / "references.yaml").read_text(encoding="utf-8"))
    refs = {name: _reference(r) for name, r in spec["refs"].items()}
    for name, (task, seed, scale) in spec["generated"].items():
        refs[name] = generate_problem(task, seed, scale, index=seed)["reference"]
    return refs


@pytest.fixture(scope="module")
def corpus(references) -> list[tuple[str, str, str, str]]:
    """(file:case number, reference name, response, verdict) for every labelled pair."""
    pairs = []
    for path in sorted(CORPUS.glob("*.yaml")):
        if path.name == "references.yaml":
            continue
        for i, case in enumerate(yaml.safe_load(path.read_text(encoding="utf-8"))):
            assert set(case) <= {"response", "verdicts", "rule"}, (path.name, i, case)
            for name, verdict in case["verdicts"].items():
                assert name in references and verdict in VERDICTS, (path.name, i, name, verdict)
                pairs.append((f"{path.name}:{i}", name, case["response"], verdict))
    return pairs


def test_every_reference_accepts_its_own_answer(references):
    for name, ref in references.items():
        assert score_response(ref, "Ans: " + json.loads(ref)["answer"]).correct, name


def test_corpus_covers_every_task_with_all_three_verdicts(corpus, references):
    assert len(corpus) >= 500
    per_task: dict[str, set[str]] = {}
    for _, name, _, verdict in corpus:
        per_task.setdefault(json.loads(references[name])["task"], set()).add(verdict)
    assert set(per_task) == set(PAPER_TASKS)  # the corpus is hand-written for the paper's twelve
    assert all(v == set(VERDICTS) for v in per_task.values()), per_task
    assert len({response for _, _, response, _ in corpus}) >= 300  # written by hand, not one template


def test_metric_agrees_with_the_human_verdicts(corpus, references):
    import evaluate

    metric = evaluate.load(str(Path(__file__).resolve().parents[1] / "evaluators" / "hypergvl_accuracy"))
    out = metric.compute(predictions=[p[2] for p in corpus], references=[references[p[1]] for p in corpus],
                         return_verdicts=True)
    disagreements = []
    for (where, name, response, verdict), correct, unparsed, parsed in zip(
            corpus, out["correct"], out["unparsed"], out["parsed"]):
        got = "correct" if correct else "unparsed" if unparsed else "wrong"
        if got != verdict:
            disagreements.append(f"{where} [{name}] human: {verdict}, metric: {got} (parsed {parsed!r}): {response!r}")
    assert not disagreements, f"{len(disagreements)} of {len(corpus)} disagree:\n" + "\n".join(disagreements)


# ------------------------------------------------------------------ the invariant: the question is not an answer
_TEMPLATE = re.compile(r"(?:format|as) “([^”]*)”")


def _echoes(row: dict) -> list[str]:
    q = row["question"]
    plain = q[3:].replace("“", '"').replace("”", '"').replace("’", "'")
    templates = _TEMPLATE.findall(q) + [t for t in ("{v1,v2,...}", "[Yes/No]", "Yes/No", "yes or no") if t in q]
    templates += ["[number]", "<answer>", "X", "[your answer]", "...", "{v_i, ...}", "not sure (yes or no?)"]
    out = [q, q[3:], plain, q + "\nAns:", plain + "\nAns:", f"Q: {plain}\n\nAns: "]
    for t in templates:
        out += [f"Ans: {t}", f"{q}\nAns: {t}", f"{plain} Ans: {t}", f"**Ans:** {t}", f"<think>{q}</think>\nAns: {t}"]
    return out


@pytest.mark.parametrize("code", task_codes())
def test_repeating_the_question_or_its_format_is_never_correct(code):
    for scale in ("small", "medium", "large"):
        for seed in range(6):
            row = generate_problem(code, seed, scale, index=seed)
            for response in _echoes(row):
                verdict = score_response(row["reference"], response)
                assert not verdict.correct, (row["id"], row["answer"], response, verdict)
