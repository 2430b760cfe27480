"""Tests of models/tasks.py: splits, negative sampling, no leakage, heads and metrics (DHG-Bench secs. 2-3, B)."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
import torch
from sklearn.metrics import f1_score
from torch import nn
from torch.nn import functional as F

from hypergvl.models import tasks as T
from hypergvl.models.datasets.data import HypergraphData, HypergraphGraphDataset


# ----------------------------------------------------------------------------------------------- fixtures

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/models/conftest.py


def planted_hypergraph(n=60, k=3, m=50, seed=0, sizes=(2, 3, 4, 5), extra=()):
    """Nodes in ``k`` classes, hyperedges inside one class, features = noisy one-hot class."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    hes = set()
    while len(hes) < m:
        members = np.flatnonzero(y == rng.integers(k))
        hes.add(tuple(sorted(rng.choice(members, int(rng.choice(sizes)), replace=False).tolist())))
    hes = sorted(hes) + list(extra)
    x = np.eye(k)[y] + 0.5 * rng.standard_normal((n, k))
    return HypergraphData(x=torch.tensor(x, dtype=torch.float32), y=torch.tensor(y), num_nodes=n,
                          hyperedge_index=T.hyperedge_index_from_list(hes), num_hyperedges=len(hes), name="planted")


class MeanEncoder(nn.Module):
    """A tiny encoder independent of hypergvl.models.nn: linear map, then mean over the node's hyperedges."""

    def __init__(self, in_channels, hidden_channels, out_channels, num_layers=2, dropout=0.5):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels)
        self.calls = []

    def forward(self, x, hyperedge_index, num_hyperedges=None):
        self.calls.append(hyperedge_index.detach().clone())
        h = self.lin(x)
        v, e = hyperedge_index
        m = int(num_hyperedges) if num_hyperedges is not None else int(e.max()) + 1
        edge = torch.zeros(m, h.size(1)).index_add_(0, e, h[v]) / torch.bincount(e, minlength=m).clamp(min=1)[:, None]
        out = torch.zeros_like(h).index_add_(0, v, edge[e])
        return h + out / torch.bincount(v, minlength=h.size(0)).clamp(min=1)[:, None]


def ce_graph(edges):
    """Clique expansion built independently with networkx."""
    g = nx.Graph()
    for he in edges:
        g.add_nodes_from(he)
        g.add_edges_from(itertools.combinations(he, 2))
    g.remove_nodes_from([v for v in list(g) if g.degree(v) == 0])
    return g


# ----------------------------------------------------------------------------------------------- registry

def test_registry_lists_choices_and_rejects_duplicates():
    assert set(T.TASKS) == {"node", "hyperedge", "graph"}
    with pytest.raises(ValueError, match="choose one of graph, hyperedge, node"):
        T.get_task("edge")
    with pytest.raises(ValueError, match="registered twice"):
        T.register_task("node")(type("X", (), {}))


# ----------------------------------------------------------------------------------------------- splits

@pytest.mark.parametrize("n,train,val", [(101, 0.5, 0.25), (1483, 0.6, 0.2), (1310, 0.8, 0.1)])
def test_split_reproducible_disjoint_and_sized(n, train, val):
    a = T.split_indices(n, 3, train, val)
    b = T.split_indices(n, 3, train, val)
    c = T.split_indices(n, 4, train, val)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["train"], c["train"])
    parts = [set(a[k].tolist()) for k in ("train", "val", "test")]
    assert sum(map(len, parts)) == n and set.union(*parts) == set(range(n))
    assert abs(len(parts[0]) - n * train) <= 1 and abs(len(parts[1]) - n * val) <= 1


def test_node_task_split_follows_seed():
    data = planted_hypergraph()
    cfg = T.NodeTaskConfig()
    t0, t0b, t1 = (T.NodeClassification(data, cfg, s, hidden=8) for s in (0, 0, 1))
    assert all(torch.equal(t0.split[k], t0b.split[k]) for k in t0.split)
    assert not torch.equal(t0.split["test"], t1.split["test"])
    assert len(t0.split["train"]) == 30 and len(t0.split["val"]) == 15 and len(t0.split["test"]) == 15


