"""Reading a run's ``samples.jsonl`` (one JSON object a line, written by ``hypergvl evaluate``): one reader for every
command that reads it (``hypergvl score``, ``merge``, resuming ``evaluate``, the router's PRM and oracle).

A line that is not a JSON object with a string ``id`` stops the reading with :class:`DamagedRun`, naming the file, the
line and what to do: a damaged run is never scored as if it were shorter, and a resumed run never appends beside a
damaged line (before, ``hypergvl score`` scored 838 of 840 samples of such a folder without a word, and resuming it
re-answered the two samples and appended them, so the file held more lines than ``results.json`` counted). The one
exception is a last line without its newline: a crash cut it while writing, and resuming answers that sample again.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator


class DamagedRun(ValueError):
    """A line of a run's log that is not a sample record."""


def damaged(path: Path, n: int, what: str) -> DamagedRun:
    return DamagedRun(f"{path}: line {n}: {what}; the run folder is damaged, so nothing was read from it. Delete "
                      "that line (rerunning the same hypergvl evaluate command answers its sample again) or answer "
                      "into a new --out folder")


def iter_log(path: str | Path) -> Iterator[tuple[int, dict]]:
    """``(line number, record)`` of every complete line of a ``samples.jsonl``; blank lines are skipped."""
    path = Path(path)
    with open(path, encoding="utf-8", errors="strict") as f:
        n = 0
        try:
            for n, line in enumerate(f, 1):
                if not line.endswith("\n"):
                    return  # the last line, cut by a crash while it was written
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except ValueError as exc:
                    raise damaged(path, n, f"not JSON ({exc})") from None
                if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
                    raise damaged(path, n, "not a sample record (a JSON object with a string id)")
                yield n, rec
        except UnicodeDecodeError:
            raise damaged(path, n + 1, "not UTF-8 text") from None


__all__ = ["DamagedRun", "iter_log"]
