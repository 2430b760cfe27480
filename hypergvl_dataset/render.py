"""The five visual hypergraph representations of HyperGVL as deterministic, compact PNG images.

HyperGVL sec. 2.4 ("Visual Hypergraph Representations"):

- Enclosing Hyperedges (Enc-Hy): "Visualizing hyperedges as geometric enclosures, with vertices inside
  enclosures indicating membership in the corresponding hyperedge."
- Bipartite Incidence (Bi-Inc): "Modeling hypergraphs as bipartite structures, with vertices and hyperedges as
  two disjoint sets arranged in separate layers. Straight lines between layers depict vertex-hyperedge membership."
- Shell Incidence (Sh-Inc) and Star Incidence (St-Inc): "Similar to the Bipartite Incidence representation ...".
- Clique Expansion (Cli-Exp): "Transforming hyperedges into vertex-vertex pairwise connections, with hyperedge
  IDs labeled to preserve hypergraph semantics."

Appendix D.1 ("Implementation Details"): "All visualizations transform hypergraph structures into images with
resolution 1400x1100 pixels at 150 DPI." The per-representation details of D.1 are quoted on each drawing
function below. Appendix D.2 (design rationale): "Hyperedges must have visual identifiers beyond color coding"
and "Layouts are optimized for small-to-medium hypergraphs (5-20 vertices)". Appendix D.3: ISM "contains two
hypergraphs in one query ... isomorphic hypergraphs often exhibit similar visual patterns under deterministic
layouts (with fixed random seeds)"; E.2.3 names them H (first) and G (second), so ``render(name, h, h2)`` draws
H on the left and G on the right of one 1400x1100 image.

Where the paper is loose, fixed here:

- Sh-Inc: sec. 2.4 puts the vertices outside, D.1 inside; we follow D.1 ("vertices in an inner concentric circle
  and hyperedge nodes in an outer circle"), which also keeps Sh-Inc distinct from St-Inc.
- St-Inc ("vertices positioned on an outer circle and hyperedge nodes placed at the center"): each hyperedge node
  sits inside the circle, pulled from the centre towards the centroid of its members so every star is short,
  and hyperedge nodes are pushed apart until they do not overlap.
- Layouts (Enc-Hy: Kamada-Kawai, Cli-Exp: spring) run on the clique expansion one connected component at a
  time (networkx would put unconnected parts 10^6 apart, or at the edges), the components packed into the
  picture; a connected hypergraph gets the paper's layout, up to rotation and scale. The Kamada-Kawai energy is
  minimised by stress majorisation (:func:`kamada_kawai`), 30x faster than networkx's optimiser here.
- Enc-Hy: every hyperedge is an enclosure: the
  SciPy convex hull of its members padded by a disc (a rounded hull), so an order-2 hyperedge is a capsule and an
  order-1 hyperedge a ring around its vertex; at a shared vertex larger hyperedges get larger padding, so the
  outlines there stay apart. Every region carries its white ``e<i>`` label box, moved off vertices and other
  labels when the centroid is taken.
- Cli-Exp: an order-1 hyperedge has no vertex pair, so it is drawn as a labelled self-loop on its vertex.
- Vertices are black discs with white ``v<i>`` labels in every representation; hyperedge ``e<i>`` has the same
  colour in every representation.

Everything is drawn in pixel coordinates as a handful of matplotlib collections on one reused Agg figure per
thread (labels are glyph outlines merged into one path per colour; no pyplot, no Text artists) into a buffer
filled white directly (no figure patch); the large 15%-opacity Enc-Hy fills are blended into that buffer first
by Pillow's polygon filler (2.5x cheaper than Agg's), aliased but under the anti-aliased outlines Agg draws
over them, so every outline lies above every fill. The buffer is then quantised to a palette PNG without
metadata text, deflated by zlib-ng (:func:`_encode_png`). The same input gives byte-identical output, whatever
the caller's rcParams. ``benchmarks/render.py`` measures the speed and size against plain ``networkx.draw`` +
``savefig``.

>>> from hypergvl.hypergraph import Hypergraph
>>> png = render("enc_hy", Hypergraph(5, [[0, 1, 2], [1, 2, 3], [2, 3, 4]]))
>>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
True
"""
from __future__ import annotations

