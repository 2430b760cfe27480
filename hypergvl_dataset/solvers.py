"""Exact solvers and plan checkers for the HyperGVL tasks (appendix C), written from the definitions.

The definitions the paper leaves loose are fixed as in docs/design.md:

* OSP: a path is a sequence of hyperedges, consecutive ones sharing a vertex, the first containing the source and
  the last the target; its length is the sum of the orders of its hyperedges.
* OMF: the bipartite incidence network of C.2, capacity |e| on every vertex-hyperedge arc, both ways;
  Edmonds-Karp as the paper says.
* SHC, as the question defines it (appendix E.2: "A strict hypercycle is a sequence of hyperedges e1,e2,...,ek
  where adjacent hyperedges share exactly one vertex, i.e., |ei ∩ ei+1|=1, and |ek ∩ e1|=1, forming a closed
  loop"; appendix C adds k >= 2): k >= 2 distinct hyperedges, consecutive ones (cyclically) sharing exactly one
  vertex. The search still finds (and the generators still plant) longer cycles with distinct shared vertices.
* HHM, as the question defines it ("Hamiltonian path = path visiting all vertices exactly once", listed as
  hyperedges): n-1 hyperedges e1..e(n-1) for which an ordering v1=s..vn=t of all vertices exists with {vi, vi+1}
  in ei; the question does not ask for distinct hyperedges. Checking a plan is a bipartite matching of positions
  to vertices; the search returns distinct hyperedges.
* 3-CL: colours c0..c2, every hyperedge sees at least two colours.

The search solvers take a node ``budget``; exceeding it raises :class:`SearchBudgetExceeded`, so a caller (the
real-data sampler) can reject an instance instead of hanging on a pathological one.
"""
from __future__ import annotations

import heapq
from collections import Counter, deque
from itertools import combinations
from typing import Sequence

from .hypergraph import Hypergraph


class SearchBudgetExceeded(RuntimeError):
    """An exact search gave up after its node budget."""


# ----------------------------------------------------------------------------------------------------- OSP
def shortest_path_length(h: Hypergraph, s: int, t: int) -> int | None:
    """Order-weighted shortest path length (C.2 OSP): Dijkstra over hyperedges. ``None`` when no path exists."""
    if s == t:
        raise ValueError("source and target must differ")
    dist: dict[int, int] = {}
    heap = [(h.order(e), e) for e in h.incident[s]]
    heapq.heapify(heap)
    while heap:
        d, e = heapq.heappop(heap)
        if e in dist:
            continue
        dist[e] = d
        if t in h.hyperedges[e]:
            return d
        for v in h.hyperedges[e]:
            for f in h.incident[v]:
                if f not in dist:
                    heapq.heappush(heap, (d + h.order(f), f))
    return None


# ----------------------------------------------------------------------------------------------------- OMF
def max_flow(h: Hypergraph, s: int, t: int) -> int:
    """Order-weighted maximum flow (C.2 OMF) by Edmonds-Karp on the bipartite incidence network.

    Nodes ``0..n-1`` are vertices and ``n+i`` is hyperedge ``e_i``; arcs v->e and e->v both have capacity |e|.
    """
    if s == t:
        raise ValueError("source and target must differ")
    n = h.num_vertices
    cap: dict[int, dict[int, int]] = {u: {} for u in range(n + h.num_hyperedges)}
    for i, edge in enumerate(h.hyperedges):
        c = len(edge)
        for v in edge:
            cap[v][n + i] = cap[v].get(n + i, 0) + c
            cap[n + i][v] = cap[n + i].get(v, 0) + c
    flow = 0
    while True:
        parent = {s: s}
        queue = deque([s])
        while queue and t not in parent:
            u = queue.popleft()
            for w, c in cap[u].items():
                if c > 0 and w not in parent:
                    parent[w] = u
                    queue.append(w)
        if t not in parent:
            return flow
        path, w = [], t
        while w != s:
            path.append((parent[w], w))
            w = parent[w]
        push = min(cap[u][w] for u, w in path)
        for u, w in path:
            cap[u][w] -= push
            cap[w][u] = cap[w].get(u, 0) + push
        flow += push


