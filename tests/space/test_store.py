"""The SQLite store against the store contract, plus what only SQLite promises: several processes, SIGKILL."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from store_contract import CONTRACT, entry
from hypergvl.space.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("check", CONTRACT, ids=lambda f: f.__name__)
def test_sqlite_contract(check, tmp_path):
    check(lambda: SQLiteStore(tmp_path / "store.sqlite"))


def test_claims_race_between_processes(tmp_path):
    """Eight processes claim one request at the same moment: exactly one wins."""
    from store_contract import request

    db = tmp_path / "s.sqlite"
    SQLiteStore(db).add_request(request())
    go = tmp_path / "go"
    code = textwrap.dedent(f"""
        import sys, time, os
        sys.path.insert(0, {str(ROOT)!r})
        from hypergvl.space.store import SQLiteStore
        s = SQLiteStore({str(db)!r})
        while not os.path.exists({str(go)!r}):
            time.sleep(0.005)
        r = s.claim(sys.argv[1], 60)
        print("won" if r else "lost")
    """)
    procs = [subprocess.Popen([sys.executable, "-c", code, f"w{i}"], stdout=subprocess.PIPE, text=True)
             for i in range(8)]
    go.write_text("")
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert sorted(outs) == ["lost"] * 7 + ["won"]


def test_sigkill_during_writes_leaves_whole_entries(tmp_path):
    """A writer killed with SIGKILL while adding entries: every stored entry is complete, the store opens."""
    db = tmp_path / "s.sqlite"
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r}); sys.path.insert(0, {str(ROOT / 'tests' / 'space')!r})
        from store_contract import entry
        from hypergvl.space.store import SQLiteStore
        s = SQLiteStore({str(db)!r})
        i = 0
        while True:
            e = entry(model=f"org/m{{i}}", upload=f"u{{i}}")
            e.cells = [[0, 0, 0, 0, 0, 2, 1]] * 2000  # a large document: the kill lands mid-write
            s.add_entry(e)
            print(i, flush=True)
            i += 1
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    for _ in range(20):
        p.stdout.readline()
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    entries = SQLiteStore(db).entries()
    assert len(entries) >= 20
    assert all(len(e.cells) == 2000 for e in entries)
    SQLiteStore(db).add_entry(entry(model="org/after", upload="after"))
