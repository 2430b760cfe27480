"""Where things go: vertex layouts (Kamada-Kawai by stress majorisation, spring) on each connected component of
the clique expansion, packed into the picture; points pushed apart; labels placed off vertices and each other.
NumPy and networkx only."""
from __future__ import annotations

from functools import lru_cache
from typing import Callable, Sequence

import networkx as nx
import numpy as np

from hypergvl.hypergraph import Hypergraph
from hypergvl.render.style import HEIGHT, WIDTH

SPRING_SEED = 0  # D.3: "deterministic layouts (with fixed random seeds)"


def spring(g: nx.Graph) -> np.ndarray:
    """D.1 Cli-Exp: ``spring_layout(k=2.0, iterations=100, scale=3.0)`` with a fixed seed."""
    pos = nx.spring_layout(g, k=2.0, iterations=100, scale=3.0, seed=SPRING_SEED)
    return np.array([pos[v] for v in g], dtype=float)


def _principal_axes(xy: np.ndarray) -> np.ndarray:
    """Rotate ``xy`` (centred) so its longest spread is horizontal; the sign is fixed by the first points."""
    xy = xy - xy.mean(axis=0)
    if len(xy) < 2:
        return xy
    _, vecs = np.linalg.eigh(xy.T @ xy)
    out = xy @ vecs[:, ::-1]
    for d in range(2):  # deterministic orientation: the first point with a clear coordinate is non-negative
        nz = np.flatnonzero(np.abs(out[:, d]) > 1e-6)
        if len(nz) and out[nz[0], d] < 0:
            out[:, d] = -out[:, d]
    return out


def kamada_kawai(dist: np.ndarray, max_iter: int = 300, tol: float = 1e-5) -> np.ndarray:
    """Positions (n, 2) minimising the Kamada-Kawai energy that networkx's ``kamada_kawai_layout`` minimises,
    sum_{i<j} (|x_i - x_j| - d_ij)^2 / d_ij^2 for graph distances ``dist`` (connected, so all finite).

    networkx runs L-BFGS from a circle (30-150 ms for 20 vertices here); we run stress majorisation (SMACOF,
    Gansner, Koren & North 2004, whose weighted stress with weights d^-2 is exactly this energy) from a classical
    MDS start: 2-5 ms, and on random hypergraphs an energy equal in the median to networkx's and never far above.
    """
    d = np.asarray(dist, dtype=float)
    n = len(d)
    if n == 1:
        return np.zeros((1, 2))
    off = ~np.eye(n, dtype=bool)
    w = np.zeros_like(d)
    w[off] = d[off] ** -2.0
    lap = np.diag(w.sum(axis=1)) - w
    lap_pinv = np.linalg.pinv(lap)
    centre = np.eye(n) - 1.0 / n
    vals, vecs = np.linalg.eigh(-0.5 * centre @ (d ** 2) @ centre)
    vecs = vecs[:, ::-1][:, :2] * np.sqrt(np.maximum(vals[::-1][:2], 1e-9))
    vecs *= np.where(vecs[np.argmax(np.abs(vecs), axis=0), [0, 1]] < 0, -1.0, 1.0)  # fixed eigenvector signs
    golden = np.arange(n) * 2.399963
    x = vecs + 1e-3 * np.stack([np.cos(golden), np.sin(golden)], axis=1)  # break exact symmetries
    old = np.inf
    for _ in range(max_iter):
        dx = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
        with np.errstate(divide="ignore", invalid="ignore"):
            b = np.where(dx > 1e-12, -w * d / dx, 0.0)
        b[np.diag_indices(n)] = 0.0
        b[np.diag_indices(n)] = -b.sum(axis=1)
        x = lap_pinv @ (b @ x)
        stress = (w * (dx - d) ** 2)[off].sum() / 2
        if old - stress < tol * old:
            break
        old = stress
    return x


