"""Render the 5 visual representations (HyperGVL D.1) on a realistic mix; print images/s per core and KiB per image.

The mix: seeded random connected hypergraphs with 5-20 vertices and 0.2|V|..1.5|V| hyperedges of orders 1-5
(raised to the fewest hyperedges that can connect |V| vertices with orders <= 5), generated here.
Reference in the same run, on the same hypergraphs: the naive way, ``networkx.draw`` of the star expansion on a
pyplot figure of the same size and ``savefig`` to PNG. Rates are images per CPU-second of this one process
(``time.process_time``), so other load on the machine matters less; each timing is the best of ``--repeat``
passes (layout caches cleared before each), for the reference and for ours alike, as ``timeit`` does, because
CPU time on a shared machine still varies by 20% from pass to pass; wall-clock rates are of the best pass too.
The breakdown splits our time into layout (networkx/SciPy), drawing (building artists, Pillow fills and Agg
rasterisation, layout excluded) and encoding (quantise + PNG).

    .venv/bin/python benchmarks/render.py [--count 40] [--reference-count 20] [--repeat 3] [--seed 0]
"""
from __future__ import annotations

import argparse
import io
import math
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402

from hypergvl import render as R  # noqa: E402
from hypergvl.render.canvas import draw_rgba, encode_png  # noqa: E402
from hypergvl.render.layout import layout  # noqa: E402
from hypergvl.hypergraph import Hypergraph  # noqa: E402


LAYOUT_OF = {"enc_hy": "kamada_kawai", "cli_exp": "spring"}  # the others place nodes on rows and circles


def random_connected(rng: np.random.Generator) -> Hypergraph:
    """5-20 vertices; hyperedges of orders 1-5; a spanning chain of hyperedges first, then random ones."""
    n = int(rng.integers(5, 21))
    lo, hi = math.ceil(0.2 * n), math.floor(1.5 * n)
    m = max(int(rng.integers(lo, hi + 1)), math.ceil((n - 1) / 4))  # each spanning edge adds <= 4 new vertices
    order = [int(v) for v in rng.permutation(n)]
    edges, pos = [], 1
    while pos < n:  # every spanning hyperedge: one covered vertex + new ones, leaving room to finish within m
        left = m - len(edges)
        k_new = min(n - pos, max(math.ceil((n - pos) / left), int(rng.integers(1, 5))))
        anchor = order[int(rng.integers(pos))]
        edges.append(sorted([anchor] + order[pos:pos + k_new]))
        pos += k_new
    while len(edges) < m:
        k = int(rng.integers(1, 6))
        edges.append(sorted(int(v) for v in rng.choice(n, size=k, replace=False)))
    return Hypergraph(n, [edges[i] for i in rng.permutation(len(edges))])


def _naive_figure():
    fig = plt.figure(figsize=(R.WIDTH / R.DPI, R.HEIGHT / R.DPI), dpi=R.DPI)
    return fig, fig.gca()


def _naive_png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=R.DPI)
    plt.close(fig)
    return buf.getvalue()


def naive_reference(h: Hypergraph) -> bytes:
    """What one writes first: pyplot figure, spring layout of the star expansion, nx.draw, savefig."""
    fig, ax = _naive_figure()
    g = h.star_expansion()
    pos = nx.spring_layout(g, seed=0)
    labels = {node: f"{node[0]}{node[1]}" for node in g}
    colours = ["black" if node[0] == "v" else R.hyperedge_colour(node[1]) for node in g]
    nx.draw(g, pos, ax=ax, labels=labels, node_color=colours, font_color="white", node_size=500)
    return _naive_png(fig)


def _naive_incidence(g, pos: dict) -> bytes:
    """The incidence pictures done the obvious way: nx.draw of the star expansion ``g`` at given positions."""
    fig, ax = _naive_figure()
    vertices = [node for node in g if node[0] == "v"]
    hyperedges = [node for node in g if node[0] == "e"]
    nx.draw_networkx_edges(g, pos, ax=ax, edge_color=[R.hyperedge_colour(e[1]) for _, e in
                                                      (sorted(edge) for edge in g.edges())])
    nx.draw_networkx_nodes(g, pos, nodelist=vertices, node_color="black", node_size=500, ax=ax)
    nx.draw_networkx_nodes(g, pos, nodelist=hyperedges, node_shape="s", node_size=500, ax=ax,
                           node_color=[R.hyperedge_colour(e[1]) for e in hyperedges])
    nx.draw_networkx_labels(g, pos, {node: f"{node[0]}{node[1]}" for node in g}, font_color="white", ax=ax)
    ax.set_axis_off()
    return _naive_png(fig)


