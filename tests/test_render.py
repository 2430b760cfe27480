"""The paper's 5 visual representations (HyperGVL D.1): format, determinism, the ISM side-by-side form, visibility."""
import hashlib
import io
import subprocess
import sys

import matplotlib
import networkx as nx
import numpy as np
import pytest
from PIL import Image

from hypergvl.hypergraph import Hypergraph
from hypergvl.paper import PAPER_VISUAL_REPS
from hypergvl.render import (DPI, HEIGHT, RENDERERS, WIDTH, hyperedge_colour, kamada_kawai,
                                     register_renderer, render, visual_labels)

NAMES = list(PAPER_VISUAL_REPS)  # enc_hy, bi_inc, sh_inc, st_inc, cli_exp
E1 = Hypergraph(5, [[0, 1, 2], [1, 2, 3], [2, 3, 4]])  # the paper's E.1 example
# order-1 and order-2 hyperedges and an isolated vertex (v6)
SMALL_ORDERS = Hypergraph(7, [[0], [1, 2], [2, 3, 4], [4, 5]])


def worst_case() -> Hypergraph:
    """20 vertices, 30 hyperedges of orders 1-5 (the top of the paper's 5-20 vertex, 1.5|V| hyperedge range)."""
    rng = np.random.default_rng(7)
    edges = [[v, v + 1] for v in range(0, 19, 2)]  # 10 pairs, then 20 random hyperedges
    edges += [sorted(rng.choice(20, size=int(rng.integers(1, 6)), replace=False).tolist()) for _ in range(20)]
    return Hypergraph(20, edges)


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def colour_count(arr: np.ndarray, rgb, tol: int = 8) -> int:
    """Pixels within ``tol`` levels of ``rgb`` (Pillow maps colours to the palette to about 5 bits a channel)."""
    return int((np.abs(arr - np.asarray(rgb)).max(axis=-1) <= tol).sum())


def hex_rgb(colour: str, alpha: float = 1.0) -> np.ndarray:
    """``colour`` at ``alpha`` over white, 0-255."""
    rgb = np.array(matplotlib.colors.to_rgb(colour))
    return np.round(255 * (alpha * rgb + 1 - alpha)).astype(int)


@pytest.fixture(scope="module")
def e1_pngs() -> dict[str, bytes]:
    return {name: render(name, E1) for name in NAMES}


def test_registry_lists_exactly_the_five_and_rejects_unknown_and_duplicate_names():
    from hypergvl.vqa import VISUAL_REPS

    assert NAMES == ["enc_hy", "bi_inc", "sh_inc", "st_inc", "cli_exp"]
    assert [r for r in RENDERERS if r in NAMES] == NAMES  # the paper's five, in its order, whatever else is registered
    assert {r: label for r, label in visual_labels().items() if r in NAMES} == {
        "enc_hy": "Enc-Hy", "bi_inc": "Bi-Inc", "sh_inc": "Sh-Inc", "st_inc": "St-Inc",
        "cli_exp": "Cli-Exp"}  # HyperGVL sec. 2.4's spelling, an attribute of each renderer
    assert list(VISUAL_REPS) == list(RENDERERS)  # the builder draws every registered renderer
    with pytest.raises(ValueError, match="enc_hy"):  # the message lists the choices
        render("enc-hy", E1)
    with pytest.raises(ValueError, match="registered twice"):
        register_renderer("bi_inc", label="Bi-Inc")(lambda panel, h: None)
    with pytest.raises(TypeError, match="Hypergraph"):
        render("bi_inc", [[0, 1]])


@pytest.mark.parametrize("name", NAMES)
def test_png_is_1400x1100_at_150_dpi_palette(name, e1_pngs):
    png = e1_pngs[name]
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    img = Image.open(io.BytesIO(png))
    assert img.size == (WIDTH, HEIGHT) == (1400, 1100)
    assert img.mode == "P"
    assert tuple(round(d) for d in img.info["dpi"]) == (DPI, DPI) == (150, 150)
    assert b"Software" not in png and b"tEXt" not in png  # no version or timestamp text


def test_png_writer_round_trips_indices_and_palette_through_an_independent_decoder():
    from hypergvl.render.canvas import _png

    rng = np.random.default_rng(0)
    w, h = 37, 23
    colours = rng.integers(0, 256, (200, 3), dtype=np.uint8)
    indices = rng.integers(0, 200, (h, w), dtype=np.uint8)
    rows = np.concatenate([np.zeros((h, 1), np.uint8), indices], axis=1).ravel()
    img = Image.open(io.BytesIO(_png(rows, w, h, colours)))
    img.load()  # Pillow checks every chunk's CRC on the way
    assert img.mode == "P" and img.size == (w, h)
    assert np.array_equal(np.asarray(img), indices)
    assert np.array_equal(np.reshape(img.getpalette()[:600], (-1, 3)), colours)


