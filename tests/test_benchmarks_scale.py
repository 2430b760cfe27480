"""Smoke test of benchmarks/scale.py at a 0.001 scale: one model runs, one is forced out of memory under a small
cap (a hidden width of twenty million needs tens of gigabytes for its first weight alone, over the cap's headroom
above the interpreter and torch: the CUDA build of torch maps 3.3 GB of address space at import, so a cap below about
4 GiB fails at import instead of at the allocation), the OOM is recorded with the cap, and a rerun skips both finished points. The driver
runs in this process; each model still runs in its own subprocess (two children, a few seconds each)."""
import json
from pathlib import Path

import pytest

from benchmark_scripts import load_script


@pytest.fixture(scope="module")
def scale():
    return load_script("scale")


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
    rc, out = _run(scale, tmp_path, capsys, "--models", "HGNN", "--memory-cap-gib", "6",
                   "--set", "hidden=20000000", "--table", str(table))
    assert rc == 0, out
    doc = _point(tmp_path, "HGNN")
    assert doc["status"] == "oom" and doc["memory_cap_gib"] == 6
    assert "| HGNN | OOM (cap 6 GiB) |" in out and "| HGNN | OOM (cap 6 GiB) |" in table.read_text()

    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.json")}
    rc, out = _run(scale, tmp_path, capsys, "--models", "HGNN", "--memory-cap-gib", "6", "--set", "hidden=20000000")
    assert rc == 0 and "OOM (cap 6 GiB)" in out
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.json")} == before  # skipped, nothing rewritten


def test_scale_rejects_bad_flags(scale, tmp_path, capsys):
    assert scale.main(["--out", str(tmp_path), "--models", "NoSuchModel"]) == 2
    assert "unknown model(s) NoSuchModel" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        scale.main(["--out", str(tmp_path), "--scale", "2"])
    assert e.value.code == 2 and "--scale must be in (0, 1]" in capsys.readouterr().err


# ------------------------------------------------------------ benchmarks/_dhgbench_shim.py (epoch_time's stand-ins)

def _shim():
    return load_script("_dhgbench_shim")


def test_shim_scatter_and_sparse_products_match_naive_loops():
    import torch

    shim = _shim()
    g = torch.Generator().manual_seed(0)
    src, index = torch.randn(7, 3, generator=g), torch.tensor([0, 2, 2, 0, 4, 2, 0])  # row 1 and 3 get nothing
    for reduce, naive in (("sum", lambda r: r.sum(0)), ("mean", lambda r: r.mean(0)),
                          ("max", lambda r: r.max(0).values), ("mul", lambda r: r.prod(0))):
        out = shim.scatter(src, index, dim=0, dim_size=5, reduce=reduce)
        for t in range(5):
            rows = src[index == t]
            expect = naive(rows) if len(rows) else torch.full((3,), 1.0 if reduce == "mul" else 0.0)
            assert torch.allclose(out[t], expect), (reduce, t)
    soft = shim.scatter_softmax(src[:, 0], index, dim=0)
    for t in (0, 2, 4):
        assert torch.allclose(soft[index == t], torch.softmax(src[index == t, 0], 0))
    index2, value = torch.tensor([[0, 0, 2, 1], [1, 3, 0, 1]]), torch.tensor([1.0, 2.0, 3.0, 4.0])
    dense = torch.zeros(3, 4).index_put_((index2[0], index2[1]), value, accumulate=True)
    matrix = torch.randn(4, 5, generator=g)
    assert torch.allclose(shim.spmm(index2, value, 3, 4, matrix), dense @ matrix)
    i, v = shim.spspmm(index2, value, index2.flip(0), value, 3, 4, 3)
    assert torch.allclose(torch.zeros(3, 3).index_put_((i[0], i[1]), v), dense @ dense.t())
    st = shim.SparseTensor(row=index2[0], col=index2[1], value=value, sparse_sizes=(3, 4))
    assert torch.allclose(shim.matmul(st, matrix.expand(2, 4, 5)), (dense @ matrix).expand(2, 3, 5))
    assert shim.compute([shim.delayed(lambda a: a + 1)(k) for k in range(3)]) == ([1, 2, 3],)


def test_shim_qr_is_the_removed_functions_mapping():
    import torch

    shim = _shim()
    a = torch.randn(5, 3, generator=torch.Generator().manual_seed(0))
    q, r = shim.qr(a)  # some=True: reduced
    assert q.shape == (5, 3) and r.shape == (3, 3)
    assert torch.allclose(q @ r, a, atol=1e-5) and torch.allclose(q.T @ q, torch.eye(3), atol=1e-5)
    q, r = shim.qr(a, some=False)
    assert q.shape == (5, 5) and r.shape == (5, 3) and torch.allclose(q @ r, a, atol=1e-5)
