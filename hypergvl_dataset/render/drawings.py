"""The five visual representations of HyperGVL (sec. 2.4, Appendix D.1), one registered drawing each: a renderer
is one function here, decorated ``@register_renderer(name, label=...)``, that draws a hypergraph on a
:class:`~hypergvl.render.canvas.Panel`."""
from __future__ import annotations

from typing import TYPE_CHECKING

import networkx as nx
import numpy as np

from hypergvl.hypergraph import Hypergraph
from hypergvl.render.base import register_renderer
from hypergvl.render.style import (FILL_ALPHA, GREYS, HEIGHT, PX_PER_PT, VERTEX_FACE, VERTEX_TEXT, WIDTH,
                                   hyperedge_colour)
from hypergvl.render.layout import layout, place_labels, separate, spiral

if TYPE_CHECKING:
    from hypergvl.render.canvas import Panel

def _draw_vertices(panel: Panel, xy: np.ndarray, radius: float, zorder: float = 6) -> None:
    """Black discs with white ``v<i>`` labels sized to fit the disc."""
    n = len(xy)
    panel.discs(xy, radius, VERTEX_FACE, zorder=zorder)
    size = panel.fit_fontsize(f"v{max(n - 1, 0)}", 1.55 * radius, largest=11.0)
    panel.texts(xy, [f"v{i}" for i in range(n)], size, colour=VERTEX_TEXT, zorder=zorder + 0.5)


def _draw_hyperedge_nodes(panel: Panel, xy: np.ndarray, half: float, size_pt: float,
                          label_below: bool = False) -> None:
    """Squares in the hyperedge colours with ``e<i>`` labels below (black) or inside (bold; white on dark
    colours, black on light ones)."""
    m = len(xy)
    panel.squares(xy, half, [hyperedge_colour(i) for i in range(m)], zorder=6)
    labels = np.array([f"e{i}" for i in range(m)], dtype=object)
    if label_below:  # on white boxes, as lines to a zigzagged lower row pass by
        panel.label_boxes(xy - [0, half + 0.75 * size_pt * PX_PER_PT], labels, size_pt, "none", pad_px=2.0,
                          zorder=7)
        return
    light = np.array([_luminance(panel, hyperedge_colour(i)) > 0.55 for i in range(m)], dtype=bool)
    panel.texts(xy[~light], labels[~light], size_pt, colour="white", zorder=7, bold=True)
    panel.texts(xy[light], labels[light], size_pt, colour="black", zorder=7, bold=True)


