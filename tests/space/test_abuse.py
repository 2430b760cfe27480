"""The abuse paths of the third attack on a started Space (issue 62), each tried over HTTP against a Space launched
here on 127.0.0.1, as the attacker did:

B1. files are counted per file: one POST of many parts stores nothing and is refused;
B2. a duplicate is recognised by its digest before it is graded: no grading, no rejection charged, a clear message,
    and it is answered while another upload is being graded;
B3. one submitter's cleanup never deletes another's file (Gradio keys its cache on the content alone);
B4. outside a deployed Space, requests naming server files (a local path, ``dataset=``, any ``NAME=VALUE``) are
    refused unless the operator sets ``HYPERGVL_LOCAL_REQUESTS=1``; no reply names a server folder;
    anonymous requests share one budget that a new address does not reset; quotas hold per Hub account;
    a name equal to a built-in row or to another submitter's model is refused.

Different submitters are different client addresses, sent as ``X-Forwarded-For`` by a client the Space is told to
trust as its proxy (``trusted_proxies``), as behind the Hub's proxy.
"""
from __future__ import annotations

import http.client
import json
import urllib.parse
from pathlib import Path

import pytest

from conftest import free_port, fresh, seeded_run

gradio_client = pytest.importorskip("gradio_client")
from gradio_client import Client, handle_file  # noqa: E402


class Space:
    """A Space started over HTTP; ``client(address)`` submits as that address (through the trusted proxy)."""

    def __init__(self, service, tmp_path, **config):
        from hypergvl.space.app import launch

        self.svc = fresh(service, tmp_path, **{"rate_limit": 10_000, "reject_limit": 10_000,
                                               "trusted_proxies": ("127.0.0.1",), **config})
        self.demo, self.url = launch(self.svc, port=free_port(), prevent_thread_lock=True, quiet=True)
        self.public = self.svc.sets.current("public").name
        self.hidden = self.svc.sets.current("hidden").name

    def client(self, address: str) -> Client:
        return Client(self.url, verbose=False, headers={"X-Forwarded-For": address},
                      httpx_kwargs={"timeout": 600})  # a hang guard only: a busy machine is slow

    def submit(self, address: str, path: Path, model: str, **kw) -> str:
        return self.client(address).predict(handle_file(str(path)), model, "", kw.get("revision", "main"), "open", 7,
                                            "vision", "", self.public, api_name="/submit")

    def request(self, address: str, model: str, testset: str | None = None) -> str:
        text, _ = self.client(address).predict(model, "", "main", "open", 7, "vision", testset or self.public,
                                               api_name="/request")
        return text

    def close(self):
        self.demo.close()


@pytest.fixture()
def space(space_service, tmp_path):
    s = Space(space_service, tmp_path)
    yield s
    s.close()


def post_files(url: str, names: list[str], body: bytes, address: str) -> tuple[int, str]:
    """POST one multipart request with a file part per name (each holding ``body``) to the upload route."""
    u = urllib.parse.urlparse(url)
    b = "abuseboundary"
    data = b"".join(f"--{b}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{n}\"\r\n"
                    "Content-Type: application/octet-stream\r\n\r\n".encode() + body + b"\r\n" for n in names)
    data += f"--{b}--\r\n".encode()
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    conn.request("POST", "/gradio_api/upload", body=data,
                 headers={"Content-Type": f"multipart/form-data; boundary={b}", "X-Forwarded-For": address})
    resp = conn.getresponse()
    text = resp.read().decode(errors="replace")
    conn.close()
    return resp.status, text


def call(url: str, api: str, data: list, address: str):
    """Gradio's HTTP API as a browser-less client calls it (``/gradio_api/call/<api>``): the event's output, with
    file arguments passed as the server paths the upload route returned (never uploaded again)."""
    import urllib.request

    def fetch(req):
        req.add_header("X-Forwarded-For", address)
        with urllib.request.urlopen(req, timeout=300) as r:  # a hang guard, not a speed bound
            return r.read().decode()

    base = url.rstrip("/") + f"/gradio_api/call/{api}"
    event = json.loads(fetch(urllib.request.Request(base, data=json.dumps({"data": data}).encode(),
                                                    headers={"Content-Type": "application/json"})))["event_id"]
    stream = fetch(urllib.request.Request(f"{base}/{event}"))
    kind, _, payload = stream.strip().rpartition("event: ")[2].partition("\ndata: ")
    assert kind == "complete", stream
    return json.loads(payload)


