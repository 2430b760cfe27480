"""The evaluation worker: requests go PENDING -> RUNNING -> FINISHED | FAILED; a killed worker loses nothing."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chat_server import serve
from conftest import fresh, vision_samples
from hypergvl.space.config import SpaceConfig
from hypergvl.space.scoring import SubmissionError
from hypergvl.space.service import Service, Submission
from hypergvl.space.store import FAILED, FINISHED, PENDING, SQLiteStore
from hypergvl.space.worker import Worker

ROOT = Path(__file__).resolve().parents[2]


def test_request_runs_to_finished_with_the_servers_scores(space_service, tmp_path):
    svc = fresh(space_service, tmp_path)
    public = svc.sets.current("public").name
    req = svc.request(Submission(model="baseline:symbolic", testset=public, revision="v1"), "ip:1")
    assert [r.status for r in svc.store.requests()] == [PENDING]
    with pytest.raises(SubmissionError, match="already on the leaderboard or in the queue"):
        svc.request(Submission(model="baseline:symbolic", testset=public, revision="v1"), "ip:2")
    assert Worker(svc, "w1", ttl_s=60).run_once().id == req.id
    (done,) = svc.store.requests()
    assert done.status == FINISHED
    (entry,) = svc.store.entries()
    seeded = next(e for e in space_service.entries() if e.testset == public and e.model == "baseline:symbolic"
                  and e.track == "vision")
    assert entry.id == req.id and entry.origin == "request" and entry.scores["per_task"] == seeded.scores["per_task"]
    assert Worker(svc, "w1").run_once() is None  # nothing left


def test_failure_is_shown(space_service, tmp_path):
    svc = fresh(space_service, tmp_path)
    svc.request(Submission(model="hf:nobody/no-such-model", testset=svc.sets.current("public").name), "ip:1")
    Worker(svc, "w1", ttl_s=60).run_once()
    (r,) = svc.store.requests()
    assert r.status == FAILED and "nobody/no-such-model" in r.error
    assert svc.store.entries() == []


def test_requests_are_validated(space_service, tmp_path):
    from dataclasses import replace

    svc = fresh(space_service, tmp_path)
    public = svc.sets.current("public").name
    for model, message in (("not a model", "Hub model id"), ("pip:evil", "Hub model id"),
                           ("hf:../../etc", "not a Hub model id")):
        with pytest.raises(SubmissionError, match=message):
            svc.request(Submission(model=model, testset=public), "ip:1")
    deployed = Service(replace(SpaceConfig.from_env({"SPACE_ID": "org/space"}), data_dir=svc.config.data_dir),
                       svc.store, svc.sets)
    assert deployed.config.request_prefixes == ("hf", "openai") and deployed.config.api_models == ()
    with pytest.raises(SubmissionError):
        deployed.request(Submission(model="baseline:symbolic", testset=public), "ip:1")
    with pytest.raises(SubmissionError, match="local model paths"):
        deployed.request(Submission(model="hf:/tmp/model", testset=public), "ip:1")
    with pytest.raises(SubmissionError, match="runs no API models"):
        deployed.request(Submission(model="openai:gpt-4o", testset=public), "ip:1")
    served = Service(replace(deployed.config, api_models=("gpt-4o",)), svc.store, svc.sets)
    with pytest.raises(SubmissionError, match="runs these API models: gpt-4o"):
        served.request(Submission(model="openai:my-own-server", testset=public), "ip:1")
    assert svc.store.requests() == []


def test_killed_worker_loses_no_answer_and_the_request_completes(space_service, tmp_path):
    """SIGKILL a worker mid-run: its claim expires (PENDING again, never stuck in RUNNING), the next worker resumes
    the same run folder and asks the server only for what was not answered, then finishes."""
    data = tmp_path / "data"
    shutil.copytree(space_service.config.data_dir, data, ignore=shutil.ignore_patterns("leaderboard.sqlite*", "runs"))
    from dataclasses import replace

    svc = Service(replace(space_service.config, data_dir=data), SQLiteStore(data / "leaderboard.sqlite"))
    public = svc.sets.current("public").name
    req = svc.request(Submission(model="openai:echo", testset=public, model_type="closed"), "ip:1")
    log = data / "runs" / req.id / "samples.jsonl"
    with serve(delay=lambda prompt: 0.03) as chat:
        env = dict(os.environ, HYPERGVL_SPACE_DATA=str(data), HYPERGVL_PER_TASK="1",
                   PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.Popen([sys.executable, "-m", "hypergvl.space.worker", "--once", "--ttl-s", "2", "--worker-id", "doomed",
                                 "--base-url", chat.base_url], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
        while not log.exists() or log.read_text().count("\n") < 40:  # no deadline: a busy machine only slows it
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        answered = log.read_text().count("\n")
        assert 40 <= answered < vision_samples()
        first_ids = [line.split('"id": "')[1].split('"')[0] for line in log.read_text().splitlines()]
        served_before = chat.served
        time.sleep(2.2)
        assert [r.status for r in svc.store.requests()] == [PENDING]  # the claim expired: not stuck in RUNNING
        Worker(svc, "rescuer", ttl_s=60, base_url=chat.base_url).run_once()
        asked_again = chat.served - served_before
    (r,) = svc.store.requests()
    assert r.status == FINISHED and r.attempts == 2
    (entry,) = svc.store.entries()
    assert entry.num_samples == vision_samples()
    assert asked_again <= vision_samples() - answered + 8  # only the unanswered samples (plus those in flight at the kill)
    final = log.read_text()
    assert all(f'"id": "{i}"' in final for i in first_ids)


def test_app_and_worker_do_not_know_which_store(space_service, tmp_path):
    """The same upload, request and worker run over the Hub store (a fake Hub API) as over SQLite."""
    from fake_hub import FakeHub

    from hypergvl.space.hub_store import HubStore
    from hypergvl.space.tabs.leaderboard import leaderboard_frame

    hub = FakeHub()
    hub.create_repo("org/requests", repo_type="dataset")
    hub.create_repo("org/results", repo_type="dataset")
    store = HubStore(hub, "org/requests", "org/results", cache_ttl_s=0)
    from dataclasses import replace

    svc = Service(replace(space_service.config, data_dir=tmp_path / "d"), store, space_service.sets)
    public = svc.sets.current("public").name
    upload = tmp_path / "samples.jsonl"
    shutil.copy(space_service.config.data_dir / "runs" / "seed" / public / "baseline-random-vision" / "samples.jsonl",
                upload)
    svc.submit_upload(upload, Submission(model="org/uploaded", testset=public), "ip:1")
    svc.request(Submission(model="baseline:symbolic", testset=public), "ip:1")
    Worker(svc, "w1", ttl_s=60).run_once()
    assert [r.status for r in store.requests()] == [FINISHED]
    frame = leaderboard_frame(svc, public)
    assert sorted(frame["Model"]) == ["baseline:symbolic", "org/uploaded"]
    assert sum(f.startswith("results/") for f in hub.files("org/results")) == 2  # one JSON per result


# ------------------------------------------------------------------------------------------------ budgets (issue 43)
def test_a_request_past_its_time_budget_fails_and_keeps_its_answers(space_service, tmp_path):
    """The worker runs a request in a child process stopped at ``request_budget_s``: FAILED with the budget named,
    the answers given so far kept in its run folder, the token budget sent with every API call."""
    svc = fresh(space_service, tmp_path, request_budget_s=8, request_max_new_tokens=77)
    req = svc.request(Submission(model="openai:echo", testset=svc.sets.current("public").name,
                                 model_type="closed"), "ip:1")
    with serve(delay=lambda prompt: 0.2) as chat:
        Worker(svc, "w1", ttl_s=60, base_url=chat.base_url).run_once()
        (r,) = svc.store.requests()
        assert r.status == FAILED and "the evaluation took longer than 8 s and was stopped" in r.error
        # stopped by the budget, not finished: 420 answers at 200 ms and 4 at a time take over 20 s
        assert svc.store.entries() == []
        # what was answered before the stop is kept (on a busy machine the child may still have been starting:
        # then nothing was asked; the killed-worker test covers resuming from kept answers)
        log = svc.config.data_dir / "runs" / req.id / "samples.jsonl"
        answered = log.read_text().count("\n") if log.exists() else 0
        assert answered < vision_samples() and answered <= len(chat.requests)
        assert {r["body"]["max_tokens"] for r in chat.requests} <= {77}


def test_a_request_whose_workers_keep_dying_is_failed(space_service, tmp_path):
    """Each claim counts an attempt; a request claimed ``request_attempts`` times without finishing (its worker
    died each time: the claim expired) is FAILED by the next worker instead of run again."""
    svc = fresh(space_service, tmp_path, request_attempts=2)
    svc.request(Submission(model="baseline:symbolic", testset=svc.sets.current("public").name), "ip:1")
    for attempt in range(2):
        assert svc.store.claim(f"doomed{attempt}", 0.01) is not None
        time.sleep(0.05)  # the claim expires: PENDING again
    Worker(svc, "w3", ttl_s=60).run_once()
    (r,) = svc.store.requests()
    assert r.status == FAILED and r.error.startswith("gave up after 2 attempts") and r.attempts == 3
    assert svc.store.entries() == []


def test_a_model_that_needs_remote_code_is_never_run(space_service, tmp_path):
    """A checkpoint's own code (``auto_map``, ``trust_remote_code``) could answer by program or recognise problems:
    the harness loads architectures of the installed transformers only. The request FAILS with that reason and the
    checkpoint's module is never imported."""
    model = tmp_path / "probe-model"
    model.mkdir()
    marker = tmp_path / "remote-code-ran"
    (model / "config.json").write_text('{"model_type": "probe", "auto_map": {"AutoConfig": "probe.ProbeConfig"}}')
    (model / "probe.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
                                    "from transformers import PretrainedConfig\n"
                                    "class ProbeConfig(PretrainedConfig):\n    model_type = 'probe'\n")
    svc = fresh(space_service, tmp_path, local_requests=True)  # the operator's own run of a local folder
    svc.request(Submission(model=f"hf:{model}", testset=svc.sets.current("hidden").name), "ip:1")
    Worker(svc, "w1", ttl_s=60).run_once()
    (r,) = svc.store.requests()
    assert r.status == FAILED and "trust_remote_code" in r.error and "never runs" in r.error
    assert not marker.exists()


