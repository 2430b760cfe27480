"""Run one piece of untrusted work (reading and grading an upload) in a child process with a time and a memory budget.

The grader is linear-time (``hypergvl.answers``), but a whole upload is up to 64 MiB of responses: graded
in the server process it would hold the interpreter lock for seconds between page loads and keep what it allocated.
In a child process it holds neither: pages keep loading while it runs, the memory it used goes back to the system
when it exits, and the parent kills it once it runs past ``seconds`` or its resident memory grows by more than
``memory_bytes`` (checked every ``_TICK_S``). Every way it can end reaches the caller as one
:class:`SubmissionError` that says which budget ran out, or as the error the work raised.

A child is never forked from the server itself: the server runs threads (the event loop, Gradio's workers, the HNN
tab's warm-up), and a forked child keeps every lock another thread held at the fork, held for good (a module's
import lock, a registry's, a library's): the first call that takes it waits forever, and the upload is refused after
its 300 s budget with the grading slot held meanwhile (tests/space/test_isolation.py shows it with an import in
flight). The server's gradings go to a **grading host** (``start="host"``): one single-threaded process, started with
``subprocess`` (fork and exec, nothing of the server's state) the first time it is needed, which takes one job at a
time over a pipe and forks each grading child from itself, so a child starts in milliseconds with the grading modules
loaded and holds no lock but its own. ``fn`` and ``args`` go to it pickled (``fn`` by its module and name). A host
that dies is started again at the next job (the job it held is refused, naming the exit); it exits when the server
closes its pipe. ``start="fork"`` (a child of this process) is for single-threaded callers (the re-grading at start,
``hypergvl space rescore``); work that imports modules of its own (the worker's evaluation: ``transformers``, the
harness) uses ``start="spawn"``. The ``forkserver`` and ``spawn`` methods were measured and rejected for grading:
each child re-imports the launching script (``python space/app.py``, whose relative imports fail outside the
package) or, launched with ``python -m hypergvl.space.app``, the whole Gradio app, seconds per upload. A child dies
with its parent (``PR_SET_PDEATHSIG``), so a killed server or host leaves no grading behind.
"""
from __future__ import annotations

import ctypes
import gc
import multiprocessing as mp
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable

from .scoring import SubmissionError

_TICK_S = 0.05  # how often the parent checks the child's time and resident memory
#: the grading host's (and so its children's) niceness: when visitors and a grading want more CPU than there is, the
#: visitors get it first (a grading is a batch job of seconds to minutes, a page load should take well under one)
GRADING_NICE = 10


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
    ``start``: ``"host"`` (a child of the grading host, for a threaded caller such as the server), ``"fork"`` (a
    child of this process, for a single-threaded caller) or ``"spawn"`` (see the module's text)."""
    if start == "host":
        return HOST.run(fn, args, seconds=seconds, memory_bytes=memory_bytes, what=what)
    if start not in ("fork", "spawn"):
        raise ValueError(f"start must be 'host', 'fork' or 'spawn', not {start!r}")
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


_HOST_SLACK_S = 60.0  # past a job's own budget, how long the server waits for the host before it stops the host


class GradingHost:
    """The single-threaded process the server's gradings are forked from (see the module's text): one job at a
    time, in the order they come (the lock); started on first use and again after it dies."""

    def __init__(self):
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._jobs = self._results = None

    @property
    def pid(self) -> int | None:
        """The host's process id while it runs (None before the first job)."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def warm(self) -> None:
        """Start the host now (about a second: Python and the grading modules), not at the first upload."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._stop()
                self._start()

    def close(self) -> None:
        """Stop the host (a later job starts another)."""
        with self._lock:
            self._stop()

    def _start(self) -> None:
        jobs_r, jobs_w = os.pipe()
        results_r, results_w = os.pipe()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))  # fn's module importable there
        try:
            self._proc = subprocess.Popen([sys.executable, "-c", f"from {__name__} import _host; _host()",
                                           str(jobs_r), str(results_w)], pass_fds=(jobs_r, results_w), env=env,
                                          stdin=subprocess.DEVNULL, close_fds=True)
        finally:
            os.close(jobs_r)
            os.close(results_w)
        self._jobs, self._results = os.fdopen(jobs_w, "wb"), os.fdopen(results_r, "rb")

    def _stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
        for f in (self._jobs, self._results):
            if f is not None:
                f.close()
        self._proc = self._jobs = self._results = None

    def run(self, fn: Callable, args: tuple, *, seconds: float, memory_bytes: int | None, what: str) -> Any:
        """:func:`run_bounded` ``(fn, args, start="fork")`` in the host, the outcome returned or raised here."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._stop()
                self._start()  # with sys.path as it is now: fn's module must be importable from it
            try:
                _send(self._jobs, pickle.dumps((fn, args, {"seconds": seconds, "memory_bytes": memory_bytes,
                                                           "what": what})))
                # the host stops the child at its budget and answers; one that does not is stopped with the job
                ready, _, _ = select.select([self._results], [], [], seconds + _HOST_SLACK_S)
                if not ready:
                    self._stop()
                    raise SubmissionError(f"{what} took longer than {seconds:g} s and was stopped")
                status, value = pickle.loads(_receive(self._results))
            except (EOFError, BrokenPipeError):
                code = self._proc.wait() if self._proc is not None else None
                self._stop()
                raise SubmissionError(f"{what} stopped without a result (the grading host ended with code "
                                      f"{code if code is not None else 'unknown'})") from None
        if status == "error":
            raise value
        return value


HOST = GradingHost()  # the server's: its gradings, one at a time


def _send(f, data: bytes) -> None:
    """One message: its length (8 bytes), then its bytes (so a message the reader cannot unpickle leaves the next one
    readable)."""
    f.write(len(data).to_bytes(8, "big") + data)
    f.flush()


def _receive(f) -> bytes:
    """One message written by :func:`_send`; EOFError when the other side has closed the pipe."""
    head = f.read(8)
    if len(head) < 8:
        raise EOFError
    data = f.read(int.from_bytes(head, "big"))
    if len(data) < int.from_bytes(head, "big"):
        raise EOFError
    return data


def _host() -> None:
    """The grading host's loop (``python -c 'from hypergvl.space.isolation import _host; _host()' JOBS RESULTS``):
    read a job, run it with :func:`run_bounded` in a child forked from this single-threaded process, write its
    outcome; end when the server closes the jobs pipe."""
    jobs, results = (os.fdopen(int(fd), mode) for fd, mode in zip(sys.argv[1:3], ("rb", "wb")))
    os.nice(GRADING_NICE)  # its children inherit it: page loads before gradings when the cores are busy
    while True:
        try:
            message = _receive(jobs)
        except EOFError:
            return
        try:
            fn, args, budget = pickle.loads(message)
        except Exception as exc:  # noqa: BLE001 - a job this process cannot read (its function not importable)
            outcome = ("error", RuntimeError(f"the grading host could not read the job: {type(exc).__name__}: {exc}"))
        else:
            try:
                outcome = ("ok", run_bounded(fn, args, start="fork", **budget))
            except BaseException as exc:  # noqa: BLE001 - every failure goes back to the server
                outcome = ("error", exc)
        try:
            data = pickle.dumps(outcome)
        except Exception as exc:  # noqa: BLE001 - an outcome that cannot be pickled is sent as its text
            data = pickle.dumps(("error", RuntimeError(f"{type(outcome[1]).__name__}: {exc}")))
        _send(results, data)


__all__ = ["run_bounded", "GradingHost", "HOST"]
