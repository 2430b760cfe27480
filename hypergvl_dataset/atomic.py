"""Atomic file writes: the one way the suite writes a file that a crash must not leave half-written.

The content goes to a temporary name beside the target, ``.NAME.tmp-PID-THREAD`` (hidden, unique per writing
process and thread, and recognisable: cleaners remove ``.*.tmp-*`` files a killed writer left), and is then renamed
over the target, so a reader sees the old file or the new one, never part of one. With ``fsync=True`` the data
reaches the disk before the rename, so a power cut too leaves the old or the new file rather than an empty one.
"""
from __future__ import annotations

import json
import os
import shutil
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

__all__ = ["temp_path", "atomic_path", "write_text", "write_bytes", "write_json", "replace_dir", "latest_dir",
           "sync_files"]


def temp_path(path: str | os.PathLike) -> Path:
    """The temporary name this process and thread write ``path`` under."""
    path = Path(path)
    return path.with_name(f".{path.name}.tmp-{os.getpid()}-{threading.get_ident()}")


@contextmanager
def atomic_path(path: str | os.PathLike, *, mode: int | None = None, fsync: bool = False) -> Iterator[Path]:
    """Yield a temporary path to write ``path``'s new content to (by any writer: ``open``, ``torch.save``,
    ``pyarrow``); on leaving the block it is renamed over ``path``, on an exception removed. ``mode`` (e.g.
    ``0o600``) creates the temporary file with those permissions before anything is written to it."""
    path = Path(path)
    tmp = temp_path(path)
    try:
        if mode is not None:
            tmp.unlink(missing_ok=True)
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode))
        yield tmp
        if fsync:
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes(path: str | os.PathLike, data: bytes, *, mode: int | None = None, fsync: bool = False) -> None:
    with atomic_path(path, mode=mode, fsync=fsync) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | os.PathLike, text: str, *, mode: int | None = None, fsync: bool = False) -> None:
    write_bytes(path, text.encode("utf-8"), mode=mode, fsync=fsync)


def write_json(path: str | os.PathLike, obj: Any, *, indent: int | None = 2, sort_keys: bool = False,
               ensure_ascii: bool = True, default=None, mode: int | None = None, fsync: bool = False) -> None:
    """``json.dumps(obj, ...)`` and a final newline."""
    text = json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii, default=default)
    write_text(path, text + "\n", mode=mode, fsync=fsync)


def replace_dir(new: str | os.PathLike, target: str | os.PathLike) -> None:
    """Put the finished folder ``new`` in ``target``'s place (a training checkpoint). The previous folder stays as
    ``TARGET.old`` until the new one is in place, so a crash at any point leaves a whole checkpoint at ``target``
    or at ``TARGET.old`` (readers try them in that order)."""
    new, target = Path(new), Path(target)
    old = target.with_name(target.name + ".old")
    if target.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(target, old)
    os.replace(new, target)
    shutil.rmtree(old, ignore_errors=True)


def latest_dir(target: str | os.PathLike, marker: str) -> Path | None:
    """The folder :func:`replace_dir` left whole: ``target`` or else ``TARGET.old``, whichever holds ``marker``
    (a file the writer puts in last); None when neither does."""
    target = Path(target)
    for folder in (target, target.with_name(target.name + ".old")):
        if (folder / marker).is_file():
            return folder
    return None


def sync_files(folder: str | os.PathLike, files: dict[str, str], stale: str) -> list[str]:
    """Make ``folder`` hold ``files`` (name -> text), each written atomically only where it differs, and remove the
    files matching the glob ``stale`` that ``files`` no longer names (generated files a registry dropped); returns
    the names that changed."""
    folder, changed = Path(folder), []
    for name, text in files.items():
        path = folder / name
        if not path.is_file() or path.read_text() != text:
            write_text(path, text)
            changed.append(name)
    for old in folder.glob(stale):
        if old.name not in files:
            old.unlink()
            changed.append(old.name)
    return changed
