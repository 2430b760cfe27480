"""A hypergraph of your own (``hypergvl.models.datasets.folder``): a folder of plain files loads like a registered set.

Truth: the registered Cora and RHG-3 objects (their raw upstream files through their own loaders) against the same
hypergraphs written out as a folder; hand-written toy folders for the errors; the trainer end to end on a folder.
"""
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import hypergvl.models.datasets as md
from hypergvl.models import trainer as TR


def write_folder(folder: Path, hyperedges, labels, features=None, sep=" ") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hyperedges.txt").write_text("".join(sep.join(map(str, e)) + "\n" for e in hyperedges))
    (folder / "labels.txt").write_text("".join(f"{int(v)}\n" for v in labels))
    if features is not None:
        np.save(folder / "features.npy", np.asarray(features, dtype=np.float32))
    return folder


def toy(folder: Path, **kw) -> Path:
    """Two communities of four nodes; features say the class up to noise."""
    rng = np.random.default_rng(0)
    labels = [0, 0, 0, 0, 1, 1, 1, 1]
    x = np.eye(2)[labels] + 0.1 * rng.standard_normal((8, 2))
    return write_folder(folder, [[0, 1, 2], [1, 2, 3], [4, 5, 6], [5, 6, 7]], labels, x, **kw)


def communities(folder: Path) -> Path:
    """Two communities of 30 nodes, 20 hyperedges of 3-4 nodes inside each: big enough for hyperedge prediction's
    negatives (sized, motif, clique) and its 60/20/20 hyperedge split."""
    rng = np.random.default_rng(1)
    edges = [sorted(rng.choice(30, size=rng.integers(3, 5), replace=False) + 30 * c) for c in (0, 1) for _ in range(20)]
    labels = [0] * 30 + [1] * 30
    return write_folder(folder, edges, labels, np.eye(2)[labels] + 0.5 * rng.standard_normal((60, 2)))


def hic(folder: Path) -> Path:
    """40 graphs in HIC text: label 7 graphs are paths of pairs, label 9 graphs one hyperedge over all 6 nodes."""
    folder.mkdir(parents=True)
    lines = ["40"]
    for g in range(40):
        edges = [[v, v + 1] for v in range(5)] if g % 2 else [list(range(6))]
        lines += [f"6 {len(edges)} {7 if g % 2 else 9}", " ".join(["0"] * 6), *(" ".join(map(str, e)) for e in edges)]
    (folder / "graphs.txt").write_text("\n".join(lines) + "\n")
    return folder


def test_a_folder_holding_cora_loads_as_the_registered_cora(tmp_path, shared_data):
    raw = md.load("cora", raw_root=shared_data, add_self_loops=False)
    folder = write_folder(tmp_path / "cora", raw.hyperedges(), raw.y.tolist(), raw.x.to_dense().numpy(), sep=",")
    for loops in (None, False):
        ours, theirs = md.load(str(folder), add_self_loops=loops), md.load("cora", raw_root=shared_data, add_self_loops=loops)
        assert (ours.num_nodes, ours.num_hyperedges) == (theirs.num_nodes, theirs.num_hyperedges)
        assert torch.equal(ours.hyperedge_index, theirs.hyperedge_index) and torch.equal(ours.y, theirs.y)
        assert torch.equal(ours.x, theirs.x.to_dense()) and ours.name == "cora"
    ident = md.load(str(folder), features="identity")
    assert ident.num_features == raw.num_nodes


def test_a_folder_holding_hic_text_loads_as_the_registered_set(tmp_path, shared_data):
    folder = tmp_path / "rhg"
    folder.mkdir()
    shutil.copy(shared_data / "HIC/data/hypergraph/RHG/RHG_3.txt", folder / "graphs.txt")
    ours, theirs = md.load(f"{folder}/"), md.load("rhg-3", raw_root=shared_data)
    assert (len(ours), ours.num_classes, ours.num_features) == (len(theirs), theirs.num_classes, theirs.num_features)
    for a, b in zip(ours.graphs[::97], theirs.graphs[::97]):
        assert torch.equal(a.hyperedge_index, b.hyperedge_index) and torch.equal(a.x, b.x) and torch.equal(a.y, b.y)
    with pytest.raises(ValueError, match="graph-level set"):
        md.load(str(folder), features="identity")


