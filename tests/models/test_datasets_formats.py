"""hypergvl.models.datasets on small files generated in each upstream format (no shared data needed).

The expected values are written out by hand from the generated files; the registry's real loaders read them
through a raw root laid out like ../shared/data.
"""
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import torch

import hypergvl.models.datasets as md
from hypergvl.models.datasets import safe_pickle


def _write(root: Path, relpath: str, data: bytes | str) -> Path:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


# ----------------------------------------------------------------------------------------- HyperGCN pickles
@pytest.fixture
def hypergcn_root(tmp_path):
    """A 5-node co-citation set: e0 = {0, 1, 2}, e1 = {1, 3} (node 3 listed twice), e2 = {4, 0}."""
    folder = "HyperGCN/data/cocitation/cora"
    hypergraph = {np.int32(7): {0, 1, 2}, np.int32(2): [3, 1, 3], np.int32(9): (4, 0)}
    features = sp.csr_matrix(np.array([[1, 0, 0], [0, 2, 0], [0, 0, 0], [1, 1, 0], [0, 0, 3]], np.float32))
    _write(tmp_path, f"{folder}/hypergraph.pickle", pickle.dumps(hypergraph, protocol=4))
    _write(tmp_path, f"{folder}/features.pickle", pickle.dumps(features, protocol=4))
    _write(tmp_path, f"{folder}/labels.pickle", pickle.dumps([0, 2, 1, 0, 1], protocol=2))
    return tmp_path


def test_hypergcn_pickles_structure_features_and_self_loops(hypergcn_root):
    raw = md.load("cora", raw_root=hypergcn_root, add_self_loops=False)
    assert raw.hyperedges() == [[0, 1, 2], [1, 3], [0, 4]]  # dict order kept, repeat of node 3 dropped
    assert (raw.num_nodes, raw.num_hyperedges, raw.num_incidences) == (5, 3, 7)
    assert raw.x.layout == torch.sparse_csr
    assert torch.equal(raw.x.to_dense(), torch.tensor([[1., 0, 0], [0, 2, 0], [0, 0, 0], [1, 1, 0], [0, 0, 3]]))
    assert raw.y.tolist() == [0, 2, 1, 0, 1] and raw.y.dtype == torch.long
    looped = md.load("cora", raw_root=hypergcn_root)  # node-level default: DHG-Bench self-loops
    assert looped.num_hyperedges == 3 + 5
    assert looped.hyperedges()[3:] == [[0], [1], [2], [3], [4]]


def test_self_loops_skip_nodes_that_already_have_one():
    data = md.HypergraphData(x=torch.zeros(3, 0), y=torch.zeros(3, dtype=torch.long),
                             hyperedge_index=torch.tensor([[0, 1, 1], [0, 0, 1]]), num_hyperedges=2, num_nodes=3)
    looped = md.add_self_loops(data)
    assert looped.hyperedges() == [[0, 1], [1], [0], [2]]  # node 1 already alone in e1 (DHG-Bench rule)


def test_derived_features_only_on_request(hypergcn_root):
    # degrees without self-loops: node 0 in e0, e2 -> 2; 1 -> 2; 2 -> 1; 3 -> 1; 4 -> 1; vocabulary [1, 2]
    onehot = md.load("cora", raw_root=hypergcn_root, features="onehot-degree")
    assert torch.equal(onehot.x.to_dense(), torch.tensor([[0., 1], [0, 1], [1, 0], [1, 0], [1, 0]]))
    assert torch.equal(md.load("cora", raw_root=hypergcn_root, features="identity").x.to_dense(), torch.eye(5))
    assert md.load("cora", raw_root=hypergcn_root, features="none").x.shape == (5, 0)
    with pytest.raises(ValueError, match="features must be one of"):
        md.load("cora", raw_root=hypergcn_root, features="random")


