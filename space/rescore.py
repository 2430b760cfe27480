"""``hypergvl space rescore``: re-grade every stored entry that an older scorer version graded.

The grading rules have a version (:data:`hypergvl.answers.SCORER_VERSION`); every entry records the one that
scored it (``scorer_version``; entries stored before versions existed count as ``"1"``). When the server's version
changes, each older entry is scored again from its kept raw records, exactly as a new upload would be, and replaced
in the store under the same id with the new scores, cells, version and scoring provenance. Nothing is deleted: an
entry whose raw records cannot be found (or no longer score, e.g. its test set's build is gone) keeps its old
scores and version, and is listed. The app runs this on start; the command prints what it did.

Where the raw records are: ``<data>/uploads/<raw_sha256>`` (every entry stored by this version of the Space), else
for older entries the uploaded file (``<data>/uploads/<upload_sha256>``), a worker's run (``<data>/runs/<request
id>/samples.jsonl``) or the seeding's run folder.

Bounded cost: each entry is read and scored in a child process under the upload budgets
(:mod:`hypergvl.space.isolation`: ``max_grading_s``, ``max_grading_bytes``), one entry at a time, each stored as
soon as it is done; the server's own memory holds one entry's scores at a time. An entry that cannot be re-graded
under this scorer version (no raw records, a budget run out) is written to ``<data>/private/rescore_failed.json``
with that version, and later starts skip it without reading it again until the version changes.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
from pathlib import Path

from hypergvl.atomic import write_json

from .isolation import run_bounded
from .scoring import Limits, SubmissionError, read_upload, score, scorer_version, scoring_provenance
from .config import SpaceConfig
from .seed import run_dir
from .service import Service, current_sets, make_service
from .store import Entry

log = logging.getLogger(__name__)


FAILED = "rescore_failed.json"


def _read_failed(path: Path) -> dict:
    """Entry id -> {version, reason} of the entries that could not be re-graded (an unreadable file: none)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def raw_records(service: Service, entry: Entry) -> Path | None:
    """The file an entry's raw records are kept in, or None when none is found."""
    candidates = [service.raw_path(sha) for sha in (entry.raw_sha256, entry.upload_sha256) if sha]
    if entry.origin == "request":
        candidates.append(service.config.data_dir / "runs" / entry.id / "samples.jsonl")
    if entry.origin == "seed":
        candidates.append(run_dir(service, entry.testset, entry.model, entry.track) / "samples.jsonl")
    return next((p for p in candidates if p.is_file()), None)


def _scored(path: str, limits: Limits, index, kind: str):
    """Read and score one entry's raw records (run in a bounded child process)."""
    records, _, _ = read_upload(path, limits)
    return score(records, index, kind)


def regrade(service: Service, entry: Entry) -> Entry:
    """``entry`` scored again from its raw records under the current scorer version (not stored), in a child process
    under the upload budgets."""
    path = raw_records(service, entry)
    if path is None:
        raise FileNotFoundError(f"no kept raw records for entry {entry.id} ({entry.model} on {entry.testset})")
    limits = service.config.limits
    scored = run_bounded(_scored, (str(path), limits, service.sets.index(entry.testset), entry.track.partition(":")[0]),
                         seconds=limits.max_grading_s, memory_bytes=limits.max_grading_bytes)
    raw = service.keep_raw(path)
    return dataclasses.replace(entry, scores=scored.scores, cells=scored.cells, axes=scored.axes,
                               num_samples=scored.num_samples,
                               raw_sha256=raw, scorer_version=scorer_version(),
                               provenance={**scoring_provenance(), "regraded_from": entry.scorer_version})


def rescore(service: Service) -> dict:
    """Re-grade every entry of an older scorer version; ``{"version", "current", "regraded", "kept"}`` where
    ``kept`` lists ``(entry id, reason)`` of the entries left as they were."""
    version = scorer_version()
    report = {"version": version, "current": 0, "regraded": [], "kept": []}
    failed_path = service.config.data_dir / "private" / FAILED
    failed = _read_failed(failed_path)
    for entry in service.store.entries():
        if entry.scorer_version == version:
            report["current"] += 1
            continue
        if entry.id in failed and failed[entry.id]["version"] == version:
            reason = failed[entry.id]["reason"]
            report["kept"].append((entry.id, f"could not be re-graded under version {version} before: {reason}"))
            continue
        try:
            new = regrade(service, entry)
        except (FileNotFoundError, KeyError, SubmissionError, OSError) as exc:
            log.warning("entry %s (%s on %s) stays at scorer version %s: %s", entry.id, entry.model, entry.testset,
                        entry.scorer_version, exc)
            report["kept"].append((entry.id, str(exc)))
            failed[entry.id] = {"version": version, "reason": str(exc)}
            failed_path.parent.mkdir(parents=True, exist_ok=True)
            write_json(failed_path, failed, indent=1, sort_keys=True)
            continue
        service.store.update_entry(new)
        report["regraded"].append(entry.id)
    return report


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="hypergvl space rescore", description=__doc__.splitlines()[0].split(": ", 1)[1])
    p.parse_args(argv)
    service = make_service(SpaceConfig.from_env())
    current_sets(service)
    report = rescore(service)
    print(f"scorer version {report['version']}: {len(report['regraded'])} entries re-graded, {report['current']} "
          f"already current, {len(report['kept'])} kept as they were")
    for entry_id, reason in report["kept"]:
        print(f"  kept {entry_id}: {reason}", file=sys.stderr)
    return 1 if report["kept"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
