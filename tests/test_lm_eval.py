"""HyperGVL's text-only track as an lm-evaluation-harness task group (evaluators/lm_eval/) and `hypergvl import-lm-eval`.

The agreement test runs lm-eval's own CLI (`lm_eval --model hf ... --include_path evaluators/lm_eval --log_samples`) on
a tiny causal LM built from a config and a build of every task (one meta problem each), offline, and checks sample
by sample that it asks what `hypergvl evaluate --model hf:DIR --visual-reps none` asks (the same responses), grades
as it grades, and that the imported run equals the harness's run."""
import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from hypergvl.cli import main

pytest.importorskip("lm_eval")

ROOT = Path(__file__).resolve().parent.parent
TASKS_DIR = ROOT / "evaluators" / "lm_eval"
REPS = ("ho_neigh", "n_set")  # two text representations of the 12 problems: 24 samples
TOKENS = 8
FIELDS = ("meta_id", "task", "text_rep", "visual_rep", "scale", "source", "response", "parsed", "correct", "unparsed",
          "reference")


@pytest.fixture(scope="module")
def build12(tmp_path_factory) -> Path:
    """One meta problem of each of the twelve tasks."""
    from hypergvl.builder import BuildConfig, build

    out = tmp_path_factory.mktemp("build12") / "hypergvl"
    build(BuildConfig(out=out, per_task=1, rows_per_shard=12, workers=1), progress=False)
    return out


@pytest.fixture
def dataset_env(build12, monkeypatch):
    """``$HYPERGVL_DATASET`` naming ``build12`` for the hooks in this process (their caches cleared around it)."""
    from hypergvl.evaluators import lm_eval
    from hypergvl.evaluators.lmms_eval import utils

    monkeypatch.setenv(utils.ENV, str(build12))
    utils._dataset.cache_clear(), lm_eval._rows.cache_clear()
    yield build12
    utils._dataset.cache_clear(), lm_eval._rows.cache_clear()


def _toy_task():
    from hypergvl.tasks import TASKS, VC

    class Toy(VC):
        code = "TOY"

    TASKS.register("TOY", Toy())


# ------------------------------------------------------------------------------------------------ the task folder
def test_task_files_are_generated_from_the_registries():
    """The shipped files are what the registries generate (``python -m hypergvl.evaluators.lm_eval`` rewrites them),
    and a newly registered task or text representation appears in them."""
    from hypergvl.evaluators.lm_eval import task_files
    from hypergvl.tasks import TASKS
    from hypergvl.text import TEXT_REPS, register_text_rep

    files = task_files()
    assert {p.name for p in TASKS_DIR.glob("*.yaml")} == set(files)
    stale = [name for name, text in files.items() if (TASKS_DIR / name).read_text() != text]
    assert not stale, f"{stale}: run python -m hypergvl.evaluators.lm_eval"
    register_text_rep("toy_rep", label="Toy", marker="toy", parse=lambda t: None)(lambda h, name="G": "toy")
    _toy_task()
    try:
        toy = task_files()
    finally:
        TEXT_REPS.unregister("toy_rep")
        TASKS.unregister("TOY")
    # its own task, outside the group, which is the paper's twelve (the tasks of a default build)
    assert "hypergvl_text_toy.yaml" in toy and "hypergvl_text_toy" not in toy["hypergvl_text.yaml"]
    assert toy["hypergvl_text.yaml"] == files["hypergvl_text.yaml"]
    assert "hypergvl_task: 'TOY'" in toy["hypergvl_text_toy.yaml"]
    assert all("    - toy_rep\n" in text for name, text in toy.items() if name.startswith("hypergvl_text_"))
    assert "avg_u" not in toy["hypergvl_text_toy.yaml"] and "avg_r" not in toy["hypergvl_text_toy.yaml"]


def test_lm_eval_indexes_one_task_per_hypergvl_task_and_the_group():
    import yaml
    from lm_eval.tasks import TaskManager

    from hypergvl.evaluators.adapters import DEFAULT_MAX_NEW_TOKENS
    from hypergvl.paper import PAPER_REASONING as REASONING, PAPER_UNDERSTANDING as UNDERSTANDING
    from hypergvl.tasks import TASKS

    index = TaskManager(include_path=str(TASKS_DIR), include_defaults=False).task_index
    names = {"hypergvl_text_" + c.lower().replace("-", "") for c in TASKS}
    assert {k for k, v in index.items() if v.kind.name == "TASK"} == names
    assert {k for k, v in index.items() if v.kind.name == "GROUP"} == {"hypergvl_text"}
    class Loader(yaml.SafeLoader):  # the `!function utils.NAME` tags read as their names
        pass

    Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))
    template = yaml.load((TASKS_DIR / "_default_template.yaml").read_text(), Loader=Loader)
    assert template["custom_dataset"] == "utils.load_docs" and template["doc_to_text"] == "prompt"
    assert template["generation_kwargs"] == {"until": [], "do_sample": False, "temperature": 0,
                                             "max_gen_toks": DEFAULT_MAX_NEW_TOKENS}
    for code in TASKS:
        text = (TASKS_DIR / f"hypergvl_text_{code.lower().replace('-', '')}.yaml").read_text()
        assert ("metric: avg_u\n" in text) == (code in UNDERSTANDING)
        assert ("metric: avg_r\n" in text) == (code in REASONING)