def cached_files() -> set[Path]:
    from gradio.utils import get_upload_folder

    return {p for p in Path(get_upload_folder()).rglob("*") if p.is_file()}


def samples(space_service) -> bytes:
    return (seeded_run(space_service) / "samples.jsonl").read_bytes()


# ------------------------------------------------------------------------------------------------ B1
def test_one_post_of_many_files_stores_nothing_and_is_refused(space_service, tmp_path):
    s = Space(space_service, tmp_path, upload_files=5)
    try:
        before = cached_files()
        status, text = post_files(s.url, [f"s{k}.jsonl" for k in range(200)], b"{}\n" * 50, "10.1.0.1")
        assert status == 413 and "one file per upload request" in text, (status, text)
        assert cached_files() - before == set()  # nothing of the 200 parts was kept
        # what was counted is one file: the address may send four more, one a request, then no more
        single = [post_files(s.url, [f"one{k}.jsonl"], b"{}\n" * (50 + k), "10.1.0.1") for k in range(5)]
        assert [st for st, _ in single] == [200] * 4 + [429], single
        stored = [Path(json.loads(t)[0]) for _, t in single[:4]]
        assert all(p.is_file() for p in stored) and "/" not in stored[0].name
    finally:
        s.close()


# ------------------------------------------------------------------------------------------------ B2
def test_a_duplicate_is_refused_by_its_digest_without_grading_or_charge(space_service, tmp_path, monkeypatch):
    import hypergvl.space.service as service_module

    gradings = []
    real = service_module.run_bounded
    monkeypatch.setattr(service_module, "run_bounded", lambda *a, **k: gradings.append(1) or real(*a, **k))
    s = Space(space_service, tmp_path)
    try:
        up = tmp_path / "samples.jsonl"
        up.write_bytes(samples(space_service))
        assert s.submit("10.2.0.1", up, "org/first").startswith("Accepted")
        assert len(gradings) == 1
        again = s.submit("10.2.0.1", up, "org/first-again")
        assert again.startswith("Rejected") and "already submitted (same sha256)" in again
        assert "nothing was charged" in again
        assert len(gradings) == 1  # not graded
        assert s.svc.counters.rejections("ip:10.2.0.1") == 0  # not a rejection
        # answered while another grading holds the grading slot: a duplicate never waits for one
        with s.svc._grading:
            job = s.client("10.2.0.1").submit(handle_file(str(up)), "org/third", "", "main", "open", 7, "vision",
                                              "", s.public, api_name="/submit")
            answer = job.result(timeout=300)  # a hang guard: it would wait for the lock forever without the fix
        assert "already submitted" in answer and len(gradings) == 1
    finally:
        s.close()


# ------------------------------------------------------------------------------------------------ B3
def test_two_submitters_with_the_same_bytes_keep_their_own_files(space_service, tmp_path):
    s = Space(space_service, tmp_path)
    try:
        body = samples(space_service)
        (sa, ta), (sb, tb) = (post_files(s.url, ["samples.jsonl"], body, a) for a in ("10.3.0.1", "10.3.0.2"))
        assert sa == sb == 200
        pa, pb = Path(json.loads(ta)[0]), Path(json.loads(tb)[0])
        assert pa != pb and pa.read_bytes() == pb.read_bytes() == body
        # A's submission is refused for A's own reason and its handler deletes A's upload; B's stays and is graded
        payload = {"path": str(pa), "meta": {"_type": "gradio.FileData"}, "orig_name": "samples.jsonl"}
        (refused,) = call(s.url, "submit", [payload, "=org/a", "", "main", "open", 7, "vision", "", s.public],
                          "10.3.0.1")
        assert refused.startswith("Rejected") and not pa.exists() and pb.is_file(), refused
        payload = {**payload, "path": str(pb)}
        (accepted,) = call(s.url, "submit", [payload, "org/b", "", "main", "open", 7, "vision", "", s.public],
                           "10.3.0.2")
        assert accepted.startswith("Accepted"), accepted
    finally:
        s.close()