def test_a_hugging_face_job_runs_one_worker_pass_with_the_secrets_as_secrets(monkeypatch):
    """``hypergvl space worker --hf-job FLAVOR`` starts one job through ``HfApi.run_job`` (the call bound to its
    signature): the worker command, the Space's settings as environment, its secrets only as secrets, the time
    limit of one request plus the install; without the Hub store it is refused (a job's own store dies with it)."""
    import inspect

    from huggingface_hub import HfApi

    from hypergvl.space.worker import launch_job, main

    calls = []

    class Api:
        def run_job(self, **kwargs):
            calls.append(inspect.signature(HfApi.run_job).bind(HfApi(), **kwargs).arguments)
            return type("JobInfo", (), {"id": "job-1"})()

    env = {"HF_TOKEN": "hf_secret", "HYPERGVL_HIDDEN_SEED": "12345", "HYPERGVL_REQUESTS_REPO": "org/requests",
           "HYPERGVL_RESULTS_REPO": "org/results", "HYPERGVL_PER_TASK": "4", "HYPERGVL_REQUEST_BUDGET_S": "3600"}
    vcs = "hypergvl @ git+https://github.com/org/hypergvl@abc123"
    job = launch_job(env, flavor="a10g-small", requirement=vcs, api=Api())
    assert job.id == "job-1"
    (call,) = calls
    assert call["flavor"] == "a10g-small" and call["timeout"] == 3600 + 1800
    assert call["command"][-1] == f"pip install --quiet '{vcs}' && hypergvl space worker --once"
    assert call["secrets"] == {"HF_TOKEN": "hf_secret", "HYPERGVL_HIDDEN_SEED": "12345"}
    assert "hf_secret" not in str(call["env"]) and "12345" not in str(call["env"])
    assert call["env"]["HYPERGVL_REQUESTS_REPO"] == "org/requests" and call["env"]["HYPERGVL_PER_TASK"] == "4"
    with pytest.raises(ValueError, match="Hub store"):
        launch_job({"HF_TOKEN": "hf_secret"}, flavor="a10g-small", requirement="hypergvl", api=Api())
    without_seed = {k: v for k, v in env.items() if k != "HYPERGVL_HIDDEN_SEED"}
    with pytest.raises(ValueError, match="HYPERGVL_HIDDEN_SEED") as refused:
        launch_job(without_seed, flavor="a10g-small", requirement="hypergvl", api=Api())
    assert "hf_secret" not in str(refused.value) and len(calls) == 1
    monkeypatch.setattr("os.environ", {})
    with pytest.raises(ValueError, match="Hub store"):
        main(["--hf-job", "a10g-small", "--requirement", "hypergvl"])


