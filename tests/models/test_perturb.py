"""Tests of models/perturb.py (DHG-Bench appendix B.4): exact counts, untouched val/test labels, seeding, purity.

Truth is counted independently: sets of (node, hyperedge) pairs, zero entries and columns, differing labels.
"""

import numpy as np
import pytest
import torch

from hypergvl.models import perturb as P
from hypergvl.models import tasks as T
from hypergvl.models.datasets.data import HypergraphData


def tiny(n=40, m=25, f=6, c=3, seed=0, sparse=False):
    """A small random hypergraph with strictly positive features (so a zero is always a mask)."""
    rng = np.random.default_rng(seed)
    hes = [sorted(rng.choice(n, int(rng.integers(2, 6)), replace=False).tolist()) for _ in range(m)]
    x = torch.tensor(rng.uniform(0.5, 2.0, (n, f)), dtype=torch.float32)
    data = HypergraphData(x=x.to_sparse_csr() if sparse else x, y=torch.tensor(np.arange(n) % c), num_nodes=n,
                          hyperedge_index=T.hyperedge_index_from_list(hes), num_hyperedges=m, name="tiny")
    data.validate()
    return data


def pairs(data):
    """The incidences as a set of (node, sorted member tuple of its hyperedge) so renumbering does not matter."""
    members = data.hyperedges()
    return {(v, e) for e, hs in enumerate(members) for v in hs}, members


def pair_set(data):
    return set(map(tuple, data.hyperedge_index.t().tolist()))


def split_of(data, seed=0):
    return T.NodeClassification.make_split(data.num_nodes, T.NodeTaskConfig(), seed)


def snapshot(data):
    return data.replace(**{k: getattr(data, k).clone() for k in ("x", "y", "hyperedge_index")})


@pytest.mark.parametrize("ratio", [0.0, 0.1, 0.3, 0.5, 0.9])
def test_remove_incidence_removes_exactly_the_ratio(ratio):
    data = tiny()
    before = snapshot(data)
    out = P.remove_incidence(data, ratio, seed=1)
    nnz = data.num_incidences
    k = int(np.floor(ratio * nnz + 1e-9))
    assert out.changed == k and out.data.num_incidences == nnz - k
    out.data.validate()
    # every remaining incidence was an incidence (compare member sets: ids are renumbered)
    old_members = data.hyperedges()
    kept = {}
    for e, hs in enumerate(out.data.hyperedges()):
        kept[e] = set(hs)
    assert all(any(s <= set(o) for o in old_members) for s in kept.values())
    assert data.equals(before)


def test_remove_incidence_renumbers_emptied_hyperedges():
    data = tiny()
    out = P.remove_incidence(data, 0.9, seed=0)
    ids = out.data.hyperedge_index[1]
    assert set(ids.tolist()) == set(range(out.data.num_hyperedges))  # every id used, none empty
    assert out.data.num_hyperedges <= data.num_hyperedges


@pytest.mark.parametrize("ratio", [0.0, 0.2, 0.5, 0.9])
def test_add_incidence_adds_exactly_the_ratio_of_new_pairs(ratio):
    data = tiny()
    before = snapshot(data)
    out = P.add_incidence(data, ratio, seed=3)
    k = int(np.floor(ratio * data.num_incidences + 1e-9))
    old, new = pair_set(data), pair_set(out.data)
    assert old <= new  # hyperedge ids are unchanged by addition (no hyperedge is created or emptied)
    assert len(new - old) == k == out.changed
    assert out.data.num_hyperedges == data.num_hyperedges
    assert all(0 <= v < data.num_nodes and 0 <= e < data.num_hyperedges for v, e in new)
    out.data.validate()
    assert data.equals(before)


def test_add_incidence_refuses_more_than_the_free_pairs():
    full = tiny(n=6, m=3).replace(num_nodes=4, x=torch.ones(4, 2), y=torch.tensor([0, 1, 0, 1]), hyperedge_index=T.hyperedge_index_from_list([[0, 1, 2, 3], [0, 1, 2], [1, 2, 3]]))
    # 12 pairs, 10 taken: 0.3 * 10 = 3 new ones do not fit
    with pytest.raises(ValueError, match="cannot add 3 incidences, only 2 node-hyperedge pairs are free"):
        P.add_incidence(full, 0.3, seed=0)
    assert P.add_incidence(full, 0.2, seed=0).data.num_incidences == 12


@pytest.mark.parametrize("lam", [0.1, 0.5, 0.9])
def test_feature_noise_is_lambda_r_eps(lam):
    data = tiny(n=400, f=30)
    before = snapshot(data)
    out = P.feature_noise(data, lam, seed=2)
    x = data.x.numpy()
    r = np.mean([max(row) for row in x.tolist()])  # mean over nodes of each node's maximum feature
    eps = (out.data.x.numpy() - x) / (lam * r)
    assert abs(eps.mean()) < 0.02 and abs(eps.std() - 1) < 0.02  # 12,000 standard normal draws
    # the same eps for every lambda: noise scales linearly
    other = P.feature_noise(data, 0.3, seed=2).data.x.numpy()
    np.testing.assert_allclose((other - x) / (0.3 * r), eps, rtol=1e-4, atol=1e-4)
    assert data.equals(before)
    assert torch.equal(P.feature_noise(data, 0.0, seed=2).data.x, data.x)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("ratio", [0.0, 0.25, 0.5, 0.9])
