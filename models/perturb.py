"""Data perturbations of the DHG-Bench robustness study (section 4.3 and appendix B.4), as pure functions.

Appendix B.4: "we simulate data perturbation scenarios from three perspectives: structure, feature, and supervision
signal. Each perturbation setting is repeated 5 times with different random seeds". The six kinds:

* ``remove_incidence`` / ``add_incidence`` -- "we randomly remove or add a proportion of node-hyperedge
  connections (i.e., hyperlinks) in the original hypergraph ... The modification ratio ranges from 0 to 0.9":
  exactly ``floor(ratio * nnz)`` incidences are removed (uniformly, without replacement) or added (uniform new
  (node, hyperedge) pairs over the existing nodes and hyperedges, none already present). A hyperedge left empty by
  removal is dropped and the others renumbered in order (the reference instead appends one padding incidence).
* ``feature_noise`` -- "we use the mean of the maximum feature value of each node as the reference amplitude r,
  and add Gaussian noise lambda * r * eps to each feature dimension, where eps ~ N(0, 1)": ``X + lambda r eps`` on
  every entry of every node (lambda 0-0.9).
* ``feature_mask`` -- "we randomly mask a certain proportion of node features by filling them with zeros"
  (0-0.9): exactly ``floor(ratio * F)`` whole feature columns (``by="column"``, what the reference's
  ``spar_feat`` does, though with an exact count instead of independent coin flips), or exactly
  ``floor(ratio * N * F)`` entries (``by="entry"``).
* ``label_noise`` -- "a certain proportion of training samples are randomly assigned incorrect labels by uniformly
  flipping them to one of the other classes" (0-0.2): exactly ``floor(ratio * |train|)`` training nodes.
  Validation and test labels are never touched.
* ``label_sparsity`` -- "reducing the ratio of training nodes" (0-0.8): exactly ``floor(ratio * |train|)``
  training nodes leave the training set (they join neither validation nor test).

Every function is ``fn(data, ratio, seed, train, **options) -> Perturbed``, a pure function: the inputs are never
modified (the result holds new tensors wherever something changed), and the draw depends only on ``(data, ratio,
seed)`` (and the training indices for the label kinds): the same arguments give the same result, another seed a
different one. The random stream of a kind does not depend on the ratio, so the changes at a smaller ratio are a
subset of those at a larger one (a prefix of one random permutation; for noise one ``eps`` scaled by lambda).

The reference code (``../shared/reference/dhgbench-models.md`` section 10) differs in ways that are bugs, not
protocol: its label flips accumulate across seeds and leak into later seeds' validation/test sets, its structure
and feature perturbations are drawn once, unseeded, and shared by all seeds, and it perturbs the node
classification singletons too (the study can do the latter on request: ``--perturb-self-loops``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
import torch
from torch import Tensor

from hypergvl.models.datasets.data import HypergraphData
from hypergvl.models.datasets.processing import incidence_from_pairs
from hypergvl.registry import Registry

__all__ = ["PERTURBATIONS", "Perturbation", "Perturbed", "register_perturbation", "get_perturbation", "count",
           "apply", "remove_incidence", "add_incidence", "feature_noise", "feature_mask", "label_noise",
           "label_sparsity"]


@dataclass(frozen=True)
class Perturbed:
    """A perturbation's result: the data and training indices to use, and how many units it changed."""

    data: HypergraphData
    train: Optional[Tensor]
    changed: int  # incidences removed/added, entries or columns masked, labels flipped, training nodes removed
    unit: str


@dataclass(frozen=True)
class Perturbation:
    """A registered perturbation kind: its function, level, the paper's grid (appendix B.4) and what it counts."""

    name: str
    fn: Callable[..., Perturbed]
    level: str  # structure | feature | supervision (the panels of Figures 2, 3 and 4)
    grid: tuple[float, ...]
    unit: str
    label: str  # axis label of the figures

    @property
    def max_ratio(self) -> float:
        return max(self.grid)


PERTURBATIONS: Registry[Perturbation] = Registry("perturbation")

_TENTHS = tuple(round(0.1 * i, 2) for i in range(10))


def register_perturbation(name: str, *, level: str, grid: tuple[float, ...], unit: str, label: str):
    """Decorator adding a perturbation function to :data:`PERTURBATIONS` (duplicates rejected)."""

    def decorate(fn: Callable[..., Perturbed]) -> Callable[..., Perturbed]:
        PERTURBATIONS.register(name, Perturbation(name, fn, level, grid, unit, label))
        return fn

    return decorate