def test_documents_are_the_harness_samples(dataset_env):
    from hypergvl.evaluators.lm_eval import code_of, docs
    from hypergvl.tasks import TASKS
    from hypergvl.text import TEXT_REPS
    from hypergvl.vqa import expand

    from datasets import load_dataset

    rows = load_dataset(str(dataset_env), split="test", cache_dir=str(dataset_env.parent / "cache"))
    hec = rows.select([i for i, t in enumerate(rows["task"]) if t == "HEC"])
    expected = list(expand(hec, tuple(TEXT_REPS), ("none",)))
    got = docs("HEC")
    assert [d["id"] for d in got] == [s["id"] for s in expected] and len(got) == len(TEXT_REPS)
    assert [d["prompt"] for d in got] == [s["prompt"] for s in expected]
    assert all(d["answer"] == hec[0]["answer"] and d["reference"] == hec[0]["reference"] for d in got)
    assert [d["text_rep"] for d in docs("HEC", ["n_set"])] == ["n_set"]
    assert code_of("hypergvl_text_3cl") == "3-CL"
    with pytest.raises(ValueError, match="not a HyperGVL lm-eval task"):
        code_of("gsm8k")
    _toy_task()
    try:
        with pytest.raises(ValueError, match="holds no TOY problems.*hypergvl_text_vc,hypergvl_text_hec"):
            docs("TOY")
    finally:
        TASKS.unregister("TOY")
    from hypergvl.text import register_text_rep

    register_text_rep("toy_rep", label="Toy", marker="toy", parse=lambda t: None)(lambda h, name="G": "toy")
    try:
        with pytest.raises(ValueError, match="no text_toy_rep column"):
            docs("VC")
        assert len(docs("VC", ["n_set"])) == 1
    finally:
        TEXT_REPS.unregister("toy_rep")


def test_hooks_grade_with_the_suites_grader(dataset_env):
    from hypergvl.evaluators.lm_eval import docs, utils

    hec, shc = docs("HEC", ["n_set"])[0], docs("SHC", ["n_set"])[0]
    right = utils.process_results(hec, [f"Ans: {hec['answer']}"])
    wrong = utils.process_results(hec, [f"Ans: {int(hec['answer']) + 1}"])
    assert set(right) == {"accuracy", "avg_u", "unparsed_rate"} and right["accuracy"]["correct"]
    assert not wrong["accuracy"]["correct"] and not wrong["accuracy"]["unparsed"]
    assert utils.process_results(hec, ["List the answer after “Ans:”."])["accuracy"]["unparsed"]
    shc_right = utils.process_results(shc, [f"Ans: {shc['answer']}"])
    assert set(shc_right) == {"accuracy", "avg_r", "unparsed_rate"} and shc_right["avg_r"]["correct"]
    items = [right["accuracy"], wrong["accuracy"], shc_right["accuracy"]]
    assert utils.aggregate_accuracy(items) == pytest.approx(200 / 3)
    assert utils.aggregate_avg_u(items[:2]) == 50.0 and utils.aggregate_avg_r(items[2:]) == 100.0
    assert utils.aggregate_unparsed_rate(items) == 0.0


def test_the_group_reports_all_avg_u_and_avg_r(dataset_env):
    """Through lm-eval's own evaluator and group aggregation, with a model that answers VC, HEC and OSP right and
    answers "?" elsewhere (unparsed): All = 3/12, Avg.U = 2/6, Avg.R = 1/6 (every task holds one sample)."""
    import lm_eval
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager

    class Oracle(LM):
        def generate_until(self, requests, disable_tqdm=False):
            return [f"Ans: {r.doc['answer']}" if r.doc["task"] in ("VC", "HEC", "OSP") else "?" for r in requests]

        def loglikelihood(self, requests):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests):
            raise NotImplementedError

    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata={"text_reps": ["ho_neigh"]})
    out = lm_eval.simple_evaluate(model=Oracle(), tasks=["hypergvl_text"], task_manager=manager)
    group = out["groups"]["hypergvl_text"] if "hypergvl_text" in out.get("groups", {}) else out["results"]["hypergvl_text"]
    assert group["accuracy,none"] == pytest.approx(25.0)
    assert group["avg_u,none"] == pytest.approx(100 * 2 / 6) and group["avg_r,none"] == pytest.approx(100 / 6)
    assert group["unparsed_rate,none"] == pytest.approx(75.0)
    assert out["results"]["hypergvl_text_hec"]["avg_u,none"] == 100.0
    assert "avg_r,none" not in out["results"]["hypergvl_text_hec"]


