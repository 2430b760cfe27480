"""The immutable :class:`Hypergraph` value every other stage is a pure function of.

HyperGVL (sec. 2.2): "a hypergraph G = {V, E} ... vertices v0..v{n-1} and hyperedges e0..e{m-1}".
Vertices are ``0..n-1``; hyperedges an ordered tuple of sorted tuples of distinct vertices (size >= 1).
JSON form: ``{"num_vertices": n, "hyperedges": [[0, 1, 2], [1, 3]]}``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Sequence

import networkx as nx
import numpy as np

__all__ = ["Hypergraph"]


@dataclass(frozen=True)
class Hypergraph:
    """A hypergraph over vertices ``0..num_vertices-1`` with an ordered list of hyperedges.

    >>> h = Hypergraph(5, [[0, 1, 2], [1, 2, 3], [2, 3, 4]])
    >>> h.degree(2), h.order(0), h.neighbors(0)
    (3, 3, (1, 2))
    """

    num_vertices: int
    hyperedges: tuple[tuple[int, ...], ...] = field(default=())

    def __init__(self, num_vertices: int, hyperedges: Iterable[Iterable[int]] = ()):
        if isinstance(num_vertices, bool) or not isinstance(num_vertices, (int, np.integer)):
            raise ValueError(f"num_vertices must be an integer, got {num_vertices!r}")
        n = int(num_vertices)
        if n < 1:
            raise ValueError(f"num_vertices must be >= 1, got {n}")
        if isinstance(hyperedges, (str, bytes)):
            raise ValueError("hyperedges must be a list of lists of vertex ids")
        edges = []
        for i, edge in enumerate(hyperedges):
            if isinstance(edge, (str, bytes)) or not isinstance(edge, Iterable):
                raise ValueError(f"hyperedge e{i} must be a list of vertex ids, got {edge!r}")
            members = list(edge)
            if not members:
                raise ValueError(f"hyperedge e{i} is empty")
            for v in members:
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                    raise ValueError(f"hyperedge e{i} has a non-integer vertex id {v!r}")
                if not 0 <= v < n:
                    raise ValueError(f"hyperedge e{i} has vertex id {v} outside 0..{n - 1}")
            if len(set(members)) != len(members):
                raise ValueError(f"hyperedge e{i} repeats a vertex: {members}")
            edges.append(tuple(sorted(int(v) for v in members)))
        object.__setattr__(self, "num_vertices", n)
        object.__setattr__(self, "hyperedges", tuple(edges))

    # ------------------------------------------------------------------ I/O
    def to_json(self) -> str:
        return json.dumps({"num_vertices": self.num_vertices, "hyperedges": [list(e) for e in self.hyperedges]},
                          separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | dict) -> "Hypergraph":
        if isinstance(text, dict):
            obj = text
        else:
            try:
                obj = json.loads(text)
            except (TypeError, json.JSONDecodeError) as exc:
                raise ValueError(f"invalid hypergraph JSON: {exc}") from None
        if not isinstance(obj, dict) or set(obj) != {"num_vertices", "hyperedges"}:
            raise ValueError('hypergraph JSON must be an object with exactly "num_vertices" and "hyperedges"')
        if not isinstance(obj["hyperedges"], list):
            raise ValueError('"hyperedges" must be a list of lists of vertex ids')
        return cls(obj["num_vertices"], obj["hyperedges"])

    # ------------------------------------------------------------ structure
    @property
    def num_hyperedges(self) -> int:
        return len(self.hyperedges)

    def order(self, e: int) -> int:
        """Order of hyperedge ``e``: its number of vertices (HyperGVL C.1)."""
        return len(self.hyperedges[e])

    @cached_property
    def degrees(self) -> tuple[int, ...]:
        deg = [0] * self.num_vertices
        for edge in self.hyperedges:
            for v in edge:
                deg[v] += 1
        return tuple(deg)

    def degree(self, v: int) -> int:
        """Number of hyperedges containing ``v`` (HyperGVL C.1, DVC)."""
        return self.degrees[v]

    @cached_property
    def incident(self) -> tuple[tuple[int, ...], ...]:
        """``incident[v]``: indices of the hyperedges containing ``v``, ascending."""
        inc: list[list[int]] = [[] for _ in range(self.num_vertices)]
        for i, edge in enumerate(self.hyperedges):
            for v in edge:
                inc[v].append(i)
        return tuple(tuple(x) for x in inc)

    def neighbors(self, v: int, min_order: int = 1) -> tuple[int, ...]:
        """Vertices sharing a hyperedge of order >= ``min_order`` with ``v`` (C.1 Ne / ONe), sorted."""
        out: set[int] = set()
        for i in self.incident[v]:
            edge = self.hyperedges[i]
            if len(edge) >= min_order:
                out.update(edge)
        out.discard(v)
        return tuple(sorted(out))

    def incidence_matrix(self) -> np.ndarray:
        """Binary ``(num_vertices, num_hyperedges)`` matrix, ``H[v, e] = 1`` iff ``v in e``."""
        mat = np.zeros((self.num_vertices, self.num_hyperedges), dtype=np.int8)
        for i, edge in enumerate(self.hyperedges):
            mat[list(edge), i] = 1
        return mat

    def adjacency_matrix(self) -> np.ndarray:
        """Binary vertex adjacency of the clique expansion (no self loops)."""
        adj = np.zeros((self.num_vertices, self.num_vertices), dtype=np.int8)
        for edge in self.hyperedges:
            idx = np.asarray(edge)
            adj[np.ix_(idx, idx)] = 1
        np.fill_diagonal(adj, 0)
        return adj

    def clique_expansion(self) -> nx.Graph:
        """Graph on the vertices; edge ``(u, v)`` carries ``hyperedges``: the ids of hyperedges holding both."""
        g = nx.Graph()
        g.add_nodes_from(range(self.num_vertices))
        for i, edge in enumerate(self.hyperedges):
            for a in range(len(edge)):
                for b in range(a + 1, len(edge)):
                    u, v = edge[a], edge[b]
                    if g.has_edge(u, v):
                        g[u][v]["hyperedges"].append(i)
                    else:
                        g.add_edge(u, v, hyperedges=[i])
        return g

    def star_expansion(self) -> nx.Graph:
        """Bipartite vertex-hyperedge graph; nodes ``("v", i)`` and ``("e", j)`` with attribute ``kind``."""
        g = nx.Graph()
        g.add_nodes_from((("v", v) for v in range(self.num_vertices)), kind="v")
        g.add_nodes_from((("e", i) for i in range(self.num_hyperedges)), kind="e")
        g.add_edges_from((("v", v), ("e", i)) for i, edge in enumerate(self.hyperedges) for v in edge)
        return g

    def is_connected(self) -> bool:
        """True when the star expansion restricted to vertices is connected (every vertex reachable)."""
        seen = {0}
        stack = [0]
        while stack:
            v = stack.pop()
            for u in self.neighbors(v):
                if u not in seen:
                    seen.add(u)
                    stack.append(u)
        return len(seen) == self.num_vertices

    def relabel(self, perm: Sequence[int], edge_order: Sequence[int] | None = None) -> "Hypergraph":
        """Vertex ``v`` becomes ``perm[v]``; hyperedge ``i`` of the result is ``edge_order[i]`` of this one."""
        order = range(self.num_hyperedges) if edge_order is None else edge_order
        return Hypergraph(self.num_vertices, [[perm[v] for v in self.hyperedges[i]] for i in order])
