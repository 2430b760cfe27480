"""Seeded hypergraph generators (HyperGVL appendix B.1, B.3).

B.1: "For most tasks, we employ a randomized construction approach that creates connected hypergraphs by
iteratively adding hyperedges of varying sizes and ensuring connectivity through breadth-first traversal. For
NP-hard reasoning tasks such as SHC, HHM, and 3-CL, we utilize specialized constructors designed to ensure the
existence of valid solutions. SHC instances are constructed with explicit hypercycle structures where consecutive
hyperedges share exactly one vertex. HHM instances are formed using vertex permutations as backbone paths.
Meanwhile, 3-CL instances are generated from pre-assigned color classes with constraint-preserving hyperedge
selection."

B.3: "small (5-10 vertices), medium (10-15 vertices), and large (15-20 vertices) ... the number of hyperedges falls
within the range of [0.2|V|, 1.5|V|]." The paper's ranges overlap at 10 and 15; we use 5-10, 11-15, 16-20.

Every function takes an explicit ``numpy.random.Generator``; the same generator state gives the same hypergraph.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .hypergraph import Hypergraph

SCALES: dict[str, tuple[int, int]] = {"small": (5, 10), "medium": (11, 15), "large": (16, 20)}
# Orders 1..6 of the extra (non-spanning) hyperedges; order 1 is rare, as in real data.
_ORDER_WEIGHTS = np.array([0.04, 0.32, 0.3, 0.18, 0.1, 0.06])

EdgeFilter = Callable[[tuple[int, ...]], bool]


def check_scale(scale: str) -> tuple[int, int]:
    try:
        return SCALES[scale]
    except KeyError:
        raise ValueError(f"unknown scale {scale!r}; choose one of {', '.join(SCALES)}") from None


def sample_num_vertices(scale: str, rng: np.random.Generator) -> int:
    lo, hi = check_scale(scale)
    return int(rng.integers(lo, hi + 1))


def edge_count_range(n: int) -> tuple[int, int]:
    """B.3's density window [0.2|V|, 1.5|V|] as integers (at least one hyperedge)."""
    return max(1, math.ceil(0.2 * n)), math.floor(1.5 * n)


def _sample_order(rng: np.random.Generator, n: int, min_order: int) -> int:
    orders = np.arange(1, len(_ORDER_WEIGHTS) + 1)
    ok = (orders >= min_order) & (orders <= n)
    w = _ORDER_WEIGHTS * ok
    return int(rng.choice(orders, p=w / w.sum()))


def _random_edge(rng, n, min_order, edge_filter, existing, tries=200):
    for _ in range(tries):
        k = _sample_order(rng, n, min_order)
        edge = tuple(sorted(int(v) for v in rng.choice(n, size=k, replace=False)))
        if edge not in existing and (edge_filter is None or edge_filter(edge)):
            return edge
    return None


