"""Real-world source hypergraphs and the random-walk sub-hypergraph sampler.

HyperGVL, appendix B.2 (Real-world Hypergraph):

    "Real-world hypergraphs are derived from the citation co-author network PubMed_CA Yang et al. (2016a) and
    protein structure resources M-CSA Ribeiro et al. (2018). In these hypergraphs, vertices represent anonymized
    authors or residues, while hyperedges correspond to paper-level co-author relationships or catalytic-site
    residue sets, respectively. To create scale-controlled instances while preserving real structural patterns,
    we extract sub-hypergraphs from the full hypergraphs by selecting a seed vertex and traversing incident
    hyperedges using a random walk, retaining visited vertices until reaching the target size. Finally, all
    vertex and hyperedge identifiers are re-indexed to canonical IDs. For tasks such as 3-CL, SHC, and HHM,
    which require the hypergraph structure to ensure a valid solution exists, we repeat the sampling until the
    sampled hypergraph meets the requirements."

HyperGVL, appendix B.3 (Hypergraph Structure Control):

    "We employ the scale partition protocol from Feng et al. (2025b), categorizing hypergraphs by vertex count
    into three groups: small (5-10 vertices), medium (10-15 vertices), and large (15-20 vertices). [...]
    Conversely, real-world hypergraphs do not impose a hyperedge-count constraint, allowing their hyperedge
    statistics to naturally reflect the connectivity patterns inherent in the original data."

What we have instead of the paper's sources (say so in the dataset card):

- **PubMed co-authorship** (the paper's first source) has no copy we can reach offline. We use HyperGCN's
  co-authorship hypergraphs of **Cora** (``coauthorship-cora``) and **DBLP** (``coauthorship-dblp``) and, in the
  same file format, its co-citation hypergraphs of Cora and PubMed (``cocitation-cora``, ``cocitation-pubmed``).
  HyperGCN's orientation: a vertex is a *paper*, a hyperedge is the set of papers of one *author* (co-authorship)
  or the set of papers cited by one paper (co-citation); the paper's PubMed_CA wording (vertices are authors,
  hyperedges are a paper's author set) is the dual orientation.
- **M-CSA** (catalytic-site residue sets, the paper's second source) has no offline copy and is left out. The
  second real domain comes from data files shipped in the ``hypergraphx`` 1.8.0 wheel: US Supreme Court voting
  (``justice``), face-to-face contacts in a workplace (``contacts-workplace``) and in a high school
  (``contacts-high-school``), and Walmart co-purchase baskets (``walmart-trips``). The wheel installs them under
  top-level ``tests/`` and ``tutorials/`` folders of site-packages; they are located with
  ``importlib.metadata`` and read as files, never imported (a top-level ``tests`` package must not shadow the
  project's own tests).

Every source is loaded through one code path from a *base location*: the ``base`` argument, else the source's
environment variable (``HYPERGVL_HYPERGCN_ROOT`` / ``HYPERGVL_HYPERGRAPHX_ROOT``), else its default (HyperGCN's
raw-files URL; the installed ``hypergraphx`` distribution). A base that is a URL (``https://``, ``file://``)
is read with :mod:`urllib`, anything else as a local folder; pickles go through
:func:`hypergvl.safe_pickle.safe_load`. A source hypergraph keeps the file's hyperedge list as published
(so its counts match the upstream statistics, duplicates included); sampled instances never contain duplicates.
"""
from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import urllib.parse
import urllib.request
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph

from .generators import sample_num_vertices
from .hypergraph import Hypergraph
from .registry import Registry
from .safe_pickle import safe_load

__all__ = ["SourceSpec", "SourceFileError", "SOURCES", "register_source", "get_source", "read_bytes",
           "load_source", "sample_subhypergraph", "sample_real", "sample_instance", "DEFAULT_SOURCES",
           "HYPERGCN_URL"]

HYPERGCN_URL = "https://raw.githubusercontent.com/malllabiisc/HyperGCN/master/"
_URL_SCHEMES = frozenset({"http", "https", "file", "ftp"})
T = TypeVar("T")


