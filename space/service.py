"""What the Space does, without any UI: accept uploads and requests, and compute the leaderboard views.

:class:`Service` joins a :class:`hypergvl.space.store.Store`, the :class:`hypergvl.space.testsets.TestSets` and the limits of
:class:`~hypergvl.space.config.SpaceConfig`. The Gradio app (:mod:`hypergvl.space.app`) and the worker (:mod:`hypergvl.space.worker`) call it; tests and
``benchmarks/space.py`` drive it directly. Submitted scores are never trusted (:mod:`hypergvl.space.scoring`)."""
from __future__ import annotations

import hashlib
import math
import re
import shutil
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hypergvl.atomic import atomic_path
from hypergvl.paper import PAPER_TASKS

from .config import SpaceConfig
from .counters import Counters
from .isolation import run_bounded
from .scoring import (TRACKS, SubmissionError, axes, dense, grade_upload, policies, scorer_version,
                      scoring_provenance, summarise_many)
from .store import DuplicateError, Entry, Request, SQLiteStore, Store, duplicate_message, entry_key
from .testsets import HIDDEN, PUBLIC, TestSets

MODEL_TYPES = ("open", "closed")
MAX_VIEWS = 256  # leaderboard views cached per store version
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet reads a cell starting so as a formula
HIDDEN_BY_REQUEST = ("the hidden set is scored only from runs this server makes, and its questions are never served: "
                     "request an evaluation of a Hub model instead (Submit tab, 'Request evaluation', or `hypergvl "
                     "submit --request hf:ORG/NAME --testset hidden`); uploaded responses are scored on the public set")
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_URL = re.compile(r"^https?://[A-Za-z0-9.-]+(:\d+)?(/[A-Za-z0-9._~%/+@-]*)?$")
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")


# characters that render as nothing or reorder the text around them: a name holding one can look like another's
_INVISIBLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def _visible_text(what: str, text: str) -> None:
    for i, c in enumerate(text, 1):
        if unicodedata.category(c) in _INVISIBLE or (c.isspace() and c != " "):
            raise SubmissionError(f"{what} holds an invisible or direction-changing character (U+{ord(c):04X} at "
                                  f"character {i}); names are shown as typed, so they must look like what they are")


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
        name = unicodedata.normalize("NFC", name)
        _visible_text("the model name", name)
        if name.startswith(_FORMULA_START):
            raise SubmissionError("the model name must not start with = + - or @ (a spreadsheet would read the "
                                  "copied table's cell as a formula)")
        self.model = name
        if self.model_type not in MODEL_TYPES:
            raise SubmissionError(f"model type must be one of {', '.join(MODEL_TYPES)}")
        if self.track not in TRACKS:
            raise SubmissionError(f"track must be one of {', '.join(TRACKS)}")
        if self.track == "routed" and self.routing not in policies():
            raise SubmissionError(f"a routed submission names its routing policy: one of {', '.join(policies())}")
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


class AlreadySubmitted(SubmissionError):
    """A file or a (model, revision, test set, track) already on the leaderboard: recognised before grading, and
    neither a rejection nor a submission is charged for it."""


LOCAL_REQUESTS = ("local model paths and arguments that name server files or data (dataset=..., any NAME=VALUE) "
                  "are refused; the operator enables them for their own runs with HYPERGVL_LOCAL_REQUESTS=1")
_ABS_PATH = re.compile(r"(?<![\w.~])/(?:[^\s:'\"/]+/)+([^\s:'\"/]*)")


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes, read in blocks (the digest an upload is known by)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def redact_paths(text: str) -> str:
    """``text`` with every absolute path replaced by ``<path>/`` and its last part: an error shown to users names
    no folder of the server."""
    return _ABS_PATH.sub(lambda m: "<path>/" + m.group(1), text)


def name_key(name: str) -> str:
    """What two model names must differ in to be told apart on a page (case, width and compatibility forms not)."""
    return unicodedata.normalize("NFKC", name).casefold().strip()


