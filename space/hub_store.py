"""The deployed store: the leaderboard template's requests/results dataset repositories on the Hugging Face Hub.

Layout (reference/leaderboard.md §1.4: one JSON per request and per result, statuses PENDING / RUNNING / FINISHED /
FAILED; the two repositories may be one)::

    <requests repo>  requests/<request id>.json                 a Request doc
    <results repo>   results/<testset>/<entry id>.json          an Entry stored by add_entry (an upload, a seed)
                     results/<testset>/request-<request id>.json  the Entry a worker stored for that request

**Every write is a compare-and-swap** (§1.6: ``create_commit(..., parent_commit=<sha seen>)`` "will fail if
revision does not point to parent_commit"): read the branch head, read the state at that head, decide (duplicate
checks, which request to claim, whether the claim is still ours), then commit with ``parent_commit`` = that head.
When the branch moved meanwhile the Hub answers ``412 Precondition Failed`` ("A commit has happened since. Please
refresh and try again."), which ``huggingface_hub`` raises as a plain ``HfHubHTTPError`` whose
``response.status_code`` is 412 (``utils/_http.py::hf_raise_for_status`` has no dedicated class for 412);
:func:`is_stale_parent` matches exactly that. The store then rereads and decides again, up to ``max_attempts``
times with full-jitter exponential backoff. So two workers racing for one request cannot both win (the loser's
commit is refused, its reread shows RUNNING), and two equal submissions cannot both land (the second's reread
shows the first). Other errors propagate unchanged.

**finish across two repositories** cannot be one commit. The result is written first, at a path derived from the
request id (a retry, by any worker, overwrites the same file instead of adding a second), then the request is
committed FINISHED with ``entry_id``. :meth:`HubStore.entries` shows a request's result only while its request is
FINISHED with that ``entry_id`` (the template's rule: a result shows only when its request file is FINISHED), so a
worker killed between the two commits leaves an invisible file; its claim expires, the request is PENDING again,
and the next worker's result replaces the file. When both repositories are one, finish is one commit.

**Reads** never call the API on every page render: the heads are cached for ``cache_ttl_s``, the parsed state is
cached per head, and file contents per git blob id (content-addressed, so never stale): a new head costs one tree
listing and downloads only the files that changed. A handle's own writes invalidate its head cache, so it reads
them back at once; other processes' writes show within ``cache_ttl_s``.

Limits. Cross-repository checks are not atomic: ``add_request`` checks the results repository for an existing
entry without a lock on it (a concurrent upload of the same model can still land; the worker's ``finish`` then
raises DuplicateError). Duplicate checks look at visible entries only, as a user sees the leaderboard.

The ``huggingface_hub.HfApi`` methods used (all in huggingface_hub 2.4.0), listed in :data:`API_METHODS`:
``list_repo_refs`` (the branch head; the repo-info sha can lag behind the git head, evaleval/every_eval_ever#265),
``list_repo_tree`` (recursive, at a commit sha), ``hf_hub_download`` (a file at a commit sha) and
``create_commit`` (``CommitOperationAdd`` only, always with ``parent_commit``).
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import CommitOperationAdd, HfApi
from huggingface_hub.errors import HfHubHTTPError

from hypergvl.space.store import (FAILED, FINISHED, PENDING, RUNNING, DuplicateError, Entry, Request, Store,
                         duplicate_message, entry_key, expired, may_act, shown)

log = logging.getLogger(__name__)

API_METHODS = ("list_repo_refs", "list_repo_tree", "hf_hub_download", "create_commit")
REPO_TYPE = "dataset"
BRANCH = "main"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_REQUEST_PATH = re.compile(r"requests/([^/]+)\.json")
_RESULT_PATH = re.compile(r"results/[^/]+/(?:request-([^/]+)|[^/]+)\.json")


class HubConflictError(RuntimeError):
    """The repository kept moving: every attempt of a write found a newer head than the one it read."""


def is_stale_parent(exc: BaseException) -> bool:
    """True for the error ``HfApi.create_commit`` raises when ``parent_commit`` is no longer the branch head."""
    response = getattr(exc, "response", None)
    return isinstance(exc, HfHubHTTPError) and response is not None and response.status_code == 412


def git_blob_oid(data: bytes) -> str:
    """The git blob id of ``data``: what the Hub's tree listing reports as a regular file's ``blob_id``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _encode(doc: dict) -> bytes:
    return (json.dumps(doc, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _check_name(what: str, value: str) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value) or value.startswith("request-"):
        raise ValueError(f"{what} {value!r} cannot be a file name in the repository (letters, digits, '.', '_', "
                         "'-'; at most 128 characters; not starting with 'request-')")
    return value


def request_path(request_id: str) -> str:
    return f"requests/{_check_name('request id', request_id)}.json"


def entry_path(entry: Entry) -> str:
    return f"results/{_check_name('test set', entry.testset)}/{_check_name('entry id', entry.id)}.json"


def request_result_path(testset: str, request_id: str) -> str:
    return f"results/{_check_name('test set', testset)}/request-{_check_name('request id', request_id)}.json"


@dataclass(frozen=True)
class _Snapshot:
    sha: str
    docs: Mapping[str, dict]  # path -> parsed JSON, for the requests/ and results/ files this repo holds


@dataclass(frozen=True)
class _View:
    heads: tuple[str, ...]
    requests: Mapping[str, Request]  # id -> Request, as stored (expiry not applied)
    results: Mapping[str, Entry]  # path -> Entry, visible or not
    visible: tuple[Entry, ...]  # oldest first


class HubStore(Store):
    """:class:`hypergvl.space.store.Store` on the Hub's requests/results dataset repositories (see the module docstring).

    ``api`` is an ``huggingface_hub.HfApi`` (or an object with the same four methods, :data:`API_METHODS`);
    ``requests_repo`` and ``results_repo`` are dataset repository ids, possibly equal. Safe to share between
    threads; writes of one handle are serialised locally, writes of several processes by the compare-and-swap."""

    def __init__(self, api, requests_repo: str, results_repo: str, *, cache_ttl_s: float = 5.0,
                 max_attempts: int = 20, backoff_s: float = 0.05, download_threads: int = 8):
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        self.api = api
        self.requests_repo, self.results_repo = requests_repo, results_repo
        self.repos = tuple(dict.fromkeys([requests_repo, results_repo]))
        self.cache_ttl_s, self.max_attempts, self.backoff_s = cache_ttl_s, max_attempts, backoff_s
        self.download_threads = download_threads
        self._lock = threading.RLock()  # the caches below
        self._write_lock = threading.Lock()  # one write at a time per handle: its threads never race each other
        self._heads: dict[str, tuple[str, float]] = {}  # repo -> (sha, monotonic time read)
        self._snapshots: dict[str, _Snapshot] = {}
        self._blobs: dict[str, dict | None] = {}  # git blob id -> parsed doc (None: unreadable)
        self._view_cache: _View | None = None

    # ================================================================================================ reads
    def version(self) -> str:
        return ":".join(self._head(repo) for repo in self.repos)

    def entries(self) -> list[Entry]:
        return [copy.copy(e) for e in self._view().visible]

    def requests(self) -> list[Request]:
        now = time.time()
        reqs = sorted(self._view().requests.values(), key=lambda r: (r.created, r.id))
        return [shown(copy.copy(r), now) for r in reqs]

    def _head(self, repo: str, *, fresh: bool = False) -> str:
        with self._lock:
            cached = self._heads.get(repo)
            if cached is not None and not fresh and time.monotonic() - cached[1] < self.cache_ttl_s:
                return cached[0]
            refs = self.api.list_repo_refs(repo, repo_type=REPO_TYPE)
            sha = next((b.target_commit for b in refs.branches if b.name == BRANCH), None)
            if sha is None:
                raise ValueError(f"the Hub dataset {repo} has no branch {BRANCH!r}")
            self._heads[repo] = (sha, time.monotonic())
            return sha

    def _snapshot(self, repo: str, sha: str) -> _Snapshot:
        with self._lock:
            snap = self._snapshots.get(repo)
            if snap is not None and snap.sha == sha:
                return snap
            prefixes = tuple(p for p, r in (("requests/", self.requests_repo), ("results/", self.results_repo))
                             if r == repo)
            files = [f for f in self.api.list_repo_tree(repo, recursive=True, revision=sha, repo_type=REPO_TYPE)
                     if getattr(f, "blob_id", None) and f.path.startswith(prefixes) and f.path.endswith(".json")]
            missing = [f for f in files if f.blob_id not in self._blobs]
            if missing:
                with ThreadPoolExecutor(max(1, min(self.download_threads, len(missing)))) as pool:
                    for f, doc in zip(missing, pool.map(lambda f: self._download(repo, sha, f.path), missing)):
                        self._blobs[f.blob_id] = doc
            docs = {f.path: self._blobs[f.blob_id] for f in files if self._blobs[f.blob_id] is not None}
            self._snapshots[repo] = snap = _Snapshot(sha, docs)
            return snap

    def _download(self, repo: str, sha: str, path: str) -> dict | None:
        local = self.api.hf_hub_download(repo, path, repo_type=REPO_TYPE, revision=sha)
        try:
            doc = json.loads(Path(local).read_text(encoding="utf-8"))
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
            return doc
        except ValueError as exc:
            log.warning("ignoring %s in the Hub dataset %s at %s: %s", path, repo, sha[:12], exc)
            return None

    def _view(self, *, fresh: Iterable[str] = ()) -> _View:
        fresh = set(fresh)
        with self._lock:
            heads = tuple(self._head(repo, fresh=repo in fresh) for repo in self.repos)
            if self._view_cache is not None and self._view_cache.heads == heads:
                return self._view_cache
            snaps = dict(zip(self.repos, (self._snapshot(repo, sha) for repo, sha in zip(self.repos, heads))))
            requests: dict[str, Request] = {}
            for path, doc in snaps[self.requests_repo].docs.items():
                if _REQUEST_PATH.fullmatch(path) and (r := _parse(Request, doc, path)) is not None:
                    requests[r.id] = r
            results: dict[str, Entry] = {}
            for path, doc in snaps[self.results_repo].docs.items():
                if _RESULT_PATH.fullmatch(path) and (e := _parse(Entry, doc, path)) is not None:
                    results[path] = e
            visible = sorted((e for p, e in results.items() if _visible(p, e, requests)),
                             key=lambda e: (e.created, e.id))
            self._view_cache = _View(heads, requests, results, tuple(visible))
            return self._view_cache

    # ================================================================================================ writes
    def _transact(self, decide: Callable[[_View], tuple[dict[str, dict], object]], *, repo: str,
                  check: Iterable[str] = (), message: str):
        """Read ``repo``'s head (and ``check``'s) afresh, ``decide(view) -> ({path: doc}, result)``, commit those
        files to ``repo`` on that head; on a stale parent, again. Returns ``result``."""
        with self._write_lock:
            for attempt in range(self.max_attempts):
                view = self._view(fresh={repo, *check})
                files, result = decide(view)
                if not files:
                    return result
                ops = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=_encode(d)) for p, d in files.items()]
                parent = view.heads[self.repos.index(repo)]
                try:
                    self.api.create_commit(repo, operations=ops, commit_message=message, repo_type=REPO_TYPE,
                                           parent_commit=parent)
                except HfHubHTTPError as exc:
                    if not is_stale_parent(exc):
                        raise
                    log.info("%s moved past %s during %r; rereading (attempt %d)", repo, parent[:12], message,
                             attempt + 1)
                    time.sleep(random.uniform(0, min(1.0, self.backoff_s * 2 ** attempt)))
                    continue
                finally:
                    with self._lock:
                        self._heads.pop(repo, None)  # whatever happened, the next read asks for the head again
                with self._lock:
                    for p, d in files.items():
                        self._blobs.setdefault(git_blob_oid(_encode(d)), d)
                return result
            raise HubConflictError(f"the Hub dataset {repo} kept changing during {message!r}: gave up after "
                                   f"{self.max_attempts} attempts")

    def add_entry(self, entry: Entry) -> None:
        path = entry_path(entry)

        def decide(view):
            _refuse_duplicate_entry(view, entry)
            return {path: entry.to_doc()}, None

        self._transact(decide, repo=self.results_repo, message=f"Add {entry.model} ({entry.track}) on {entry.testset}")

    def update_entry(self, entry: Entry) -> None:
        def decide(view):
            paths = [p for p, e in view.results.items() if e.id == entry.id and _visible(p, e, view.requests)]
            if not paths:
                raise KeyError(f"no entry {entry.id!r}")
            old = view.results[paths[0]]
            if (*entry_key(old), old.upload_sha256) != (*entry_key(entry), entry.upload_sha256):
                raise ValueError(f"entry {entry.id!r}: a re-grade keeps its model, revision, test set, track and upload")
            return {paths[0]: entry.to_doc()}, None

        self._transact(decide, repo=self.results_repo, check=[self.requests_repo],
                       message=f"Re-grade {entry.model} ({entry.track}) on {entry.testset}")

    def add_request(self, request: Request) -> None:
        path = request_path(request.id)

        def decide(view):
            if any(entry_key(e) == entry_key(request) for e in view.visible):
                raise DuplicateError(duplicate_message(request, "entry exists"))
            if request.id in view.requests or any(
                    entry_key(r) == entry_key(request) and r.status in (PENDING, RUNNING, FINISHED)
                    for r in view.requests.values()):
                raise DuplicateError(duplicate_message(request, "request exists"))
            return {path: request.to_doc()}, None

        self._transact(decide, repo=self.requests_repo, check=[self.results_repo],
                       message=f"Queue {request.model} ({request.track}) on {request.testset}")

    def claim(self, worker: str, ttl_s: float) -> Request | None:
        def decide(view):
            now = time.time()
            todo = sorted((r for r in view.requests.values() if r.status == PENDING or expired(r, now)),
                          key=lambda r: (r.created, r.id))
            if not todo:
                return {}, None
            r = dataclasses.replace(todo[0], status=RUNNING, claimed_by=worker, claim_expires=now + ttl_s,
                                    attempts=todo[0].attempts + 1, updated=now)
            return {request_path(r.id): r.to_doc()}, r

        return self._transact(decide, repo=self.requests_repo, message=f"Claim a request for {worker}")

    def renew(self, request_id: str, worker: str, ttl_s: float) -> bool:
        def decide(view):
            r = _mine(view, request_id, worker, late_ok=False)
            if r is None:
                return {}, False
            now = time.time()
            return {request_path(r.id): dataclasses.replace(r, claim_expires=now + ttl_s, updated=now).to_doc()}, True

        return self._transact(decide, repo=self.requests_repo, message=f"Renew {worker}'s claim on {request_id}")

    def fail(self, request_id: str, worker: str, error: str) -> bool:
        def decide(view):
            r = _mine(view, request_id, worker, late_ok=True)
            if r is None:
                return {}, False
            done = dataclasses.replace(r, status=FAILED, error=error[:2000], claimed_by=None, claim_expires=None,
                                       updated=time.time())
            return {request_path(r.id): done.to_doc()}, True

        return self._transact(decide, repo=self.requests_repo, message=f"Request {request_id} failed")

    def finish(self, request_id: str, worker: str, entry: Entry) -> bool:
        result_path = request_result_path(entry.testset, request_id)
        message = f"Finish {request_id}: {entry.model} ({entry.track}) on {entry.testset}"

        def finished(view, r):
            done = dataclasses.replace(r, status=FINISHED, entry_id=entry.id, claimed_by=None, claim_expires=None,
                                       error=None, updated=time.time())
            return {request_path(r.id): done.to_doc()}

        if len(self.repos) == 1:  # one repository: the result and the request's new status in one commit
            def decide(view):
                r = _mine(view, request_id, worker, late_ok=True)
                if r is None:
                    return {}, False
                _refuse_duplicate_entry(view, entry)
                return {result_path: entry.to_doc(), **finished(view, r)}, True

            return self._transact(decide, repo=self.requests_repo, message=message)

        def write_result(view):
            if _mine(view, request_id, worker, late_ok=True) is None:
                return {}, False
            _refuse_duplicate_entry(view, entry)
            return {result_path: entry.to_doc()}, True

        if not self._transact(write_result, repo=self.results_repo, check=[self.requests_repo],
                              message=f"Result of {request_id}"):
            return False

        def mark_finished(view):
            r = _mine(view, request_id, worker, late_ok=True)
            stored = view.results.get(result_path)
            if r is None or stored is None or stored.id != entry.id:
                return {}, False  # taken over meanwhile: our file is invisible and the new holder's replaces it
            _refuse_duplicate_entry(view, entry)
            return finished(view, r), True

        return self._transact(mark_finished, repo=self.requests_repo, check=[self.results_repo], message=message)


