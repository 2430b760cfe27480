"""What the Space does, without any UI: accept uploads and requests, and compute the leaderboard views.

:class:`Service` joins a :class:`space.store.Store`, the :class:`space.testsets.TestSets` and the limits of
:class:`SpaceConfig`. The Gradio app (:mod:`space.app`) and the worker (:mod:`space.worker`) call it; tests and
``benchmarks/space.py`` drive it directly. Submitted scores are never trusted (:mod:`space.scoring`)."""
from __future__ import annotations

import math
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .scoring import (POLICIES, TRACKS, Limits, SubmissionError, check_results_json, dense, read_upload, score,
                      summarise_many)
from .store import DuplicateError, Entry, Request, SQLiteStore, Store
from .testsets import HIDDEN, PUBLIC, TestSets

MODEL_TYPES = ("open", "closed")
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_URL = re.compile(r"^https?://[A-Za-z0-9.-]+(:\d+)?(/[A-Za-z0-9._~%/+@-]*)?$")
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")


@dataclass(frozen=True)
class SpaceConfig:
    """Everything the Space is configured with (environment variables in :meth:`from_env`)."""

    data_dir: Path = Path(__file__).resolve().parent / ".data"
    public_seed: int = 0
    per_task: int = 4
    hidden_seed: int | None = None
    limits: Limits = Limits()
    rate_limit: int = 5                 # submissions and requests per submitter per window
    rate_window_s: float = 24 * 3600.0
    request_prefixes: tuple[str, ...] = ("hf", "openai", "baseline")
    claim_ttl_s: float = 600.0
    study_dirs: tuple[Path, ...] = ()
    seed_baselines: bool = True

    @classmethod
    def from_env(cls, env=os.environ) -> "SpaceConfig":
        here = Path(__file__).resolve().parent
        studies = env.get("HYPERGVL_SPACE_STUDIES")
        deployed = bool(env.get("SPACE_ID"))
        # a Space with persistent storage mounts it at /data; elsewhere the data stays beside the app
        default_data = Path("/data/hypergvl") if deployed and Path("/data").is_dir() else here / ".data"
        return cls(
            data_dir=Path(env.get("HYPERGVL_SPACE_DATA", default_data)),
            public_seed=int(env.get("HYPERGVL_PUBLIC_SEED", 0)), per_task=int(env.get("HYPERGVL_PER_TASK", 4)),
            hidden_seed=int(env["HYPERGVL_HIDDEN_SEED"]) if env.get("HYPERGVL_HIDDEN_SEED") else None,
            rate_limit=int(env.get("HYPERGVL_RATE_LIMIT", 5)),
            rate_window_s=float(env.get("HYPERGVL_RATE_WINDOW_S", 24 * 3600)),
            request_prefixes=("hf", "openai") if deployed else ("hf", "openai", "baseline"),
            study_dirs=tuple(Path(p) for p in studies.split(os.pathsep)) if studies else (here / "seed_studies",),
        )


@dataclass
class Submission:
    """The metadata a user gives with an upload or a request (validated by :meth:`check`)."""

    model: str
    testset: str
    track: str = "vision"
    routing: str | None = None
    model_type: str = "open"
    num_parameters: float | None = None
    link: str = ""
    revision: str = "main"

    def check(self) -> None:
        name = (self.model or "").strip()
        if not name:
            raise SubmissionError("the model name is empty")
        if len(name) > 120 or any(ord(c) < 32 for c in name):
            raise SubmissionError("the model name must be at most 120 printable characters")
        self.model = name
        if self.model_type not in MODEL_TYPES:
            raise SubmissionError(f"model type must be one of {', '.join(MODEL_TYPES)}")
        if self.track not in TRACKS:
            raise SubmissionError(f"track must be one of {', '.join(TRACKS)}")
        if self.track == "routed" and self.routing not in POLICIES:
            raise SubmissionError(f"a routed submission names its routing policy: one of {', '.join(POLICIES)}")
        self.link = (self.link or "").strip()
        if self.link and not (_HUB_ID.match(self.link) or _URL.match(self.link)):
            raise SubmissionError("the link must be a Hub id (org/name) or an http(s) URL")
        self.revision = (self.revision or "main").strip()
        if not _REVISION.match(self.revision):
            raise SubmissionError("the revision must be a branch, tag or commit (letters, digits, . _ - /)")
        if self.num_parameters is not None:
            p = float(self.num_parameters)
            if not math.isfinite(p) or p < 0 or p > 1e5:
                raise SubmissionError("parameters (in billions) must be a number between 0 and 100000")
            self.num_parameters = p

    @property
    def full_track(self) -> str:
        return f"routed:{self.routing}" if self.track == "routed" else self.track


class RateLimited(SubmissionError):
    pass


