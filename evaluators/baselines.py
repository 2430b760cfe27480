"""Baseline "models" for the harness: ``baseline:random`` (the chance floor) and ``baseline:symbolic``.

``baseline:symbolic`` reads only the prompt, as a model would: it recognises the textual representation, parses it
back into whatever structure it states (:func:`hypergvl_dataset.text.parse`), recognises the task and its parameters
from the appendix E.2 question, and answers with the exact solvers. It is perfect on the lossless representations
(N-Set, HO-Neigh, HO-Inc, Inc-Mat); on the vertex-vertex ones (LO-Inc, N-Pair, Adj-Mat) it only sees the clique
expansion, so its failures show what those encodings lose (HyperGVL Observation 11). The header's list of hyperedge
names is deliberately not read (it would give HEC away; see the project notes). ``baseline:random`` gives a
format-valid random answer per task, seeded by the prompt, so it is deterministic. ``baseline:neighbors`` answers the
zero-shot node-classification prompts of ``router.nodeclf`` (HyperGVL appendix G) with the majority label among the
target's known neighbours, read back from the prompt's text representation: an offline reference point.
"""
from __future__ import annotations

import random
import re
import zlib
from dataclasses import dataclass

from hypergvl_dataset import Hypergraph, solvers, text

from .adapters import ModelInfo, Sample, register_adapter

# question -> (task, params); the patterns are the E.2 questions of hypergvl_dataset.tasks
_QUESTIONS = [
    ("VC", re.compile(r"Q: How many vertices are in the hypergraph")),
    ("HEC", re.compile(r"Q: How many hyperedges are in the hypergraph")),
    ("Ne", re.compile(r"Q: What are the direct neighbors of vertex v(?P<vertex>\d+)")),
    ("DVC", re.compile(r"Q: How many vertices have degree (?P<degree>\d+)")),
    ("OEC", re.compile(r"Q: How many hyperedges have order (?P<order>\d+)")),
    ("ONe", re.compile(r"Q: What are the neighbors of vertex v(?P<vertex>\d+) when only considering hyperedges with "
                       r"order >= (?P<min_order>\d+)")),
    ("OSP", re.compile(r"Q: What is the shortest path length from vertex v(?P<source>\d+) to vertex v(?P<target>\d+)")),
    ("OMF", re.compile(r"Q: What is the estimated maximum flow from vertex v(?P<source>\d+) to vertex v(?P<target>\d+)")),
    ("ISM", re.compile(r"Q: Are these two hypergraphs isomorphic")),
    ("3-CL", re.compile(r"Q: Please provide a 3-coloring strategy")),
    ("SHC", re.compile(r"Q: Please identify a strict hypercycle")),
    ("HHM", re.compile(r"Q: Please provide a valid Hamiltonian path from v(?P<source>\d+) to v(?P<target>\d+)")),
]
_REP_MARKERS = [("n_pair", "(i,j) means"), ("n_set", "(i, j, k) means"), ("adj_mat", "The adjacency matrix"),
                ("inc_mat", "The incidence matrix"), ("ho_inc", " with hyperedge e"), ("ho_neigh", " is connected to hyperedge"),
                ("lo_inc", " In this hypergraph:")]


def read_prompt(prompt: str) -> tuple[str, dict, str, str]:
    """(task, params, representation text, representation name) of a HyperGVL prompt."""
    at = prompt.rfind(" Q: ")
    if at < 0:
        raise ValueError("not a HyperGVL prompt: no question")
    body, question = prompt[:at], prompt[at + 1:]
    for code, pattern in _QUESTIONS:
        m = pattern.match(question)
        if m:
            params = {k: int(v) for k, v in m.groupdict().items()}
            break
    else:
        raise ValueError("not a HyperGVL prompt: unknown question")
    rep = next((name for name, marker in _REP_MARKERS if marker in body), None)
    if rep is None:
        raise ValueError("not a HyperGVL prompt: unknown text representation")
    return code, params, body, rep


def _set(vs) -> str:
    return "{" + ",".join(f"v{v}" for v in sorted(vs)) + "}" if vs else "No neighbors"


def solve_symbolically(prompt: str) -> str:
    code, p, body, rep = read_prompt(prompt)
    if code == "ISM":
        h, g = text.parse_ism(rep, body)
        return "Yes" if solvers.is_isomorphic(h, g) else "No"
    h = text.parse(rep, body)
    if code == "VC":
        return str(h.num_vertices)
    if code == "HEC":
        return str(h.num_hyperedges)
    if code in ("Ne", "ONe"):
        return _set(h.neighbors(p["vertex"], p.get("min_order", 1)))
    if code == "DVC":
        return str(sum(d == p["degree"] for d in h.degrees))
    if code == "OEC":
        return str(sum(len(e) == p["order"] for e in h.hyperedges))
    if code == "OSP":
        d = solvers.shortest_path_length(h, p["source"], p["target"])
        return "No path" if d is None else str(d)
    if code == "OMF":
        return str(solvers.max_flow(h, p["source"], p["target"]))
    if code == "3-CL":
        col = solvers.find_3coloring(Hypergraph(h.num_vertices, [e for e in h.hyperedges if len(e) >= 2] or [[0]]))
        return "Coloring:[" + ",".join(f"v{v}:c{c}" for v, c in enumerate(col)) + "]" if col else "No coloring"
    if code == "SHC":
        cyc = solvers.find_strict_hypercycle(h)
        return "Cycle:[" + ",".join(f"e{i}" for i in cyc) + "]" if cyc else "No cycle"
    found = solvers.find_hamiltonian_path(h, p["source"], p["target"])
    return "Path:[" + ",".join(f"e{i}" for i in found[0]) + "]" if found else "No path"