def test_node_task_self_loops_decide_the_load_and_refuse_data_that_contradicts_them():
    """``task.self_loops`` (DHG-Bench adds a singleton per node; AllSet gives CEGCN, CEGAT and HyperGCN none) is
    what the trainer loads with, and a task told there are none refuses data with a singleton for every node."""
    from hypergvl.models.datasets import add_self_loops

    assert T.NodeClassification.load_options(T.NodeTaskConfig()) == {"add_self_loops": True}
    assert T.NodeClassification.load_options(T.NodeTaskConfig(self_loops=False)) == {"add_self_loops": False}
    plain = planted_hypergraph()
    looped = add_self_loops(plain)
    assert looped.num_hyperedges == plain.num_hyperedges + plain.num_nodes  # planted has no singleton
    T.NodeClassification(plain, T.NodeTaskConfig(self_loops=False), 0, hidden=8)
    T.NodeClassification(looped, T.NodeTaskConfig(), 0, hidden=8)
    with pytest.raises(ValueError, match="singleton hyperedge for every node"):
        T.NodeClassification(looped, T.NodeTaskConfig(self_loops=False), 0, hidden=8)
    # a singleton for all but one node is data as given, not loops added by the loader
    keep = looped.hyperedge_index[:, looped.hyperedge_index[1] != looped.num_hyperedges - 1]
    partial = type(looped)(x=looped.x, y=looped.y, num_nodes=looped.num_nodes, hyperedge_index=keep,
                           num_hyperedges=looped.num_hyperedges - 1, name="partial")
    T.NodeClassification(partial, T.NodeTaskConfig(self_loops=False), 0, hidden=8)


def test_hyperedge_positives_partition_distinct_hyperedges():
    base = planted_hypergraph(seed=1)
    hes = T.unique_hyperedges(base.hyperedge_index)
    # a duplicate of a hyperedge and a singleton: the duplicate counts once, singletons are not targets
    data = planted_hypergraph(seed=1, extra=[hes[0], (7,)])
    task = T.HyperedgePrediction(data, T.HyperedgeTaskConfig(), 0, hidden=8)
    parts = [set(task.positives[k]) for k in ("train", "val", "test")]
    assert sum(map(len, parts)) == len(set().union(*parts)) == len(hes) == 50
    assert set().union(*parts) == set(hes)
    assert [len(p) for p in parts] == [30, 10, 10]
    again = T.HyperedgePrediction(data, T.HyperedgeTaskConfig(), 0, hidden=8)
    other = T.HyperedgePrediction(data, T.HyperedgeTaskConfig(), 1, hidden=8)
    for part in ("train", "val", "test"):
        assert task.candidates[part].hyperedges == again.candidates[part].hyperedges
    assert task.candidates["test"].hyperedges != other.candidates["test"].hyperedges


# ----------------------------------------------------------------------------------------------- negatives

@pytest.fixture(scope="module")
def context():
    data = planted_hypergraph(n=90, m=80, seed=2)
    return T.unique_hyperedges(data.hyperedge_index, min_size=2)


def test_size_distribution_drops_sizes_one_and_two(context):
    sizes, probs = T.size_distribution(context + [(0,), (1, 2)])
    counts = {s: sum(len(h) == s for h in context) for s in (3, 4, 5)}
    assert sizes.tolist() == [3, 4, 5]
    np.testing.assert_allclose(probs, [counts[s] / sum(counts.values()) for s in (3, 4, 5)])
    with pytest.raises(ValueError, match="size 3 or more"):
        T.size_distribution([(0, 1), (2,)])


def test_clique_expansion_matches_networkx(context):
    g = ce_graph(context)
    nbrs = T.clique_expansion(context)
    assert set(nbrs) == set(g)
    assert all(nbrs[v] == set(g[v]) for v in g)


