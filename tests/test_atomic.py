"""hypergvl.atomic: the one way files and checkpoint folders are replaced, and the only place that renames them."""
from __future__ import annotations

import ast
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hypergvl.atomic import atomic_path, latest_dir, replace_dir, temp_path, write_json, write_text

ROOT = Path(__file__).resolve().parents[1]


def test_write_replaces_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "a.json"
    write_text(target, "old\n")
    write_json(target, {"b": 1, "a": [1, 2]}, sort_keys=True)
    assert json.loads(target.read_text()) == {"a": [1, 2], "b": 1} and target.read_text().endswith("\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


def test_a_failed_write_keeps_the_old_file(tmp_path):
    target = tmp_path / "a.txt"
    write_text(target, "old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("writer died")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_mode_is_set_before_the_content_is_written(tmp_path):
    target = tmp_path / "secret.json"
    with atomic_path(target, mode=0o600) as tmp:
        assert stat.S_IMODE(tmp.stat().st_mode) == 0o600  # never readable by others, not even while written
        tmp.write_text("{}")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_temporary_names_are_hidden_and_unique_per_writer(tmp_path):
    name = temp_path(tmp_path / "x.parquet").name
    assert name.startswith(".x.parquet.tmp-") and str(os.getpid()) in name


def test_a_killed_writer_leaves_the_old_file_whole(tmp_path):
    """SIGKILL in the middle of a large write: the target still holds the previous content in full."""
    target = tmp_path / "big.txt"
    write_text(target, "previous")
    code = ("import sys, time; from hypergvl.atomic import atomic_path\n"
            "with atomic_path(sys.argv[1]) as tmp, open(tmp, 'w') as f:\n"
            "    while True:\n        f.write('x' * 65536); f.flush(); time.sleep(0.001)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(target)])
    while not list(tmp_path.glob(".big.txt.tmp-*")):  # no time bound: a writer that exits instead fails here
        assert proc.poll() is None, "the writer exited before it wrote"
        time.sleep(0.05)
    time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert target.read_text() == "previous"
    assert list(tmp_path.glob(".big.txt.tmp-*")), "the killed writer's temporary file is where cleaners look for it"


def test_replace_dir_leaves_a_whole_folder_at_every_step(tmp_path, monkeypatch):
    ckpt = tmp_path / "checkpoint"

    def folder(name, value):
        d = tmp_path / name
        d.mkdir()
        (d / "state.json").write_text(value)
        return d

    replace_dir(folder("new1", "1"), ckpt)
    assert latest_dir(ckpt, "state.json") == ckpt and (ckpt / "state.json").read_text() == "1"
    # a crash after the old checkpoint moved aside and before the new one moved in: the old one is found
    real = os.replace
    calls = []

    def crash_on_second(src, dst):
        calls.append((src, dst))
        if len(calls) == 2:
            raise KeyboardInterrupt("killed")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", crash_on_second)
    with pytest.raises(KeyboardInterrupt):
        replace_dir(folder("new2", "2"), ckpt)
    monkeypatch.setattr(os, "replace", real)
    found = latest_dir(ckpt, "state.json")
    assert found == tmp_path / "checkpoint.old" and (found / "state.json").read_text() == "1"
    replace_dir(folder("new3", "3"), ckpt)
    assert (ckpt / "state.json").read_text() == "3" and not (tmp_path / "checkpoint.old").exists()
    assert latest_dir(tmp_path / "none", "state.json") is None


def renames(call: ast.Call) -> bool:
    """``os.replace(a, b)`` / ``os.rename(a, b)``, or ``path.replace(b)`` / ``path.rename(b)`` (one argument, no
    keywords: ``str.replace`` takes two, ``dataclasses.replace`` keywords)."""
    f = call.func
    if not isinstance(f, ast.Attribute) or f.attr not in ("replace", "rename"):
        return False
    if isinstance(f.value, ast.Name) and f.value.id == "os":
        return True
    return len(call.args) == 1 and not call.keywords and not (isinstance(f.value, ast.Name)
                                                               and f.value.id in ("dataclasses", "re", "str"))


def test_the_rename_finder_finds_renames():
    calls = [ast.parse(c).body[0].value for c in ("os.replace(a, b)", "tmp.replace(path)", "p.rename(q)",
                                                  "s.replace('a', 'b')", "dataclasses.replace(x, a=1)")]
    assert [renames(c) for c in calls] == [True, True, True, False, False]


# a single rename of a finished folder into a new name (a build moved into place) needs no helper
RENAMES_ALLOWED = {"hypergvl.space.testsets": 1}


def test_no_module_renames_files_itself():
    """Every tmp-and-rename goes through hypergvl.atomic: no other module calls os.replace / os.rename /
    Path.replace / Path.rename, so there is one implementation to get right (and one temp-name pattern)."""
    counts = {}
    for folder, package in (("hypergvl_dataset", "hypergvl"), ("models", "hypergvl.models"),
                            ("evaluators", "hypergvl.evaluators"), ("router", "hypergvl.router"),
                            ("space", "hypergvl.space"), ("benchmarks", "benchmarks")):
        for path in (ROOT / folder).rglob("*.py"):
            if "results" in path.parts or path.name == "atomic.py":
                continue
            module = ".".join([package, *path.relative_to(ROOT / folder).with_suffix("").parts])
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and renames(node):
                    counts[module] = counts.get(module, 0) + 1
    assert counts == RENAMES_ALLOWED
