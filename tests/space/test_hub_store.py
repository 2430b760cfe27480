"""The Hub store against the store contract over a fake Hub with real parent-commit semantics, plus what only
the Hub store has to get right: races decided by ``parent_commit``, a worker killed between its two commits,
cached reads, and the exact error ``huggingface_hub`` raises for a stale parent."""
from __future__ import annotations

import json
import threading
import time

import httpx2
import pytest
from huggingface_hub import CommitOperationAdd, HfApi
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.utils import _http

from fake_hub import STALE_PARENT_MESSAGE, FakeHub, http_error
from store_contract import CONTRACT, entry, request
from hypergvl.space.hub_store import API_METHODS, HubConflictError, HubStore, from_env, is_stale_parent, request_result_path
from hypergvl.space.store import FINISHED, PENDING, RUNNING, DuplicateError

REQ, RES = "org/requests", "org/results"
LAYOUTS = {"two-repos": (REQ, RES), "one-repo": (REQ, REQ)}


def worker_entry():
    e = entry(upload=None)
    e.origin = "request"
    return e


def hub_with_repos(*, latency_s: float = 0.0) -> FakeHub:
    hub = FakeHub(latency_s=latency_s)
    hub.create_repo(REQ)
    hub.create_repo(RES)
    return hub


def factory(hub, layout="two-repos", **kw):
    req, res = LAYOUTS[layout]
    kw.setdefault("backoff_s", 0.005)
    return lambda: HubStore(hub, req, res, **kw)


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("check", CONTRACT, ids=lambda f: f.__name__)
def test_hub_contract(check, layout):
    check(factory(hub_with_repos(latency_s=0.001), layout))


# ================================================================================================ races
def run_together(n, fn):
    """Run ``fn(i)`` in ``n`` threads released at one moment; returns their results or exceptions, in order."""
    out, barrier = [None] * n, threading.Barrier(n)

    def run(i):
        barrier.wait()
        try:
            out[i] = fn(i)
        except Exception as exc:  # noqa: BLE001 - the caller inspects it
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_racing_workers_on_a_slow_hub_exactly_one_wins(layout):
    """Eight workers (eight handles, as eight processes) claim one request while every Hub call takes 20 ms, so
    all of them read the same head: one commit lands, seven are refused with 412, and their rereads show RUNNING."""
    hub = hub_with_repos(latency_s=0.02)
    make = factory(hub, layout)
    make().add_request(request())
    commits_before = hub.num_commits(REQ)
    stores = [make() for _ in range(8)]
    got = run_together(8, lambda i: stores[i].claim(f"w{i}", ttl_s=60))
    winners = [i for i, r in enumerate(got) if r is not None]
    assert len(winners) == 1, got
    assert hub.num_commits(REQ) == commits_before + 1
    assert hub.calls["create_commit"] - 1 >= 2, "the workers did not race (only one tried to commit)"
    (r,) = make().requests()
    assert r.status == RUNNING and r.claimed_by == f"w{winners[0]}" and r.attempts == 1


def test_racing_workers_share_out_several_requests():
    """Eight workers, three requests: three distinct winners, each request claimed exactly once."""
    hub = hub_with_repos(latency_s=0.01)
    make = factory(hub)
    s = make()
    for k in range(3):
        s.add_request(request(model=f"hf:org/m{k}"))
    stores = [make() for _ in range(8)]
    got = run_together(8, lambda i: stores[i].claim(f"w{i}", ttl_s=60))
    claimed = [r.id for r in got if r is not None]
    assert sorted(claimed) == sorted(r.id for r in make().requests())
    assert all(r.status == RUNNING and r.attempts == 1 for r in make().requests())


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_concurrent_duplicate_submissions_land_once(layout):
    hub = hub_with_repos(latency_s=0.01)
    make = factory(hub, layout)
    stores = [make() for _ in range(6)]
    got = run_together(6, lambda i: stores[i].add_entry(entry(upload=f"u{i}")))  # same model, revision, set, track
    assert sum(x is None for x in got) == 1
    assert all(isinstance(x, DuplicateError) for x in got if x is not None)
    assert len(make().entries()) == 1
    got = run_together(6, lambda i: stores[i].add_request(request(model="hf:org/q")))
    assert sum(x is None for x in got) == 1 and len(make().requests()) == 1