def random_connected(n: int, m: int, rng: np.random.Generator, *, min_order: int = 1,
                     edge_filter: EdgeFilter | None = None) -> Hypergraph:
    """A connected hypergraph with ``n`` vertices and ``m`` distinct hyperedges.

    Spanning phase: vertices are visited in a random order; each new hyperedge takes one already covered vertex
    (so the covered part stays connected, the breadth-first guarantee of B.1) plus enough new vertices to cover all
    ``n`` within ``m`` hyperedges. Then random extra hyperedges until ``m``. ``edge_filter`` rejects candidate
    hyperedges (used by the planted 3-CL constructor); hyperedges are finally shuffled so ids carry no structure.
    """
    if not 1 <= m:
        raise ValueError(f"need at least one hyperedge, got m={m}")
    for _attempt in range(100):
        order = [int(v) for v in rng.permutation(n)]
        edges: list[tuple[int, ...]] = []
        seen: set[tuple[int, ...]] = set()
        covered: list[int] = []
        pos = 0
        ok = True
        while pos < n:
            left = m - len(edges)
            if left <= 0:
                ok = False
                break
            need = math.ceil((n - pos) / left)
            first = not covered
            base = max(need, (min_order if first else min_order - 1), 1)
            k_new = min(n - pos, max(base, _sample_order(rng, n, min_order) - (0 if first else 1)))
            edge = None
            for _ in range(50):
                new = order[pos:pos + k_new]
                anchor = [] if first else [covered[int(rng.integers(len(covered)))]]
                cand = tuple(sorted(new + anchor))
                if cand not in seen and (edge_filter is None or edge_filter(cand)):
                    edge = cand
                    break
                # rotate which uncovered vertices are taken, to escape a rejected pattern
                rest = order[pos:]
                rng.shuffle(rest)
                order[pos:] = rest
            if edge is None:
                ok = False
                break
            edges.append(edge)
            seen.add(edge)
            covered.extend(order[pos:pos + k_new])
            pos += k_new
        if not ok:
            continue
        while len(edges) < m:
            edge = _random_edge(rng, n, min_order, edge_filter, seen)
            if edge is None:
                break
            edges.append(edge)
            seen.add(edge)
        if len(edges) < m:
            continue
        perm = rng.permutation(len(edges))
        h = Hypergraph(n, [edges[i] for i in perm])
        if h.is_connected():
            return h
    raise RuntimeError(f"could not generate a connected hypergraph with n={n}, m={m}")


def random_hypergraph(scale: str, rng: np.random.Generator) -> Hypergraph:
    """B.1/B.3 random connected hypergraph: |V| drawn in the scale group, |E| uniform in [0.2|V|, 1.5|V|]."""
    n = sample_num_vertices(scale, rng)
    lo, hi = edge_count_range(n)
    return random_connected(n, int(rng.integers(lo, hi + 1)), rng)


def _fill_and_shuffle(n: int, m: int, edges: list, seen: set, rng: np.random.Generator) -> tuple[Hypergraph, dict]:
    """Add random distinct hyperedges up to ``m``, shuffle their order; returns (hypergraph, old id -> new id)."""
    while len(edges) < m:
        e = _random_edge(rng, n, 1, None, seen)
        if e is None:
            break
        edges.append(e)
        seen.add(e)
    perm = [int(i) for i in rng.permutation(len(edges))]
    return Hypergraph(n, [edges[i] for i in perm]), {old: new for new, old in enumerate(perm)}


def planted_3cl(scale: str, rng: np.random.Generator) -> tuple[Hypergraph, list[int]]:
    """3-CL: pre-assigned colour classes (all three non-empty); only hyperedges seeing >= 2 colours are kept,
    and no hyperedge has order 1. Returns the hypergraph and the planted colouring."""
    n = sample_num_vertices(scale, rng)
    colours = [0, 1, 2] + [int(c) for c in rng.integers(0, 3, size=n - 3)]
    colours = [colours[i] for i in rng.permutation(n)]
    lo, hi = edge_count_range(n)
    m = int(rng.integers(lo, hi + 1))
    h = random_connected(n, m, rng, min_order=2, edge_filter=lambda e: len({colours[v] for v in e}) >= 2)
    return h, colours