def test_missing_feature_file_names_it_and_suggests_structure_only(hypergcn_root):
    (hypergcn_root / "HyperGCN/data/cocitation/cora/features.pickle").unlink()
    with pytest.raises(FileNotFoundError) as info:
        md.load("cora", raw_root=hypergcn_root)
    message = str(info.value)
    assert str(hypergcn_root / "HyperGCN/data/cocitation/cora/features.pickle") in message
    assert "features='none'" in message
    assert md.load("cora", raw_root=hypergcn_root, features="none").num_hyperedges == 8


def test_env_var_and_file_url_use_the_same_path(hypergcn_root, monkeypatch):
    direct = md.load("cora", raw_root=hypergcn_root)
    monkeypatch.setenv("HYPERGVL_RAW_ROOT", str(hypergcn_root))
    assert md.load("cora").equals(direct)
    monkeypatch.delenv("HYPERGVL_RAW_ROOT")
    assert md.load("cora", raw_root=hypergcn_root.as_uri()).equals(direct)  # urllib path for URLs
    with pytest.raises(FileNotFoundError, match="citeseer/labels.pickle"):
        md.load("citeseer", raw_root=hypergcn_root.as_uri())


def test_source_without_url_requires_a_raw_root(monkeypatch):
    monkeypatch.delenv("HYPERGVL_RAW_ROOT", raising=False)
    with pytest.raises(FileNotFoundError, match="PCL/src/data/trivago/trivago_Y.pt"):
        md.load("trivago")


# ----------------------------------------------------------------------------------------- restricted unpickler
class _Evil:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_unpickler_refuses_os_system_and_runs_nothing(tmp_path):
    marker = tmp_path / "pwned"
    payload = pickle.dumps({"e0": [0, 1], "trap": _Evil(marker)})
    pickle.loads(payload)  # the stock unpickler runs the command: the payload is live
    assert marker.exists()
    marker.unlink()
    with pytest.raises(pickle.UnpicklingError, match=r"refused to unpickle global '?(posix|os|nt)\.system"):
        safe_pickle.loads(payload)
    assert not marker.exists()
    # through a loader: the error names the file and nothing runs
    _write(tmp_path, "HyperGCN/data/cocitation/cora/labels.pickle", payload)
    with pytest.raises(pickle.UnpicklingError, match="labels.pickle"):
        md.load("cora", raw_root=tmp_path)
    assert not marker.exists()


@pytest.mark.parametrize("obj", [
    {np.int32(1): {1, 2}, "k": (b"x", 1.5, [np.int64(3)])},
    np.arange(6, dtype=np.float32).reshape(2, 3),
    np.array([0, 1], dtype=object),
    sp.csr_matrix(np.eye(3, dtype=np.float32)),
    sp.coo_array(np.eye(2)),
])
@pytest.mark.parametrize("protocol", [2, 3, 4])
def test_unpickler_admits_containers_arrays_and_sparse(obj, protocol):
    out = safe_pickle.loads(pickle.dumps(obj, protocol=protocol))
    if sp.issparse(obj):
        assert type(out) is type(obj) and (out != obj).nnz == 0
    elif isinstance(obj, np.ndarray):
        np.testing.assert_array_equal(out, obj)
        assert out.dtype == obj.dtype
    else:
        assert out == obj


def test_unpickler_refuses_other_numpy_globals():
    with pytest.raises(pickle.UnpicklingError, match="numpy.load"):
        safe_pickle.loads(b"cnumpy\nload\n.")


