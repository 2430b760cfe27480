"""The Space's tab registry: a tab is a module under ``space/tabs/`` with one ``@register_tab`` build function.

:func:`hypergvl.space.app.build_app` opens a ``gr.Tab(title, id="tab-<name>")`` for every registered tab, in
``order``, and calls its build function inside it with the :class:`Page`; the function creates its components and
returns what the tab fills when a page opens (an :class:`OnLoad`, or None)::

    @register_tab("notes", title="Notes", order=80)
    def build(page: Page) -> OnLoad | None:
        box = gr.Textbox(label="Notes", elem_id="notes")
        return OnLoad(lambda: f"{len(page.service.entries())} entries", [box])

Light: no Gradio here; what several tabs share (``ALL``, :func:`score_columns`, :func:`score_cells`,
:func:`figures_dir`, :func:`public_only`) lives here too. The task columns are the tasks registered now
(:func:`hypergvl.tasks.task_codes`); an entry scored before a task existed shows a blank there, never 0."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from hypergvl.paper import AVERAGE_LABELS, PAPER_REASONING, PAPER_TASKS, PAPER_UNDERSTANDING
from hypergvl.registry import Registry
from hypergvl.tasks import task_codes

from ..scoring import SubmissionError
from ..service import Service
from ..testsets import HIDDEN, PUBLIC

ALL = "all"


def average_columns() -> list[str]:
    """Avg.U, Avg.R, Avg.Ext (only while a task beyond the paper's is registered) and All."""
    extra = any(t not in PAPER_TASKS for t in task_codes())
    return ["Avg.U", "Avg.R"] + (["Avg.Ext"] if extra else []) + ["All"]


def score_columns() -> list[str]:
    """The number columns of a Table 3 or Table 4 layout: a column per registered task, then the averages."""
    return list(task_codes()) + average_columns()


def score_cells(s: dict) -> dict:
    """A :func:`hypergvl.space.scoring.summarise` output as the score columns (None where a task has no score)."""
    out = {t: s["per_task"].get(t) for t in task_codes()}
    out.update({AVERAGE_LABELS[k]: s.get(k) for k in ("avg_u", "avg_r", "avg_ext")})
    out["All"] = s.get("accuracy")
    return {k: v for k, v in out.items() if k in score_columns()}


def tasks_text(over: dict | None) -> str:
    """What an entry's All is averaged over, for the Tasks column: ``paper 12``, ``paper 12 + MXD``, or the codes."""
    tasks = list((over or {}).get("accuracy") or [])
    if not tasks:
        return ""
    extra = [t for t in tasks if t not in PAPER_TASKS]
    if all(t in tasks for t in PAPER_TASKS):
        return f"paper {len(PAPER_TASKS)}" + (f" + {', '.join(extra)}" if extra else "")
    return ", ".join(tasks)


def averages_note() -> str:
    """The sentence under a table that says over which tasks each average is taken."""
    extra = [t for t in task_codes() if t not in PAPER_TASKS]
    text = (f"Avg.U: mean over the paper's six understanding tasks ({', '.join(PAPER_UNDERSTANDING)}); Avg.R: over "
            f"its six reasoning tasks ({', '.join(PAPER_REASONING)}) (HyperGVL Table 3)")
    if extra:
        text += f"; Avg.Ext: over the tasks beyond the paper's ({', '.join(extra)})"
    return (text + "; All: over every sample of the entry, on the tasks its Tasks column lists. Each average is over "
            "the tasks an entry was scored on: a task scored after it shows a blank (-), never 0.")


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
