"""The 12 HyperGVL tasks (sec. 2.3, appendix C), each with parameter sampling, the exact E.2 question, an exact
solver producing the canonical answer, a tolerant parser and a verifier.

Table 2: VC, HEC, Ne (Level-1); DVC, OEC, ONe (Level-2); OSP, OMF, ISM (Level-3, polynomial); 3-CL, SHC, HHM
(Level-4, NP-hard planning). A task is registered by its paper code with ``@register_task``.

A *meta problem* row (docs/design.md schema, minus text/image columns) is made by :func:`generate_problem`; its
``reference`` column is everything :func:`score_response` needs to verify any response, planning answers included
(the verifier accepts every valid plan, not only the generated one).
"""
from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from . import answers, generators, solvers, text
from .hypergraph import Hypergraph
from .registry import Registry

__all__ = ["TASKS", "TASK_CODES", "task_codes", "UNDERSTANDING", "REASONING", "Task", "Verdict", "register_task", "get_task",
           "generate_problem", "score_response", "parse_reference", "config_name"]

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

    def generate(self, seed: int, scale: str = "small", source: str = "synthetic", index: int | None = None) -> dict:
        return generate_problem(self.code, seed, scale, source, index)


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


# ============================================================================================ answer kinds
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


# ============================================================================================ Level 1
@register_task
class VC(_Count):
    code, level, name = "VC", 1, "Vertex Counting"
    pattern = re.compile(r"Q: How many vertices are in the hypergraph")
    other_unit = _HYPEREDGES

    def question(self, params):
        return f"Q: How many vertices are in the hypergraph G? {ANS}."

    def solve(self, inst):
        return str(inst.hypergraph.num_vertices)


@register_task
class HEC(_Count):
    code, level, name = "HEC", 1, "Hyperedge Counting"
    pattern = re.compile(r"Q: How many hyperedges are in the hypergraph")
    other_unit = _VERTICES

    def question(self, params):
        return f"Q: How many hyperedges are in the hypergraph G? {ANS}."

    def solve(self, inst):
        return str(inst.hypergraph.num_hyperedges)


@register_task
class Ne(_VertexSet):
    code, level, name = "Ne", 1, "Neighbors"
    pattern = re.compile(r"Q: What are the direct neighbors of vertex v(?P<vertex>\d+)")

    def sample_params(self, inst, rng):
        return {"vertex": _pick_vertex(inst.hypergraph, rng)}

    def question(self, params):
        v = params["vertex"]
        return (f"Q: What are the direct neighbors of vertex v{v} in hypergraph G? (Neighbors = vertices sharing at "
                f"least one hyperedge with v{v}). {ANS} in the format {{v1,v2,...}} or “No neighbors”.")

    def solve(self, inst):
        return self.canonical(inst.hypergraph.neighbors(inst.params["vertex"]))


# ============================================================================================ Level 2
@register_task
class DVC(_Count):
    code, level, name = "DVC", 2, "Degree-specified Vertex Counting"
    pattern = re.compile(r"Q: How many vertices have degree (?P<degree>\d+)")
    other_unit = _HYPEREDGES

    def sample_params(self, inst, rng):
        # C.1: "The target degree is randomly selected from the hypergraph's existing degree distribution"
        return {"degree": inst.hypergraph.degree(_pick_vertex(inst.hypergraph, rng))}

    def question(self, params):
        return (f"Q: How many vertices have degree {params['degree']} in hypergraph G? (Degree = number of "
                f"hyperedges the vertex belongs to). {ANS}.")

    def solve(self, inst):
        return str(sum(d == inst.params["degree"] for d in inst.hypergraph.degrees))


@register_task
class OEC(_Count):
    code, level, name = "OEC", 2, "Order-specified Hyperedge Counting"
    pattern = re.compile(r"Q: How many hyperedges have order (?P<order>\d+)")
    other_unit = _VERTICES

    def sample_params(self, inst, rng):
        h = inst.hypergraph
        return {"order": h.order(int(rng.integers(h.num_hyperedges)))}

    def question(self, params):
        return (f"Q: How many hyperedges have order {params['order']} in hypergraph G? (Order = number of vertices "
                f"in the hyperedge). {ANS}.")

    def solve(self, inst):
        return str(sum(len(e) == inst.params["order"] for e in inst.hypergraph.hyperedges))


