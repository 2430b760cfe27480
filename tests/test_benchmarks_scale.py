"""Smoke test of benchmarks/scale.py at a 0.001 scale: one model runs, one is forced out of memory under a small
cap (a hidden width of two million needs gigabytes for its first weight alone, over the cap's headroom above the
interpreter and torch), the OOM is recorded with the cap, and a rerun skips both finished points. The driver
runs in this process; each model still runs in its own subprocess (two children, a few seconds each)."""
import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "scale.py"


@pytest.fixture(scope="module")
def scale():
    spec = importlib.util.spec_from_file_location("benchmarks_scale", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(scale, out: Path, capsys, *extra: str) -> tuple[int, str]:
    rc = scale.main(["--scale", "0.001", "--datasets", "trivago", "--out", str(out), "--no-progress", *extra])
    return rc, capsys.readouterr().out


def _point(out: Path, model: str) -> dict:
    """The model's point: ``<model>/seed0.json`` (one file per seed) or ``<model>.json`` (one per cell)."""
    root = out / "scale-0.001" / "efficiency" / "points" / "synthetic-trivago"
    (path,) = [p for p in root.rglob("*.json") if p.stem == model or p.parent.name == model]
    return json.loads(path.read_text())


def test_scale_ok_oom_and_resume(scale, tmp_path, capsys):
    rc, out = _run(scale, tmp_path, capsys, "--models", "MLP")
    assert rc == 0, out
    doc = _point(tmp_path, "MLP")
    assert doc["status"] == "ok" and doc["dataset_info"]["nodes"] == 172  # 0.001 x 172,738
    assert doc["efficiency"]["peak_memory_mib"] and "| MLP | " in out and "OOM" not in out

    table = tmp_path / "scale.md"
    rc, out = _run(scale, tmp_path, capsys, "--models", "HGNN", "--memory-cap-gib", "2.5",
                   "--set", "hidden=2000000", "--table", str(table))
    assert rc == 0, out
    doc = _point(tmp_path, "HGNN")
    assert doc["status"] == "oom" and doc["memory_cap_gib"] == 2.5
    assert "| HGNN | OOM (cap 2.5 GiB) |" in out and "| HGNN | OOM (cap 2.5 GiB) |" in table.read_text()

    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.json")}
    rc, out = _run(scale, tmp_path, capsys, "--models", "HGNN", "--memory-cap-gib", "2.5", "--set", "hidden=2000000")
    assert rc == 0 and "OOM (cap 2.5 GiB)" in out
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.json")} == before  # skipped, nothing rewritten


def test_scale_rejects_bad_flags(scale, tmp_path, capsys):
    assert scale.main(["--out", str(tmp_path), "--models", "NoSuchModel"]) == 2
    assert "unknown model(s) NoSuchModel" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        scale.main(["--out", str(tmp_path), "--scale", "2"])
    assert e.value.code == 2 and "--scale must be in (0, 1]" in capsys.readouterr().err
