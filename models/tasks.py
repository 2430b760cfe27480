"""The three DHG-Bench learning tasks and the heads they share across all models.

DHG-Bench (Li et al., 2025), section 2: "we focus on three supervised learning tasks, covering node-, edge-,
and graph-level prediction". Every model in :mod:`models.nn` is an *encoder* mapping
``(x, hyperedge_index, num_hyperedges)`` to node representations; a task owns the data split, the head on top
of the encoder, the loss and the metrics, so that one training loop (:mod:`models.train`) serves all three.

* ``node`` -- node classification. Section 3.1: "we adopt a split of 50%/25%/25% for training, validation, and
  testing" (random per seed, not stratified); appendix B.1: cross-entropy loss, accuracy. When the dataset
  carries a binary sensitive attribute the group-fairness gaps of appendix B.5 are reported as well
  (:func:`fairness_metrics`).
* ``hyperedge`` -- hyperedge prediction. Section 3.1: "we randomly split the hyperedges (i.e., positive
  samples) into training (60%), validation (20%), and test (20%) sets ... for each training, validation, and
  test set, we sample an equal number of negative examples as the positive ones ... a mixed NS strategy that
  integrates ... sized NS (SNS), motif NS (MNS), and clique NS (CNS)". The encoder sees only the training
  hyperedges (the reference's first protocol leaked validation/test hyperedges into message passing; see
  DESIGN.md). Head: max pooling of node embeddings over the candidate, a 2-layer MLP (hidden 64, LayerNorm,
  dropout 0.2), binary cross-entropy; metrics AUROC and AP (appendix B.1).
* ``graph`` -- hypergraph classification. Section 3.1: "we adopt an 80%/10%/10% train/validation/test data
  split"; graphs are batched into one block-diagonal hypergraph, node embeddings are mean-pooled per graph and
  classified; metrics accuracy and Macro-F1 (appendix B.1).

All metrics are reported in percent, as the paper's tables are.
"""

from __future__ import annotations

import abc
import heapq
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterator, Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import accuracy_score, average_precision_score, f1_score, roc_auc_score
from torch import Tensor, nn
from torch_geometric.utils import scatter

__all__ = [
    "TASKS",
    "register_task",
    "get_task",
    "Task",
    "TaskModule",
    "NodeTaskConfig",
    "HyperedgeTaskConfig",
    "GraphTaskConfig",
    "NodeClassification",
    "HyperedgePrediction",
    "HypergraphClassification",
    "HyperedgeScorer",
    "GraphReadout",
    "fairness_metrics",
    "unique_hyperedges",
    "hyperedge_index_from_list",
    "clique_expansion",
    "size_distribution",
    "NEGATIVE_SAMPLERS",
    "sized_negatives",
    "motif_negatives",
    "clique_negatives",
    "mixed_negatives",
    "split_indices",
    "reference_graph_split",
]

Hyperedge = tuple  # a sorted tuple of distinct node ids

# --------------------------------------------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------------------------------------------

TASKS: dict[str, type["Task"]] = {}


def register_task(name: str) -> Callable[[type["Task"]], type["Task"]]:
    """Class decorator adding a :class:`Task` to :data:`TASKS` under ``name``; duplicate names are rejected."""

    def decorate(cls: type["Task"]) -> type["Task"]:
        if name in TASKS:
            raise ValueError(f"task {name!r} is already registered (by {TASKS[name].__name__})")
        cls.name = name
        TASKS[name] = cls
        return cls

    return decorate


def get_task(name: str) -> type["Task"]:
    """The task class registered as ``name``; an unknown name raises ``ValueError`` listing the valid ones."""
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; valid tasks: {', '.join(sorted(TASKS))}") from None


# --------------------------------------------------------------------------------------------------------------
# shared helpers: splits, heads, fairness
# --------------------------------------------------------------------------------------------------------------


def split_indices(num_items: int, seed: int, train: float, val: float) -> dict[str, Tensor]:
    """Random train/val/test split of ``num_items`` items (nodes, hyperedges or graphs) for ``seed``, not
    stratified: :func:`models.datasets.splits.random_split`, as sorted index tensors keyed by part."""
    from models.datasets.splits import random_split

    split = random_split(num_items, seed, train, val)
    return {"train": split.train, "val": split.val, "test": split.test}


def reference_graph_split(num_items: int, seed: int, train: float, val: float) -> dict[str, Tensor]:
    """The reference's hypergraph split (``generate_split_hypergraphs``): ``torch.utils.data.random_split`` into
    ``int(train * n)``, ``int(val * n)`` and the rest, with ``torch.Generator().manual_seed(42 + seed)``."""
    perm = torch.randperm(num_items, generator=torch.Generator().manual_seed(42 + seed))
    a, b = int(train * num_items), int(val * num_items)
    return {"train": perm[:a].sort().values, "val": perm[a:a + b].sort().values, "test": perm[a + b:].sort().values}


def _mlp(in_channels: int, hidden_channels: int, out_channels: int, num_layers: int, dropout: float) -> nn.Module:
    """The reference's head MLP: AllSet's ``MLP`` with LayerNorm and no input norm (:class:`models.nn.MLP`):
    linear layers with ReLU, LayerNorm and dropout between them; one layer is a plain linear map."""
    from models.nn.mlp import MLP

    return MLP(in_channels, hidden_channels, out_channels, num_layers, dropout, normalization="ln", input_norm=False)