# ================================================================================================ a worker dies
class Killed(BaseException):
    """The worker process dies: nothing in the store may catch it."""


def test_worker_killed_between_result_and_finish_leaves_nothing_visible_and_the_request_completes():
    hub = hub_with_repos()
    make = factory(hub, cache_ttl_s=0)
    store = make()
    store.add_request(request())
    r = store.claim("w1", ttl_s=0.3)

    def kill_before_request_commit(repo_id, paths):
        if repo_id == REQ:
            raise Killed()

    hub.on_commit = kill_before_request_commit
    half = worker_entry()
    with pytest.raises(Killed):
        store.finish(r.id, "w1", half)
    hub.on_commit = None
    result_file = request_result_path("public-1", r.id)
    assert result_file in hub.files(RES), "the first of the two commits should have landed"
    assert make().entries() == []  # its request is not FINISHED: the half result is not shown
    assert [x.status for x in make().requests()] == [RUNNING]
    time.sleep(0.4)
    assert [x.status for x in make().requests()] == [PENDING]

    other = make()
    again = other.claim("w2", ttl_s=60)
    assert again.id == r.id and again.attempts == 2
    done = worker_entry()
    assert other.finish(r.id, "w2", done)
    assert not store.finish(r.id, "w1", half)  # the dead worker's retry is refused: w2 finished it
    (shown,) = make().entries()
    assert shown.id == done.id
    (req,) = make().requests()
    assert req.status == FINISHED and req.entry_id == done.id
    assert [p for p in hub.files(RES) if p.startswith("results/")] == [result_file]  # replaced, not added


def test_worker_killed_during_finish_on_one_repo_writes_nothing():
    hub = hub_with_repos()
    make = factory(hub, "one-repo")
    store = make()
    store.add_request(request())
    r = store.claim("w1", ttl_s=60)
    hub.on_commit = lambda repo_id, paths: (_ for _ in ()).throw(Killed())
    with pytest.raises(Killed):
        store.finish(r.id, "w1", worker_entry())
    hub.on_commit = None
    assert not [p for p in hub.files(REQ) if p.startswith("results/")]
    assert [x.status for x in make().requests()] == [RUNNING]


class TakeOverAfterResult:
    """An API proxy: right after w1's result commit lands, w1's claim expires and w2 claims the request."""

    def __init__(self, hub, make):
        self.hub, self.make, self.armed = hub, make, True

    def __getattr__(self, name):
        return getattr(self.hub, name)

    def create_commit(self, repo_id, operations, **kw):
        info = self.hub.create_commit(repo_id, operations, **kw)
        if self.armed and repo_id == RES:
            self.armed = False
            time.sleep(0.3)
            assert self.make().claim("w2", ttl_s=60) is not None
        return info


def test_result_of_a_worker_whose_claim_was_taken_over_is_not_shown():
    hub = hub_with_repos()
    make = factory(hub, cache_ttl_s=0)
    make().add_request(request())
    slow = HubStore(TakeOverAfterResult(hub, make), REQ, RES, cache_ttl_s=0)
    r = slow.claim("w1", ttl_s=0.2)
    assert not slow.finish(r.id, "w1", worker_entry())
    assert make().entries() == []
    assert make().requests()[0].claimed_by == "w2"
    mine = worker_entry()
    assert make().finish(r.id, "w2", mine)
    assert [e.id for e in make().entries()] == [mine.id]