class Service:
    def __init__(self, config: SpaceConfig, store: Store | None = None, sets: TestSets | None = None):
        self.config = config
        self.store = store or SQLiteStore(config.data_dir / "leaderboard.sqlite")
        self.sets = sets or TestSets(config.data_dir, public_seed=config.public_seed, per_task=config.per_task,
                                     hidden_seed=config.hidden_seed)
        self._cache: dict = {}  # the store's entries of its current version
        self._cache_lock = threading.Lock()
        self._computing: dict = {}  # (views, key) -> the lock of the one computing it
        self._views: tuple = (None, None, {})  # (when, entries, views): the entry list the views are computed from
        self.counters = Counters(config.data_dir / "private" / "counters.sqlite", config.rate_window_s)
        self._grading = threading.Lock()  # one grading child at a time, whatever the app's concurrency

    # ------------------------------------------------------------------------------------------ submissions
    def _rate_check(self, submitter: str) -> None:
        since = time.time() - self.config.rate_window_s
        if self.store.recent_submissions(submitter, since) >= self.config.rate_limit:
            hours = self.config.rate_window_s / 3600
            raise RateLimited(f"rate limit: at most {self.config.rate_limit} submissions per {hours:g} h; "
                              "try again later")

    def _rejections(self, submitter: str, *, add: bool = False) -> int:
        """``submitter``'s rejected uploads and requests in the rate window (kept on disk: a restart keeps them)."""
        return self.counters.rejections(submitter, add=add)

    def _counted(self, submitter: str, work):
        """``work()``, refused outright once ``submitter`` has ``reject_limit`` rejections in the window; a
        rejection (anything but the rate limit itself) counts toward that limit."""
        if self._rejections(submitter) >= self.config.reject_limit:
            hours = self.config.rate_window_s / 3600
            raise RateLimited(f"rate limit: at most {self.config.reject_limit} rejected uploads or requests per "
                              f"{hours:g} h; try again later")
        try:
            return work()
        except (RateLimited, AlreadySubmitted):
            raise
        except Exception:
            self._rejections(submitter, add=True)
            raise

    def submit_upload(self, path: str | Path, sub: Submission, submitter: str) -> Entry:
        """Validate, re-score and store an upload as one FINISHED entry; nothing is stored when it fails."""
        return self._counted(submitter, lambda: self._submit_upload(path, sub, submitter))

    def _submit_upload(self, path: str | Path, sub: Submission, submitter: str) -> Entry:
        sub.check()
        testset = self._testset(sub.testset)
        if testset.kind != PUBLIC:
            # issue 43: responses a submitter uploads can be anything a program writes (solved, probed, padded),
            # so they score only on the public track; a hidden score comes from a run this server makes
            raise SubmissionError(HIDDEN_BY_REQUEST)
        digest = file_sha256(path)
        self._not_stored(digest, (sub.model, sub.revision, testset.name, sub.full_track))
        self._check_name(sub.model, submitter)
        self._rate_check(submitter)
        limits = self.config.limits
        with self._grading:
            # again: an identical upload may have been graded and stored while this one waited
            self._not_stored(digest, (sub.model, sub.revision, testset.name, sub.full_track))
            scored, sha, submitted = run_bounded(
                grade_upload, (str(path), limits, self.sets.index(testset.name), sub.track, testset.served_sha256,
                               self.remedy(testset)),
                seconds=limits.max_grading_s, memory_bytes=limits.max_grading_bytes, start="host")
        self.keep_raw(path, sha)
        entry = Entry(model=sub.model, revision=sub.revision, testset=testset.name, track=sub.full_track,
                      model_type=sub.model_type, num_parameters=sub.num_parameters, link=sub.link,
                      scores=scored.scores, cells=scored.cells, axes=scored.axes, num_samples=scored.num_samples,
                      dataset_sha256=testset.served_sha256, origin="upload", submitter=submitter, upload_sha256=sha,
                      raw_sha256=sha, scorer_version=scorer_version(), provenance=scoring_provenance(),
                      submitted_provenance=submitted)
        try:
            self.store.add_entry(entry)
        except DuplicateError as exc:
            raise SubmissionError(str(exc)) from None
        return entry

    def _not_stored(self, digest: str, key: tuple) -> None:
        """:class:`AlreadySubmitted` when a stored entry has this upload's digest or this key (before any grading)."""
        for e in self.entries():
            if e.upload_sha256 == digest:
                raise AlreadySubmitted("this exact file was already submitted (same sha256); it is not graded or "
                                       "stored twice, and nothing was charged")
            if entry_key(e) == key:
                raise AlreadySubmitted(f"{key[0]} at revision {key[1]} on test set {key[2]} ({key[3]}) is already on "
                                       "the leaderboard; nothing was charged")

    def _check_name(self, name: str, submitter: str, same: tuple | None = None) -> None:
        """Refuse a model name that another submitter's row, a built-in row or another's queued request shows
        (compared by :func:`name_key`), so every row, dropdown item and legend line names one submitter's model.
        A row or live request with the key ``same`` itself is refused as a duplicate (the store's message)."""
        if same is not None:
            for x in [*self.entries(), *(r for r in self.store.requests() if r.status in ("PENDING", "RUNNING"))]:
                if entry_key(x) == same:
                    raise SubmissionError(duplicate_message(x, ""))
        key = name_key(name)
        owners = {e.submitter for e in self.entries() if name_key(e.model) == key}
        owners |= {r.submitter for r in self.store.requests() if name_key(r.model) == key}
        owners.discard(submitter)
        if owners:
            what = "a built-in row" if "space" in owners else "another submitter's model"
            raise SubmissionError(f"the name {name!r} is {what} on this leaderboard; choose another name")

    def request_spec(self, model: str) -> str:
        """The worker's model spec of a request for ``model`` (``org/name`` is ``hf:org/name``), or the
        :class:`SubmissionError` refusing it: a prefix this Space does not run, a malformed Hub id, and, unless the
        operator set ``HYPERGVL_LOCAL_REQUESTS=1``, anything naming a server file (``hf:/path``, ``NAME=VALUE``
        arguments such as ``dataset=``). The worker checks it again before it runs a request."""
        spec = (model or "").strip()
        if ":" not in spec and _HUB_ID.match(spec):
            spec = f"hf:{spec}"
        prefix, _, rest = spec.partition(":")
        if prefix not in self.config.request_prefixes or not rest:
            raise SubmissionError(f"a request names a Hub model id (org/name) or "
                                  f"{', '.join(p + ':NAME' for p in self.config.request_prefixes)}")
        local = self.config.local_requests
        if prefix == "hf":
            if _HUB_ID.match(rest) or (local and rest.startswith("/")):
                return spec
            if rest.startswith(("/", "~")):
                raise SubmissionError(LOCAL_REQUESTS)
            raise SubmissionError(f"{rest[:100]!r} is not a Hub model id (org/name)")
        if not local and ("=" in rest or rest.startswith(("/", ".", "~")) or "/." in rest or "\\" in rest):
            raise SubmissionError(LOCAL_REQUESTS)
        return spec

    def _anonymous_budget(self, submitter: str) -> None:
        """Anonymous requests (an address as the submitter) share one budget per window, so a new address does not
        bring a fresh quota: each request costs the operator accelerator hours."""
        if not submitter.startswith("ip:"):
            return
        since = time.time() - self.config.rate_window_s
        used = sum(1 for r in self.store.requests() if r.submitter.startswith("ip:") and r.created >= since)
        if used >= self.config.anonymous_requests:
            hours = self.config.rate_window_s / 3600
            raise RateLimited(f"rate limit: anonymous requests share {self.config.anonymous_requests} per {hours:g} "
                              "h on this Space, all used; log in or try again later")

    def remedy(self, testset) -> str:
        """The commands that answer the public set, for a refusal of a run answered on another one (an upload is
        refused on a hidden set before this is asked)."""
        tasks = list(getattr(testset, "tasks", None) or PAPER_TASKS)
        flag = "" if tasks == list(PAPER_TASKS) else f" --tasks {' '.join(tasks)}"  # beyond the build default
        return (f"rebuild this set with `hypergvl build --per-task {testset.per_task} --seed {self.sets.public_seed}"
                f"{flag} --out SET` (or download it: Submit tab, 'Download: Public set (with answers)'), then hypergvl "
                "evaluate --dataset SET --model ... --out RUN")

    def raw_path(self, sha: str) -> Path:
        return self.config.data_dir / "uploads" / sha

    def keep_raw(self, path: str | Path, sha: str | None = None) -> str:
        """Keep raw records (an upload, a worker's samples.jsonl) content-addressed under ``<data>/uploads``, so an
        entry can be re-graded from them; returns their sha256. A crash before the store's commit leaves only a
        harmless file."""
        if sha is None:
            sha = file_sha256(path)
        target = self.raw_path(sha)
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            with atomic_path(target) as tmp:
                shutil.copyfile(path, tmp)
        return sha

    def request(self, sub: Submission, submitter: str) -> Request:
        """Queue a PENDING evaluation of a model the worker can run (``hf:<hub id>``, ``openai:<name>``)."""
        return self._counted(submitter, lambda: self._request(sub, submitter))

    def _request(self, sub: Submission, submitter: str) -> Request:
        spec = self.request_spec(sub.model)
        prefix, _, rest = spec.partition(":")
        api = self.config.api_models
        if prefix == "openai" and api is not None and rest not in api:
            raise SubmissionError(f"this Space runs these API models: {', '.join(api)}" if api else
                                  "this Space runs no API models (openai:NAME); request a Hub model id")
        sub.model = spec
        sub.check()
        if sub.track == "routed":
            raise SubmissionError("routed runs are submitted as uploads (the router runs where the model does)")
        testset = self._testset(sub.testset)
        self._check_name(spec, submitter, (spec, sub.revision, testset.name, sub.full_track))
        self._rate_check(submitter)
        self._anonymous_budget(submitter)
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
        """The stored entries, cached until the store's entries change (:meth:`Store.entries_version`)."""
        version = self.store.entries_version()
        with self._cache_lock:
            if self._cache.get("version") != version:
                self._cache = {"version": version, "entries": self.store.entries()}
            return self._cache["entries"]

    def view(self, key: tuple, compute):
        """``compute(entries)``, cached per entry list and ``key``. The entry list is the store's, looked at again
        at most every ``config.view_refresh_s`` seconds (0: on every call), so that a burst of submissions costs
        one recomputation of each view shown, not one per submission."""
        now = time.monotonic()
        with self._cache_lock:
            at, entries, views = self._views
        if at is None or now - at >= self.config.view_refresh_s:
            fresh = self.entries()
            with self._cache_lock:  # the same list keeps its views; another starts with none
                self._views = (now, fresh, self._views[2] if self._views[1] is fresh else {})
                at, entries, views = self._views
        with self._cache_lock:
            if key in views:
                return views[key]
            # one computation per view: visitors asking for it meanwhile wait for that one (figures cost seconds,
            # and eight page loads drawing the same three figures at once cost eight times the CPU)
            lock = self._computing.setdefault((id(views), key), threading.Lock())
        with lock:
            with self._cache_lock:
                if key in views:
                    return views[key]
            try:
                value = compute(entries)
            except BaseException:
                with self._cache_lock:
                    self._computing.pop((id(views), key), None)
                raise
            with self._cache_lock:
                while len(views) >= MAX_VIEWS:  # the oldest view goes first: a flood of keys costs bounded memory
                    views.pop(next(iter(views)))
                views[key] = value
                self._computing.pop((id(views), key), None)
            return value

    def leaderboard_rows(self, testset: str, *, tracks=("vision", "text-only"), model_types=None, scale=None,
                         source=None, text_rep=None, visual_rep=None) -> list[dict]:
        """Table 3 rows (one per entry) for the filters: per-task accuracy, Avg.U, Avg.R over the matching cells.

        A hidden set is published under :meth:`published` only: no filter (refused), numbers aggregating at least
        ``hidden_min_problems`` problems, rounded, and each submitter's scores moving by the Ladder's rule.

        Filters are normalised before they key the view cache (order and repeats do not matter; unknown tracks
        and model types match nothing), and an unknown scale, source or representation is refused."""
        tracks = tuple(sorted({t for t in tracks if t in TRACKS}))
        model_types = tuple(sorted({t for t in model_types if t in MODEL_TYPES + ("baseline",)})) \
            if model_types else None
        if not tracks or model_types == ():
            return []  # only unknown values: they match nothing
        now = axes()
        for axis, value in (("scale", scale), ("source", source), ("text_rep", text_rep), ("visual_rep", visual_rep)):
            if value is not None and value not in now[axis]:
                raise SubmissionError(f"unknown {axis.replace('_', ' ')} {str(value)[:40]!r}: one of "
                                      f"{', '.join(now[axis])}")
        if self._testset(testset).kind == HIDDEN:
            if any(v is not None for v in (scale, source, text_rep, visual_rep)):
                raise SubmissionError("the hidden set is shown over all its problems and representations only: a "
                                      "scale, source or representation filter would isolate single problems")
            key = ("hidden-lb", testset, tuple(tracks), tuple(model_types or ()))

            def hidden(entries):
                shown = self.published(testset)
                rows = [{"entry": e, **shown[e.id]} for e in entries if e.testset == testset and e.track in tracks
                        and (not model_types or e.model_type in model_types)]
                rows.sort(key=lambda r: (r["accuracy"] is None, -(r["accuracy"] or 0.0)))
                return rows

            return self.view(key, hidden)
        registered = tuple(now["task"] + now["text_rep"] + now["visual_rep"])  # a view is over the axes of its time
        key = ("lb", testset, tuple(tracks), tuple(model_types or ()), registered, scale, source, text_rep,
               visual_rep)

        def chosen(entries):
            picked = [e for e in entries if e.testset == testset and e.track in tracks
                      and (not model_types or e.model_type in model_types)]
            return picked, (np.stack([dense(e.cells, e.axes, now) for e in picked]) if picked else None)

        def compute(entries):
            picked, stack = self.view(key[:5], chosen)  # the dense counts, shared by every filter of this view
            if not picked:
                return []
            sums = summarise_many(None, stack=stack, axes_now=now, scale=scale, source=source, text_rep=text_rep,
                                  visual_rep=visual_rep)
            rows = [{"entry": e, **s} for e, s in zip(picked, sums) if s is not None]
            rows.sort(key=lambda r: -(r["accuracy"]))
            return rows

        return self.view(key, compute)

    def published(self, testset: str) -> dict[str, dict]:
        """What the leaderboard shows of each entry of a hidden set, by entry id (Blum and Hardt's Ladder, 2015):
        a submitter's entries in the order they arrived; an entry's numbers are shown only when its accuracy beats
        the best shown so far for that submitter on this set by ``hidden_margin`` points (the first always), and
        then rounded to ``hidden_round`` points; a number aggregating fewer than ``hidden_min_problems`` problems
        (a task's column on a small set) is never shown. The server's own baselines are shown as they score."""
        def compute(entries):
            ts = self.sets.get(testset)
            cfg = self.config
            best: dict[str, float] = {}
            out = {}
            for e in entries:
                if e.testset != testset:
                    continue
                (s,) = summarise_many([e.cells], axes_list=[e.axes])
                if e.origin != "seed":
                    acc = _rounded(s["accuracy"], cfg.hidden_round)
                    if e.submitter in best and not acc > best[e.submitter] + cfg.hidden_margin:
                        out[e.id] = {"per_task": {}, "avg_u": None, "avg_r": None, "avg_ext": None,
                                     "averaged_over": s["averaged_over"], "accuracy": None, "shown": False}
                        continue
                    best[e.submitter] = acc
                problems = ts.per_task  # every task of a set has per_task problems

                def shown(value, n):
                    return None if value is None or n < cfg.hidden_min_problems else _rounded(value, cfg.hidden_round)

                over = s["averaged_over"]  # a number over n tasks aggregates n * per_task problems
                out[e.id] = {"per_task": {t: shown(v, problems) for t, v in s["per_task"].items()
                                          if shown(v, problems) is not None},
                             **{k: shown(s[k], len(over[k]) * problems) for k in ("avg_u", "avg_r", "avg_ext")},
                             "averaged_over": over, "accuracy": shown(s["accuracy"], len(over["accuracy"]) * problems),
                             "shown": True}
            return out

        return self.view(("published", testset, axes()["task"]), compute)

    def shown_scores(self, entry: Entry) -> dict | None:
        """The numbers the leaderboard shows of ``entry`` (a hidden set's under :meth:`published`); None when the
        Ladder withholds them."""
        if self._testset(entry.testset).kind != HIDDEN:
            return {**entry.scores, "shown": True}
        shown = self.published(entry.testset).get(entry.id)
        return shown if shown and shown["shown"] else None


def _rounded(value: float, step: float) -> float:
    return float(value) if step <= 0 else float(round(value / step) * step)


def current_sets(service: Service) -> dict[str, object]:
    """The current public and hidden sets, building them on first use."""
    service.sets.ensure()
    return {PUBLIC: service.sets.current(PUBLIC), HIDDEN: service.sets.current(HIDDEN)}


def spreadsheet_safe(text: str) -> str:
    """User text for a table that may be copied into a spreadsheet: a leading formula character is quoted."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def make_service(config: SpaceConfig, store: Store | None = None) -> Service:
    """The service over the Hub store when ``HF_TOKEN`` and the repository ids are set, else SQLite."""
    if store is None:
        from .hub_store import from_env  # huggingface_hub's client (0.3 s): SQLite deployments skip it

        store = from_env()
    return Service(config, store)


__all__ = ["make_service", "Submission", "Service", "RateLimited", "AlreadySubmitted", "redact_paths", "file_sha256", "current_sets", "spreadsheet_safe", "MODEL_TYPES"]
