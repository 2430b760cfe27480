"""Hub publication of hypergvl.models.datasets: build -> load round trip, card, CLI exit codes, offline push.

Every test runs offline with a temporary Hugging Face cache, so no cached copy can stand in for the repository
under test.
"""
import os
import pickle
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp
import torch
import yaml

import hypergvl.models.datasets as md
from hypergvl.models.datasets.__main__ import main

REPO = Path(__file__).resolve().parents[2]


def _real_root() -> Path | None:
    env = os.environ.get("HYPERGVL_RAW_ROOT")
    root = Path(env) if env else REPO / ".." / "shared" / "data"
    return root.resolve() if (root / "HyperGCN").is_dir() else None


@pytest.fixture(autouse=True)
def offline_hub(tmp_path, monkeypatch):
    import datasets.config

    cache = tmp_path / "hf_home" / "datasets"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache))
    # `datasets` reads these at import; another test may have imported it already
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)


def _write(root: Path, relpath: str, data: bytes | str) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


@pytest.fixture
def toy_root(tmp_path):
    """Small raw files: a HyperGCN co-citation set (sparse features), a fairness set (dense, sensitive column 0)
    and a HIC graph-level set."""
    root = tmp_path / "raw"
    folder = "HyperGCN/data/cocitation/cora"
    features = sp.csr_matrix(np.array([[1, 0, 0], [0, 2.5, 0], [0, 0, 0], [1, 1, 0], [0, 0, 3]], np.float32))
    _write(root, f"{folder}/hypergraph.pickle", pickle.dumps({7: [0, 1, 2], 2: [1, 3], 9: [4, 0]}))
    _write(root, f"{folder}/features.pickle", pickle.dumps(features))
    _write(root, f"{folder}/labels.pickle", pickle.dumps([0, 2, 1, 0, 1]))
    folder = "HyperGCL/data/fair_data/german"
    x = np.array([[1, 0.5, -1], [0, 0.25, 1], [1, -0.75, 0], [0, 0, 2]], np.float32)
    _write(root, f"{folder}/features.pickle", pickle.dumps(x))
    _write(root, f"{folder}/labels.pickle", pickle.dumps(np.array([1, 0, 0, 1])))
    _write(root, f"{folder}/hypergraph.pickle", pickle.dumps({0: [0, 1, 2], 1: [2, 3], 2: [3, 0, 1]}))
    _write(root, "HIC/data/hypergraph/RHG/RHG_3.txt",
           "3\n4 2 7\n0 0 0 0\n0 1 2\n2 3\n3 3 5\n1 1 2\n0 1\n1 2\n0 2\n2 2 7\n0/1 3\n0 1\n0 1\n")
    return root


@pytest.mark.parametrize("name", ["cora", "german", "rhg-3"])
def test_build_then_load_gives_identical_objects(toy_root, tmp_path, name):
    out = md.build(name, tmp_path / "hub" / name, toy_root)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == \
        ["README.md", "data/train-00000-of-00001.parquet"]
    for kwargs in ({}, {"add_self_loops": False}, {"add_self_loops": True}):
        raw = md.load(name, raw_root=toy_root, **kwargs)
        hub = md.load(name, hub_dir=out, **kwargs)
        if isinstance(raw, md.HypergraphGraphDataset):
            assert (len(hub), hub.num_classes, hub.num_features) == (len(raw), raw.num_classes, raw.num_features)
            assert all(a.equals(b) for a, b in zip(raw, hub))
        else:
            assert raw.equals(hub)