class TaskModule(nn.Module):
    """Encoder plus task head as one module (so ``accelerate`` prepares, saves and restores a single model)."""

    def __init__(self, encoder: nn.Module, head: nn.Module):
        super().__init__()
        self.encoder = encoder
        self.head = head

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int, **head_inputs: Any) -> Tensor:
        return self.head(self.encoder(x, hyperedge_index, num_hyperedges), **head_inputs)


class _NodeHead(nn.Module):
    """Node classification reads the encoder's output as class logits (``out_channels = num_classes``)."""

    def forward(self, h: Tensor) -> Tensor:
        return h


class HyperedgeScorer(nn.Module):
    """Candidate hyperedge score: pool the node embeddings of the candidate, then an MLP to one logit.

    ``pooling`` is ``max`` (the benchmark's setting), ``mean`` or ``maxmin`` (elementwise max minus min), the
    "Hyperedge Pooling" choices of DHG-Bench Table A4. Candidates are given flat: ``nodes[i]`` belongs to
    candidate ``candidate[i]``.
    """

    def __init__(self, in_channels: int, hidden_channels: int = 64, num_layers: int = 2, dropout: float = 0.2,
                 pooling: str = "max"):
        super().__init__()
        self.pooling = pooling
        self.mlp = _mlp(in_channels, hidden_channels, 1, num_layers, dropout)

    def forward(self, h: Tensor, nodes: Tensor, candidate: Tensor, num_candidates: int) -> Tensor:
        z = h[nodes]
        if self.pooling == "maxmin":
            pooled = (scatter(z, candidate, 0, dim_size=num_candidates, reduce="max")
                      - scatter(z, candidate, 0, dim_size=num_candidates, reduce="min"))
        else:
            pooled = scatter(z, candidate, 0, dim_size=num_candidates, reduce=self.pooling)
        return self.mlp(pooled).view(-1)


class GraphReadout(nn.Module):
    """Hypergraph classification head: pool node embeddings per graph (``mean`` or ``max``), then classify."""

    def __init__(self, in_channels: int, num_classes: int, pooling: str = "mean", num_layers: int = 1,
                 hidden_channels: int = 128, dropout: float = 0.2):
        super().__init__()
        self.pooling = pooling
        self.mlp = _mlp(in_channels, hidden_channels, num_classes, num_layers, dropout)

    def forward(self, h: Tensor, batch: Tensor, num_graphs: int) -> Tensor:
        return self.mlp(scatter(h, batch, 0, dim_size=num_graphs, reduce=self.pooling))


def fairness_metrics(pred: Any, y: Any, sensitive: Any) -> dict[str, float]:
    """Group-fairness gaps of DHG-Bench appendix B.5, in percent.

    ``ΔDP = |P(ŷ=1 | s=0) − P(ŷ=1 | s=1)|`` (demographic parity, eq. 2) and
    ``ΔEO = |P(ŷ=1 | s=1, y=1) − P(ŷ=1 | s=0, y=1)|`` (equalized odds, eq. 4), for binary predictions ``pred``,
    labels ``y`` and sensitive attribute ``sensitive``. A gap whose conditioning group is empty is ``nan``.
    """
    pred, y, s = (np.asarray(a).astype(np.int64).reshape(-1) for a in (pred, y, sensitive))
    if not (len(pred) == len(y) == len(s)):
        raise ValueError(f"pred, y and sensitive differ in length: {len(pred)}, {len(y)}, {len(s)}")
    for name, a in (("pred", pred), ("y", y), ("sensitive", s)):
        if not np.isin(a, (0, 1)).all():
            raise ValueError(f"fairness metrics need binary {name}; got values {sorted(set(a.tolist()))[:5]}")

    def rate(mask: np.ndarray) -> float:
        return float(pred[mask].mean()) if mask.any() else math.nan

    dp = abs(rate(s == 0) - rate(s == 1))
    eo = abs(rate((s == 1) & (y == 1)) - rate((s == 0) & (y == 1)))
    return {"delta_dp": 100.0 * dp, "delta_eo": 100.0 * eo}


# --------------------------------------------------------------------------------------------------------------
# hyperedge utilities and negative sampling
# --------------------------------------------------------------------------------------------------------------


def unique_hyperedges(hyperedge_index: Tensor, min_size: int = 1, distinct: bool = True) -> list[Hyperedge]:
    """Distinct hyperedges (sorted node tuples, first-occurrence order) of an incidence list; smaller than
    ``min_size`` dropped. Duplicated hyperedges (Cora co-citation has 96) count once, unless ``distinct`` is
    False (every hyperedge id in order, as the publication-time reference split them)."""
    groups: dict[int, list[int]] = defaultdict(list)
    for v, e in zip(*hyperedge_index.tolist()):
        groups[e].append(v)
    seen: set[Hyperedge] = set()
    out = []
    for e in sorted(groups):
        he = tuple(sorted(set(groups[e])))
        if len(he) >= min_size and not (distinct and he in seen):
            seen.add(he)
            out.append(he)
    return out