# ----------------------------------------------------------------------------------------- AllSet LE (NTU2012)
def test_allset_le_format(tmp_path):
    # 3 nodes (ids 10, 11, 12) and 2 hyperedges (ids 20, 21); content rows hold every id, as AllSet's files do
    content = "\n".join([
        "10 0.5 1.0 4", "11 0.0 2.0 0", "12 1.5 0.0 4",
        "20 0 0 0", "21 0 0 0",
    ])
    edges = "10 20\n11 20\n12 20\n11 21\n12 21\n12 21\n"  # last pair repeated
    folder = "AllSet/data/AllSet_all_raw_data/NTU2012"
    _write(tmp_path, f"{folder}/NTU2012.content", content)
    _write(tmp_path, f"{folder}/NTU2012.edges", edges)
    data = md.load("ntu2012", raw_root=tmp_path, add_self_loops=False)
    assert data.hyperedges() == [[0, 1, 2], [1, 2]]
    assert torch.equal(data.x, torch.tensor([[0.5, 1.0], [0.0, 2.0], [1.5, 0.0]]))
    assert data.y.tolist() == [4, 0, 4]
    _write(tmp_path, f"{folder}/NTU2012.edges", "10 20\n11 99\n")
    with pytest.raises(ValueError, match="id 99 is not in NTU2012.content"):
        md.load("ntu2012", raw_root=tmp_path)


# ----------------------------------------------------------------------------------------- Cornell (Walmart)
@pytest.fixture
def walmart_root(tmp_path):
    n = 300
    labels = [1 + i % 3 for i in range(n)]  # 1-based labels 1..3
    folder = "AllSet/data/AllSet_all_raw_data/walmart-trips"
    _write(tmp_path, f"{folder}/node-labels-walmart-trips.txt", "\n".join(map(str, labels)) + "\n")
    _write(tmp_path, f"{folder}/hyperedges-walmart-trips.txt", "1,2,3\n3,300\n2,2,5\n")  # 1-based node ids
    return tmp_path


def test_cornell_walmart_one_based_ids_and_seeded_noise(walmart_root):
    data = md.load("walmart", raw_root=walmart_root, add_self_loops=False)
    assert data.hyperedges() == [[0, 1, 2], [2, 299], [1, 4]]
    assert data.y[:4].tolist() == [0, 1, 2, 0]
    assert data.x.shape == (300, 100)
    noise = data.x - torch.nn.functional.one_hot(data.y, 100).float()
    assert abs(float(noise.mean())) < 0.01 and abs(float(noise.std()) - 0.6) < 0.01  # sigma = 0.6 (appendix A.1)
    again = md.load("walmart", raw_root=walmart_root, add_self_loops=False)
    assert torch.equal(again.x, data.x)
    other = md.load("walmart", raw_root=walmart_root, add_self_loops=False, seed=1)
    assert not torch.equal(other.x, data.x)
    quiet = md.load("walmart", raw_root=walmart_root, feature_noise=0.0, feature_dim=3)
    assert torch.equal(quiet.x, torch.nn.functional.one_hot(quiet.y, 3).float())
    with pytest.raises(ValueError, match="accepted options: feature_noise, feature_dim, seed"):
        md.load("walmart", raw_root=walmart_root, noise=0.1)
    with pytest.raises(ValueError, match="accepted options: none"):
        md.load("cora", raw_root=walmart_root, seed=1)


def test_cornell_out_of_range_node(walmart_root):
    _write(walmart_root, "AllSet/data/AllSet_all_raw_data/walmart-trips/hyperedges-walmart-trips.txt", "1,301\n")
    with pytest.raises(ValueError, match="node id 300 out of range for 300 nodes"):
        md.load("walmart", raw_root=walmart_root)


