"""Server-side scoring of a submission: read the upload defensively, check it covers the chosen selection exactly
once, and re-score every raw response with the ``hypergvl_accuracy`` metric against the server's own references.

Nothing a user sends is trusted or executed: only ``samples.jsonl`` lines (JSON objects with a string ``id`` and a
string ``response``) are read; submitted ``correct``/``parsed`` fields and ``results.json`` scores are ignored. A
``results.json`` in a zip is read only to check that the run was answered on the set it is submitted to, and its
``provenance`` is kept with the entry. Every entry records the scorer version that graded it
(:data:`hypergvl.answers.SCORER_VERSION`, :func:`scoring_provenance`); ``hypergvl space rescore`` re-grades
entries of an older version from their kept raw upload.

Per-sample verdicts are kept as *cells*: counts ``[task, text rep, visual rep, scale, source, samples, correct,
unparsed]``, indices into the axes the entry was scored under (:func:`axes`: the registered tasks and
representations then, recorded with the entry as ``Entry.axes``; an entry stored before axes were recorded indexes
the paper's, :data:`hypergvl.space.store.PAPER_AXES`), at most tasks x text x (visual + 1) x 3 x 2 rows per entry.
Every view reads an entry's cells by name into the axes registered now (:func:`dense`), so entries scored under
different benchmark versions sit side by side: a task an entry was not scored on has no cell (its column is blank,
never 0) and its averages are over the tasks it has (``averaged_over``). Every filtered leaderboard view (source,
scale, representation pair) is :func:`summarise` of those counts, which equals the metric's own aggregation over the
same samples (tested).
"""
from __future__ import annotations

import hashlib
import io
import json
import re
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hypergvl.answers import SCORER_VERSION
from hypergvl.build_folder import load_rows
from hypergvl.evaluators.accuracy import accuracy_scores
from hypergvl.provenance import provenance
from hypergvl.evaluators.routing import POLICIES as ROUTING_POLICIES, spec_forms
from hypergvl.paper import averaged_over, averages
from hypergvl.text import TEXT_REPS
from hypergvl.vqa import TEXT_ONLY, VISUAL_REPS, built_reps

from .store import SCALES, SOURCES, live_axes as axes


TRACKS = ("vision", "text-only", "routed")
NOT_SUBMITTED = ("profile",)  # the test bed's ceiling: it routes baseline:profile only, never a submitted model


def policies() -> tuple[str, ...]:
    """The routing policies a routed submission may name: every registered one (entry points included) but the
    test bed's ``profile``."""
    spec_forms()  # loads the policies of the hypergvl.routing entry-point group
    return tuple(p for p in ROUTING_POLICIES if p not in NOT_SUBMITTED)


class SubmissionError(ValueError):
    """What is wrong with an upload, and where (line, field); nothing is stored."""


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 64 * 2 ** 20          # the upload itself (also gradio's max_file_size)
    max_unzipped_bytes: int = 256 * 2 ** 20
    max_zip_members: int = 16
    max_lines: int = 100_000               # a full submission is 84,000 lines
    max_line_bytes: int = 256 * 2 ** 10
    max_response_chars: int = 64 * 2 ** 10
    max_depth: int = 32                    # JSON nesting of one line (the record is level 1)
    max_grading_s: float = 300.0           # reading and grading one upload (hypergvl.space.isolation): then it is stopped
    max_grading_bytes: int = 2 * 2 ** 30   # memory the grading process may add to what it starts with


