"""Zero-shot hypergraph node-classification prompts, WiseHyGR's out-of-domain test (HyperGVL sec. 4, appendix G).

G.2: "From each dataset, we sample 1K hypergraph nodes for classification. To ensure these nodes (i.e., vertices)
form a connected hypergraph, we initiate a random walk from a target node, collecting up to n nodes. We set n=40
[...]. The performances shown in Fig.6 are averaged over three trials". The prompt (G.2)::

    Classify node v0 in the hypergraph. Hypergraph Structure: {Textual Hypergraph Representation} Known labels in
    the subgraph: v1: Probabilistic Methods v2: Reinforcement Learning ... Target Node Content: {Paper Abstract}
    Categories: Genetic Algorithms: ... Probabilistic Methods: ... Based on the hypergraph structure, known labels
    of other nodes, and the target node's abstract content, which category does node v0 most likely belong to?
    Answer with the category name only.

Fixed here where G.2 is loose:

- Walk: from the current node, a uniformly chosen hyperedge of order >= 2 containing it, then a uniformly chosen
  member; new nodes are collected in the order reached, until n nodes or 100 n steps. Targets are drawn among nodes
  in at least one hyperedge of order >= 2 (a node alone has no structure to show). Self-loop hyperedges are not
  added (``add_self_loops=False``).
- Sub-hypergraph: every hyperedge restricted to the sampled nodes, kept when it still has >= 2 of them, duplicates
  merged; the target is v0, the others v1.. in walk order. Every walk step lies inside one kept hyperedge, so the
  sub-hypergraph is connected.
- Known labels: the true labels of all sampled nodes but the target, one per line.
- Content: the HNN library's node datasets ship bag-of-words features, not text, so the prompt says the content is
  not available (the paper used manually retrieved abstracts).
- Sections are separated by newlines (the paper's example shows them run together).
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from hypergvl import Hypergraph
from hypergvl.text import encode

from .categories import Category

__all__ = ["NodeProblem", "Structure", "random_walk", "sample_problem", "node_prompt", "node_question",
           "parse_category", "NO_CONTENT", "DEFAULT_WALK_NODES"]

DEFAULT_WALK_NODES = 40
NO_CONTENT = ("Not available: this dataset provides no text for its nodes (only bag-of-words features), so decide "
              "from the hypergraph structure and the known labels.")
QUESTION = ("Based on the hypergraph structure, known labels of other nodes, and the target node's abstract "
            "content, which category does node v0 most likely belong to? Answer with the category name only.")


@dataclass(frozen=True)
class Structure:
    """A node dataset's hypergraph as incidence lists (hyperedges of order >= 2 only)."""

    hyperedges: tuple[tuple[int, ...], ...]
    incident: tuple[tuple[int, ...], ...]
    labels: np.ndarray

    @classmethod
    def from_data(cls, data) -> "Structure":
        """From a :class:`hypergvl.models.datasets.HypergraphData` (loaded with ``add_self_loops=False``)."""
        edges = tuple(tuple(e) for e in data.hyperedges() if len(e) >= 2)
        inc: list[list[int]] = [[] for _ in range(data.num_nodes)]
        for i, e in enumerate(edges):
            for v in e:
                inc[v].append(i)
        return cls(edges, tuple(map(tuple, inc)), data.y.numpy().astype(np.int64))

    def eligible(self) -> np.ndarray:
        """Nodes in at least one hyperedge of order >= 2 (the targets a walk can start from)."""
        return np.array([v for v, es in enumerate(self.incident) if es], dtype=np.int64)


@dataclass(frozen=True)
class NodeProblem:
    """One node-classification problem: the sampled sub-hypergraph around ``target`` (= v0)."""

    id: str
    dataset: str
    nodes: tuple[int, ...]  # dataset node ids; nodes[0] is the target, nodes[i] is v<i>
    hypergraph: Hypergraph
    known: tuple[str, ...]  # category names of v1.. (true labels)
    label: str  # the target's true category
    categories: tuple[Category, ...]

    @property
    def target(self) -> int:
        return self.nodes[0]