def test_feature_mask_by_column_zeroes_exactly_the_ratio_of_columns(ratio, sparse):
    data = tiny(f=20, sparse=sparse)
    before = snapshot(data)
    out = P.feature_mask(data, ratio, seed=4)
    assert out.data.x.layout == data.x.layout
    x_new, x_old = out.data.x.to_dense(), data.x.to_dense()
    zero_cols = [j for j in range(20) if (x_new[:, j] == 0).all()]
    assert len(zero_cols) == int(np.floor(ratio * 20 + 1e-9)) == out.changed
    keep = [j for j in range(20) if j not in zero_cols]
    assert torch.equal(x_new[:, keep], x_old[:, keep])
    assert data.equals(before)


@pytest.mark.parametrize("ratio", [0.1, 0.45, 0.9])
def test_feature_mask_by_entry_zeroes_exactly_the_ratio_of_entries(ratio):
    data = tiny(f=10)
    out = P.feature_mask(data, ratio, seed=4, by="entry")
    zeros = int((out.data.x == 0).sum())
    assert zeros == int(np.floor(ratio * data.x.numel() + 1e-9)) == out.changed
    changed = out.data.x != data.x
    assert torch.equal(changed, out.data.x == 0)
    with pytest.raises(ValueError, match="by must be 'column' or 'entry'"):
        P.feature_mask(data, 0.1, seed=0, by="row")


@pytest.mark.parametrize("ratio", [0.0, 0.05, 0.1, 0.2])
def test_label_noise_flips_exactly_the_ratio_of_training_labels_only(ratio):
    data = tiny(n=200, c=4)
    before = snapshot(data)
    split = split_of(data)
    out = P.label_noise(data, ratio, seed=5, train=split["train"])
    diff = torch.nonzero(out.data.y != data.y).view(-1)
    k = int(np.floor(ratio * split["train"].numel() + 1e-9))
    assert diff.numel() == k == out.changed
    assert set(diff.tolist()) <= set(split["train"].tolist())
    for part in ("val", "test"):
        assert torch.equal(out.data.y[split[part]], data.y[split[part]])
    assert out.data.y.min() >= 0 and out.data.y.max() < 4
    assert data.equals(before)


def test_label_noise_flips_to_every_other_class_uniformly():
    data = tiny(n=3000, c=3)
    train = torch.arange(3000)
    out = P.label_noise(data, 1.0, seed=0, train=train)
    assert (out.data.y != data.y).all()
    shift = ((out.data.y - data.y) % 3).numpy()
    assert abs((shift == 1).mean() - 0.5) < 0.03


@pytest.mark.parametrize("ratio", [0.0, 0.2, 0.4, 0.8])
def test_label_sparsity_removes_exactly_the_ratio_of_training_nodes(ratio):
    data = tiny(n=200)
    split = split_of(data)
    out = P.label_sparsity(data, ratio, seed=6, train=split["train"])
    k = int(np.floor(ratio * split["train"].numel() + 1e-9))
    assert out.train.numel() == split["train"].numel() - k == split["train"].numel() - out.changed
    assert set(out.train.tolist()) <= set(split["train"].tolist())
    assert torch.equal(out.data.y, data.y)


@pytest.mark.parametrize("kind", list(P.PERTURBATIONS))
def test_same_seed_same_result_other_seed_other_result(kind):
    data = tiny(n=120)
    train = split_of(data)["train"]
    ratio = 0.2

    def fingerprint(seed):
        out = P.apply(kind, data, ratio, seed, train)
        return (out.data.hyperedge_index.tolist(), out.data.x.to_dense().tolist(), out.data.y.tolist(),
                out.train.tolist())

    assert fingerprint(0) == fingerprint(0)
    assert fingerprint(0) != fingerprint(1)


@pytest.mark.parametrize("kind", ["remove_incidence", "label_noise", "label_sparsity"])
def test_smaller_ratio_changes_a_subset(kind):
    data = tiny(n=120)
    if kind == "remove_incidence":  # disjoint hyperedges: a node's incidence survives iff the node is still in one
        hes = [list(range(i, i + 4)) for i in range(0, 120, 4)]
        data = data.replace(hyperedge_index=T.hyperedge_index_from_list(hes), num_hyperedges=len(hes))
    train = split_of(data)["train"]
    small, large = P.apply(kind, data, 0.1, 7, train), P.apply(kind, data, 0.2, 7, train)
    if kind == "remove_incidence":
        assert set(large.data.hyperedge_index[0].tolist()) <= set(small.data.hyperedge_index[0].tolist())
        assert small.data.num_incidences == 108 and large.data.num_incidences == 96
    elif kind == "label_noise":
        assert set(torch.nonzero(small.data.y != data.y).view(-1).tolist()) <= \
            set(torch.nonzero(large.data.y != data.y).view(-1).tolist())
    else:
        assert set(large.train.tolist()) <= set(small.train.tolist())


@pytest.mark.parametrize("kind, ratio", [("remove_incidence", 1.5), ("label_noise", -0.1), ("feature_noise", "a")])
def test_bad_ratio_is_one_clear_error(kind, ratio):
    with pytest.raises(ValueError, match="ratio must be in"):
        P.apply(kind, tiny(), ratio, 0, torch.arange(10))


def test_label_kinds_need_the_training_indices():
    with pytest.raises(ValueError, match="needs the training indices"):
        P.label_noise(tiny(), 0.1, 0)
    with pytest.raises(ValueError, match="unknown perturbation 'shuffle'"):
        P.get_perturbation("shuffle")