# ------------------------------------------------------------------------------------------------ end to end
def _lm_eval_cli(args, out: Path, build: Path):
    """lm-eval's console script, as a user runs it, offline, on the HyperGVL tasks of ``build``."""
    script = Path(sys.executable).with_name("lm_eval")
    cmd = [str(script)] if script.is_file() else [sys.executable, "-m", "lm_eval"]
    env = dict(os.environ, HYPERGVL_DATASET=str(build), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    done = subprocess.run([*cmd, *args, "--include_path", str(TASKS_DIR), "--log_samples", "--output_path", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.fixture(scope="module")
def runs(build12, tiny_llm, tmp_path_factory):
    """lm-eval's CLI and `hypergvl evaluate` on the same tiny causal LM, build and samples."""
    out = tmp_path_factory.mktemp("lm-eval")
    _lm_eval_cli(["--model", "hf", "--model_args", f"pretrained={tiny_llm},dtype=float32", "--device", "cpu",
                  "--tasks", "hypergvl_text", "--apply_chat_template", "--gen_kwargs", f"max_gen_toks={TOKENS}",
                  "--metadata", json.dumps({"text_reps": list(REPS)})], out / "logs", build12)
    assert main(["evaluate", "--dataset", str(build12), "--model", f"hf:{tiny_llm}", "--out", str(out / "ours"),
                 "--text-reps", *REPS, "--visual-reps", "none", "--batch-size", "1", "--max-new-tokens", str(TOKENS),
                 "--device", "cpu", "--no-progress"]) == 0
    assert main(["import-lm-eval", str(out / "logs"), "--dataset", str(build12), "--out", str(out / "imported")]) == 0
    return out


def _records(folder):
    return {r["id"]: r for r in map(json.loads, (folder / "samples.jsonl").read_text().splitlines())}


def _logged(logs: Path) -> dict[str, dict]:
    return {d["doc"]["id"]: d for log in logs.rglob("samples_hypergvl_text_*.jsonl")
            for d in map(json.loads, log.read_text().splitlines())}


def test_lm_eval_asks_and_grades_what_hypergvl_evaluate_does(runs):
    ours, logged = _records(runs / "ours"), _logged(runs / "logs")
    assert set(logged) == set(ours) and len(ours) == 12 * len(REPS)
    for sid, d in logged.items():
        rec = ours[sid]
        assert d["filtered_resps"] == [rec["response"]], sid  # the same prompt and greedy decoding
        verdict = d["accuracy"]
        assert (verdict["parsed"], verdict["correct"], verdict["unparsed"]) == (rec["parsed"], rec["correct"],
                                                                                rec["unparsed"]), sid
    assert len({r["response"] for r in ours.values()}) > len(ours) // 2  # responses depend on the prompt
    (results_file,) = (runs / "logs").rglob("results_*.json")
    results = json.loads(results_file.read_text())
    group = results["groups"]["hypergvl_text"]
    scores = json.loads((runs / "ours" / "results.json").read_text())["scores"]
    for key in ("accuracy", "avg_u", "avg_r", "unparsed_rate"):
        assert group[f"{key},none"] == pytest.approx(scores[key]), key
    assert 0 < scores["unparsed_rate"] < 100  # some answers parse, some do not: the verdicts are compared
    for code, per_task in scores["per_task"].items():
        name = "hypergvl_text_" + code.lower().replace("-", "")
        assert results["results"][name]["accuracy,none"] == pytest.approx(per_task)


def test_imported_run_equals_the_harness_run(runs, build12, capsys):
    from hypergvl.answers import SCORER_VERSION
    from hypergvl.provenance import of

    ours, imported = _records(runs / "ours"), _records(runs / "imported")
    assert set(imported) == set(ours)
    for sid, rec in imported.items():
        assert {k: rec[k] for k in FIELDS} == {k: ours[sid][k] for k in FIELDS}, sid
        assert rec["finish_reason"] is None  # lm-eval logs no token counts
    a = json.loads((runs / "imported" / "results.json").read_text())
    b = json.loads((runs / "ours" / "results.json").read_text())
    assert a["scores"] == b["scores"] and a["scorer_version"] == SCORER_VERSION and a["text_only"] is True
    assert a["dataset"] == b["dataset"] and a["selection"] == b["selection"]
    assert a["generation"]["max_new_tokens"] == TOKENS and a["generation"]["do_sample"] is False
    assert a["generation"]["chat_template_applied"] is True
    config = of(a)["config"]
    assert config["command"] == "import-lm-eval"
    assert config["harness"] == {"name": "lm-eval", "version": metadata.version("lm-eval")}
    capsys.readouterr()
    assert main(["report", str(runs / "imported")]) == 0
    assert "(text only)" in capsys.readouterr().out
    assert main(["score", str(runs / "imported"), "--dataset", str(build12), "--out", str(runs / "rescored")]) == 0
    assert json.loads((runs / "rescored" / "results.json").read_text())["scores"] == a["scores"]


def _copy_logs(runs, tmp_path, task="hypergvl_text_vc"):
    logs = tmp_path / "logs"
    shutil.copytree(runs / "logs", logs)
    (log,) = logs.rglob(f"samples_{task}_*.jsonl")
    return logs, log, [json.loads(line) for line in log.read_text().splitlines()]


def _write(log, lines):
    log.write_text("".join(json.dumps(d) + "\n" for d in lines))


def test_import_grades_the_logged_response(runs, build12, tmp_path):
    logs, log, lines = _copy_logs(runs, tmp_path)
    lines[0]["filtered_resps"] = [f"Ans: {lines[0]['target']}"]  # the row's own answer: right whatever the model said
    _write(log, lines)
    assert main(["import-lm-eval", str(logs), "--dataset", str(build12), "--out", str(tmp_path / "run")]) == 0
    imported, ours = _records(tmp_path / "run"), _records(runs / "ours")
    sid = lines[0]["doc"]["id"]
    assert imported[sid]["correct"] and not ours[sid]["correct"]
    assert all(imported[k]["correct"] == ours[k]["correct"] for k in ours if k != sid)
    scores = json.loads((tmp_path / "run" / "results.json").read_text())["scores"]
    assert scores["per_task"]["VC"] == 100 / len(REPS)


def test_import_refuses_bad_logdirs(runs, build12, tmp_path, capsys):
    def refused(logdir, message):
        capsys.readouterr()
        assert main(["import-lm-eval", str(logdir), "--dataset", str(build12), "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err

    refused(tmp_path / "missing", "is not a folder")
    (tmp_path / "empty").mkdir()
    refused(tmp_path / "empty", "holds no lm-eval samples")
    logs, log, lines = _copy_logs(runs, tmp_path / "other-task")
    log.rename(log.with_name(log.name.replace("hypergvl_text_vc", "gsm8k")))
    refused(logs, "not a HyperGVL lm-eval task")
    logs, log, lines = _copy_logs(runs, tmp_path / "other-build")
    lines[0]["doc"]["reference"] = lines[1]["doc"]["reference"].replace("[", "[[0],", 1)  # another problem
    _write(log, lines)
    refused(logs, "come from another build")
    logs, log, lines = _copy_logs(runs, tmp_path / "other-prompt")
    lines[0]["doc"]["prompt"] = "Q: " + lines[0]["doc"]["prompt"]
    _write(log, lines)
    refused(logs, "another prompt")
    logs = tmp_path / "two-runs"
    shutil.copytree(runs / "logs", logs)
    for f in list(logs.rglob("*_20*")):
        shutil.copy(f, f.with_name(f.name.replace("_20", "_19", 1)))
    refused(logs, "holds 2 lm-eval runs")


def test_the_space_labels_an_imported_row_by_its_harness(runs):
    """The leaderboard's "Scored from" names the harness an uploaded run was imported from (its results.json
    provenance, as the Space keeps it); anything else there leaves the plain label."""
    from hypergvl.space.scoring import submitted_provenance
    from hypergvl.space.store import Entry
    from hypergvl.space.tabs.leaderboard import scored_from

    def label(origin, results):
        return scored_from(Entry(model="m", revision="main", testset="public-0", track="text-only", model_type="open",
                                 num_parameters=None, link="", scores={}, cells=[], num_samples=0,
                                 dataset_sha256="0" * 64, origin=origin,
                                 submitted_provenance=submitted_provenance(results)))

    imported = json.loads((runs / "imported" / "results.json").read_text())
    ours = json.loads((runs / "ours" / "results.json").read_text())
    assert label("upload", imported) == f"uploaded responses (lm-eval {metadata.version('lm-eval')})"
    assert label("upload", ours) == "uploaded responses" and label("request", imported) == "server run"
    forged = {"provenance": {"config": {"harness": {"name": "lm-eval", "version": "=HYPERLINK(\"x\")"}}}}
    assert label("upload", forged) == "uploaded responses (lm-eval)"
    assert label("upload", {"provenance": {"config": {"harness": {"name": "my-harness", "version": "1"}}}}) \
        == "uploaded responses"