def random_walk(s: Structure, target: int, n: int, rng: np.random.Generator) -> list[int]:
    """Up to ``n`` distinct nodes in the order a random walk from ``target`` reaches them (see module docstring)."""
    if not s.incident[target]:
        raise ValueError(f"node {target} is in no hyperedge of order >= 2; a walk cannot leave it")
    nodes, seen, cur = [target], {target}, target
    for _ in range(100 * n):
        if len(nodes) >= n:
            break
        e = s.hyperedges[s.incident[cur][int(rng.integers(len(s.incident[cur])))]]
        cur = e[int(rng.integers(len(e)))]
        if cur not in seen:
            seen.add(cur)
            nodes.append(cur)
    return nodes


def sample_problem(s: Structure, dataset: str, categories: Sequence[Category], target: int, n: int,
                   rng: np.random.Generator, problem_id: str) -> NodeProblem:
    """The sub-hypergraph of a walk from ``target`` with the known labels of the other nodes."""
    nodes = random_walk(s, target, n, rng)
    local = {v: i for i, v in enumerate(nodes)}
    edge_ids = sorted({i for v in nodes for i in s.incident[v]})
    restricted = {tuple(sorted(local[v] for v in s.hyperedges[i] if v in local)) for i in edge_ids}
    edges = sorted((e for e in restricted if len(e) >= 2), key=lambda e: (e[0], len(e), e))
    h = Hypergraph(len(nodes), edges)
    names = [c.name for c in categories]
    return NodeProblem(problem_id, dataset, tuple(nodes), h, tuple(names[s.labels[v]] for v in nodes[1:]),
                       names[s.labels[target]], tuple(categories))


def node_question() -> str:
    """The question part of the prompt (what the router reads with the HO-Neigh description)."""
    return QUESTION


def node_prompt(p: NodeProblem, text_rep: str) -> str:
    """The G.2 prompt with the structure in textual representation ``text_rep``."""
    known = "\n".join(f"v{i}: {name}" for i, name in enumerate(p.known, 1)) or "none"
    cats = "\n".join(f"{c.name}: {c.description}" for c in p.categories)
    return (f"Classify node v0 in the hypergraph.\nHypergraph Structure: {encode(text_rep, p.hypergraph)}\n"
            f"Known labels in the subgraph:\n{known}\nTarget Node Content: {NO_CONTENT}\nCategories:\n{cats}\n"
            f"{QUESTION}")


_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def parse_category(response: str, names: Sequence[str]) -> str | None:
    """The category a free-text answer names, or None. Tolerant: ``<think>`` blocks dropped, the text after the last
    ``Ans:`` used when present, case/punctuation/underscores ignored; the category named first wins (a longer name
    over one it contains); a name's distinctive words alone also count (``Type 2`` for ``Diabetes Mellitus Type 2``:
    the words every category shares are dropped)."""
    text = _THINK.sub(" ", response or "")
    if "ans:" in text.lower():
        text = text[text.lower().rfind("ans:") + 4:]
    body = f" {_norm(text)} "
    normed = [_norm(n) for n in names]
    for n, name in zip(normed, names):
        if body.strip() == n:
            return name
    common = set.intersection(*(set(n.split()) for n in normed)) if normed else set()
    for variants in (normed, [" ".join(w for w in n.split() if w not in common) for n in normed]):
        hits = []
        for name, n in zip(names, variants):
            if n and f" {n} " in body:
                hits.append((body.index(f" {n} "), -len(n), name))
        if hits:
            return min(hits)[2]
    return None


def problem_seed(seed: int, dataset: str, trial: int) -> list[int]:
    """The numpy seed sequence of one (dataset, trial)."""
    return [seed, zlib.crc32(dataset.encode()), trial]
