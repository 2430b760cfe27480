"""The run folder ``hypergvl evaluate --out`` writes, and the one place that reads and writes its logs.

    samples.jsonl           one JSON line per answered sample (the schema is in :mod:`hypergvl.evaluators.harness`)
    samples.rank<R>.jsonl   a rank's lines while a distributed run is in flight (merged into samples.jsonl at its end)
    results.json            the leaderboard submission (written by :func:`hypergvl.evaluators.harness.write_results`)
    run.json                which model and build the folder's answers come from (:func:`~hypergvl.evaluators.harness.claim_folder`)

Readers: the harness (resume, merge, score), ``hypergvl report`` and ``submit``, the lmms-eval import, the oracle
routing policy, the router's PRM dataset and study. Lines are read through :func:`hypergvl.runlog.iter_log`: a last
line cut short by a crash is skipped, any other damaged line refused with its line number.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

from hypergvl.atomic import atomic_path
from hypergvl.cli import UserError
from hypergvl.runlog import iter_log

LOG = "samples.jsonl"
RESULTS = "results.json"
RUN = "run.json"


def samples(folder: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """(line number, record) of a finished run's ``samples.jsonl``; ``ValueError`` when there is none."""
    log = Path(folder) / LOG
    if not log.is_file():
        raise ValueError(f"{folder} is not a hypergvl evaluate output folder: no {LOG}")
    return iter_log(log)


def read_results(path: str | os.PathLike) -> dict:
    """A run's ``results.json`` (``path`` is the file or its folder), as a dict; :class:`UserError` naming the
    file when it is missing or is not a results object."""
    path = Path(path)
    path = path / RESULTS if path.is_dir() else path
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"no {RESULTS} at {path}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{path} is not a hypergvl evaluate {RESULTS} ({exc})") from None
    if not isinstance(results, dict):
        raise UserError(f"{path} is not a hypergvl evaluate {RESULTS} (not a JSON object)")
    return results


def drop_partial_tail(path: Path) -> None:
    """Cut a last line left unfinished by a crash, so appending starts on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - 1))
        if f.read(1) == b"\n":
            return
        f.seek(0)
        data = f.read()
        f.truncate(data.rfind(b"\n") + 1)


def log_files(out: Path) -> list[Path]:
    """The merged log first, then every rank's (from any world size)."""
    return [p for p in [out / LOG] if p.exists()] + sorted(out.glob("samples.rank*.jsonl"))


def read_records(paths) -> dict[str, dict]:
    """Records by sample id over several logs (the first copy wins); a last line cut short by a crash is skipped,
    any other damaged line refused (:func:`hypergvl.runlog.iter_log`)."""
    done: dict[str, dict] = {}
    for path in paths:
        for _, rec in iter_log(path):
            done.setdefault(rec["id"], rec)
    return done


def write_log(path: Path, records: dict[str, dict]) -> None:
    """All records, sorted by id, written atomically."""
    with atomic_path(path, fsync=True) as tmp, open(tmp, "w", encoding="utf-8") as f:
        for key in sorted(records):
            f.write(json.dumps(records[key], ensure_ascii=False) + "\n")


def consolidate(out: Path) -> dict[str, dict]:
    """Merge the rank logs into ``samples.jsonl`` (atomically, then remove them); returns every record."""
    files = log_files(out)
    records = read_records(files)
    ranks = [p for p in files if p.name != LOG]
    if ranks:
        write_log(out / LOG, records)
        for p in ranks:
            p.unlink()
    return records
