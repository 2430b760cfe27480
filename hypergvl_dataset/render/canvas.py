"""The drawing surface: a :class:`Panel` of pixels on one reused matplotlib Agg figure per thread, text as glyph
outlines, and the quantised palette PNG it is encoded to. Everything matplotlib, Pillow and zlib-ng do for the
renderers is here, so a renderer (:mod:`hypergvl.render.drawings`) speaks only to its panel."""
from __future__ import annotations

import struct
import threading
import zlib
from contextlib import contextmanager
from functools import lru_cache
from typing import Callable, Sequence

import matplotlib
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
from zlib_ng import zlib_ng

from hypergvl.hypergraph import Hypergraph
from hypergvl.render.style import DPI, FILL_ALPHA, GREYS, HEIGHT, HYPEREDGE_COLOURS, PX_PER_PT, WIDTH

DrawFn = Callable[["Panel", Hypergraph], None]  # a renderer's drawing, as registered

PALETTE_COLOURS = 128  # palette PNG; 15%-opacity fills and anti-aliased edges stay identical to the eye
PNG_COMPRESS_LEVEL = 4  # zlib-ng level: 5 costs 25% more deflate time for 5% fewer bytes, 3 saves 15% for 1% more

# Matplotlib settings that reach the Agg drawing, fixed so a caller's rcParams cannot change the picture.
_RC = {"lines.antialiased": True, "patch.antialiased": True, "patch.force_edgecolor": False, "path.simplify": False,
       "path.sketch": None, "agg.path.chunksize": 0, **{key: matplotlib.rcParamsDefault[key] for key in
                                                       ("text.hinting_factor", "text.kerning_factor")}}
_FONTS = {False: FontProperties(family="DejaVu Sans", size=10), True: FontProperties(family="DejaVu Sans",
                                                                                       weight="bold", size=10)}


def _exact_colours() -> tuple[tuple[int, int, int], ...]:
    """Colours the drawings use: white, black, a grey ramp (anti-aliased text and discs), the greys, hyperedge
    colours and their 15% tints on white."""
    rgb = [np.array(to_rgb(c)) for c in ("white", "black", *GREYS, *HYPEREDGE_COLOURS)]
    rgb += [np.full(3, level / 16) for level in range(1, 16)]
    rgb += [FILL_ALPHA * np.array(to_rgb(c)) + (1 - FILL_ALPHA) for c in HYPEREDGE_COLOURS]
    return tuple(dict.fromkeys(tuple(int(round(255 * x)) for x in c) for c in rgb))


_EXACT_COLOURS = _exact_colours()
_EXACT_ARRAY = np.array(_EXACT_COLOURS, dtype=int)


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

    # what a renderer needs of the drawing library besides drawing, so that it imports none
    text_size = staticmethod(_text_size)
    fit_fontsize = staticmethod(_fit_fontsize)
    rgb = staticmethod(to_rgb)

    @staticmethod
    def inside(poly: np.ndarray, points: np.ndarray) -> np.ndarray:
        """Which of ``points`` lie inside the polygon ``poly``."""
        return Path(poly).contains_points(points)


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


def render_png(draw: DrawFn, h: Hypergraph, h2: Hypergraph | None) -> bytes:
    return encode_png(draw_rgba(draw, h, h2))


def draw_rgba(draw: DrawFn, h: Hypergraph, h2: Hypergraph | None) -> np.ndarray:
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


def encode_png(rgba: np.ndarray) -> bytes:
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