def naive_enc_hy(h: Hypergraph) -> bytes:
    """D.1 Enc-Hy as written: kamada_kawai_layout, nx.draw, a SciPy ConvexHull polygon at 15% opacity per
    hyperedge of order >= 3 (a line or a ring below), a white label box at each centroid, savefig."""
    from matplotlib.patches import Circle, Polygon
    from scipy.spatial import ConvexHull

    fig, ax = _naive_figure()
    g = h.clique_expansion()
    pos = nx.kamada_kawai_layout(g)
    for i, edge in enumerate(h.hyperedges):
        pts = np.array([pos[v] for v in edge])
        colour = R.hyperedge_colour(i)
        if len(edge) >= 3:
            try:
                hull = pts[ConvexHull(pts).vertices]
            except Exception:  # collinear members
                hull = pts
            ax.add_patch(Polygon(hull, closed=True, facecolor=colour, edgecolor=colour, alpha=0.15))
        elif len(edge) == 2:
            ax.plot(pts[:, 0], pts[:, 1], color=colour, linewidth=6, alpha=0.4)
        else:
            ax.add_patch(Circle(pts[0], 0.08, fill=False, edgecolor=colour, linewidth=2))
        cx, cy = pts.mean(axis=0)
        ax.text(cx, cy, f"e{i}", ha="center", va="center", bbox=dict(facecolor="white", edgecolor=colour))
    nx.draw(g, pos, ax=ax, labels={v: f"v{v}" for v in g}, node_color="black", font_color="white", node_size=500,
            edge_color="none")
    return _naive_png(fig)


def naive_bi_inc(h: Hypergraph) -> bytes:
    n, m = h.num_vertices, h.num_hyperedges
    pos = {("v", v): (v / max(n - 1, 1), 1.0) for v in range(n)}
    pos.update({("e", i): (i / max(m - 1, 1), 0.0) for i in range(m)})
    return _naive_incidence(h.star_expansion(), pos)


def _naive_shells(h: Hypergraph, inner: str) -> bytes:
    """Sh-Inc (vertices, ``inner="v"``) and St-Inc (hyperedges, ``inner="e"``): nx.shell_layout, inner kind first."""
    g = h.star_expansion()
    return _naive_incidence(g, nx.shell_layout(g, nlist=[[x for x in g if x[0] == inner],
                                                         [x for x in g if x[0] != inner]]))


def naive_sh_inc(h: Hypergraph) -> bytes:
    return _naive_shells(h, "v")


def naive_st_inc(h: Hypergraph) -> bytes:
    return _naive_shells(h, "e")


def naive_cli_exp(h: Hypergraph) -> bytes:
    """D.1 Cli-Exp as written: spring_layout(k=2.0, iterations=100, scale=3.0), nx.draw, edge labels listing the
    hyperedge ids, savefig."""
    fig, ax = _naive_figure()
    g = nx.Graph()
    g.add_nodes_from(range(h.num_vertices))
    ids: dict = {}
    for i, edge in enumerate(h.hyperedges):
        for a in edge:
            for b in edge:
                if a < b:
                    ids.setdefault((a, b), []).append(f"e{i}")
    g.add_edges_from(ids)
    pos = nx.spring_layout(g, k=2.0, iterations=100, scale=3.0, seed=0)
    nx.draw(g, pos, ax=ax, labels={v: f"v{v}" for v in g}, node_color="black", font_color="white", node_size=500)
    nx.draw_networkx_edge_labels(g, pos, {e: ",".join(v) for e, v in ids.items()}, ax=ax, font_size=7)
    return _naive_png(fig)


# the same five pictures done the obvious way, representation by representation (a second, closer reference)
NAIVE_SAME_PICTURE = {"enc_hy": naive_enc_hy, "bi_inc": naive_bi_inc, "sh_inc": naive_sh_inc,
                      "st_inc": naive_st_inc, "cli_exp": naive_cli_exp}


def timed(fn, items, repeat: int = 1) -> tuple[float, float, list[int]]:
    """CPU seconds and wall seconds of the best of ``repeat`` passes of ``fn`` over ``items`` (layout caches
    cleared before each), and the output sizes."""
    best = (math.inf, math.inf)
    for _ in range(repeat):
        clear_layout_caches()
        sizes = []
        c0, w0 = time.process_time(), time.perf_counter()
        for item in items:
            sizes.append(len(fn(item)))
        best = min(best, (time.process_time() - c0, time.perf_counter() - w0))
    return best[0], best[1], sizes


def best_cpu(fn, repeat: int) -> float:
    """Least CPU seconds of ``repeat`` calls of ``fn()``."""
    times = []
    for _ in range(repeat):
        c0 = time.process_time()
        fn()
        times.append(time.process_time() - c0)
    return min(times)