# ================================================================================================ reading
def read_upload(path: str | Path, limits: Limits = Limits(), *, keep_reference: bool = True
                ) -> tuple[list[dict], dict | None, str]:
    """``(records, results_json_or_None, sha256_of_the_file)`` of a ``.jsonl`` file or a ``.zip`` of a
    ``hypergvl evaluate`` output folder. Records keep only ``id``, ``response`` (and the sha256 of ``reference``
    where ``keep_reference``: a public set compares it; a hidden set's upload needs no field it does not score) plus
    ``line``: what a record costs is its response, never the kilobytes of its reference (which one character
    outside the BMP would store at 4 bytes a character).

    Streaming: the file is hashed in blocks and ``samples.jsonl`` is read one bounded line at a time, every limit
    (bytes, unpacked bytes, lines, line length, nesting, zip entries) checked as it is read, so the work and the
    memory an upload costs are bounded by what is kept (the records), never by what it claims or unpacks to."""
    path = Path(path)
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise SubmissionError(f"the upload is {size:,} bytes; the limit is {limits.max_bytes:,}")
    h = hashlib.sha256()
    with open(path, "rb") as f:
        head = f.read(4)
        h.update(head)
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    if head[:2] != b"PK":
        with open(path, "rb") as f:
            return parse_stream(f, limits, keep_reference=keep_reference), None, h.hexdigest()
    _check_zip_directory(path, limits)
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise SubmissionError(f"the zip is damaged: {exc}") from None
    with z:
        samples, results = _zip_members(z, limits)
        try:
            with z.open(samples) as stream:
                records = parse_stream(stream, limits, unpacked=limits.max_unzipped_bytes,
                                       keep_reference=keep_reference)
        except (zipfile.BadZipFile, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
            raise SubmissionError(f"zip entry {samples.filename!r} cannot be unpacked: {exc}") from None
    return records, results, h.hexdigest()


def _check_zip_directory(path: Path, limits: Limits) -> None:
    """Count a zip's entries from its end-of-central-directory record before ``zipfile`` reads the directory (a
    64 MiB upload could otherwise list a million entries, each parsed into an object)."""
    with open(path, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - (22 + 0xFFFF)))
        tail = f.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise SubmissionError("the zip is damaged: no end of central directory")
    entries = int.from_bytes(tail[at + 10:at + 12], "little")
    directory = int.from_bytes(tail[at + 12:at + 16], "little")
    if entries == 0xFFFF or directory == 0xFFFFFFFF:
        raise SubmissionError("the zip is a zip64 archive; an evaluate folder zips without it")
    if entries > limits.max_zip_members:
        raise SubmissionError(f"the zip holds {entries} entries; the limit is {limits.max_zip_members}")
    if directory > 4096 * (limits.max_zip_members + 1):
        raise SubmissionError(f"the zip's central directory is {directory:,} bytes; it lists at most "
                              f"{limits.max_zip_members} entries")