@register_task
class ONe(_VertexSet):
    code, level, name = "ONe", 2, "Order-filtered Neighbors"
    pattern = re.compile((r"Q: What are the neighbors of vertex v(?P<vertex>\d+) when only considering hyperedges with "
                       r"order >= (?P<min_order>\d+)"))

    def sample_params(self, inst, rng):
        h = inst.hypergraph
        v = _pick_vertex(h, rng)
        orders = sorted({len(h.hyperedges[i]) for i in h.incident[v]} | {2})
        return {"vertex": v, "min_order": int(rng.choice([k for k in orders if k >= 2]))}

    def question(self, params):
        # E.2.2 prints the threshold garbled ("order $Eq2$"); we write ">= k" and the E.2.1 empty-set wording.
        return (f"Q: What are the neighbors of vertex v{params['vertex']} when only considering hyperedges with order "
                f">= {params['min_order']} in hypergraph G? {ANS} in the format {{v1,v2,...}} or “No neighbors”.")

    def solve(self, inst):
        return self.canonical(inst.hypergraph.neighbors(inst.params["vertex"], inst.params["min_order"]))


# ============================================================================================ Level 3
@register_task
class OSP(Task):
    code, level, name = "OSP", 3, "Order-weighted Shortest Path"
    pattern = re.compile(r"Q: What is the shortest path length from vertex v(?P<source>\d+) to vertex v(?P<target>\d+)")

    def sample_params(self, inst, rng):
        s, t = _two_vertices(inst.hypergraph, rng)
        return {"source": s, "target": t}

    def question(self, params):
        return (f"Q: What is the shortest path length from vertex v{params['source']} to vertex v{params['target']} in "
                f"hypergraph G, where each hyperedge’s weight equals its order (number of vertices)? If no path "
                f"exists, answer “No path”. {ANS}.")

    def solve(self, inst):
        d = solvers.shortest_path_length(inst.hypergraph, inst.params["source"], inst.params["target"])
        return "No path" if d is None else str(d)

    def guess(self, rng, n, m, params):
        return str(rng.randint(0, max(n, m, 1) * 2))

    def parse(self, response):
        return answers.parse_int(response, allow_no_path=True)


@register_task
class OMF(_Count):
    code, level, name = "OMF", 3, "Order-weighted Maximum Flow"
    guess_range = 2
    pattern = re.compile(r"Q: What is the estimated maximum flow from vertex v(?P<source>\d+) to vertex v(?P<target>\d+)")

    def sample_params(self, inst, rng):
        s, t = _two_vertices(inst.hypergraph, rng)
        return {"source": s, "target": t}

    def question(self, params):
        return (f"Q: What is the estimated maximum flow from vertex v{params['source']} to vertex v{params['target']} "
                f"in hypergraph G, where each hyperedge’s capacity equals its order? If no flow exists, answer “0”. "
                f"{ANS}.")

    def solve(self, inst):
        return str(solvers.max_flow(inst.hypergraph, inst.params["source"], inst.params["target"]))

    def parse(self, response):
        return answers.parse_int(response, allow_no_flow=True)  # "If no flow exists, answer “0”"


@register_task
class ISM(Task):
    code, level, name = "ISM", 3, "Isomorphism Recognition"
    two_hypergraphs = True
    pattern = re.compile(r"Q: Are these two hypergraphs isomorphic")

    def _pair(self, h, rng, variant):
        # balanced Yes/No: the builder alternates `variant`; a lone sample flips a coin
        yes = (variant % 2 == 0) if variant is not None else bool(rng.random() < 0.5)
        h2 = (generators.isomorphic_copy(h, rng) if yes
              else generators.non_isomorphic_variant(h, rng, solvers.is_isomorphic))
        return Instance(h, {}, h2)

    def synthetic(self, scale, rng, variant):
        for _ in range(50):  # a hypergraph with no non-isomorphic variant (e.g. one hyperedge) is redrawn
            inst = self.from_real(generators.random_hypergraph(scale, rng), rng, variant)
            if inst is not None:
                return inst
        raise RuntimeError("could not generate an ISM pair")

    def from_real(self, h, rng, variant):
        try:
            return self._pair(h, rng, variant)
        except RuntimeError:
            return None

    def question(self, params):
        return ("Q: Are these two hypergraphs isomorphic? (Two hypergraphs are isomorphic if there exists a vertex "
                f"relabeling that transforms one into the other). {ANS} in the format [Yes/No].")

    def solve(self, inst):
        return "Yes" if solvers.is_isomorphic(inst.hypergraph, inst.hypergraph2) else "No"

    def guess(self, rng, n, m, params):
        return rng.choice(["Yes", "No"])

    def parse(self, response):
        return answers.parse_yes_no(response)


