"""What every picture shares: its size (HyperGVL D.1) and its colours."""

WIDTH, HEIGHT, DPI = 1400, 1100, 150  # D.1
PX_PER_PT = DPI / 72.0

# Distinct hyperedge colours: strong tab10 first, then further well-separated hues; cycled beyond 24.
HYPEREDGE_COLOURS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363",
    "#b5cf6b", "#e7ba52", "#ad494a", "#a55194",
)
VERTEX_FACE, VERTEX_TEXT = "black", "white"
FILL_ALPHA = 0.15  # D.1 Enc-Hy: "a colored polygonal region with 15% opacity"
GREYS = ("#555555", "#999999", "#aaaaaa")  # clique-expansion edges, their label boxes, the ISM divider


def hyperedge_colour(i: int) -> str:
    """Colour of hyperedge ``e<i>``, the same in every representation."""
    return HYPEREDGE_COLOURS[i % len(HYPEREDGE_COLOURS)]
