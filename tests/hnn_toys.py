"""Small hypergraphs shared by the HNN tests (one copy of each generator), and the features, naive references and
small models that several test files under ``tests/models`` use."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.utils import scatter, softmax

from hypergvl.models import tasks as T
from hypergvl.models.datasets.data import HypergraphData, HypergraphGraphDataset
from hypergvl.models.nn import allset, build_model, edhnn, unignn
from hypergvl.models.nn.base import dense
from hypergvl.models.nn.dropout import dropout as drop
from hypergvl.models.nn.mlp import MLP

SEEDS = [0, 1, 2]


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


def dense_incidence(edges, num_nodes, dtype=None):
    """The dense incidence matrix ``H`` (num_nodes x len(edges)) of a list of hyperedges (member lists), in ``dtype``
    (torch's default when None)."""
    h = torch.zeros(num_nodes, len(edges), dtype=dtype)
    for j, e in enumerate(edges):
        h[e, j] = 1.0
    return h


def sparse_features(n, f, density, seed):
    """Float64 features with about ``density`` of them nonzero, as a CSR tensor."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, f, generator=g, dtype=torch.float64) * (torch.rand(n, f, generator=g) < density)
    return x.to_sparse_csr()


def mostly_zero_features(n: int, f: int, seed: int) -> torch.Tensor:
    """Float64 features (a strided tensor), about 40 % nonzero, some negative, one all-zero row (node 0)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, f, dtype=torch.float64, generator=g) * (torch.rand(n, f, generator=g) < 0.4)
    x[0] = 0.0
    return x


def param_grads(model):
    """Every parameter's gradient, by name (copies)."""
    return {k: p.grad.clone() for k, p in model.named_parameters()}


def grads(loss: torch.Tensor, tensors) -> list[torch.Tensor]:
    """The gradients of ``loss`` with respect to ``tensors``, zeros for the unused ones."""
    return [torch.zeros_like(t) if g is None else g
            for t, g in zip(tensors, torch.autograd.grad(loss, tensors, allow_unused=True))]


def make_task(kind: str):
    """A small task of each kind ("node", "hyperedge", "graph") on ``planted`` hypergraphs and a ``graph_set``."""
    if kind == "node":
        return T.NodeClassification(planted(n=48, k=3, m=40, seed=0, order_stop=5), T.NodeTaskConfig(), 0, hidden=6)
    if kind == "hyperedge":
        return T.HyperedgePrediction(planted(n=48, k=3, m=60, seed=0, order_stop=5),
                                     T.HyperedgeTaskConfig(batch_size=8), 0, hidden=6)
    return T.HypergraphClassification(graph_set(num=16, seed=0, nodes_stop=7, extra_edges=2),
                                      T.GraphTaskConfig(batch_size=4), 0, hidden=6)


def small_dphgnn(**kwargs):
    """A small DPHGNN (4 -> 3 channels), initialised from seed 0."""
    torch.manual_seed(0)
    return build_model("DPHGNN", in_channels=4, hidden_channels=6, out_channels=3, expansion_dim=8,
                       expansion_hidden=5, attention_dim=4, spectral_dim=3, fc_dim=5, **kwargs)


# --------------------------------------- AllSet, ED-HNN, UniGAT: the per-incidence formulas their rewrites replaced
# The previous implementations (gather to the incidences, compute there, scatter back), kept only as the reference:
# ``assert_same_function`` runs a model and, with its forward patched to the previous one, the reference, and
# compares outputs and every parameter's gradient, in evaluation and in training (same seed: same dropout masks).

def hypergraph_with_duplicate(seed: int, num_nodes: int = 11, num_edges: int = 8):
    """``random_hypergraph`` (isolated last node, an order-1 hyperedge) plus one node listed twice in a hyperedge."""
    edges, index, n = random_hypergraph(seed, num_nodes, num_edges)
    j = max(range(len(edges)), key=lambda i: len(edges[i]))
    index = torch.cat([index, torch.tensor([[edges[j][0]], [j]])], dim=1)
    return index, n, len(edges)


def old_pma(pma, x, source, target, num_targets):
    k = pma.lin_k(x).view(-1, pma.heads, pma.head_channels)
    v = pma.lin_v(x).view(-1, pma.heads, pma.head_channels)
    score = F.leaky_relu((k * pma.seed).sum(-1), 0.2)[source]
    alpha = softmax(score, target, num_nodes=num_targets).unsqueeze(-1)
    out = scatter(v[source] * alpha, target, dim=0, dim_size=num_targets, reduce="sum") + pma.seed
    out = pma.ln0(out.reshape(num_targets, -1))
    return pma.ln1(out + F.relu(pma.rff(out)))