# ============================================================================================ Level 4
@register_task
class ThreeColoring(Task):
    code, level, name = "3-CL", 4, "Hypergraph 3-Coloring"
    pattern = re.compile(r"Q: Please provide a 3-coloring strategy")
    min_order = 2

    def synthetic(self, scale, rng, variant):
        h, colours = generators.planted_3cl(scale, rng)
        return Instance(h, {}, hint=colours)

    def from_real(self, h, rng, variant):
        # 3-CL instances have no order-1 hyperedge (docs/design.md): drop them; they constrain nothing
        h = Hypergraph(h.num_vertices, [e for e in h.hyperedges if len(e) >= 2])
        if not h.hyperedges or not h.is_connected():
            return None
        try:
            colours = solvers.find_3coloring(h)
        except solvers.SearchBudgetExceeded:
            return None
        return Instance(h, {}, hint=colours) if colours else None

    def question(self, params):
        return ("Q: Please provide a 3-coloring strategy such that each hyperedge contains nodes with at least 2 "
                "different colors (assign each vertex a color from {c0, c1, c2}). "
                f"{ANS} as “Coloring:[v0:c0,v1:c1,…]”.")

    def solve(self, inst):
        colours = inst.hint if inst.hint is not None else solvers.find_3coloring(inst.hypergraph)
        return self.canonical(dict(enumerate(colours))) if colours else "No coloring"

    def guess(self, rng, n, m, params):
        return "Coloring:[" + ",".join(f"v{v}:c{rng.randrange(3)}" for v in range(n)) + "]"

    def parse(self, response):
        return answers.parse_coloring(response)

    def canonical(self, parsed):
        if isinstance(parsed, list):  # a vertex coloured twice
            return "Coloring:[" + ",".join(f"v{v}:c{c}" for v, c in parsed) + "]"
        return "Coloring:[" + ",".join(f"v{v}:c{parsed[v]}" for v in sorted(parsed)) + "]"

    def check(self, parsed, ref):
        h = ref.hypergraph
        if isinstance(parsed, list) or set(parsed) != set(range(h.num_vertices)):
            return False
        return solvers.check_coloring(h, [parsed[v] for v in range(h.num_vertices)])


@register_task
class SHC(Task):
    code, level, name = "SHC", 4, "Strict Hypercycle"
    pattern = re.compile(r"Q: Please identify a strict hypercycle")

    def synthetic(self, scale, rng, variant):
        h, cycle = generators.planted_shc(scale, rng)
        return Instance(h, {}, hint=cycle)

    def from_real(self, h, rng, variant):
        try:
            cycle = solvers.find_strict_hypercycle(h)
        except solvers.SearchBudgetExceeded:
            return None
        return Instance(h, {}, hint=cycle) if cycle else None

    def question(self, params):
        return ("Q: Please identify a strict hypercycle in the hypergraph G (A strict hypercycle is a sequence of "
                "hyperedges e1,e2,...,ek where adjacent hyperedges share exactly one vertex, i.e., |ei ∩ ei+1|=1, and "
                "|ek ∩ e1|=1, forming a closed loop). List the hypercycle after “Ans:” as “Cycle:[e0,e1,…]”.")

    def solve(self, inst):
        cycle = inst.hint if inst.hint is not None else solvers.find_strict_hypercycle(inst.hypergraph)
        return self.canonical(cycle) if cycle else "No cycle"

    def guess(self, rng, n, m, params):
        k = rng.randint(3, max(3, min(m, 6)))
        return self.canonical(rng.sample(range(max(m, k)), k))

    def parse(self, response):
        cycle = answers.parse_edge_sequence(response, "cycle:")
        if cycle and len(cycle) >= 2 and cycle[-1] == cycle[0]:
            cycle = cycle[:-1]  # "e0 -> e3 -> e2 -> e0" writes the closed loop, not a fourth hyperedge
        return cycle

    def canonical(self, parsed):
        return "Cycle:[" + ",".join(f"e{i}" for i in parsed) + "]"

    def check(self, parsed, ref):
        return solvers.check_strict_hypercycle(ref.hypergraph, parsed)


