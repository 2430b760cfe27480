"""Real source hypergraphs, the restricted unpickler and the random-walk sampler (HyperGVL appendix B.2)."""
from __future__ import annotations

import importlib.metadata
import os
import pickle
import pickletools
import subprocess
import sys
import warnings
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from hypergvl.hypergraph import Hypergraph
from hypergvl.safe_pickle import safe_load
from hypergvl.sources import (DEFAULT_SOURCES, SOURCES, SourceFileError, get_source, load_source,
                                      register_source, sample_instance, sample_real, sample_subhypergraph)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
HYPERGCN = DATA / "HyperGCN"
needs_hypergcn = pytest.mark.skipif(not (HYPERGCN / "data").is_dir(), reason=f"{HYPERGCN} not present")
HGX = ("justice", "contacts-workplace", "contacts-high-school", "walmart-trips")


def _hgx_path(rel: str) -> Path:
    return Path(importlib.metadata.distribution("hypergraphx").locate_file(rel))


# ------------------------------------------------------------------------------------- safe_pickle

class _Exploit:
    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


def test_safe_load_refuses_os_system_without_running_it(tmp_path):
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Exploit(f"touch {marker}"))
    with pytest.raises(pickle.UnpicklingError, match=r"refused to unpickle global (posix|nt|os)\.system"):
        safe_load(payload)
    assert not marker.exists()
    pickle.loads(payload)  # the stock unpickler does run it: the payload is real
    assert marker.exists()


@pytest.mark.parametrize("module, name", [("builtins", "eval"), ("builtins", "getattr"),
                                          ("scipy.sparse", "save_npz"), ("numpy", "load"),
                                          ("builtins", "object.__subclasses__"), ("subprocess", "Popen")])
def test_safe_load_refuses_other_globals(module, name):
    payload = pickle.PROTO + b"\x04" + b"c" + f"{module}\n{name}\n".encode() + b"."
    with pytest.raises(pickle.UnpicklingError, match=f"{module}.{name}"):
        safe_load(payload)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_safe_load_round_trips_numpy_and_scipy(protocol):
    objs = {"arr": np.arange(12, dtype=np.float32).reshape(3, 4), "scalar": np.int32(7), "strs": np.array(["a", "b"]),
            "csr": sp.csr_matrix(np.eye(4)), "coo": sp.coo_array(np.eye(3)), "lil": sp.lil_matrix(np.eye(2)),
            "dtype": np.dtype("f8"), "py": [{1, 2}, frozenset({3}), (1.5, "x", None, True, b"raw", 2j)]}
    out = safe_load(pickle.dumps(objs, protocol=protocol))
    for key in ("csr", "coo", "lil"):
        assert type(out[key]) is type(objs[key]) and (out[key] != objs[key]).nnz == 0
    np.testing.assert_array_equal(out["arr"], objs["arr"])
    assert out["arr"].dtype == np.float32 and out["scalar"] == 7 and isinstance(out["scalar"], np.int32)
    assert list(out["strs"]) == ["a", "b"] and out["dtype"] == objs["dtype"] and out["py"] == objs["py"]


def test_safe_load_python2_builtin_names():
    payload = pickle.dumps({0: {1, 2}}, protocol=2)  # Python 3 writes Python 2 names at protocol 2
    assert b"__builtin__" in payload
    assert safe_load(payload) == {0: {1, 2}}


@needs_hypergcn
def test_safe_load_real_hypergcn_pickles_match_stock_pickle():
    """Old scipy (scipy.sparse.csr) and numpy (numpy.core.multiarray) names in the upstream files load."""
    path = HYPERGCN / "data/cocitation/cora/features.pickle"
    names = {arg for op, arg, _ in pickletools.genops(path.read_bytes()) if isinstance(arg, str)}
    assert {"scipy.sparse.csr", "numpy.core.multiarray"} <= names
    with open(path, "rb") as f, warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecated scipy/numpy module is touched
        ours = safe_load(f)
    with open(path, "rb") as f, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ref = pickle.load(f)
    assert ours.shape == (2708, 1433) and (ours != ref).nnz == 0


