"""Small hypergraphs shared by the HNN tests (one copy of each generator)."""
from __future__ import annotations

import numpy as np
import torch

from hypergvl.models import tasks as T
from hypergvl.models.datasets.data import HypergraphData, HypergraphGraphDataset


def random_hypergraph(seed: int, num_nodes: int = 9, num_edges: int = 6, max_order: int = 4):
    """Random hyperedges of orders 1..max_order over nodes 0..num_nodes-2; the last node is isolated and at
    least one hyperedge has order 1."""
    g = torch.Generator().manual_seed(seed)
    edges = [[int(torch.randint(num_nodes - 1, (1,), generator=g))]]
    for _ in range(num_edges - 1):
        k = int(torch.randint(1, max_order + 1, (1,), generator=g))
        edges.append(sorted(torch.randperm(num_nodes - 1, generator=g)[:k].tolist()))
    hei = torch.tensor([[v for e in edges for v in e], [j for j, e in enumerate(edges) for _ in e]])
    return edges, hei, num_nodes


def planted(n=60, k=3, m=45, seed=0, order_stop=6):
    """Nodes in ``k`` classes, hyperedges of 2..order_stop-1 nodes inside one class, noisy one-hot features."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    hes = set()
    while len(hes) < m:
        members = np.flatnonzero(y == rng.integers(k))
        hes.add(tuple(sorted(rng.choice(members, int(rng.integers(2, order_stop)), replace=False).tolist())))
    hes = sorted(hes)
    x = torch.tensor(np.eye(k)[y] + 0.5 * rng.standard_normal((n, k)), dtype=torch.float32)
    return HypergraphData(x=x, y=torch.tensor(y), hyperedge_index=T.hyperedge_index_from_list(hes),
                          num_hyperedges=len(hes), num_nodes=n, name="planted")


def graph_set(num=30, seed=0, nodes_stop=8, extra_edges=3):
    """``num`` small two-class hypergraphs (classes alternate; odd ones have ``extra_edges`` more hyperedges)."""
    rng = np.random.default_rng(seed)
    graphs = []
    for i in range(num):
        n = int(rng.integers(4, nodes_stop))
        hes = sorted({tuple(sorted(rng.choice(n, int(rng.integers(2, n + 1)), replace=False).tolist()))
                      for _ in range(2 + i % 2 * extra_edges)})
        x = torch.zeros(n, 3)
        x[:, i % 2] = 1.0
        graphs.append(HypergraphData(x=x + 0.1 * torch.rand(n, 3), y=torch.tensor([i % 2]), num_nodes=n,
                                     hyperedge_index=T.hyperedge_index_from_list(hes), num_hyperedges=len(hes)))
    return HypergraphGraphDataset(graphs, num_classes=2, num_features=3, name="toy-graphs")


def output_and_grads(model, x, hyperedge_index) -> list:
    """``[output, d/dx, d/dparam...]`` of a fixed, non-symmetric weighting of ``model(x, hyperedge_index)``:
    two implementations of one function must agree on all of them."""
    x = x.clone().requires_grad_(True)
    out = model(x, hyperedge_index)
    (out * torch.arange(out.numel(), dtype=out.dtype).view_as(out).sin()).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    return [out.detach(), x.grad, *grads]


def dense_hjrl_reconstruction(xo, yo, h, style: str):
    """HJRL's reconstruction loss written densely over the ``N x M`` incidence ``h``: BCE with logits of
    ``X Y^T`` and positive weight ``(NM - nnz)/nnz`` (``"paper"``), or the reference's sigmoid of
    ``log_softmax(X) Y^T`` with ``(N^2 - nnz)/nnz`` (``"dhgbench"``)."""
    import torch.nn.functional as F

    n, m = h.shape
    if style == "paper":
        logits, pw = xo @ yo.t(), (n * m - h.sum()) / h.sum()
    else:
        logits, pw = torch.sigmoid(F.log_softmax(xo, -1) @ yo.t()), (n * n - h.sum()) / h.sum()
    return F.binary_cross_entropy_with_logits(logits, h, pos_weight=pw)


def dense_h(hei: torch.Tensor, n: int, m: int) -> torch.Tensor:
    """The dense float64 incidence matrix ``H`` (n x m) of an incidence list: the naive side of the exactness tests."""
    h = torch.zeros(n, m, dtype=torch.float64)
    h[hei[0], hei[1]] = 1.0
    return h


def inv(t: torch.Tensor, p: float = 1.0) -> torch.Tensor:
    """``t ** -p`` with 0 where ``t`` is 0, written independently of the library's ``sparse.inv``."""
    out = t.pow(-p)
    return torch.where(torch.isinf(out), torch.zeros_like(out), out)