@register_task
class HHM(Task):
    code, level, name = "HHM", 4, "Hypergraph Hamiltonian Path"
    pattern = re.compile(r"Q: Please provide a valid Hamiltonian path from v(?P<source>\d+) to v(?P<target>\d+)")

    def synthetic(self, scale, rng, variant):
        h, s, t, path = generators.planted_hhm(scale, rng)
        return Instance(h, {"source": s, "target": t}, hint=path)

    def from_real(self, h, rng, variant):
        s = _pick_vertex(h, rng)
        try:
            found = solvers.find_hamiltonian_path(h, s)
        except solvers.SearchBudgetExceeded:
            return None
        if not found:
            return None
        path, t = found
        return Instance(h, {"source": s, "target": t}, hint=path)

    def question(self, params):
        return (f"Q: Please provide a valid Hamiltonian path from v{params['source']} to v{params['target']}. "
                f"(Hamiltonian path = path visiting all vertices exactly once). {ANS} as “Path:[e0,e1,…]”.")

    def solve(self, inst):
        path = inst.hint
        if path is None:
            found = solvers.find_hamiltonian_path(inst.hypergraph, inst.params["source"], inst.params["target"])
            path = found[0] if found else None
        return self.canonical(path) if path else "No path"

    def guess(self, rng, n, m, params):
        return self.canonical(rng.sample(range(max(m, n - 1)), n - 1))

    def parse(self, response):
        path = answers.parse_edge_sequence(response, "path:")
        if path is None:  # a factually right answer in another format: the path as its vertices
            order = answers.parse_edge_sequence(response, "path:", vertices=True)
            return VertexOrder(order) if order else None
        return path

    def canonical(self, parsed):
        prefix = "v" if isinstance(parsed, VertexOrder) else "e"
        return "Path:[" + ",".join(f"{prefix}{i}" for i in parsed) + "]"

    def check(self, parsed, ref):
        s, t = ref.params["source"], ref.params["target"]
        if isinstance(parsed, VertexOrder):
            return solvers.check_hamiltonian_order(ref.hypergraph, s, t, parsed)
        return solvers.check_hamiltonian_path(ref.hypergraph, s, t, parsed)


class VertexOrder(tuple):
    """An HHM answer given as the path's vertices (``Path: v0 -> v3 -> v2``) instead of its hyperedges."""


TASK_CODES = tuple(TASKS)  # the paper's twelve; :func:`task_codes` also lists tasks registered later


def task_codes() -> tuple[str, ...]:
    """Codes of every registered task, in registration order (the paper's twelve first)."""
    return tuple(TASKS)

UNDERSTANDING = ("VC", "HEC", "Ne", "DVC", "OEC", "ONe")
REASONING = ("OSP", "OMF", "ISM", "3-CL", "SHC", "HHM")


# ============================================================================================ rows
def problem_rng(seed: int, task: str, scale: str, source: str, index: int | None) -> np.random.Generator:
    """Independent stream per (seed, task, scale, source, index): a row never depends on the rows built before it.

    The seed keeps its full width: a seed of 2**32 or more appends its high 32-bit words to the key, so a 62-bit
    secret builds another set than its low 32 bits, while every seed below 2**32 keeps the five-word key (and so the
    bytes) that every published build was made with."""
    key = [int(seed), zlib.crc32(task.encode()), zlib.crc32(scale.encode()), zlib.crc32(source.encode()),
           -1 if index is None else int(index)]
    words = [k & 0xFFFFFFFF for k in key]
    high = int(seed) >> 32 if int(seed) > 0 else 0
    while high:
        words.append(high & 0xFFFFFFFF)
        high >>= 32
    return np.random.default_rng(np.random.SeedSequence(words))


REAL_TRIES = 60  # sub-hypergraphs drawn per real source before handing over to the next source