class Proxy:
    """An API proxy that runs ``after(repo_id)`` once a commit has landed and raises Killed before commits to
    ``kill_on``."""

    def __init__(self, hub, after=None, kill_on=None):
        self.hub, self.after, self.kill_on = hub, after, kill_on

    def __getattr__(self, name):
        return getattr(self.hub, name)

    def create_commit(self, repo_id, operations, **kw):
        if repo_id == self.kill_on:
            raise Killed()
        info = self.hub.create_commit(repo_id, operations, **kw)
        if self.after is not None:
            after, self.after = self.after, None
            after(repo_id)
        return info


def test_two_unclaimed_finishes_interleaved_never_finish_with_a_replaced_result():
    """finish on a request nobody claimed is allowed (a late result); when another worker's result replaces ours
    between our two commits, we must not mark the request FINISHED with an entry that is no longer there."""
    hub = hub_with_repos()
    make = factory(hub, cache_ttl_s=0)
    make().add_request(request())
    rid = make().requests()[0].id
    theirs = worker_entry()
    b = HubStore(Proxy(hub, kill_on=REQ), REQ, RES, cache_ttl_s=0)

    def b_writes_its_result_and_dies(repo_id):
        with pytest.raises(Killed):
            b.finish(rid, "b", theirs)

    a = HubStore(Proxy(hub, after=b_writes_its_result_and_dies), REQ, RES, cache_ttl_s=0)
    assert not a.finish(rid, "a", worker_entry())
    assert make().requests()[0].status == PENDING and make().entries() == []
    done = worker_entry()
    assert make().claim("c", 60) is not None and make().finish(rid, "c", done)
    assert [e.id for e in make().entries()] == [done.id]


# ================================================================================================ writes: errors
class ConcurrentWriter:
    """An API proxy: before each of our commits, somebody else commits to the same repository."""

    def __init__(self, hub):
        self.hub, self.n = hub, 0

    def __getattr__(self, name):
        return getattr(self.hub, name)

    def create_commit(self, repo_id, operations, **kw):
        self.n += 1
        self.hub.create_commit(repo_id, [CommitOperationAdd(f"noise/{self.n}.txt", str(self.n).encode())],
                               commit_message="someone else", repo_type="dataset")
        return self.hub.create_commit(repo_id, operations, **kw)


def test_retries_are_bounded_and_nothing_lands():
    hub = hub_with_repos()
    store = HubStore(ConcurrentWriter(hub), REQ, RES, max_attempts=3, backoff_s=0.001)
    with pytest.raises(HubConflictError, match="gave up after 3 attempts"):
        store.add_entry(entry())
    assert not [p for p in hub.files(RES) if p.startswith("results/")]
    assert hub.calls["create_commit"] == 6  # three of ours, each refused, and three of the other writer's


def test_other_hub_errors_propagate_without_retry():
    hub = hub_with_repos()
    store = factory(hub)()

    def server_error(repo_id, paths):
        raise http_error(500, "POST", f"https://huggingface.co/api/datasets/{repo_id}/commit/main", message="boom")

    hub.on_commit = server_error
    with pytest.raises(HfHubHTTPError, match="500") as info:
        store.add_entry(entry())
    assert not is_stale_parent(info.value)
    assert hub.calls["create_commit"] == 1