def test_parsing_graphs_txt_prints_no_bar_into_a_log(tmp_path, capfd):
    """The parser's bar is for a terminal and a parse over a second: a log, a capture or a pipe gets no
    ``parse graphs.txt: 0%`` line (the GPU smoke's log had one while its trainer was asked for no progress)."""
    md.load(str(hic(tmp_path / "graphs")))
    assert "parse" not in capfd.readouterr().err


@pytest.mark.parametrize("mutate, error, match", [
    (lambda f: (f / "hyperedges.txt").write_text("0 1 2\n3 8\n"), ValueError,
     r"hyperedges.txt line 2: node id 8 is not in \[0, 8\)"),
    (lambda f: (f / "hyperedges.txt").write_text("0 1 x\n"), ValueError, r"hyperedges.txt line 1: expected node ids"),
    (lambda f: (f / "hyperedges.txt").write_text("0 1 1\n"), ValueError, "lists a node twice"),
    (lambda f: (f / "labels.txt").write_text("0\n1\ncat\n"), ValueError, r"labels.txt line 3: expected one integer"),
    (lambda f: (f / "labels.txt").unlink(), FileNotFoundError, "missing labels.txt"),
    (lambda f: (f / "features.npy").unlink(), FileNotFoundError, "no features.npy or features.txt.*features='none'"),
    (lambda f: np.save(f / "features.npy", np.ones((7, 2), np.float32)), ValueError, "7 feature rows for 8"),
    (lambda f: np.save(f / "features.npy", np.full((8, 2), np.nan, np.float32)), ValueError, "NaN or infinite"),
    (lambda f: np.save(f / "features.npy", np.array([{"a": 1}] * 8, dtype=object), allow_pickle=True), ValueError,
     "not a plain numeric .npy array"),
    (lambda f: (f / "graphs.txt").write_text("0\n"), ValueError, "holds both graphs.txt"),
])
def test_bad_folders_give_errors_naming_the_file(tmp_path, mutate, error, match):
    folder = toy(tmp_path / "t")
    mutate(folder)
    with pytest.raises(error, match=match):
        md.load(str(folder))


def test_features_txt_and_a_missing_folder(tmp_path):
    folder = toy(tmp_path / "t")
    x = np.load(folder / "features.npy")
    (folder / "features.npy").unlink()
    (folder / "features.txt").write_text("".join(",".join(f"{v:.6f}" for v in row) + "\n" for row in x))
    assert torch.allclose(md.load(str(folder)).x, torch.from_numpy(x), atol=1e-6)
    with pytest.raises(FileNotFoundError, match="no such folder"):
        md.load(str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="options do not apply"):
        md.load(str(folder), feature_noise=0.1)


@pytest.mark.parametrize("task, protocol", [("node", None), ("node", "allset"), ("hyperedge", None), ("graph", None)])
def test_the_trainer_runs_on_a_folder(tmp_path, task, protocol):
    folder = {"node": toy, "hyperedge": communities, "graph": hic}[task](tmp_path / "own")
    sets = ["epochs=30"] + ([f"protocol={protocol}"] if protocol else [])
    summary = TR.run_experiment("HGNN", str(folder), task, out=tmp_path / "out", runs=1, overrides=sets,
                                progress=False)
    assert summary["dataset"] == str(folder) and len(summary["runs"]) == 1
    if task in ("node", "graph"):  # two clean communities / two degree patterns: every test item right
        assert summary["mean"] == 100.0


def test_a_folder_that_is_not_a_hypergraph_fails_fast_from_the_command_line(tmp_path):
    cmd = [sys.executable, "-m", "hypergvl.models.train", "--model", "HGNN", "--dataset", str(tmp_path / "none"),
           "--task", "node", "--out", str(tmp_path / "o")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "does not exist" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "o" / "runs").exists()
