"""The textual hypergraph representations: the paper's seven (HyperGVL sec. 2.4, appendix E.1, exact E.1 wording) and any
registered beyond them (:data:`TEXT_REPS`; :data:`hypergvl.paper.PAPER_TEXT_REPS` names the paper's).

E.1 example (5 vertices, e0={v0,v1,v2}, e1={v1,v2,v3}, e2={v2,v3,v4}); e.g. N-Set: "In an undirected hypergraph,
(i, j, k) means that vertex i, vertex j, and vertex k are connected with an undirected hyperedge. G describes a
hypergraph among vertices v0, v1, v2, v3, and v4, and among hyperedges e0, e1, and e2. The hyperedges in G are:
(v0, v1, v2), (v1, v2, v3), (v2, v3, v4)."

Cases E.1 does not show (a vertex with one neighbour, an order-1 hyperedge, two items in a list) use the singular
and "x and y", as the HO-Neigh example does ("Vertex v0 is connected to hyperedge e0").

Each representation also has a parser (:func:`parse`) that reads back whatever structure the text states: the
lossless ones (N-Set, HO-Neigh, HO-Inc, Inc-Mat) give the hypergraph back exactly; the vertex-vertex ones
(LO-Inc, N-Pair, Adj-Mat) only give the clique expansion, returned as a hypergraph of order-2 hyperedges (plus
order-1 hyperedges for vertices they state as isolated). The header's hyperedge list is deliberately not used.

A representation is one :class:`TextRep` in :data:`TEXT_REPS`, added by one call of :func:`register_text_rep` that
names everything the suite needs of it: its encoder, its paper label (report columns, the Space's filters), the
marker that recognises its text in a prompt (:func:`recognise`, used by the symbolic baseline) and its parser::

    @register_text_rep("my_rep", label="My-Rep", marker=r"My representation of", parse=parse_my_rep)
    def my_rep(h, name="G"): ...
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .hypergraph import Hypergraph
from .registry import Registry

__all__ = ["TEXT_REPS", "TextRep", "lossless", "encode", "parse", "parse_ism", "ism_text", "text_columns", "text_labels",
           "recognise", "register_text_rep"]


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    if len(items) == 2:
        return f"{items[0]} and {items[1]}"
    return ", ".join(items[:-1]) + ", and " + items[-1]


def _vs(vs) -> list[str]:
    return [f"v{v}" for v in vs]


def _header(h: Hypergraph, name: str, among_edges: bool, comma: bool = False) -> str:
    verts = _join(_vs(range(h.num_vertices)))
    edges = _join([f"e{i}" for i in range(h.num_hyperedges)])
    noun = "hyperedges" if h.num_hyperedges != 1 else "hyperedge"
    return (f"{name} describes a hypergraph among vertices {verts}{',' if comma else ''} and "
            f"{'among ' if among_edges else ''}{noun} {edges}.")


def _plural(items: list[str], one: str, many: str) -> str:
    return f"{one if len(items) == 1 else many} {', '.join(items)}"


TextEncoder = Callable[[Hypergraph, str], str]


@dataclass(frozen=True)
class TextRep:
    """One text representation: ``encode(h, name)`` writes it, ``parse(text)`` reads back the structure it states,
    ``label`` is its paper name, ``marker`` (a regular expression) finds it in a prompt and in no other
    representation's text, ``lossless`` says whether ``parse`` gives the hypergraph back exactly."""

    name: str
    label: str
    encode: TextEncoder
    parse: Callable[[str], Hypergraph]
    marker: re.Pattern
    lossless: bool = False

    def __call__(self, h: Hypergraph, name: str = "G") -> str:
        return self.encode(h, name)


TEXT_REPS: Registry[TextRep] = Registry("text representation")


def register_text_rep(name: str, *, label: str, marker: str, parse: Callable[[str], Hypergraph],
                      lossless: bool = False) -> Callable[[TextEncoder], TextEncoder]:
    """Decorator: register ``fn(h, name) -> str`` as text representation ``name`` (see the module's text)."""

    def deco(fn: TextEncoder) -> TextEncoder:
        TEXT_REPS.register(name, TextRep(name, label, fn, parse, re.compile(marker, re.DOTALL), lossless))
        return fn

    return deco


def encode(rep: str, h: Hypergraph, name: str = "G") -> str:
    """Text of hypergraph ``h`` in representation ``rep`` (one of :data:`TEXT_REPS`), called ``name``."""
    return TEXT_REPS[rep](h, name)


def text_labels() -> dict[str, str]:
    """Paper label of every registered text representation, in registration order (``{"lo_inc": "LO-Inc", ...}``)."""
    return {name: rep.label for name, rep in TEXT_REPS.items()}


def recognise(text: str) -> str:
    """Name of the one representation whose marker ``text`` holds (``ValueError`` when none or several do)."""
    found = [name for name, rep in TEXT_REPS.items() if rep.marker.search(text)]
    if len(found) != 1:
        raise ValueError("not a HyperGVL prompt: " + ("unknown text representation" if not found else
                                                        f"the text reads as several representations ({', '.join(found)})"))
    return found[0]