def _zip_members(z: zipfile.ZipFile, limits: Limits) -> tuple[zipfile.ZipInfo, dict]:
    """The ``samples.jsonl`` entry and the parsed ``results.json`` of an evaluate folder's zip (both required)."""
    infos = z.infolist()
    if len(infos) > limits.max_zip_members:
        raise SubmissionError(f"the zip holds {len(infos)} entries; the limit is {limits.max_zip_members}")
    files: dict[str, zipfile.ZipInfo] = {}
    total = 0
    for info in infos:
        name = info.filename
        parts = name.replace("\\", "/").split("/")
        if name.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
            raise SubmissionError(f"zip entry {name!r} points outside its folder")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise SubmissionError(f"zip entry {name!r} is a symbolic link; links are not accepted")
        if info.is_dir():
            continue
        if info.flag_bits & 0x1:
            raise SubmissionError(f"zip entry {name!r} is encrypted")
        total += info.file_size
        if total > limits.max_unzipped_bytes:
            raise SubmissionError(f"the zip unpacks to more than {limits.max_unzipped_bytes:,} bytes")
        if parts[-1] in files:
            raise SubmissionError(f"the zip holds two files named {parts[-1]!r}: zip one evaluate output folder")
        files[parts[-1]] = info
        if len([p for p in parts if p]) > 2:
            raise SubmissionError(f"zip entry {name!r} is nested too deep: zip the evaluate output folder itself")
    if any(n.startswith("samples.rank") for n in files):
        raise SubmissionError("the zip holds per-rank logs (samples.rank*.jsonl): the run did not finish; rerun the "
                              "same evaluate command so it merges them into samples.jsonl")
    if "samples.jsonl" not in files:
        raise SubmissionError("the zip has no samples.jsonl (zip the folder `hypergvl evaluate --out` wrote)")
    if "results.json" not in files:
        raise SubmissionError("the zip has no results.json: zip the whole folder `hypergvl evaluate --out` wrote "
                              "(its results.json shows the set the run answered), or upload samples.jsonl alone")
    info = files["results.json"]
    cap = RESULTS_JSON_BYTES
    try:
        with z.open(info) as f:
            raw = f.read(cap + 1)
    except (zipfile.BadZipFile, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
        raise SubmissionError(f"zip entry {info.filename!r} cannot be unpacked: {exc}") from None
    if len(raw) > cap:
        raise SubmissionError(f"results.json in the zip is larger than {cap:,} bytes")
    try:
        results = json.loads(raw)
        if not isinstance(results, dict):
            raise ValueError("not an object")
    except RecursionError:
        raise SubmissionError("results.json in the zip is nested too deep") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise SubmissionError(f"results.json in the zip is not a JSON object ({exc})") from None
    return files["samples.jsonl"], results


RESULTS_JSON_BYTES = 4 * 2 ** 20
_SURROGATE = re.compile("[\ud800-\udfff]")


def parse_samples(data: bytes, limits: Limits = Limits()) -> list[dict]:
    """Validate ``samples.jsonl`` (bytes) line by line: errors name the line and the field."""
    return parse_stream(io.BytesIO(data), limits)


def parse_stream(stream, limits: Limits = Limits(), *, unpacked: int | None = None,
                 keep_reference: bool = True) -> list[dict]:
    """:func:`parse_samples` of a binary stream, read one line (at most ``max_line_bytes``) at a time: more than
    ``max_lines`` lines, a longer line or more than ``unpacked`` bytes in all stop the reading there."""
    records, first_line = [], {}
    total, n = 0, 0
    while True:
        raw = stream.readline(limits.max_line_bytes + 2)
        if not raw:
            break
        n += 1
        total += len(raw)
        if n > limits.max_lines:
            raise SubmissionError(f"samples.jsonl has more than {limits.max_lines:,} lines")
        if unpacked is not None and total > unpacked:
            raise SubmissionError(f"the zip unpacks to more than {unpacked:,} bytes")
        line = raw.rstrip(b"\r\n") if raw.endswith(b"\n") else raw
        if len(line) > limits.max_line_bytes:
            raise SubmissionError(f"line {n}: longer than {limits.max_line_bytes:,} bytes")
        if not line.strip():
            continue
        try:
            rec = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            raise SubmissionError(f"line {n}: not UTF-8 text") from None
        except RecursionError:
            raise SubmissionError(f"line {n}: nested deeper than {limits.max_depth} levels") from None
        except ValueError as exc:
            raise SubmissionError(f"line {n}: not JSON ({exc})") from None
        if not isinstance(rec, dict):
            raise SubmissionError(f"line {n}: expected a JSON object, got {type(rec).__name__}")
        if not _shallow(rec, limits.max_depth):
            raise SubmissionError(f"line {n}: nested deeper than {limits.max_depth} levels")
        for key in ("id", "response"):
            if key not in rec:
                raise SubmissionError(f"line {n}: field {key!r} is missing")
            if not isinstance(rec[key], str):
                raise SubmissionError(f"line {n}: field {key!r} must be a string, got {_kind(rec[key])}")
        if len(rec["response"]) > limits.max_response_chars:
            raise SubmissionError(f"line {n}: field 'response' is longer than {limits.max_response_chars:,} characters")
        kept = {"id": rec["id"], "response": rec["response"], "line": n}
        reference = rec.get("reference") if keep_reference and isinstance(rec.get("reference"), str) else None
        if b"\\u" in line or b"\\U" in line:  # only a \u escape can spell a lone surrogate in UTF-8 text
            for key, value in (*kept.items(), ("reference", reference)):
                m = _SURROGATE.search(value) if isinstance(value, str) else None
                if m:
                    raise SubmissionError(f"line {n}: field {key!r} holds an unpaired surrogate "
                                          f"(U+{ord(m.group()):04X} at character {m.start() + 1}); a JSON string "
                                          "escapes a character outside the BMP as a pair, e.g. \\ud83d\\ude00")
        if reference is not None:  # compared by digest: the string itself (kilobytes a row) is not kept
            kept["reference_sha256"] = reference_digest(reference)
        if rec["id"] in first_line:
            raise SubmissionError(f"line {n}: sample {rec['id']!r} appears twice (first on line {first_line[rec['id']]})")
        first_line[rec["id"]] = n
        records.append(kept)
    if not records:
        raise SubmissionError("samples.jsonl holds no samples")
    return records


def _shallow(rec: dict, limit: int) -> bool:
    """Whether no value of ``rec`` nests deeper than ``limit`` levels (the record itself is level 1)."""
    stack = [(v, 2) for v in rec.values() if isinstance(v, (dict, list))]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return False
        children = value.values() if isinstance(value, dict) else value
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return True


def _kind(value) -> str:
    return "null" if value is None else {bool: "boolean", int: "number", float: "number", list: "array",
                                          dict: "object"}.get(type(value), type(value).__name__)


# ================================================================================================ references
def reference_digest(reference: str) -> bytes:
    """sha256 of a row reference's UTF-8 text: how an upload's ``reference`` is compared with the set's."""
    return hashlib.sha256(reference.encode("utf-8")).digest()


class SampleIndex:
    """What the server knows about every meta problem of a test set: task, scale, source and reference."""

    def __init__(self, meta: dict[str, tuple[str, int, int, str]], build_sha256: str, *, public: bool = False):
        self.meta, self.build_sha256 = meta, build_sha256  # meta id -> (task, scale index, source index, reference)
        self.public = public  # a public set's references are published: an upload's own may be compared with them
        self._digests: dict[str, bytes] = {}

    def reference_digest(self, meta: str) -> bytes:
        """:func:`reference_digest` of meta problem ``meta``'s reference (computed once)."""
        if meta not in self._digests:
            self._digests[meta] = reference_digest(self.meta[meta][3])
        return self._digests[meta]

    @classmethod
    def from_build(cls, build: str, build_sha256: str, *, public: bool = False) -> "SampleIndex":
        data = load_rows(build, build_sha256)
        rows = data.select_columns(["id", "task", "scale", "source", "reference"])
        s, o = ({v: i for i, v in enumerate(a)} for a in (SCALES, SOURCES))
        meta = {m: (task, s[scale], o[source], ref) for m, task, scale, source, ref in
                zip(rows["id"], rows["task"], rows["scale"], rows["source"], rows["reference"])}
        index = cls(meta, build_sha256, public=public)
        index.text_reps, index.visual_reps = built_reps(data)
        return index

    #: the representations a complete submission answers: the registered ones the build has (set by from_build;
    #: an index made by hand has every registered one)
    text_reps: tuple[str, ...] | None = None
    visual_reps: tuple[str, ...] | None = None

    def reps(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return (self.text_reps if self.text_reps is not None else tuple(TEXT_REPS),
                self.visual_reps if self.visual_reps is not None else tuple(VISUAL_REPS))

    def required(self, track: str) -> int:
        """How many samples a complete submission of ``track`` has."""
        texts, visuals = self.reps()
        per = {"vision": len(texts) * len(visuals), "text-only": len(texts), "routed": 1}
        return len(self.meta) * per[track]


def check_selection(records: list[dict], index: SampleIndex, track: str) -> list[tuple[int, int, int]]:
    """The (meta, text, visual) indices of every record; :class:`SubmissionError` for an unknown sample id, a sample
    outside the track, a routed problem answered twice, or a missing sample: decided by the ids and counts alone.
    On a public set an uploaded ``reference`` must also equal the set's (an answer from another build); on a hidden
    set it is ignored, so no refusal depends on the hidden references."""
    built_texts, built_visuals = index.reps()
    texts = {v: i for i, v in enumerate(built_texts)}
    visuals = {v: i for i, v in enumerate((*built_visuals, TEXT_ONLY))}
    allowed = {"vision": set(built_visuals), "text-only": {TEXT_ONLY},
               "routed": set(built_visuals) | {TEXT_ONLY}}[track]
    seen_meta: dict[str, int] = {}
    out = []
    for rec in records:
        meta, sep, rest = rec["id"].partition("/")
        text, sep2, visual = rest.partition("/")
        if not (sep and sep2) or meta not in index.meta or text not in texts or visual not in visuals:
            raise SubmissionError(f"line {rec['line']}: unknown sample id {rec['id']!r} (not in this test set)")
        if visual not in allowed:
            raise SubmissionError(f"line {rec['line']}: sample {rec['id']!r} is not part of the {track} track")
        if track == "routed":
            if meta in seen_meta:
                raise SubmissionError(f"line {rec['line']}: problem {meta} is answered twice (also on line "
                                      f"{seen_meta[meta]}); a routed run answers one pair per problem")
            seen_meta[meta] = rec["line"]
        # a hidden set's references are compared with nothing the upload holds (only the score uses them)
        if index.public and "reference_sha256" in rec and rec["reference_sha256"] != index.reference_digest(meta):
            raise SubmissionError(f"line {rec['line']}: sample {rec['id']!r} was answered on another build (its "
                                  "reference differs from this test set's)")
        out.append((meta, texts[text], visuals[visual]))
    want = index.required(track)
    if len(records) != want:
        have = {r["id"] for r in records}
        example = _first_missing(index, track, have)
        raise SubmissionError(f"the {track} track of this test set has {want:,} samples; the upload has "
                              f"{len(records):,} (missing e.g. {example})")
    return out


def _first_missing(index: SampleIndex, track: str, have: set[str]) -> str:
    if track == "routed":
        answered = {h.partition("/")[0] for h in have}
        return next(m for m in index.meta if m not in answered)
    texts, built_visuals = index.reps()
    visuals = built_visuals if track == "vision" else (TEXT_ONLY,)
    return next(f"{m}/{t}/{v}" for m in index.meta for t in texts for v in visuals
                if f"{m}/{t}/{v}" not in have)


def check_results_json(results: dict | None, served_sha256: str, track: str,
                       remedy: str = "evaluate on the set you submit to") -> None:
    """A zip's ``results.json`` must come from a run over the set submitted to, on the same track; a refusal ends
    with ``remedy``, the command that gets the right set."""
    if results is None:
        return
    try:
        sha = results["dataset"]["build_sha256"]
    except (KeyError, TypeError):
        raise SubmissionError("results.json in the zip has no dataset.build_sha256") from None
    if sha != served_sha256:
        raise SubmissionError(f"the run was answered on build {str(sha)[:12]}, not on this test set "
                              f"({served_sha256[:12]}): {remedy}")
    if bool(results.get("text_only")) != (track == "text-only"):
        raise SubmissionError(f"results.json says text_only={bool(results.get('text_only'))}, but the {track} "
                              "track was chosen")


# ================================================================================================ scoring
PROVENANCE_BYTES = 16 * 2 ** 10


def grade_upload(path: str, limits: Limits, index: "SampleIndex", track: str, served_sha256: str,
                 remedy: str = "evaluate on the set you submit to") -> tuple["Scored", str, dict]:
    """Read, check and re-score an upload: ``(scored, sha256 of the file, submitted provenance)``. The Space runs it
    in a child process with the ``limits``' time and memory budget (:func:`hypergvl.space.isolation.run_bounded`)."""
    records, results, sha = read_upload(path, limits, keep_reference=index.public)
    check_results_json(results, served_sha256, track, remedy)
    return score(records, index, track), sha, submitted_provenance(results)


def scorer_version() -> str:
    """The grading rules' version the server scores with now."""
    return str(SCORER_VERSION)


def scoring_provenance() -> dict:
    """What graded an entry: the scorer version and the server's provenance (commit, package versions)."""
    version = scorer_version()
    return {"scorer_version": version, **provenance({"metric": "hypergvl_accuracy", "scorer_version": version})}


def submitted_provenance(results: dict | None) -> dict:
    """The ``provenance`` object of a submitted ``results.json``, kept as given when it is a JSON object of at most
    :data:`PROVENANCE_BYTES`; ``{}`` otherwise (it is informative and never trusted)."""
    doc = (results or {}).get("provenance")
    if not isinstance(doc, dict):
        return {}
    try:
        text = json.dumps(doc, ensure_ascii=False)
        text.encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError):
        return {}
    return doc if len(text) <= PROVENANCE_BYTES else {}


@dataclass
class Scored:
    scores: dict
    cells: np.ndarray
    num_samples: int
    axes: dict | None = None  # the names the cells index (:func:`axes` when scored)


def score(records: list[dict], index: SampleIndex, track: str) -> Scored:
    """Check the selection and re-score every response against ``index``'s references."""
    keys = check_selection(records, index, track)
    refs = [index.meta[m][3] for m, _, _ in keys]
    built_texts, built_visuals = index.reps()
    visual_names = (*built_visuals, TEXT_ONLY)
    out = accuracy_scores(
        predictions=[r["response"] for r in records], references=refs, return_verdicts=True,
        text_reps=[built_texts[t] for _, t, _ in keys], visual_reps=[visual_names[v] for _, _, v in keys],
        scales=[SCALES[index.meta[m][1]] for m, _, _ in keys], sources=[SOURCES[index.meta[m][2]] for m, _, _ in keys])
    correct, unparsed = np.asarray(out["correct"]), np.asarray(out["unparsed"])
    now = axes()
    task_at, text_at, visual_at = ({v: i for i, v in enumerate(now[a])} for a in ("task", "text_rep", "visual_rep"))
    cols = np.array([(task_at[index.meta[m][0]], text_at[built_texts[t]], visual_at[visual_names[v]],
                      index.meta[m][1], index.meta[m][2]) for m, t, v in keys], dtype=np.int64)
    return Scored({k: out[k] for k in HEADLINE}, cells_from(cols, correct, unparsed, now), len(records),
                  {a: list(v) for a, v in now.items()})


HEADLINE = ("accuracy", "avg_u", "avg_r", "avg_ext", "averaged_over", "per_task", "per_task_count", "unparsed_rate",
            "num_samples")
GROUPINGS = {"by_text_rep": ("text_rep",), "by_visual_rep": ("visual_rep",), "by_scale": ("scale",),
             "by_source": ("source",), "by_source_and_scale": ("source", "scale")}


def groupings(cells, cell_axes: dict | None = None) -> dict:
    """The metric's groupings (``by_text_rep``, ``by_visual_rep``, ``by_scale``, ``by_source``,
    ``by_source_and_scale``: accuracy, per_task, avg_u, avg_r, avg_ext per group present) from an entry's cells
    (indexing ``cell_axes``; None: :func:`axes`)."""
    now = axes()
    stack = dense(cells, cell_axes, now)[None]
    out = {}
    for key, names in GROUPINGS.items():
        combos = [()]
        for axis in names:
            combos = [c + (v,) for c in combos for v in now[axis]]
        groups = {}
        for combo in combos:
            (s,) = summarise_many(None, stack=stack, axes_now=now, **dict(zip(names, combo)))
            if s is not None:
                groups["/".join(combo)] = s
        out[key] = groups
    return out


def cells_from(cols: np.ndarray, correct: np.ndarray, unparsed: np.ndarray, cell_axes: dict | None = None
               ) -> np.ndarray:
    """Count samples, correct and unparsed answers per (task, text, visual, scale, source) cell of ``cell_axes``."""
    sizes = [len(v) for v in (cell_axes or axes()).values()]
    flat = np.ravel_multi_index(cols.T, sizes)
    n = int(np.prod(sizes))
    total = np.bincount(flat, minlength=n)
    right = np.bincount(flat, weights=correct.astype(np.float64), minlength=n)
    miss = np.bincount(flat, weights=unparsed.astype(np.float64), minlength=n)
    nz = np.flatnonzero(total)
    coords = np.array(np.unravel_index(nz, sizes)).T
    return np.column_stack([coords, total[nz], right[nz].round(), miss[nz].round()]).astype(np.int64)


def summarise(cells, cell_axes: dict | None = None, **filters) -> dict | None:
    """Accuracy per task, Avg.U (the paper's understanding tasks), Avg.R (its reasoning tasks), Avg.Ext (the tasks
    beyond the paper's) and overall accuracy, in percent, with the tasks each average is over (``averaged_over``),
    over the cells matching the filters (``scale``, ``source``, ``text_rep``, ``visual_rep``; None = all); None when
    no sample matches. ``cell_axes``: the names the cells index (an entry's ``axes``; None: :func:`axes`)."""
    now = axes()
    return summarise_many(None, stack=dense(cells, cell_axes, now)[None], axes_now=now, **filters)[0]


def shape(current: dict | None = None) -> tuple[int, ...]:
    """The dense array's shape over ``current`` axes (None: :func:`axes`): task, text rep, visual rep, scale, source."""
    return tuple(len(v) for v in (current or axes()).values())


def dense(cells, cell_axes: dict | None = None, current: dict | None = None) -> np.ndarray:
    """An entry's cells as a dense ``(*shape(current), 2)`` array of (samples, correct) counts over the axes
    registered now (``current``, None: :func:`axes`). ``cell_axes`` names what the cells' indices mean (an entry's
    ``axes``); a name not registered now (a task or representation since removed) has no place there and its cells
    are left out of every view (the entry's stored headline ``scores`` still count them)."""
    current = current or axes()
    sizes = shape(current)
    a = np.asarray(cells, dtype=np.int64).reshape(-1, 8)
    coords = a[:, :5]
    if cell_axes is not None and any(tuple(cell_axes[k]) != tuple(current[k]) for k in current):
        cols, keep = [], np.ones(len(a), dtype=bool)
        for j, k in enumerate(current):
            at = {v: i for i, v in enumerate(current[k])}
            to = np.array([at.get(v, -1) for v in cell_axes[k]], dtype=np.int64)
            mapped = to[coords[:, j]] if len(to) else np.zeros(len(a), dtype=np.int64)
            keep &= mapped >= 0
            cols.append(mapped)
        coords, a = np.stack(cols, axis=1)[keep], a[keep]
    flat = np.ravel_multi_index(coords.T, sizes)
    n = int(np.prod(sizes))
    out = np.stack([np.bincount(flat, weights=a[:, 5], minlength=n), np.bincount(flat, weights=a[:, 6], minlength=n)],
                   axis=-1)
    return out.astype(np.int32).reshape(*sizes, 2)


def summarise_many(cells_list, *, stack: np.ndarray | None = None, axes_list=None, axes_now: dict | None = None,
                   scale: str | None = None, source: str | None = None, text_rep: str | None = None,
                   visual_rep: str | None = None):
    """:func:`summarise` of many entries at once, from their stacked :func:`dense` arrays (``stack``, computed from
    ``cells_list`` and their ``axes_list`` when not given): each filter is a slice, then one sum over the
    representation, scale and source axes."""
    now = axes_now or axes()
    if stack is None:
        names = axes_list if axes_list is not None else [None] * len(cells_list)
        stack = (np.stack([dense(c, a, now) for c, a in zip(cells_list, names)]) if len(cells_list)
                 else np.zeros((0, *shape(now), 2), np.int32))
    view = stack
    for axis, name, value in ((2, "text_rep", text_rep), (3, "visual_rep", visual_rep), (4, "scale", scale),
                              (5, "source", source)):
        if value is not None:
            i = now[name].index(value)
            view = view[(slice(None),) * axis + (slice(i, i + 1),)]
    counts = view.sum(axis=(2, 3, 4, 5), dtype=np.int64)  # (entries, tasks, 2)
    codes = now["task"]
    out = []
    for per in counts:
        tot, ok = per[:, 0], per[:, 1]
        if not tot.any():
            out.append(None)
            continue
        present = tot > 0
        acc = np.where(present, 100.0 * ok / np.where(present, tot, 1), np.nan)
        per_task = {codes[t]: float(acc[t]) for t in np.flatnonzero(present)}
        out.append({"per_task": per_task, **averages(per_task), "averaged_over": averaged_over(per_task),
                    "accuracy": 100.0 * float(ok.sum()) / float(tot.sum()), "num_samples": int(tot.sum())})
    return out