def kamada_kawai_graph(g: nx.Graph) -> np.ndarray:
    """D.1 Enc-Hy: Kamada-Kawai (see :func:`kamada_kawai`) on hop distances."""
    hops = dict(nx.all_pairs_shortest_path_length(g))
    return kamada_kawai(np.array([[hops[a][b] for b in g] for a in g], dtype=float))


LAYOUTS: dict[str, Callable[[nx.Graph], np.ndarray]] = {"kamada_kawai": kamada_kawai_graph, "spring": spring}


@lru_cache(maxsize=512)
def layout(h: Hypergraph, method: str) -> np.ndarray:
    """Vertex positions: ``method`` on each connected component of the clique expansion (networkx's layouts
    would push unconnected parts 10^6 apart, or to the edges), each scaled to unit mean edge length and turned
    landscape, then packed in rows (largest first) at the best scale for the picture."""
    g = h.clique_expansion()
    comps = sorted((sorted(c) for c in nx.connected_components(g)), key=lambda c: (-len(c), c[0]))
    gap = 1.3
    blocks = []
    for comp in comps:
        if len(comp) == 1:
            xy = np.zeros((1, 2))
        else:
            idx = {v: k for k, v in enumerate(comp)}
            sub = nx.Graph()
            sub.add_nodes_from(range(len(comp)))
            sub.add_edges_from((idx[a], idx[b]) for a, b in g.subgraph(comp).edges)
            xy = LAYOUTS[method](sub)
            mean_len = np.mean([np.linalg.norm(xy[a] - xy[b]) for a, b in sub.edges])
            xy = _principal_axes(xy / max(float(mean_len), 1e-9))
        blocks.append((comp, xy - xy.min(axis=0)))
    sizes = [xy.max(axis=0) + gap for _, xy in blocks]
    best = None
    for j in range(1, len(blocks) + 1):  # shelf packing; try each prefix width as the row width
        row_width = sum(w for w, _ in sizes[:j])
        offsets, x, y, row_h = [], 0.0, 0.0, 0.0
        for w, hh in sizes:
            if x > 0 and x + w > row_width + 1e-9:
                x, y, row_h = 0.0, y - row_h, 0.0
            offsets.append((x, y - hh))
            x, row_h = x + w, max(row_h, hh)
        width = max(x0 + w for (x0, _), (w, _) in zip(offsets, sizes))
        scale = min(WIDTH / width, HEIGHT / (row_h - y))
        if best is None or scale > best[0] * (1 + 1e-9):
            best = (scale, offsets)
    out = np.zeros((h.num_vertices, 2))
    for (comp, xy), offset in zip(blocks, best[1]):
        out[comp] = xy + offset
    out.flags.writeable = False
    return out


