"""The Space's store: leaderboard entries and evaluation requests, behind one interface with two implementations.

* :class:`SQLiteStore` (the default, embedded): one SQLite file in WAL mode; every submission is one transaction,
  so a process killed mid-submission leaves it either fully stored or absent.
* :class:`hypergvl.space.hub_store.HubStore` (deployed, with ``HF_TOKEN`` and repository ids): the template's
  requests/results dataset-repository pattern on the Hub, one JSON per request and per result; a claim is a
  ``create_commit(..., parent_commit=...)`` so that a concurrent change makes it fail instead of both succeeding.

The app and the worker only see :class:`Store`. A request's life (docs/design.md, "Space"): PENDING -> RUNNING (claimed
by one worker, with an expiry the worker renews while it runs) -> FINISHED | FAILED; a claim that expires (its
worker died) returns the request to PENDING. An entry is unique per (model, revision, test set, track) and per
raw-upload sha256; a request is refused while an equal one is pending, running or finished.
"""
from __future__ import annotations

import base64
import copy
import dataclasses
import json
import sqlite3
import threading
import time
import uuid
import zlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hypergvl.paper import PAPER_TASKS, PAPER_TEXT_REPS, PAPER_VISUAL_REPS

PENDING, RUNNING, FINISHED, FAILED = "PENDING", "RUNNING", "FINISHED", "FAILED"
SCALES = ("small", "medium", "large")
SOURCES = ("synthetic", "real")
#: what the cells of an entry stored before entries recorded their axes index: the paper's tasks and representations
#: (every deployed Space registered exactly these until then; ``none`` is the text-only track)
PAPER_AXES = {"task": list(PAPER_TASKS), "text_rep": list(PAPER_TEXT_REPS), "visual_rep": [*PAPER_VISUAL_REPS, "none"],
              "scale": list(SCALES), "source": list(SOURCES)}
STATUSES = (PENDING, RUNNING, FINISHED, FAILED)


class DuplicateError(ValueError):
    """An entry or request equal to one already stored (same model, revision, test set and track, or same upload)."""


def new_id() -> str:
    return uuid.uuid4().hex


@dataclass
class Entry:
    """One leaderboard row: a submission re-scored by the server.

    ``scores`` is the ``hypergvl_accuracy`` output over the whole selection; ``cells`` the per-sample verdicts
    counted by (task, text rep, visual rep, scale, source) (:mod:`hypergvl.space.scoring`), from which every filtered view
    is computed: an integer array, stored as base64 of its zlib-compressed little-endian int32 bytes (a JSON list of
    20,000 integers takes 5 ms to parse, which 1,000 entries cannot afford on a page load). ``scores`` holds the
    headline numbers only; every grouping is derived from the cells (:func:`hypergvl.space.scoring.groupings`). ``track`` is ``vision``, ``text-only`` or ``routed:<policy>``.
    ``axes`` names what the cells' indices mean (the tasks and representations registered when it was scored); an
    entry stored without it indexes :data:`PAPER_AXES`, and None (an entry made in memory) means the axes registered
    now."""

    model: str
    revision: str
    testset: str
    track: str
    model_type: str  # open | closed | baseline
    num_parameters: float | None  # billions
    link: str
    scores: dict
    cells: object  # (n, 8) int array, or a list of rows
    num_samples: int
    dataset_sha256: str
    origin: str  # upload | request | seed
    submitter: str = ""
    upload_sha256: str | None = None
    created: float = field(default_factory=time.time)
    id: str = field(default_factory=new_id)
    scorer_version: str = "1"  # the grading rules that scored it; entries stored before versions existed are "1"
    raw_sha256: str | None = None  # the kept raw records (<data>/uploads/<sha256>) it can be re-graded from
    provenance: dict = field(default_factory=dict)  # of the scoring (hypergvl.space.scoring.scoring_provenance)
    submitted_provenance: dict = field(default_factory=dict)  # the submitter's results.json provenance, as given
    axes: dict | None = None  # axis -> names, what the cells index (hypergvl.space.scoring.axes when scored)

    @property
    def text_only(self) -> bool:
        return self.track == "text-only"

    @property
    def routing(self) -> str | None:
        return self.track.partition(":")[2] or None if self.track.startswith("routed") else None

    def to_doc(self) -> dict:
        doc = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        doc["cells"] = encode_cells(self.cells)
        if doc["axes"] is None:  # made in memory over the axes registered now: stored with their names
            doc["axes"] = {k: list(v) for k, v in live_axes().items()}
        return copy.deepcopy(doc)

    @classmethod
    def from_doc(cls, doc: dict) -> "Entry":
        names = {f.name for f in dataclasses.fields(cls)}
        fields = {k: v for k, v in doc.items() if k in names}
        fields["cells"] = decode_cells(fields["cells"])
        if fields.get("axes") is None:  # stored before entries recorded their axes: the paper's
            fields["axes"] = copy.deepcopy(PAPER_AXES)
        return cls(**fields)