def old_deepsets(block, x, source, target, num_targets):
    h = drop(F.relu(block.enc(x) if isinstance(block.enc, MLP) else dense(x)), block.dropout, block.training)
    h = scatter(h[source], target, dim=0, dim_size=num_targets, reduce=block.aggregate)
    return F.relu(block.dec(h))


def old_setgnn(model, x, hyperedge_index, num_hyperedges=None):
    inc = model.incidence(x, hyperedge_index, num_hyperedges)
    v, e, n, m = inc.node, inc.edge, inc.num_nodes, inc.num_edges
    h = model.features(x)
    block = old_pma if isinstance(model.v2e[0], allset.PMA) else old_deepsets
    layers = []
    if model.gpr:
        layers.append(F.relu(model.gpr_mlp(h)))
    else:
        h = drop(h, model.input_dropout, model.training)
    for v2e, e2v in zip(model.v2e, model.e2v):
        h = drop(F.relu(block(v2e, h, v, e, m)), model.dropout, model.training)
        h = F.relu(block(e2v, h, e, v, n))
        layers.append(h)
        h = drop(h, model.dropout, model.training)
    if model.gpr:
        h = model.gpr_weights(torch.stack(layers, dim=-1)).squeeze(-1)
    return model.decoder(h)


def old_equivset(conv, x, x0, inc):
    v, e = inc.node, inc.edge
    m = scatter(conv.phi(x)[v], e, dim=0, dim_size=inc.num_edges, reduce=conv.aggregate)
    message = m[e] if isinstance(conv.rho, nn.Identity) else conv.rho(torch.cat([x[v], m[e]], dim=-1))
    out = scatter(message, v, dim=0, dim_size=inc.num_nodes, reduce=conv.aggregate)
    return conv.varphi(torch.lerp(out, x0, conv.alpha))


def old_unigat(conv, x, inc, first_aggregate):
    v, e, n = inc.node, inc.edge, inc.num_nodes
    h = conv.lin(x).view(n, conv.heads, conv.out_channels)
    he = scatter(h[v], e, dim=0, dim_size=inc.num_edges, reduce="sum")
    if first_aggregate == "mean":
        he = he * inv(inc.deg_e).view(-1, 1, 1)
    score = F.leaky_relu((he * conv.att_e).sum(-1), conv.negative_slope)[e]
    alpha = drop(softmax(score, v, num_nodes=n), conv.attention_dropout, conv.training)
    return scatter(he[e] * alpha.unsqueeze(-1), v, dim=0, dim_size=n, reduce="sum").reshape(n, -1)


OLD = {"AllDeepSets": (allset._SetGNN, old_setgnn), "AllSetTransformer": (allset._SetGNN, old_setgnn),
       "ED-HNN": (edhnn.EquivSetConv, old_equivset), "UniGAT": (unignn.UniGATConv, old_unigat)}


def _run(model, x, index, m, seed):
    torch.manual_seed(seed)
    model.zero_grad()
    out = model(x, index, m)
    probe = torch.linspace(-1.0, 1.0, out.numel(), dtype=out.dtype).view_as(out)
    (out * probe).sum().backward()
    return out.detach(), {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}


def assert_same_function(name, monkeypatch, layout="csr", seed=0, modes=("eval", "train"), size=(11, 8), **kwargs):
    index, n, m = hypergraph_with_duplicate(seed, *size)
    torch.manual_seed(seed)
    model = build_model(name, in_channels=7, hidden_channels=6, out_channels=3, **kwargs).double()
    x = torch.rand(n, 7, dtype=torch.float64) * (torch.rand(n, 7) < 0.4)  # sparse-looking, one-hot-ish rows
    x[0] = 0.0                                                               # an all-zero row
    xin = x.to_sparse_csr() if layout == "csr" else x
    cls, old = OLD[name]
    for mode in modes:
        model.train(mode == "train")
        new_out, new_grad = _run(model, xin, index, m, seed + 1)
        with monkeypatch.context() as patch:
            patch.setattr(cls, "forward", old)
            old_out, old_grad = _run(model, xin, index, m, seed + 1)
        torch.testing.assert_close(new_out, old_out, rtol=1e-9, atol=1e-10)
        assert new_grad.keys() == old_grad.keys() and new_grad
        for key in new_grad:
            torch.testing.assert_close(new_grad[key], old_grad[key], rtol=1e-8, atol=1e-10, msg=f"{mode} {key}")