def clear_layout_caches() -> None:
    layout.cache_clear()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=40, help="hypergraphs in the mix (each drawn 5 ways)")
    p.add_argument("--reference-count", type=int, default=20, help="hypergraphs drawn by the naive reference")
    p.add_argument("--repeat", type=int, default=3, help="passes per timing; the best is reported")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if args.count < 1 or args.reference_count < 1 or args.repeat < 1:
        p.error("--count, --reference-count and --repeat must be >= 1")
    rng = np.random.default_rng(args.seed)
    mix = [random_connected(rng) for _ in range(args.count)]
    print(f"mix: {len(mix)} hypergraphs, vertices {min(h.num_vertices for h in mix)}-"
          f"{max(h.num_vertices for h in mix)} (mean {np.mean([h.num_vertices for h in mix]):.1f}), hyperedges "
          f"mean {np.mean([h.num_hyperedges for h in mix]):.1f}, max {max(h.num_hyperedges for h in mix)}")
    R.render("enc_hy", mix[0])  # warm-up: fonts, first figure
    naive_reference(mix[0])

    ref_cpu, ref_wall, ref_sizes = timed(naive_reference, mix[: args.reference_count], args.repeat)
    ref_rate, ref_kib = len(ref_sizes) / ref_cpu, np.mean(ref_sizes) / 1024
    print(f"\nnaive reference (nx.draw star expansion + savefig): {ref_rate:.2f} img/s per core "
          f"(wall {len(ref_sizes) / ref_wall:.2f}), {ref_kib:.0f} KiB/img")

    same = {}
    for name, fn in NAIVE_SAME_PICTURE.items():
        cpu, _, sizes = timed(fn, mix[: args.reference_count], args.repeat)
        same[name] = (len(sizes) / cpu, sizes)
    same_rate = sum(len(v[1]) for v in same.values()) / sum(len(v[1]) / v[0] for v in same.values())
    same_kib = np.mean([x for v in same.values() for x in v[1]]) / 1024
    print(f"naive same-picture reference (each D.1 recipe with networkx + savefig): {same_rate:.2f} img/s per core, "
          f"{same_kib:.0f} KiB/img")

    print(f"\n{'repr':8} {'img/s/core':>10} {'wall img/s':>10} {'KiB mean':>9} {'KiB max':>8} {'x ref':>6} "
          f"{'x same':>6}   ms/img: layout  draw  encode")
    all_cpu, all_n, all_sizes = 0.0, 0, []
    for name, renderer in R.RENDERERS.items():
        cpu, wall, sizes = timed(renderer, mix, args.repeat)
        all_cpu, all_n, all_sizes = all_cpu + cpu, all_n + len(sizes), all_sizes + sizes

        # breakdown (CPU ms per image): layouts cold, then drawing with layouts cached, then encoding
        def layouts():
            clear_layout_caches()
            for h in mix:
                if name in LAYOUT_OF:
                    layout(h, LAYOUT_OF[name])

        t_layout = best_cpu(layouts, args.repeat) / len(mix)
        t_draw = best_cpu(lambda: [draw_rgba(renderer.draw, h, None) for h in mix], args.repeat) / len(mix)
        images = [draw_rgba(renderer.draw, h, None).copy() for h in mix]
        t_encode = best_cpu(lambda: [encode_png(img) for img in images], args.repeat) / len(mix)
        rate = len(sizes) / cpu
        print(f"{name:8} {rate:10.1f} {len(sizes) / wall:10.1f} {np.mean(sizes) / 1024:9.1f} "
              f"{max(sizes) / 1024:8.1f} {rate / ref_rate:6.1f} {rate / same[name][0]:6.1f}   "
              f"{1000 * t_layout:13.1f} {1000 * t_draw:5.1f} {1000 * t_encode:7.1f}")
    rate = all_n / all_cpu
    print(f"{'all':8} {rate:10.1f} {'':10} {np.mean(all_sizes) / 1024:9.1f} {max(all_sizes) / 1024:8.1f} "
          f"{rate / ref_rate:6.1f} {rate / same_rate:6.1f}")
    ism = [(h, h.relabel(list(rng.permutation(h.num_vertices)))) for h in mix[:10]]
    cpu, _, sizes = timed(lambda pair: R.render("enc_hy", *pair), ism, args.repeat)
    print(f"\nISM side by side (enc_hy, {len(ism)} pairs): {len(sizes) / cpu:.1f} img/s per core, "
          f"{np.mean(sizes) / 1024:.1f} KiB/img")
    kib = np.mean(all_sizes) / 1024
    print(f"\nall five representations: {rate / ref_rate:.1f}x the naive reference's images/s per core, "
          f"{kib:.1f} vs {ref_kib:.0f} KiB per image ({ref_kib / kib:.1f}x smaller); "
          f"{rate / same_rate:.1f}x the same pictures drawn naively ({same_kib:.0f} KiB per image)")


if __name__ == "__main__":
    main()
