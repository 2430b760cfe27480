"""The task abstraction and its registry: :class:`Task` (the hooks every HyperGVL task implements), the values it
passes around (:class:`Instance`, :class:`Reference`, :class:`Verdict`), the ``TASKS`` registry filled by
``@register_task``, and the names derived from a task code (:func:`get_task`, :func:`config_name`,
:func:`task_codes`). The paper's twelve tasks are in :mod:`~hypergvl.tasks.understanding` and
:mod:`~hypergvl.tasks.reasoning`."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from hypergvl import generators
from hypergvl.hypergraph import Hypergraph
from hypergvl.paper import PAPER_TASKS
from hypergvl.registry import Registry

ANS = "List the answer after “Ans:”"


@dataclass(frozen=True)
class Verdict:
    correct: bool
    unparsed: bool
    parsed: str | None


@dataclass(frozen=True)
class Instance:
    hypergraph: Hypergraph
    params: dict
    hypergraph2: Hypergraph | None = None
    hint: Any = None  # a planted solution, when the generator made one


@dataclass(frozen=True)
class Reference:
    task: str
    hypergraph: Hypergraph
    hypergraph2: Hypergraph | None
    params: dict
    answer: str


class Task:
    """Base class: subclasses set ``code``, ``level``, ``name`` and implement the hooks."""

    code: ClassVar[str]
    level: ClassVar[int]
    name: ClassVar[str]
    min_order: ClassVar[int] = 1  # smallest hyperedge order an instance may have (3-CL: 2)
    #: recognises the task's question in a prompt (its start), with the parameters as named integer groups
    pattern: ClassVar[re.Pattern]
    two_hypergraphs: ClassVar[bool] = False  # the prompt states H and G (ISM, E.2.3)

    # ---- instances
    def synthetic(self, scale: str, rng: np.random.Generator, variant: int | None) -> Instance:
        return Instance(generators.random_hypergraph(scale, rng), {})

    def from_real(self, h: Hypergraph, rng: np.random.Generator, variant: int | None) -> Instance | None:
        """Instance on a sampled real hypergraph, or None if it does not meet the task's requirement."""
        return Instance(h, {})

    def sample_params(self, inst: Instance, rng: np.random.Generator) -> dict:
        return inst.params

    # ---- question / answer
    def question(self, params: dict) -> str:
        raise NotImplementedError

    def solve(self, inst: Instance) -> str:
        """The reference answer of an instance (exact solvers; the planted solution where the generator made one)."""
        raise NotImplementedError

    def guess(self, rng, n: int, m: int, params: dict) -> str:
        """A format-valid random answer for a hypergraph of ``n`` vertices and ``m`` hyperedges (``baseline:random``;
        ``rng`` is a :class:`random.Random`)."""
        raise NotImplementedError

    def parse(self, response: str) -> Any:
        """Parsed answer, or None when no answer of the right type can be read."""
        raise NotImplementedError

    def canonical(self, parsed: Any) -> str:
        return str(parsed)

    def check(self, parsed: Any, ref: "Reference") -> bool:
        """Whether a parsed answer is correct; the default compares with the reference answer."""
        return self.canonical(parsed) == ref.answer

    def verify(self, ref: "Reference", response: str) -> Verdict:
        """Parse and check one response. A verbatim copy of the question (with or without its ``Q:``) is removed
        first: a response that only repeats the question states no answer (grading rule 3)."""
        question = self.question(ref.params)
        if question[3:] in response:
            response = response.replace(question, " ").replace(question[3:], " ")
        parsed = self.parse(response)
        if parsed is None:
            return Verdict(False, True, None)
        return Verdict(bool(self.check(parsed, ref)), False, self.canonical(parsed))



TASKS: Registry[Task] = Registry("task")


def register_task(cls: type[Task]) -> type[Task]:
    """Register one instance of ``cls`` under its paper code (``cls.code``); returns the class."""
    TASKS.register(cls.code, cls())
    return cls


def get_task(code: str) -> Task:
    """The task of a paper code; an unknown code raises :class:`~hypergvl.registry.UnknownName` listing the codes."""
    return TASKS[code]


def config_name(code: str) -> str:
    """Dataset config name of a task: lower-case code, ``3-CL`` as ``3cl``."""
    return code.lower().replace("-", "")


def task_codes() -> tuple[str, ...]:
    """Codes of every task registered now: the paper's (:data:`hypergvl.paper.PAPER_TASKS`) first in its order, then
    the others in registration order. The column order of every table and view."""
    paper = [t for t in PAPER_TASKS if t in TASKS]
    return (*paper, *(t for t in TASKS if t not in PAPER_TASKS))
