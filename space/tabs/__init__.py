"""The Space's tabs, one module each, registered with ``@register_tab`` (:mod:`hypergvl.space.tabs.base`).
Importing this package registers the package's own; :func:`in_order` lists them in page order. A tab module imports from
``hypergvl.space.tabs.base``, never from this package."""
from __future__ import annotations

# the registrations, in page order (so that a failed lookup lists the tabs as the page shows them)
from . import leaderboard, paper, representations, router, hnn, browse, submit  # noqa: F401, I001
from .base import TABS, in_order, register_tab

__all__ = ["TABS", "in_order", "register_tab"]