# ----------------------------------------------------------------------------------------- Yelp CSVs
def test_yelp_csv_format(tmp_path):
    folder = "AllSet/data/AllSet_all_raw_data/yelp"
    _write(tmp_path, f"{folder}/yelp_restaurant_latlong.csv", "latitude,longitude\n1.5,2.5\n3.0,4.0\n5.0,6.0\n7.0,8.0\n")
    _write(tmp_path, f"{folder}/yelp_restaurant_locations.csv",
           "zipcode,city_int,state_int\n1,1,2\n2,3,1\n3,2,2\n4,1,1\n")
    _write(tmp_path, f"{folder}/yelp_restaurant_name.csv",
           "business_name\nPizza Palace\nPizza Hut\nTaco Palace\nThe Grill\n")
    _write(tmp_path, f"{folder}/yelp_restaurant_business_stars.csv", "business_stars\n3\n5\n3\n9\n")
    _write(tmp_path, f"{folder}/yelp_restaurant_incidence_H.csv", "he,node,val\n1,1,1\n1,2,1\n2,2,1\n2,4,1\n2,4,1\n")
    data = md.load("yelp", raw_root=tmp_path, add_self_loops=False)
    assert data.hyperedges() == [[0, 1], [1, 3]]
    assert data.y.tolist() == [0, 2, 0, 6]  # stars shifted to start at 0
    assert data.x.layout == torch.sparse_csr
    # columns: lat, long | state 1, 2 | city 1, 2, 3 | words (alphabetical, 'the' is a stop word):
    # grill, hut, palace, pizza, taco
    expected = torch.tensor([
        [1.5, 2.5, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0],
        [3.0, 4.0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0],
        [5.0, 6.0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1],
        [7.0, 8.0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0],
    ])
    assert torch.equal(data.x.to_dense(), expected)


# ----------------------------------------------------------------------------------------- Trivago tensors
def test_trivago_tensor_format(tmp_path):
    folder = tmp_path / "PCL/src/data/trivago"
    folder.mkdir(parents=True)
    torch.save(torch.arange(8, dtype=torch.float32).reshape(4, 2), folder / "trivago_X_vec.pt")
    torch.save(torch.tensor([3, 0, 1, 3]), folder / "trivago_Y.pt")
    torch.save(torch.tensor([[0, 1, 2, 0, 3], [0, 0, 0, 1, 1]]), folder / "trivago_E.pt")
    data = md.load("trivago", raw_root=tmp_path, add_self_loops=False)
    assert data.hyperedges() == [[0, 1, 2], [0, 3]]
    assert torch.equal(data.x, torch.arange(8, dtype=torch.float32).reshape(4, 2))
    assert data.y.tolist() == [3, 0, 1, 3]
    # torch.load(weights_only=True) is the restricted unpickler here: arbitrary globals are refused
    with open(folder / "trivago_Y.pt", "wb") as fh:
        torch.save({"y": _Evil(tmp_path / "pwned")}, fh, pickle_protocol=2)
    with pytest.raises(pickle.UnpicklingError, match="trivago_Y.pt"):
        md.load("trivago", raw_root=tmp_path)
    assert not (tmp_path / "pwned").exists()


# ----------------------------------------------------------------------------------------- HIC text
HIC_TEXT = """3
4 2 7
0 0 0 0
0 1 2
2 3
3 3 5
1 1 2
0 1
1 2
0 2
2 1 7
0/1 3
0 1
"""


def test_hic_text_format_degree_features(tmp_path):
    _write(tmp_path, "HIC/data/hypergraph/RHG/RHG_3.txt", HIC_TEXT)
    ds = md.load("rhg-3", raw_root=tmp_path)
    assert isinstance(ds, md.HypergraphGraphDataset) and len(ds) == 3
    # degrees: g0 (1, 1, 2, 1); g1 (2, 2, 2); g2 (1, 1) -> vocabulary [1, 2]; labels {5, 7} -> 5:0, 7:1
    assert ds.num_features == 2 and ds.num_classes == 2
    assert ds.y.tolist() == [1, 0, 1]
    assert torch.equal(ds[0].x, torch.tensor([[1., 0], [1, 0], [0, 1], [1, 0]]))
    assert torch.equal(ds[1].x, torch.tensor([[0., 1], [0, 1], [0, 1]]))
    assert ds[1].hyperedges() == [[0, 1], [1, 2], [0, 2]]
    assert ds[2].num_hyperedges == 1 and ds[0].y.shape == (1,)
    sub = ds[torch.tensor([2, 0])]
    assert [g.num_nodes for g in sub] == [2, 4] and sub.num_features == 2
    with pytest.raises(ValueError, match="only features='raw' applies"):
        md.load("rhg-3", raw_root=tmp_path, features="none")


