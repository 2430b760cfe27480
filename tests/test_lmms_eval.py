"""HyperGVL as an lmms-eval task package (evaluators/lmms_eval/) and `hypergvl import-lmms-eval`.

The end-to-end test runs lmms-eval's own CLI (`python -m lmms_eval eval`) with its `llava_hf` wrapper on a tiny local
LLaVA and a small local build, offline, and checks sample by sample that it asks what `hypergvl evaluate --model
hf:DIR` asks (same raw responses), that the imported run equals the harness's run, and that `hypergvl report` and
`hypergvl score` read it."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hypergvl.cli import main

pytest.importorskip("lmms_eval")
pytest.importorskip("decord", reason="lmms-eval's llava_hf imports decord (the lmms-eval[video-legacy] extra)")

ROOT = Path(__file__).resolve().parent.parent
TASKS_DIR = ROOT / "evaluators" / "lmms_eval"
PAIRS = (("n_set", "enc_hy"), ("n_set", "st_inc"))  # one text rep: `evaluate` then asks exactly these pairs
LIMIT, TOKENS = 10, 8  # the first 10 rows of the build: 8 HEC (understanding) and 2 HHM (reasoning) problems
FIELDS = ("meta_id", "task", "text_rep", "visual_rep", "scale", "source", "finish_reason", "parsed", "correct",
          "unparsed", "reference")


def _rows(build):
    from datasets import load_dataset

    return load_dataset(str(build), split="test", cache_dir=str(build.parent / "cache"))


def _hooks():
    from hypergvl.evaluators.lmms_eval import utils

    return utils


# ------------------------------------------------------------------------------------------------ the task folder
def test_task_folder_has_one_subtask_per_pair_and_the_two_groups():
    import yaml
    from lmms_eval.tasks import TaskManager

    from hypergvl.evaluators.adapters import DEFAULT_MAX_NEW_TOKENS
    from hypergvl.vqa import TEXT_ONLY, VISUAL_REPS
    from hypergvl.text import TEXT_REPS

    index = TaskManager("ERROR", include_path=str(TASKS_DIR), include_defaults=False).task_index
    pairs = {f"hypergvl_{t}_{v}": (t, v) for t in TEXT_REPS for v in VISUAL_REPS}
    text_only = {f"hypergvl_{t}_{TEXT_ONLY}": (t, TEXT_ONLY) for t in TEXT_REPS}
    assert {k for k, v in index.items() if v["type"] == "task"} == set(pairs) | set(text_only)
    assert {k for k, v in index.items() if v["type"] == "group"} == {"hypergvl", "hypergvl_text_only"}
    for name, pair in {**pairs, **text_only}.items():
        cfg = yaml.safe_load((TASKS_DIR / f"{name}.yaml").read_text())
        assert (cfg["lmms_eval_specific_kwargs"]["default"]["text_rep"],
                cfg["lmms_eval_specific_kwargs"]["default"]["visual_rep"]) == pair == _hooks().pair_of(name)
    group = (TASKS_DIR / "hypergvl.yaml").read_text()
    assert [line.strip("- ") for line in group.splitlines() if line.startswith("  - hypergvl_")] == list(pairs)
    template = (TASKS_DIR / "_default_template.yaml").read_text()
    gen = yaml.safe_load(template.split("generation_kwargs:")[1].split("process_results")[0])
    assert gen == {"max_new_tokens": DEFAULT_MAX_NEW_TOKENS, "temperature": 0, "do_sample": False, "num_beams": 1,
                   "until": []}
    with pytest.raises(ValueError, match="not a HyperGVL lmms-eval task"):
        _hooks().pair_of("mme")


def test_task_files_are_generated_from_the_registries():
    """The shipped task and group files are what the registries generate (``python -m
    hypergvl.evaluators.lmms_eval`` rewrites them), and a newly registered representation gets its subtasks."""
    from hypergvl.evaluators.lmms_eval import task_files
    from hypergvl.text import TEXT_REPS, register_text_rep

    files = task_files()
    assert {p.name for p in TASKS_DIR.glob("hypergvl*.yaml")} == set(files)
    stale = [name for name, text in files.items() if (TASKS_DIR / name).read_text() != text]
    assert not stale, f"{stale}: run python -m hypergvl.evaluators.lmms_eval"
    register_text_rep("toy_rep", label="Toy", marker="toy", parse=lambda t: None)(lambda h, name="G": "toy")
    try:
        toy = task_files()
    finally:
        TEXT_REPS.unregister("toy_rep")
    assert "hypergvl_toy_rep_enc_hy.yaml" in toy and "hypergvl_toy_rep_none.yaml" in toy
    assert "  - hypergvl_toy_rep_cli_exp\n" in toy["hypergvl.yaml"]
    assert "  - hypergvl_toy_rep_none\n" in toy["hypergvl_text_only.yaml"]


def test_hooks_give_the_harness_prompt_and_image(small_build):
    utils = _hooks()
    docs = _rows(small_build)
    for i in (0, 9):
        doc = docs[i]
        kw = {"text_rep": "ho_inc", "visual_rep": "cli_exp"}
        assert utils.doc_to_text(doc, kw) == f"{doc['text_ho_inc']} {doc['question']}"
        (image,) = utils.doc_to_visual(doc, kw)
        assert image.mode == "RGB" and image.tobytes() == doc["image_cli_exp"].convert("RGB").tobytes()
        assert utils.doc_to_visual(doc, {"text_rep": "ho_inc", "visual_rep": "none"}) == []


def test_dataset_is_named_by_the_environment(small_build, tmp_path, monkeypatch):
    from hypergvl.build_folder import dataset_info

    utils = _hooks()
    monkeypatch.chdir(tmp_path)  # no ./hypergvl folder here: the default is the Hub id
    try:
        for value, expected in ((None, "hypergvl"), ("org/hypergvl", "org/hypergvl")):
            if value is None:
                monkeypatch.delenv(utils.ENV, raising=False)
            else:
                monkeypatch.setenv(utils.ENV, value)
            utils._dataset.cache_clear()
            assert (utils.DATASET_PATH, utils.DATASET_KWARGS) == (expected, {})
        monkeypatch.setenv(utils.ENV, str(small_build))
        utils._dataset.cache_clear()
        sha = dataset_info(str(small_build))["build_sha256"]
        assert utils.DATASET_PATH == str(small_build.resolve())
        assert Path(utils.DATASET_KWARGS["cache_dir"]).name == sha[:16]
        monkeypatch.setenv(utils.ENV, str(tmp_path))
        utils._dataset.cache_clear()
        with pytest.raises(ValueError, match="not a `hypergvl build` folder"):
            utils.DATASET_PATH
    finally:
        utils._dataset.cache_clear()


def test_process_results_grades_against_the_rows_answer(small_build):
    from hypergvl.answers import SCORER_VERSION

    utils = _hooks()
    docs = [d for d in _rows(small_build) if d["task"] in ("HEC", "SHC")]
    hec = next(d for d in docs if d["task"] == "HEC")
    right = utils.process_results(hec, [f"Ans: {hec['answer']}"])
    wrong = utils.process_results(hec, [f"Ans: {int(hec['answer']) + 1}"])
    assert set(right) == set(utils.METRICS) and right["accuracy"]["correct"] and not wrong["accuracy"]["correct"]
    echo = utils.process_results(hec, ["List the answer after “Ans:”."])
    assert echo["accuracy"]["unparsed"]
    shc = next(d for d in docs if d["task"] == "SHC")
    shc_right = utils.process_results(shc, [f"Ans: {shc['answer']}"])["avg_r"]
    assert shc_right["correct"]
    items = [right["accuracy"], wrong["accuracy"], shc_right]
    assert utils.aggregate_accuracy(items) == pytest.approx(200 / 3)
    assert utils.aggregate_avg_u(items) == 50.0 and utils.aggregate_avg_r(items) == 100.0
    assert utils.aggregate_unparsed_rate(items) == 0.0
    assert utils.aggregate_avg_r(items[:2]) != utils.aggregate_avg_r(items[:2])  # NaN: no reasoning task
    assert utils.SCORER_VERSION == SCORER_VERSION


# ------------------------------------------------------------------------------------------------ end to end
@pytest.fixture(scope="module")
def runs(small_build, tiny_llava, tmp_path_factory):
    """lmms-eval's CLI and `hypergvl evaluate` on the same tiny LLaVA, build and samples."""
    out = tmp_path_factory.mktemp("lmms")
    _lmms_eval(["--model", "llava_hf", "--model_args", f"pretrained={tiny_llava},device=cpu,device_map=cpu,dtype=float32",
                "--tasks", ",".join(f"hypergvl_{t}_{v}" for t, v in PAIRS), "--limit", str(LIMIT),
                "--gen_kwargs", f"max_new_tokens={TOKENS}"], out / "logs", small_build)
    assert main(["evaluate", "--dataset", str(small_build), "--model", f"hf:{tiny_llava}", "--out", str(out / "ours"),
                 "--text-reps", *sorted({t for t, _ in PAIRS}), "--visual-reps", *sorted({v for _, v in PAIRS}),
                 "--limit", str(LIMIT * len(PAIRS)), "--batch-size", "1", "--max-new-tokens", str(TOKENS), "--device", "cpu",
                 "--no-progress"]) == 0
    assert main(["import-lmms-eval", str(out / "logs"), "--dataset", str(small_build), "--out", str(out / "imported")]) == 0
    return out