class SourceFileError(FileNotFoundError):
    """A source file could not be read from its base location (the message names the path or URL)."""


@dataclass(frozen=True)
class SourceSpec:
    """A registered real source hypergraph.

    ``parse`` receives ``read(relpath) -> bytes`` (bound to the resolved base location) and returns the
    full source :class:`Hypergraph`. ``origin`` is the string of the dataset's ``origin`` column.
    """

    name: str
    domain: str
    description: str
    licence: str
    citation: str
    env_var: str
    default_base: Callable[[], str]
    parse: Callable[[Callable[[str], bytes]], Hypergraph]

    @property
    def origin(self) -> str:
        return self.name

    def resolve_base(self, base: str | os.PathLike | None = None) -> str:
        """The argument, else ``$env_var``, else the default base location."""
        if base is not None:
            return os.fspath(base)
        return os.environ.get(self.env_var) or self.default_base()


SOURCES: Registry[SourceSpec] = Registry("source")


def register_source(name: str, *, domain: str, description: str, licence: str, citation: str, env_var: str,
                    default_base: Callable[[], str]) -> Callable:
    """Decorator registering ``parse(read) -> Hypergraph`` as source ``name``; duplicate names are rejected."""

    def decorator(parse: Callable[[Callable[[str], bytes]], Hypergraph]):
        SOURCES.register(name, SourceSpec(name, domain, description, licence, citation, env_var, default_base, parse))
        return parse

    return decorator


def get_source(name: str) -> SourceSpec:
    """The registered source ``name``; an unknown name raises :class:`~hypergvl.registry.UnknownName` listing them."""
    return SOURCES[name]


def read_bytes(base: str | os.PathLike, relpath: str) -> bytes:
    """Read ``relpath`` under ``base``: :mod:`urllib` when ``base`` is a URL, ``open`` for a local folder.

    Raises :class:`SourceFileError` naming the full path or URL.
    """
    base = os.fspath(base)
    if urllib.parse.urlsplit(base).scheme in _URL_SCHEMES:
        location = base.rstrip("/") + "/" + relpath
        opener: Callable[[], Any] = lambda: urllib.request.urlopen(location, timeout=60)  # noqa: E731
    else:
        location = str(Path(base).expanduser() / relpath)
        opener = lambda: open(location, "rb")  # noqa: E731
    try:
        with opener() as handle:
            return handle.read()
    except OSError as exc:  # urllib.error.URLError is an OSError
        reason = getattr(exc, "reason", None) or exc.strerror or exc
        raise SourceFileError(f"cannot read {location}: {reason}") from exc


def load_source(name: str, base: str | os.PathLike | None = None) -> Hypergraph:
    """The full source hypergraph ``name``, read from ``base`` (see the module docstring); cached in-process."""
    spec = get_source(name)
    return _load_cached(name, spec.resolve_base(base))


@functools.lru_cache(maxsize=None)
def _load_cached(name: str, base: str) -> Hypergraph:
    spec = SOURCES[name]

    def read(relpath: str) -> bytes:
        try:
            return read_bytes(base, relpath)
        except SourceFileError as exc:
            raise SourceFileError(f"source {name!r}: {exc}. Pass base=... or set {spec.env_var} to a location "
                                  f"laid out like {spec.default_base()}") from exc.__cause__

    return spec.parse(read)


def _compact(edges: Iterable[Iterable[int]], extra_vertices: Iterable[int] = ()) -> Hypergraph:
    """Hypergraph whose vertex ``i`` is the ``i``-th smallest file id (ids may be sparse or start at 1)."""
    edges = [sorted({int(v) for v in e}) for e in edges]
    ids = sorted({v for e in edges for v in e} | {int(v) for v in extra_vertices})
    index = {v: i for i, v in enumerate(ids)}
    return Hypergraph(len(ids), [[index[v] for v in e] for e in edges])


# ------------------------------------------------------------------------------------------- HyperGCN

_HYPERGCN_LICENCE = "Apache-2.0 (HyperGCN repository, which redistributes the data)"
_HYPERGCN_CITATION = ("N. Yadati, M. Nimishakavi, P. Yadav, V. Nitin, A. Louis, P. Talukdar. HyperGCN: A New "
                      "Method of Training Graph Convolutional Networks on Hypergraphs. NeurIPS 2019.")