def live_axes() -> dict[str, tuple[str, ...]]:
    """The cells' axes as registered now: tasks (:func:`hypergvl.tasks.task_codes`), text representations, visual
    representations plus ``none`` (text only), scales and sources."""
    # the task registry and the renderers (networkx, 0.4 s): loaded when first asked, not by every store client
    from hypergvl.tasks import task_codes
    from hypergvl.text import TEXT_REPS
    from hypergvl.vqa import TEXT_ONLY, VISUAL_REPS

    return {"task": task_codes(), "text_rep": tuple(TEXT_REPS), "visual_rep": (*VISUAL_REPS, TEXT_ONLY),
            "scale": SCALES, "source": SOURCES}


def encode_cells(cells) -> dict:
    a = np.ascontiguousarray(np.asarray(cells, dtype="<i4"))
    return {"dtype": "<i4", "shape": list(a.shape), "zlib_b64": base64.b64encode(zlib.compress(a.tobytes(), 6)).decode()}


def decode_cells(doc) -> np.ndarray:
    if isinstance(doc, dict):
        return np.frombuffer(zlib.decompress(base64.b64decode(doc["zlib_b64"])), dtype="<i4").reshape(doc["shape"])
    return np.asarray(doc, dtype=np.int64)  # a plain list of rows


@dataclass
class Request:
    """An evaluation the worker runs server-side: ``model`` is a model spec (``hf:<hub id>``)."""

    model: str
    revision: str
    testset: str
    track: str
    model_type: str
    num_parameters: float | None
    link: str
    submitter: str = ""
    status: str = PENDING
    claimed_by: str | None = None
    claim_expires: float | None = None
    attempts: int = 0
    error: str | None = None
    entry_id: str | None = None
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    id: str = field(default_factory=new_id)

    def to_doc(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_doc(cls, doc: dict) -> "Request":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in doc.items() if k in names})


def entry_key(e) -> tuple:
    """What makes two submissions duplicates (Open LLM Leaderboard keys on model sha and precision; we on the
    revision, the test set and the track)."""
    return (e.model, e.revision, e.testset, e.track)


class Store(ABC):
    """What the app and the worker need from storage. Every method is safe to call from several threads and
    processes; writes are atomic."""

    @abstractmethod
    def add_entry(self, entry: Entry) -> None:
        """Store a re-scored submission; :class:`DuplicateError` when its key or upload is already stored."""

    @abstractmethod
    def entries(self) -> list[Entry]:
        """Every stored entry, oldest first."""

    @abstractmethod
    def update_entry(self, entry: Entry) -> None:
        """Replace the stored entry with ``entry``'s id (a re-grade: new scores, cells and scorer version; its key
        and upload unchanged); KeyError when no entry has that id."""

    @abstractmethod
    def version(self) -> str:
        """Changes whenever an entry or request is written: a reader's cache key."""

    def entries_version(self) -> str:
        """Changes whenever an entry is written (not when only requests change): the leaderboard views' cache key,
        so a request, a claim or a heartbeat does not make every view and figure be computed again."""
        return self.version()

    @abstractmethod
    def add_request(self, request: Request) -> None:
        """Queue a request as PENDING; :class:`DuplicateError` when an equal one is pending, running or finished,
        or its entry exists."""

    @abstractmethod
    def requests(self) -> list[Request]:
        """Every request (expired claims already shown as PENDING), oldest first."""

    @abstractmethod
    def claim(self, worker: str, ttl_s: float) -> Request | None:
        """Atomically move the oldest PENDING request (or one whose claim expired) to RUNNING for ``worker``; None
        when there is nothing to do. Two workers never both win one request."""

    @abstractmethod
    def renew(self, request_id: str, worker: str, ttl_s: float) -> bool:
        """Extend ``worker``'s claim; False when the claim is no longer its own."""

    @abstractmethod
    def finish(self, request_id: str, worker: str, entry: Entry) -> bool:
        """Store the request's entry and mark it FINISHED, in one atomic step; False (nothing written) when another
        worker holds the claim now. A result that arrives after its claim expired is still accepted if nobody
        re-claimed the request."""

    @abstractmethod
    def fail(self, request_id: str, worker: str, error: str) -> bool:
        """Mark the request FAILED with ``error`` shown to users; False when the claim is not ``worker``'s."""

    def recent_submissions(self, submitter: str, since: float) -> int:
        """Entries and requests by ``submitter`` created at or after ``since`` (the rate limit's count)."""
        return sum(1 for x in [*self.entries(), *self.requests()] if x.submitter == submitter and x.created >= since)


