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
from conftest import fresh
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
    deployed = Service(replace(svc.config, request_prefixes=("hf", "openai")), svc.store, svc.sets)
    with pytest.raises(SubmissionError):
        deployed.request(Submission(model="baseline:symbolic", testset=public), "ip:1")
    with pytest.raises(SubmissionError, match="local model paths"):
        deployed.request(Submission(model="hf:/tmp/model", testset=public), "ip:1")
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
        deadline = time.time() + 120
        while time.time() < deadline and (not log.exists() or log.read_text().count("\n") < 40):
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        answered = log.read_text().count("\n")
        assert 40 <= answered < 420
        first_ids = [line.split('"id": "')[1].split('"')[0] for line in log.read_text().splitlines()]
        served_before = chat.served
        time.sleep(2.2)
        assert [r.status for r in svc.store.requests()] == [PENDING]  # the claim expired: not stuck in RUNNING
        Worker(svc, "rescuer", ttl_s=60, base_url=chat.base_url).run_once()
        asked_again = chat.served - served_before
    (r,) = svc.store.requests()
    assert r.status == FINISHED and r.attempts == 2
    (entry,) = svc.store.entries()
    assert entry.num_samples == 420
    assert asked_again <= 420 - answered + 8  # only the unanswered samples (plus those in flight at the kill)
    final = log.read_text()
    assert all(f'"id": "{i}"' in final for i in first_ids)


def test_app_and_worker_do_not_know_which_store(space_service, tmp_path):
    """The same upload, request and worker run over the Hub store (a fake Hub API) as over SQLite."""
    from fake_hub import FakeHub

    from hypergvl.space.app import leaderboard_frame
    from hypergvl.space.hub_store import HubStore

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