def _hypergcn_default() -> str:
    return HYPERGCN_URL


def _hypergcn(read: Callable[[str], bytes], relpath: str) -> Hypergraph:
    """HyperGCN ``hypergraph.pickle``: dict hyperedge key -> list/set of node ids (0-based node indices).

    Node ids are kept as they are (``num_vertices`` = largest id + 1), so provenance ids are the upstream node
    indices of ``labels.pickle``; nodes covered by no hyperedge are isolated vertices the sampler never visits.
    """
    obj = safe_load(read(relpath))
    if not isinstance(obj, dict) or not obj:
        raise ValueError(f"{relpath}: expected a non-empty dict hyperedge-key -> node ids, got {type(obj).__name__}")
    edges = [sorted({int(v) for v in members}) for members in obj.values()]
    return Hypergraph(max(e[-1] for e in edges) + 1, edges)


def _register_hypergcn(name: str, relpath: str, domain: str, description: str, citation_extra: str) -> None:
    register_source(name, domain=domain, description=description, licence=_HYPERGCN_LICENCE,
                    citation=f"{_HYPERGCN_CITATION} {citation_extra}".strip(), env_var="HYPERGVL_HYPERGCN_ROOT",
                    default_base=_hypergcn_default)(functools.partial(_hypergcn, relpath=relpath))


_CORA = "Data: A. McCallum et al., Automating the construction of internet portals, 2000; Sen et al., 2008."
_register_hypergcn("coauthorship-cora", "data/coauthorship/cora/hypergraph.pickle", "co-authorship",
                   "Cora co-authorship (Cora-CA): vertex = paper, hyperedge = papers of one author; 1,072 "
                   "hyperedges (970 distinct) over 2,708 papers (2,388 covered).", _CORA)
_register_hypergcn("coauthorship-dblp", "data/coauthorship/dblp/hypergraph.pickle", "co-authorship",
                   "DBLP co-authorship (DBLP-CA): vertex = paper, hyperedge = papers of one author; 22,363 "
                   "hyperedges (20,865 distinct) over 41,302 papers.", "Data: the DBLP computer science bibliography.")
_register_hypergcn("cocitation-cora", "data/cocitation/cora/hypergraph.pickle", "co-citation",
                   "Cora co-citation: vertex = paper, hyperedge = papers cited by one paper; 1,579 hyperedges "
                   "(1,483 distinct) over 2,708 papers (1,434 covered).", _CORA)
_register_hypergcn("cocitation-pubmed", "data/cocitation/pubmed/hypergraph.pickle", "co-citation",
                   "PubMed (diabetes) co-citation: vertex = paper, hyperedge = papers cited by one paper; 7,963 "
                   "hyperedges (7,531 distinct) over 19,717 papers (3,840 covered).",
                   "Data: G. Namata et al., Query-driven active surveying for collective classification, 2012.")


# ----------------------------------------------------------------------------------------- hypergraphx

_HGX_CITATION = ("Q. F. Lotito, M. Contisciani, C. De Bacco, L. Di Gaetano, L. Gallo, A. Montresor, F. Musciotto, "
                 "N. Ruggeri, F. Battiston. Hypergraphx: a library for higher-order network analysis. Journal of "
                 "Complex Networks 11(3), 2023.")


def _hypergraphx_default() -> str:
    """The site-packages folder holding the installed ``hypergraphx`` wheel's ``tests/`` and ``tutorials/``."""
    try:
        return str(importlib.metadata.distribution("hypergraphx").locate_file(""))
    except importlib.metadata.PackageNotFoundError:
        raise SourceFileError("the hypergraphx package (>= 1.8) is not installed; install it or pass base=... "
                              "/ set HYPERGVL_HYPERGRAPHX_ROOT to a folder holding its tests/ and tutorials/") from None


def _lines(data: bytes) -> list[list[int]]:
    """One hyperedge per line, vertex ids separated by blanks."""
    return [[int(tok) for tok in line.split()] for line in data.decode("utf-8").splitlines() if line.strip()]


