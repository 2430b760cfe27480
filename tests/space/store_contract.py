"""Behaviour every :class:`hypergvl.space.store.Store` implementation must have, as functions of a store factory.

``test_store.py`` runs them on :class:`SQLiteStore`; ``test_hub_store.py`` on the Hub store over a fake Hub API.
A factory is ``make() -> Store``; calling it twice must give two handles on the same storage (two processes)."""
from __future__ import annotations

import threading
import time

import pytest

from hypergvl.space.store import FAILED, FINISHED, PENDING, RUNNING, DuplicateError, Entry, Request


def entry(model="org/m", revision="abc", testset="public-1", track="vision", upload="u1", **kw) -> Entry:
    return Entry(model=model, revision=revision, testset=testset, track=track, model_type="open", num_parameters=7.0,
                 link="https://huggingface.co/org/m", scores={"accuracy": 50.0, "per_task": {"VC": 50.0}},
                 cells=[[0, 0, 0, 0, 0, 2, 1]], num_samples=2, dataset_sha256="d" * 64, origin="upload",
                 upload_sha256=upload, **kw)


def request(model="hf:org/m", revision="abc", testset="public-1", track="vision", **kw) -> Request:
    return Request(model=model, revision=revision, testset=testset, track=track, model_type="open",
                   num_parameters=7.0, link="", **kw)


def entries_round_trip(make):
    s = make()
    v0 = s.version()
    e = entry()
    s.add_entry(e)
    assert s.version() != v0
    got = make().entries()
    assert [x.to_doc() for x in got] == [e.to_doc()]


def duplicate_entries_refused(make):
    s = make()
    s.add_entry(entry())
    with pytest.raises(DuplicateError, match="already"):
        s.add_entry(entry(upload="u2"))  # same model, revision, test set, track
    with pytest.raises(DuplicateError, match="sha256"):
        s.add_entry(entry(revision="other"))  # same file
    s.add_entry(entry(revision="other", upload="u3"))
    s.add_entry(entry(track="text-only", upload="u4"))
    assert len(s.entries()) == 3


def request_life(make):
    s = make()
    r = request()
    s.add_request(r)
    with pytest.raises(DuplicateError):
        s.add_request(request())
    assert [x.status for x in s.requests()] == [PENDING]
    got = s.claim("w1", ttl_s=60)
    assert got.id == r.id and got.status == RUNNING and got.claimed_by == "w1"
    assert s.claim("w2", ttl_s=60) is None
    assert s.renew(r.id, "w1", 60) and not s.renew(r.id, "w2", 60)
    e = entry(model="hf:org/m", upload=None)
    e.origin = "request"
    assert not s.finish(r.id, "w2", e)
    assert s.finish(r.id, "w1", e)
    (done,) = s.requests()
    assert done.status == FINISHED and done.entry_id == e.id
    assert [x.id for x in s.entries()] == [e.id]
    with pytest.raises(DuplicateError):
        s.add_request(request())  # finished: the entry exists


def failure_shown_and_resubmittable(make):
    s = make()
    s.add_request(request())
    r = s.claim("w1", 60)
    assert s.fail(r.id, "w1", "model not found")
    (x,) = s.requests()
    assert x.status == FAILED and x.error == "model not found"
    s.add_request(request())  # a failed request may be asked again
    assert [x.status for x in s.requests()] == [FAILED, PENDING]


def expired_claim_returns_to_pending(make):
    s = make()
    s.add_request(request())
    r = s.claim("dead-worker", ttl_s=0.2)
    time.sleep(0.4)
    assert [x.status for x in s.requests()] == [PENDING]
    again = s.claim("w2", ttl_s=60)
    assert again.id == r.id and again.attempts == 2
    assert not s.renew(r.id, "dead-worker", 60)
    assert not s.finish(r.id, "dead-worker", entry(upload=None))  # the other worker holds it now
    assert s.finish(r.id, "w2", entry(upload=None))


def late_result_accepted_when_not_reclaimed(make):
    s = make()
    s.add_request(request())
    r = s.claim("slow", ttl_s=0.2)
    time.sleep(0.4)
    assert s.finish(r.id, "slow", entry(upload=None))
    assert s.requests()[0].status == FINISHED


