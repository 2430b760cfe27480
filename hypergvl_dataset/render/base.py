"""The renderer registry and ``render``. Light on purpose (no matplotlib, no SciPy): listing the representations
and their labels costs no drawing library; :mod:`hypergvl.render.canvas` (matplotlib, 0.5 s of import) loads at
the first picture."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from hypergvl.hypergraph import Hypergraph
from hypergvl.registry import Registry

if TYPE_CHECKING:
    from hypergvl.render.canvas import Panel

DrawFn = Callable[["Panel", Hypergraph], None]


@dataclass(frozen=True)
class Renderer:
    """A registered visual representation: ``renderer(h)`` (or ``renderer(h, h2)`` for ISM) gives PNG bytes.
    ``label`` is how tables, figures and the Space name it (HyperGVL's own spelling, e.g. ``Enc-Hy``); the dataset
    column is ``image_<name>``."""

    name: str
    label: str
    draw: DrawFn

    def __call__(self, h: Hypergraph, h2: Hypergraph | None = None) -> bytes:
        for x in (h,) if h2 is None else (h, h2):
            if not isinstance(x, Hypergraph):
                raise TypeError(f"expected a Hypergraph, got {type(x).__name__}")
        from hypergvl.render.canvas import render_png  # matplotlib (0.7 s): by the first picture, not a listing

        return render_png(self.draw, h, h2)


RENDERERS: Registry[Renderer] = Registry("visual representation")


def register_renderer(name: str, *, label: str) -> Callable[[DrawFn], DrawFn]:
    """Register ``draw(panel, h)`` as visual representation ``name``, called ``label`` in tables and the Space.
    ``panel`` is a :class:`hypergvl.render.canvas.Panel`: a pixel area with lines, polygons, discs and text."""

    def deco(fn: DrawFn) -> DrawFn:
        RENDERERS.register(name, Renderer(name, label, fn))
        return fn

    return deco


def render(name: str, h: Hypergraph, h2: Hypergraph | None = None) -> bytes:
    """PNG bytes (1400x1100 pixels, 150 DPI) of ``h`` in visual representation ``name``; with ``h2`` the ISM form:
    H = ``h`` on the left, G = ``h2`` on the right (HyperGVL D.3, E.2.3)."""
    return RENDERERS[name](h, h2)


def visual_labels() -> dict[str, str]:
    """Paper label of every registered visual representation, in registration order (``{"enc_hy": "Enc-Hy", ...}``)."""
    return {name: rep.label for name, rep in RENDERERS.items()}