class Service:
    def __init__(self, config: SpaceConfig, store: Store | None = None, sets: TestSets | None = None):
        self.config = config
        self.store = store or SQLiteStore(config.data_dir / "leaderboard.sqlite")
        self.sets = sets or TestSets(config.data_dir, public_seed=config.public_seed, per_task=config.per_task,
                                     hidden_seed=config.hidden_seed)
        self._cache: dict = {}
        self._cache_lock = threading.Lock()

    # ------------------------------------------------------------------------------------------ submissions
    def _rate_check(self, submitter: str) -> None:
        since = time.time() - self.config.rate_window_s
        if self.store.recent_submissions(submitter, since) >= self.config.rate_limit:
            hours = self.config.rate_window_s / 3600
            raise RateLimited(f"rate limit: at most {self.config.rate_limit} submissions per {hours:g} h; "
                              "try again later")

    def submit_upload(self, path: str | Path, sub: Submission, submitter: str) -> Entry:
        """Validate, re-score and store an upload as one FINISHED entry; nothing is stored when it fails."""
        sub.check()
        testset = self._testset(sub.testset)
        self._rate_check(submitter)
        records, results, sha = read_upload(path, self.config.limits)
        check_results_json(results, testset.served_sha256, sub.track)
        scored = score(records, self.sets.index(testset.name), sub.track)
        self._keep_upload(path, sha)
        entry = Entry(model=sub.model, revision=sub.revision, testset=testset.name, track=sub.full_track,
                      model_type=sub.model_type, num_parameters=sub.num_parameters, link=sub.link,
                      scores=scored.scores, cells=scored.cells, num_samples=scored.num_samples,
                      dataset_sha256=testset.served_sha256, origin="upload", submitter=submitter, upload_sha256=sha)
        try:
            self.store.add_entry(entry)
        except DuplicateError as exc:
            raise SubmissionError(str(exc)) from None
        return entry

    def _keep_upload(self, path: str | Path, sha: str) -> None:
        """The raw upload, content-addressed (so a crash before the store's commit leaves only a harmless file)."""
        folder = self.config.data_dir / "uploads"
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / sha
        if not target.exists():
            tmp = folder / f".{sha}.tmp-{os.getpid()}-{threading.get_ident()}"
            tmp.write_bytes(Path(path).read_bytes())
            os.replace(tmp, target)

    def request(self, sub: Submission, submitter: str) -> Request:
        """Queue a PENDING evaluation of a model the worker can run (``hf:<hub id>``, ``openai:<name>``)."""
        spec = (sub.model or "").strip()
        if ":" not in spec and _HUB_ID.match(spec):
            spec = f"hf:{spec}"
        prefix, _, rest = spec.partition(":")
        if prefix not in self.config.request_prefixes or not rest:
            raise SubmissionError(f"a request names a Hub model id (org/name) or {', '.join(p + ':NAME' for p in self.config.request_prefixes)}")
        if prefix == "hf" and not (_HUB_ID.match(rest) or rest.startswith("/")):
            raise SubmissionError(f"{rest!r} is not a Hub model id (org/name)")
        if prefix == "hf" and rest.startswith("/") and "baseline" not in self.config.request_prefixes:
            raise SubmissionError("local model paths are not accepted")
        sub.model = spec
        sub.check()
        if sub.track == "routed":
            raise SubmissionError("routed runs are submitted as uploads (the router runs where the model does)")
        testset = self._testset(sub.testset)
        self._rate_check(submitter)
        req = Request(model=spec, revision=sub.revision, testset=testset.name, track=sub.full_track,
                      model_type=sub.model_type, num_parameters=sub.num_parameters, link=sub.link or rest,
                      submitter=submitter)
        try:
            self.store.add_request(req)
        except DuplicateError as exc:
            raise SubmissionError(str(exc)) from None
        return req

    def _testset(self, name: str):
        try:
            return self.sets.get(name)
        except KeyError:
            raise SubmissionError(f"unknown test set {name!r}") from None

    # ------------------------------------------------------------------------------------------ views
    def entries(self) -> list[Entry]:
        """The stored entries, cached until the store's version changes."""
        version = self.store.version()
        with self._cache_lock:
            if self._cache.get("version") != version:
                self._cache = {"version": version, "entries": self.store.entries(), "views": {}}
            return self._cache["entries"]

    def view(self, key: tuple, compute):
        """``compute(entries)``, cached per store version and ``key``."""
        entries = self.entries()
        with self._cache_lock:
            views = self._cache["views"] if self._cache.get("entries") is entries else {}
        if key not in views:
            views[key] = compute(entries)
        return views[key]

    def leaderboard_rows(self, testset: str, *, tracks=("vision", "text-only"), model_types=None, scale=None,
                         source=None, text_rep=None, visual_rep=None) -> list[dict]:
        """Table 3 rows (one per entry) for the filters: per-task accuracy, Avg.U, Avg.R over the matching cells."""
        key = ("lb", testset, tuple(tracks), tuple(model_types or ()), scale, source, text_rep, visual_rep)

        def chosen(entries):
            picked = [e for e in entries if e.testset == testset and e.track in tracks
                      and (not model_types or e.model_type in model_types)]
            return picked, (np.stack([dense(e.cells) for e in picked]) if picked else None)

        def compute(entries):
            picked, stack = self.view(key[:4], chosen)  # the dense counts, shared by every filter of this view
            if not picked:
                return []
            sums = summarise_many(None, stack=stack, scale=scale, source=source, text_rep=text_rep,
                                  visual_rep=visual_rep)
            rows = [{"entry": e, **s} for e, s in zip(picked, sums) if s is not None]
            rows.sort(key=lambda r: -(r["accuracy"]))
            return rows

        return self.view(key, compute)


def current_sets(service: Service) -> dict[str, object]:
    """The current public and hidden sets, building them on first use."""
    service.sets.ensure()
    return {PUBLIC: service.sets.current(PUBLIC), HIDDEN: service.sets.current(HIDDEN)}


__all__ = ["SpaceConfig", "Submission", "Service", "RateLimited", "current_sets", "MODEL_TYPES"]
