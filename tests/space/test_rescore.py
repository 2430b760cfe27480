"""Re-grading what is stored: entries an older scorer version graded are scored again from their kept raw records,
on start and by ``hypergvl space rescore``; none is lost, and the table shows which version scored each."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from conftest import fresh, seeded_run
from hypergvl.space.scoring import parse_samples, score, scorer_version
from hypergvl.space.service import Submission

ROOT = Path(__file__).resolve().parents[2]


def make_old(db: Path, entry_id: str, **changes) -> None:
    """Rewrite a stored entry as the Space stored it before scorer versions: no version, no raw record, no
    provenance, and the scores an older grader gave (here: made up, so a re-grade shows)."""
    con = sqlite3.connect(db)
    (doc,) = con.execute("SELECT doc FROM entries WHERE id = ?", (entry_id,)).fetchone()
    doc = json.loads(doc)
    for k in ("scorer_version", "raw_sha256", "provenance", "submitted_provenance"):
        doc.pop(k, None)
    doc["scores"] = {**doc["scores"], "accuracy": 99.0}
    doc.update(changes)
    con.execute("UPDATE entries SET doc = ? WHERE id = ?", (json.dumps(doc), entry_id))
    con.commit()
    con.close()


def stored_under_version_1(space_service, tmp_path):
    """A store with three entries of version "1": an upload, a seeded baseline and one whose raw upload is gone."""
    from hypergvl.space.store import encode_cells

    svc = fresh(space_service, tmp_path, seed_baselines=False)
    shutil.copytree(space_service.config.data_dir / "runs" / "seed", svc.config.data_dir / "runs" / "seed")
    public = svc.sets.current("public").name
    records = [json.loads(x) for x in (seeded_run(space_service) / "samples.jsonl").read_text().splitlines()]
    for r in records[::4]:
        r["response"] = "Ans: 12345"
    up = tmp_path / "up.jsonl"
    up.write_text("".join(json.dumps(r) + "\n" for r in records))
    uploaded = svc.submit_upload(up, Submission(model="org/up", testset=public), "ip:1")
    baseline = next(e for e in space_service.entries() if e.testset == public and e.model == "baseline:random")
    svc.store.add_entry(replace(baseline, id="seeded"))
    lost = replace(uploaded, id="lost", model="org/lost", upload_sha256="0" * 64, raw_sha256=None)
    svc.store.add_entry(lost)
    db = tmp_path / "store.sqlite"
    zero = np.array(uploaded.cells, copy=True)
    zero[:, 6] = 0
    for entry_id in (uploaded.id, "seeded", "lost"):
        make_old(db, entry_id, cells=encode_cells(zero))
    assert {e.scorer_version for e in svc.store.entries()} == {"1"}
    want = {uploaded.id: score(parse_samples(up.read_bytes()), svc.sets.index(public), "vision"),
            "seeded": score(parse_samples((seeded_run(space_service, "baseline-random-vision") / "samples.jsonl")
                                          .read_bytes()), svc.sets.index(public), "vision")}
    return svc, want


def test_entries_of_an_old_scorer_version_are_regraded_on_start(space_service, tmp_path):
    from hypergvl.space.app import start
    from hypergvl.space.tabs.leaderboard import leaderboard_frame

    svc, want = stored_under_version_1(space_service, tmp_path)
    report = start(svc)
    assert sorted(report["regraded"]) == sorted(want) and [k for k, _ in report["kept"]] == ["lost"]
    got = {e.id: e for e in svc.store.entries()}
    assert set(got) == {*want, "lost"}  # none lost
    for entry_id, scored in want.items():
        e = got[entry_id]
        assert e.scorer_version == scorer_version() and e.provenance["regraded_from"] == "1"
        assert e.scores["accuracy"] == pytest.approx(scored.scores["accuracy"])
        assert np.array_equal(np.asarray(e.cells), scored.cells)
        assert e.provenance["scorer_version"] == scorer_version() and "commit" in e.provenance
        assert (svc.config.data_dir / "uploads" / e.raw_sha256).is_file()
    assert got["lost"].scorer_version == "1" and got["lost"].scores["accuracy"] == 99.0  # kept as it was
    frame = leaderboard_frame(svc, svc.sets.current("public").name, columns=["Scorer"])
    shown = dict(zip(frame["Model"], frame["Scorer"]))
    assert shown == {"org/up": f"v{scorer_version()}", "baseline:random": f"v{scorer_version()}", "org/lost": "v1"}
    assert start(svc)["regraded"] == []  # current now: nothing to do on the next start


def test_python_m_space_rescore(space_service, tmp_path):
    svc, want = stored_under_version_1(space_service, tmp_path)
    data = svc.config.data_dir
    shutil.copytree(space_service.config.data_dir / "builds", data / "builds", dirs_exist_ok=True)
    shutil.copy2(space_service.config.data_dir / "testsets.json", data / "testsets.json")
    shutil.copytree(space_service.config.data_dir / "private", data / "private", dirs_exist_ok=True)
    src, dst = sqlite3.connect(tmp_path / "store.sqlite"), sqlite3.connect(data / "leaderboard.sqlite")
    src.backup(dst)  # the store is in WAL mode: a file copy would miss what the log still holds
    src.close(), dst.close()
    env = dict(os.environ, HYPERGVL_SPACE_DATA=str(data), HYPERGVL_PER_TASK="1")
    env.pop("HYPERGVL_HIDDEN_SEED", None)
    r = subprocess.run([sys.executable, "-m", "hypergvl.space.rescore"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 1, r.stderr  # one entry has no raw records left: said, and kept
    assert f"scorer version {scorer_version()}: 2 entries re-graded, 0 already current, 1 kept" in r.stdout
    assert "kept lost: no kept raw records" in r.stderr
    from hypergvl.space.store import SQLiteStore

    versions = {e.id: e.scorer_version for e in SQLiteStore(data / "leaderboard.sqlite").entries()}
    assert versions == {**{k: scorer_version() for k in want}, "lost": "1"}


def test_regrading_runs_under_the_upload_budgets_and_a_failure_is_not_retried_at_every_start(space_service, tmp_path,
                                                                                            monkeypatch):
    """Each entry is re-graded in a bounded child process (the upload budgets): one whose grading runs past the
    budget is stopped, kept as it was, and remembered, so the next start does not read it again (30 hostile entries
    once cost 36.7 s and 3 GB at every start). Here the grading is made slow; memory is watched the same way."""
    import time

    from hypergvl.space import rescore as R
    from hypergvl.space.app import start

    svc, want = stored_under_version_1(space_service, tmp_path)
    svc.config = replace(svc.config, limits=replace(svc.config.limits, max_grading_s=0.5))
    monkeypatch.setattr(R, "_scored", lambda *args: time.sleep(30))
    report = start(svc)  # each grading stopped at its 0.5 s budget (the reasons below say so), none waited for
    assert report["regraded"] == [] and {k for k, _ in report["kept"]} == {*want, "lost"}
    reasons = dict(report["kept"])
    assert all("longer than 0.5 s and was stopped" in reasons[k] for k in want), reasons
    assert "no kept raw records" in reasons["lost"]
    failed = json.loads((svc.config.data_dir / "private" / R.FAILED).read_text())
    assert {k: v["version"] for k, v in failed.items()} == {k: scorer_version() for k in (*want, "lost")}
    calls = []
    monkeypatch.setattr(R, "run_bounded", lambda *a, **k: calls.append(a))
    again = start(svc)
    assert calls == [] and {k for k, _ in again["kept"]} == {*want, "lost"}
    assert all("could not be re-graded under version" in reason for _, reason in again["kept"])
    assert {e.scorer_version for e in svc.store.entries()} == {"1"}  # nothing lost, nothing changed