def test_a_hugging_face_job_installs_the_wheel_it_ships_to_the_requests_repository(tmp_path):
    """No package index serves hypergvl, so by default the job installs the package as the metric Spaces do, from a
    wheel: ``--hf-job`` uploads it to the Space's requests repository, and the job's command, run here by bash with
    exactly the job's environment and secrets (pip, the Hub download and the worker stubbed), downloads that very
    file from that repository with the job's token, installs it, then runs one worker pass. A file that is not a
    hypergvl wheel is refused before anything is uploaded."""
    import inspect
    import json

    from huggingface_hub import HfApi

    from hypergvl.cli import UserError
    from hypergvl.space.worker import launch_job

    wheel = tmp_path / "hypergvl-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"the wheel's bytes")
    uploads, calls = {}, []

    class Api:
        def upload_file(self, **kwargs):
            args = inspect.signature(HfApi.upload_file).bind(HfApi(), **kwargs).arguments
            uploads[f"{args['repo_type']}:{args['repo_id']}:{args['path_in_repo']}"] = args["path_or_fileobj"].hex()

        def run_job(self, **kwargs):
            calls.append(inspect.signature(HfApi.run_job).bind(HfApi(), **kwargs).arguments)

    env = {"HF_TOKEN": "hf_secret", "HYPERGVL_HIDDEN_SEED": "12345", "HYPERGVL_REQUESTS_REPO": "org/requests",
           "HYPERGVL_RESULTS_REPO": "org/results"}
    with pytest.raises(UserError, match="not a hypergvl wheel"):
        launch_job(env, flavor="cpu-basic", wheel=tmp_path / "other.whl", api=Api())
    assert uploads == {} and calls == []
    launch_job(env, flavor="cpu-basic", wheel=wheel, api=Api())
    (call,) = calls
    (where,) = uploads
    assert where.startswith("dataset:org/requests:wheels/") and where.endswith("/" + wheel.name)
    assert call["command"][:2] == ["bash", "-c"] and "hypergvl==" not in call["command"][2]

    bin_, stub, log = tmp_path / "bin", tmp_path / "stub" / "huggingface_hub", tmp_path / "log"
    bin_.mkdir()
    stub.mkdir(parents=True)
    (tmp_path / "hub.json").write_text(json.dumps(uploads))
    for tool in ("pip", "hypergvl"):
        (bin_ / tool).write_text(f'#!/bin/sh\necho "{tool} $*" >> {log}\n')
        (bin_ / tool).chmod(0o755)
    (bin_ / "python").symlink_to(sys.executable)
    (stub / "__init__.py").write_text(
        "import json, os, pathlib\n"
        "def hf_hub_download(repo_id, filename, repo_type=None):\n"
        "    assert os.environ['HF_TOKEN'] == 'hf_secret'\n"
        f"    data = json.loads(pathlib.Path({str(tmp_path / 'hub.json')!r}).read_text())\n"
        "    local = pathlib.Path(os.environ['TMPDIR'], 'cache', filename)\n"
        "    local.parent.mkdir(parents=True, exist_ok=True)\n"
        "    local.write_bytes(bytes.fromhex(data[f'{repo_type}:{repo_id}:{filename}']))\n"
        "    return str(local)\n")
    job_env = {**call["env"], **call["secrets"], "PATH": f"{bin_}:/usr/bin:/bin", "TMPDIR": str(tmp_path),
               "PYTHONPATH": str(stub.parent)}
    subprocess.run(call["command"], env=job_env, check=True, cwd=tmp_path)
    first, second, worker = log.read_text().splitlines()
    assert first == "pip install --quiet huggingface_hub" and worker == "hypergvl space worker --once"
    installed = Path(second.removeprefix("pip install --quiet "))
    assert installed.name == wheel.name and installed.read_bytes() == wheel.read_bytes()