def get_perturbation(name: str) -> Perturbation:
    """The perturbation ``name``; an unknown name raises :class:`~hypergvl.registry.UnknownName` listing the kinds."""
    return PERTURBATIONS[name]


def count(ratio: float, total: int) -> int:
    """``floor(ratio * total)``, robust to binary fractions (0.3 * 10 is 3, not 2)."""
    return int(math.floor(ratio * total + 1e-9))


def _rng(kind: str, seed: int) -> np.random.Generator:
    salt = sum((i + 1) * ord(c) for i, c in enumerate(kind))  # a fixed number per kind, independent of ratio
    return np.random.default_rng([int(seed), salt, 0x9E37])


def _check(kind: str, ratio: float, limit: float = 1.0) -> None:
    if not (isinstance(ratio, (int, float)) and 0 <= ratio <= limit):
        raise ValueError(f"{kind}: ratio must be in [0, {limit}]; got {ratio!r}")


def _dense(x: Tensor) -> Tensor:
    return x.to_dense() if x.layout != torch.strided else x.clone()


def _like(x_new: Tensor, x_old: Tensor) -> Tensor:
    return x_new.to_sparse_csr() if x_old.layout == torch.sparse_csr else x_new


@register_perturbation("remove_incidence", level="structure", grid=_TENTHS, unit="incidences",
                       label="hyperlink removal ratio")
def remove_incidence(data: HypergraphData, ratio: float, seed: int, train: Optional[Tensor] = None) -> Perturbed:
    """Remove exactly ``floor(ratio * nnz)`` node-hyperedge incidences chosen uniformly; empty hyperedges are
    dropped and the rest renumbered in order."""
    _check("remove_incidence", ratio)
    nnz = data.num_incidences
    k = count(ratio, nnz)
    drop = _rng("remove_incidence", seed).permutation(nnz)[:k]
    keep = np.ones(nnz, dtype=bool)
    keep[drop] = False
    ei = data.hyperedge_index.numpy()
    index, m = incidence_from_pairs(ei[0, keep], ei[1, keep])
    return Perturbed(data.replace(hyperedge_index=index, num_hyperedges=m), train, k, "incidences")


@register_perturbation("add_incidence", level="structure", grid=_TENTHS, unit="incidences",
                       label="hyperlink addition ratio")