# ------------------------------------------------------------------------------------------------ B4
def test_requests_naming_server_files_are_refused_unless_the_operator_enables_them(space, tmp_path):
    data = str(space.svc.config.data_dir)
    hidden_build = f"{space.svc.sets.get(space.hidden).build}"
    for model in (f"baseline:profile:dataset={hidden_build}:seed=3", "baseline:symbolic:seed=3",
                  f"hf:{tmp_path}", "hf:./models/x", "hf:org/../x", "openai:x=1"):
        text = space.request("10.4.0.1", model)
        assert text.startswith("Rejected") and "HYPERGVL_LOCAL_REQUESTS=1" in text or "not a Hub model id" in text, \
            (model, text)
        assert data not in text and str(tmp_path) not in text and "/tmp" not in text, text
    assert space.svc.store.requests() == []
    # the operator enables them for their own runs; a deployed Space never (SpaceConfig.from_env refuses)
    from dataclasses import replace

    from hypergvl.space.config import SpaceConfig
    from hypergvl.space.service import Service, Submission

    local = Service(replace(space.svc.config, local_requests=True), space.svc.store, space.svc.sets)
    req = local.request(Submission(model="baseline:symbolic:seed=3", testset=space.public, revision="r1"), "ip:op")
    assert req.model == "baseline:symbolic:seed=3"
    assert SpaceConfig.from_env({"HYPERGVL_LOCAL_REQUESTS": "1"}).local_requests
    with pytest.raises(ValueError, match="deployed"):
        SpaceConfig.from_env({"HYPERGVL_LOCAL_REQUESTS": "1", "SPACE_ID": "org/space"})


def test_the_worker_refuses_a_queued_request_naming_server_files_and_shows_no_path(space, tmp_path):
    from hypergvl.space.store import Request
    from hypergvl.space.worker import Worker

    build = space.svc.sets.get(space.hidden).build
    space.svc.store.add_request(Request(model=f"baseline:profile:dataset={build}:seed=1", revision="main",
                                        testset=space.hidden, track="vision", model_type="open", num_parameters=None,
                                        link="", submitter="ip:10.4.0.9"))
    req = Worker(space.svc, "w").run_once()
    (done,) = [r for r in space.svc.store.requests() if r.id == req.id]
    assert done.status == "FAILED" and "HYPERGVL_LOCAL_REQUESTS=1" in done.error
    assert space.svc.entries() == [] or all(e.origin == "seed" for e in space.svc.entries())
    # an error that does name a server file is shown without its folders
    from hypergvl.space.tabs.submit import queue_frame

    space.svc.store.add_request(Request(model="hf:org/gone", revision="main", testset=space.public, track="vision",
                                        model_type="open", num_parameters=None, link="", submitter="ip:10.4.0.9"))
    claimed = space.svc.store.claim("w", 600)
    space.svc.store.fail(claimed.id, "w", f"OSError: cannot read {build}/meta.json")
    shown = " ".join(queue_frame(space.svc)["Error"])
    assert str(build) not in shown and "<path>/meta.json" in shown


def test_anonymous_requests_share_one_budget_that_a_new_address_does_not_reset(space_service, tmp_path):
    s = Space(space_service, tmp_path, anonymous_requests=2)
    try:
        assert s.request("10.5.0.1", "org/m1").startswith("Queued")
        assert s.request("10.5.0.2", "org/m2").startswith("Queued")
        third = s.request("10.5.0.3", "org/m3")  # a new address: the shared budget is spent
        assert third.startswith("Rejected") and "anonymous requests share 2" in third
        # a Hub account has its own quota (rate_limit per user), not the anonymous budget
        from dataclasses import replace

        from hypergvl.space.service import RateLimited, Service, Submission

        svc = Service(replace(s.svc.config, rate_limit=2), s.svc.store, s.svc.sets)
        for k in range(2):
            svc.request(Submission(model=f"org/u{k}", testset=s.public), "user:alice")
        with pytest.raises(RateLimited, match="at most 2 submissions"):
            svc.request(Submission(model="org/u9", testset=s.public), "user:alice")
        svc.request(Submission(model="org/b0", testset=s.public), "user:bob")  # another account: its own quota
    finally:
        s.close()


def test_names_of_built_in_rows_and_of_other_submitters_are_refused(space_service, tmp_path):
    s = Space(space_service, tmp_path)
    try:
        seed_entry = next(e for e in space_service.entries() if e.origin == "seed")
        s.svc.store.add_entry(seed_entry)  # the built-in rows, as on a seeded Space
        up = tmp_path / "samples.jsonl"
        up.write_bytes(samples(space_service))
        for name in ("baseline:symbolic", "Baseline:Symbolic"):
            text = s.submit("10.6.0.1", up, name)
            assert text.startswith("Rejected") and "built-in row" in text, text
        assert s.submit("10.6.0.1", up, "org/mine").startswith("Accepted")
        other = tmp_path / "other.jsonl"  # other bytes, another submitter, the same name
        other.write_bytes(samples(space_service).replace(b'"response": "', b'"response": " ', 1))
        text = s.submit("10.6.0.2", other, "ORG/mine", revision="v2")
        assert text.startswith("Rejected") and "another submitter's model" in text, text
        # its own new revision is its own row
        assert s.submit("10.6.0.1", other, "org/mine", revision="v2").startswith("Accepted")
        text = s.request("10.6.0.3", "baseline:symbolic")
        assert text.startswith("Rejected") and "built-in row" in text
        names = [(e.model, e.revision, e.track) for e in s.svc.entries()]
        assert len(names) == len(set(names))
    finally:
        s.close()


