"""Random train/validation/test splits of nodes, hyperedges or graphs (DHG-Bench section 3.1)."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["split_indices", "reference_graph_split"]


def split_indices(num_items: int, seed: int, train: float, val: float) -> dict[str, Tensor]:
    """Random train/val/test split of ``num_items`` items (nodes, hyperedges or graphs) for ``seed``, not
    stratified: :func:`hypergvl.models.datasets.splits.random_split`, as sorted index tensors keyed by part."""
    from hypergvl.models.datasets.splits import random_split  # the dataset package loads PyG (3-4 s); tasks do not

    split = random_split(num_items, seed, train, val)
    return {"train": split.train, "val": split.val, "test": split.test}


def reference_graph_split(num_items: int, seed: int, train: float, val: float) -> dict[str, Tensor]:
    """The reference's hypergraph split (``generate_split_hypergraphs``): ``torch.utils.data.random_split`` into
    ``int(train * n)``, ``int(val * n)`` and the rest, with ``torch.Generator().manual_seed(42 + seed)``."""
    perm = torch.randperm(num_items, generator=torch.Generator().manual_seed(42 + seed))
    a, b = int(train * num_items), int(val * num_items)
    return {"train": perm[:a].sort().values, "val": perm[a:a + b].sort().values, "test": perm[a + b:].sort().values}