@pytest.mark.parametrize("kind", ["sized", "motif", "clique"])
def test_negative_samplers_give_non_hyperedges_of_the_right_sizes(context, kind):
    forbidden = set(context)
    negs = T.NEGATIVE_SAMPLERS[kind](context, 150, forbidden, np.random.default_rng(0))
    again = T.NEGATIVE_SAMPLERS[kind](context, 150, forbidden, np.random.default_rng(0))
    assert negs == again and len(negs) == 150
    g = ce_graph(context)
    context_sizes = {len(h) for h in context}
    for neg in negs:
        assert neg == tuple(sorted(set(neg))) and neg not in forbidden
        assert set(neg) <= set(g)
        if kind in ("sized", "motif"):
            assert len(neg) in {3, 4, 5}  # the size distribution's support (2 dropped)
        if kind == "motif":
            assert nx.is_connected(g.subgraph(neg))
        if kind == "clique":
            assert len(neg) in context_sizes
            sources = [h for h in context if len(h) == len(neg) and len(set(h) & set(neg)) == len(h) - 1]
            assert sources, neg
            assert any(all(g.has_edge(new, v) for v in set(neg) - {new})
                       for h in sources for new in set(neg) - set(h))
    if kind == "sized":  # sized negatives are mostly not connected in the clique expansion
        assert sum(not nx.is_connected(g.subgraph(n)) for n in negs) > 75


def test_mixed_negatives_take_a_third_of_each(context):
    negs = T.mixed_negatives(context, 100, set(context), np.random.default_rng(5))
    kinds = [k for k, _ in negs]
    assert len(negs) == 100 and kinds.count("sized") == 34 and kinds.count("motif") == 33
    assert kinds.count("clique") == 33


def test_sampler_reports_impossible_request():
    with pytest.raises(RuntimeError, match="clique negative sampling"):
        T.clique_negatives([(0, 1, 2)], 1, {(0, 1, 2)}, np.random.default_rng(0))


# ----------------------------------------------------------------------------------------------- no leakage

@pytest.mark.parametrize("self_loops", [False, True])
def test_encoder_sees_only_training_hyperedges(self_loops):
    from accelerate import Accelerator

    from hypergvl.models.config import TrainerConfig

    from hypergvl.models.trainer import train_one_run

    data = planted_hypergraph(seed=3)
    task = T.HyperedgePrediction(data, T.HyperedgeTaskConfig(batch_size=8, self_loops=self_loops), 0, hidden=6)
    encoder = MeanEncoder(task.in_channels, 6, task.out_channels)
    module = T.TaskModule(encoder, task.build_head())
    cfg = TrainerConfig(epochs=3, hidden=6, select="best_val")
    record = train_one_run(task, module, Accelerator(cpu=True), cfg, 0, None, progress=False)
    assert record["epochs_run"] == 3 and 0 <= record["metrics"]["test"]["auroc"] <= 100
    assert len(encoder.calls) >= 3 * 4 + 3  # 4 training batches per epoch, one evaluation per epoch
    train, held_out = set(task.positives["train"]), set(task.positives["val"]) | set(task.positives["test"])
    singletons = {(v,) for v in range(data.num_nodes)} if self_loops else set()
    for index in encoder.calls:
        seen = {tuple(sorted(index[0, index[1] == e].tolist())) for e in index[1].unique().tolist()}
        assert seen == train | singletons
        assert not seen & held_out


def test_paper_protocol_is_the_publication_time_reference_and_only_when_asked():
    dup = ((0, 3), (0, 3))  # a duplicated hyperedge stays two positives in the paper protocol, as upstream
    data = planted_hypergraph(seed=3, extra=dup)
    held_out = T.HyperedgePrediction(data, T.HyperedgeTaskConfig(batch_size=8), 0, hidden=6)
    paper = T.HyperedgePrediction(data, T.HyperedgeTaskConfig(batch_size=8, protocol="paper"), 0, hidden=6)
    everything = set().union(*map(set, paper.positives.values()))
    index = paper.hyperedge_index
    seen = {tuple(sorted(index[0, index[1] == e].tolist())) for e in index[1].unique().tolist()}
    assert seen == everything and paper.num_hyperedges == sum(map(len, paper.positives.values())) == 52
    assert held_out.num_hyperedges == len(held_out.positives["train"]) < len(everything)
    assert sum(map(len, held_out.positives.values())) == 51  # held out: the duplicate counts once
    # validation scores the training positives; validation and test have as many negatives of each kind as
    # true positives
    for part in ("val", "test"):
        cands = paper.candidates[part]
        shown = [h for h, k in zip(cands.hyperedges, cands.kinds) if k == "positive"]
        assert shown == paper.positives["train" if part == "val" else part]
        for kind in T.NEGATIVE_SAMPLERS:
            assert (cands.kinds == kind).sum() == len(paper.positives[part])
    with pytest.raises(ValueError, match="protocol"):
        T.HyperedgeTaskConfig(protocol="leaky")
    # paper_validation="val": the same split and candidates, but validation scores the validation hyperedges
    text = T.HyperedgePrediction(data, T.HyperedgeTaskConfig(batch_size=8, protocol="paper", paper_validation="val"),
                                 0, hidden=6)
    assert text.positives == paper.positives and text.num_hyperedges == paper.num_hyperedges
    shown = [h for h, k in zip(text.candidates["val"].hyperedges, text.candidates["val"].kinds) if k == "positive"]
    assert shown == text.positives["val"] != paper.positives["train"]
    for key in ("paper_loss", "paper_validation"):
        with pytest.raises(ValueError, match=key):
            T.HyperedgeTaskConfig(**{key: "none"})