def text_columns(h: Hypergraph, h2: Hypergraph | None = None) -> dict[str, str]:
    """The 7 ``text_<rep>`` row columns; ISM rows (``h2`` given) use the E.2.3 two-hypergraph form."""
    return {f"text_{rep}": (ism_text(rep, h, h2) if h2 is not None else encode(rep, h)) for rep in TEXT_REPS}


def ism_text(rep: str, h: Hypergraph, g: Hypergraph) -> str:
    """E.2.3's two-hypergraph form: "There are two hypergraphs: H and G. The description of H is: ... " """
    return (f"There are two hypergraphs: H and G. The description of H is: {encode(rep, h, 'H')} "
            f"The description of G is: {encode(rep, g, 'G')}")


def lo_inc(h: Hypergraph, name: str = "G") -> str:
    parts = [_header(h, name, False), " In this hypergraph:"]
    for v in range(h.num_vertices):
        nb = _vs(h.neighbors(v))
        parts.append(f" Vertex v{v} is connected to {_plural(nb, 'vertex', 'vertices')}." if nb
                     else f" Vertex v{v} is connected to no other vertex.")
    return "".join(parts)


def n_pair(h: Hypergraph, name: str = "G") -> str:
    pairs = sorted(h.clique_expansion().edges())
    pairs = sorted((min(a, b), max(a, b)) for a, b in pairs)
    return ("In an undirected hypergraph, (i,j) means that vertex i and vertex j are connected with an undirected "
            f"hyperedge. {_header(h, name, False)} The connection relation between vertices in {name} are: "
            + " ".join(f"(v{a}, v{b})" for a, b in pairs) + ".")


def _matrix(rows) -> list[str]:
    return ["[" + "".join(f"{int(x)}," for x in row) + "]" for row in rows]


def adj_mat(h: Hypergraph, name: str = "G") -> str:
    return (f"{_header(h, name, True)} The adjacency matrix between the vertices of the hypergraph is ["
            + " , ".join(_matrix(h.adjacency_matrix())) + "]")


def ho_neigh(h: Hypergraph, name: str = "G") -> str:
    parts = [_header(h, name, False), " In this hypergraph:"]
    for v in range(h.num_vertices):
        es = [f"e{i}" for i in h.incident[v]]
        parts.append(f" Vertex v{v} is connected to {_plural(es, 'hyperedge', 'hyperedges')}." if es
                     else f" Vertex v{v} is connected to no hyperedge.")
    for i, e in enumerate(h.hyperedges):
        parts.append(f" Hyperedge e{i} is connected to {_plural(_vs(e), 'vertex', 'vertices')}.")
    return "".join(parts)


def ho_inc(h: Hypergraph, name: str = "G") -> str:
    parts = [_header(h, name, True), " In this hypergraph:"]
    for v in range(h.num_vertices):
        links = []
        for i in h.incident[v]:
            others = _vs(u for u in h.hyperedges[i] if u != v)
            links.append(f"to {_plural(others, 'vertex', 'vertices')} with hyperedge e{i}" if others
                         else f"to no other vertex with hyperedge e{i}")
        body = ", ".join(links) if links else "to no vertex"
        parts.append(f" Vertex v{v} is connected {body}.")
    return "".join(parts)


def n_set(h: Hypergraph, name: str = "G") -> str:
    return ("In an undirected hypergraph, (i, j, k) means that vertex i, vertex j, and vertex k are connected with an "
            f"undirected hyperedge. {_header(h, name, True, comma=True)} The hyperedges in {name} are: "
            + ", ".join("(" + ", ".join(_vs(e)) + ")" for e in h.hyperedges) + ".")


def inc_mat(h: Hypergraph, name: str = "G") -> str:
    return (f"{_header(h, name, False)} The incidence matrix of the hypergraph is ["
            + ", ".join(_matrix(h.incidence_matrix())) + "]")


# ------------------------------------------------------------------------------------------------ parsing back
_HEADER = re.compile(r"describes a hypergraph among vertices (.*?),? and (?:among )?hyperedges?")
_VID = re.compile(r"v(\d+)")


def _num_vertices(text: str) -> int:
    m = _HEADER.search(text)
    if not m:
        raise ValueError("not a HyperGVL text representation: header not found")
    return len(_VID.findall(m.group(1)))


def _body(text: str, marker: str) -> str:
    at = text.find(marker)
    if at < 0:
        raise ValueError(f"not a HyperGVL text representation: {marker!r} not found")
    return text[at + len(marker):]


def _pairs_to_hypergraph(n: int, pairs: set[tuple[int, int]]) -> Hypergraph:
    covered = {v for p in pairs for v in p}
    edges = sorted(pairs) + [(v,) for v in range(n) if v not in covered]
    return Hypergraph(n, edges)