def add_incidence(data: HypergraphData, ratio: float, seed: int, train: Optional[Tensor] = None) -> Perturbed:
    """Add exactly ``floor(ratio * nnz)`` new incidences: distinct (node, hyperedge) pairs drawn uniformly from
    all ``N x M`` pairs that are not incidences yet (rejection in fixed-size batches, so the draw does not depend
    on the ratio)."""
    _check("add_incidence", ratio)
    n, m, nnz = data.num_nodes, data.num_hyperedges, data.num_incidences
    k = count(ratio, nnz)
    if k > n * m - nnz:
        raise ValueError(f"add_incidence: cannot add {k} incidences, only {n * m - nnz} node-hyperedge pairs are free")
    ei = data.hyperedge_index.numpy()
    taken = set((ei[1] * n + ei[0]).tolist())
    rng = _rng("add_incidence", seed)
    new: list[int] = []
    batch = max(nnz, 1024)
    while len(new) < k:
        for key in (rng.integers(0, m, batch) * n + rng.integers(0, n, batch)).tolist():
            if key not in taken:
                taken.add(key)
                new.append(key)
        # (the loop stops as soon as enough are found; extra draws of the last batch are discarded)
    new_keys = np.asarray(new[:k], dtype=np.int64)
    nodes = np.concatenate([ei[0], new_keys % n])
    edges = np.concatenate([ei[1], new_keys // n])
    index, m2 = incidence_from_pairs(nodes, edges)
    return Perturbed(data.replace(hyperedge_index=index, num_hyperedges=m2), train, k, "incidences")


@register_perturbation("feature_noise", level="feature", grid=_TENTHS, unit="entries",
                       label="feature noise ratio λ")
def feature_noise(data: HypergraphData, ratio: float, seed: int, train: Optional[Tensor] = None) -> Perturbed:
    """``X + lambda * r * eps`` with ``r`` the mean over nodes of each node's maximum feature and ``eps`` i.i.d.
    standard normal for every entry (``ratio`` is lambda). The features become dense."""
    _check("feature_noise", ratio)
    x = _dense(data.x)
    if ratio == 0:
        return Perturbed(data.replace(x=_like(x, data.x)), train, 0, "entries")
    r = float(x.max(dim=1).values.mean()) if x.numel() else 0.0
    eps = torch.from_numpy(_rng("feature_noise", seed).standard_normal(tuple(x.shape), dtype=np.float32))
    return Perturbed(data.replace(x=x + (ratio * r) * eps), train, int(x.numel()), "entries")


@register_perturbation("feature_mask", level="feature", grid=_TENTHS, unit="columns",
                       label="feature sparsity ratio")
def feature_mask(data: HypergraphData, ratio: float, seed: int, train: Optional[Tensor] = None, *,
                 by: str = "column") -> Perturbed:
    """Zero exactly ``floor(ratio * F)`` feature columns (``by="column"``, the reference's per-dimension mask) or
    exactly ``floor(ratio * N * F)`` entries (``by="entry"``); the layout (dense or sparse) is kept."""
    _check("feature_mask", ratio)
    if by not in ("column", "entry"):
        raise ValueError(f"feature_mask: by must be 'column' or 'entry'; got {by!r}")
    x = _dense(data.x)
    rng = _rng(f"feature_mask/{by}", seed)
    if by == "column":
        k = count(ratio, x.shape[1])
        x[:, torch.from_numpy(rng.permutation(x.shape[1])[:k])] = 0
    else:
        k = count(ratio, x.numel())
        x.view(-1)[torch.from_numpy(rng.permutation(x.numel())[:k])] = 0
    return Perturbed(data.replace(x=_like(x, data.x)), train, k, "columns" if by == "column" else "entries")


def _train(kind: str, train: Optional[Tensor]) -> Tensor:
    if train is None:
        raise ValueError(f"{kind} needs the training indices (train=)")
    return torch.as_tensor(train).long().view(-1)


@register_perturbation("label_noise", level="supervision", grid=(0.0, 0.05, 0.1, 0.15, 0.2), unit="labels",
                       label="label noise ratio")
def label_noise(data: HypergraphData, ratio: float, seed: int, train: Optional[Tensor] = None) -> Perturbed:
    """Flip exactly ``floor(ratio * |train|)`` training labels, each uniformly to one of the other classes;
    labels outside ``train`` (validation, test) are never touched."""
    _check("label_noise", ratio)
    train = _train("label_noise", train)
    c = int(data.y.max()) + 1
    if c < 2:
        raise ValueError("label_noise needs at least two classes")
    rng = _rng("label_noise", seed)
    order = rng.permutation(train.numel())
    offsets = torch.from_numpy(rng.integers(1, c, train.numel()))  # 1..C-1: never the true class
    k = count(ratio, train.numel())
    chosen = train[torch.from_numpy(order[:k])]
    y = data.y.clone()
    y[chosen] = (y[chosen] + offsets[:k]) % c
    return Perturbed(data.replace(y=y), train, k, "labels")


@register_perturbation("label_sparsity", level="supervision", grid=(0.0, 0.2, 0.4, 0.6, 0.8),
                       unit="training nodes", label="label sparsity ratio")
def label_sparsity(data: HypergraphData, ratio: float, seed: int, train: Optional[Tensor] = None) -> Perturbed:
    """Remove exactly ``floor(ratio * |train|)`` nodes, chosen uniformly, from the training set (their labels
    stay; validation and test are unchanged)."""
    _check("label_sparsity", ratio)
    train = _train("label_sparsity", train)
    k = count(ratio, train.numel())
    if k >= train.numel() and train.numel():
        raise ValueError(f"label_sparsity: ratio {ratio} leaves no training node")
    keep = np.sort(_rng("label_sparsity", seed).permutation(train.numel())[k:])
    return Perturbed(data, train[torch.from_numpy(keep)].sort().values, k, "training nodes")


def apply(kind: str, data: HypergraphData, ratio: float, seed: int, train: Optional[Tensor] = None,
          **options: Any) -> Perturbed:
    """``PERTURBATIONS[kind].fn(data, ratio, seed, train, **options)``."""
    return get_perturbation(kind).fn(data, ratio, seed, train, **options)