@pytest.mark.parametrize("text, match", [
    ("2\n4 1 0\n0 0 0 0\n0 1\n", "unexpected end of file"),
    ("1\n4 1 zero\n0 0 0 0\n0 1\n", r"line 2: expected 'num_vertices num_hyperedges label'"),
    ("1\n3 1 0\n0 0\n0 1\n", r"line 3: graph 0: expected 3 vertex labels"),
    ("1\n3 1 0\n0 0 0\n0 3\n", r"line 4: graph 0: hyperedge \[0, 3\] must list vertex ids in \[0, 3\)"),
    ("1\n3 1 0\n0 0 0\n0 1\n2 2\n", "line 5: unexpected content after 1 graphs"),
    ("x\n", "line 1: expected the number of graphs"),
])
def test_hic_malformed_text_is_a_clear_error(tmp_path, text, match):
    _write(tmp_path, "HIC/data/hypergraph/RHG/RHG_3.txt", text)
    with pytest.raises(ValueError, match=match):
        md.load("rhg-3", raw_root=tmp_path)


# ----------------------------------------------------------------------------------------- registry, data object
def test_registry_lists_the_paper_datasets_and_rejects_bad_names():
    paper = {"Cora", "Pubmed", "Cora-CA", "DBLP-CA", "NTU2012", "ModelNet40", "Walmart", "Trivago", "Actor",
             "Amazon-ratings", "Twitch-gamers", "Pokec", "Yelp", "German", "Bail", "Credit", "RHG-10", "RHG-3",
             "IMDB-Dir-Form", "IMDB-Dir-Genre", "Steam-Player", "Twitter-Friend"}
    names = {spec.display_name for spec in md.DATASETS.values()}
    assert names == paper | {"Citeseer"} and len(paper) == 22
    edge = {s.display_name for s in md.DATASETS.values() if "hyperedge_prediction" in s.tasks}
    assert edge == {"Cora", "Pubmed", "Cora-CA", "DBLP-CA", "Actor", "Pokec"}  # sec. 3.1
    assert sum(s.level == "graph" for s in md.DATASETS.values()) == 6
    assert md.get_spec("DBLP-CA") is md.DATASETS["dblp-ca"]
    with pytest.raises(KeyError, match="unknown dataset 'corra'; choose one of cora, citeseer"):
        md.load("corra")
    with pytest.raises(ValueError, match="registered twice"):
        md.register_dataset("cora", **{k: getattr(md.DATASETS["cora"], k) for k in (
            "display_name", "level", "tasks", "source", "files", "feature_file", "paper_stats", "description",
            "license", "license_note", "citation")})(lambda reader, **kw: None)


def _toy(**changes):
    fields = dict(x=torch.zeros(3, 2), y=torch.tensor([0, 1, 0]), hyperedge_index=torch.tensor([[0, 1, 2], [0, 0, 1]]),
                  num_hyperedges=2, num_nodes=3)
    fields.update(changes)
    return md.HypergraphData(**fields)


@pytest.mark.parametrize("changes, match", [
    (dict(x=torch.zeros(4, 2)), r"HypergraphData.x: shape must be \[num_nodes=3, F\], got \[4, 2\]"),
    (dict(x=torch.zeros(3, 2, dtype=torch.float64)), "HypergraphData.x: dtype must be float32"),
    (dict(y=torch.tensor([0.0, 1, 0])), "HypergraphData.y: must be a long tensor"),
    (dict(y=torch.tensor([0, -1, 0])), "HypergraphData.y: labels must be >= 0, got min -1"),
    (dict(hyperedge_index=torch.tensor([[0, 3], [0, 1]])), r"row 0 \(node ids\) must lie in \[0, 3\), found node 3"),
    (dict(hyperedge_index=torch.tensor([[0, 1], [0, 2]])), "found hyperedge 2"),
    (dict(hyperedge_index=torch.tensor([[0, 1], [0, 0]])), "hyperedge 1 is empty"),
    (dict(hyperedge_index=torch.tensor([[0, 0, 1], [0, 0, 1]])), "incidence is repeated"),
    (dict(sensitive=torch.tensor([0, 1])), r"HypergraphData.sensitive: must be a long tensor of shape \[3\]"),
    (dict(train_mask=torch.tensor([1, 0, 1])), "HypergraphData.train_mask: must be a bool tensor"),
    (dict(num_hyperedges=-1), "HypergraphData.num_hyperedges: must be a non-negative int, got -1"),
])
def test_validate_names_the_bad_attribute(changes, match):
    _toy().validate()
    with pytest.raises(ValueError, match=match):
        _toy(**changes).validate()