def make_instance(code: str, seed: int, scale: str, source: str = "synthetic", index: int | None = None,
                  real_source: str | None = None, variant: int | None = None,
                  real_sources: tuple[str, ...] | None = None) -> tuple[Instance, str]:
    """(instance with parameters, origin name) of one meta problem. ``index`` seeds the row's own random stream;
    ``variant`` (default ``index``) picks a balanced variant where a task has one (ISM: even = Yes). Real rows
    sample ``real_source`` first, then the other ``real_sources`` (default ``sources.DEFAULT_SOURCES``) in order
    (B.2: "we repeat the sampling until the sampled hypergraph meets the requirements")."""
    variant = index if variant is None else variant
    task = get_task(code)
    generators.check_scale(scale)
    rng = problem_rng(seed, code, scale, source, index)
    if source == "synthetic":
        inst = task.synthetic(scale, rng, variant)
        origin = {"3-CL": "planted-3cl", "SHC": "planted-shc", "HHM": "planted-hhm"}.get(code, "random")
    elif source == "real":
        from . import sources  # real sources are optional at import time

        order = list(real_sources or sources.DEFAULT_SOURCES)
        if real_source is not None:
            order = [real_source] + [o for o in order if o != real_source]
        inst = None
        for name in order:  # a source that cannot serve the task (e.g. too sparse for HHM) hands over to the next
            try:
                inst = sources.sample_instance(name, scale, rng, lambda h: task.from_real(h, rng, variant),
                                               max_tries=REAL_TRIES)
            except RuntimeError:
                continue
            origin = sources.get_source(name).origin
            break
        if inst is None:
            raise RuntimeError(f"no real source among {', '.join(order)} yields a {scale} {code} instance "
                               f"in {REAL_TRIES} samples each")
    else:
        raise ValueError(f"unknown source {source!r}; choose synthetic or real")
    params = task.sample_params(inst, rng)
    return Instance(inst.hypergraph, params, inst.hypergraph2, inst.hint), origin


def generate_problem(code: str, seed: int, scale: str = "small", source: str = "synthetic",
                     index: int | None = None, real_source: str | None = None, variant: int | None = None,
                     real_sources: tuple[str, ...] | None = None) -> dict:
    """One meta problem as a row of the docs/design.md schema, without the image columns."""
    task = get_task(code)
    inst, origin = make_instance(code, seed, scale, source, index, real_source, variant, real_sources)
    answer = task.solve(inst)
    h, h2 = inst.hypergraph, inst.hypergraph2
    reference = {"task": code, "hypergraph": json.loads(h.to_json()),
                 "hypergraph2": json.loads(h2.to_json()) if h2 is not None else None,
                 "params": inst.params, "answer": answer}
    return {
        "id": f"{code}-{(index if index is not None else seed) % 100000:05d}",
        "task": code,
        "level": task.level,
        "source": source,
        "origin": origin,
        "scale": scale,
        "num_vertices": h.num_vertices,
        "num_hyperedges": h.num_hyperedges,
        "hypergraph": h.to_json(),
        "hypergraph2": h2.to_json() if h2 is not None else "",
        "params": json.dumps(inst.params, sort_keys=True),
        "question": task.question(inst.params),
        "answer": answer,
        "reference": json.dumps(reference, sort_keys=True, separators=(",", ":")),
        **text.text_columns(h, h2),
    }


# ============================================================================================ verification
@dataclass(frozen=True)
class Reference:
    task: str
    hypergraph: Hypergraph
    hypergraph2: Hypergraph | None
    params: dict
    answer: str


def parse_reference(reference: str | dict) -> Reference:
    """A row's ``reference`` (JSON text or dict) as a :class:`Reference`; ``ValueError`` if it is not one."""
    obj = reference
    if isinstance(reference, str):
        try:
            obj = json.loads(reference)
        except json.JSONDecodeError as exc:
            raise ValueError(f"reference is not JSON: {exc}") from None
    if not isinstance(obj, dict) or not {"task", "hypergraph", "params", "answer"} <= set(obj):
        raise ValueError("reference must be a HyperGVL row reference with task, hypergraph, params and answer")
    task = obj["task"]
    if task not in TASKS:
        raise ValueError(f"reference names unknown task {task!r}; choose one of {', '.join(TASKS)}")
    h2 = obj.get("hypergraph2")
    params = obj["params"]
    if not isinstance(params, dict) or not isinstance(obj["answer"], str):
        raise ValueError("reference params must be an object and answer a string")
    return Reference(task, Hypergraph.from_json(obj["hypergraph"]),
                     Hypergraph.from_json(h2) if h2 else None, params, obj["answer"])


@lru_cache(maxsize=65536)
def _cached_reference(reference: str) -> Reference:
    return parse_reference(reference)


def score_response(reference: str | dict, response: object) -> Verdict:
    """Verify one raw model response against a row reference (any valid plan counts for 3-CL, SHC, HHM)."""
    ref = _cached_reference(reference) if isinstance(reference, str) else parse_reference(reference)
    if not isinstance(response, str):
        return Verdict(False, True, None)
    return TASKS[ref.task].verify(ref, response)
