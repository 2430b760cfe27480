"""The base of every model of the hypergraph neural network zoo and its shared layer parts.

Every model of :mod:`hypergvl.models.nn` has the same constructor head and the same forward::

    Model(in_channels, hidden_channels, out_channels, num_layers=2, dropout=0.5, *, <typed keywords>)
    model(x, hyperedge_index, num_hyperedges=None) -> [num_nodes, out_channels]

``hyperedge_index`` is a ``LongTensor [2, nnz]`` (row 0 node ids, row 1 hyperedge ids: PyG ``HypergraphConv``
convention) and ``x`` is a dense ``[N, F]`` tensor or a torch sparse tensor (COO, CSR, ...).

Speed (docs/design.md "Speed facts"): everything that depends only on the structure (degrees, normalised
propagation matrices, clique expansions) is computed once per ``hyperedge_index`` tensor and kept in a small
per-model cache keyed on that tensor's identity (a weak reference, so a freed tensor whose memory is reused
can never hit), its ``_version`` (in-place edits miss), the node and hyperedge counts and the dtype.
Sparse bag-of-words features stay sparse: :func:`prepare_input` turns them into a
:class:`~hypergvl.models.nn.sparse.SparseOperator` that the first :class:`Linear` multiplies.

- :class:`HypergraphModel`: the base class (structure cache, :meth:`~HypergraphModel.incidence`,
  :meth:`~HypergraphModel.features`).
- :class:`StructureCache`: the small LRU cache keyed on tensors' identity and version.
- :func:`prepare_input`, :func:`dense`: input features as they are, as a sparse operator, or densified.
- :class:`Linear`: ``torch.nn.Linear`` that also multiplies a sparse operator; :func:`glorot_`: Glorot init.
"""
from __future__ import annotations

import math
import operator
import weakref
from typing import Any, Callable, Iterable, TypeVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .sparse import Incidence, SparseOperator

__all__ = ["HypergraphModel", "StructureCache", "prepare_input", "dense", "Linear", "glorot_"]

T = TypeVar("T")


def glorot_(tensor: Tensor) -> Tensor:
    """Glorot/Xavier uniform init over the last two dimensions (PyG ``inits.glorot``)."""
    bound = math.sqrt(6.0 / (tensor.size(-2) + tensor.size(-1)))
    with torch.no_grad():
        return tensor.uniform_(-bound, bound)


def _check_index_shape(hyperedge_index: Any) -> None:
    if not isinstance(hyperedge_index, Tensor) or hyperedge_index.dim() != 2 or hyperedge_index.size(0) != 2:
        shape = tuple(hyperedge_index.shape) if isinstance(hyperedge_index, Tensor) else type(hyperedge_index)
        raise ValueError(f"hyperedge_index must be a LongTensor of shape [2, nnz], got {shape}")
    if hyperedge_index.dtype != torch.long:
        raise ValueError(f"hyperedge_index must have dtype torch.long, got {hyperedge_index.dtype}")


def _check_index_range(hyperedge_index: Tensor, num_nodes: int, num_edges: int) -> None:
    if hyperedge_index.numel() == 0:
        return
    lo, hi = hyperedge_index.amin(dim=1).tolist(), hyperedge_index.amax(dim=1).tolist()
    if lo[0] < 0 or hi[0] >= num_nodes:
        raise ValueError(f"hyperedge_index node ids must lie in [0, {num_nodes}) (x has {num_nodes} rows), "
                         f"got range [{lo[0]}, {hi[0]}]")
    if lo[1] < 0 or hi[1] >= num_edges:
        raise ValueError(f"hyperedge_index hyperedge ids must lie in [0, {num_edges}), got range "
                         f"[{lo[1]}, {hi[1]}]")


