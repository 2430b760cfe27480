"""A hypergraph of your own: a local folder of plain files, loaded like a registered dataset.

``load("./my-hypergraph")`` (and ``hypergvl train --dataset ./my-hypergraph``) reads a folder instead of a registered
name when the name contains a path separator (``/``; registered names never do). The folder holds either

- one hypergraph (node classification, hyperedge prediction):

  - ``hyperedges.txt``: one hyperedge per line, its node ids (0-based) separated by commas or whitespace;
  - ``labels.txt``: one integer label per line, line ``i`` for node ``i`` (so the number of lines is the number of
    nodes; a node may be in no hyperedge; node classification adds DHG-Bench's singleton hyperedge ``{v}`` for every
    node not already alone in one, as for the registered sets);
  - ``features.npy`` (a float ``[N, F]`` array, read without pickle) or ``features.txt`` (``N`` rows of numbers
    separated by commas or whitespace); optional when asking for ``features="none" | "identity" | "onehot-degree"``;

- or a set of hypergraphs (hypergraph classification): ``graphs.txt`` in the HIC text format the graph-level sets
  are published in (first line the number of graphs; per graph a line ``num_vertices num_hyperedges label``, a line
  of ``num_vertices`` vertex labels, then one line of vertex ids per hyperedge), processed as theirs are (one-hot
  degree features, labels mapped to ``0..C-1`` in sorted order).

Everything after reading (self loops, derived features, validation) is :func:`hypergvl.models.datasets.load`'s,
the same as for the registered sets, so a folder holding a registered set's data gives the registered set's object.
"""
from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import torch

from .data import HypergraphData, HypergraphGraphDataset
from .formats import _features, _labels, load_hic
from .processing import incidence_from_hyperedges
from .sources import RawReader, RawSource

__all__ = ["is_folder_name", "read_folder", "FOLDER_FILES"]

#: the files a folder may hold, by level
FOLDER_FILES = {"node": ("hyperedges.txt", "labels.txt", "features.npy | features.txt"), "graph": ("graphs.txt",)}


def is_folder_name(name: str | os.PathLike) -> bool:
    """Whether ``name`` names a folder rather than a registered dataset: it contains a path separator."""
    text = os.fspath(name)
    return "/" in text or os.sep in text


def _numbers(line: str) -> list[str]:
    return line.replace(",", " ").split()


def _read_text(path: Path) -> str:
    try:
        return path.read_text()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file") from None


def _hyperedges(path: Path, num_nodes: int) -> list[list[int]]:
    edges = []
    for k, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            members = [int(v) for v in _numbers(line)]
        except ValueError:
            raise ValueError(f"{path} line {k}: expected node ids separated by commas or whitespace, "
                             f"got {line[:80]!r}") from None
        bad = [v for v in members if not 0 <= v < num_nodes]
        if bad:
            raise ValueError(f"{path} line {k}: node id {bad[0]} is not in [0, {num_nodes}) (0-based ids; "
                             f"labels.txt has {num_nodes} lines)")
        if len(set(members)) != len(members):
            raise ValueError(f"{path} line {k}: a hyperedge lists a node twice: {line[:80]!r}")
        edges.append(members)
    if not edges:
        raise ValueError(f"{path}: no hyperedges")
    return edges


def _node_labels(path: Path) -> np.ndarray:
    rows = [line.strip() for line in _read_text(path).splitlines()]
    while rows and not rows[-1]:
        rows.pop()
    if not rows:
        raise ValueError(f"{path}: no labels")
    labels = []
    for k, row in enumerate(rows, start=1):
        try:
            labels.append(int(row))
        except ValueError:
            raise ValueError(f"{path} line {k}: expected one integer label, got {row[:80]!r}") from None
    return _labels(labels, str(path))


def _read_features(folder: Path, num_nodes: int) -> torch.Tensor:
    npy, txt = folder / "features.npy", folder / "features.txt"
    if npy.exists():
        try:
            array = np.load(npy, allow_pickle=False)
        except ValueError as err:
            raise ValueError(f"{npy}: not a plain numeric .npy array ({err})") from None
        where = str(npy)
    elif txt.exists():
        text = _read_text(txt).replace(",", " ")
        try:
            array = np.loadtxt(io.StringIO(text), dtype=np.float32, ndmin=2)
        except ValueError as err:
            raise ValueError(f"{txt}: expected {num_nodes} rows of numbers ({err})") from None
        where = str(txt)
    else:
        raise FileNotFoundError(f"{folder}: no features.npy or features.txt. For structure-only uses ask for "
                                "features='none', 'identity' or 'onehot-degree' explicitly")
    if not np.issubdtype(np.asarray(array).dtype, np.number):
        raise ValueError(f"{where}: features must be numbers, got dtype {array.dtype}")
    x = _features(array, num_nodes, where)
    if not torch.isfinite(x).all():
        raise ValueError(f"{where}: features hold NaN or infinite values")
    return x


def read_folder(folder: str | os.PathLike, *, features: bool) -> HypergraphData | HypergraphGraphDataset:
    """The raw structure in ``folder`` (no self loops; see the module docstring for the files). Errors name the file
    and line; a missing file raises ``FileNotFoundError`` naming what the folder must hold."""
    path = Path(folder)
    name = path.resolve().name or str(folder)
    if not path.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder (a dataset name with '/' is read as a folder holding "
                                f"{', '.join(FOLDER_FILES['node'])} or {FOLDER_FILES['graph'][0]})")
    if (path / "graphs.txt").exists():
        if (path / "hyperedges.txt").exists():
            raise ValueError(f"{folder}: holds both graphs.txt (a set of hypergraphs) and hyperedges.txt (one "
                             "hypergraph); keep one")
        return load_hic(RawReader(RawSource(name, "", None, str(path)), raw_root=path), "graphs.txt", name=name)
    missing = [f for f in ("hyperedges.txt", "labels.txt") if not (path / f).exists()]
    if missing:
        raise FileNotFoundError(f"{folder}: missing {', '.join(missing)}; a hypergraph folder holds "
                                f"{', '.join(FOLDER_FILES['node'])} (or {FOLDER_FILES['graph'][0]} for a set of "
                                "hypergraphs)")
    labels = _node_labels(path / "labels.txt")
    if labels.min() < 0:
        raise ValueError(f"{path / 'labels.txt'}: labels must be >= 0, got {int(labels.min())}")
    n = labels.size
    index, m = incidence_from_hyperedges(_hyperedges(path / "hyperedges.txt", n))
    x = _read_features(path, n) if features else torch.zeros((n, 0), dtype=torch.float32)
    return HypergraphData(x=x, y=torch.from_numpy(labels), hyperedge_index=index, num_hyperedges=m, num_nodes=n,
                          name=name)