def brute_force_greedy_cover(hyperedges):
    """The reference's set_cover, literally: the first hyperedge with the most uncovered nodes, until all are."""
    sets, covered, out = [set(h) for h in hyperedges], set(), []
    universe = set().union(*sets)
    while covered != universe:
        best = max(sets, key=lambda s: len(s - covered))
        out.append(sets.index(best))
        covered |= best
    return out


@pytest.mark.parametrize("seed", range(20))
def test_greedy_cover_matches_the_reference_rule(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    hes = [tuple(sorted(rng.choice(n, int(rng.integers(1, 6)), replace=False).tolist()))
           for _ in range(int(rng.integers(3, 60)))]
    hes += hes[:3]  # duplicates: the first copy is the one chosen
    assert T.greedy_cover(hes) == brute_force_greedy_cover(hes)


def test_paper_split_keeps_the_cover_out_of_test_and_the_reference_proportions():
    rng = np.random.default_rng(0)
    hes = [tuple(sorted(rng.choice(300, int(rng.integers(2, 7)), replace=False).tolist())) for _ in range(1000)]
    positives, contexts = T.paper_split(hes, np.random.default_rng(1))
    cover = [hes[i] for i in T.greedy_cover(hes)]
    assert sorted(sum(positives.values(), [])) == sorted(hes)  # a partition
    assert not set(cover) & set(positives["test"])
    assert set().union(*positives["train"]) | set().union(*positives["val"]) == set().union(*hes)
    ground = 600  # 60%; a sixth of it to validation; the other 400 in quarters, quarter, half
    assert (len(positives["train"]), len(positives["val"]), len(positives["test"])) == (
        ground - ground // 6 + 100, ground // 6 + 100, 200)
    assert sorted(contexts["train"]) == sorted(positives["train"] + positives["val"][:ground // 6])
    assert contexts["val"] == contexts["test"] == positives["train"] + positives["val"]
    # the test hyperedges lean small: the cover took large ones into the ground set
    assert np.mean([len(h) for h in positives["test"]]) < np.mean([len(h) for h in cover])


def test_paper_protocol_loss_squashes_the_score_twice_before_bce_with_logits():
    data = planted_hypergraph(seed=3)
    tasks = {p: T.HyperedgePrediction(data, T.HyperedgeTaskConfig(batch_size=8, protocol=p), 0, hidden=6)
             for p in ("held-out", "paper")}
    tasks["paper, text"] = T.HyperedgePrediction(  # the paper's text: cross-entropy on the logits, as held out
        data, T.HyperedgeTaskConfig(batch_size=8, protocol="paper", paper_loss="logits"), 0, hidden=6)

    class Fixed(torch.nn.Module):  # every candidate scores logit 3
        def forward(self, x, hyperedge_index, num_hyperedges, **kw):
            return torch.full((kw["num_candidates"],), 3.0)

    for protocol, task in tasks.items():
        batch = next(task.train_batches(np.random.default_rng(0)))
        loss = float(task.loss(Fixed(), batch))
        z = torch.tensor(3.0)
        if protocol == "paper":
            z = torch.sigmoid(torch.sigmoid(z))
        want = float(F.softplus(-z) + F.softplus(z))  # BCE of a positive + BCE of a negative at logit z
        assert loss == pytest.approx(want, rel=1e-5)


def test_paper_protocol_metric_is_the_mean_of_the_per_kind_and_mixed_aurocs():
    kinds = np.array(["positive"] * 3 + ["sized"] * 3 + ["motif"] * 3 + ["clique"] * 3)
    y = (kinds == "positive").astype(float)
    score = np.array([5, 6, 7, 0, 1, 2, 4, 5.5, 8, 9, 10, 0], dtype=float)
    out = T._scores(y, score, kinds, per_kind_mean=True)
    assert out["auroc_sized"] == 100 and out["auroc_clique"] == pytest.approx(100 / 3)
    assert out["auroc_motif"] == pytest.approx(100 * 5 / 9)
    # mixed: the positives against the first negative of each kind (scores 0, 4, 9)
    assert out["auroc_mixed"] == pytest.approx(100 * 6 / 9)
    assert out["auroc"] == pytest.approx(np.mean([100, 100 * 5 / 9, 100 / 3, 100 * 6 / 9]))
    pooled = T._scores(y, score, kinds, per_kind_mean=False)
    assert pooled["auroc"] == pytest.approx(100 * (9 + 5 + 3) / 27)


# ----------------------------------------------------------------------------------------------- heads

def test_heads_use_the_reference_mlp_shape():
    from hypergvl.models.nn.mlp import MLP

    scorer = T.HyperedgeScorer(128)  # hidden 64, 2 layers, LayerNorm, dropout 0.2
    assert isinstance(scorer.mlp, MLP) and scorer.mlp.dropout == 0.2
    assert [(m.in_features, m.out_features) for m in scorer.mlp.lins] == [(128, 64), (64, 1)]
    assert isinstance(scorer.mlp.norms[1], nn.LayerNorm)
    readout = T.GraphReadout(32, 5)  # a linear classifier by default
    assert [(m.in_features, m.out_features) for m in readout.mlp.lins] == [(32, 5)]


def test_hyperedge_scorer_max_pools_candidate_nodes():
    torch.manual_seed(0)
    h = torch.randn(6, 4)
    scorer = T.HyperedgeScorer(4, 8).eval()
    cands = [(0, 2, 5), (1, 3), (4,)]
    nodes = torch.tensor([v for c in cands for v in c])
    cand = torch.tensor([i for i, c in enumerate(cands) for _ in c])
    pooled = torch.stack([h[list(c)].max(0).values for c in cands])
    torch.testing.assert_close(scorer(h, nodes, cand, 3), scorer.mlp(pooled).view(-1))
    maxmin = T.HyperedgeScorer(4, 8, pooling="maxmin").eval()
    pooled = torch.stack([h[list(c)].max(0).values - h[list(c)].min(0).values for c in cands])
    torch.testing.assert_close(maxmin(h, nodes, cand, 3), maxmin.mlp(pooled).view(-1))


def small_graph_set(num=20, seed=0):
    rng = np.random.default_rng(seed)
    graphs = []
    for i in range(num):
        n = int(rng.integers(3, 7))
        hes = [tuple(sorted(rng.choice(n, int(rng.integers(1, n + 1)), replace=False).tolist())) for _ in range(3)]
        hes = sorted(set(hes))
        x = torch.tensor(rng.standard_normal((n, 4)), dtype=torch.float32)
        graphs.append(HypergraphData(x=x, y=torch.tensor([i % 2]), hyperedge_index=T.hyperedge_index_from_list(hes),
                                     num_hyperedges=len(hes), num_nodes=n))
    return HypergraphGraphDataset(graphs, num_classes=2, num_features=4, name="toy")


def test_graph_batch_is_block_diagonal_and_readout_pools_per_graph():
    data = small_graph_set()
    task = T.HypergraphClassification(data, T.GraphTaskConfig(batch_size=4), 0, hidden=6)
    b = task.collate([2, 0])
    g2, g0 = data[2], data[0]
    torch.testing.assert_close(b["x"], torch.cat([g2.x, g0.x]))
    shifted = g0.hyperedge_index + torch.tensor([[g2.num_nodes], [g2.num_hyperedges]])
    assert torch.equal(b["hyperedge_index"], torch.cat([g2.hyperedge_index, shifted], 1))
    assert b["num_hyperedges"] == g2.num_hyperedges + g0.num_hyperedges
    assert b["batch"].tolist() == [0] * g2.num_nodes + [1] * g0.num_nodes
    assert b["y"].tolist() == [0, 0]
    readout = T.GraphReadout(4, 2).eval()
    expected = readout.mlp(torch.stack([g2.x.mean(0), g0.x.mean(0)]))
    torch.testing.assert_close(readout(b["x"], b["batch"], 2), expected)


def test_graph_task_metrics_are_accuracy_and_macro_f1():
    data = small_graph_set(num=40)
    task = T.HypergraphClassification(data, T.GraphTaskConfig(batch_size=7), 1, hidden=6)
    module = T.TaskModule(MeanEncoder(4, 6, 6), task.build_head()).eval()
    res = task.evaluate(module)
    for part in ("val", "test"):
        ids = task.split[part]
        b = task.collate(ids)
        pred = module(b["x"], b["hyperedge_index"], b["num_hyperedges"], batch=b["batch"],
                      num_graphs=b["num_graphs"]).argmax(-1).numpy()
        y = task.y[ids]
        assert res[part]["accuracy"] == pytest.approx(100 * (pred == y).mean())
        assert res[part]["macro_f1"] == pytest.approx(100 * f1_score(y, pred, average="macro"))


# ----------------------------------------------------------------------------------------------- fairness

def test_fairness_metrics_hand_computed():
    pred = [1, 0, 1, 1, 0, 0]
    y = [1, 0, 1, 0, 1, 0]
    s = [0, 0, 0, 1, 1, 1]
    # P(ŷ=1|s=0) = 2/3, P(ŷ=1|s=1) = 1/3; P(ŷ=1|s=0,y=1) = 2/2, P(ŷ=1|s=1,y=1) = 0/1
    out = T.fairness_metrics(pred, y, s)
    assert out["delta_dp"] == pytest.approx(100 / 3)
    assert out["delta_eo"] == pytest.approx(100.0)
    assert math.isnan(T.fairness_metrics([1, 0], [0, 0], [0, 1])["delta_eo"])
    with pytest.raises(ValueError, match="binary sensitive"):
        T.fairness_metrics([1, 0], [1, 0], [0, 2])


def test_node_task_reports_fairness_when_sensitive_is_binary():
    data = planted_hypergraph(k=2)
    data = data.replace(sensitive=torch.arange(data.num_nodes) % 3 == 0)
    task = T.NodeClassification(data, T.NodeTaskConfig(), 0, hidden=4)
    module = T.TaskModule(MeanEncoder(task.in_channels, 4, 2), task.build_head()).eval()
    res = task.evaluate(module)
    with torch.no_grad():
        pred = module(task.x, task.hyperedge_index, task.num_hyperedges).argmax(-1).numpy()
    idx = task.split["test"].numpy()
    expected = T.fairness_metrics(pred[idx], data.y.numpy()[idx], data.sensitive.numpy()[idx])
    assert res["test"]["delta_dp"] == pytest.approx(expected["delta_dp"])
    assert res["test"]["accuracy"] == pytest.approx(100 * (pred[idx] == data.y.numpy()[idx]).mean())
    three = T.NodeClassification(planted_hypergraph(k=3).replace(sensitive=data.sensitive), T.NodeTaskConfig(), 0,
                                 hidden=4)  # three classes: the B.5 gaps are defined for binary labels only
    assert "delta_dp" not in three.evaluate(T.TaskModule(MeanEncoder(3, 4, 3), three.build_head()).eval())["test"]


@pytest.mark.parametrize("context", ["observed", "split"])
def test_negative_context_of_each_part(context):
    data = planted_hypergraph(n=90, m=120, seed=6)
    task = T.HyperedgePrediction(data, T.HyperedgeTaskConfig(negative_context=context), 0, hidden=4)
    pos = task.positives
    allowed = {"train": pos["train"], "val": pos["train"] + pos["val"], "test": pos["train"] + pos["val"]}
    if context == "split":
        allowed = pos
    every = set(pos["train"]) | set(pos["val"]) | set(pos["test"])
    for part, cands in task.candidates.items():
        assert (cands.labels == 1).sum() == (cands.labels == 0).sum() == len(pos[part])
        for he, kind in zip(cands.hyperedges, cands.kinds):
            if kind == "positive":
                continue
            assert he not in every
            if kind == "clique":  # one node away from a positive of the allowed context
                assert any(len(h) == len(he) and len(set(h) & set(he)) == len(h) - 1 for h in allowed[part])
            else:  # sized and motif negatives use nodes of the context's clique expansion
                assert set(he) <= {v for h in allowed[part] for v in h}


def dense_graph_set():
    """Graphs with more hyperedges than nodes (as every Steam-Player graph) next to sparser ones."""
    lists = [[(0, 1), (1, 2), (0, 2), (0, 1, 2), (2,)], [(0, 1, 2, 3), (1, 3)], [(0, 1), (1, 2), (0, 2), (0,)],
             [(0, 2), (1, 2, 3, 4)]]
    graphs = []
    for i, hes in enumerate(lists):
        n = max(max(h) for h in hes) + 1
        graphs.append(HypergraphData(x=torch.eye(n, 5), y=torch.tensor([i % 2]), num_nodes=n,
                                     hyperedge_index=T.hyperedge_index_from_list(hes), num_hyperedges=len(hes)))
    return HypergraphGraphDataset(graphs, num_classes=2, num_features=5, name="dense")


def test_graph_paper_split_is_the_reference_random_split():
    for n, seed in ((20, 0), (37, 3), (2048, 1)):
        parts = torch.utils.data.random_split(range(n), [int(0.8 * n), int(0.1 * n), n - int(0.8 * n) - int(0.1 * n)],
                                              generator=torch.Generator().manual_seed(42 + seed))
        ours = T.reference_graph_split(n, seed, 0.8, 0.1)
        for part, ref in zip(("train", "val", "test"), parts):
            assert ours[part].tolist() == sorted(ref.indices)


def test_graph_paper_batching_is_pyg_default_collation_of_the_reference_data():
    """The reference wraps each graph as ``Data(x, hyperedge_index, num_nodes)``; PyG's collation offsets both rows
    of ``hyperedge_index`` by the node count, so hyperedge ids of a graph with more hyperedges than nodes run into
    the next graph's and those hyperedges merge. The paper protocol reproduces exactly that (ids renumbered)."""
    from torch_geometric.data import Batch, Data

    data = dense_graph_set()
    ids = [0, 1, 2, 3]
    ref = Batch.from_data_list([Data(x=g.x, hyperedge_index=g.hyperedge_index, num_nodes=g.num_nodes)
                                for g in (data[i] for i in ids)]).hyperedge_index
    paper = T.HypergraphClassification(data, T.GraphTaskConfig(protocol="paper"), 0, hidden=4).collate(ids)
    assert torch.equal(paper["hyperedge_index"][0], ref[0])
    assert torch.equal(paper["hyperedge_index"][1], torch.unique(ref[1], return_inverse=True)[1])
    assert paper["num_hyperedges"] == torch.unique(ref[1]).numel()
    assert max(graphs_per_hyperedge(paper)) == 2  # graph 0 (3 nodes, 5 hyperedges) merged into graph 1
    standard = T.HypergraphClassification(data, T.GraphTaskConfig(), 0, hidden=4).collate(ids)
    assert standard["num_hyperedges"] == sum(data[i].num_hyperedges for i in ids)
    assert max(graphs_per_hyperedge(standard)) == 1


def graphs_per_hyperedge(b):
    owners = {}
    for v, e in b["hyperedge_index"].t().tolist():
        owners.setdefault(e, set()).add(int(b["batch"][v]))
    return [len(g) for g in owners.values()]


def test_graph_self_loops_give_every_node_one_singleton():
    data = dense_graph_set()
    b = T.HypergraphClassification(data, T.GraphTaskConfig(protocol="paper", self_loops=True), 0,
                                   hidden=4).collate([0, 1, 2, 3])
    plain = T.HypergraphClassification(data, T.GraphTaskConfig(protocol="paper"), 0, hidden=4).collate([0, 1, 2, 3])
    n = b["x"].size(0)
    assert b["num_hyperedges"] == plain["num_hyperedges"] + n
    assert torch.equal(b["hyperedge_index"][:, :plain["hyperedge_index"].size(1)], plain["hyperedge_index"])
    added = b["hyperedge_index"][:, plain["hyperedge_index"].size(1):]
    # as the reference's add_self_loop_hyperedges: one new singleton per node, even for the two nodes (graph 0
    # node 2, graph 2 node 0) already alone in a hyperedge
    assert torch.equal(added, torch.stack([torch.arange(n), plain["num_hyperedges"] + torch.arange(n)]))
    with pytest.raises(ValueError, match="protocol"):
        T.GraphTaskConfig(protocol="reference")
