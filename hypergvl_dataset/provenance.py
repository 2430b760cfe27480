"""Provenance: which code, packages, configuration and command produced a result.

Every result file the suite writes (training summaries, study points, reproduction rows, PRM and router cards,
``results.json``, Space entries) carries one ``"provenance"`` object made here, so a number can be traced to the
commit that produced it and regenerated::

    {"commit": "a634353...", "dirty": false, "package": "hypergvl 0.1.0",
     "versions": {"python": "3.11.7", "torch": "2.14.1", "transformers": "5.24.0", "torch_geometric": "2.8.1", ...},
     "config": {...}, "command": ["python", "-m", "hypergvl.models.train", ...], "seeds": [0, 1], "device": "cpu",
     "created": "2026-12-02T16:40:00+00:00"}

``commit`` is the checkout's ``git rev-parse HEAD`` (``None`` outside a git checkout, e.g. an installed wheel;
``$HYPERGVL_COMMIT`` overrides it for builds from a tarball); ``dirty`` says whether tracked files differed from
that commit. Package versions are read from the installed metadata, so making a record imports nothing heavy.
Readers accept result files written before this field existed: :func:`of` returns ``{}`` for them.
"""
from __future__ import annotations

import datetime as _dt
import functools
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Optional

PACKAGES = ("torch", "torchvision", "transformers", "torch_geometric", "datasets", "evaluate", "accelerate",
            "numpy", "gradio")
_DIST_NAMES = {"torch_geometric": "torch-geometric"}
REPO_ROOT = Path(__file__).resolve().parent.parent


def _git(*args: str) -> Optional[str]:
    try:
        out = subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def history_note() -> Optional[str]:
    """Why commits cannot be resolved in this checkout (no git history: a tarball or an installed wheel; a shallow
    clone, whose history stops short), or ``None`` where they can."""
    if _git("rev-parse", "--is-inside-work-tree") != "true":
        return "the checkout has no git history (a tarball or an installed package)"
    if _git("rev-parse", "--is-shallow-repository") == "true":
        return "the checkout is a shallow clone: older commits are absent from its history"
    return None


def unresolved_commits(commits: Iterable[str]) -> list[str]:
    """The commits (full or abbreviated hex) that this checkout's history does not hold as commit objects, in
    the order given (one ``git cat-file --batch-check`` over them all, asking ``<sha>^{commit}``). Call
    :func:`history_note` first: without history every commit is unresolved."""
    commits = list(dict.fromkeys(commits))
    if not commits:
        return []
    try:
        out = subprocess.run(["git", "-C", str(REPO_ROOT), "cat-file", "--batch-check=%(objecttype)"],
                             input="".join(f"{c}^{{commit}}\n" for c in commits), capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.SubprocessError):
        return commits
    answers = out.stdout.splitlines()
    if out.returncode != 0 or len(answers) != len(commits):
        return commits
    return [c for c, a in zip(commits, answers) if a.strip() != "commit"]


@functools.lru_cache(maxsize=1)
def _commit() -> tuple[Optional[str], Optional[bool]]:
    env = os.environ.get("HYPERGVL_COMMIT")
    if env:
        return env, None
    if not (REPO_ROOT / ".git").exists():
        return None, None
    head = _git("rev-parse", "HEAD")
    if head is None:
        return None, None
    status = _git("status", "--porcelain", "--untracked-files=no")
    return head, (None if status is None else bool(status))


def pin() -> None:
    """Read the checkout's commit and dirty flag now, for every record this process makes: a long run calls it at
    its start, so a file edited while it trains (not the code it loaded) does not mark its results dirty, and one
    edited before it started does."""
    _commit()


def _version(name: str) -> Optional[str]:
    try:
        return metadata.version(_DIST_NAMES.get(name, name))
    except metadata.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=1)
def versions() -> dict[str, Optional[str]]:
    """Python and the installed versions of the packages a result depends on (``None`` where not installed)."""
    out: dict[str, Optional[str]] = {"python": platform.python_version()}
    out.update({name: _version(name) for name in PACKAGES})
    return out


def _relative(arg: str) -> str:
    """A command-line word naming a file of this checkout, relative to the checkout (no machine's path in a result)."""
    try:
        return str(Path(arg).resolve().relative_to(REPO_ROOT)) if arg.startswith("/") else arg
    except ValueError:
        return arg


def provenance(config: Any = None, *, command: Optional[Iterable[str]] = None, seeds: Optional[Iterable[int]] = None,
               device: Optional[str] = None) -> dict[str, Any]:
    """The provenance record of a result made now by this process.

    ``config`` is the resolved configuration (a JSON-able dict); ``command`` defaults to this process's command line
    (``sys.argv`` with the interpreter in front); ``seeds`` the seeds the result covers; ``device`` where it ran."""
    commit, dirty = _commit()
    return {
        "commit": commit,
        "dirty": dirty,
        "package": f"hypergvl {_version('hypergvl') or 'uninstalled'}",
        "versions": versions(),
        "config": config,
        "command": list(command) if command is not None else [Path(sys.executable).name, *map(_relative, sys.argv)],
        "seeds": None if seeds is None else [int(s) for s in seeds],
        "device": device,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def of(doc: Any) -> dict[str, Any]:
    """The provenance record of a result document, ``{}`` for one written before results carried it."""
    rec = doc.get("provenance") if isinstance(doc, dict) else None
    return rec if isinstance(rec, dict) else {}