# ----------------------------------------------------------------------------------------------------- ISM
def _refine(h: Hypergraph) -> list[tuple]:
    """Colour refinement on the star expansion; returns per-vertex colours comparable across hypergraphs."""
    vcol: list = [("v", h.degree(v)) for v in range(h.num_vertices)]
    ecol: list = [("e", len(e)) for e in h.hyperedges]
    for _ in range(h.num_vertices + 1):
        new_e = [(ecol[i], tuple(sorted(vcol[v] for v in e))) for i, e in enumerate(h.hyperedges)]
        new_v = [(vcol[v], tuple(sorted(new_e[i] for i in h.incident[v]))) for v in range(h.num_vertices)]
        if len(set(new_v)) == len(set(vcol)) and len(set(new_e)) == len(set(ecol)):
            return new_v
        vcol, ecol = new_v, new_e
    return vcol


def is_isomorphic(a: Hypergraph, b: Hypergraph, budget: int = 2_000_000) -> bool:
    """Exact hypergraph isomorphism (C.2 ISM): a vertex bijection mapping the hyperedge multiset onto the other's.

    Colour refinement prunes the candidates; backtracking checks every hyperedge as soon as all its vertices are
    mapped. Hyperedge order in the list is irrelevant (hyperedges are a multiset)."""
    if a.num_vertices != b.num_vertices or a.num_hyperedges != b.num_hyperedges:
        return False
    if sorted(map(len, a.hyperedges)) != sorted(map(len, b.hyperedges)) or sorted(a.degrees) != sorted(b.degrees):
        return False
    ca, cb = _refine(a), _refine(b)
    if Counter(ca) != Counter(cb):
        return False
    target = Counter(b.hyperedges)
    n = a.num_vertices
    # Map vertices in order of rarest colour first, neighbours of mapped vertices early.
    order = sorted(range(n), key=lambda v: (Counter(ca)[ca[v]], v))
    pos = {v: i for i, v in enumerate(order)}
    # hyperedges of `a` that become fully mapped when order[i] is mapped
    closing: list[list[tuple[int, ...]]] = [[] for _ in range(n)]
    for e in a.hyperedges:
        closing[max(pos[v] for v in e)].append(e)
    by_colour: dict = {}
    for w in range(n):
        by_colour.setdefault(cb[w], []).append(w)
    mapping: dict[int, int] = {}
    used: set[int] = set()
    closed: Counter = Counter()  # images of the hyperedges mapped so far
    nodes = 0

    def extend(i: int) -> bool:
        nonlocal nodes
        if i == n:
            return True
        v = order[i]
        for w in by_colour[ca[v]]:
            if w in used:
                continue
            nodes += 1
            if nodes > budget:
                raise SearchBudgetExceeded("isomorphism search budget exceeded")
            mapping[v] = w
            images: Counter = Counter()
            for e in closing[i]:
                images[tuple(sorted(mapping[x] for x in e))] += 1
            # every closed hyperedge's image must exist in b, with multiplicity
            ok = all(target[img] >= k + closed[img] for img, k in images.items())
            if ok:
                closed.update(images)
                used.add(w)
                if extend(i + 1):
                    return True
                used.discard(w)
                closed.subtract(images)
            del mapping[v]
        return False

    return extend(0)


# ----------------------------------------------------------------------------------------------------- 3-CL
def check_coloring(h: Hypergraph, colours: Sequence[int]) -> bool:
    """Every vertex has a colour in {0,1,2} and every hyperedge sees at least two colours."""
    if len(colours) != h.num_vertices or any(c not in (0, 1, 2) for c in colours):
        return False
    return all(len({colours[v] for v in e}) >= 2 for e in h.hyperedges)


