"""The hypergraph data objects every DHG-Bench loader returns.

DHG-Bench (sec. 2, "Preliminary"): "Let G(V, E, X) represent a hypergraph with vertex set V, hyperedge set E
... X in R^{|V| x F} is the node feature matrix". A hypergraph is stored as PyG's ``HypergraphConv`` takes
it: ``hyperedge_index`` is a ``[2, nnz]`` LongTensor whose row 0 holds node ids and row 1 hyperedge ids, one
column per incidence (v, e). For the toy hypergraph e0 = {v0, v1, v2}, e1 = {v1, v3}::

    hyperedge_index = [[0, 1, 2, 1, 3],
                       [0, 0, 0, 1, 1]]

Node-level sets (node classification, hyperedge prediction, fairness) are one :class:`HypergraphData`;
graph-level sets (hypergraph classification, sec. 3.1) are a :class:`HypergraphGraphDataset` of them, each
with a one-element label.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data

__all__ = ["HypergraphData", "HypergraphGraphDataset", "PyGHypergraph"]


class PyGHypergraph(Data):
    """A PyG :class:`~torch_geometric.data.Data` holding ``hyperedge_index`` that batches correctly.

    PyG's default ``__inc__`` shifts every ``*_index`` attribute by ``num_nodes``; when hypergraphs are
    batched, row 1 of ``hyperedge_index`` (hyperedge ids) must instead shift by ``num_hyperedges``.
    """

    def __inc__(self, key, value, *args, **kwargs):
        if key == "hyperedge_index":
            return torch.tensor([[self.num_nodes], [int(self.num_hyperedges)]])
        return super().__inc__(key, value, *args, **kwargs)


def _fail(attr: str, message: str) -> None:
    raise ValueError(f"HypergraphData.{attr}: {message}")


@dataclass(eq=False)
class HypergraphData:
    """One hypergraph with node features, labels and optional fairness attribute and split masks.

    Args:
        x: ``[N, F]`` float32 node features, dense or a ``torch.sparse_csr`` tensor (bag-of-words sets stay
            sparse). ``F`` may be 0 for a structure-only load.
        y: ``[N]`` long node labels, or a one-element long tensor for one graph of a graph-level set.
        hyperedge_index: ``[2, nnz]`` long; row 0 node ids in ``[0, N)``, row 1 hyperedge ids in ``[0, M)``;
            every hyperedge id occurs (no empty hyperedge) and no (node, hyperedge) pair repeats.
        num_hyperedges: ``M``.
        num_nodes: ``N``.
        sensitive: ``[N]`` long binary sensitive attribute (fairness sets), else ``None``.
        train_mask, val_mask, test_mask: ``[N]`` bool masks, or ``None``.
        name: the registry name of the dataset.
    """

    x: Tensor
    y: Tensor
    hyperedge_index: Tensor
    num_hyperedges: int
    num_nodes: int
    sensitive: Tensor | None = None
    train_mask: Tensor | None = None
    val_mask: Tensor | None = None
    test_mask: Tensor | None = None
    name: str = ""

    @property
    def num_features(self) -> int:
        return int(self.x.shape[1])

    @property
    def num_incidences(self) -> int:
        return int(self.hyperedge_index.shape[1])

    @property
    def num_classes(self) -> int:
        """``max(y) + 1`` (labels are ``0..C-1``)."""
        return int(self.y.max()) + 1 if self.y.numel() else 0

    def replace(self, **changes) -> "HypergraphData":
        """A copy with the given fields replaced (tensors are shared, not copied)."""
        return dataclasses.replace(self, **changes)

    def hyperedges(self) -> list[list[int]]:
        """The hyperedges as sorted node lists, in hyperedge-id order."""
        ei = self.hyperedge_index.numpy()
        order = np.lexsort((ei[0], ei[1]))
        nodes, edges = ei[0, order], ei[1, order]
        bounds = np.searchsorted(edges, np.arange(self.num_hyperedges + 1))
        return [nodes[bounds[i]:bounds[i + 1]].tolist() for i in range(self.num_hyperedges)]

    def node_degrees(self) -> Tensor:
        """``[N]`` long: the number of hyperedges each node belongs to."""
        return torch.bincount(self.hyperedge_index[0], minlength=self.num_nodes)

    def equals(self, other: "HypergraphData") -> bool:
        """True when both hold the same values, dtypes and feature layout (masks included)."""
        if not isinstance(other, HypergraphData) or (self.name, self.num_nodes, self.num_hyperedges) != \
                (other.name, other.num_nodes, other.num_hyperedges):
            return False
        for attr in ("y", "hyperedge_index", "sensitive", "train_mask", "val_mask", "test_mask"):
            a, b = getattr(self, attr), getattr(other, attr)
            if (a is None) != (b is None) or (a is not None and (a.dtype != b.dtype or not torch.equal(a, b))):
                return False
        a, b = self.x, other.x
        if a.layout != b.layout or a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.layout == torch.sparse_csr:
            return all(torch.equal(f(a), f(b)) for f in (Tensor.crow_indices, Tensor.col_indices, Tensor.values))
        return torch.equal(a, b)

    def validate(self) -> None:
        """Check every invariant of the class docstring; raise ``ValueError`` naming the attribute and value."""
        n, m = self.num_nodes, self.num_hyperedges
        for attr in ("num_nodes", "num_hyperedges"):
            value = getattr(self, attr)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                _fail(attr, f"must be a non-negative int, got {value!r}")
        if not isinstance(self.x, Tensor):
            _fail("x", f"must be a tensor, got {type(self.x).__name__}")
        if self.x.layout not in (torch.strided, torch.sparse_csr):
            _fail("x", f"layout must be dense or sparse_csr, got {self.x.layout}")
        if self.x.dim() != 2 or self.x.shape[0] != n:
            _fail("x", f"shape must be [num_nodes={n}, F], got {list(self.x.shape)}")
        if self.x.dtype != torch.float32:
            _fail("x", f"dtype must be float32, got {self.x.dtype}")
        if not isinstance(self.y, Tensor) or self.y.dtype != torch.long:
            _fail("y", f"must be a long tensor, got {getattr(self.y, 'dtype', type(self.y).__name__)}")
        if tuple(self.y.shape) != (n,) and not (self.y.dim() <= 1 and self.y.numel() == 1):
            _fail("y", f"shape must be [num_nodes={n}] or a single graph label, got {list(self.y.shape)}")
        if self.y.numel() and int(self.y.min()) < 0:
            _fail("y", f"labels must be >= 0, got min {int(self.y.min())}")
        ei = self.hyperedge_index
        if not isinstance(ei, Tensor) or ei.dtype != torch.long or ei.dim() != 2 or ei.shape[0] != 2:
            _fail("hyperedge_index", f"must be a long tensor of shape [2, nnz], got "
                  f"{getattr(ei, 'dtype', type(ei).__name__)} {list(getattr(ei, 'shape', []))}")
        if ei.numel():
            lo, hi = int(ei[0].min()), int(ei[0].max())
            if lo < 0 or hi >= n:
                bad = lo if lo < 0 else hi
                _fail("hyperedge_index", f"row 0 (node ids) must lie in [0, {n}), found node {bad}")
            lo, hi = int(ei[1].min()), int(ei[1].max())
            if lo < 0 or hi >= m:
                bad = lo if lo < 0 else hi
                _fail("hyperedge_index", f"row 1 (hyperedge ids) must lie in [0, num_hyperedges={m}), "
                      f"found hyperedge {bad}")
            pairs = np.sort((ei[1] * max(n, 1) + ei[0]).numpy())
            if np.any(pairs[1:] == pairs[:-1]):
                _fail("hyperedge_index", "a (node, hyperedge) incidence is repeated")
        sizes = torch.bincount(ei[1], minlength=m) if ei.numel() else torch.zeros(m, dtype=torch.long)
        if m and int(sizes.min()) == 0:
            _fail("hyperedge_index", f"hyperedge {int(torch.argmin(sizes))} is empty "
                  f"(num_hyperedges={m} but it has no incidence)")
        if self.sensitive is not None:
            s = self.sensitive
            if not isinstance(s, Tensor) or s.dtype != torch.long or tuple(s.shape) != (n,):
                _fail("sensitive", f"must be a long tensor of shape [{n}], got "
                      f"{getattr(s, 'dtype', type(s).__name__)} {list(getattr(s, 'shape', []))}")
        for attr in ("train_mask", "val_mask", "test_mask"):
            mask = getattr(self, attr)
            if mask is not None and (not isinstance(mask, Tensor) or mask.dtype != torch.bool
                                     or tuple(mask.shape) != (n,)):
                _fail(attr, f"must be a bool tensor of shape [{n}], got "
                      f"{getattr(mask, 'dtype', type(mask).__name__)} {list(getattr(mask, 'shape', []))}")

    def to_pyg(self) -> PyGHypergraph:
        """The same hypergraph as a PyG ``Data`` (attributes ``x``, ``y``, ``hyperedge_index``,
        ``num_nodes``, ``num_hyperedges`` and, when set, ``sensitive`` and the masks)."""
        extra = {k: getattr(self, k) for k in ("sensitive", "train_mask", "val_mask", "test_mask")
                 if getattr(self, k) is not None}
        return PyGHypergraph(x=self.x, y=self.y, hyperedge_index=self.hyperedge_index,
                             num_nodes=self.num_nodes, num_hyperedges=self.num_hyperedges, **extra)

    def __repr__(self) -> str:
        layout = "sparse_csr" if self.x.layout == torch.sparse_csr else "dense"
        extra = "".join(f", {k}" for k in ("sensitive", "train_mask", "val_mask", "test_mask")
                        if getattr(self, k) is not None)
        return (f"HypergraphData(name={self.name!r}, num_nodes={self.num_nodes}, "
                f"num_hyperedges={self.num_hyperedges}, nnz={self.num_incidences}, "
                f"x=[{self.num_nodes}, {self.num_features}] {layout}, y={list(self.y.shape)}{extra})")


@dataclass(eq=False)
class HypergraphGraphDataset(Sequence[HypergraphData]):
    """A graph-level set (hypergraph classification): hypergraphs, each with ``y`` of one element.

    DHG-Bench (sec. 2): "Given the labeled hypergraph set H_L and their labels ... the hypergraph
    classification task aims to train a hypergraph classifier".

    Args:
        graphs: the hypergraphs; all share ``num_features`` feature columns.
        num_classes: ``C``; labels are ``0..C-1``.
        num_features: ``F``.
        name: the registry name of the dataset.
    """

    graphs: list[HypergraphData]
    num_classes: int
    num_features: int
    name: str = ""

    def __len__(self) -> int:
        return len(self.graphs)

    def __getitem__(self, index):
        """An int gives one :class:`HypergraphData`; a slice, index list or index tensor a sub-dataset."""
        if isinstance(index, (int, np.integer)):
            return self.graphs[index]
        if isinstance(index, slice):
            chosen = self.graphs[index]
        else:
            idx = index.tolist() if isinstance(index, (Tensor, np.ndarray)) else list(index)
            chosen = [self.graphs[int(i)] for i in idx]
        return HypergraphGraphDataset(chosen, self.num_classes, self.num_features, self.name)

    def __iter__(self) -> Iterator[HypergraphData]:
        return iter(self.graphs)

    @property
    def y(self) -> Tensor:
        """``[num_graphs]`` long labels."""
        return torch.cat([g.y.reshape(1) for g in self.graphs]) if self.graphs else torch.zeros(0, dtype=torch.long)

    def validate(self) -> None:
        """Validate every graph and the shared feature width / label range."""
        for i, g in enumerate(self.graphs):
            try:
                g.validate()
            except ValueError as err:
                raise ValueError(f"graph {i}: {err}") from None
            if g.num_features != self.num_features:
                raise ValueError(f"graph {i}: HypergraphData.x has {g.num_features} columns, the dataset "
                                 f"declares num_features={self.num_features}")
            if g.y.numel() != 1 or not 0 <= int(g.y.reshape(-1)[0]) < self.num_classes:
                raise ValueError(f"graph {i}: HypergraphData.y must be one label in [0, {self.num_classes}), "
                                 f"got {g.y.tolist()}")

    def to_pyg(self) -> list[PyGHypergraph]:
        """The graphs as PyG ``Data`` objects, ready for ``torch_geometric.loader.DataLoader``."""
        return [g.to_pyg() for g in self.graphs]

    def __repr__(self) -> str:
        return (f"HypergraphGraphDataset(name={self.name!r}, num_graphs={len(self)}, "
                f"num_classes={self.num_classes}, num_features={self.num_features})")
