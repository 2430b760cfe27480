"""An in-memory stand-in for the few :class:`huggingface_hub.HfApi` methods :class:`hypergvl.space.hub_store.HubStore` uses.

What it keeps faithful, because the store's correctness rests on it:

* **Parent-commit semantics.** ``create_commit(..., parent_commit=sha)`` lands only when the branch head is still
  ``sha`` (a 7+ character prefix is accepted, as on the Hub); otherwise it raises what ``HfApi.create_commit``
  raises when the Hub answers ``412 Precondition Failed`` / "A commit has happened since. Please refresh and try
  again.": the error is built by ``huggingface_hub.utils.hf_raise_for_status`` from an HTTP response of that
  shape, so it is the library's own exception class, message and ``response.status_code``. The check and the
  update are one step under a lock, so of several commits on one parent exactly one lands.
* **No-op commits.** Like the client, a commit whose every file already has that content is skipped and returns
  the current head (the client drops unchanged files before it sends the commit, so no parent check happens).
* **Real types and signatures.** Every method accepts exactly the arguments the real ``HfApi`` method accepts
  (checked against ``inspect.signature`` on each call) and returns the library's own dataclasses (``GitRefs``,
  ``RepoFile``/``RepoFolder``, ``CommitInfo``); missing repos, revisions and files raise the library's errors
  built the same way as above.

Testing hooks: ``latency_s`` (every call sleeps that long before touching the state, outside the lock, so that
concurrent readers really read the same head before anyone commits), ``on_commit`` (called with the repo id and
the paths of a commit just before it would land; raising from it is a process killed before that commit) and
``calls`` (a counter of calls per method).
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import itertools
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import quote

import httpx2
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, constants
from huggingface_hub.hf_api import CommitInfo, GitRefInfo, GitRefs, RepoFile, RepoFolder
from huggingface_hub.utils import hf_raise_for_status

ENDPOINT = "https://huggingface.co"
STALE_PARENT_MESSAGE = "A commit has happened since. Please refresh and try again."


def http_error(status: int, method: str, url: str, *, error_code: str | None = None, message: str | None = None):
    """The exception ``huggingface_hub`` raises for this HTTP answer (built by its own ``hf_raise_for_status``)."""
    headers = {"X-Error-Code": error_code} if error_code else {}
    response = httpx2.Response(status, request=httpx2.Request(method, url), headers=headers,
                               json={"error": message} if message else None)
    try:
        hf_raise_for_status(response)
    except Exception as exc:  # noqa: BLE001 - returned, not swallowed: the caller raises it
        return exc
    raise AssertionError(f"hf_raise_for_status did not raise for HTTP {status}")


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _real_signature(fn):
    """Bind every call against the real ``HfApi`` method of the same name: a wrong argument is a TypeError here
    exactly as it would be against the Hub."""
    real = inspect.signature(getattr(HfApi, fn.__name__))

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        real.bind(self, *args, **kwargs)
        self.calls[fn.__name__] += 1
        if self.latency_s:
            time.sleep(self.latency_s)
        return fn(self, *args, **kwargs)

    return wrapper


@dataclass
class _Repo:
    commits: dict[str, dict[str, str]] = field(default_factory=dict)  # commit sha -> {path: blob oid}
    head: str = ""


class FakeHub:
    """An in-memory Hub (thread-safe): dataset/model repos with one ``main`` branch, git blob ids and commit shas."""

    def __init__(self, *, latency_s: float = 0.0, root: str | Path | None = None):
        self.latency_s = latency_s
        self.on_commit = None  # Callable[[str, list[str]], None] | None
        self.calls: Counter = Counter()
        self._lock = threading.Lock()
        self._repos: dict[tuple[str, str], _Repo] = {}
        self._counter = itertools.count()
        if root is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="fake-hub-")
            root = self._tmp.name
        self._blobs = Path(root) / "blobs"
        self._blobs.mkdir(parents=True, exist_ok=True)

    # ------------------------------------------------------------------------------------------ set-up helpers
    def create_repo(self, repo_id: str, *, repo_type: str = "dataset", exist_ok: bool = True, space_sdk=None,
                    **hub_kwargs) -> None:
        """A new repo with the Hub's initial commit (one ``.gitattributes``). Code under test may call it as it
        calls ``HfApi.create_repo`` (the arguments are bound against that signature): a Space needs ``space_sdk``
        as on the Hub, and an existing repo is an HTTP 409 unless ``exist_ok``."""
        inspect.signature(HfApi.create_repo).bind(self, repo_id, repo_type=repo_type, exist_ok=exist_ok,
                                                  space_sdk=space_sdk, **hub_kwargs)
        if repo_type == "space" and space_sdk not in constants.SPACES_SDK_TYPES:
            raise ValueError(f"Invalid space_sdk. Please choose one of {constants.SPACES_SDK_TYPES}.")
        self.calls["create_repo"] += 1
        with self._lock:
            if not exist_ok and (repo_type, repo_id) in self._repos:
                raise http_error(409, "POST", f"{ENDPOINT}/api/repos/create", message="You already created this repo")
            repo = self._repos.setdefault((repo_type, repo_id), _Repo())
            if not repo.head:
                self._land(repo, {".gitattributes": self._store_blob(b"*.json text\n")}, "initial commit")

    def head(self, repo_id: str, *, repo_type: str = "dataset") -> str:
        with self._lock:
            return self._repo(repo_type, repo_id).head

    def files(self, repo_id: str, *, repo_type: str = "dataset") -> dict[str, bytes]:
        """Every file at the head, path -> bytes (for assertions)."""
        with self._lock:
            repo = self._repo(repo_type, repo_id)
            return {p: (self._blobs / oid).read_bytes() for p, oid in repo.commits[repo.head].items()}

    def num_commits(self, repo_id: str, *, repo_type: str = "dataset") -> int:
        with self._lock:
            return len(self._repo(repo_type, repo_id).commits)

    # ------------------------------------------------------------------------------------------ HfApi methods
    @_real_signature
    def list_repo_refs(self, repo_id, *, repo_type=None, include_pull_requests=False, token=None) -> GitRefs:
        with self._lock:
            repo = self._repo(repo_type, repo_id)
            main = GitRefInfo(name="main", ref="refs/heads/main", target_commit=repo.head)
            return GitRefs(branches=[main], converts=[], tags=[], pull_requests=[] if include_pull_requests else None)

    @_real_signature
    def list_repo_tree(self, repo_id, path_in_repo=None, *, recursive=False, expand=False, revision=None,
                       repo_type=None, token=None):
        with self._lock:
            repo = self._repo(repo_type, repo_id)
            tree = dict(self._tree(repo, repo_type, repo_id, revision, "tree"))
        base = (path_in_repo or "").strip("/")
        prefix = f"{base}/" if base else ""
        if base and not any(p.startswith(prefix) for p in tree):
            raise http_error(404, "GET", self._url(repo_type, repo_id, "tree", revision, base),
                             error_code="EntryNotFound")
        items, folders = [], set()
        for path, oid in sorted(tree.items()):
            if not path.startswith(prefix):
                continue
            rest = PurePosixPath(path[len(prefix):])
            for depth, _ in enumerate(rest.parents[:-1][::-1]):
                folder = prefix + str(PurePosixPath(*rest.parts[:depth + 1]))
                if folder not in folders and (recursive or depth == 0):
                    folders.add(folder)
                    items.append(RepoFolder(path=folder, oid=hashlib.sha1(folder.encode()).hexdigest()))
            if recursive or len(rest.parts) == 1:
                items.append(RepoFile(path=path, size=(self._blobs / oid).stat().st_size, oid=oid))
        return iter(items)

    @_real_signature
    def hf_hub_download(self, repo_id, filename, *, subfolder=None, repo_type=None, revision=None, cache_dir=None,
                        local_dir=None, force_download=False, etag_timeout=10, token=None, local_files_only=False,
                        tqdm_class=None, dry_run=False) -> str:
        path = f"{subfolder}/{filename}" if subfolder else filename
        with self._lock:
            tree = self._tree(self._repo(repo_type, repo_id), repo_type, repo_id, revision, "resolve")
            if path not in tree:
                raise http_error(404, "HEAD", self._url(repo_type, repo_id, "resolve", revision, path),
                                 error_code="EntryNotFound")
            return str(self._blobs / tree[path])

    @_real_signature
    def create_commit(self, repo_id, operations, *, commit_message, commit_description=None, token=None,
                      repo_type=None, revision=None, create_pr=None, num_threads=5, parent_commit=None,
                      run_as_future=False, _hot_reload=None) -> CommitInfo:
        if parent_commit is not None and not constants.REGEX_COMMIT_OID.fullmatch(parent_commit):
            raise ValueError(f"`parent_commit` is not a valid commit OID. It must match the following regex: "
                             f"{constants.REGEX_COMMIT_OID}")
        if not commit_message:
            raise ValueError("`commit_message` can't be empty, please pass a value.")
        if (revision or "main") != "main" or create_pr or run_as_future:
            raise NotImplementedError("the fake Hub has one branch, main, and commits synchronously")
        operations = list(operations)
        adds: dict[str, bytes] = {}
        deletes: list[str] = []
        for op in operations:
            if isinstance(op, CommitOperationAdd):
                if op._is_committed:
                    raise ValueError(f"CommitOperationAdd {op} has already being committed and cannot be reused.")
                with op.as_file() as f:
                    adds[op.path_in_repo] = f.read()
            elif isinstance(op, CommitOperationDelete):
                deletes.append(op.path_in_repo)
            else:
                raise TypeError(f"unsupported commit operation {op!r}")
        with self._lock:
            repo = self._repo(repo_type, repo_id)
            current = repo.commits[repo.head]
            if not deletes and all(current.get(p) == git_blob_oid(b) for p, b in adds.items()):
                return self._info(repo_type, repo_id, repo.head, commit_message)  # the client skips a no-op commit
            if self.on_commit is not None:
                self.on_commit(repo_id, sorted([*adds, *deletes]))
            if parent_commit is not None and not repo.head.startswith(parent_commit):
                raise http_error(412, "POST", self._url(repo_type, repo_id, "commit", "main", ""),
                                 message=STALE_PARENT_MESSAGE)
            tree = dict(current)
            for path in deletes:
                gone = [p for p in tree if p == path.rstrip("/") or p.startswith(path.rstrip("/") + "/")]
                if not gone:
                    raise http_error(404, "POST", self._url(repo_type, repo_id, "commit", "main", ""),
                                     error_code="EntryNotFound", message=f"A file with this name doesn't exist: {path}")
                for p in gone:
                    del tree[p]
            for path, data in adds.items():
                tree[path] = self._store_blob(data)
            sha = self._land(repo, tree, commit_message)
        for op in operations:
            if isinstance(op, CommitOperationAdd):
                op._is_committed = True
        return self._info(repo_type, repo_id, sha, commit_message)

    # ------------------------------------------------------------------------------------------ internals
    def _repo(self, repo_type, repo_id) -> _Repo:
        repo = self._repos.get((repo_type or "model", repo_id))
        if repo is None:
            raise http_error(404, "GET", f"{ENDPOINT}/api/{repo_type or 'model'}s/{repo_id}", error_code="RepoNotFound")
        return repo

    def _tree(self, repo: _Repo, repo_type, repo_id, revision, kind) -> dict[str, str]:
        rev = revision or "main"
        if rev == "main":
            return repo.commits[repo.head]
        matches = [sha for sha in repo.commits if len(rev) >= 7 and sha.startswith(rev)]
        if len(matches) != 1:
            raise http_error(404, "GET", self._url(repo_type, repo_id, kind, rev, ""), error_code="RevisionNotFound")
        return repo.commits[matches[0]]

    def _store_blob(self, data: bytes) -> str:
        oid = git_blob_oid(data)
        target = self._blobs / oid
        if not target.exists():
            tmp = target.with_suffix(f".{threading.get_ident()}.tmp")
            tmp.write_bytes(data)
            tmp.replace(target)
        return oid

    def _land(self, repo: _Repo, tree: dict[str, str], message: str) -> str:
        digest = hashlib.sha1(f"{repo.head}\n{message}\n{next(self._counter)}\n".encode())
        for path, oid in sorted(tree.items()):
            digest.update(f"{path}\0{oid}\n".encode())
        sha = digest.hexdigest()
        repo.commits[sha] = tree
        repo.head = sha
        return sha

    @staticmethod
    def _url(repo_type, repo_id, kind, revision, path) -> str:
        url = f"{ENDPOINT}/api/{repo_type or 'model'}s/{repo_id}/{kind}/{quote(revision or 'main', safe='')}"
        return f"{url}/{path}" if path else url

    @staticmethod
    def _info(repo_type, repo_id, sha, message) -> CommitInfo:
        prefix = ENDPOINT if repo_type in (None, "model") else f"{ENDPOINT}/{repo_type}s"
        return CommitInfo(commit_url=f"{prefix}/{repo_id}/commit/{sha}", commit_message=message,
                          commit_description="", oid=sha, _endpoint=ENDPOINT)