def find_3coloring(h: Hypergraph, budget: int = 2_000_000) -> list[int] | None:
    """A valid hypergraph 3-colouring by backtracking (most-constrained vertex first), or ``None``.

    The first colouring in a fixed search order, so the canonical answer is deterministic."""
    if any(len(e) < 2 for e in h.hyperedges):
        return None
    n = h.num_vertices
    order = sorted(range(n), key=lambda v: (-h.degree(v), v))
    pos = {v: i for i, v in enumerate(order)}
    closing: list[list[tuple[int, ...]]] = [[] for _ in range(n)]
    for e in h.hyperedges:
        closing[max(pos[v] for v in e)].append(e)
    col = [-1] * n
    nodes = 0

    def extend(i: int) -> bool:
        nonlocal nodes
        if i == n:
            return True
        v = order[i]
        for c in range(min(3, _max_used(i) + 2)):  # symmetry breaking: new colours in order
            nodes += 1
            if nodes > budget:
                raise SearchBudgetExceeded("3-colouring search budget exceeded")
            col[v] = c
            if all(len({col[x] for x in e}) >= 2 for e in closing[i]) and extend(i + 1):
                return True
        col[v] = -1
        return False

    def _max_used(i: int) -> int:
        return max((col[order[j]] for j in range(i)), default=-1)

    return list(col) if extend(0) else None


# ----------------------------------------------------------------------------------------------------- SHC
def _junctions(h: Hypergraph, cycle: Sequence[int]) -> list[int] | None:
    """The shared vertex of each cyclically consecutive pair of distinct hyperedge ids, or None if a pair shares
    not exactly one."""
    if len(set(cycle)) != len(cycle) or any(not 0 <= i < h.num_hyperedges for i in cycle):
        return None
    junctions = []
    for a, b in zip(cycle, list(cycle[1:]) + [cycle[0]]):
        common = set(h.hyperedges[a]) & set(h.hyperedges[b])
        if len(common) != 1:
            return None
        junctions.append(next(iter(common)))
    return junctions


def check_strict_hypercycle(h: Hypergraph, cycle: Sequence[int]) -> bool:
    """The question's strict hypercycle: k >= 2 distinct hyperedges, cyclically consecutive ones sharing exactly one
    vertex (appendix E.2 and C); nothing else (no k >= 3, no distinct shared vertices) is asked."""
    return len(cycle) >= 2 and _junctions(h, cycle) is not None


def _is_simple_hypercycle(h: Hypergraph, cycle: Sequence[int]) -> bool:
    """The longer cycles the search looks for (rows are built with it): k >= 3, the k shared vertices distinct."""
    junctions = _junctions(h, cycle) if len(cycle) >= 3 else None
    return junctions is not None and len(set(junctions)) == len(cycle)


def find_strict_hypercycle(h: Hypergraph, budget: int = 500_000) -> list[int] | None:
    """The first strict hypercycle in a deterministic DFS (smallest start hyperedge first), or ``None``."""
    m = h.num_hyperedges
    sets = [set(e) for e in h.hyperedges]
    link: list[dict[int, int]] = [{} for _ in range(m)]  # link[a][b] = the single shared vertex
    for a, b in combinations(range(m), 2):
        common = sets[a] & sets[b]
        if len(common) == 1:
            x = next(iter(common))
            link[a][b] = x
            link[b][a] = x
    nodes = 0
    for start in range(m):
        path, used_v = [start], set()

        def dfs(a: int) -> bool:
            nonlocal nodes
            for b, x in sorted(link[a].items()):
                nodes += 1
                if nodes > budget:
                    raise SearchBudgetExceeded("hypercycle search budget exceeded")
                if x in used_v:
                    continue
                if b == start and len(path) >= 3:
                    if _is_simple_hypercycle(h, path):
                        return True
                    continue
                if b <= start or b in path:
                    continue  # cycles are found from their smallest hyperedge
                path.append(b)
                used_v.add(x)
                if dfs(b):
                    return True
                path.pop()
                used_v.discard(x)
            return False

        if dfs(start):
            return path
    return None