def random_answer(prompt: str) -> str:
    """A format-valid random answer to the prompt's task (uniform over plausible values)."""
    code, p, body, rep = read_prompt(prompt)
    rng = random.Random(zlib.crc32(prompt.encode()))
    heads = re.findall(r"describes a hypergraph among vertices (.*?),? and (?:among )?hyperedges? (.*?)\.", body)
    n = len(re.findall(r"v\d+", heads[-1][0])) if heads else 10
    m = len(re.findall(r"e\d+", heads[-1][1])) if heads else 10
    if code in ("VC", "HEC", "DVC", "OEC", "OMF", "OSP"):
        return str(rng.randint(0, max(n, m, 1) * (2 if code in ("OSP", "OMF") else 1)))
    if code in ("Ne", "ONe"):
        return _set([v for v in range(n) if v != p["vertex"] and rng.random() < 0.3])
    if code == "ISM":
        return rng.choice(["Yes", "No"])
    if code == "3-CL":
        return "Coloring:[" + ",".join(f"v{v}:c{rng.randrange(3)}" for v in range(n)) + "]"
    if code == "SHC":
        k = rng.randint(3, max(3, min(m, 6)))
        return "Cycle:[" + ",".join(f"e{i}" for i in rng.sample(range(max(m, k)), k)) + "]"
    return "Path:[" + ",".join(f"e{i}" for i in rng.sample(range(max(m, n - 1)), n - 1)) + "]"


_NC_STRUCTURE = re.compile(r"Hypergraph Structure: (?P<text>.*?)\nKnown labels in the subgraph:\n(?P<known>.*?)\n"
                           r"Target Node Content:.*?\nCategories:\n(?P<cats>.*?)\n[^\n]*\Z", re.S)


def majority_neighbor_label(prompt: str) -> str:
    """``baseline:neighbors``: the majority label among v0's labelled neighbours in a node-classification prompt
    (``router.nodeclf``). It reads the prompt back as a model would: the text representation is parsed
    (:func:`hypergvl_dataset.text.parse`; every representation states at least the clique expansion, which fixes
    the neighbours), then the known labels and the category list. Ties go to the label more frequent among all
    known nodes, then to the category listed first; with no labelled neighbour the majority of all known labels."""
    m = _NC_STRUCTURE.search(prompt)
    if m is None:
        raise ValueError("not a node-classification prompt")
    body = m["text"]
    rep = next((name for name, marker in _REP_MARKERS if marker in body), None)
    if rep is None:
        raise ValueError("not a node-classification prompt: unknown text representation")
    h = text.parse(rep, body)
    known = {int(v): name.strip() for v, name in re.findall(r"^v(\d+): (.+)$", m["known"], re.M)}
    order = [line.split(": ", 1)[0] for line in m["cats"].splitlines() if ": " in line]
    if not order:
        raise ValueError("not a node-classification prompt: no categories")
    overall = {c: sum(n == c for n in known.values()) for c in order}
    near = {c: sum(known.get(u) == c for u in h.neighbors(0)) for c in order}
    votes = near if any(near.values()) else overall
    return min(order, key=lambda c: (-votes[c], -overall[c], order.index(c)))


@dataclass
class BaselineAdapter:
    kind: str

    def generate(self, batch: list[Sample]) -> list[str]:
        if self.kind == "neighbors":
            out = []
            for s in batch:
                try:
                    out.append(majority_neighbor_label(s.prompt))
                except ValueError as exc:
                    out.append(f"I cannot answer: {exc}")
            return out
        fn = solve_symbolically if self.kind == "symbolic" else random_answer
        out = []
        for s in batch:
            try:
                out.append(f"Ans: {fn(s.prompt)}")
            except (ValueError, solvers.SearchBudgetExceeded) as exc:
                out.append(f"I cannot answer: {exc}")
        return out

    def info(self) -> ModelInfo:
        return ModelInfo(name=f"baseline:{self.kind}", type="baseline", revision=None, num_parameters=0)


BASELINES = ("random", "symbolic", "neighbors")


@register_adapter("baseline")
def _baseline(rest: str, **options) -> BaselineAdapter:
    if rest not in BASELINES:
        raise ValueError(f"unknown baseline {rest!r}; choose {', '.join(f'baseline:{b}' for b in BASELINES)}")
    if options:
        raise ValueError(f"baselines take no options, got {', '.join(sorted(options))}")
    return BaselineAdapter(rest)