def racing_workers_one_wins(make, workers=8):
    make().add_request(request())
    won, barrier = [], threading.Barrier(workers)

    def run(i):
        s = make()
        barrier.wait()
        r = s.claim(f"w{i}", ttl_s=60)
        if r is not None:
            won.append(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1


def rate_count(make):
    s = make()
    t0 = time.time()
    s.add_entry(entry(submitter="ip:1"))
    s.add_request(request(submitter="ip:1", model="hf:org/other"))
    s.add_request(request(submitter="ip:2", model="hf:org/third"))
    assert s.recent_submissions("ip:1", t0 - 1) == 2
    assert s.recent_submissions("ip:1", time.time() + 10) == 0


CONTRACT = [entries_round_trip, duplicate_entries_refused, request_life, failure_shown_and_resubmittable,
            expired_claim_returns_to_pending, late_result_accepted_when_not_reclaimed, racing_workers_one_wins,
            rate_count]


def request_refused_when_an_uploaded_entry_exists(make):
    s = make()
    s.add_entry(entry(model="hf:org/m", upload="u9"))
    with pytest.raises(DuplicateError, match="already"):
        s.add_request(request(model="hf:org/m"))
    assert make().requests() == []


def failed_request_is_not_claimed_again(make):
    s = make()
    s.add_request(request())
    r = s.claim("w1", 60)
    assert s.fail(r.id, "w1", "boom")
    assert s.claim("w2", 60) is None
    assert not s.renew(r.id, "w1", 60)


def oldest_first(make):
    s = make()
    for k in (2, 0, 1):
        s.add_request(request(model=f"hf:org/m{k}", created=1000.0 + k))
        s.add_entry(entry(model=f"org/e{k}", upload=f"u{k}", created=1000.0 + k))
    assert [e.model for e in make().entries()] == ["org/e0", "org/e1", "org/e2"]
    assert [r.model for r in make().requests()] == ["hf:org/m0", "hf:org/m1", "hf:org/m2"]
    assert [s.claim(f"w{k}", 60).model for k in range(3)] == ["hf:org/m0", "hf:org/m1", "hf:org/m2"]
    assert s.claim("w9", 60) is None


def finish_with_a_duplicate_entry_writes_nothing(make):
    """The same model uploaded while its request ran: finish refuses, nothing is stored, the worker can fail it."""
    s = make()
    s.add_request(request())
    r = s.claim("w1", 60)
    s.add_entry(entry(model="hf:org/m", upload="u7"))
    e = entry(model="hf:org/m", upload=None)
    e.origin = "request"
    with pytest.raises(DuplicateError):
        s.finish(r.id, "w1", e)
    assert [x.upload_sha256 for x in make().entries()] == ["u7"]
    assert make().requests()[0].status == RUNNING
    assert s.fail(r.id, "w1", "already on the leaderboard")


def version_changes_on_every_write(make):
    s = make()
    seen = [s.version()]
    s.add_request(request())
    seen.append(s.version())
    r = s.claim("w1", 60)
    seen.append(s.version())
    assert s.renew(r.id, "w1", 60)
    seen.append(s.version())
    assert s.finish(r.id, "w1", entry(upload=None))
    seen.append(s.version())
    assert len(set(seen)) == 5, seen


CONTRACT += [request_refused_when_an_uploaded_entry_exists, failed_request_is_not_claimed_again, oldest_first,
             finish_with_a_duplicate_entry_writes_nothing, version_changes_on_every_write]


def regrade_replaces_an_entry_in_place(make):
    """update_entry (a re-grade): same id, new scores and version, for an uploaded entry and a worker's; an old
    document without a scorer version reads as version "1"; nothing else changes, nothing is lost."""
    import dataclasses

    s = make()
    old = entry()
    doc = old.to_doc()
    for k in ("scorer_version", "raw_sha256", "provenance", "submitted_provenance"):
        doc.pop(k)
    assert Entry.from_doc(doc).scorer_version == "1"
    s.add_entry(old)
    s.add_entry(entry(model="org/other", upload="u2"))
    r = request()
    s.add_request(r)
    s.claim("w", 60)
    assert s.finish(r.id, "w", dataclasses.replace(entry(model=r.model, upload=None), origin="request", id=r.id))
    v0 = s.version()
    for e in (old, next(x for x in s.entries() if x.id == r.id)):
        new = dataclasses.replace(e, scores={"accuracy": 75.0}, cells=[[0, 0, 0, 0, 0, 2, 2, 0]], scorer_version="9",
                                  provenance={"scorer_version": "9"})
        s.update_entry(new)
        got = {x.id: x for x in make().entries()}
        assert got[e.id].to_doc() == new.to_doc()
    assert s.version() != v0 and len(make().entries()) == 3
    with pytest.raises(KeyError):
        s.update_entry(entry(upload="u7"))
    with pytest.raises(ValueError, match="keeps its model"):
        s.update_entry(dataclasses.replace(old, model="org/renamed"))


CONTRACT += [regrade_replaces_an_entry_in_place]