# -------------------------------------------------------------------------------------------- registry

def test_unknown_source_lists_choices():
    with pytest.raises(ValueError, match="unknown source 'pubmed-ca'") as err:
        load_source("pubmed-ca")
    for name in SOURCES:
        assert name in str(err.value)


def test_duplicate_registration_rejected():
    with pytest.raises(ValueError, match="registered twice"):
        register_source("justice", domain="", description="", licence="", citation="", env_var="X",
                        default_base=str)(lambda read: Hypergraph(1))


def test_every_source_documents_itself():
    assert {"coauthorship-cora", "coauthorship-dblp", "cocitation-cora", "cocitation-pubmed", *HGX} <= set(SOURCES)
    for name, spec in SOURCES.items():
        assert spec.name == spec.origin == name
        assert spec.domain and spec.licence and spec.citation and spec.description


# ------------------------------------------------------------------------------------------- HyperGCN

@needs_hypergcn
@pytest.mark.parametrize("name, relpath, m, n", [
    ("coauthorship-cora", "coauthorship/cora", 1072, 2708), ("coauthorship-dblp", "coauthorship/dblp", 22363, 41302),
    ("cocitation-cora", "cocitation/cora", 1579, 2708), ("cocitation-pubmed", "cocitation/pubmed", 7963, 19717)])
def test_hypergcn_sources_load_from_local_folder(name, relpath, m, n):
    h = load_source(name, base=HYPERGCN)
    assert (h.num_hyperedges, h.num_vertices) == (m, n)
    with open(HYPERGCN / "data" / relpath / "hypergraph.pickle", "rb") as f:
        ref = pickle.load(f, encoding="latin1")  # trusted local copy: the stock unpickler is the reference
    assert list(h.hyperedges) == [tuple(sorted(int(v) for v in e)) for e in ref.values()]


@needs_hypergcn
def test_hypergcn_file_url_uses_the_same_path(monkeypatch):
    url = HYPERGCN.as_uri()
    assert url.startswith("file://")
    h_url = load_source("coauthorship-cora", base=url)
    assert h_url == load_source("coauthorship-cora", base=str(HYPERGCN))
    monkeypatch.setenv("HYPERGVL_HYPERGCN_ROOT", url + "/")
    assert load_source("coauthorship-cora") == h_url


def test_hypergcn_default_base_is_upstream_url(monkeypatch):
    monkeypatch.delenv("HYPERGVL_HYPERGCN_ROOT", raising=False)
    assert get_source("coauthorship-cora").resolve_base() == \
        "https://raw.githubusercontent.com/malllabiisc/HyperGCN/master/"


def test_missing_source_file_names_the_path(tmp_path):
    expected = str(tmp_path / "data/coauthorship/dblp/hypergraph.pickle")
    with pytest.raises(SourceFileError, match="HYPERGVL_HYPERGCN_ROOT") as err:
        load_source("coauthorship-dblp", base=tmp_path)
    assert expected in str(err.value)
    with pytest.raises(FileNotFoundError, match=r"file://.*data/coauthorship/dblp/hypergraph\.pickle"):
        load_source("coauthorship-dblp", base=tmp_path.as_uri())


def test_malicious_source_pickle_is_refused(tmp_path):
    target = tmp_path / "data/coauthorship/cora/hypergraph.pickle"
    target.parent.mkdir(parents=True)
    target.write_bytes(pickle.dumps(_Exploit(f"touch {tmp_path / 'pwned'}")))
    with pytest.raises(pickle.UnpicklingError, match="system"):
        load_source("coauthorship-cora", base=tmp_path)
    assert not (tmp_path / "pwned").exists()


# ---------------------------------------------------------------------------------------- hypergraphx

@pytest.mark.parametrize("name, n, m, distinct", [("justice", 38, 2826, 2826), ("contacts-workplace", 92, 788, 788),
                                                  ("contacts-high-school", 327, 7818, 7818),
                                                  ("walmart-trips", 57910, 48482, 44558)])
