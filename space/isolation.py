"""Run one piece of untrusted work (reading and grading an upload) in a child process with a time and a memory budget.

The grader is linear-time (``hypergvl.answers``), but a whole upload is up to 64 MiB of responses: graded
in the server process it would hold the interpreter lock for seconds between page loads and keep what it allocated.
In a child process it holds neither: pages keep loading while it runs, the memory it used goes back to the system
when it exits, and the parent kills it once it runs past ``seconds`` or its resident memory grows by more than
``memory_bytes`` (checked every ``_TICK_S``). Every way it can end reaches the caller as one
:class:`SubmissionError` that says which budget ran out, or as the error the work raised.

Grading children are forked from the server (``start="fork"``): they start in milliseconds with the grading modules
(imported by this module through :mod:`.scoring`) already loaded, and run nothing but ``fn``, which imports nothing and
takes no lock another thread may hold (no logging, no store, no output). The ``forkserver`` and ``spawn`` methods were
measured and rejected for grading: each child re-imports the launching script (``python space/app.py``, whose relative
imports fail outside the package) or, launched with ``python -m hypergvl.space.app``, the whole Gradio app, seconds per
upload. Work that imports modules of its own (the worker's evaluation: ``transformers``, the harness) uses
``start="spawn"`` instead: a forked child that imports a module another thread of the parent was importing at the
moment of the fork waits forever on that module's import lock (seen: the worker in a process whose Space was warming
its HNN tab). A child dies with the server (``PR_SET_PDEATHSIG``), so a killed server leaves no work behind.
"""
from __future__ import annotations

import ctypes
import gc
import multiprocessing as mp
import os
import signal
import time
from typing import Any, Callable

from .scoring import SubmissionError

_TICK_S = 0.05  # how often the parent checks the child's time and resident memory


def _resident(pid: int) -> int:
    """Resident memory of process ``pid`` in bytes (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG (Linux)
    except (OSError, AttributeError):
        pass


def _child(conn, fn: Callable, args: tuple) -> None:
    _die_with_parent()
    try:
        outcome = ("ok", fn(*args))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the caller
        outcome = ("error", exc)
    try:
        conn.send(outcome)
    except Exception as exc:  # noqa: BLE001 - an error that cannot be pickled is sent as its text
        conn.send(("error", RuntimeError(f"{type(outcome[1]).__name__}: {exc}")))
    finally:
        conn.close()


def run_bounded(fn: Callable, args: tuple, *, seconds: float, memory_bytes: int | None,
                what: str = "grading", start: str = "fork") -> Any:
    """``fn(*args)`` in a child process; :class:`SubmissionError` when it runs past ``seconds`` or its resident
    memory grows by more than ``memory_bytes`` (it is killed); ``fn``'s own exception as raised.

    ``fn`` must be a module-level function and ``args`` picklable; ``what`` names the work in the messages;
    ``start`` is the :mod:`multiprocessing` start method (``"fork"`` or ``"spawn"``, see the module's text)."""
    if start not in ("fork", "spawn"):
        raise ValueError(f"start must be 'fork' or 'spawn', not {start!r}")
    ctx = mp.get_context(start)
    here, there = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(there, fn, args), daemon=True)
    forked = start == "fork"
    if forked:  # the server's objects leave the collector's generations, so the child's collections do not write to
        gc.freeze()  # (and copy) the pages it shares with the server (Python's gc.freeze docs: "right before fork()")
    try:
        child.start()
    finally:
        if forked:
            gc.unfreeze()
    start = time.monotonic()
    there.close()
    baseline = _resident(child.pid)
    try:
        # The parent watches time and memory: a limit set inside the child (RLIMIT_AS) was tried and hangs the
        # libraries that reserve address space up front.
        while not here.poll(_TICK_S):
            if time.monotonic() - start > seconds:
                raise SubmissionError(f"{what} took longer than {seconds:g} s and was stopped")
            if memory_bytes and _resident(child.pid) - baseline > memory_bytes:
                raise SubmissionError(f"{what} needed more than {memory_bytes / 2 ** 20:,.0f} MiB of memory "
                                      "and was stopped")
            if not child.is_alive() and not here.poll(0):
                break
        try:
            status, value = here.recv()
        except EOFError:
            child.join(5)
            raise SubmissionError(f"{what} stopped without a result (its process ended with code "
                                  f"{child.exitcode if child.exitcode is not None else 'unknown'})") from None
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        here.close()
    if status == "error":
        raise value
    return value


__all__ = ["run_bounded"]