# ==================================================================================================== helpers
def _parse(cls, doc: dict, path: str):
    try:
        return cls.from_doc(doc)
    except TypeError as exc:
        log.warning("ignoring %s: not a %s document (%s)", path, cls.__name__, exc)
        return None


def _visible(path: str, entry: Entry, requests: Mapping[str, Request]) -> bool:
    """A worker's result shows only once its request is FINISHED with it (the template's rule); others always."""
    m = _RESULT_PATH.fullmatch(path)
    if m is None or m.group(1) is None:
        return True
    r = requests.get(m.group(1))
    return r is not None and r.status == FINISHED and r.entry_id == entry.id


def _refuse_duplicate_entry(view: _View, entry: Entry) -> None:
    for x in view.visible:
        if x.id == entry.id or entry_key(x) == entry_key(entry):
            raise DuplicateError(duplicate_message(entry, "entry exists"))
        if entry.upload_sha256 is not None and x.upload_sha256 == entry.upload_sha256:
            raise DuplicateError(duplicate_message(entry, "upload_sha256"))


def _mine(view: _View, request_id: str, worker: str, *, late_ok: bool) -> Request | None:
    """The request if ``worker`` may act on it (the same rule as :class:`hypergvl.space.store.SQLiteStore`)."""
    r = view.requests.get(request_id)
    return r if may_act(r, worker, late_ok=late_ok) else None


def from_env(env: Mapping[str, str] = os.environ) -> HubStore | None:
    """The Hub store when the Space is configured for it: ``HF_TOKEN`` (a write token), ``HYPERGVL_REQUESTS_REPO``
    and ``HYPERGVL_RESULTS_REPO`` (dataset ids, may be equal). None when neither repository is set (the app then
    uses its embedded store); ValueError when the configuration is half done, since silently falling back to the
    embedded store on a Space would lose every submission at its next restart."""
    names = ("HF_TOKEN", "HYPERGVL_REQUESTS_REPO", "HYPERGVL_RESULTS_REPO")
    values = {n: (env.get(n) or "").strip() for n in names}
    if not values["HYPERGVL_REQUESTS_REPO"] and not values["HYPERGVL_RESULTS_REPO"]:
        return None
    missing = [n for n in names if not values[n]]
    if missing:
        raise ValueError(f"the Hub store needs {', '.join(names)}; missing: {', '.join(missing)}")
    return HubStore(HfApi(token=values["HF_TOKEN"]), values["HYPERGVL_REQUESTS_REPO"],
                    values["HYPERGVL_RESULTS_REPO"])