def _parse_n_set(text: str) -> Hypergraph:
    body = _body(text, " are: ")
    return Hypergraph(_num_vertices(text), [[int(x) for x in _VID.findall(g)] for g in re.findall(r"\(([^)]*)\)", body)])


def _parse_inc_mat(text: str) -> Hypergraph:
    rows = [[int(x) for x in r.split(",") if x] for r in re.findall(r"\[([01,]*)\]", _body(text, "matrix of the hypergraph is"))]
    m = len(rows[0]) if rows else 0
    return Hypergraph(len(rows), [[v for v, r in enumerate(rows) if r[i]] for i in range(m)])


def _parse_adj_mat(text: str) -> Hypergraph:
    rows = [[int(x) for x in r.split(",") if x] for r in re.findall(r"\[([01,]*)\]", _body(text, "of the hypergraph is"))]
    pairs = {(a, b) for a, r in enumerate(rows) for b, x in enumerate(r) if x and a < b}
    return _pairs_to_hypergraph(len(rows), pairs)


def _parse_n_pair(text: str) -> Hypergraph:
    pairs = {tuple(sorted((int(a), int(b)))) for a, b in re.findall(r"\(v(\d+), v(\d+)\)", _body(text, " are: "))}
    return _pairs_to_hypergraph(_num_vertices(text), pairs)


def _parse_lo_inc(text: str) -> Hypergraph:
    pairs = set()
    for v, rest in re.findall(r"Vertex v(\d+) is connected to ([^.]*)\.", _body(text, "In this hypergraph:")):
        pairs |= {tuple(sorted((int(v), int(u)))) for u in _VID.findall(rest)}
    return _pairs_to_hypergraph(_num_vertices(text), pairs)


def _parse_ho_neigh(text: str) -> Hypergraph:
    found = re.findall(r"Hyperedge e(\d+) is connected to [^.]*?((?:v\d+(?:, )?)+)\.", _body(text, "In this hypergraph:"))
    edges = dict((int(i), [int(x) for x in _VID.findall(vs)]) for i, vs in found)
    return Hypergraph(_num_vertices(text), [edges[i] for i in sorted(edges)])


def _parse_ho_inc(text: str) -> Hypergraph:
    edges: dict[int, set[int]] = {}
    for v, rest in re.findall(r"Vertex v(\d+) is connected ([^.]*)\.", _body(text, "In this hypergraph:")):
        for others, i in re.findall(r"to ([^,]*?(?:v\d+(?:, )?)*) with hyperedge e(\d+)", rest):
            edges.setdefault(int(i), set()).update([int(v)] + [int(x) for x in _VID.findall(others)])
    return Hypergraph(_num_vertices(text), [sorted(edges[i]) for i in sorted(edges)])


def parse(rep: str, text: str) -> Hypergraph:
    """Read back the structure a text in representation ``rep`` states (see the module docstring)."""
    return TEXT_REPS[rep].parse(text)  # an unknown representation raises UnknownName listing the representations


def parse_ism(rep: str, text: str) -> tuple[Hypergraph, Hypergraph]:
    """Split E.2.3's two-hypergraph form and parse both parts (H first, then G)."""
    at = text.find(" The description of G is: ")
    if not text.startswith("There are two hypergraphs") or at < 0:
        raise ValueError("not an ISM two-hypergraph text")
    return parse(rep, text[:at]), parse(rep, text[at:])


# ------------------------------------------------------------------------------------------------ the seven (E.1)
# The markers: each occurs in its representation's text and in no other's (tests/test_text.py checks it on random
# hypergraphs); LO-Inc shares "In this hypergraph:" with HO-Neigh and HO-Inc and names no hyperedge after it.
register_text_rep("lo_inc", label="LO-Inc", parse=_parse_lo_inc,
                  marker=r" In this hypergraph:(?!.*(?: with hyperedge e| connected to (?:no )?hyperedges?\b))")(lo_inc)
register_text_rep("n_pair", label="N-Pair", parse=_parse_n_pair, marker=r"\(i,j\) means")(n_pair)
register_text_rep("adj_mat", label="Adj-Mat", parse=_parse_adj_mat, marker=r"The adjacency matrix")(adj_mat)
register_text_rep("ho_neigh", label="HO-Neigh", parse=_parse_ho_neigh, lossless=True,
                  marker=r" is connected to (?:no )?hyperedges?\b")(ho_neigh)
register_text_rep("ho_inc", label="HO-Inc", parse=_parse_ho_inc, lossless=True, marker=r" with hyperedge e\d")(ho_inc)
register_text_rep("n_set", label="N-Set", parse=_parse_n_set, lossless=True, marker=r"\(i, j, k\) means")(n_set)
register_text_rep("inc_mat", label="Inc-Mat", parse=_parse_inc_mat, lossless=True,
                  marker=r"The incidence matrix")(inc_mat)


def lossless() -> tuple[str, ...]:
    """The registered representations that state every hyperedge (``lossless=True``), in registration order."""
    return tuple(name for name, rep in TEXT_REPS.items() if rep.lossless)
