"""hypergvl.models.datasets on the real upstream files in ../shared/data (skipped when absent).

Truth: the counts measured in ../shared/data/README.md, the DHG-Bench paper's Tables A1 and A3, and the raw
files re-read here with the stock unpickler / a plain line reader (independent of the loaders).
"""
import os
import pickle
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

import hypergvl.models.datasets as md


def _raw_root() -> Path | None:
    env = os.environ.get("HYPERGVL_RAW_ROOT")
    root = Path(env) if env else Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
    return root.resolve() if (root / "HyperGCN").is_dir() else None


ROOT = _raw_root()
pytestmark = pytest.mark.skipif(ROOT is None, reason="real data folder (../shared/data or $HYPERGVL_RAW_ROOT) absent")


def _stock_pickle(relpath: str):
    with open(ROOT / relpath, "rb") as fh, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # old pickles name scipy.sparse.csr
        return pickle.load(fh, encoding="latin1")


# name: (nodes, hyperedges, features or None when the feature file is missing, classes); README "Measured counts"
MEASURED = {
    "cora": (2708, 1579, 1433, 7),
    "cora-ca": (2708, 1072, 1433, 7),
    "pubmed": (19717, 7963, None, 3),
    "dblp-ca": (41302, 22363, None, 6),
    "twitch-gamers": (16812, 2627, 7, 2),
    "actor": (16255, 10164, None, 3),
    "amazon-ratings": (22299, 2090, None, 5),
    "pokec": (14998, 2406, None, 2),
    "german": (1000, 1000, 27, 2),
    "bail": (18876, 18876, 18, 2),
    "credit": (30000, 30000, 13, 2),
}
# the paper's Table A1 "Avg. |e|"
PAPER_AVG_SIZE = {"cora": 3.03, "cora-ca": 4.28, "pubmed": 4.35, "dblp-ca": 4.45, "twitch-gamers": 6.23,
                  "actor": 5.25, "amazon-ratings": 3.10, "pokec": 2.29}


@pytest.mark.parametrize("name", list(MEASURED))
def test_node_level_counts(name):
    nodes, edges, features, classes = MEASURED[name]
    kind = "raw" if features is not None else "none"
    raw = md.load(name, raw_root=ROOT, features=kind, add_self_loops=False)
    assert (raw.num_nodes, raw.num_hyperedges) == (nodes, edges)
    assert raw.num_features == (features or 0)
    assert len(torch.unique(raw.y)) == classes == raw.num_classes
    if name in PAPER_AVG_SIZE:
        assert round(raw.num_incidences / raw.num_hyperedges, 2) == PAPER_AVG_SIZE[name]
    # node classification: a singleton for every node not already alone in a hyperedge (DHG-Bench
    # Add_Self_Loops); Actor has 156 raw hyperedges like [4600, 4600] that become singletons of 143 nodes
    looped = md.load(name, raw_root=ROOT, features=kind)
    alone = {e[0] for e in raw.hyperedges() if len(e) == 1}
    assert len(alone) == (143 if name == "actor" else 0)
    assert looped.num_hyperedges == edges + nodes - len(alone)
    singletons = [e[0] for e in raw.hyperedges() if len(e) == 1]
    assert sorted(e[0] for e in looped.hyperedges() if len(e) == 1) == sorted(
        singletons + [v for v in range(nodes) if v not in alone])


def test_cora_cocitation_matches_the_pickle_and_dhgbench_4287():
    data = md.load("cora", raw_root=ROOT)
    assert data.num_hyperedges == 1579 + 2708 == 4287
    raw = _stock_pickle("HyperGCN/data/cocitation/cora/hypergraph.pickle")
    expected = [sorted(int(v) for v in members) for members in raw.values()]
    assert data.hyperedges()[:1579] == expected
    assert data.hyperedges()[1579:] == [[v] for v in range(2708)]
    features = _stock_pickle("HyperGCN/data/cocitation/cora/features.pickle")
    assert data.x.layout == torch.sparse_csr and data.x.dtype == torch.float32
    np.testing.assert_array_equal(data.x.to_dense().numpy(), features.toarray())
    assert data.y.tolist() == _stock_pickle("HyperGCN/data/cocitation/cora/labels.pickle")
    uncovered = 2708 - len({v for members in expected for v in members})
    assert 1100 < uncovered < 1300  # README: "about 1,200 of Cora's 2,708" are in no hyperedge