def test_fake_raises_what_huggingface_hub_raises_for_a_stale_parent():
    """The real ``HfApi.create_commit`` over an HTTP transport that answers the commit as the Hub does for a stale
    parent (412, "A commit has happened since..."): the fake's error has the same class, status, message."""
    def hub_answers(req: httpx2.Request) -> httpx2.Response:
        if "/preupload/" in req.url.path:
            files = json.loads(req.content)["files"]
            return httpx2.Response(200, json={"files": [
                {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None} for f in files]})
        assert req.method == "POST" and req.url.path == f"/api/datasets/{REQ}/commit/main", req.url
        return httpx2.Response(412, json={"error": STALE_PARENT_MESSAGE})

    _http.set_client_factory(lambda: httpx2.Client(transport=httpx2.MockTransport(hub_answers)))
    try:
        with pytest.raises(HfHubHTTPError) as real:
            HfApi(endpoint="https://huggingface.co", token="hf_not_a_token").create_commit(
                REQ, [CommitOperationAdd("requests/x.json", b"{}")], commit_message="m", repo_type="dataset",
                parent_commit="0" * 40)
    finally:
        _http.set_client_factory(_http.default_client_factory)

    hub = hub_with_repos()
    with pytest.raises(HfHubHTTPError) as fake:
        hub.create_commit(REQ, [CommitOperationAdd("requests/x.json", b"{}")], commit_message="m",
                          repo_type="dataset", parent_commit="0" * 40)
    assert type(fake.value) is type(real.value)
    assert fake.value.response.status_code == real.value.response.status_code == 412
    assert fake.value.server_message == real.value.server_message == STALE_PARENT_MESSAGE
    assert str(fake.value) == str(real.value)
    assert is_stale_parent(real.value) and is_stale_parent(fake.value)
    missing = http_error(404, "GET", "https://huggingface.co/api/datasets/a/b", error_code="RepoNotFound")
    assert not is_stale_parent(missing) and not is_stale_parent(ValueError("412"))


def test_fake_hub_basics():
    from huggingface_hub import CommitOperationDelete
    from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError
    from huggingface_hub.hf_api import RepoFile, RepoFolder

    hub = hub_with_repos()
    first = hub.head(REQ)
    op = CommitOperationAdd("a/b/c.json", b"1")
    info = hub.create_commit(REQ, [op, CommitOperationAdd("a/d.json", b"2")], commit_message="m",
                             repo_type="dataset", parent_commit=first[:7])
    assert info.oid == hub.head(REQ) != first
    tree = list(hub.list_repo_tree(REQ, recursive=True, repo_type="dataset"))
    assert [(type(x), x.path) for x in tree if x.path.startswith("a")] == [
        (RepoFolder, "a"), (RepoFolder, "a/b"), (RepoFile, "a/b/c.json"), (RepoFile, "a/d.json")]
    assert [x.path for x in hub.list_repo_tree(REQ, "a", repo_type="dataset")] == ["a/b", "a/d.json"]
    old = list(hub.list_repo_tree(REQ, recursive=True, revision=first, repo_type="dataset"))
    assert [x.path for x in old] == [".gitattributes"]
    with pytest.raises(ValueError, match="already"):
        hub.create_commit(REQ, [op], commit_message="again", repo_type="dataset")
    # the client skips a commit that changes nothing, so even a stale parent "succeeds" with the head
    assert hub.create_commit(REQ, [CommitOperationAdd("a/d.json", b"2")], commit_message="same",
                             repo_type="dataset", parent_commit=first).oid == info.oid
    hub.create_commit(REQ, [CommitOperationDelete("a/b/")], commit_message="rm", repo_type="dataset")
    assert sorted(hub.files(REQ)) == [".gitattributes", "a/d.json"]
    assert open(hub.hf_hub_download(REQ, "a/b/c.json", repo_type="dataset", revision=info.oid), "rb").read() == b"1"
    with pytest.raises(EntryNotFoundError):
        hub.hf_hub_download(REQ, "a/b/c.json", repo_type="dataset")
    with pytest.raises(EntryNotFoundError):
        list(hub.list_repo_tree(REQ, "nope", repo_type="dataset"))
    with pytest.raises(RevisionNotFoundError):
        list(hub.list_repo_tree(REQ, revision="f" * 40, repo_type="dataset"))
    with pytest.raises(RepositoryNotFoundError):
        hub.list_repo_refs(REQ)  # a model repo of that name does not exist


def test_fake_checks_the_real_signatures():
    hub = hub_with_repos()
    with pytest.raises(TypeError):
        hub.list_repo_tree(REQ, recursive=True, revison="main")
    with pytest.raises(TypeError):
        hub.create_commit(REQ, [], "positional message")