def _hgx_json(data: bytes) -> Hypergraph:
    """hypergraphx JSON: a list of records; ``type == "node"`` has ``idx``, ``type == "edge"`` ``interaction``."""
    records = json.loads(data)
    nodes = [r["idx"] for r in records if r.get("type") == "node"]
    edges = [r["interaction"] for r in records if r.get("type") == "edge"]
    return _compact(edges, nodes)


def _register_hgx(name: str, domain: str, description: str, licence: str, citation: str):
    return register_source(name, domain=domain, description=description, licence=licence,
                           citation=f"{citation} Distributed with: {_HGX_CITATION}",
                           env_var="HYPERGVL_HYPERGRAPHX_ROOT", default_base=_hypergraphx_default)


@_register_hgx("justice", "voting",
               "US Supreme Court justices voting together: vertex = justice, hyperedge = a majority; 2,826 "
               "hyperedges over 38 justices. Very dense: sub-hypergraphs carry many hyperedges.",
               "BSD-3-Clause (hypergraphx package files); upstream terms not stated in the package",
               "US Supreme Court voting data as distributed with hypergraphx.")
def _justice(read: Callable[[str], bytes]) -> Hypergraph:
    return _compact(_lines(read("tests/test_data/justice_data/hyperedges.txt")))


@_register_hgx("contacts-workplace", "face-to-face contacts",
               "Face-to-face contacts in an office building (SocioPatterns InVS13): vertex = person, hyperedge = "
               "a group in contact; 788 hyperedges over 92 people.",
               "CC BY-NC-SA (SocioPatterns data; non-commercial, share-alike)",
               "M. Genois et al. Data on face-to-face contacts in an office building suggest a low-cost "
               "vaccination strategy based on community linkers. Network Science 3(3), 2015.")
def _workplace(read: Callable[[str], bytes]) -> Hypergraph:
    return _hgx_json(read("tests/test_data/workplace/workplace.json"))


@_register_hgx("contacts-high-school", "face-to-face contacts",
               "Face-to-face contacts among students of a high school in Marseilles, 2013 (SocioPatterns): vertex "
               "= student, hyperedge = a group in contact; 7,818 hyperedges over 327 students in 9 classes.",
               "CC BY-NC-SA (SocioPatterns data; non-commercial, share-alike)",
               "R. Mastrandrea, J. Fournet, A. Barrat. Contact patterns in a high school: a comparison between "
               "data collected using wearable sensors, contact diaries and friendship surveys. PLoS ONE 10(9), 2015.")
def _high_school(read: Callable[[str], bytes]) -> Hypergraph:
    return _hgx_json(read("tests/test_data/hs/hs.json"))


@_register_hgx("walmart-trips", "co-purchase",
               "Walmart shopping trips: vertex = product, hyperedge = the products bought together in one trip; "
               "48,482 hyperedges (44,558 distinct) over 57,910 products.",
               "BSD-3-Clause (hypergraphx package files); upstream terms not stated (derived from a Kaggle "
               "competition by Amburg et al.)",
               "I. Amburg, N. Veldt, A. R. Benson. Clustering in graphs and hypergraphs with categorical edge "
               "labels. The Web Conference 2020.")
def _walmart(read: Callable[[str], bytes]) -> Hypergraph:
    return _compact(_lines(read("tutorials/_example_data/walmart_data/walmart-trips-reduced.txt")))


# Builder defaults: both ship inside the installed hypergraphx wheel, so a fresh offline machine builds the full
# benchmark. Measured with tasks.<T>.from_real (40 samples per scale): Walmart co-purchase serves 3-CL and SHC, the
# workplace contact hypergraph serves SHC and HHM (co-purchase sub-hypergraphs rarely have a Hamiltonian path);
# make_instance hands a row to the next source when one cannot serve it. For the paper's citation domain pass
# --sources coauthorship-dblp cocitation-pubmed (HyperGCN files; HYPERGVL_HYPERGCN_ROOT when offline): DBLP
# sub-hypergraphs of 11-20 vertices almost never have a Hamiltonian path, PubMed co-citation ones often do.
DEFAULT_SOURCES: tuple[str, ...] = ("walmart-trips", "contacts-workplace")

