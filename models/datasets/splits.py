"""Random splits of DHG-Bench (sec. 3.1 and appendix B).

"we adopt a split of 50%/25%/25% for training, validation, and testing in the node classification task";
"for hypergraph classification ... we adopt an 80%/10%/10% train/validation/test data split". The reference
(``rand_train_test_idx``, ``balance=False``) permutes all items and cuts at ``int(n * train)`` and
``int(n * train) + int(n * val)``: random, not stratified. Each seed gives its own split; the same seed the
same split.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

__all__ = ["Split", "random_split", "random_node_split", "random_graph_split"]


@dataclass(frozen=True)
class Split:
    """Disjoint sorted ``LongTensor`` index sets covering ``0..n-1``."""

    train: Tensor
    val: Tensor
    test: Tensor

    @property
    def num_items(self) -> int:
        return int(self.train.numel() + self.val.numel() + self.test.numel())

    def masks(self) -> tuple[Tensor, Tensor, Tensor]:
        """``(train_mask, val_mask, test_mask)``, bool tensors of length ``num_items``."""
        out = []
        for index in (self.train, self.val, self.test):
            mask = torch.zeros(self.num_items, dtype=torch.bool)
            mask[index] = True
            out.append(mask)
        return tuple(out)


def random_split(num_items: int, seed: int | np.random.Generator, train: float, val: float) -> Split:
    """Permute ``0..num_items-1`` with ``numpy.random.default_rng(seed)`` and cut it into train/val/test.

    >>> s = random_split(8, seed=0, train=0.5, val=0.25)
    >>> [t.numel() for t in (s.train, s.val, s.test)]
    [4, 2, 2]
    """
    if isinstance(num_items, bool) or not isinstance(num_items, (int, np.integer)) or num_items < 0:
        raise ValueError(f"num_items must be a non-negative int, got {num_items!r}")
    if not (0.0 < train <= 1.0 and 0.0 <= val and train + val <= 1.0):
        raise ValueError(f"need 0 < train <= 1, val >= 0 and train + val <= 1; got train={train}, val={val}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    perm = rng.permutation(int(num_items))
    n_train, n_val = int(num_items * train), int(num_items * val)
    parts = (perm[:n_train], perm[n_train:n_train + n_val], perm[n_train + n_val:])
    return Split(*(torch.from_numpy(np.sort(p).astype(np.int64)) for p in parts))


def random_node_split(num_nodes: int, seed: int | np.random.Generator, train: float = 0.5,
                      val: float = 0.25) -> Split:
    """DHG-Bench node classification split: random 50/25/25 of the nodes."""
    return random_split(num_nodes, seed, train, val)


def random_graph_split(num_graphs: int, seed: int | np.random.Generator, train: float = 0.8,
                       val: float = 0.1) -> Split:
    """DHG-Bench hypergraph classification split: random 80/10/10 of the hypergraphs."""
    return random_split(num_graphs, seed, train, val)