def greedy_cover(hyperedges: Sequence[Hyperedge]) -> list[int]:
    """Greedy set cover of the nodes of ``hyperedges``: repeatedly the first hyperedge (lowest index) that adds
    the most uncovered nodes, as the reference's ``set_cover`` (lazily re-scored: a hyperedge's gain only falls)."""
    sets = [set(h) for h in hyperedges]
    heap = [(-len(s), i) for i, s in enumerate(sets)]
    heapq.heapify(heap)
    covered: set[int] = set()
    universe = set().union(*sets)
    out = []
    while covered != universe:
        _, i = heapq.heappop(heap)
        gain = len(sets[i] - covered)
        if heap and (-gain, i) > heap[0]:  # stale: re-score and look again
            heapq.heappush(heap, (-gain, i))
            continue
        out.append(i)
        covered |= sets[i]
    return out


def paper_split(hyperedges: Sequence[Hyperedge], rng: np.random.Generator
                ) -> tuple[dict[str, list[Hyperedge]], dict[str, list[Hyperedge]]]:
    """The publication-time reference split (``generate_split_hyperedges``): a greedy cover of the nodes plus
    random others make a 60% "ground" set, a sixth of it held for validation; the remaining 40% is shuffled into
    a quarter more training, a quarter more validation and half test. Returns the positives of each part and the
    context each part's negatives are drawn from (training: all ground + training; validation and test: all but
    test). Test hyperedges are never in the cover, so they lean small."""
    n = len(hyperedges)
    cover = greedy_cover(hyperedges)
    in_cover = set(cover)
    rest = [i for i in range(n) if i not in in_cover]
    extra = max(int(0.6 * n) - len(cover), 0)
    ground = [int(i) for i in rng.choice(rest, size=extra, replace=False)] + cover
    ground_valid = {int(i) for i in rng.choice(ground, size=len(ground) // 6, replace=False)}
    in_ground = set(ground)
    pred = [hyperedges[i] for i in rng.permutation([i for i in range(n) if i not in in_ground])]
    k = int(0.25 * len(pred))
    ground_train = [hyperedges[i] for i in range(n) if i in in_ground and i not in ground_valid]
    ground_val = [hyperedges[i] for i in range(n) if i in ground_valid]
    positives = {"train": ground_train + pred[:k], "val": ground_val + pred[k:2 * k], "test": pred[2 * k:]}
    seen = positives["train"] + positives["val"]
    return positives, {"train": positives["train"] + ground_val, "val": seen, "test": seen}


def hyperedge_index_from_list(hyperedges: Sequence[Sequence[int]]) -> Tensor:
    """``[2, nnz]`` incidence (row 0 node, row 1 hyperedge id = position in ``hyperedges``)."""
    nodes = [v for he in hyperedges for v in he]
    edges = [i for i, he in enumerate(hyperedges) for _ in he]
    return torch.tensor([nodes, edges], dtype=torch.long).view(2, -1)


def clique_expansion(hyperedges: Sequence[Hyperedge]) -> dict[int, set[int]]:
    """Neighbour sets of the clique expansion: u ~ v iff some hyperedge contains both (u != v)."""
    nbrs: dict[int, set[int]] = defaultdict(set)
    for he in hyperedges:
        for u in he:
            nbrs[u].update(he)
    for u, ns in nbrs.items():
        ns.discard(u)
    return {u: ns for u, ns in nbrs.items() if ns}


def size_distribution(hyperedges: Sequence[Hyperedge]) -> tuple[np.ndarray, np.ndarray]:
    """Sizes and their frequencies among ``hyperedges``, sizes 1 and 2 dropped (as the reference does)."""
    sizes, counts = np.unique([len(he) for he in hyperedges if len(he) > 2], return_counts=True)
    if len(sizes) == 0:
        raise ValueError("sized and motif negative sampling need context hyperedges of size 3 or more")
    return sizes, counts / counts.sum()


NEGATIVE_SAMPLERS: dict[str, Callable[..., list[Hyperedge]]] = {}


def _register_sampler(name: str):
    def decorate(fn):
        if name in NEGATIVE_SAMPLERS:
            raise ValueError(f"negative sampler {name!r} is already registered")
        NEGATIVE_SAMPLERS[name] = fn
        return fn

    return decorate


_MAX_TRIES_PER_SAMPLE = 1000


def _check_tries(tries: int, want: int, what: str) -> None:
    if tries > _MAX_TRIES_PER_SAMPLE * max(want, 1):
        raise RuntimeError(f"{what} negative sampling found no new non-hyperedge after {tries} draws")


@_register_sampler("sized")
def sized_negatives(context: Sequence[Hyperedge], num: int, forbidden: set, rng: np.random.Generator
                    ) -> list[Hyperedge]:
    """Sized NS (Patil et al., 2020): draw a size k from the context's size distribution, then k distinct
    nodes uniformly among the nodes of the clique expansion; redraw if the set is a known hyperedge."""
    sizes, probs = size_distribution(context)
    nodes = np.array(sorted(clique_expansion(context)))
    out, tries = [], 0
    while len(out) < num:
        tries += 1
        _check_tries(tries, num, "sized")
        k = int(rng.choice(sizes, p=probs))
        if k > len(nodes):
            continue
        cand = tuple(sorted(nodes[rng.choice(len(nodes), size=k, replace=False)].tolist()))
        if cand not in forbidden:
            out.append(cand)
    return out


@_register_sampler("motif")
def motif_negatives(context: Sequence[Hyperedge], num: int, forbidden: set, rng: np.random.Generator
                    ) -> list[Hyperedge]:
    """Motif NS (mfinder-style): start from a uniformly random clique-expansion edge and grow a connected node
    set by repeatedly following a uniformly random edge leaving it, until it has k nodes (k from the size
    distribution; restart from a new edge when stuck); redraw if the set is a known hyperedge."""
    sizes, probs = size_distribution(context)
    nbrs = clique_expansion(context)
    edges = [(u, v) for u in sorted(nbrs) for v in sorted(nbrs[u])]  # both directions: uniform over edges
    out, tries = [], 0
    while len(out) < num:
        k = int(rng.choice(sizes, p=probs))
        chosen: set[int] = set()
        while len(chosen) < k:
            tries += 1
            _check_tries(tries, num, "motif")
            if not chosen:
                u, v = edges[rng.integers(len(edges))]
                chosen = {u, v}
                frontier = [(a, b) for a in (u, v) for b in sorted(nbrs[a]) if b not in chosen]
            if not frontier:  # the component is smaller than k: start again elsewhere
                chosen = set()
                continue
            new = frontier[rng.integers(len(frontier))][1]
            chosen.add(new)
            frontier = [(a, b) for a, b in frontier if b != new]
            frontier += [(new, b) for b in sorted(nbrs[new]) if b not in chosen]
        cand = tuple(sorted(chosen))
        if cand not in forbidden:
            out.append(cand)
    return out


@_register_sampler("clique")
def clique_negatives(context: Sequence[Hyperedge], num: int, forbidden: set, rng: np.random.Generator
                     ) -> list[Hyperedge]:
    """Clique NS: take a random context hyperedge, remove one random node and add a random node adjacent (in
    the clique expansion) to all remaining ones; redraw if the result is a known hyperedge."""
    nbrs = clique_expansion(context)
    all_nodes = set(nbrs)
    out, tries = [], 0
    while len(out) < num:
        tries += 1
        _check_tries(tries, num, "clique")
        he = context[rng.integers(len(context))]
        drop = int(rng.integers(len(he)))
        keep = he[:drop] + he[drop + 1:]
        common = set(nbrs.get(keep[0], ())) if keep else set(all_nodes)
        for v in keep[1:]:
            common &= nbrs.get(v, set())
        if not common:
            continue
        cand = tuple(sorted(keep + (sorted(common)[rng.integers(len(common))],)))
        if cand not in forbidden:
            out.append(cand)
    return out


def mixed_negatives(context: Sequence[Hyperedge], num: int, forbidden: set, rng: np.random.Generator,
                    kinds: Sequence[str] = ("sized", "motif", "clique")) -> list[tuple[str, Hyperedge]]:
    """``num`` negatives, a third from each sampler in ``kinds`` (the first ones take the remainder), each
    returned with the name of the sampler that produced it."""
    out = []
    for i, kind in enumerate(kinds):
        n = num // len(kinds) + (1 if i < num % len(kinds) else 0)
        out += [(kind, he) for he in NEGATIVE_SAMPLERS[kind](context, n, forbidden, rng)]
    return out


# --------------------------------------------------------------------------------------------------------------
# task configurations
# --------------------------------------------------------------------------------------------------------------


def _check_fractions(train: float, val: float) -> None:
    if not (0 < train < 1 and 0 < val < 1 and train + val < 1):
        raise ValueError(f"split fractions need 0 < train_frac, 0 < val_frac, train_frac + val_frac < 1; "
                         f"got train_frac={train}, val_frac={val}")


def _check_choice(key: str, value: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"{key} must be one of {', '.join(choices)}; got {value!r}")


def _check_positive(**values: Optional[int]) -> None:
    for key, value in values.items():
        if value is not None and value < 1:
            raise ValueError(f"{key} must be >= 1; got {value}")


def _check_dropout(key: str, p: float) -> None:
    if not 0 <= p < 1:
        raise ValueError(f"{key} must be in [0, 1); got {p}")


@dataclass(frozen=True)
class NodeTaskConfig:
    """Node classification settings (DHG-Bench section 3.1: 50/25/25 random split)."""

    train_frac: float = 0.5
    val_frac: float = 0.25

    def __post_init__(self) -> None:
        _check_fractions(self.train_frac, self.val_frac)


@dataclass(frozen=True)
class HyperedgeTaskConfig:
    """Hyperedge prediction settings (section 3.1 and the reference's defaults: batches of 512 positives with
    as many negatives, scorer MLP hidden 64 with LayerNorm and dropout 0.2, max pooling)."""

    train_frac: float = 0.6
    val_frac: float = 0.2
    batch_size: int = 512
    embed_dim: Optional[int] = None  # encoder output width; None = the trainer's hidden
    scorer_hidden: int = 64
    scorer_layers: int = 2
    scorer_dropout: float = 0.2
    edge_pooling: str = "max"
    self_loops: bool = False  # add a singleton hyperedge per node to the encoder's (training) hypergraph
    # where negatives are drawn: observed: train / train+val / train+val; split: each part's own positives
    # (the paper protocol draws them in paper_split's contexts instead)
    negative_context: str = "observed"
    # "held-out" (the default: nothing leaks) or "paper" (the publication-time reference protocol behind
    # DHG-Bench's Table A6, for comparison with it only: see HyperedgePrediction)
    protocol: str = "held-out"

    def __post_init__(self) -> None:
        _check_fractions(self.train_frac, self.val_frac)
        _check_positive(batch_size=self.batch_size, embed_dim=self.embed_dim, scorer_hidden=self.scorer_hidden,
                        scorer_layers=self.scorer_layers)
        _check_dropout("scorer_dropout", self.scorer_dropout)
        _check_choice("edge_pooling", self.edge_pooling, ("max", "mean", "maxmin"))
        _check_choice("negative_context", self.negative_context, ("observed", "split"))
        _check_choice("protocol", self.protocol, ("held-out", "paper"))


@dataclass(frozen=True)
class GraphTaskConfig:
    """Hypergraph classification settings (section 3.1: 80/10/10 split; mean readout; batches of 256 graphs
    as in the reference).

    ``protocol="paper"`` trains as the reference did at publication, for comparison with Table A7 only: the split
    is ``torch.utils.data.random_split`` seeded with ``42 + seed`` (the same graphs as the reference), and a batch
    offsets each graph's hyperedge ids by the number of *nodes* before it, as PyG's default ``Data.__inc__`` does
    for the reference's ``hyperedge_index`` key. A graph with more hyperedges than nodes then shares hyperedge ids
    with the graphs after it in the batch, and those hyperedges merge. ``self_loops`` adds a singleton hyperedge
    for every node of a batch (also where one exists), as the reference does for HyperGCN and TF-HNN.
    """

    protocol: str = "standard"
    self_loops: bool = False
    train_frac: float = 0.8
    val_frac: float = 0.1
    batch_size: int = 256
    embed_dim: Optional[int] = None
    graph_pooling: str = "mean"
    readout_layers: int = 1  # 1: a linear classifier on the pooled embedding
    readout_hidden: int = 128
    readout_dropout: float = 0.2

    def __post_init__(self) -> None:
        _check_fractions(self.train_frac, self.val_frac)
        _check_positive(batch_size=self.batch_size, embed_dim=self.embed_dim,
                        readout_layers=self.readout_layers, readout_hidden=self.readout_hidden)
        _check_dropout("readout_dropout", self.readout_dropout)
        _check_choice("graph_pooling", self.graph_pooling, ("mean", "max"))
        _check_choice("protocol", self.protocol, ("standard", "paper"))


# --------------------------------------------------------------------------------------------------------------
# tasks
# --------------------------------------------------------------------------------------------------------------


class Task(abc.ABC):
    """One benchmark task on one dataset for one seed: split, encoder inputs, head, loss and metrics.

    The training loop only calls :meth:`build_head`, :meth:`train_batches`, :meth:`loss` and
    :meth:`evaluate`; ``metric`` names the reported test metric and the validation metric used for model
    selection; ``default_select`` is the reference's choice (``last`` epoch or ``best_val``).
    """

    name: ClassVar[str]
    Config: ClassVar[type]
    metric: ClassVar[str]
    default_select: ClassVar[str]
    graph_level: ClassVar[bool] = False  # True: the dataset is a collection of hypergraphs
    load_kwargs: ClassVar[dict] = {}  # extra arguments of models.datasets.load for this task

    in_channels: int
    out_channels: int  # width of the encoder's output

    def __init__(self, data: Any, cfg: Any, seed: int, *, hidden: int, device: torch.device | str = "cpu"):
        self.cfg = cfg
        self.seed = seed
        self.hidden = hidden  # the encoder's hidden width (the default width of its output for embedding tasks)
        self.device = torch.device(device)

    @abc.abstractmethod
    def build_head(self) -> nn.Module:
        """The head module on top of the encoder (its input width is :attr:`out_channels`)."""

    @abc.abstractmethod
    def train_batches(self, rng: np.random.Generator) -> Iterator[Any]:
        """The training batches of one epoch (order drawn from ``rng``)."""

    @abc.abstractmethod
    def loss(self, module: nn.Module, batch: Any) -> Tensor:
        """Training loss of ``batch``; ``module`` is the (possibly wrapped) :class:`TaskModule`."""

    @abc.abstractmethod
    def evaluate(self, module: TaskModule) -> dict[str, dict[str, float]]:
        """Metrics in percent for ``{"val": ..., "test": ...}`` (``module`` in eval mode, no gradients)."""


def _to_device(t: Tensor, device: torch.device) -> Tensor:
    return t.to(device) if t.device != device else t


def _num_features(x: Tensor) -> int:
    return int(x.size(1))


@register_task("node")
class NodeClassification(Task):
    """Node classification (DHG-Bench sections 2 and 3.1; scored at the final epoch by default, as the
    reference does for this task)."""

    Config = NodeTaskConfig
    metric = "accuracy"
    default_select = "last"

    def __init__(self, data: Any, cfg: NodeTaskConfig, seed: int, *, hidden: int,
                 device: torch.device | str = "cpu"):
        super().__init__(data, cfg, seed, hidden=hidden, device=device)
        self.split = {k: _to_device(v, self.device)
                      for k, v in split_indices(int(data.num_nodes), seed, cfg.train_frac, cfg.val_frac).items()}
        self.x = _to_device(data.x, self.device)
        self.y = _to_device(torch.as_tensor(data.y).long().view(-1), self.device)
        self.hyperedge_index = _to_device(data.hyperedge_index, self.device)
        self.num_hyperedges = int(data.num_hyperedges)
        sens = getattr(data, "sensitive", None)
        sens = None if sens is None else torch.as_tensor(sens).view(-1).cpu().numpy()
        self.sensitive = sens if sens is not None and np.isin(sens, (0, 1)).all() else None
        self.in_channels = _num_features(self.x)
        self.out_channels = int(getattr(data, "num_classes", 0) or int(self.y.max()) + 1)

    def build_head(self) -> nn.Module:
        return _NodeHead()

    def train_batches(self, rng: np.random.Generator) -> Iterator[None]:
        yield None  # full batch

    def loss(self, module: nn.Module, batch: None) -> Tensor:
        out = module(self.x, self.hyperedge_index, self.num_hyperedges)
        idx = self.split["train"]
        return F.cross_entropy(out[idx], self.y[idx])

    @torch.no_grad()
    def evaluate(self, module: TaskModule) -> dict[str, dict[str, float]]:
        pred = module(self.x, self.hyperedge_index, self.num_hyperedges).argmax(-1).cpu().numpy()
        y = self.y.cpu().numpy()
        res = {}
        for part in ("val", "test"):
            idx = self.split[part].cpu().numpy()
            res[part] = {"accuracy": 100.0 * accuracy_score(y[idx], pred[idx])}
            if self.sensitive is not None and self.out_channels == 2:
                res[part].update(fairness_metrics(pred[idx], y[idx], self.sensitive[idx]))
        return res


class _Candidates:
    """A fixed list of candidate hyperedges in flat form (``nodes``, ``candidate``) plus labels and kinds."""

    def __init__(self, hyperedges: Sequence[Hyperedge], labels: Sequence[float], kinds: Sequence[str],
                 device: torch.device):
        self.hyperedges = list(hyperedges)
        self.kinds = np.array(kinds)
        self.labels = np.asarray(labels, dtype=np.float32)
        self.sizes = np.array([len(h) for h in self.hyperedges], dtype=np.int64)
        self.flat = np.fromiter((v for h in self.hyperedges for v in h), dtype=np.int64, count=int(self.sizes.sum()))
        self.ptr = np.concatenate([[0], np.cumsum(self.sizes)])
        self.device = device

    def __len__(self) -> int:
        return len(self.hyperedges)

    def batch(self, ids: np.ndarray) -> dict[str, Any]:
        """Head inputs for the candidates ``ids`` (in that order) and their labels."""
        sizes = self.sizes[ids]
        nodes = np.concatenate([self.flat[self.ptr[i]:self.ptr[i + 1]] for i in ids]) if len(ids) else \
            np.zeros(0, np.int64)
        cand = np.repeat(np.arange(len(ids)), sizes)
        return {
            "nodes": torch.from_numpy(nodes).to(self.device),
            "candidate": torch.from_numpy(cand).to(self.device),
            "num_candidates": len(ids),
            "labels": torch.from_numpy(self.labels[ids]).to(self.device),
        }


def _scores(y: np.ndarray, score: np.ndarray, kinds: np.ndarray, per_kind_mean: bool) -> dict[str, float]:
    """AUROC and AP in percent of all candidates, and (``auroc_<kind>``) of the positives against each kind of
    negatives. With ``per_kind_mean`` (the paper protocol) ``auroc``/``ap`` are instead the reference's
    ``roc_average``/``ap_average``: the mean over the three kinds and a mix of the first third of each."""
    pos = kinds == "positive"
    sets = {kind: pos | (kinds == kind) for kind in NEGATIVE_SAMPLERS if (kinds == kind).any()}
    if per_kind_mean:
        third = int(pos.sum()) // 3
        sets["mixed"] = pos.copy()
        for kind in NEGATIVE_SAMPLERS:
            sets["mixed"][np.flatnonzero(kinds == kind)[:third]] = True
    else:
        sets["mixed"] = np.ones(len(y), dtype=bool)
    out = {}
    for name, sel in sets.items():
        out[f"auroc_{name}"] = 100.0 * roc_auc_score(y[sel], score[sel])
        out[f"ap_{name}"] = 100.0 * average_precision_score(y[sel], score[sel])
    names = [*NEGATIVE_SAMPLERS, "mixed"] if per_kind_mean else ["mixed"]
    for metric in ("auroc", "ap"):
        out[metric] = float(np.mean([out[f"{metric}_{name}"] for name in names]))
    return out


@register_task("hyperedge")
class HyperedgePrediction(Task):
    """Hyperedge prediction (DHG-Bench sections 2 and 3.1; model selection on validation AUROC).

    Positives are the distinct hyperedges of size >= 2 (singletons added for node classification are not
    hyperedges to predict), split 60/20/20 per seed. Negatives, as many as positives in each part, come a third
    each from sized, motif and clique negative sampling; as in the reference's held-out protocol, training
    negatives are drawn in the context of the training hyperedges and validation/test negatives in the context
    of training+validation hyperedges (``negative_context="split"``: each part's own positives, as the reference's
    node-inductive split does), and every negative differs from every positive of any part. The encoder's
    hypergraph is the training hyperedges only (plus one singleton per node if ``self_loops``).

    ``protocol="paper"`` reproduces, for comparison with the published Table A6 only, what the reference did when
    the paper was written (``generate_split_hyperedges``, ``semi_edge_pred_training``, ``eval_edge_val_test`` and
    ``MaxAggregator`` of DHG-Bench at publication time):

    - the split is :func:`paper_split` (a greedy node cover always in training, so the test hyperedges lean
      small; duplicated hyperedges stay separate positives), negatives drawn in its contexts;
    - the encoder runs on the full hypergraph, validation and test hyperedges included;
    - the validation positives are the *training* positives (``load_val`` read ``train_only_pos + ground_train``),
      against validation negatives; model selection is on that;
    - validation and test have as many negatives *of each kind* as true positives, and the metric is the mean of
      four AUROCs (AP alike): positives against the sized, the motif and the clique negatives, and against a mix of
      the first third of each (``roc_average``);
    - the loss is binary cross-entropy with logits applied to ``sigmoid(sigmoid(score))``: the aggregator's
      ``classify`` returned ``F.sigmoid(logit)`` and the training loop took ``torch.sigmoid`` again before
      ``binary_cross_entropy_with_logits`` (later fixed upstream, ``tests/test_edge_pred_logits.py``). Squashed
      three times, the loss rewards a positive's score rising however high it already is, like a smooth 0-1 loss.
    """

    Config = HyperedgeTaskConfig
    metric = "auroc"
    default_select = "best_val"
    load_kwargs = {"add_self_loops": False}  # the hyperedges to predict are the dataset's own

    def __init__(self, data: Any, cfg: HyperedgeTaskConfig, seed: int, *, hidden: int,
                 device: torch.device | str = "cpu"):
        super().__init__(data, cfg, seed, hidden=hidden, device=device)
        self.paper = cfg.protocol == "paper"
        positives = unique_hyperedges(data.hyperedge_index.cpu(), min_size=2, distinct=not self.paper)
        forbidden = set(positives)
        rng = np.random.default_rng([seed, 0x5EED])
        if self.paper:
            self.positives, contexts = paper_split(positives, rng)
        else:
            split = split_indices(len(positives), seed, cfg.train_frac, cfg.val_frac)
            self.positives = {k: [positives[i] for i in v.tolist()] for k, v in split.items()}
            if cfg.negative_context == "observed":
                seen = self.positives["train"] + self.positives["val"]
                contexts = {"train": self.positives["train"], "val": seen, "test": seen}
            else:
                contexts = self.positives
        self.candidates = {}
        for part, ctx in contexts.items():
            pos = self.positives[part]
            if self.paper and part != "train":  # as many negatives of each kind as (true) positives
                neg = [(kind, h) for kind in NEGATIVE_SAMPLERS
                       for h in NEGATIVE_SAMPLERS[kind](ctx, len(pos), forbidden, rng)]
                pos = self.positives["train"] if part == "val" else pos
            else:
                neg = mixed_negatives(ctx, len(pos), forbidden, rng)
            self.candidates[part] = _Candidates(
                pos + [h for _, h in neg], [1.0] * len(pos) + [0.0] * len(neg),
                ["positive"] * len(pos) + [k for k, _ in neg], self.device)

        num_nodes = int(data.num_nodes)
        encoder_edges = list(self.positives["train"])
        if self.paper:
            encoder_edges += self.positives["val"] + self.positives["test"]
        if cfg.self_loops:
            encoder_edges += [(v,) for v in range(num_nodes)]
        self.hyperedge_index = _to_device(hyperedge_index_from_list(encoder_edges), self.device)
        self.num_hyperedges = len(encoder_edges)
        self.x = _to_device(data.x, self.device)
        self.in_channels = _num_features(self.x)
        self.out_channels = cfg.embed_dim or hidden

    def build_head(self) -> nn.Module:
        c = self.cfg
        return HyperedgeScorer(self.out_channels, c.scorer_hidden, c.scorer_layers, c.scorer_dropout,
                               c.edge_pooling)

    def train_batches(self, rng: np.random.Generator) -> Iterator[dict[str, Any]]:
        cands = self.candidates["train"]
        pos = rng.permutation(np.flatnonzero(cands.labels == 1))
        neg = rng.permutation(np.flatnonzero(cands.labels == 0))
        bs = self.cfg.batch_size
        for start in range(0, len(pos), bs):
            yield cands.batch(np.concatenate([pos[start:start + bs], neg[start:start + bs]]))

    def loss(self, module: nn.Module, batch: dict[str, Any]) -> Tensor:
        labels = batch["labels"]
        logits = module(self.x, self.hyperedge_index, self.num_hyperedges, nodes=batch["nodes"],
                        candidate=batch["candidate"], num_candidates=batch["num_candidates"])
        pos = labels == 1
        if self.paper:
            logits = torch.sigmoid(torch.sigmoid(logits))
        # the reference sums the mean loss of the positive and of the negative half
        return (F.binary_cross_entropy_with_logits(logits[pos], labels[pos])
                + F.binary_cross_entropy_with_logits(logits[~pos], labels[~pos]))

    @torch.no_grad()
    def evaluate(self, module: TaskModule) -> dict[str, dict[str, float]]:
        h = module.encoder(self.x, self.hyperedge_index, self.num_hyperedges)
        res = {}
        for part in ("val", "test"):
            cands = self.candidates[part]
            b = cands.batch(np.arange(len(cands)))
            score = module.head(h, b["nodes"], b["candidate"], b["num_candidates"]).float().cpu().numpy()
            res[part] = _scores(cands.labels, score, cands.kinds, self.paper)
        return res


@register_task("graph")
class HypergraphClassification(Task):
    """Hypergraph classification (DHG-Bench sections 2 and 3.1; model selection on validation accuracy).

    A batch is one block-diagonal hypergraph: node and hyperedge ids of each graph are offset by the counts of
    the graphs before it, and ``batch[v]`` names the graph of node ``v`` for the readout.
    """

    Config = GraphTaskConfig
    metric = "accuracy"
    default_select = "best_val"
    graph_level = True

    def __init__(self, data: Any, cfg: GraphTaskConfig, seed: int, *, hidden: int,
                 device: torch.device | str = "cpu"):
        super().__init__(data, cfg, seed, hidden=hidden, device=device)
        self.graphs = []
        for g in data:
            x = g.x.to_dense() if g.x.layout != torch.strided else g.x
            self.graphs.append((x.float(), g.hyperedge_index.long(), int(g.num_hyperedges), int(torch.as_tensor(g.y))))
        self.paper = cfg.protocol == "paper"
        split = (reference_graph_split if self.paper else split_indices)(len(self.graphs), seed, cfg.train_frac,
                                                                          cfg.val_frac)
        self.split = {k: v.numpy() for k, v in split.items()}
        self.y = np.array([g[3] for g in self.graphs])
        self.in_channels = int(self.graphs[0][0].size(1))
        self.num_classes = int(getattr(data, "num_classes", 0) or self.y.max() + 1)
        self.out_channels = cfg.embed_dim or hidden

    def build_head(self) -> nn.Module:
        c = self.cfg
        return GraphReadout(self.out_channels, self.num_classes, c.graph_pooling, c.readout_layers,
                            c.readout_hidden, c.readout_dropout)

    def collate(self, ids: Sequence[int]) -> dict[str, Any]:
        """Block-diagonal batch of the graphs ``ids`` (under the paper protocol, hyperedge ids offset by node
        counts and then renumbered consecutively, see :class:`GraphTaskConfig`)."""
        xs, incid, batch = [], [], []
        node_off = edge_off = 0
        for j, i in enumerate(ids):
            x, hei, m, _ = self.graphs[i]
            xs.append(x)
            incid.append(hei + torch.tensor([[node_off], [node_off if self.paper else edge_off]]))
            batch.append(torch.full((x.size(0),), j, dtype=torch.long))
            node_off += x.size(0)
            edge_off += m
        index = torch.cat(incid, 1)
        if self.paper:
            used, index[1] = torch.unique(index[1], return_inverse=True)
            edge_off = used.numel()
        if self.cfg.self_loops:  # a singleton per node, also beside one it has (add_self_loop_hyperedges)
            loops = torch.arange(node_off)
            index = torch.cat([index, torch.stack([loops, edge_off + loops])], 1)
            edge_off += node_off
        d = self.device
        return {"x": torch.cat(xs).to(d), "hyperedge_index": index.to(d), "num_hyperedges": edge_off,
                "batch": torch.cat(batch).to(d), "num_graphs": len(ids),
                "y": torch.as_tensor(self.y[np.asarray(ids)]).long().to(d)}

    def _chunks(self, ids: np.ndarray) -> Iterator[dict[str, Any]]:
        for start in range(0, len(ids), self.cfg.batch_size):
            yield self.collate(ids[start:start + self.cfg.batch_size])

    def train_batches(self, rng: np.random.Generator) -> Iterator[dict[str, Any]]:
        return self._chunks(rng.permutation(self.split["train"]))

    def _forward(self, module: nn.Module, b: dict[str, Any]) -> Tensor:
        return module(b["x"], b["hyperedge_index"], b["num_hyperedges"], batch=b["batch"], num_graphs=b["num_graphs"])

    def loss(self, module: nn.Module, batch: dict[str, Any]) -> Tensor:
        return F.cross_entropy(self._forward(module, batch), batch["y"])

    @torch.no_grad()
    def evaluate(self, module: TaskModule) -> dict[str, dict[str, float]]:
        res = {}
        for part in ("val", "test"):
            ids = self.split[part]
            pred = np.concatenate([self._forward(module, b).argmax(-1).cpu().numpy() for b in self._chunks(ids)])
            y = self.y[ids]
            res[part] = {"accuracy": 100.0 * accuracy_score(y, pred),
                         "macro_f1": 100.0 * f1_score(y, pred, average="macro", zero_division=0)}
        return res