import struct
import threading
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

import matplotlib
import networkx as nx
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import PathPatch
from matplotlib.path import Path
from matplotlib.textpath import TextPath, text_to_path
from matplotlib.transforms import Affine2D
from PIL import Image
from scipy.spatial import ConvexHull
from zlib_ng import zlib_ng

from hypergvl.hypergraph import Hypergraph
from hypergvl.registry import Registry

__all__ = ["RENDERERS", "Renderer", "register_renderer", "render", "hyperedge_colour", "WIDTH", "HEIGHT", "DPI"]

WIDTH, HEIGHT, DPI = 1400, 1100, 150  # D.1
PX_PER_PT = DPI / 72.0
SPRING_SEED = 0  # D.3: "deterministic layouts (with fixed random seeds)"
PALETTE_COLOURS = 128  # palette PNG; 15%-opacity fills and anti-aliased edges stay identical to the eye
PNG_COMPRESS_LEVEL = 4  # zlib-ng level: 5 costs 25% more deflate time for 5% fewer bytes, 3 saves 15% for 1% more

# Distinct hyperedge colours: strong tab10 first, then further well-separated hues; cycled beyond 24.
HYPEREDGE_COLOURS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363",
    "#b5cf6b", "#e7ba52", "#ad494a", "#a55194",
)
# Matplotlib settings that reach the Agg drawing, fixed so a caller's rcParams cannot change the picture.
_RC = {"lines.antialiased": True, "patch.antialiased": True, "patch.force_edgecolor": False, "path.simplify": False,
       "path.sketch": None, "agg.path.chunksize": 0, **{key: matplotlib.rcParamsDefault[key] for key in
                                                       ("text.hinting_factor", "text.kerning_factor")}}
_FONTS = {False: FontProperties(family="DejaVu Sans", size=10), True: FontProperties(family="DejaVu Sans",
                                                                                       weight="bold", size=10)}
VERTEX_FACE, VERTEX_TEXT = "black", "white"
FILL_ALPHA = 0.15  # D.1 Enc-Hy: "a colored polygonal region with 15% opacity"
GREYS = ("#555555", "#999999", "#aaaaaa")  # clique-expansion edges, their label boxes, the ISM divider


def _exact_colours() -> tuple[tuple[int, int, int], ...]:
    """Colours the drawings use: white, black, a grey ramp (anti-aliased text and discs), the greys, hyperedge
    colours and their 15% tints on white."""
    rgb = [np.array(to_rgb(c)) for c in ("white", "black", *GREYS, *HYPEREDGE_COLOURS)]
    rgb += [np.full(3, level / 16) for level in range(1, 16)]
    rgb += [FILL_ALPHA * np.array(to_rgb(c)) + (1 - FILL_ALPHA) for c in HYPEREDGE_COLOURS]
    return tuple(dict.fromkeys(tuple(int(round(255 * x)) for x in c) for c in rgb))


_EXACT_COLOURS = _exact_colours()
_EXACT_ARRAY = np.array(_EXACT_COLOURS, dtype=int)


def hyperedge_colour(i: int) -> str:
    """Colour of hyperedge ``e<i>``, the same in every representation."""
    return HYPEREDGE_COLOURS[i % len(HYPEREDGE_COLOURS)]


