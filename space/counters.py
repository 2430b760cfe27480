"""The Space's own protection counters (rejected uploads and requests, and files sent to the upload route, per
submitter), kept on disk.

Before, they lived in the server's memory, so a restart reset them and an attacker could probe again at once. They
are the server's, not the leaderboard's: they sit in a small SQLite file in the Space's data folder
(``<data>/private/counters.sqlite``, persistent storage when deployed), whichever store holds the leaderboard (a
commit to the Hub per rejection would let an attacker drive the store's commit rate). Times older than the rate
window are deleted as new ones are written, so the file stays as small as the window's traffic.
"""
from __future__ import annotations

import time
from pathlib import Path

from .store import ThreadConnections

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rejections (submitter TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS rejections_by_submitter ON rejections (submitter, at);
CREATE TABLE IF NOT EXISTS uploads (submitter TEXT NOT NULL, at REAL NOT NULL, bytes INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS uploads_by_submitter ON uploads (submitter, at);
"""


class Counters:
    """Per-submitter times of rejected uploads and requests within a sliding window, shared by the processes and
    restarts of one Space (one connection per thread, WAL)."""

    def __init__(self, path: str | Path, window_s: float):
        self._db = ThreadConnections(path, _SCHEMA)
        self.path, self.window_s = self._db.path, window_s

    def rejections(self, submitter: str, *, add: bool = False) -> int:
        """How many rejections ``submitter`` has in the window, after recording one more when ``add``."""
        now = time.time()
        db = self._db()
        if add:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("DELETE FROM rejections WHERE at < ?", (now - self.window_s,))
                db.execute("INSERT INTO rejections VALUES (?, ?)", (submitter, now))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        (n,) = db.execute("SELECT COUNT(*) FROM rejections WHERE submitter = ? AND at >= ?",
                          (submitter, now - self.window_s)).fetchone()
        return n

    def upload(self, submitter: str, nbytes: int, *, max_count: int, max_bytes: int, window_s: float) -> str | None:
        """Record a file of ``nbytes`` sent to the upload route by ``submitter``, unless it would exceed
        ``max_count`` files or ``max_bytes`` bytes within ``window_s``: then nothing is recorded and the reason is
        returned. One transaction, so concurrent uploads of one submitter cannot all pass the check."""
        now = time.time()
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("DELETE FROM uploads WHERE at < ?", (now - window_s,))
            count, total = db.execute("SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM uploads WHERE submitter = ?",
                                      (submitter,)).fetchone()
            hours = window_s / 3600
            if count + 1 > max_count:
                reason = f"at most {max_count} uploaded files per {hours:g} h; try again later"
            elif total + nbytes > max_bytes:
                reason = f"at most {max_bytes / 2 ** 20:,.0f} MiB of uploaded files per {hours:g} h; try again later"
            else:
                reason = None
                db.execute("INSERT INTO uploads VALUES (?, ?, ?)", (submitter, now, nbytes))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return reason


__all__ = ["Counters"]
