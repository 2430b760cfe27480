"""The Space's tab registry: a tab is a module under ``space/tabs/`` with one ``@register_tab`` build function.

:func:`hypergvl.space.app.build_app` opens a ``gr.Tab(title, id="tab-<name>")`` for every registered tab, in
``order``, and calls its build function inside it with the :class:`Page`; the function creates its components and
returns what the tab fills when a page opens (an :class:`OnLoad`, or None)::

    @register_tab("notes", title="Notes", order=80)
    def build(page: Page) -> OnLoad | None:
        box = gr.Textbox(label="Notes", elem_id="notes")
        return OnLoad(lambda: f"{len(page.service.entries())} entries", [box])

Light: no Gradio here; what several tabs share (``ALL``, ``SCORE_COLUMNS``, :func:`figures_dir`,
:func:`public_only`) lives here too."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from hypergvl.registry import Registry
from hypergvl.tasks import TASK_CODES

from ..scoring import SubmissionError
from ..service import Service
from ..testsets import HIDDEN, PUBLIC

ALL = "all"
SCORE_COLUMNS = list(TASK_CODES) + ["Avg.U", "Avg.R", "All"]


@dataclass(frozen=True)
class Page:
    """What every tab's build function gets: the service, the current public and hidden sets (``sets``, by kind,
    and their names) and whether submitting needs a Hub login (``oauth``)."""

    service: Service
    sets: dict
    oauth: bool = False

    @property
    def public(self) -> str:
        return self.sets[PUBLIC].name

    @property
    def hidden(self) -> str:
        return self.sets[HIDDEN].name

    def set_choices(self, kinds=(PUBLIC, HIDDEN)) -> list[tuple[str, str]]:
        """(label, name) of the test sets of ``kinds``: public first, the current set first, then the newest."""
        return [(s.label, s.name) for s in sorted(self.service.sets.all(),
                                                  key=lambda s: (s.kind != PUBLIC, not s.current, -s.created))
                if s.kind in kinds]


@dataclass(frozen=True)
class OnLoad:
    """A page-load event: ``fn()`` fills ``outputs`` (components) when a page opens; ``queue`` as Gradio's."""

    fn: Callable
    outputs: Sequence
    queue: bool = True


BuildFn = Callable[[Page], "OnLoad | None"]


@dataclass(frozen=True)
class Tab:
    """A registered tab: ``title`` on its handle, ``order`` its place on the page (lowest first), element id
    ``tab-<name>``."""

    name: str
    title: str
    order: int
    builder: BuildFn

    def build(self, page: Page) -> list[OnLoad]:
        """Create the tab's components (inside the open ``gr.Tab``); returns its page-load events."""
        load = self.builder(page)
        return [] if load is None else [load]


TABS: Registry[Tab] = Registry("Space tab")


def register_tab(name: str, *, title: str, order: int) -> Callable[[BuildFn], BuildFn]:
    """Register ``build(page)`` as tab ``name``, shown as ``title`` at place ``order`` (lowest first)."""

    def deco(fn: BuildFn) -> BuildFn:
        TABS.register(name, Tab(name, title, order, fn))
        return fn

    return deco


def in_order() -> list[Tab]:
    """The registered tabs in page order."""
    return sorted(TABS.values(), key=lambda tab: tab.order)


def figures_dir(service: Service) -> Path:
    d = service.config.data_dir / "figures"
    d.mkdir(parents=True, exist_ok=True)
    return d


def public_only(service: Service, testset: str) -> None:
    """Per-entry breakdowns (Table 4, heatmaps, figures, routed runs) are served for public sets only: on a hidden
    set they would isolate single problems."""
    if service.sets.get(testset).kind != PUBLIC:
        raise SubmissionError("hidden-set results are shown on the Leaderboard tab only, aggregated over the set")