# ---------------------------------------------------------------------------------------------- text as paths
@lru_cache(maxsize=8192)
def _glyphs(text: str, size_pt: float, bold: bool = False) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Outline of ``text`` centred on (0, 0) in pixels (horizontally on its advance, vertically on the digit
    height), its path codes, and its width and height in pixels."""
    size = size_pt * PX_PER_PT
    tp = TextPath((0, 0), text, size=size, prop=_FONTS[bold])
    width, _, _ = text_to_path.get_text_width_height_descent(text, _FONTS[bold].copy(), ismath=False)
    width *= size / 10.0
    verts = tp.vertices - [width / 2, 0.371 * size]  # DejaVu Sans digits are 0.742 em tall
    verts.flags.writeable = False
    codes = np.asarray(tp.codes, dtype=np.uint8)
    codes.flags.writeable = False
    return verts, codes, width, 0.742 * size


def _text_size(text: str, size_pt: float, bold: bool = False) -> tuple[float, float]:
    _, _, w, h = _glyphs(text, size_pt, bold)
    return w, h


def _fit_fontsize(text: str, max_width_px: float, largest: float, smallest: float = 6.0) -> float:
    """Largest size (pt, in 0.25 steps so glyph outlines are reused) at which ``text`` is at most this wide."""
    w, _ = _text_size(text, 10.0)
    return float(np.clip(np.floor(40.0 * max_width_px / w) / 4.0, smallest, largest))


# ---------------------------------------------------------------------------------------------- drawing kit
class Panel:
    """A ``w`` x ``h`` pixel area of the figure, lower left at (``x0``, ``y0``); coordinates are pixels."""

    def __init__(self, fig: Figure, x0: float, y0: float, w: float, h: float, under: list | None = None):
        self.fig, self.w, self.h = fig, float(w), float(h)
        self.x0, self.y0 = float(x0), float(y0)
        self.transform = Affine2D().translate(x0, y0)  # display coordinates of Agg are pixels
        self.under = [] if under is None else under  # (polygon in buffer rows/columns, RGBA) for _blend_under

    def _add(self, artist) -> None:
        artist.set_transform(self.transform)
        self.fig.add_artist(artist)

    def fit(self, xy: np.ndarray, margin: float, rotate: bool = False) -> np.ndarray:
        """Scale (uniformly) and centre ``xy`` into the panel, ``margin`` pixels from each side; with ``rotate``,
        turned a quarter when that makes it over 15% larger (a landscape layout in a portrait ISM panel)."""
        xy = np.asarray(xy, dtype=float).reshape(-1, 2)
        if not len(xy):
            return xy
        k = self._scale(xy, margin)
        if rotate:
            turned = np.stack([xy[:, 1], -xy[:, 0]], axis=1)
            k_turned = self._scale(turned, margin)
            if k_turned > 1.15 * k:
                xy, k = turned, k_turned
        lo, hi = xy.min(axis=0), xy.max(axis=0)
        return (xy - (lo + hi) / 2) * k + [self.w / 2, self.h / 2]

    def _scale(self, xy: np.ndarray, margin: float) -> float:
        span = xy.max(axis=0) - xy.min(axis=0)
        avail = np.array([self.w, self.h]) - 2 * margin
        return min((avail[d] / span[d] for d in range(2) if span[d] > 1e-12), default=0.0)

    def lines(self, segments, colours, width_px: float, zorder: float = 1) -> None:
        """Straight segments; each run of consecutive segments of one colour is one path (a path per segment
        costs more in matplotlib than Agg's stroking)."""
        if not len(segments):
            return
        segs = np.asarray(segments, dtype=float).reshape(-1, 2, 2)
        cols = [colours] * len(segs) if isinstance(colours, str) else list(colours)
        breaks = [0] + [k for k in range(1, len(segs)) if cols[k] != cols[k - 1]] + [len(segs)]
        codes = np.tile(np.array([Path.MOVETO, Path.LINETO], dtype=np.uint8), len(segs))
        paths = [Path(segs[a:b].reshape(-1, 2), codes[2 * a:2 * b]) for a, b in zip(breaks, breaks[1:])]
        self._add(PathCollection(paths, facecolors="none", edgecolors=[cols[a] for a in breaks[:-1]],
                                 linewidths=width_px / PX_PER_PT, zorder=zorder, capstyle="round"))

    def polygons(self, polys, faces, edges, edge_px: float, zorder: float = 0) -> None:
        if len(polys):
            self._add(PolyCollection(polys, facecolors=faces, edgecolors=edges, linewidths=edge_px / PX_PER_PT,
                                     zorder=zorder, closed=True))

    def fills(self, polys, colours, alpha: float) -> None:
        """Polygons filled with ``colours`` at opacity ``alpha``, under everything else. Pillow blends them into
        the white buffer before Agg draws (Agg's anti-aliased fill costs 2.5x more); their edges are aliased, so
        draw an outline (of 1.5 px or more) over each."""
        for poly, colour in zip(polys, colours):
            rows = np.column_stack([poly[:, 0] + self.x0, HEIGHT - (poly[:, 1] + self.y0)])
            self.under.append((rows, (*(int(round(255 * c)) for c in to_rgb(colour)), int(round(255 * alpha)))))

    def discs(self, xy, radius: float, face, zorder: float = 3) -> None:
        """Discs (48-gons) of one colour, as one path."""
        xy = np.asarray(xy, dtype=float).reshape(-1, 2)
        if len(xy):
            ang = np.linspace(0, 2 * np.pi, 49)[:-1]
            unit = np.stack([np.cos(ang), np.sin(ang)], axis=1) * radius
            codes = np.full(49, Path.LINETO, dtype=np.uint8)
            codes[0], codes[-1] = Path.MOVETO, Path.CLOSEPOLY
            verts = np.concatenate([xy[:, None, :] + unit[None], xy[:, None, :]], axis=1).reshape(-1, 2)
            self._add(PathPatch(Path(verts, np.tile(codes, len(xy))), facecolor=face, edgecolor="none",
                                linewidth=0, zorder=zorder))

    def squares(self, xy, half: float, faces, zorder: float = 3) -> None:
        unit = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * half
        self.polygons([p + unit for p in np.asarray(xy).reshape(-1, 2)], faces, "black", 1.5, zorder)

    def texts(self, xy, labels: Sequence[str], size_pt: float, colour: str = "black", zorder: float = 5,
              bold: bool = False) -> None:
        """All ``labels`` centred at ``xy``, drawn as one filled path."""
        verts, codes = [], []
        for (x, y), s in zip(np.asarray(xy, dtype=float).reshape(-1, 2), labels):
            v, c, _, _ = _glyphs(s, size_pt, bold)
            verts.append(v + [x, y])
            codes.append(c)
        if verts:
            path = Path(np.concatenate(verts), np.concatenate(codes))
            self._add(PathPatch(path, facecolor=colour, edgecolor="none", linewidth=0, zorder=zorder))

    def label_boxes(self, xy, labels: Sequence[str], size_pt: float, edges, pad_px: float = 4.0,
                    zorder: float = 8) -> None:
        """White rectangles (with ``edges`` coloured borders) behind centred labels."""
        boxes = []
        for (x, y), s in zip(np.asarray(xy, dtype=float).reshape(-1, 2), labels):
            w, h = _text_size(s, size_pt)
            x0, y0, x1, y1 = x - w / 2 - pad_px, y - h / 2 - pad_px, x + w / 2 + pad_px, y + h / 2 + pad_px
            boxes.append([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])
        self.polygons(boxes, "white", edges, 1.5, zorder=zorder)
        self.texts(xy, labels, size_pt, zorder=zorder + 0.5)


def _place_labels(candidates: Sequence[np.ndarray], sizes, discs: np.ndarray, radius: float, bounds,
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
def _spiral(step: float, rings: int = 10) -> np.ndarray:
    """Offsets on rings around (0, 0), nearest first: candidates for a label near its anchor."""
    pts = [np.zeros((1, 2))]
    for k in range(1, rings + 1):
        ang = np.arange(8 * k) * 2 * np.pi / (8 * k) + np.pi / 2
        pts.append(k * step * np.stack([np.cos(ang), np.sin(ang)], axis=1))
    out = np.concatenate(pts)
    out.flags.writeable = False
    return out


def _separate(xy: np.ndarray, min_dist: float, iterations: int = 60, centre=None, limit: float = np.inf
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


def _draw_vertices(panel: Panel, xy: np.ndarray, radius: float, zorder: float = 6) -> None:
    """Black discs with white ``v<i>`` labels sized to fit the disc."""
    n = len(xy)
    panel.discs(xy, radius, VERTEX_FACE, zorder=zorder)
    size = _fit_fontsize(f"v{max(n - 1, 0)}", 1.55 * radius, largest=11.0)
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
    light = np.array([_luminance(hyperedge_colour(i)) > 0.55 for i in range(m)], dtype=bool)
    panel.texts(xy[~light], labels[~light], size_pt, colour="white", zorder=7, bold=True)
    panel.texts(xy[light], labels[light], size_pt, colour="black", zorder=7, bold=True)


def _luminance(colour: str) -> float:
    r, g, b = to_rgb(colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _incidences(h: Hypergraph, vxy: np.ndarray, exy: np.ndarray):
    """Vertex-hyperedge segments of the star expansion (D.1 "Bipartite Transformation"), in hyperedge colours."""
    segs = [(vxy[v], exy[i]) for i, edge in enumerate(h.hyperedges) for v in edge]
    cols = [hyperedge_colour(i) for i, edge in enumerate(h.hyperedges) for _ in edge]
    return segs, cols


def _label_size_for(m: int, width_px: float, largest: float = 11.0) -> float:
    return _fit_fontsize(f"e{max(m - 1, 0)}", width_px, largest)


def _free_radius(panel: Panel, n: int) -> float:
    """Vertex radius (px) for free layouts (Enc-Hy, Cli-Exp): by the panel area per vertex."""
    return float(np.clip(0.075 * np.sqrt(panel.w * panel.h / max(n, 1)), 14.0, 21.0))


def _node_scale(panel: Panel) -> float:
    """1 on the full picture, smaller on an ISM half panel."""
    return float(np.clip(np.sqrt(panel.w * panel.h / (WIDTH * HEIGHT)), 0.75, 1.0))


# --------------------------------------------------------------------------------------------- layouts
def _spring(g: nx.Graph) -> np.ndarray:
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


def _kamada_kawai_graph(g: nx.Graph) -> np.ndarray:
    """D.1 Enc-Hy: Kamada-Kawai (see :func:`kamada_kawai`) on hop distances."""
    hops = dict(nx.all_pairs_shortest_path_length(g))
    return kamada_kawai(np.array([[hops[a][b] for b in g] for a in g], dtype=float))


_LAYOUTS: dict[str, Callable[[nx.Graph], np.ndarray]] = {"kamada_kawai": _kamada_kawai_graph, "spring": _spring}


@lru_cache(maxsize=512)
def _layout(h: Hypergraph, method: str) -> np.ndarray:
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
            xy = _LAYOUTS[method](sub)
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


# --------------------------------------------------------------------------------------------- registry
DrawFn = Callable[[Panel, Hypergraph], None]


@dataclass(frozen=True)
class Renderer:
    """A registered visual representation: ``renderer(h)`` (or ``renderer(h, h2)`` for ISM) gives PNG bytes."""

    name: str
    draw: DrawFn

    def __call__(self, h: Hypergraph, h2: Hypergraph | None = None) -> bytes:
        for x in (h,) if h2 is None else (h, h2):
            if not isinstance(x, Hypergraph):
                raise TypeError(f"expected a Hypergraph, got {type(x).__name__}")
        return _render_png(self.draw, h, h2)


RENDERERS: Registry[Renderer] = Registry("visual representation")


def register_renderer(name: str) -> Callable[[DrawFn], DrawFn]:
    """Register ``draw(panel, h)`` as visual representation ``name`` (the dataset column is ``image_<name>``)."""

    def deco(fn: DrawFn) -> DrawFn:
        RENDERERS.register(name, Renderer(name, fn))
        return fn

    return deco


def render(name: str, h: Hypergraph, h2: Hypergraph | None = None) -> bytes:
    """PNG bytes (1400x1100 pixels, 150 DPI) of ``h`` in visual representation ``name``; with ``h2`` the ISM form:
    H = ``h`` on the left, G = ``h2`` on the right (HyperGVL D.3, E.2.3)."""
    return RENDERERS[name](h, h2)


_LOCAL = threading.local()


@contextmanager
def _fixed_rc():
    """Set the few rcParams the drawing reads to fixed values, and restore them after (``rc_context`` copies
    all of them, which costs more than a tenth of a picture)."""
    saved = {key: matplotlib.rcParams[key] for key in _RC}
    try:
        matplotlib.rcParams.update(_RC)
        yield
    finally:
        matplotlib.rcParams.update(saved)


def _canvas() -> FigureCanvasAgg:
    """One figure per thread, cleared before each picture (creating a Figure costs more than drawing). Its
    patch is hidden: the buffer is filled white directly, which costs a quarter of painting the patch."""
    if not hasattr(_LOCAL, "canvas"):
        fig = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI)
        fig.patch.set_visible(False)
        _LOCAL.canvas = FigureCanvasAgg(fig)
    return _LOCAL.canvas


def _render_png(draw: DrawFn, h: Hypergraph, h2: Hypergraph | None) -> bytes:
    return _encode_png(_draw_rgba(draw, h, h2))


def _draw_rgba(draw: DrawFn, h: Hypergraph, h2: Hypergraph | None) -> np.ndarray:
    """Lay out and rasterise (Agg) into the thread's HEIGHT x WIDTH x 4 RGBA buffer (opaque), returned as a view:
    it is valid until the next picture drawn on this thread."""
    canvas = _canvas()
    fig = canvas.figure
    fig.clf()
    under: list = []
    with _fixed_rc():
        if h2 is None:
            draw(Panel(fig, 0, 0, WIDTH, HEIGHT, under), h)
        else:  # ISM: H left, G right, titled, a thin divider between
            title_h = 80.0
            top = Panel(fig, 0, HEIGHT - title_h, WIDTH, title_h, under)
            top.texts([(WIDTH / 4, title_h / 2), (3 * WIDTH / 4, title_h / 2)], ["H", "G"], 22.0, bold=True)
            top.lines([((WIDTH / 2, -HEIGHT + 40), (WIDTH / 2, title_h - 20))], GREYS[2], 1.5)
            for k, g in enumerate((h, h2)):
                draw(Panel(fig, k * WIDTH / 2, 0, WIDTH / 2, HEIGHT - title_h, under), g)
        renderer = canvas.get_renderer()
        rgba = np.asarray(renderer.buffer_rgba())
        rgba.fill(255)  # opaque white background
        _blend_under(rgba, under)
        fig.draw(renderer)
    fig.clf()
    return rgba


def _blend_under(rgba: np.ndarray, under: list) -> None:
    """Blend the :meth:`Panel.fills` polygons, in order, into ``rgba`` (in place), with Pillow's drawing core
    (``ImageDraw.Draw(im, "RGBA")`` does the same on an RGB image, which could not share Agg's buffer)."""
    if under:
        draw = Image.core.draw(Image.frombuffer("RGBA", (WIDTH, HEIGHT), rgba, "raw", "RGBA", 0, 1).im, 1)
        for rows, colour in under:
            draw.draw_polygon(rows.ravel().tolist(), draw.draw_ink(colour), 1)


def _encode_png(rgba: np.ndarray) -> bytes:
    """Palette PNG at DPI, without metadata text. The palette: the colours the drawing uses, the colours that
    fill areas in a 1/64 pixel sample (every 8th row and column; :func:`_flat_colours`: Enc-Hy overlaps), and
    an octree quantisation of that sample for anti-aliasing; every pixel
    then maps to a near palette entry (Pillow's mapping works to about 5 bits a channel), without dithering.
    An octree over all pixels costs 10x more and leaves white a few levels off. The chunks are written here and
    the pixels deflated by zlib-ng (:func:`_png`). Costs per picture here: sample and palette 1.5 ms, mapping
    3 ms, deflate 2.5 ms (Pillow's encoder, on zlib 1.2, took 7.5 ms for a file 1% larger)."""
    img = Image.frombuffer("RGBA", (WIDTH, HEIGHT), rgba, "raw", "RGBA", 0, 1)
    sample = img.resize((WIDTH // 8, HEIGHT // 8), Image.Resampling.NEAREST)
    exact = np.concatenate([_EXACT_ARRAY, _flat_colours(np.asarray(sample)[..., :3].reshape(-1, 3))])
    adaptive = sample.quantize(colors=PALETTE_COLOURS - len(exact), method=Image.Quantize.FASTOCTREE,
                               dither=Image.Dither.NONE)
    extra = np.reshape(adaptive.getpalette(), (-1, 3)).astype(int)
    near_exact = (np.abs(extra[:, None, :] - exact[None]).max(axis=-1) <= 6).any(axis=1)
    colours = np.concatenate([exact, extra[~near_exact]]).astype(np.uint8)
    palette = Image.new("P", (1, 1))
    palette.putpalette(colours.ravel().tolist())
    indices = img.im.convert("P", Image.Dither.NONE, palette.im)  # Image.quantize, without an RGB copy
    # PNG rows: a filter-type byte (0: none; filters make palette images larger), then the row's indices, pasted
    # straight into that layout (a Pillow image over the buffer, one byte in, row stride WIDTH + 1)
    rows = np.zeros(HEIGHT * (WIDTH + 1) + 1, np.uint8)
    Image.core.map_buffer(rows, (WIDTH, HEIGHT), "raw", 1, ("P", WIDTH + 1, 1)).paste(indices, (0, 0, WIDTH, HEIGHT))
    return _png(rows[:-1], WIDTH, HEIGHT, colours)


_PNG_PPM = int(DPI / 0.0254 + 0.5)  # pixels per metre, as Pillow writes DPI


def _png(rows: np.ndarray, w: int, h: int, colours: np.ndarray) -> bytes:
    """A ``w`` x ``h`` palette PNG of ``rows`` (each a filter-type byte and ``w`` 8-bit indices into ``colours``
    (n, 3) uint8): IHDR, PLTE, pHYs, one IDAT, IEND. Nothing else: no text, no time."""
    return b"".join([b"\x89PNG\r\n\x1a\n",
                     _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0)),
                     _chunk(b"PLTE", colours.tobytes()),
                     _chunk(b"pHYs", struct.pack(">IIB", _PNG_PPM, _PNG_PPM, 1)),
                     _chunk(b"IDAT", zlib_ng.compress(rows, PNG_COMPRESS_LEVEL)),
                     _chunk(b"IEND", b"")])


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(tag)))


def _flat_colours(pixels: np.ndarray, most: int = 24, min_count: int = 48) -> np.ndarray:
    """Up to ``most`` colours (exact values) that fill areas: the commonest 5-bit-per-channel cells among
    ``pixels`` (n, 3), with at least ``min_count`` samples, other than the known exact colours. The octree
    alone merges the pale overlaps of Enc-Hy fills (up to 30 levels off)."""
    rgb = pixels.astype(np.int64)
    cell = (rgb[:, 0] >> 3) << 10 | (rgb[:, 1] >> 3) << 5 | rgb[:, 2] >> 3
    counts = np.bincount(cell, minlength=1 << 15)
    first = np.full(1 << 15, -1)
    first[cell[::-1]] = np.arange(len(cell))[::-1]  # first sample in each cell
    cand = np.flatnonzero(counts >= min_count)  # the commonest of these, ties by cell number
    top = cand[np.argsort(-counts[cand], kind="stable")][: most + len(_EXACT_COLOURS)]
    colours = rgb[first[top]]
    new = ~(np.abs(colours[:, None, :] - _EXACT_ARRAY[None]).max(axis=-1) <= 3).any(axis=1)
    return colours[new][:most]


# --------------------------------------------------------------------------------------------- the five
@register_renderer("enc_hy")
def draw_enc_hy(panel: Panel, h: Hypergraph) -> None:
    """Enc-Hy (D.1): "a labeled convex hull visualization using NetworkX's kamada_kawai_layout for vertex
    positioning ... For each hyperedge e_i with |e_i| >= 3, we compute the convex hull of its member vertices
    using SciPy's ConvexHull, rendering it as a colored polygonal region with 15% opacity. Crucially, a white
    rectangular label box displaying the hyperedge ID (e.g., "e2") is placed at the centroid of the region".
    Hulls are padded and rounded; order-2 hyperedges become capsules, order-1 hyperedges rings."""
    n, m = h.num_vertices, h.num_hyperedges
    s = _node_scale(panel)
    r = _free_radius(panel, n)
    # padding layer: at each shared vertex, hyperedges with larger (order, index) enclose smaller ones
    key = [(len(e), i) for i, e in enumerate(h.hyperedges)]
    layer = np.array([max(sum(key[j] < key[i] for j in h.incident[v]) for v in e) for i, e in
                      enumerate(h.hyperedges)], dtype=float).reshape(-1)
    pads = r + 6.0 * s + 7.0 * s * np.minimum(layer, 5)
    margin = (pads.max() if m else r) + 6
    xy = panel.fit(_separate(panel.fit(_layout(h, "kamada_kawai"), margin, rotate=True), 3.2 * r), margin)
    ang = np.arange(36) * 2 * np.pi / 36
    disc = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    hulls = []
    for i, edge in enumerate(h.hyperedges):  # Minkowski sum of the members' hull and a disc of radius pads[i]
        pts = (xy[list(edge)][:, None, :] + pads[i] * disc[None]).reshape(-1, 2)
        hulls.append(pts[ConvexHull(pts).vertices])
    order = sorted(range(m), key=lambda i: (-len(h.hyperedges[i]), -pads[i], i))  # large regions underneath
    rgb = [to_rgb(hyperedge_colour(i)) for i in range(m)]
    panel.fills([hulls[i] for i in order], [rgb[i] for i in order], FILL_ALPHA)
    panel.polygons([hulls[i] for i in order], "none", [(*rgb[i], 0.9) for i in order], 2.0, zorder=1)
    _draw_vertices(panel, xy, r)
    if m:
        labels = [f"e{i}" for i in range(m)]
        size = (11.0 if m <= 10 else 9.5) * s
        boxes = [np.array(_text_size(t, size)) + 8 for t in labels]
        spiral = _spiral(round(max(4.0, r / 2.5), 1))
        cands = [_polygon_centroid(hulls[i]) + spiral for i in range(m)]  # "at the centroid of the region"
        inside = [Path(hulls[i]).contains_points(c) for i, c in enumerate(cands)]
        pos = _place_labels(cands, boxes, xy, r, (panel.w, panel.h), preferred=inside)
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


@register_renderer("bi_inc")
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
    _draw_hyperedge_nodes(panel, exy, half, _label_size_for(m, 0.85 * esp), label_below=True)


def _circle(k: int, radius: float, centre: np.ndarray) -> np.ndarray:
    """networkx ``circular_layout`` order: the first point at angle 0, counter-clockwise."""
    if k == 1:
        return centre[None, :].astype(float)
    ang = np.arange(k) * 2 * np.pi / k
    return centre + radius * np.stack([np.cos(ang), np.sin(ang)], axis=1)


@register_renderer("sh_inc")
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
    _draw_hyperedge_nodes(panel, exy, half, _label_size_for(m, 1.6 * half))


@register_renderer("st_inc")
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
    exy = _separate(exy, 2 * half + 12, iterations=150, centre=centre, limit=R - r - half - 16)
    panel.lines(*_incidences(h, vxy, exy), 1.6, zorder=2)
    _draw_vertices(panel, vxy, r)
    _draw_hyperedge_nodes(panel, exy, half, _label_size_for(m, 1.6 * half))


@register_renderer("cli_exp")
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
    xy = panel.fit(_separate(panel.fit(_layout(h, "spring"), margin, rotate=True), 3.6 * r), margin)
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
        w, hh = _text_size(labels[-1], size)
        reach = 0.6 * r + 2 * rho + 6 + 0.5 * abs(direction[0]) * w + 0.5 * abs(direction[1]) * hh
        cands.append(xy[v] + direction * reach + _spiral(5.0, rings=4))
        lengths.append(-1.0)  # loops first: their labels have the fewest good places
    panel.lines(segments, GREYS[0], 1.5, zorder=2)
    _draw_vertices(panel, xy, r)
    if labels:
        boxes = [np.array(_text_size(s, size)) + 6 for s in labels]
        order = np.argsort(lengths, kind="stable")  # then short edges first
        pos = np.empty((len(labels), 2))
        pos[order] = _place_labels([cands[k] for k in order], [boxes[k] for k in order], xy, r,
                                   (panel.w, panel.h))
        panel.label_boxes(pos, labels, size, GREYS[1], pad_px=3.0)