def _luminance(panel: Panel, colour: str) -> float:
    r, g, b = panel.rgb(colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _incidences(h: Hypergraph, vxy: np.ndarray, exy: np.ndarray):
    """Vertex-hyperedge segments of the star expansion (D.1 "Bipartite Transformation"), in hyperedge colours."""
    segs = [(vxy[v], exy[i]) for i, edge in enumerate(h.hyperedges) for v in edge]
    cols = [hyperedge_colour(i) for i, edge in enumerate(h.hyperedges) for _ in edge]
    return segs, cols


def _label_size_for(panel: Panel, m: int, width_px: float, largest: float = 11.0) -> float:
    return panel.fit_fontsize(f"e{max(m - 1, 0)}", width_px, largest)


def _free_radius(panel: Panel, n: int) -> float:
    """Vertex radius (px) for free layouts (Enc-Hy, Cli-Exp): by the panel area per vertex."""
    return float(np.clip(0.075 * np.sqrt(panel.w * panel.h / max(n, 1)), 14.0, 21.0))


def _node_scale(panel: Panel) -> float:
    """1 on the full picture, smaller on an ISM half panel."""
    return float(np.clip(np.sqrt(panel.w * panel.h / (WIDTH * HEIGHT)), 0.75, 1.0))


@register_renderer("enc_hy", label="Enc-Hy")
def draw_enc_hy(panel: Panel, h: Hypergraph) -> None:
    """Enc-Hy (D.1): "a labeled convex hull visualization using NetworkX's kamada_kawai_layout for vertex
    positioning ... For each hyperedge e_i with |e_i| >= 3, we compute the convex hull of its member vertices
    using SciPy's ConvexHull, rendering it as a colored polygonal region with 15% opacity. Crucially, a white
    rectangular label box displaying the hyperedge ID (e.g., "e2") is placed at the centroid of the region".
    Hulls are padded and rounded; order-2 hyperedges become capsules, order-1 hyperedges rings."""
    from scipy.spatial import ConvexHull  # lazy: scipy.spatial 0.3 s; paid by the first Enc-Hy picture, not a listing

    n, m = h.num_vertices, h.num_hyperedges
    s = _node_scale(panel)
    r = _free_radius(panel, n)
    # padding layer: at each shared vertex, hyperedges with larger (order, index) enclose smaller ones
    key = [(len(e), i) for i, e in enumerate(h.hyperedges)]
    layer = np.array([max(sum(key[j] < key[i] for j in h.incident[v]) for v in e) for i, e in
                      enumerate(h.hyperedges)], dtype=float).reshape(-1)
    pads = r + 6.0 * s + 7.0 * s * np.minimum(layer, 5)
    margin = (pads.max() if m else r) + 6
    xy = panel.fit(separate(panel.fit(layout(h, "kamada_kawai"), margin, rotate=True), 3.2 * r), margin)
    ang = np.arange(36) * 2 * np.pi / 36
    disc = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    hulls = []
    for i, edge in enumerate(h.hyperedges):  # Minkowski sum of the members' hull and a disc of radius pads[i]
        pts = (xy[list(edge)][:, None, :] + pads[i] * disc[None]).reshape(-1, 2)
        hulls.append(pts[ConvexHull(pts).vertices])
    order = sorted(range(m), key=lambda i: (-len(h.hyperedges[i]), -pads[i], i))  # large regions underneath
    rgb = [panel.rgb(hyperedge_colour(i)) for i in range(m)]
    panel.fills([hulls[i] for i in order], [rgb[i] for i in order], FILL_ALPHA)
    panel.polygons([hulls[i] for i in order], "none", [(*rgb[i], 0.9) for i in order], 2.0, zorder=1)
    _draw_vertices(panel, xy, r)
    if m:
        labels = [f"e{i}" for i in range(m)]
        size = (11.0 if m <= 10 else 9.5) * s
        boxes = [np.array(panel.text_size(t, size)) + 8 for t in labels]
        offsets = spiral(round(max(4.0, r / 2.5), 1))
        cands = [_polygon_centroid(hulls[i]) + offsets for i in range(m)]  # "at the centroid of the region"
        inside = [panel.inside(hulls[i], c) for i, c in enumerate(cands)]
        pos = place_labels(cands, boxes, xy, r, (panel.w, panel.h), preferred=inside)
        panel.label_boxes(pos, labels, size, [hyperedge_colour(i) for i in range(m)])


def _polygon_centroid(poly: np.ndarray) -> np.ndarray:
    """Area centroid of a simple polygon (vertices in order)."""
    x, y = poly[:, 0], poly[:, 1]
    xn, yn = np.roll(x, -1), np.roll(y, -1)
    cross = x * yn - xn * y
    area = cross.sum() / 2
    if abs(area) < 1e-9:
        return poly.mean(axis=0)
    return np.array([((x + xn) * cross).sum(), ((y + yn) * cross).sum()]) / (6 * area)


def _row(k: int, width: float, y: float, margin: float, zigzag_below: float, dy: float):
    """``k`` points evenly across ``width`` (at most 170 px apart) at height ``y``; closer than
    ``zigzag_below``, every other point moves ``dy`` down. Returns them and the spacing within a line."""
    spacing = min(170.0, (width - 2 * margin) / max(k - 1, 1))
    xy = np.stack([width / 2 + (np.arange(k) - (k - 1) / 2) * spacing, np.full(k, float(y))], axis=1)
    if k > 1 and spacing < zigzag_below:
        xy[1::2, 1] += dy
        return xy, 2 * spacing
    return xy, spacing


@register_renderer("bi_inc", label="Bi-Inc")
def draw_bi_inc(panel: Panel, h: Hypergraph) -> None:
    """Bi-Inc (D.1): "a horizontal two-layer layout where vertices are positioned in the top row and hyperedge
    nodes in the bottom row, with straight lines depicting membership. Vertex nodes are rendered as black
    circles with white labels, while hyperedge nodes are colored squares with distinct colors assigned to each
    hyperedge." A crowded row zigzags over two lines so that labels keep a readable size; hyperedge labels
    sit under their squares."""
    n, m = h.num_vertices, h.num_hyperedges
    s = _node_scale(panel)
    vxy, vsp = _row(n, panel.w, panel.h * 0.78, 40.0, 58.0, -60.0 * s)
    exy, esp = _row(m, panel.w, panel.h * 0.3, 40.0, 58.0, -75.0 * s)
    r = float(np.clip(0.38 * vsp, 12.0, 24.0 * s))
    half = float(np.clip(0.3 * esp, 10.0, 18.0 * s))
    panel.lines(*_incidences(h, vxy, exy), 1.6, zorder=2)
    _draw_vertices(panel, vxy, r)
    _draw_hyperedge_nodes(panel, exy, half, _label_size_for(panel, m, 0.85 * esp), label_below=True)


def _circle(k: int, radius: float, centre: np.ndarray) -> np.ndarray:
    """networkx ``circular_layout`` order: the first point at angle 0, counter-clockwise."""
    if k == 1:
        return centre[None, :].astype(float)
    ang = np.arange(k) * 2 * np.pi / k
    return centre + radius * np.stack([np.cos(ang), np.sin(ang)], axis=1)


@register_renderer("sh_inc", label="Sh-Inc")
def draw_sh_inc(panel: Panel, h: Hypergraph) -> None:
    """Sh-Inc (D.1): "NetworkX's shell_layout algorithm to arrange vertices in an inner concentric circle and
    hyperedge nodes in an outer circle. This radial arrangement facilitates the identification of
    vertex-hyperedge connectivity patterns through visual clustering." """
    n, m = h.num_vertices, h.num_hyperedges
    s = _node_scale(panel)
    vnodes, enodes = [("v", v) for v in range(n)], [("e", i) for i in range(m)]
    pos = nx.shell_layout(h.star_expansion(), nlist=[vnodes, enodes] if m else [vnodes])
    R = min(panel.w, panel.h) / 2 - 32.0
    centre = np.array([panel.w / 2, panel.h / 2])
    vxy = centre + R * np.array([pos[v] for v in vnodes]).reshape(-1, 2)
    exy = centre + R * np.array([pos[e] for e in enodes]).reshape(-1, 2)
    inner = R / 2 if m else R
    r = float(np.clip(0.36 * 2 * np.pi * inner / max(n, 2), 12.0, 24.0 * s))
    half = float(np.clip(0.3 * 2 * np.pi * R / max(m, 2), 10.0, 21.0 * s))
    panel.lines(*_incidences(h, vxy, exy), 1.4, zorder=2)
    _draw_vertices(panel, vxy, r)
    _draw_hyperedge_nodes(panel, exy, half, _label_size_for(panel, m, 1.6 * half))


@register_renderer("st_inc", label="St-Inc")
def draw_st_inc(panel: Panel, h: Hypergraph) -> None:
    """St-Inc (D.1): "Similar to Sh-Inc but with vertices positioned on an outer circle and hyperedge nodes
    placed at the center, with radial connections emanating from hyperedge centers to member vertices. This
    star-like pattern emphasizes the grouping structure of each hyperedge." """
    n, m = h.num_vertices, h.num_hyperedges
    s = _node_scale(panel)
    R = min(panel.w, panel.h) / 2 - 32.0
    centre = np.array([panel.w / 2, panel.h / 2])
    vxy = _circle(n, R, centre)
    r = float(np.clip(0.36 * 2 * np.pi * R / max(n, 2), 12.0, 24.0 * s))
    half = 19.0 * s
    exy = np.array([centre + 0.55 * (vxy[list(e)].mean(axis=0) - centre) for e in h.hyperedges]).reshape(-1, 2)
    exy = separate(exy, 2 * half + 12, iterations=150, centre=centre, limit=R - r - half - 16)
    panel.lines(*_incidences(h, vxy, exy), 1.6, zorder=2)
    _draw_vertices(panel, vxy, r)
    _draw_hyperedge_nodes(panel, exy, half, _label_size_for(panel, m, 1.6 * half))


@register_renderer("cli_exp", label="Cli-Exp")
def draw_cli_exp(panel: Panel, h: Hypergraph) -> None:
    """Cli-Exp (D.1): "each hyperedge e = {v1, ..., vk} is decomposed into a complete subgraph over its vertices
    ... Edge labels annotate each pairwise connection with the hyperedge IDs it belongs to (e.g., "e0,e2" ...).
    Layout is computed using NetworkX's spring_layout with parameters k=2.0, iterations=100, scale=3.0".
    A label sits on its edge, at the middle or, when that is taken, further along it. An order-1 hyperedge has
    no pair to decompose into, so it is drawn as a labelled self-loop on its vertex."""
    n = h.num_vertices
    r = _free_radius(panel, n)
    singles: dict[int, list[int]] = {}
    for i, edge in enumerate(h.hyperedges):
        if len(edge) == 1:
            singles.setdefault(edge[0], []).append(i)
    margin = r + 12 + (1.8 * r if singles else 0)
    xy = panel.fit(separate(panel.fit(layout(h, "spring"), margin, rotate=True), 3.6 * r), margin)
    g = h.clique_expansion()
    pairs = sorted((min(a, b), max(a, b)) for a, b in g.edges)
    segments = [(xy[a], xy[b]) for a, b in pairs]
    labels = [",".join(f"e{i}" for i in g[a][b]["hyperedges"]) for a, b in pairs]
    t = np.array([0.5, 0.42, 0.58, 0.34, 0.66, 0.27, 0.73, 0.2, 0.8])[:, None]
    cands = [xy[a] + t * (xy[b] - xy[a]) for a, b in pairs]
    lengths = [float(np.linalg.norm(xy[a] - xy[b])) for a, b in pairs]
    size = (9.0 if len(pairs) + len(singles) <= 20 else 8.0 if len(pairs) + len(singles) <= 50 else 7.0)
    size *= _node_scale(panel)
    rho = 0.75 * r  # self-loop radius
    ang = np.linspace(0, 2 * np.pi, 33)
    for v, ids in sorted(singles.items()):
        away = xy[v] - (xy[list(g[v])].mean(axis=0) if g.degree(v) else [panel.w / 2, panel.h / 2])
        norm = np.linalg.norm(away)
        direction = away / norm if norm > 1e-6 else np.array([0.0, 1.0])
        centre = xy[v] + direction * (0.6 * r + rho)
        loop = centre + rho * np.stack([np.cos(ang), np.sin(ang)], axis=1)
        segments += list(zip(loop[:-1], loop[1:]))
        labels.append(",".join(f"e{i}" for i in ids))
        w, hh = panel.text_size(labels[-1], size)
        reach = 0.6 * r + 2 * rho + 6 + 0.5 * abs(direction[0]) * w + 0.5 * abs(direction[1]) * hh
        cands.append(xy[v] + direction * reach + spiral(5.0, rings=4))
        lengths.append(-1.0)  # loops first: their labels have the fewest good places
    panel.lines(segments, GREYS[0], 1.5, zorder=2)
    _draw_vertices(panel, xy, r)
    if labels:
        boxes = [np.array(panel.text_size(s, size)) + 6 for s in labels]
        order = np.argsort(lengths, kind="stable")  # then short edges first
        pos = np.empty((len(labels), 2))
        pos[order] = place_labels([cands[k] for k in order], [boxes[k] for k in order], xy, r,
                                   (panel.w, panel.h))
        panel.label_boxes(pos, labels, size, GREYS[1], pad_px=3.0)