# ---------------------------------------------------------------------------------------------- sampler

_COMPONENTS: dict[int, tuple[weakref.ref, np.ndarray]] = {}


def _component_sizes(source: Hypergraph) -> np.ndarray:
    """``sizes[v]``: vertex count of ``v``'s connected component (cached per source object)."""
    hit = _COMPONENTS.get(id(source))
    if hit is not None and hit[0]() is source:
        return hit[1]
    n, m = source.num_vertices, source.num_hyperedges
    rows = np.fromiter((v for e in source.hyperedges for v in e), dtype=np.int64)
    cols = np.repeat(np.arange(m, dtype=np.int64), [len(e) for e in source.hyperedges]) + n
    star = scipy.sparse.coo_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n + m, n + m))
    _, labels = scipy.sparse.csgraph.connected_components(star, directed=False)
    sizes = np.bincount(labels[:n], minlength=labels.max() + 1)[labels[:n]]
    key = id(source)
    _COMPONENTS[key] = (weakref.ref(source, lambda _ref: _COMPONENTS.pop(key, None)), sizes)
    return sizes


def sample_subhypergraph(source: Hypergraph, target_size: int, rng: np.random.Generator, *, name: str = "",
                         max_tries: int = 100, min_order: int = 2) -> tuple[Hypergraph, dict]:
    """Random-walk sub-hypergraph of ``source`` with exactly ``target_size`` vertices (appendix B.2).

    1. A seed vertex is drawn uniformly among the vertices whose connected component has at least
       ``target_size`` vertices (equivalent to drawing any vertex and rejecting walks that cannot finish).
    2. Walk: from the current vertex take a uniformly random incident hyperedge, then a uniformly random vertex
       of it; every vertex visited for the first time is kept, until ``target_size`` vertices are kept. A walk
       that has not finished after ``500 * target_size`` steps restarts from a new seed (one more try).
    3. Induced sub-hypergraph: every source hyperedge restricted to the kept vertices; restrictions with fewer
       than ``min_order`` vertices (default 2: a lone vertex of a larger hyperedge relates nothing among the
       kept vertices, and 3-CL needs instances without order-1 hyperedges) and repeated restrictions are dropped.
       Each walk step ``u -> v`` lies in one hyperedge whose restriction contains both ``u`` and ``v``, so with
       ``min_order <= 2`` the result is connected and has no isolated vertex; this is still checked, and a
       failing sample counts as a try.
    4. Canonical ids: vertex ``i`` is the ``i``-th smallest kept source id (independent of the walk order, so
       the same kept set always yields the same instance); hyperedges are sorted lexicographically.

    No hyperedge-count cap is applied (B.3: "real-world hypergraphs do not impose a hyperedge-count
    constraint"); callers that need one pass it as an ``accept`` condition to :func:`sample_real`.

    Returns ``(hypergraph, provenance)``; provenance (JSON-serialisable) holds ``source`` (``name``),
    ``seed_vertex`` (source id), ``original_vertex_ids`` (source id of each new vertex), ``source_hyperedge_ids``
    (for each new hyperedge, the first source hyperedge whose restriction it is), ``walk_steps`` and ``restarts``.
    The same ``rng`` state gives the same output.
    """
    if isinstance(target_size, bool) or not isinstance(target_size, (int, np.integer)) or target_size < 2:
        raise ValueError(f"target_size must be an integer >= 2, got {target_size!r}")
    if not isinstance(max_tries, int) or max_tries < 1:
        raise ValueError(f"max_tries must be a positive integer, got {max_tries!r}")
    if not 1 <= min_order <= 2:
        raise ValueError(f"min_order must be 1 or 2 (larger values can disconnect the sample), got {min_order!r}")
    target_size = int(target_size)
    sizes = _component_sizes(source)
    seeds = np.flatnonzero(sizes >= target_size)
    if seeds.size == 0:
        raise ValueError(f"source {name or 'hypergraph'} has no connected component with {target_size} vertices "
                         f"(largest: {int(sizes.max())})")
    incident, edges = source.incident, source.hyperedges
    max_steps = 500 * target_size
    for attempt in range(max_tries):
        seed = int(seeds[rng.integers(seeds.size)])
        kept, current, steps = {seed}, seed, 0
        while len(kept) < target_size and steps < max_steps:
            inc = incident[current]
            members = edges[inc[rng.integers(len(inc))]]
            current = members[rng.integers(len(members))]
            kept.add(current)
            steps += 1
        if len(kept) < target_size:
            continue
        original = sorted(kept)
        index = {v: i for i, v in enumerate(original)}
        first_source: dict[tuple[int, ...], int] = {}
        for e in sorted({e for v in original for e in incident[v]}):
            restricted = tuple(index[v] for v in edges[e] if v in index)  # sorted: edges and index are monotone
            if len(restricted) >= min_order and restricted not in first_source:
                first_source[restricted] = e
        order = sorted(first_source)
        h = Hypergraph(target_size, order)
        if not h.is_connected() or 0 in h.degrees:
            continue
        return h, {"source": name, "seed_vertex": seed, "original_vertex_ids": original,
                   "source_hyperedge_ids": [first_source[r] for r in order], "walk_steps": steps,
                   "restarts": attempt}
    raise RuntimeError(f"random walk on source {name or 'hypergraph'} found no connected {target_size}-vertex "
                       f"sample in {max_tries} tries")