def test_hypergraphx_sources_counts(name, n, m, distinct):
    h = load_source(name)
    assert (h.num_vertices, h.num_hyperedges, len(set(h.hyperedges))) == (n, m, distinct)
    assert min(h.degrees) >= 1  # compact ids: every vertex of these files occurs in a hyperedge


def test_walmart_vertex_ids_are_ranks_of_file_ids():
    lines = _hgx_path("tutorials/_example_data/walmart_data/walmart-trips-reduced.txt").read_text().splitlines()
    ids = sorted({int(t) for line in lines for t in line.split()})
    h = load_source("walmart-trips")
    for i in (0, 1, len(lines) - 1):
        assert [ids[v] for v in h.hyperedges[i]] == sorted(int(t) for t in lines[i].split())


@pytest.mark.parametrize("name, rel", [("contacts-workplace", "tests/test_data/workplace/workplace.json"),
                                       ("contacts-high-school", "tests/test_data/hs/hs.json")])
def test_hypergraphx_json_matches_hypergraphx_reader(name, rel):
    from hypergraphx.readwrite import load_hypergraph

    ref = load_hypergraph(str(_hgx_path(rel)))
    ids = sorted(ref.get_nodes())
    h = load_source(name)
    assert h.num_vertices == len(ids)
    assert sorted(tuple(ids[v] for v in e) for e in h.hyperedges) == sorted(tuple(sorted(e)) for e in ref.get_edges())


