"""DHG-Bench's processing of raw hypergraphs, shared by the raw loaders and the Hub reader.

Protocol facts (docs/design.md, read from the DHG-Bench / AllSet reference code):

- incidences are de-duplicated (AllSet's ``coalesce``) and hyperedge ids are made consecutive in their
  original order; a hyperedge left without members is dropped;
- node classification adds a singleton hyperedge for every node that does not already have one
  (DHG-Bench ``Add_Self_Loops``; ``add_self_loop=True`` for every ``node_cls`` set, ``False`` for
  ``hg_cls``): Cora co-citation goes from 1,579 to 1,579 + 2,708 = 4,287 hyperedges;
- graph-level sets use one-hot vertex degree over the dataset's degree vocabulary as features (the file's
  vertex labels are discarded).
"""
from __future__ import annotations

import warnings
from typing import Iterable

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from .data import HypergraphData

__all__ = ["FEATURE_CHOICES", "csr_tensor", "sorted_unique", "incidence_from_pairs", "incidence_from_hyperedges", "add_self_loops",
           "singleton_nodes",
           "features_to_torch", "derived_features", "onehot"]

#: ``raw``: the dataset's own features (``FileNotFoundError`` when the file is missing);
#: ``none``: ``[N, 0]`` (structure only); ``identity``: sparse ``I_N``; ``onehot-degree``: sparse one-hot of
#: node degree over the hypergraph's degree vocabulary. Anything but ``raw`` must be asked for explicitly.
FEATURE_CHOICES = ("raw", "none", "identity", "onehot-degree")


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique`` by sorting (numpy 2's hash-based ``unique`` is many times slower on large int arrays)."""
    s = np.sort(np.asarray(values).reshape(-1))
    keep = np.ones(s.size, dtype=bool)
    keep[1:] = s[1:] != s[:-1]
    return s[keep]


def incidence_from_pairs(nodes, edges) -> tuple[Tensor, int]:
    """``hyperedge_index`` and ``num_hyperedges`` from parallel arrays of (node, hyperedge id) incidences.

    Repeated pairs are dropped; hyperedge ids are renumbered ``0..M-1`` in increasing original id; columns
    are sorted by (hyperedge, node).

    >>> incidence_from_pairs([3, 1, 1, 0], [7, 7, 7, 2])
    (tensor([[0, 1, 3],
            [0, 1, 1]]), 2)
    """
    nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
    edges = np.asarray(edges, dtype=np.int64).reshape(-1)
    if nodes.shape != edges.shape:
        raise ValueError(f"incidence arrays differ in length: {nodes.size} nodes, {edges.size} hyperedges")
    if nodes.size and int(nodes.min()) < 0:
        raise ValueError(f"negative node id {int(nodes.min())}")
    uniq_edges = sorted_unique(edges)
    edges = np.searchsorted(uniq_edges, edges)
    stride = int(nodes.max()) + 1 if nodes.size else 1
    keys = sorted_unique(edges * stride + nodes)  # sorted by (hyperedge, node), repeats dropped
    index = torch.from_numpy(np.stack([keys % stride, keys // stride]))
    return index, int(uniq_edges.size)


def incidence_from_hyperedges(hyperedges: Iterable[Iterable[int]]) -> tuple[Tensor, int]:
    """``hyperedge_index`` and ``num_hyperedges`` from an ordered collection of node collections."""
    nodes: list[int] = []
    edges: list[int] = []
    for j, members in enumerate(hyperedges):
        members = [int(v) for v in members]
        nodes.extend(members)
        edges.extend([j] * len(members))
    return incidence_from_pairs(nodes, edges)


def singleton_nodes(data: HypergraphData) -> Tensor:
    """Which nodes are alone in some hyperedge (a bool per node)."""
    ei = data.hyperedge_index
    sizes = torch.bincount(ei[1], minlength=data.num_hyperedges)
    alone = torch.zeros(data.num_nodes, dtype=torch.bool)
    alone[ei[0][sizes[ei[1]] == 1]] = True
    return alone


def add_self_loops(data: HypergraphData) -> HypergraphData:
    """Add a singleton hyperedge ``{v}`` for every node ``v`` that is not already alone in a hyperedge.

    New hyperedges get ids ``M, M+1, ...`` in node order (DHG-Bench ``Add_Self_Loops``).
    """
    ei = data.hyperedge_index
    new_nodes = torch.nonzero(~singleton_nodes(data)).reshape(-1)
    new_edges = data.num_hyperedges + torch.arange(new_nodes.numel())
    index = torch.cat([ei, torch.stack([new_nodes, new_edges])], dim=1)
    return data.replace(hyperedge_index=index, num_hyperedges=data.num_hyperedges + int(new_nodes.numel()))


def csr_tensor(crow, col, values, shape) -> Tensor:
    """A float32 ``torch.sparse_csr`` tensor with int64 indices (torch's beta-state warning silenced)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse", category=UserWarning)
        return torch.sparse_csr_tensor(torch.from_numpy(np.asarray(crow, dtype=np.int64)),
                                       torch.from_numpy(np.asarray(col, dtype=np.int64)),
                                       torch.from_numpy(np.asarray(values, dtype=np.float32)),
                                       size=tuple(int(d) for d in shape))


def features_to_torch(features) -> Tensor:
    """Raw features to a float32 tensor: scipy sparse -> canonical ``sparse_csr`` (sorted, no explicit
    zeros), numpy -> dense."""
    if sp.issparse(features):
        m = sp.csr_matrix(features, dtype=np.float32, copy=True)
        m.sum_duplicates()
        m.eliminate_zeros()
        m.sort_indices()
        return csr_tensor(m.indptr, m.indices, m.data, m.shape)
    array = np.asarray(features, dtype=np.float32)
    if array.ndim != 2:
        raise ValueError(f"features must be 2-D, got shape {array.shape}")
    return torch.from_numpy(np.ascontiguousarray(array))


def onehot(codes: np.ndarray, width: int, *, sparse: bool) -> Tensor:
    """Row ``i`` has a single 1 in column ``codes[i]``."""
    codes = np.asarray(codes, dtype=np.int64)
    if sparse:
        n = codes.size
        return features_to_torch(sp.csr_matrix((np.ones(n, np.float32), (np.arange(n), codes)), shape=(n, width)))
    out = torch.zeros((codes.size, width), dtype=torch.float32)
    out[torch.arange(codes.size), torch.from_numpy(codes)] = 1.0
    return out


def derived_features(data: HypergraphData, kind: str) -> Tensor:
    """Features that are not in any raw file, built only on explicit request (``kind`` != ``raw``).

    ``onehot-degree`` uses the degrees of ``data`` as given (call it before :func:`add_self_loops`).
    """
    n = data.num_nodes
    if kind == "none":
        return torch.zeros((n, 0), dtype=torch.float32)
    if kind == "identity":
        return onehot(np.arange(n), n, sparse=True)
    if kind == "onehot-degree":
        degrees = data.node_degrees().numpy()
        vocab, codes = np.unique(degrees, return_inverse=True)
        return onehot(codes, vocab.size, sparse=True)
    raise ValueError(f"features must be one of {list(FEATURE_CHOICES)}, got {kind!r}")