# ------------------------------------------------------------------------------------------------ Fig. 4
def test_fig4_draws_only_the_scales_a_set_has(tmp_path, monkeypatch):
    """A set without large problems (the Space's one-problem sets) gets no empty "large" position on Fig. 4."""
    from hypergvl.evaluators import report

    figures = []
    monkeypatch.setattr(report, "_save", lambda fig, path: figures.append(fig))
    groups = {"synthetic/small": {"avg_u": 50.0, "avg_r": 40.0}, "real/medium": {"avg_u": 30.0, "avg_r": None}}
    run = {"model": {"name": "m"}, "scores": {"by_source_and_scale": groups}, "text_only": False}
    assert report.scale_curves([run], tmp_path / "fig4.png")
    ticks = [[t.get_text() for t in ax.get_xticklabels()] for ax in figures[0].axes]
    assert ticks == [["small", "medium"], ["small", "medium"]]
    groups["synthetic/large"] = {"avg_u": 10.0, "avg_r": 5.0}
    assert report.scale_curves([run], tmp_path / "fig4.png")
    assert [t.get_text() for t in figures[1].axes[0].get_xticklabels()] == ["small", "medium", "large"]


# ------------------------------------------------------------------------------------------------ load
def test_requests_and_claims_keep_the_leaderboard_views_cached(space_service, tmp_path):
    """Under load every request, claim and heartbeat wrote the store's version, and every leaderboard view and figure
    was computed again after each: the views key on the entries' own version now."""
    from hypergvl.space.service import Submission

    svc = fresh(space_service, tmp_path)
    public = svc.sets.current("public").name
    svc.store.add_entry(next(e for e in space_service.entries() if e.testset == public and e.track == "vision"))
    first = svc.leaderboard_rows(public)
    version = svc.store.version()
    svc.request(Submission(model="hf:org/cached", testset=public), "ip:10.7.0.1")
    claimed = svc.store.claim("w", 600)
    svc.store.renew(claimed.id, "w", 600)
    assert svc.store.version() != version
    assert svc.leaderboard_rows(public) is first  # the same cached rows: nothing recomputed
    svc.store.fail(claimed.id, "w", "offline")
    assert svc.leaderboard_rows(public) is first
    up = tmp_path / "samples.jsonl"
    up.write_bytes(samples(space_service))
    svc.submit_upload(up, Submission(model="org/new", testset=public), "ip:10.7.0.1")
    assert svc.leaderboard_rows(public) is not first
    assert "org/new" in {r["entry"].model for r in svc.leaderboard_rows(public)}


def test_a_figure_is_drawn_once_for_what_it_shows(space_service, tmp_path, monkeypatch):
    """A new entry elsewhere (an upload on another model) does not redraw an entry's heatmap: figures are named by
    the entries they show; the figure of a changed selection is drawn anew."""
    import hypergvl.space.tabs.representations as reps

    drawn = []
    real = reps.heatmap
    monkeypatch.setattr(reps, "heatmap", lambda *a, **k: drawn.append(1) or real(*a, **k))
    svc = fresh(space_service, tmp_path)
    public = svc.sets.current("public").name
    seeded = [e for e in space_service.entries() if e.testset == public and e.track in ("vision", "text-only")]
    for e in seeded:
        svc.store.add_entry(e)
    first = reps.representation_figures(svc, seeded[0], public)
    other = next(e for e in space_service.entries() if e.testset != public)
    svc.store.add_entry(other)  # the entries' version moves: every view is computed again
    again = reps.representation_figures(svc, seeded[0], public)
    assert again[0] == first[0] and len(drawn) == 1  # the same heatmap file, not drawn again
    reps.representation_figures(svc, seeded[1], public)
    assert len(drawn) == 2  # another entry's heatmap is its own