def test_loading_never_imports_a_top_level_tests_package():
    code = ("import sys, hypergvl.sources as s\n"
            f"[s.load_source(n) for n in {HGX!r}]\n"
            "assert 'tests' not in sys.modules and 'tutorials' not in sys.modules, sorted(sys.modules)\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[1])


# -------------------------------------------------------------------------------------------- sampler

def _check_sample(source: Hypergraph, h: Hypergraph, meta: dict, size: int) -> None:
    original = meta["original_vertex_ids"]
    assert h.num_vertices == size == len(set(original)) and original == sorted(original)
    assert meta["seed_vertex"] in original
    assert nx.is_connected(h.clique_expansion())
    assert len(set(h.hyperedges)) == h.num_hyperedges and min(map(len, h.hyperedges)) >= 2
    assert list(h.hyperedges) == sorted(h.hyperedges)
    kept = set(original)
    for edge, sid in zip(h.hyperedges, meta["source_hyperedge_ids"], strict=True):
        assert {original[v] for v in edge} == set(source.hyperedges[sid]) & kept
    # brute force: the instance is exactly the set of restrictions of order >= 2
    induced = {frozenset(set(e) & kept) for e in source.hyperedges if len(set(e) & kept) >= 2}
    assert {frozenset(original[v] for v in edge) for edge in h.hyperedges} == induced


@pytest.mark.parametrize("name", ["contacts-workplace", "walmart-trips", "justice"])
@pytest.mark.parametrize("size", [5, 12, 20])
def test_sampler_on_hypergraphx_sources(name, size):
    source = load_source(name)
    for seed in range(5):
        h, meta = sample_subhypergraph(source, size, np.random.default_rng(seed), name=name)
        _check_sample(source, h, meta, size)
        assert meta["source"] == name


@needs_hypergcn
@pytest.mark.parametrize("name", ["coauthorship-cora", "coauthorship-dblp"])
def test_sampler_on_coauthorship(name):
    source = load_source(name, base=HYPERGCN)
    rng = np.random.default_rng(1)
    for size in (5, 10, 15, 20):
        h, meta = sample_subhypergraph(source, size, rng, name=name)
        _check_sample(source, h, meta, size)


def test_sampler_is_deterministic_per_seed():
    source = load_source("walmart-trips")
    a = [sample_subhypergraph(source, 10, np.random.default_rng(7)) for _ in range(2)]
    assert a[0] == a[1]
    others = {sample_subhypergraph(source, 10, np.random.default_rng(s))[0].to_json() for s in range(10)}
    assert len(others) > 5


def test_sampler_never_seeds_in_a_too_small_component():
    # a triangle component (3 vertices) and a path on vertices 3..12
    source = Hypergraph(13, [[0, 1], [1, 2], [0, 2]] + [[v, v + 1] for v in range(3, 12)])
    for seed in range(20):
        h, meta = sample_subhypergraph(source, 4, np.random.default_rng(seed))
        assert min(meta["original_vertex_ids"]) >= 3
        assert sorted(map(len, h.hyperedges)) == [2, 2, 2]  # a sub-path of 4 vertices
    with pytest.raises(ValueError, match="largest: 10"):
        sample_subhypergraph(source, 11, np.random.default_rng(0))


def test_sampler_restarts_a_stuck_walk():
    # vertex 2 hangs off the hub 0 by one hyperedge among 5000 copies of {0, 1}: walks from 0 or 1 rarely find it
    source = Hypergraph(3, [[0, 1]] * 5000 + [[0, 2]])
    failures, restarts = 0, []
    for seed in range(12):
        try:
            sample_subhypergraph(source, 3, np.random.default_rng(seed), max_tries=1)
        except RuntimeError as exc:
            assert "no connected 3-vertex sample in 1 tries" in str(exc)
            failures += 1
        h, meta = sample_subhypergraph(source, 3, np.random.default_rng(seed), max_tries=100)
        _check_sample(source, h, meta, 3)
        assert h.hyperedges == ((0, 1), (0, 2)) and meta["source_hyperedge_ids"] == [0, 5000]
        assert meta["walk_steps"] <= 1500
        restarts.append(meta["restarts"])
    assert 0 < failures < 12 and max(restarts) >= 1 and min(restarts) == 0


@pytest.mark.parametrize("bad", [1, 0, 2.5, True])
def test_sampler_rejects_bad_target_size(bad):
    with pytest.raises(ValueError, match="target_size"):
        sample_subhypergraph(Hypergraph(3, [[0, 1, 2]]), bad, np.random.default_rng(0))


def test_sample_real_accept_retries():
    calls = []

    def many_hyperedges(h: Hypergraph) -> bool:
        calls.append(h.num_hyperedges)
        return h.num_hyperedges >= 15

    h, meta = sample_real("contacts-workplace", 8, np.random.default_rng(3), accept=many_hyperedges)
    assert h.num_hyperedges >= 15 and meta["samples"] == len(calls) and calls[-1] == h.num_hyperedges
    assert all(c < 15 for c in calls[:-1])
    again, meta2 = sample_real("contacts-workplace", 8, np.random.default_rng(3), accept=many_hyperedges)
    assert (again, meta2) == (h, meta)


def test_sample_real_gives_up_with_a_clear_error():
    def never(h: Hypergraph) -> bool:
        return False

    with pytest.raises(RuntimeError, match=r"none of 7 sampled 6-vertex sub-hypergraphs of 'justice' satisfied never"):
        sample_real("justice", 6, np.random.default_rng(0), accept=never, max_tries=7)


def test_sample_instance_draws_the_size_once_and_retries_build():
    sizes = []

    def build(h: Hypergraph):
        sizes.append(h.num_vertices)
        return ("instance", h) if len(sizes) == 4 else None

    kind, h = sample_instance("walmart-trips", "medium", np.random.default_rng(5), build)
    assert kind == "instance" and len(sizes) == 4 and len(set(sizes)) == 1 and 11 <= sizes[0] <= 15
    sizes.clear()
    assert sample_instance("walmart-trips", "medium", np.random.default_rng(5), build)[1] == h
    with pytest.raises(RuntimeError, match="none of 3 sampled"):
        sample_instance("walmart-trips", "small", np.random.default_rng(5), lambda h: None, max_tries=3)
    with pytest.raises(ValueError, match="unknown scale 'huge'"):
        sample_instance("walmart-trips", "huge", np.random.default_rng(5), build)


def test_default_sources_are_registered():
    assert DEFAULT_SOURCES and set(DEFAULT_SOURCES) <= set(SOURCES)
