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
  minimised by stress majorisation (:func:`hypergvl.render.layout.kamada_kawai`), 30x faster than networkx's optimiser here.
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
metadata text, deflated by zlib-ng (:func:`hypergvl.render.canvas.encode_png`). The same input gives byte-identical output, whatever
the caller's rcParams. ``benchmarks/render.py`` measures the speed and size against plain ``networkx.draw`` +
``savefig``.

>>> from hypergvl.hypergraph import Hypergraph
>>> png = render("enc_hy", Hypergraph(5, [[0, 1, 2], [1, 2, 3], [2, 3, 4]]))
>>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
True

The package, one concern a module: :mod:`~hypergvl.render.base` (the registry; imports no drawing library, so
listing the representations is cheap), :mod:`~hypergvl.render.style` (size and colours),
:mod:`~hypergvl.render.layout` (layouts, label placement), :mod:`~hypergvl.render.canvas` (the matplotlib panel and
the PNG encoder, imported by the first picture) and :mod:`~hypergvl.render.drawings` (the five renderers). A new
representation is one function decorated ``@register_renderer(name, label=...)`` in a module imported here.
"""
from hypergvl.render import drawings  # noqa: F401  (registers the five representations)
from hypergvl.render.base import RENDERERS, Renderer, register_renderer, render, visual_labels
from hypergvl.render.style import DPI, HEIGHT, WIDTH, hyperedge_colour
from hypergvl.render.layout import kamada_kawai

__all__ = ["RENDERERS", "Renderer", "register_renderer", "render", "visual_labels", "hyperedge_colour",
           "kamada_kawai", "WIDTH", "HEIGHT", "DPI"]