# ================================================================================================ reads
def test_reads_at_one_head_list_the_repository_once():
    hub = hub_with_repos()
    writer = factory(hub)()
    for k in range(5):
        writer.add_entry(entry(model=f"org/m{k}", upload=f"u{k}"))
    writer.add_request(request())
    hub.calls.clear()
    reader = factory(hub, cache_ttl_s=60)()
    for _ in range(50):
        assert len(reader.entries()) == 5 and len(reader.requests()) == 1
        reader.version()
    assert hub.calls == {"list_repo_refs": 2, "list_repo_tree": 2, "hf_hub_download": 6}

    hub.calls.clear()
    polling = factory(hub, cache_ttl_s=0)()
    for _ in range(20):
        assert len(polling.entries()) == 5
    assert hub.calls["list_repo_tree"] == 2 and hub.calls["list_repo_refs"] == 40  # heads checked, nothing relisted

    writer.add_entry(entry(model="org/new", upload="new"))
    hub.calls.clear()
    assert len(polling.entries()) == 6
    assert hub.calls["list_repo_tree"] == 1 and hub.calls["hf_hub_download"] == 1  # only the changed file
    hub.calls.clear()
    assert len(writer.entries()) == 6
    assert hub.calls["hf_hub_download"] == 0  # a handle knows the files it wrote itself


def test_own_writes_are_read_back_at_once_and_others_within_the_ttl():
    hub = hub_with_repos()
    a, b = factory(hub, cache_ttl_s=0.3)(), factory(hub, cache_ttl_s=0.3)()
    assert a.entries() == [] and b.entries() == []
    v = b.version()
    a.add_entry(entry())
    assert len(a.entries()) == 1
    assert b.entries() == [] and b.version() == v  # cached
    time.sleep(0.35)
    assert len(b.entries()) == 1 and b.version() != v


def test_unreadable_files_are_skipped():
    hub = hub_with_repos()
    hub.create_commit(RES, [CommitOperationAdd("results/public-1/bad.json", b"{not json"),
                            CommitOperationAdd("results/public-1/list.json", b"[1, 2]"),
                            CommitOperationAdd("README.md", b"# results\n")], commit_message="by hand",
                      repo_type="dataset")
    store = factory(hub)()
    store.add_entry(entry())
    assert len(store.entries()) == 1


def test_only_the_listed_api_methods_are_used():
    used = set()

    class Recorder:
        def __init__(self, hub):
            self.hub = hub

        def __getattr__(self, name):
            used.add(name)
            return getattr(self.hub, name)

    for check in CONTRACT:
        api = Recorder(hub_with_repos())
        check(lambda: HubStore(api, REQ, RES, backoff_s=0.001))
    assert used == set(API_METHODS)


def test_bad_names_are_refused_before_any_write():
    store = factory(hub_with_repos())()
    with pytest.raises(ValueError, match="test set '../x'"):
        store.add_entry(entry(testset="../x"))
    with pytest.raises(ValueError, match="request id"):
        store.add_request(request(id="a/b"))


# ================================================================================================ configuration
def test_from_env():
    assert from_env({}) is None
    assert from_env({"HF_TOKEN": "hf_x"}) is None
    with pytest.raises(ValueError, match="missing: HYPERGVL_RESULTS_REPO"):
        from_env({"HF_TOKEN": "hf_x", "HYPERGVL_REQUESTS_REPO": REQ})
    with pytest.raises(ValueError, match="missing: HF_TOKEN"):
        from_env({"HYPERGVL_REQUESTS_REPO": REQ, "HYPERGVL_RESULTS_REPO": RES})
    store = from_env({"HF_TOKEN": "hf_x", "HYPERGVL_REQUESTS_REPO": REQ, "HYPERGVL_RESULTS_REPO": RES})
    assert isinstance(store, HubStore) and isinstance(store.api, HfApi) and store.api.token == "hf_x"
    assert (store.requests_repo, store.results_repo) == (REQ, RES)