def expired(req: Request, now: float) -> bool:
    return req.status == RUNNING and req.claim_expires is not None and req.claim_expires < now


def may_act(r: Request | None, worker: str, *, late_ok: bool) -> bool:
    """Whether ``worker`` may renew (``late_ok=False``), finish or fail (``late_ok=True``) request ``r``: it holds the
    claim, or its claim expired and nobody took the request over (the result still counts)."""
    if r is None:
        return False
    if r.status == RUNNING and r.claimed_by == worker:
        return True
    return late_ok and shown(r).status == PENDING and r.claimed_by in (worker, None)


def shown(req: Request, now: float | None = None) -> Request:
    """The request as readers see it: an expired claim is PENDING again."""
    if expired(req, time.time() if now is None else now):
        return dataclasses.replace(req, status=PENDING, claimed_by=None, claim_expires=None)
    return req


# ================================================================================================ SQLite
_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id TEXT PRIMARY KEY, model TEXT NOT NULL, revision TEXT NOT NULL, testset TEXT NOT NULL, track TEXT NOT NULL,
    upload_sha256 TEXT, submitter TEXT NOT NULL, created REAL NOT NULL, doc TEXT NOT NULL,
    UNIQUE (model, revision, testset, track));
CREATE UNIQUE INDEX IF NOT EXISTS entries_upload ON entries (upload_sha256) WHERE upload_sha256 IS NOT NULL;
CREATE TABLE IF NOT EXISTS requests (
    id TEXT PRIMARY KEY, model TEXT NOT NULL, revision TEXT NOT NULL, testset TEXT NOT NULL, track TEXT NOT NULL,
    status TEXT NOT NULL, submitter TEXT NOT NULL, created REAL NOT NULL, claimed_by TEXT, claim_expires REAL,
    doc TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS requests_live ON requests (model, revision, testset, track)
    WHERE status IN ('PENDING', 'RUNNING', 'FINISHED');
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('version', 0);
INSERT OR IGNORE INTO meta VALUES ('entries_version', 0);
"""


class ThreadConnections:
    """One SQLite connection per thread to one database file (WAL, synchronous=FULL, autocommit: callers open their
    own ``BEGIN IMMEDIATE`` transactions); calling it gives this thread's connection. ``schema`` runs once."""

    def __init__(self, path: str | Path, schema: str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self().executescript(schema)

    def __call__(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA busy_timeout=60000")
            self._local.db = db
        return db


class SQLiteStore(Store):
    """The embedded store: one SQLite database (WAL, synchronous=FULL), one connection per thread, every write in
    one ``BEGIN IMMEDIATE`` transaction (so claims are serialised between processes too)."""

    def __init__(self, path: str | Path):
        self._db = ThreadConnections(path, _SCHEMA)
        self.path = self._db.path

    class _Tx:
        def __init__(self, db: sqlite3.Connection, entries: bool):
            self.db, self.entries = db, entries

        def __enter__(self) -> sqlite3.Connection:
            self.db.execute("BEGIN IMMEDIATE")
            return self.db

        def __exit__(self, kind, exc, tb):
            if kind is None:
                self.db.execute("UPDATE meta SET value = value + 1 WHERE key = 'version'")
                if self.entries:
                    self.db.execute("UPDATE meta SET value = value + 1 WHERE key = 'entries_version'")
                self.db.execute("COMMIT")
            else:
                self.db.execute("ROLLBACK")
            return False

    def _write(self, *, entries: bool = False) -> "SQLiteStore._Tx":
        """A write transaction; ``entries``: it changes the entries (their version moves too)."""
        return self._Tx(self._db(), entries)

    # ------------------------------------------------------------------------------------------ entries
    def _insert_entry(self, db: sqlite3.Connection, e: Entry) -> None:
        try:
            db.execute("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (e.id, e.model, e.revision, e.testset, e.track, e.upload_sha256, e.submitter, e.created,
                        json.dumps(e.to_doc())))
        except sqlite3.IntegrityError as exc:
            raise DuplicateError(duplicate_message(e, str(exc))) from None

    def add_entry(self, entry: Entry) -> None:
        with self._write(entries=True) as db:
            self._insert_entry(db, entry)

    def update_entry(self, entry: Entry) -> None:
        with self._write(entries=True) as db:
            old = db.execute("SELECT model, revision, testset, track, upload_sha256 FROM entries WHERE id = ?",
                             (entry.id,)).fetchone()
            if old is None:
                raise KeyError(f"no entry {entry.id!r}")
            if tuple(old) != (*entry_key(entry), entry.upload_sha256):
                raise ValueError(f"entry {entry.id!r}: a re-grade keeps its model, revision, test set, track and upload")
            db.execute("UPDATE entries SET doc = ? WHERE id = ?", (json.dumps(entry.to_doc()), entry.id))

    def entries(self) -> list[Entry]:
        rows = self._db().execute("SELECT doc FROM entries ORDER BY created, id").fetchall()
        return [Entry.from_doc(json.loads(d)) for (d,) in rows]

    def version(self) -> str:
        (v,) = self._db().execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        return str(v)

    def entries_version(self) -> str:
        (v,) = self._db().execute("SELECT value FROM meta WHERE key = 'entries_version'").fetchone()
        return str(v)

    # ------------------------------------------------------------------------------------------ requests
    def _put(self, db: sqlite3.Connection, r: Request) -> None:
        r.updated = time.time()
        db.execute("UPDATE requests SET status = ?, claimed_by = ?, claim_expires = ?, doc = ? WHERE id = ?",
                   (r.status, r.claimed_by, r.claim_expires, json.dumps(r.to_doc()), r.id))

    def _get(self, db: sqlite3.Connection, request_id: str) -> Request | None:
        row = db.execute("SELECT doc FROM requests WHERE id = ?", (request_id,)).fetchone()
        return Request.from_doc(json.loads(row[0])) if row else None

    def add_request(self, request: Request) -> None:
        with self._write() as db:
            if db.execute("SELECT 1 FROM entries WHERE model = ? AND revision = ? AND testset = ? AND track = ?",
                          entry_key(request)).fetchone():
                raise DuplicateError(duplicate_message(request, "entry exists"))
            try:
                db.execute("INSERT INTO requests VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (request.id, request.model, request.revision, request.testset, request.track,
                            request.status, request.submitter, request.created, None, None,
                            json.dumps(request.to_doc())))
            except sqlite3.IntegrityError as exc:
                raise DuplicateError(duplicate_message(request, str(exc))) from None

    def requests(self) -> list[Request]:
        now = time.time()
        rows = self._db().execute("SELECT doc FROM requests ORDER BY created, id").fetchall()
        return [shown(Request.from_doc(json.loads(d)), now) for (d,) in rows]

    def claim(self, worker: str, ttl_s: float) -> Request | None:
        now = time.time()
        with self._write() as db:
            row = db.execute("SELECT doc FROM requests WHERE status = ? OR (status = ? AND claim_expires < ?) "
                             "ORDER BY created, id LIMIT 1", (PENDING, RUNNING, now)).fetchone()
            if row is None:
                return None
            r = Request.from_doc(json.loads(row[0]))
            r.status, r.claimed_by, r.claim_expires, r.attempts = RUNNING, worker, now + ttl_s, r.attempts + 1
            self._put(db, r)
            return r

    def _mine(self, db, request_id: str, worker: str, *, late_ok: bool) -> Request | None:
        r = self._get(db, request_id)
        return r if may_act(r, worker, late_ok=late_ok) else None

    def renew(self, request_id: str, worker: str, ttl_s: float) -> bool:
        with self._write() as db:
            r = self._mine(db, request_id, worker, late_ok=False)
            if r is None:
                return False
            r.claim_expires = time.time() + ttl_s
            self._put(db, r)
            return True

    def finish(self, request_id: str, worker: str, entry: Entry) -> bool:
        with self._write(entries=True) as db:
            r = self._mine(db, request_id, worker, late_ok=True)
            if r is None:
                return False
            self._insert_entry(db, entry)
            r.status, r.entry_id, r.claimed_by, r.claim_expires, r.error = FINISHED, entry.id, None, None, None
            self._put(db, r)
            return True

    def fail(self, request_id: str, worker: str, error: str) -> bool:
        with self._write() as db:
            r = self._mine(db, request_id, worker, late_ok=True)
            if r is None:
                return False
            r.status, r.error, r.claimed_by, r.claim_expires = FAILED, error[:2000], None, None
            self._put(db, r)
            return True

    def recent_submissions(self, submitter: str, since: float) -> int:
        db = self._db()
        (a,) = db.execute("SELECT COUNT(*) FROM entries WHERE submitter = ? AND created >= ?", (submitter, since)).fetchone()
        (b,) = db.execute("SELECT COUNT(*) FROM requests WHERE submitter = ? AND created >= ?", (submitter, since)).fetchone()
        return a + b


def duplicate_message(x, detail: str) -> str:
    if "upload_sha256" in detail:
        return "this exact file was already submitted (same sha256); it is not stored twice"
    return (f"{x.model} at revision {x.revision} on test set {x.testset} ({x.track}) is already on the leaderboard "
            "or in the queue")