class StructureCache:
    """A tiny LRU cache keyed on the identity and version of tensors (never on their memory address).

    Not part of a model's state: copying or pickling a model gives an empty cache.
    """

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._entries: list[tuple[tuple[weakref.ref, ...], tuple[int, ...], tuple, Any]] = []

    def get(self, tensors: Iterable[Tensor], extra: tuple, build: Callable[[], T]) -> T:
        """The cached value for ``tensors`` (by identity and version) and ``extra``, else ``build()``.

        ``build`` runs without autograd and outside inference mode, so a value first built during an
        evaluation under ``torch.inference_mode()`` can still be used by a later training step.
        """
        tensors = tuple(tensors)
        versions = tuple(-1 if t.is_inference() else t._version for t in tensors)
        self._entries = [entry for entry in self._entries if all(r() is not None for r in entry[0])]
        for i, (refs, vers, ext, value) in enumerate(self._entries):
            if vers == versions and ext == extra and all(r() is t for r, t in zip(refs, tensors)):
                if i:
                    self._entries.insert(0, self._entries.pop(i))
                return value
        with torch.inference_mode(False), torch.no_grad():
            value = build()
        self._entries.insert(0, (tuple(weakref.ref(t) for t in tensors), versions, extra, value))
        del self._entries[self.size:]
        return value

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __getstate__(self) -> dict:
        return {"size": self.size}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["size"])  # type: ignore[misc]

    def __deepcopy__(self, memo: dict) -> "StructureCache":
        return StructureCache(self.size)


# ---------------------------------------------------------------------------------------- input features

def prepare_input(cache: StructureCache, x: Tensor) -> Tensor | SparseOperator:
    """Dense ``x`` is returned as is; a sparse ``x`` (any layout) becomes a cached :class:`SparseOperator`.

    A sparse ``x`` that requires grad is densified instead (the operator is constant by construction).
    """
    if not isinstance(x, Tensor):
        raise ValueError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.layout == torch.strided:
        if x.dim() != 2:
            raise ValueError(f"x must be 2-D [num_nodes, in_channels], got shape {tuple(x.shape)}")
        return x
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D [num_nodes, in_channels], got shape {tuple(x.shape)}")
    if x.requires_grad:
        return x.to_dense()

    return cache.get((x,), (x.layout, x.dtype, x.device), lambda: SparseOperator.from_sparse(x))


def dense(x: Tensor | SparseOperator) -> Tensor:
    return x.to_dense() if isinstance(x, SparseOperator) else x


class Linear(nn.Linear):
    """``torch.nn.Linear`` that also accepts a :class:`SparseOperator` input (sparse features stay sparse)."""

    def forward(self, x: Tensor | SparseOperator) -> Tensor:  # type: ignore[override]
        if isinstance(x, SparseOperator):
            out = x @ self.weight.t()
            return out if self.bias is None else out + self.bias
        return F.linear(x, self.weight, self.bias)


# ------------------------------------------------------------------------------------------- base class

class HypergraphModel(nn.Module):
    """Base class of every registered model: holds the structure cache and the shared forward prologue."""

    paper: str = ""

    def __init__(self) -> None:
        super().__init__()
        self._cache = StructureCache(8)

    def incidence(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None) -> Incidence:
        """The (cached) :class:`Incidence` of ``hyperedge_index`` for ``x.size(0)`` nodes.

        ``num_hyperedges`` defaults to ``max(hyperedge_index[1]) + 1`` (0 when there is no incidence).
        """
        _check_index_shape(hyperedge_index)
        num_nodes = int(x.size(0))
        if num_hyperedges is None:
            num_hyperedges = self._cache.get(
                (hyperedge_index,), ("num_hyperedges",),
                lambda: int(hyperedge_index[1].max()) + 1 if hyperedge_index.numel() else 0)
        else:
            try:
                count = None if isinstance(num_hyperedges, bool) else operator.index(num_hyperedges)
            except TypeError:
                count = None
            if count is None or count < 0:
                raise ValueError(f"num_hyperedges must be a non-negative int or None, got {num_hyperedges!r}")
            num_hyperedges = count
        dtype = x.dtype if x.dtype.is_floating_point else torch.get_default_dtype()

        def build() -> Incidence:
            _check_index_range(hyperedge_index, num_nodes, num_hyperedges)
            return Incidence(hyperedge_index, num_nodes, num_hyperedges, dtype)
        return self._cache.get((hyperedge_index,), ("incidence", num_nodes, num_hyperedges, dtype), build)

    def features(self, x: Tensor) -> Tensor | SparseOperator:
        return prepare_input(self._cache, x)
