"""Work the grading host runs in the Space's tests: functions of a module it can import by name (the test modules
are imported by pytest's importlib mode, under names no other process can import)."""
from __future__ import annotations

import os
import time
from pathlib import Path

from hypergvl.space.scoring import SubmissionError


def pid():
    return os.getpid()


def gated_grade(*args):
    """The real grading, after writing this process's id and waiting for the test to open the gate (the folder
    ``$HYPERGVL_TEST_GATE``, which the grading host's environment carries)."""
    from hypergvl.space.scoring import grade_upload

    gate = Path(os.environ["HYPERGVL_TEST_GATE"])
    (gate / "pid").write_text(str(os.getpid()))
    while not (gate / "open").exists():
        time.sleep(0.02)
    return grade_upload(*args)


def logged_grade(*args):
    """The real grading between a ``start`` and an ``end`` line (this process, its parent) in
    ``$HYPERGVL_TEST_GATE/log``, 0.3 s apart at least: two gradings that overlapped would interleave their lines."""
    from hypergvl.space.scoring import grade_upload

    log = Path(os.environ["HYPERGVL_TEST_GATE"]) / "log"
    with open(log, "a") as f:
        f.write(f"start {os.getpid()} {os.getppid()}\n")
    time.sleep(0.3)
    try:
        return grade_upload(*args)
    finally:
        with open(log, "a") as f:
            f.write(f"end {os.getpid()} {os.getppid()}\n")


def kill_parent():
    os.kill(os.getppid(), 9)
    time.sleep(600)


def refuse(text):
    raise SubmissionError(text)