def planted_shc(scale: str, rng: np.random.Generator) -> tuple[Hypergraph, list[int]]:
    """SHC: an explicit strict hypercycle of k >= 3 hyperedges over k distinct junction vertices; consecutive cycle
    hyperedges share exactly their junction (extra members are private to one cycle hyperedge). The rest of the
    hypergraph is random and connected to the cycle. Returns the hypergraph and the planted cycle's hyperedge ids."""
    n = sample_num_vertices(scale, rng)
    lo, hi = edge_count_range(n)
    k = int(rng.integers(3, min(6, n) + 1))
    m = int(rng.integers(max(lo, k), max(hi, k) + 1))
    verts = [int(v) for v in rng.permutation(n)]
    junctions, pool = verts[:k], verts[k:]
    cycle = []
    for i in range(k):
        extra_n = int(rng.integers(0, 3)) if pool else 0
        extra, pool = pool[:extra_n], pool[extra_n:]
        cycle.append(tuple(sorted([junctions[i], junctions[(i + 1) % k]] + extra)))
    # Attach the remaining vertices with random connected hyperedges, then fill up to m.
    edges = list(cycle)
    seen = set(edges)
    covered = [v for e in cycle for v in e]
    for v in pool:
        size = min(_sample_order(rng, n, 2) - 1, len(covered))
        anchors = [covered[int(i)] for i in rng.choice(len(covered), size=max(1, size), replace=False)]
        e = tuple(sorted(set(anchors) | {v}))
        if e in seen:
            e = tuple(sorted({v, covered[0]}))
        edges.append(e)
        seen.add(e)
        covered.append(v)
    h, where = _fill_and_shuffle(n, m, edges, seen, rng)
    return h, [where[i] for i in range(k)]


def planted_hhm(scale: str, rng: np.random.Generator) -> tuple[Hypergraph, int, int, list[int]]:
    """HHM: a random vertex permutation is the backbone; hyperedge i contains consecutive backbone vertices
    (pi_i, pi_{i+1}) plus random extras, all n-1 distinct. |E| is drawn in [max(n-1, 0.2|V|), 1.5|V|] since a
    Hamiltonian path needs n-1 distinct hyperedges. Returns (hypergraph, source, target, planted path ids)."""
    n = sample_num_vertices(scale, rng)
    _, hi = edge_count_range(n)
    m = int(rng.integers(n - 1, hi + 1))
    pi = [int(v) for v in rng.permutation(n)]
    edges: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()
    for i in range(n - 1):
        pair = {pi[i], pi[i + 1]}
        while True:
            extra_n = int(rng.choice([0, 0, 1, 1, 2]))
            extra = {int(v) for v in rng.choice(n, size=extra_n, replace=False)} if extra_n else set()
            e = tuple(sorted(pair | extra))
            if e not in seen:
                break
        edges.append(e)
        seen.add(e)
    h, where = _fill_and_shuffle(n, m, edges, seen, rng)
    return h, pi[0], pi[-1], [where[i] for i in range(n - 1)]


def isomorphic_copy(h: Hypergraph, rng: np.random.Generator) -> Hypergraph:
    """ISM Yes-instance: a random relabelling of the vertices and reordering of the hyperedges."""
    perm = [int(v) for v in rng.permutation(h.num_vertices)]
    return h.relabel(perm, [int(i) for i in rng.permutation(h.num_hyperedges)])


def non_isomorphic_variant(h: Hypergraph, rng: np.random.Generator,
                           is_isomorphic: Callable[[Hypergraph, Hypergraph], bool]) -> Hypergraph:
    """ISM No-instance: same vertex count, hyperedge count and order multiset, but not isomorphic.

    Swaps one member of a random hyperedge for a non-member (keeping the order), then relabels like a Yes-instance,
    so only structure distinguishes the two. Retries until ``is_isomorphic`` says no."""
    n = h.num_vertices
    edges = [list(e) for e in h.hyperedges]
    for _ in range(500):
        cand = [list(e) for e in edges]
        for _swap in range(int(rng.integers(1, 3))):
            i = int(rng.integers(len(cand)))
            outside = [v for v in range(n) if v not in cand[i]]
            if not outside:
                continue
            cand[i][int(rng.integers(len(cand[i])))] = outside[int(rng.integers(len(outside)))]
        if len({tuple(sorted(e)) for e in cand}) < len(cand):
            continue
        g = Hypergraph(n, cand)
        if h.is_connected() and not g.is_connected():
            continue  # a disconnected picture would give the answer away
        if not is_isomorphic(h, g):
            return isomorphic_copy(g, rng)
    raise RuntimeError("could not build a non-isomorphic variant (hypergraph too symmetric)")