def test_a_model_the_worker_cannot_load_is_refused_before_a_child_is_spawned(space_service, tmp_path, monkeypatch):
    """An ``hf:`` model that is not on the Hub, not readable or (offline) not cached is FAILED with that reason by
    the worker itself: no evaluation child is spawned (it cost about 5 s of a core before it failed, taking a core
    from a Space beside the worker). A cached model passes the check and goes to the child."""
    import hypergvl.space.worker as worker_module
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    spawned = []
    monkeypatch.setattr(worker_module, "run_bounded", lambda *a, **k: spawned.append(a) or (_ for _ in ()).throw(
        RuntimeError("the child ran")))
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # read when a download is asked for, not at import
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    svc = fresh(space_service, tmp_path)
    public = svc.sets.current("public").name
    svc.request(Submission(model="hf:nobody/absent", testset=public, revision="main"), "ip:1")
    Worker(svc, "w1", ttl_s=60).run_once()
    (r,) = svc.store.requests()
    assert r.status == FAILED and "hf:nobody/absent at main: not in this worker's cache" in r.error and spawned == []

    import huggingface_hub

    def reply(error):
        def fake(repo, filename, revision=None):
            raise error
        return fake

    for error, said in ((RepositoryNotFoundError, "no such model on the Hub"), (GatedRepoError, "a gated model")):
        monkeypatch.setattr(huggingface_hub, "hf_hub_download", reply(error.__new__(error)))  # no HTTP reply to wrap
        assert said in worker_module.unavailable("hf:org/x", "main")
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", hf_hub_download)
    # a model in the cache passes the check (offline) and its request goes on to the evaluation child
    snapshot = tmp_path / "hf" / "hub" / "models--org--cached"
    commit = "0" * 40
    (snapshot / "refs").mkdir(parents=True)
    (snapshot / "refs" / "main").write_text(commit)
    (snapshot / "snapshots" / commit).mkdir(parents=True)
    (snapshot / "snapshots" / commit / "config.json").write_text("{}")
    assert worker_module.unavailable("hf:org/cached", "main") is None
    svc.request(Submission(model="hf:org/cached", testset=public, revision="main"), "ip:2")
    Worker(svc, "w1", ttl_s=60).run_once()
    assert len(spawned) == 1 and "the child ran" in [r for r in svc.store.requests() if r.model == "hf:org/cached"][0].error