def _lmms_eval(args, out, build):
    """Run lmms-eval's CLI on the HyperGVL tasks of ``build``, offline, logging its samples under ``out``."""
    env = dict(os.environ, HYPERGVL_DATASET=str(build), WANDB_MODE="disabled", HF_HUB_OFFLINE="1",
               HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false", OPENAI_API_KEY="x")
    cmd = [sys.executable, "-m", "lmms_eval", "eval", *args, "--include_path", str(TASKS_DIR),
           "--log_samples", "--output_path", str(out)]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _records(folder):
    return {r["id"]: r for r in map(json.loads, (folder / "samples.jsonl").read_text().splitlines())}


def test_lmms_eval_asks_what_hypergvl_evaluate_asks(runs):
    ours = _records(runs / "ours")
    (results_file,) = (runs / "logs").rglob("*_results.json")
    lmms = json.loads(results_file.read_text())["results"]
    seen = 0
    for t, v in PAIRS:
        (log,) = (runs / "logs").rglob(f"*_samples_hypergvl_{t}_{v}.jsonl")
        lines = [json.loads(line) for line in log.read_text().splitlines()]
        assert len(lines) == LIMIT
        for d in lines:
            rec = ours[f"{d['accuracy']['id']}/{t}/{v}"]
            # the same prompt, image and greedy decoding (lmms-eval logs the response stripped of white space)
            assert d["filtered_resps"] == rec["response"].strip()
            assert d["accuracy"]["correct"] == rec["correct"] and d["accuracy"]["parsed"] == rec["parsed"]
            seen += 1
        mine = [ours[f"{d['accuracy']['id']}/{t}/{v}"] for d in lines]
        assert lmms[f"hypergvl_{t}_{v}"]["accuracy,none"] == pytest.approx(100 * sum(r["correct"] for r in mine) / LIMIT)
        assert lmms[f"hypergvl_{t}_{v}"]["unparsed_rate,none"] == pytest.approx(
            100 * sum(r["unparsed"] for r in mine) / LIMIT)
    assert seen == len(ours) == LIMIT * len(PAIRS)
    assert {r["task"] for r in ours.values()} == {"HEC", "HHM"}
    assert len({r["response"] for r in ours.values()}) > len(ours) // 2  # responses depend on the input


def test_imported_run_equals_the_harness_run(runs, small_build, capsys):
    from hypergvl.answers import SCORER_VERSION
    from hypergvl.provenance import of

    ours, imported = _records(runs / "ours"), _records(runs / "imported")
    assert set(imported) == set(ours)
    for sid, rec in imported.items():
        assert {k: rec[k] for k in FIELDS} == {k: ours[sid][k] for k in FIELDS}, sid
        assert rec["response"] == ours[sid]["response"].strip()
    assert any(r["response"] != r["response"].strip() for r in ours.values())  # the white space is graded alike
    a = json.loads((runs / "imported" / "results.json").read_text())
    b = json.loads((runs / "ours" / "results.json").read_text())
    assert a["scores"] == b["scores"] and a["scorer_version"] == SCORER_VERSION
    assert a["dataset"] == b["dataset"] and a["selection"]["digest"] == b["selection"]["digest"]
    assert a["generation"]["max_new_tokens"] == TOKENS and a["truncated_share"] == b["truncated_share"]
    assert of(a)["config"]["command"] == "import-lmms-eval" and of(a)["commit"] == of(b)["commit"]
    assert of(a)["config"]["harness"] == {"name": "lmms-eval", "version": of(a)["config"]["lmms_eval_version"]}
    capsys.readouterr()
    assert main(["report", str(runs / "imported")]) == 0
    assert "| Avg.U | Avg.R |" in capsys.readouterr().out
    assert main(["score", str(runs / "imported"), "--dataset", str(small_build), "--out", str(runs / "rescored")]) == 0
    assert json.loads((runs / "rescored" / "results.json").read_text())["scores"] == a["scores"]


def _copy_logs(runs, tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(runs / "logs", logs)
    (log,) = logs.rglob(f"*_samples_hypergvl_{PAIRS[0][0]}_{PAIRS[0][1]}.jsonl")
    return logs, log, [json.loads(line) for line in log.read_text().splitlines()]


def _write(log, lines):
    log.write_text("".join(json.dumps(d) + "\n" for d in lines))


def test_import_grades_the_logged_response(runs, small_build, tmp_path):
    logs, log, lines = _copy_logs(runs, tmp_path)
    lines[0]["filtered_resps"] = f"Ans: {lines[0]['target']}"  # the row's own answer: right whatever the model said
    _write(log, lines)
    assert main(["import-lmms-eval", str(logs), "--dataset", str(small_build), "--out", str(tmp_path / "run")]) == 0
    imported, ours = _records(tmp_path / "run"), _records(runs / "ours")
    sid = f"{lines[0]['accuracy']['id']}/{PAIRS[0][0]}/{PAIRS[0][1]}"
    assert imported[sid]["correct"] and not ours[sid]["correct"]
    assert all(imported[k]["correct"] == ours[k]["correct"] for k in ours if k != sid)


def test_import_refuses_bad_logdirs(runs, small_build, tmp_path, capsys):
    def refused(logdir, message):
        capsys.readouterr()
        assert main(["import-lmms-eval", str(logdir), "--dataset", str(small_build), "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err

    refused(tmp_path / "missing", "is not a folder")
    (tmp_path / "empty").mkdir()
    refused(tmp_path / "empty", "holds no lmms-eval samples")
    logs, log, lines = _copy_logs(runs, tmp_path / "other-task")
    log.rename(log.with_name(log.name.split("_samples_")[0] + "_samples_mme.jsonl"))
    refused(logs, "not a HyperGVL lmms-eval task")
    logs, log, lines = _copy_logs(runs, tmp_path / "other-build")
    lines[0]["target"] = lines[0]["target"] + "0"
    _write(log, lines)
    refused(logs, "come from another build")
    logs, log, lines = _copy_logs(runs, tmp_path / "garbled")
    log.write_text("{not json\n")
    refused(logs, "is not an lmms-eval sample line")
    assert not (tmp_path / "x" / "results.json").exists()
    capsys.readouterr()
    assert main(["import-lmms-eval", str(runs / "logs"), "--dataset", str(small_build), "--out", str(runs / "ours")]) == 2
    assert "holds a run of hf:" in capsys.readouterr().err  # the harness's own run is never overwritten
    assert main(["import-lmms-eval", str(runs / "logs"), "--dataset", str(small_build), "--out",
                 str(runs / "imported")]) == 0  # importing the same run again is allowed


RIGHT = ("n_set", "ho_inc", "inc_mat")  # the loopback server answers these prompts with the row's answer


def _answering_server(build):
    """The loopback server of ``chat_server``, answering a prompt in a text representation of :data:`RIGHT` with
    its row's answer ("Ans: <answer>") and echoing every other prompt (a format echo: unparsed)."""
    from chat_server import ChatHandler, ChatServer

    class Handler(ChatHandler):
        def _send(self, status, body, headers=()):
            reply = json.loads(body)
            if status == 200 and "choices" in reply:
                message = reply["choices"][0]["message"]
                message["content"] = self.server.answers.get(message["content"][len("echo:"):], message["content"])
            super()._send(status, json.dumps(reply).encode(), headers)

    server = ChatServer()
    server.RequestHandlerClass = Handler
    server.answers = {f"{row[f'text_{t}']} {row['question']}": f"Ans: {row['answer']}" for row in _rows(build)
                      for t in RIGHT}
    return server


def test_text_only_group_through_lmms_eval_openai_wrapper(small_build, tmp_path):
    """The text-only track (sec. 3.3), as the group ``hypergvl_text_only``, through lmms-eval's ``openai`` wrapper
    and through ``hypergvl evaluate --model openai:``, against the same loopback server: equal responses are equal
    prompts, and the group's statistics are those of the whole selection."""
    import threading

    from hypergvl.text import TEXT_REPS

    server = _answering_server(small_build)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        _lmms_eval(["--model", "openai", "--model_args", f"model=tiny,base_url={server.base_url}",
                    "--tasks", "hypergvl_text_only", "--limit", "3"], tmp_path / "logs", small_build)
        assert main(["evaluate", "--dataset", str(small_build), "--model", "openai:tiny", "--base-url",
                     server.base_url, "--out", str(tmp_path / "ours"), "--visual-reps", "none",
                     "--limit", str(3 * len(TEXT_REPS)), "--no-progress"]) == 0
    finally:
        server.shutdown()
        server.server_close()
    assert len(server.requests) == 2 * 3 * len(TEXT_REPS)
    assert not any("image" in json.dumps(r["body"]) for r in server.requests)
    assert main(["import-lmms-eval", str(tmp_path / "logs"), "--dataset", str(small_build), "--out",
                 str(tmp_path / "imported"), "--model-type", "closed"]) == 0
    ours, imported = _records(tmp_path / "ours"), _records(tmp_path / "imported")
    assert set(imported) == set(ours) and len(ours) == 3 * len(TEXT_REPS)
    for sid, rec in imported.items():
        assert {k: rec[k] for k in FIELDS + ("response",)} == {k: ours[sid][k] for k in FIELDS + ("response",)}
        assert rec["correct"] == (rec["text_rep"] in RIGHT)
    (results_file,) = (tmp_path / "logs").rglob("*_results.json")
    group = json.loads(results_file.read_text())["results"]["hypergvl_text_only"]
    mine = json.loads((tmp_path / "ours" / "results.json").read_text())
    theirs = json.loads((tmp_path / "imported" / "results.json").read_text())
    assert theirs["scores"] == mine["scores"] and theirs["text_only"] and theirs["model"]["type"] == "closed"
    assert mine["scores"]["accuracy"] == pytest.approx(100 * len(RIGHT) / len(TEXT_REPS))
    for key in ("accuracy", "avg_u", "unparsed_rate"):
        assert group[f"{key},none"] == pytest.approx(mine["scores"][key]), key


@pytest.mark.slow
def test_hypergvl_group_sends_the_harness_prompts_and_images(small_build, tmp_path):
    """The group ``hypergvl`` (35 pairs) through lmms-eval's ``openai`` wrapper and the default ``hypergvl evaluate``
    selection against the same loopback server: pixel-identical images with identical prompts in every request, and
    the group's statistics equal the run's."""
    import base64
    import hashlib
    import io
    import threading

    from PIL import Image

    from hypergvl.vqa import VISUAL_REPS
    from hypergvl.text import TEXT_REPS

    pairs = len(TEXT_REPS) * len(VISUAL_REPS)
    server = _answering_server(small_build)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        _lmms_eval(["--model", "openai", "--model_args", f"model=tiny,base_url={server.base_url}",
                    "--tasks", "hypergvl", "--limit", "1"], tmp_path / "logs", small_build)
        theirs = len(server.requests)
        assert main(["evaluate", "--dataset", str(small_build), "--model", "openai:tiny", "--base-url",
                     server.base_url, "--out", str(tmp_path / "ours"), "--limit", str(pairs), "--no-progress"]) == 0
    finally:
        server.shutdown()
        server.server_close()

    def asked(request):
        parts = {p["type"]: p for p in request["body"]["messages"][0]["content"]}
        image = Image.open(io.BytesIO(base64.b64decode(parts["image_url"]["image_url"]["url"].split(",", 1)[1])))
        return parts["text"]["text"], hashlib.sha256(image.convert("RGB").tobytes()).hexdigest()

    assert theirs == pairs and len(server.requests) == 2 * pairs
    assert sorted(map(asked, server.requests[:theirs])) == sorted(map(asked, server.requests[theirs:]))
    (results_file,) = (tmp_path / "logs").rglob("*_results.json")
    group = json.loads(results_file.read_text())["results"]["hypergvl"]
    mine = json.loads((tmp_path / "ours" / "results.json").read_text())["scores"]
    assert mine["accuracy"] == pytest.approx(100 * len(RIGHT) / len(TEXT_REPS))
    for key in ("accuracy", "avg_u", "unparsed_rate"):
        assert group[f"{key},none"] == pytest.approx(mine[key]), key