# ----------------------------------------------------------------------------------------------------- HHM
def _bipartite_match(allowed: list[list[int]], size: int) -> list[int] | None:
    """Perfect matching of len(allowed) left nodes into range(size) (Kuhn's augmenting paths)."""
    owner = [-1] * size

    def augment(u: int, seen: set[int]) -> bool:
        for w in allowed[u]:
            if w not in seen:
                seen.add(w)
                if owner[w] == -1 or augment(owner[w], seen):
                    owner[w] = u
                    return True
        return False

    for u in range(len(allowed)):
        if not augment(u, set()):
            return None
    result = [-1] * len(allowed)
    for w, u in enumerate(owner):
        if u != -1:
            result[u] = w
    return result


def hamiltonian_order(h: Hypergraph, s: int, t: int, path: Sequence[int]) -> list[int] | None:
    """The vertex ordering v1=s..vn=t realising hyperedge sequence ``path``, or ``None`` if none exists.

    Position i (1..n) may hold a vertex of e_{i-1} ∩ e_i (only e_1 for i=1, only e_{n-1} for i=n); all n positions
    get distinct vertices, s first and t last: a bipartite matching of positions to vertices. A hyperedge may serve
    several steps (the question asks only that the path visit every vertex exactly once)."""
    n = h.num_vertices
    if len(path) != n - 1 or any(not 0 <= i < h.num_hyperedges for i in path):
        return None
    if n == 1:
        return [s] if s == t else None
    edges = [set(h.hyperedges[i]) for i in path]
    allowed = []
    for pos in range(n):
        if pos == 0:
            cand = {s} & edges[0]
        elif pos == n - 1:
            cand = {t} & edges[-1]
        else:
            cand = (edges[pos - 1] & edges[pos]) - {s, t}
        allowed.append(sorted(cand))
    return _bipartite_match(allowed, n)


def check_hamiltonian_path(h: Hypergraph, s: int, t: int, path: Sequence[int]) -> bool:
    return hamiltonian_order(h, s, t, path) is not None


def check_hamiltonian_order(h: Hypergraph, s: int, t: int, order: Sequence[int]) -> bool:
    """A Hamiltonian path given by its vertices: all n once, s first, t last, each step inside some hyperedge."""
    n = h.num_vertices
    if len(order) != n or sorted(order) != list(range(n)) or order[0] != s or order[-1] != t:
        return False
    return all(any(a in e and b in e for e in h.hyperedges) for a, b in zip(order, order[1:]))


def find_hamiltonian_path(h: Hypergraph, s: int, t: int | None = None,
                          budget: int = 500_000) -> tuple[list[int], int] | None:
    """A hyperedge sequence of a Hamiltonian path from ``s`` (to ``t``, or to any vertex when ``t`` is None).

    DFS over vertex orders on the clique expansion; every full order is accepted when its steps can be given
    distinct hyperedges (a bipartite matching of steps to hyperedges). Returns ``(path, end_vertex)`` or None."""
    n = h.num_vertices
    if n < 2:
        return None
    step_edges: dict[tuple[int, int], list[int]] = {}
    for i, e in enumerate(h.hyperedges):
        for a, b in combinations(e, 2):
            step_edges.setdefault((a, b), []).append(i)
            step_edges.setdefault((b, a), []).append(i)
    adj: dict[int, list[int]] = {v: [] for v in range(n)}
    for a, b in step_edges:
        adj[a].append(b)
    for v in adj:
        adj[v].sort()
    if h.num_hyperedges < n - 1:
        return None
    order = [s]
    used = {s}
    nodes = 0

    def dfs(v: int):
        nonlocal nodes
        nodes += 1
        if nodes > budget:
            raise SearchBudgetExceeded("Hamiltonian path search budget exceeded")
        if len(order) == n:
            if t is not None and v != t:
                return None
            steps = [step_edges[(order[i], order[i + 1])] for i in range(n - 1)]
            match = _bipartite_match(steps, h.num_hyperedges)
            return (match, v) if match is not None else None
        for w in adj[v]:
            if w in used or (t is not None and w == t and len(order) < n - 1):
                continue
            order.append(w)
            used.add(w)
            found = dfs(w)
            if found:
                return found
            order.pop()
            used.discard(w)
        return None

    return dfs(s)