@pytest.mark.parametrize("name", ["pubmed", "dblp-ca", "actor", "amazon-ratings", "pokec"])
def test_missing_features_are_reported_not_invented(name):
    with pytest.raises(FileNotFoundError) as info:
        md.load(name, raw_root=ROOT)
    spec = md.get_spec(name)
    assert str(ROOT / spec.source.local_dir / spec.feature_file) in str(info.value)
    data = md.load(name, raw_root=ROOT, features="onehot-degree", add_self_loops=False)
    degrees = data.node_degrees()
    vocab = torch.unique(degrees)
    assert data.num_features == vocab.numel()
    dense_rows = data.x.to_dense()
    assert torch.equal(dense_rows.argmax(1), torch.searchsorted(vocab, degrees)) and torch.all(dense_rows.sum(1) == 1)


def test_citeseer_is_registered_but_absent():
    with pytest.raises(FileNotFoundError, match="HyperGCN/data/cocitation/citeseer/labels.pickle"):
        md.load("citeseer", raw_root=ROOT)


@pytest.mark.parametrize("name, column", [("german", 0), ("bail", 0), ("credit", 1)])
def test_fairness_sensitive_attribute_stays_in_features(name, column):
    data = md.load(name, raw_root=ROOT)
    features = _stock_pickle(f"HyperGCL/data/fair_data/{name}/features.pickle")
    np.testing.assert_array_equal(data.x.numpy(), features)
    assert data.sensitive.tolist() == features[:, column].astype(int).tolist()
    assert set(data.sensitive.tolist()) == {0, 1}
    assert data.y.tolist() == _stock_pickle(f"HyperGCL/data/fair_data/{name}/labels.pickle").tolist()


def _read_hic(relpath: str):
    """An independent reader: returns [(num_vertices, [hyperedge, ...], label)]."""
    lines = iter((ROOT / relpath).read_text().splitlines())
    graphs = []
    for _ in range(int(next(lines))):
        nv, ne, label = (int(t) for t in next(lines).split()[:3])
        next(lines)
        graphs.append((nv, [[int(t) for t in next(lines).split()] for _ in range(ne)], label))
    return graphs


# name: (file, graphs, classes, paper Table A3 avg |V|, avg |E|, avg |e|)
GRAPH_SETS = {
    "rhg-10": ("RHG/RHG_10.txt", 2000, 10, 31.3, 29.8, 5.2),
    "rhg-3": ("RHG/RHG_3.txt", 1500, 3, 35.5, 17.9, 6.9),
    "imdb-dir-form": ("IMDB/IMDB_dir_form.txt", 1869, 3, 15.7, 39.2, 3.7),
    "imdb-dir-genre": ("IMDB/IMDB_dir_genre.txt", 3393, 3, 17.3, 36.4, 3.8),
    "steam-player": ("STEAM/stream_player.txt", 2048, 2, 13.8, 46.4, 4.5),
    "twitter-friend": ("TWITTER/twitter_friend.txt", 1310, 2, 21.6, 84.3, 4.3),
}


@pytest.mark.parametrize("name", list(GRAPH_SETS))
def test_graph_level_counts_degree_features_and_paper_stats(name):
    relpath, graphs, classes, avg_v, avg_e, avg_size = GRAPH_SETS[name]
    ds = md.load(name, raw_root=ROOT)
    assert isinstance(ds, md.HypergraphGraphDataset)
    assert len(ds) == graphs and ds.num_classes == classes
    reference = _read_hic(f"HIC/data/hypergraph/{relpath}")
    degrees = [Counter(v for e in edges for v in e) for _, edges, _ in reference]
    vocab = sorted({d[v] for (nv, _, _), d in zip(reference, degrees) for v in range(nv)})
    assert ds.num_features == len(vocab)
    labels = sorted({label for _, _, label in reference})
    rng = np.random.default_rng(0)
    for i in rng.choice(len(ds), 50, replace=False):  # a sample of graphs against the reference reader
        nv, edges, label = reference[i]
        g = ds[int(i)]
        assert g.num_nodes == nv and g.hyperedges() == [sorted(e) for e in edges]  # repeats kept, as upstream
        assert g.y.tolist() == [labels.index(label)]
        assert g.x.argmax(1).tolist() == [vocab.index(degrees[i][v]) for v in range(nv)]
    # the paper's Table A3 counts a repeated hyperedge once (DHG merges them)
    distinct = [{tuple(sorted(e)) for e in edges} for _, edges, _ in reference]
    assert round(np.mean([nv for nv, _, _ in reference]), 1) == avg_v
    assert round(np.mean([len(d) for d in distinct]), 1) == avg_e
    assert round(np.mean([np.mean([len(e) for e in d]) for d in distinct]), 1) == avg_size
    assert round(np.mean([g.num_nodes for g in ds]), 1) == avg_v


def test_file_url_reads_the_same_bytes_as_the_folder():
    assert md.load("german", raw_root=ROOT.as_uri()).equals(md.load("german", raw_root=ROOT))
