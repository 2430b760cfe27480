"""benchmarks/own_data.py: the shipped table is the render of the shipped JSON, the folder it trains on is rebuilt
the same way, and the 5-NN baseline's numbers are recomputed from scratch (scikit-learn, no training)."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import own_data  # noqa: E402

import hypergvl.models.datasets as md  # noqa: E402

DOC = json.loads(own_data.JSON.read_text())


def test_the_table_is_the_render_of_the_json():
    assert own_data.TABLE.read_text() == own_data.render(DOC)


def test_every_row_has_five_clean_seeds_under_both_protocols():
    assert sorted(DOC["rows"]) == sorted(own_data.ra.MODELS)
    for model, row in DOC["rows"].items():
        for protocol in own_data.PROTOCOLS:
            runs = row[protocol]
            assert sorted(r["seed"] for r in runs) == list(range(5)), (model, protocol)
            assert all(len(r["commit"]) == 40 for r in runs), (model, protocol)  # no "+dirty" point
            assert all(0.0 <= r["accuracy"] <= 100.0 for r in runs)
    assert DOC["configs"]["HGNN"]["allset"]["protocol"]["name"] == "allset"
    assert "protocol" not in DOC["configs"]["HGNN"]["dhgbench"]


def test_the_folder_is_rebuilt_and_loads_as_a_users_hypergraph(tmp_path):
    folder = own_data.build_folder(tmp_path / "digits")
    assert own_data.folder_digest(folder) == DOC["sha256"]  # the very files the shipped rows trained on
    raw = md.load(str(folder), add_self_loops=False)
    assert (raw.num_nodes, raw.num_hyperedges, raw.num_features, raw.num_classes) == (1797, 1797, 64, 10)
    edges = raw.hyperedges()
    assert all(i in e and len(e) >= own_data.NEIGHBOURS + 1 for i, e in enumerate(edges))
    # a node's hyperedge is itself and its 5 nearest neighbours, checked by brute force for a few nodes
    x = np.load(folder / "features.npy")
    for i in (0, 500, 1796):
        d = ((x - x[i]) ** 2).sum(1)
        assert d[edges[i]].max() <= np.sort(d)[own_data.NEIGHBOURS] + 1e-6
    assert md.load(str(folder)).num_hyperedges == 2 * 1797  # DHG-Bench's singleton for every node not alone in one
    assert DOC["data"].startswith("1797 nodes")


@pytest.mark.parametrize("protocol", list(own_data.PROTOCOLS))
def test_the_knn_baseline_is_recomputed(tmp_path, protocol):
    folder = own_data.build_folder(tmp_path / "digits")
    assert own_data.knn_accuracy(folder, protocol, 0) == pytest.approx(DOC["knn"][protocol][0], abs=1e-9)