def _sample_until(source_name: str, target_size: int, rng: np.random.Generator,
                  build: Callable[[Hypergraph], T | None], max_tries: int, base: str | os.PathLike | None,
                  what: str) -> tuple[T, dict]:
    """Draw sub-hypergraphs until ``build(h)`` is not ``None``; ``(build(h), provenance with "samples")``."""
    if not isinstance(max_tries, int) or max_tries < 1:
        raise ValueError(f"max_tries must be a positive integer, got {max_tries!r}")
    source = load_source(source_name, base)
    for count in range(1, max_tries + 1):
        h, meta = sample_subhypergraph(source, target_size, rng, name=source_name)
        result = build(h)
        if result is not None:
            meta["samples"] = count
            return result, meta
    raise RuntimeError(f"none of {max_tries} sampled {target_size}-vertex sub-hypergraphs of {source_name!r} "
                       f"satisfied {what}; raise max_tries or use another source or size")


def sample_real(source_name: str, target_size: int, rng: np.random.Generator,
                accept: Callable[[Hypergraph], bool] | None = None, max_tries: int = 200,
                base: str | os.PathLike | None = None) -> tuple[Hypergraph, dict]:
    """Sample from source ``source_name`` until ``accept(h)`` holds (B.2: "we repeat the sampling until the
    sampled hypergraph meets the requirements").

    Returns ``(hypergraph, provenance)`` as :func:`sample_subhypergraph`, with ``samples`` (how many samples were
    drawn). Raises ``RuntimeError`` when none of ``max_tries`` samples is accepted.
    """
    return _sample_until(source_name, target_size, rng, lambda h: h if accept is None or accept(h) else None,
                         max_tries, base, getattr(accept, "__name__", repr(accept)))


def sample_instance(source_name: str, scale: str, rng: np.random.Generator, build: Callable[[Hypergraph], T | None],
                    max_tries: int = 200, base: str | os.PathLike | None = None) -> T:
    """A task instance on a real sub-hypergraph of ``scale`` (B.3: small 5-10, medium 11-15, large 16-20 vertices).

    The vertex count is drawn once, uniformly in the scale's range (so hard-to-satisfy tasks do not drift to the
    small end of the range); then sub-hypergraphs of that size are drawn until ``build(h)`` returns an instance
    rather than ``None`` (the task's requirement, e.g. "a 3-colouring exists"), at most ``max_tries`` times.
    """
    size = sample_num_vertices(scale, rng)
    name = getattr(build, "__name__", "the task's requirement")
    return _sample_until(source_name, size, rng, build, max_tries, base, name)[0]