def test_to_pyg_batches_hyperedge_ids_by_num_hyperedges():
    from torch_geometric.data import Batch

    a = _toy()
    b = _toy(hyperedge_index=torch.tensor([[0, 1, 2], [0, 1, 2]]), num_hyperedges=3)
    batch = Batch.from_data_list([a.to_pyg(), b.to_pyg()])
    # b's nodes shift by a.num_nodes = 3, its hyperedges by a.num_hyperedges = 2
    assert batch.hyperedge_index.tolist() == [[0, 1, 2, 3, 4, 5], [0, 0, 1, 2, 3, 4]]
    assert batch.num_nodes == 6 and batch.x.shape == (6, 2)


# ----------------------------------------------------------------------------------------- splits
def test_random_node_split_is_random_50_25_25_and_seeded():
    s = md.random_node_split(2708, seed=0)
    assert (s.train.numel(), s.val.numel(), s.test.numel()) == (1354, 677, 677)
    everything = torch.cat([s.train, s.val, s.test])
    assert torch.equal(torch.sort(everything).values, torch.arange(2708))
    again = md.random_node_split(2708, seed=0)
    assert all(torch.equal(getattr(s, part), getattr(again, part)) for part in ("train", "val", "test"))
    assert not torch.equal(s.train, md.random_node_split(2708, seed=1).train)
    train_mask, val_mask, test_mask = s.masks()
    assert int(train_mask.sum()) == 1354 and not (train_mask & val_mask).any() and not (val_mask & test_mask).any()
    # same permutation as the reference's int() cuts of one permutation
    perm = np.random.default_rng(5).permutation(10)
    s5 = md.random_split(10, 5, 0.5, 0.25)
    assert s5.train.tolist() == sorted(perm[:5]) and s5.val.tolist() == sorted(perm[5:7])


def test_random_graph_split_80_10_10_and_bad_fractions():
    s = md.random_graph_split(1869, seed=3, train=0.8, val=0.1)
    assert (s.train.numel(), s.val.numel(), s.test.numel()) == (1495, 186, 188)
    with pytest.raises(ValueError, match="train \\+ val <= 1"):
        md.random_graph_split(10, seed=0, train=0.9, val=0.2)
    gen = np.random.default_rng(0)
    assert md.random_node_split(10, gen).train.numel() == 5


# ----------------------------------------------------------------------------------------- CLI errors
def test_cli_unknown_name_and_missing_files_exit_nonzero(tmp_path, capsys):
    from hypergvl.models.datasets.__main__ import main

    assert main(["build", "corra", "--out", str(tmp_path / "o")]) == 2  # a usage error
    assert "unknown dataset 'corra'; did you mean cora" in capsys.readouterr().err
    assert main(["build", "cora", "--out", str(tmp_path / "o"), "--raw-root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"lacks Cora's raw file {tmp_path}/HyperGCN/data/cocitation/cora/" in err and "--raw-root" in err
    assert not (tmp_path / "o").exists()
    assert main(["build", "walmart", "--out", str(tmp_path / "o"), "--option", "sigma=1"]) == 2
    assert "accepted options: feature_noise, feature_dim, seed" in capsys.readouterr().err
    assert main(["list"]) == 0
    from hypergvl.models.datasets import DATASETS

    assert len(capsys.readouterr().out.splitlines()) == len(DATASETS)  # a line per registered dataset
