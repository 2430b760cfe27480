"""The answer kinds and parameter pickers the task definitions share: a count (:class:`_Count`, with the unit a
count must not be stated in), a vertex set (:class:`_VertexSet`), a random vertex and two distinct ones."""
from __future__ import annotations

import re
from typing import ClassVar

import numpy as np

from hypergvl import answers
from hypergvl.hypergraph import Hypergraph
from hypergvl.tasks.base import Task

_VERTICES = re.compile(r"[ \t]+(?:\w+[ \t]+)?(?:vertices|vertex|nodes?)\b", re.IGNORECASE)
_HYPEREDGES = re.compile(r"[ \t]+(?:\w+[ \t]+)?(?:hyper-?edges?|edges?)\b", re.IGNORECASE)


class _Count(Task):
    other_unit: ClassVar[re.Pattern | None] = None  # what the question does not count (VC: hyperedges)
    guess_range: ClassVar[int] = 1  # a random answer is at most this many times max(n, m)

    def guess(self, rng, n, m, params):
        return str(rng.randint(0, max(n, m, 1) * self.guess_range))

    def parse(self, response):
        return answers.parse_int(response, other_unit=self.other_unit)


class _VertexSet(Task):
    def parse(self, response):
        return answers.parse_vertex_set(response)

    def canonical(self, parsed):
        return "{" + ",".join(f"v{v}" for v in sorted(parsed)) + "}" if parsed else "No neighbors"

    def guess(self, rng, n, m, params):
        return self.canonical([v for v in range(n) if v != params["vertex"] and rng.random() < 0.3])


def _pick_vertex(h: Hypergraph, rng: np.random.Generator) -> int:
    return int(rng.integers(h.num_vertices))


def _two_vertices(h: Hypergraph, rng: np.random.Generator) -> tuple[int, int]:
    s, t = rng.choice(h.num_vertices, size=2, replace=False)
    return int(s), int(t)