def place_labels(candidates: Sequence[np.ndarray], sizes, discs: np.ndarray, radius: float, bounds,
                  preferred: Sequence[np.ndarray] | None = None) -> np.ndarray:
    """Greedy label placement. Label ``i`` (a ``sizes[i]`` = (w, h) box) goes to the first of its
    ``candidates[i]`` (centres, best first) that lies inside ``bounds`` = (w, h) and overlaps no vertex disc
    (``discs``, ``radius``) and no label placed before, taking one with ``preferred[i]`` True if there is one;
    else to the first free one; else to the least overlapping one. The first ``_PLACE_BLOCK`` candidates of
    every label are costed against discs and bounds at once; a label's others only when none of its first ones
    is free and preferred (most labels need only those)."""
    if not len(candidates):
        return np.empty((0, 2))
    discs = np.asarray(discs, dtype=float).reshape(-1, 2)
    bounds = np.asarray(bounds, dtype=float)
    halves = np.asarray(sizes, dtype=float).reshape(-1, 2) / 2

    def fixed_cost(c: np.ndarray, half: np.ndarray) -> np.ndarray:  # discs and bounds; half per row of c
        d = np.maximum(np.abs(c[:, None, :] - discs[None]) - half[:, None, :], 0)
        cost = np.maximum(radius + 3 - np.sqrt((d ** 2).sum(-1)), 0).sum(axis=1)
        return cost + 1e3 * (np.maximum(half + 3 - c, 0) + np.maximum(c + half + 3 - bounds, 0)).sum(axis=1)

    heads = [c[:_PLACE_BLOCK] for c in candidates]
    ends = np.cumsum([len(c) for c in heads])
    head_cost = fixed_cost(np.concatenate(heads), np.repeat(halves, ends - np.r_[0, ends[:-1]], axis=0))
    out = np.empty((len(candidates), 2))
    placed = np.empty((len(candidates), 4))
    for i, cand in enumerate(candidates):
        half = halves[i]
        want = preferred[i] if preferred is not None else np.ones(len(cand), dtype=bool)
        first_free, costs = None, []
        for a, b in ((0, min(_PLACE_BLOCK, len(cand))), (_PLACE_BLOCK, len(cand))):
            if a >= b:
                break
            c = cand[a:b]
            cost = head_cost[ends[i] - b:ends[i]] if a == 0 else fixed_cost(c, np.broadcast_to(half, c.shape))
            if i:
                o = (np.minimum(c[:, None] + half, placed[None, :i, 2:])
                     - np.maximum(c[:, None] - half, placed[None, :i, :2]))
                cost = cost + (np.maximum(o[..., 0] + 3, 0) * np.maximum(o[..., 1] + 3, 0)).sum(axis=1)
            free = cost <= 0
            good = free & want[a:b]
            if good.any():
                first_free = a + int(np.argmax(good))
                break
            if first_free is None and free.any():
                first_free = a + int(np.argmax(free))
            costs.append(cost)
        j = first_free if first_free is not None else int(np.argmin(np.concatenate(costs)))
        out[i] = cand[j]
        placed[i] = [*(cand[j] - half), *(cand[j] + half)]
    return out


_PLACE_BLOCK = 25  # the centre and the first two rings of a label's spiral of candidates


@lru_cache(maxsize=32)
def spiral(step: float, rings: int = 10) -> np.ndarray:
    """Offsets on rings around (0, 0), nearest first: candidates for a label near its anchor."""
    pts = [np.zeros((1, 2))]
    for k in range(1, rings + 1):
        ang = np.arange(8 * k) * 2 * np.pi / (8 * k) + np.pi / 2
        pts.append(k * step * np.stack([np.cos(ang), np.sin(ang)], axis=1))
    out = np.concatenate(pts)
    out.flags.writeable = False
    return out


def separate(xy: np.ndarray, min_dist: float, iterations: int = 60, centre=None, limit: float = np.inf
              ) -> np.ndarray:
    """Push points closer than ``min_dist`` apart (deterministic; coincident points split at fixed angles),
    keeping them within ``limit`` of ``centre`` when given."""
    xy = np.array(xy, dtype=float).reshape(-1, 2)
    n = len(xy)
    if n < 2:
        return xy
    golden = np.arange(n) * 2.399963
    fallback = np.stack([np.cos(golden), np.sin(golden)], axis=1)
    for _ in range(iterations):
        diff = xy[:, None, :] - xy[None, :, :]
        dist = np.sqrt((diff ** 2).sum(-1))
        np.fill_diagonal(dist, np.inf)
        close = dist < min_dist
        if not close.any():
            break
        deficit = np.where(close, 1.1 * min_dist - dist, 0.0)  # overshoot a little: converge in few steps
        with np.errstate(divide="ignore", invalid="ignore"):
            unit = np.where(dist[..., None] > 1e-9, diff / dist[..., None], fallback[:, None, :])
        xy += (unit * deficit[..., None] * 0.5).sum(axis=1)
        if centre is not None:
            off = xy - centre
            norm = np.maximum(np.linalg.norm(off, axis=1, keepdims=True), 1e-9)
            xy = np.where(norm > limit, centre + off / norm * limit, xy)
    return xy
