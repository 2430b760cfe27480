"""Negative sampling for hyperedge prediction (DHG-Bench section 3.1): sized, motif and clique NS and their mix."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from hypergvl.registry import Registry

from .hyperedges import Hyperedge, clique_expansion, size_distribution

__all__ = ["NEGATIVE_SAMPLERS", "sized_negatives", "motif_negatives", "clique_negatives", "mixed_negatives"]

NEGATIVE_SAMPLERS: Registry[Callable[..., list[Hyperedge]]] = Registry("negative sampler")


def _register_sampler(name: str):
    return NEGATIVE_SAMPLERS.register(name)


_MAX_TRIES_PER_SAMPLE = 1000


def _check_tries(tries: int, want: int, what: str) -> None:
    if tries > _MAX_TRIES_PER_SAMPLE * max(want, 1):
        raise RuntimeError(f"{what} negative sampling found no new non-hyperedge after {tries} draws")


@_register_sampler("sized")
def sized_negatives(context: Sequence[Hyperedge], num: int, forbidden: set, rng: np.random.Generator
                    ) -> list[Hyperedge]:
    """Sized NS (Patil et al., 2020): draw a size k from the context's size distribution, then k distinct
    nodes uniformly among the nodes of the clique expansion; redraw if the set is a known hyperedge."""
    sizes, probs = size_distribution(context)
    nodes = np.array(sorted(clique_expansion(context)))
    out, tries = [], 0
    while len(out) < num:
        tries += 1
        _check_tries(tries, num, "sized")
        k = int(rng.choice(sizes, p=probs))
        if k > len(nodes):
            continue
        cand = tuple(sorted(nodes[rng.choice(len(nodes), size=k, replace=False)].tolist()))
        if cand not in forbidden:
            out.append(cand)
    return out


@_register_sampler("motif")
def motif_negatives(context: Sequence[Hyperedge], num: int, forbidden: set, rng: np.random.Generator
                    ) -> list[Hyperedge]:
    """Motif NS (mfinder-style): start from a uniformly random clique-expansion edge and grow a connected node
    set by repeatedly following a uniformly random edge leaving it, until it has k nodes (k from the size
    distribution; restart from a new edge when stuck); redraw if the set is a known hyperedge."""
    sizes, probs = size_distribution(context)
    nbrs = clique_expansion(context)
    edges = [(u, v) for u in sorted(nbrs) for v in sorted(nbrs[u])]  # both directions: uniform over edges
    out, tries = [], 0
    while len(out) < num:
        k = int(rng.choice(sizes, p=probs))
        chosen: set[int] = set()
        while len(chosen) < k:
            tries += 1
            _check_tries(tries, num, "motif")
            if not chosen:
                u, v = edges[rng.integers(len(edges))]
                chosen = {u, v}
                frontier = [(a, b) for a in (u, v) for b in sorted(nbrs[a]) if b not in chosen]
            if not frontier:  # the component is smaller than k: start again elsewhere
                chosen = set()
                continue
            new = frontier[rng.integers(len(frontier))][1]
            chosen.add(new)
            frontier = [(a, b) for a, b in frontier if b != new]
            frontier += [(new, b) for b in sorted(nbrs[new]) if b not in chosen]
        cand = tuple(sorted(chosen))
        if cand not in forbidden:
            out.append(cand)
    return out


@_register_sampler("clique")
def clique_negatives(context: Sequence[Hyperedge], num: int, forbidden: set, rng: np.random.Generator
                     ) -> list[Hyperedge]:
    """Clique NS: take a random context hyperedge, remove one random node and add a random node adjacent (in
    the clique expansion) to all remaining ones; redraw if the result is a known hyperedge."""
    nbrs = clique_expansion(context)
    all_nodes = set(nbrs)
    out, tries = [], 0
    while len(out) < num:
        tries += 1
        _check_tries(tries, num, "clique")
        he = context[rng.integers(len(context))]
        drop = int(rng.integers(len(he)))
        keep = he[:drop] + he[drop + 1:]
        common = set(nbrs.get(keep[0], ())) if keep else set(all_nodes)
        for v in keep[1:]:
            common &= nbrs.get(v, set())
        if not common:
            continue
        cand = tuple(sorted(keep + (sorted(common)[rng.integers(len(common))],)))
        if cand not in forbidden:
            out.append(cand)
    return out


def mixed_negatives(context: Sequence[Hyperedge], num: int, forbidden: set, rng: np.random.Generator,
                    kinds: Sequence[str] = ("sized", "motif", "clique")) -> list[tuple[str, Hyperedge]]:
    """``num`` negatives, a third from each sampler in ``kinds`` (the first ones take the remainder), each
    returned with the name of the sampler that produced it."""
    out = []
    for i, kind in enumerate(kinds):
        n = num // len(kinds) + (1 if i < num % len(kinds) else 0)
        out += [(kind, he) for he in NEGATIVE_SAMPLERS[kind](context, n, forbidden, rng)]
    return out