def test_parquet_rows_and_card(toy_root, tmp_path):
    out = md.build("cora", tmp_path / "cora", toy_root)
    table = pq.read_table(out / "data/train-00000-of-00001.parquet")
    assert table.num_rows == 1  # one row per hypergraph
    row = table.to_pylist()[0]
    assert row["num_nodes"] == 5 and row["num_hyperedges"] == 3  # stored without self-loops
    assert row["hyperedge_index"] == [[0, 1, 2, 1, 3, 0, 4], [0, 0, 0, 1, 1, 2, 2]]
    assert row["x"] is None and row["sensitive"] is None
    assert row["x_indices"] == [[0, 1, 3, 3, 4], [0, 1, 0, 1, 2]] and row["x_values"] == [1, 2.5, 1, 1, 3]
    card = (out / "README.md").read_text()
    front = yaml.safe_load(card.split("---")[1])
    assert front["license"] == "apache-2.0" and front["configs"][0]["data_files"][0]["path"] == "data/train-*.parquet"
    for needle in ("| nodes | 2708 | 5 |", "## Licence", "@inproceedings{yadati2019hypergcn", "malllabiisc/HyperGCN",
                   "data/cocitation/cora/features.pickle"):
        assert needle in card
    graph_rows = pq.read_table(md.build("rhg-3", tmp_path / "rhg", toy_root) / "data/train-00000-of-00001.parquet")
    assert graph_rows.num_rows == 3 and graph_rows.column("y").to_pylist() == [[1], [0], [1]]


def test_structure_only_build_and_option_checks(toy_root, tmp_path):
    (toy_root / "HyperGCN/data/cocitation/cora/features.pickle").unlink()
    with pytest.raises(FileNotFoundError, match="features.pickle"):
        md.build("cora", tmp_path / "a", toy_root)
    assert not (tmp_path / "a").exists()
    out = md.build("cora", tmp_path / "b", toy_root, features="none")
    with pytest.raises(ValueError, match="built without features"):
        md.load("cora", hub_dir=out)
    assert md.load("cora", hub_dir=out, features="identity").equals(
        md.load("cora", raw_root=toy_root, features="identity"))
    with pytest.raises(ValueError, match="holds dataset 'cora', not 'german'"):
        md.load("german", hub_dir=out)
    with pytest.raises(ValueError, match="either raw_root= .* or hub_dir="):
        md.load("cora", raw_root=toy_root, hub_dir=out)


def test_existing_output_is_never_destroyed(toy_root, tmp_path, capsys):
    out = tmp_path / "repo"
    out.mkdir()
    (out / "keep.txt").write_text("earlier result")
    assert main(["build", "cora", "--out", str(out), "--raw-root", str(toy_root)]) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    assert (out / "keep.txt").read_text() == "earlier result"
    # a failing build with --overwrite keeps the old folder too
    assert main(["build", "citeseer", "--out", str(out), "--raw-root", str(toy_root), "--overwrite"]) == 2
    assert (out / "keep.txt").exists()
    assert main(["build", "cora", "--out", str(out), "--raw-root", str(toy_root), "--overwrite"]) == 0
    assert not (out / "keep.txt").exists() and (out / "README.md").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".repo")] == []  # no temp folders left


def test_cli_push_offline_fails_fast_with_nonzero_exit(toy_root, tmp_path, capsys, monkeypatch):
    # the command's main in this process (a subprocess cost a fresh torch import, 40 s on the loaded machine); the
    # Hub client read HF_HUB_OFFLINE when it was imported, so its flag is set as a fresh process would have it
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    rc = main(["build", "cora", "--out", str(tmp_path / "o"), "--raw-root", str(toy_root),
               "--push", "someone/dhgbench-cora"])
    err = capsys.readouterr().err
    assert rc == 1
    assert "cannot push to someone/dhgbench-cora" in err and "offline" in err
    assert (tmp_path / "o" / "README.md").exists()  # the local build is kept


@pytest.mark.skipif(_real_root() is None, reason="real data folder absent")
@pytest.mark.parametrize("name", ["cora", "credit", "twitter-friend"])
def test_real_round_trip(tmp_path, name):
    root = _real_root()
    out = md.build(name, tmp_path / name, root)
    raw, hub = md.load(name, raw_root=root), md.load(name, hub_dir=out)
    if isinstance(raw, md.HypergraphGraphDataset):
        assert len(raw) == len(hub) and all(a.equals(b) for a, b in zip(raw, hub))
        card = (out / "README.md").read_text()
        assert "| avg_hyperedges | 84.3 | 84.3 |" in card and "| avg_nodes | 21.6 | 21.6 |" in card
    else:
        assert raw.equals(hub)
        assert torch.equal(hub.x.to_dense() if hub.x.is_sparse_csr else hub.x,
                           raw.x.to_dense() if raw.x.is_sparse_csr else raw.x)