def test_same_input_same_bytes_across_calls_rcparams_and_processes(e1_pngs):
    for name in NAMES:
        assert render(name, E1) == e1_pngs[name]
    with matplotlib.rc_context({"lines.linewidth": 7, "patch.antialiased": False, "path.simplify": True,
                                "font.family": "serif", "figure.dpi": 72}):
        assert render("cli_exp", E1) == e1_pngs["cli_exp"]
    code = ("import hashlib\nfrom hypergvl.hypergraph import Hypergraph\n"
            "from hypergvl.render import render\n"
            f"h = Hypergraph(5, {[list(e) for e in E1.hyperedges]})\n"
            f"for name in {NAMES!r}: print(hashlib.sha256(render(name, h)).hexdigest())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [hashlib.sha256(e1_pngs[name]).hexdigest() for name in NAMES]


@pytest.mark.parametrize("name", NAMES)
def test_different_hypergraphs_give_different_images(name, e1_pngs):
    other = Hypergraph(5, [[0, 1, 2], [1, 2, 3], [2, 3, 4, 0]])
    assert render(name, other) != e1_pngs[name]


@pytest.mark.parametrize("name", NAMES)
def test_ism_draws_h_left_and_g_right(name):
    """E.2.3: "There are two hypergraphs: H and G"; D.3: both in one image. With H = G the two halves match
    pixel for pixel (below the titles); changing G changes only the right half."""
    g = Hypergraph(5, [[0, 1], [1, 2, 3], [3, 4]])
    same, changed = pixels(render(name, E1, E1)), pixels(render(name, E1, g))
    assert same.shape == (HEIGHT, WIDTH, 3)
    body = slice(90, HEIGHT)
    assert np.array_equal(same[body, 5:690], same[body, 705:1390])
    # the left half stays (up to palette choices: each picture gets its own palette)
    assert (np.abs(same[:, :690] - changed[:, :690]).max(axis=-1) > 24).mean() < 1e-3
    assert not np.array_equal(same[body, 705:], changed[body, 705:])
    assert not np.array_equal(same[:80, 5:690], same[:80, 705:1390])  # titles "H" and "G" differ
    assert not np.array_equal(same, pixels(render(name, E1)))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("h", [SMALL_ORDERS, worst_case(), Hypergraph(1), Hypergraph(3, [])],
                         ids=["orders-1-2-isolated", "20v-30e", "one-vertex", "no-hyperedges"])
def test_renders_with_a_white_margin(name, h):
    """Nothing is clipped: a 3-pixel frame around every picture stays white."""
    arr = pixels(render(name, h))
    frame = np.concatenate([arr[:3].reshape(-1, 3), arr[-3:].reshape(-1, 3), arr[:, :3].reshape(-1, 3),
                            arr[:, -3:].reshape(-1, 3)])
    assert (frame == 255).all()
    assert (arr != 255).any()


@pytest.mark.parametrize("name", ["bi_inc", "sh_inc", "st_inc"])
def test_every_hyperedge_node_is_a_square_of_its_colour(name):
    h = worst_case()
    arr = pixels(render(name, h))
    for i in range(h.num_hyperedges):
        if i < 24:  # colours repeat after 24
            assert colour_count(arr, hex_rgb(hyperedge_colour(i))) >= 15 * 15, f"e{i}"


def test_enc_hy_encloses_every_hyperedge_even_orders_1_and_2():
    """Each hyperedge's region shows its colour at 15% opacity (D.1), including the order-1 ring and the
    order-2 capsule."""
    arr = pixels(render("enc_hy", SMALL_ORDERS))
    for i in range(SMALL_ORDERS.num_hyperedges):
        assert colour_count(arr, hex_rgb(hyperedge_colour(i), 0.15)) >= 300, f"e{i}"


def test_cli_exp_draws_an_order_1_hyperedge_as_a_loop():
    """The clique expansion has no pair for an order-1 hyperedge; it shows as a labelled loop. Moving the
    singleton from v0 to v6 keeps the layout (same clique expansion), so only the two loop areas change."""
    moved = Hypergraph(7, [[6], [1, 2], [2, 3, 4], [4, 5]])
    diff = (pixels(render("cli_exp", SMALL_ORDERS)) != pixels(render("cli_exp", moved))).any(axis=-1)
    rows, cols = np.nonzero(diff)
    assert 300 < diff.sum() < 12000
    assert np.ptp(rows) > 50 or np.ptp(cols) > 50  # two separate places


def kk_energy(xy: np.ndarray, d: np.ndarray) -> float:
    """Kamada-Kawai energy at the best uniform scale (so layouts of any size compare)."""
    iu = np.triu_indices(len(d), 1)
    dist = np.linalg.norm(xy[:, None] - xy[None], axis=-1)[iu]
    scale = (dist / d[iu]).sum() / ((dist / d[iu]) ** 2).sum()
    return float((((scale * dist - d[iu]) / d[iu]) ** 2).sum())


@pytest.mark.parametrize("graph", [nx.cycle_graph(9), nx.path_graph(6), nx.petersen_graph(),
                                   nx.gnm_random_graph(14, 30, seed=3)], ids=["cycle", "path", "petersen", "gnm"])
def test_kamada_kawai_reaches_networkx_energy(graph):
    """Our stress majorisation minimises networkx's Kamada-Kawai energy at least as well (within 5%)."""
    hops = dict(nx.all_pairs_shortest_path_length(graph))
    d = np.array([[hops[a][b] for b in graph] for a in graph], dtype=float)
    pos = nx.kamada_kawai_layout(graph)
    theirs = kk_energy(np.array([pos[v] for v in graph]), d)
    assert kk_energy(kamada_kawai(d), d) <= 1.05 * theirs + 1e-9


def _agg_pixels(add) -> np.ndarray:
    """RGB of a picture whose only content is what ``add(panel)`` draws (the renderer's own buffer)."""
    from hypergvl.render.canvas import draw_rgba
    return draw_rgba(lambda panel, h: add(panel), Hypergraph(1), None)[..., :3].astype(int).copy()


def test_pillow_fills_match_agg_fills_away_from_their_edges():
    """Panel.fills (Pillow) against matplotlib's own PolyCollection fill at 15% (Agg): equal up to rounding
    inside and outside, different only within 3 px of an edge, where the outline goes."""
    from matplotlib.collections import PolyCollection
    from matplotlib.path import Path
    rng = np.random.default_rng(3)
    ang = np.sort(rng.uniform(0, 2 * np.pi, 9))
    polys = [c + r * np.stack([np.cos(ang + k), np.sin(ang + k)], 1)
             for k, (c, r) in enumerate([((500, 500), 260), ((700, 560), 200), ((640, 380), 150)])]
    colours = [hyperedge_colour(i) for i in range(3)]
    ours = _agg_pixels(lambda p: p.fills(polys, colours, 0.15))
    theirs = _agg_pixels(lambda p: p._add(PolyCollection(polys, facecolors=[(*matplotlib.colors.to_rgb(c), 0.15)
                                                                             for c in colours], edgecolors="none")))
    yy, xx = np.mgrid[0:HEIGHT, 0:WIDTH]
    centres = np.stack([xx.ravel() + 0.5, HEIGHT - yy.ravel() - 0.5], 1)
    near_edge = np.zeros(HEIGHT * WIDTH, bool)
    for poly in polys:
        path = Path(poly)
        near_edge |= path.contains_points(centres, radius=3.0) != path.contains_points(centres, radius=-3.0)
    diff = np.abs(ours - theirs).max(-1).ravel()
    assert (ours != 255).any(axis=-1).sum() > 100000  # the fills are there
    assert diff[~near_edge].max() <= 3  # rounding, up to three blends deep
    assert diff[near_edge].max() > 16  # the edges really are aliased: the test can tell the two apart


def test_same_coloured_segments_drawn_as_one_path_look_like_separate_lines():
    """Panel.lines merges runs of one colour into one path; against matplotlib's LineCollection (one path per
    segment) the picture is identical where segments do not overlap."""
    from matplotlib.collections import LineCollection
    segs = [((100 + 40 * k, 100), (300 + 40 * k, 900)) for k in range(12)]
    cols = [hyperedge_colour(k // 3) for k in range(12)]  # runs of three
    ours = _agg_pixels(lambda p: p.lines(segs, cols, 1.6))
    theirs = _agg_pixels(lambda p: p._add(LineCollection(segs, colors=cols, linewidths=1.6 * 72 / DPI,
                                                         capstyle="round")))
    assert (ours != 255).any()
    assert np.array_equal(ours, theirs)
