"""Hyperedge utilities: distinct hyperedges, the publication-time hyperedge split, clique expansion."""

from __future__ import annotations

import heapq
from collections import defaultdict
from typing import Sequence

import numpy as np
import torch
from torch import Tensor

__all__ = ["Hyperedge", "unique_hyperedges", "greedy_cover", "paper_split", "hyperedge_index_from_list",
           "clique_expansion", "size_distribution"]

Hyperedge = tuple  # a sorted tuple of distinct node ids


def unique_hyperedges(hyperedge_index: Tensor, min_size: int = 1, distinct: bool = True) -> list[Hyperedge]:
    """Distinct hyperedges (sorted node tuples, first-occurrence order) of an incidence list; smaller than
    ``min_size`` dropped. Duplicated hyperedges (Cora co-citation has 96) count once, unless ``distinct`` is
    False (every hyperedge id in order, as the publication-time reference split them)."""
    groups: dict[int, list[int]] = defaultdict(list)
    for v, e in zip(*hyperedge_index.tolist()):
        groups[e].append(v)
    seen: set[Hyperedge] = set()
    out = []
    for e in sorted(groups):
        he = tuple(sorted(set(groups[e])))
        if len(he) >= min_size and not (distinct and he in seen):
            seen.add(he)
            out.append(he)
    return out


def greedy_cover(hyperedges: Sequence[Hyperedge]) -> list[int]:
    """Greedy set cover of the nodes of ``hyperedges``: repeatedly the first hyperedge (lowest index) that adds
    the most uncovered nodes, as the reference's ``set_cover`` (lazily re-scored: a hyperedge's gain only falls)."""
    sets = [set(h) for h in hyperedges]
    heap = [(-len(s), i) for i, s in enumerate(sets)]
    heapq.heapify(heap)
    covered: set[int] = set()
    universe = set().union(*sets)
    out = []
    while covered != universe:
        _, i = heapq.heappop(heap)
        gain = len(sets[i] - covered)
        if heap and (-gain, i) > heap[0]:  # stale: re-score and look again
            heapq.heappush(heap, (-gain, i))
            continue
        out.append(i)
        covered |= sets[i]
    return out


def paper_split(hyperedges: Sequence[Hyperedge], rng: np.random.Generator
                ) -> tuple[dict[str, list[Hyperedge]], dict[str, list[Hyperedge]]]:
    """The publication-time reference split (``generate_split_hyperedges``): a greedy cover of the nodes plus
    random others make a 60% "ground" set, a sixth of it held for validation; the remaining 40% is shuffled into
    a quarter more training, a quarter more validation and half test. Returns the positives of each part and the
    context each part's negatives are drawn from (training: all ground + training; validation and test: all but
    test). Test hyperedges are never in the cover, so they lean small."""
    n = len(hyperedges)
    cover = greedy_cover(hyperedges)
    in_cover = set(cover)
    rest = [i for i in range(n) if i not in in_cover]
    extra = max(int(0.6 * n) - len(cover), 0)
    ground = [int(i) for i in rng.choice(rest, size=extra, replace=False)] + cover
    ground_valid = {int(i) for i in rng.choice(ground, size=len(ground) // 6, replace=False)}
    in_ground = set(ground)
    pred = [hyperedges[i] for i in rng.permutation([i for i in range(n) if i not in in_ground])]
    k = int(0.25 * len(pred))
    ground_train = [hyperedges[i] for i in range(n) if i in in_ground and i not in ground_valid]
    ground_val = [hyperedges[i] for i in range(n) if i in ground_valid]
    positives = {"train": ground_train + pred[:k], "val": ground_val + pred[k:2 * k], "test": pred[2 * k:]}
    seen = positives["train"] + positives["val"]
    return positives, {"train": positives["train"] + ground_val, "val": seen, "test": seen}


def hyperedge_index_from_list(hyperedges: Sequence[Sequence[int]]) -> Tensor:
    """``[2, nnz]`` incidence (row 0 node, row 1 hyperedge id = position in ``hyperedges``)."""
    nodes = [v for he in hyperedges for v in he]
    edges = [i for i, he in enumerate(hyperedges) for _ in he]
    return torch.tensor([nodes, edges], dtype=torch.long).view(2, -1)


def clique_expansion(hyperedges: Sequence[Hyperedge]) -> dict[int, set[int]]:
    """Neighbour sets of the clique expansion: u ~ v iff some hyperedge contains both (u != v)."""
    nbrs: dict[int, set[int]] = defaultdict(set)
    for he in hyperedges:
        for u in he:
            nbrs[u].update(he)
    for u, ns in nbrs.items():
        ns.discard(u)
    return {u: ns for u, ns in nbrs.items() if ns}


def size_distribution(hyperedges: Sequence[Hyperedge]) -> tuple[np.ndarray, np.ndarray]:
    """Sizes and their frequencies among ``hyperedges``, sizes 1 and 2 dropped (as the reference does)."""
    sizes, counts = np.unique([len(he) for he in hyperedges if len(he) > 2], return_counts=True)
    if len(sizes) == 0:
        raise ValueError("sized and motif negative sampling need context hyperedges of size 3 or more")
    return sizes, counts / counts.sum()
