"""HyperGT: a Transformer over node and hyperedge tokens with kernelised all-pair attention, incidence positional
encodings and a node-hyperedge link regulariser."""
from __future__ import annotations

import math
from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import HypergraphModel, Linear
from .checks import check_bool, check_choice, check_common, check_float, check_int
from .dropout import dropout as drop, keep_mask
from .registry import register_model
from .sparse import ATTENTION_SCOPES, GraphGroups, Incidence, SparseOperator, inv

POSITIONAL_ENCODINGS = ("trained", "random", "none")
HYPEREDGE_FEATURES = ("mean", "zero")
_CHECKPOINT_ELEMENTS = 1 << 22  # token chunks of attention and link terms hold at most this many floats


def orthogonal_features(num_features: int, dim: int, generator: torch.Generator | None = None) -> Tensor:
    r"""Performer's random feature matrix :math:`\mathbf{W} \in \mathbb{R}^{m \times d}` (NodeFormer's
    ``create_projection_matrix``, scaling 0): stacked blocks of QR-orthogonal :math:`d \times d` rows, each row
    rescaled to the norm of a :math:`d`-dimensional standard Gaussian vector."""
    blocks = []
    for _ in range(-(-num_features // dim)):
        q, _ = torch.linalg.qr(torch.randn(dim, dim, generator=generator))
        blocks.append(q.t())
    norms = torch.randn(num_features, dim, generator=generator).norm(dim=1, keepdim=True)
    return torch.cat(blocks)[:num_features] * norms


def _per_graph(values: Tensor, graph: Tensor, reduce: str, dim: int = 1) -> Tensor:
    """``values`` reduced (``"sum"``/``"amax"``) over the tokens (dim ``dim``) of each graph (``graph[t]``: the
    graph of token ``t``), read back per token: the shape of ``values``."""
    shape = list(values.shape)
    shape[dim] = int(graph.max()) + 1 if graph.numel() else 0
    index = graph.view([-1 if d == dim else 1 for d in range(values.dim())]).expand_as(values)
    out = values.new_full(shape, -math.inf if reduce == "amax" else 0.0)
    return out.scatter_reduce_(dim, index, values, reduce).index_select(dim, graph)


def _kernel_parts(data: Tensor, projection: Tensor, is_query: bool,
                  graph: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``(u, dash, stab, exp(dash - |u|^2/2 - stab))`` of :func:`softmax_kernel`."""
    u = data * data.size(-1) ** -0.25
    dash = u @ projection.t()
    diag = u.square().sum(-1, keepdim=True) / 2
    if is_query:
        stab = dash.amax(-1, keepdim=True)
    elif graph is None:
        stab = dash.amax(dim=(1, 2), keepdim=True)
    else:
        stab = _per_graph(dash.amax(-1, keepdim=True), graph, "amax")
    return u, dash, stab, torch.exp(dash - diag - stab)


def softmax_kernel(data: Tensor, projection: Tensor, is_query: bool, eps: float = 1e-6,
                   graph: Tensor | None = None) -> Tensor:
    r"""Positive random features :math:`\phi` of the softmax kernel (Performer, as NodeFormer computes them):
    with :math:`\mathbf{u} = d^{-1/4}\mathbf{x}`, :math:`\phi(\mathbf{x}) = m^{-1/2}(\exp(\mathbf{W}\mathbf{u}
    - \lVert\mathbf{u}\rVert^2/2 - c) + \epsilon)`, so that :math:`\mathbb{E}[\phi(\mathbf{q})^\top
    \phi(\mathbf{k})] \propto \exp(\mathbf{q}^\top\mathbf{k}/\sqrt{d})`. The stabiliser :math:`c` is the row's
    maximum for queries and the maximum over all tokens for keys (per head; with ``graph``, the graph of each token,
    over the tokens of the key's graph), constants that cancel in the attention's normalisation but for
    :math:`\epsilon`. ``data``: ``[H, T, d]``; ``projection``: ``[m, d]``; returns ``[H, T, m]``."""
    return (_kernel_parts(data, projection, is_query, graph)[3] + eps) / math.sqrt(projection.size(0))


class _KernelFeatures(torch.autograd.Function):
    r""":func:`softmax_kernel` of the projected tokens :math:`(\mathbf{z}\mathbf{W}^\top + \mathbf{b}) /
    \sqrt{\tau}` (``z`` ``[T, D_in]``, ``weight`` ``[H d, D_in]``; returns ``[H, T, m]``), one head at a time and
    keeping only the inputs: the projection and the exponentials are recomputed in the backward pass, so no
    ``[H, T, d]`` tensor is held between the passes. The stabiliser's gradient goes to the maxima, shared evenly
    between ties, as ``amax``'s does."""

    @staticmethod
    def data(z: Tensor, weight: Tensor, bias: Tensor, head: int, heads: int, tau: float) -> Tensor:
        r"""Head ``head``'s projected tokens ``[1, T, d]`` (:math:`/\sqrt{\tau}`)."""
        rows = slice(head * weight.size(0) // heads, (head + 1) * weight.size(0) // heads)
        return (F.linear(z, weight[rows], bias[rows]) / math.sqrt(tau)).unsqueeze(0)

    @staticmethod
    def forward(ctx: Any, z: Tensor, weight: Tensor, bias: Tensor, projection: Tensor,  # type: ignore[override]
                heads: int, tau: float, is_query: bool, graph: Tensor | None = None) -> Tensor:
        ctx.heads, ctx.tau, ctx.is_query, ctx.graph = heads, tau, is_query, graph
        ctx.save_for_backward(z, weight, bias, projection)
        return torch.cat([softmax_kernel(_KernelFeatures.data(z, weight, bias, h, heads, tau), projection, is_query,
                                         graph=graph) for h in range(heads)])

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:  # type: ignore[override]
        z, weight, bias, projection = ctx.saved_tensors
        d_lin = z.new_empty(z.size(0), weight.size(0))
        width = weight.size(0) // ctx.heads
        dims = (-1,) if ctx.is_query else (1, 2)
        for h in range(ctx.heads):
            data = _KernelFeatures.data(z, weight, bias, h, ctx.heads, ctx.tau)
            u, dash, stab, e = _kernel_parts(data, projection, ctx.is_query, ctx.graph)
            a = grad[h:h + 1] * e / math.sqrt(projection.size(0))  # d loss / d exponent
            ties = dash == stab
            if ctx.is_query or ctx.graph is None:
                share = a.sum(dims, keepdim=True) / ties.sum(dims, keepdim=True)
            else:  # the stabiliser of each graph's keys: its gradient shared by that graph's maxima
                share = (_per_graph(a.sum(-1, keepdim=True), ctx.graph, "sum")
                         / _per_graph(ties.sum(-1, keepdim=True).to(a.dtype), ctx.graph, "sum"))
            d_dash = a - ties * share
            du = d_dash @ projection - a.sum(-1, keepdim=True) * u
            d_lin[:, h * width:(h + 1) * width] = du[0] * (data.size(-1) ** -0.25 / math.sqrt(ctx.tau))
        dz = d_lin @ weight if ctx.needs_input_grad[0] else None
        dw = d_lin.t() @ z if ctx.needs_input_grad[1] else None
        db = d_lin.sum(0) if ctx.needs_input_grad[2] else None
        return dz, dw, db, None, None, None, None, None


def _token_chunks(total: int, per_token: int) -> list[slice]:
    """Slices of at most ``_CHECKPOINT_ELEMENTS // per_token`` tokens (at least one) covering ``range(total)``."""
    step = max(1, _CHECKPOINT_ELEMENTS // max(per_token, 1))
    return [slice(i, min(i + step, total)) for i in range(0, total, step)] or [slice(0, 0)]


def _outer(a: Tensor, b: Tensor) -> Tensor:
    """``[H, C, K]`` x ``[H, C, m]`` -> ``[H, C, K m]``: entry ``(k, i)`` is ``a[..., k] * b[..., i]``."""
    return (a.unsqueeze(-1) * b.unsqueeze(-2)).flatten(2)


class _KeyValue(torch.autograd.Function):
    r""":math:`\mathbf{U}_{hk} = \sum_j w_{hjk}\,\phi(\mathbf{k}_{hj})\mathbf{v}_{hj}^\top` (``[H, K, m, D]``) from
    ``kf`` ``[H, T, m]``, ``w`` ``[H, T, K]``, ``v`` ``[H, T, D]``: one batched product over tokens, in token
    chunks whose ``[H, C, K m]`` weighted features are rebuilt in the backward pass instead of kept."""

    @staticmethod
    def forward(ctx: Any, kf: Tensor, w: Tensor, v: Tensor) -> Tensor:  # type: ignore[override]
        heads, t, m = kf.shape
        k = w.size(-1)
        out = kf.new_zeros(heads, k * m, v.size(-1))
        for s in _token_chunks(t, heads * k * m):
            out.baddbmm_(_outer(w[:, s], kf[:, s]).transpose(1, 2), v[:, s])
        ctx.save_for_backward(kf, w, v)
        return out.view(heads, k, m, -1)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:  # type: ignore[override]
        kf, w, v = ctx.saved_tensors
        heads, t, m = kf.shape
        k = w.size(-1)
        grad = grad.reshape(heads, k * m, -1)
        dkf = torch.empty_like(kf) if ctx.needs_input_grad[0] else None
        dw = torch.empty_like(w) if ctx.needs_input_grad[1] else None
        dv = torch.empty_like(v) if ctx.needs_input_grad[2] else None
        for s in _token_chunks(t, heads * k * m):
            if dkf is not None or dw is not None:
                dkw = torch.bmm(v[:, s], grad.transpose(1, 2)).view(heads, -1, k, m)
                if dkf is not None:
                    dkf[:, s] = (dkw * w[:, s].unsqueeze(-1)).sum(2)
                if dw is not None:
                    dw[:, s] = (dkw * kf[:, s].unsqueeze(2)).sum(-1)
            if dv is not None:
                dv[:, s] = torch.bmm(_outer(w[:, s], kf[:, s]), grad)
        return dkf, dw, dv


class _QueryMix(torch.autograd.Function):
    r""":math:`\mathbf{z}_{ht} = \sum_k c_{htk}\,\phi(\mathbf{q}_{ht})^\top\mathbf{U}_{hk}` (``[H, T, D]``) from
    ``qf`` ``[H, T, m]``, ``c`` ``[H, T, K]``, ``u`` ``[H, K, m, D]``: one batched product, in token chunks as
    :class:`_KeyValue`."""

    @staticmethod
    def forward(ctx: Any, qf: Tensor, c: Tensor, u: Tensor) -> Tensor:  # type: ignore[override]
        heads, t, m = qf.shape
        k = c.size(-1)
        flat = u.reshape(heads, k * m, -1)
        out = qf.new_empty(heads, t, flat.size(-1))
        for s in _token_chunks(t, heads * k * m):
            out[:, s] = torch.bmm(_outer(c[:, s], qf[:, s]), flat)
        ctx.save_for_backward(qf, c, u)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:  # type: ignore[override]
        qf, c, u = ctx.saved_tensors
        heads, t, m = qf.shape
        k = c.size(-1)
        flat = u.reshape(heads, k * m, -1)
        dq = torch.empty_like(qf) if ctx.needs_input_grad[0] else None
        dc = torch.empty_like(c) if ctx.needs_input_grad[1] else None
        du = torch.zeros_like(flat) if ctx.needs_input_grad[2] else None
        for s in _token_chunks(t, heads * k * m):
            g = grad[:, s]
            if du is not None:
                du.baddbmm_(_outer(c[:, s], qf[:, s]).transpose(1, 2), g)
            if dq is not None or dc is not None:
                dq2 = torch.bmm(g, flat.transpose(1, 2)).view(heads, -1, k, m)
                if dq is not None:
                    dq[:, s] = (dq2 * c[:, s].unsqueeze(-1)).sum(2)
                if dc is not None:
                    dc[:, s] = (dq2 * qf[:, s].unsqueeze(2)).sum(-1)
        return dq, dc, None if du is None else du.view_as(u)


def weighted_kernel_attention(qf: Tensor, kf: Tensor, v: Tensor, w: Tensor, rows: int | None = None,
                              value_map: Callable[[Tensor, Tensor], Tensor] | None = None) -> Tensor:
    r"""The mean over :math:`K` key weightings :math:`w_{\cdot k}` of kernelised attention,
    :math:`\mathbf{z}_i = \frac{1}{K}\sum_k \sum_j w_{jk}\phi(\mathbf{q}_i)^\top\phi(\mathbf{k}_j)\mathbf{v}_j
    / \sum_j w_{jk}\phi(\mathbf{q}_i)^\top\phi(\mathbf{k}_j)`, in linear time and without a
    :math:`T \times T` matrix or :math:`K` copies of the values: with :math:`\mathbf{U}_k = \sum_j w_{jk}
    \phi(\mathbf{k}_j)\mathbf{v}_j^\top` (:class:`_KeyValue`) and :math:`\mathbf{a}_k = \sum_j w_{jk}
    \phi(\mathbf{k}_j)`, :math:`\mathbf{z}_i = \sum_k \phi(\mathbf{q}_i)^\top\mathbf{U}_k /
    (K\,\phi(\mathbf{q}_i)^\top\mathbf{a}_k)` (:class:`_QueryMix`). ``qf``, ``kf``: ``[H, T, m]``; ``v``:
    ``[H, T, D]``; ``w``: ``[H, T, K]``; returns ``[H, rows, D']``, the first ``rows`` queries (default all).
    ``value_map(U, a)`` replaces :math:`\mathbf{U}` by a linear map of it (``[H, K, m, D']``; the layer folds
    its value and output projections there, since :math:`\mathbf{z}_i` is linear in :math:`\mathbf{U}`).
    Memory: the inputs, :math:`H K m (D + 1)` and :math:`H T K` floats."""
    rows = qf.size(1) if rows is None else rows
    a = torch.bmm(w.transpose(1, 2), kf)  # [H, K, m]
    c = 1.0 / (torch.bmm(qf[:, :rows], a.transpose(1, 2)) * w.size(-1))  # 1 / (K * normaliser), [H, rows, K]
    u = _KeyValue.apply(kf, w, v)
    return _QueryMix.apply(qf[:, :rows], c, u if value_map is None else value_map(u, a))


def pairwise_weighted_attention(qf: Tensor, kf: Tensor, v: Tensor, w: Tensor) -> Tensor:
    r""":func:`weighted_kernel_attention` (all queries, no value map) through the :math:`T \times T` kernel
    matrix :math:`S_{ij} = \phi(\mathbf{q}_i)^\top\phi(\mathbf{k}_j)`: with :math:`n_{ik} = \sum_j S_{ij}
    w_{jk}`, :math:`\mathbf{z}_i = \sum_j S_{ij}\big(\sum_k w_{jk} / (K n_{ik})\big)\mathbf{v}_j`, the same
    sum in another order. It costs :math:`T^2(m + 2K + D)` against the linear form's :math:`T K m D`, so it is the
    cheaper one for short token sets (:func:`pairwise_is_cheaper`): one hypergraph of a classification batch,
    whose :math:`T` is tens of tokens against :math:`K m = 300`. Shapes as :func:`weighted_kernel_attention`."""
    s = torch.bmm(qf, kf.transpose(1, 2))  # [B, T, T]
    c = 1.0 / (torch.bmm(s, w) * w.size(-1))  # 1 / (K * normaliser), [B, T, K]
    return torch.bmm(s * torch.bmm(c, w.transpose(1, 2)), v)


def pairwise_is_cheaper(tokens: int, random_features: int, samples: int, width: int) -> bool:
    """Whether :func:`pairwise_weighted_attention` takes fewer flops than :func:`weighted_kernel_attention` for
    ``tokens`` tokens, ``random_features`` :math:`m`, ``samples`` :math:`K` and value ``width`` :math:`D`."""
    return tokens * (random_features + 2 * samples + width) < samples * random_features * width


def kernel_attention(qf: Tensor, kf: Tensor, v: Tensor, key_weight: Tensor | None = None) -> Tensor:
    r"""All-pair attention :math:`\mathbf{z}_i = \sum_j w_j\phi(\mathbf{q}_i)^\top\phi(\mathbf{k}_j)\mathbf{v}_j
    / \sum_j w_j\phi(\mathbf{q}_i)^\top\phi(\mathbf{k}_j)` in linear time (:func:`weighted_kernel_attention`
    with one weighting), no :math:`T \times T` matrix. ``qf``, ``kf``: ``[H, T, m]``; ``v``: ``[H, T, D]``;
    ``key_weight`` (:math:`w`, default 1): ``[H, T]``."""
    w = qf.new_ones(qf.shape[:2]) if key_weight is None else key_weight
    return weighted_kernel_attention(qf, kf, v, w.unsqueeze(-1))


def gumbel_kernel_attention(qf: Tensor, kf: Tensor, v: Tensor, noise: Tensor) -> Tensor:
    r"""NodeFormer's kernelised Gumbel-softmax attention: the mean over :math:`K` samples of
    :func:`kernel_attention` with key weights :math:`w_{jk} = \exp(g_{jk}/\tau)`, ``noise`` the
    :math:`g_{jk}/\tau` of shape ``[H, T, K]``, all samples in one pass (:func:`weighted_kernel_attention`). Each
    sample's weights are divided by their maximum over tokens (a constant that cancels, so :math:`\exp` cannot
    overflow)."""
    return weighted_kernel_attention(qf, kf, v, torch.exp(noise - noise.amax(1, keepdim=True)))


class _LinkScores(torch.autograd.Function):
    r""":math:`\sum_h \sum_l w_l \log \phi(\mathbf{q}_{h,t_l})^\top\phi(\mathbf{k}_{h,s_l})` over links
    :math:`l = (s_l \to t_l)`, in link chunks of ``[H, C, m]`` gathered features that are rebuilt in the backward
    pass, which adds each chunk's gradient into one ``[H, T, m]`` buffer per input."""

    @staticmethod
    def forward(ctx: Any, qf: Tensor, kf: Tensor, start: Tensor, end: Tensor,  # type: ignore[override]
                weight: Tensor) -> Tensor:
        total = qf.new_zeros(())
        for s in _token_chunks(start.numel(), qf.size(0) * qf.size(2)):
            q, k = qf.index_select(1, end[s]), kf.index_select(1, start[s])  # index_select: half the time of qf[:, i]
            total += ((q * k).sum(-1).log() * weight[s]).sum()
        ctx.save_for_backward(qf, kf, start, end, weight)
        return total

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:  # type: ignore[override]
        qf, kf, start, end, weight = ctx.saved_tensors
        dq, dk = torch.zeros_like(qf), torch.zeros_like(kf)
        for s in _token_chunks(start.numel(), qf.size(0) * qf.size(2)):
            q, k = qf.index_select(1, end[s]), kf.index_select(1, start[s])
            coef = (grad * weight[s] / (q * k).sum(-1)).unsqueeze(-1)  # d/d(dot) of w log(dot)
            dq.index_add_(1, end[s], coef * k)
            dk.index_add_(1, start[s], coef * q)
        return dq, dk, None, None, None


def link_log_likelihood(qf: Tensor, kf: Tensor, start: Tensor, end: Tensor, weight: Tensor,
                        graph: Tensor | None = None) -> Tensor:
    r"""NodeFormer's edge regulariser: the mean over links :math:`(s \to t)` and heads of
    :math:`w_{st}\log a_{ts}`, :math:`a_{ts} = \phi(\mathbf{q}_t)^\top\phi(\mathbf{k}_s) / \sum_j
    \phi(\mathbf{q}_t)^\top\phi(\mathbf{k}_j)` the attention token :math:`t` pays to :math:`s` (no Gumbel
    noise), computed for the links only (:math:`O(|\text{links}|)`, Yelp: 5.4M links): the numerators by
    :class:`_LinkScores`, the normalisers once per token, :math:`\sum_l w_l \log n_{t_l} = \sum_t
    (\sum_{l: t_l = t} w_l) \log n_t` (with ``graph``, the graph of each token, :math:`j` runs over the tokens of
    :math:`t`'s graph)."""
    if graph is None:
        den = (qf @ kf.sum(1).unsqueeze(-1)).squeeze(-1)  # [H, T]
    else:
        den = (qf * _per_graph(kf, graph, "sum")).sum(-1)
    per_target = weight.new_zeros(qf.size(1)).index_add_(0, end, weight)
    total = _LinkScores.apply(qf, kf, start, end, weight) - (den.log() * per_target).sum()
    return total / max(start.numel() * qf.size(0), 1)


def _row_dropout(x: Tensor, total_rows: int, p: float, training: bool) -> Tensor:
    """Dropout of the first ``x.size(0)`` rows of a ``[total_rows, C]`` tensor: the mask is drawn for all rows (the
    random stream of dropping the whole tensor) and its first rows are used."""
    if not training or p == 0.0 or x.size(0) == total_rows:
        return drop(x, p, training)
    mask = keep_mask(total_rows * x.size(1), p, x.device)[:x.numel()].view_as(x)
    return x * mask.to(x.dtype).mul_(1.0 / (1.0 - p))


class _Tokens:
    r"""The token structure of one hypergraph (built once): nodes :math:`0..N-1`, then the hyperedges that have
    members, in id order. ``mean`` (:math:`M' \times N`) averages members, ``members`` (:math:`M' \times N`) and
    ``incidence`` (:math:`N \times M`) sum them; ``start``/``end``/``link_weight`` are the links of the
    regulariser: member node :math:`\to` hyperedge token for every incidence plus a self-loop on every token,
    weighted by :math:`1/d^{in}_t` (in-degree of the target, self-loop included)."""

    def __init__(self, inc: Incidence) -> None:
        n, dev, dt = inc.num_nodes, inc.node.device, inc.dtype
        used = torch.nonzero(inc.deg_e > 0).view(-1)
        rank = torch.full((inc.num_edges,), -1, dtype=torch.long, device=dev)
        rank[used] = torch.arange(used.numel(), device=dev)
        self.num_nodes, self.num_edges = n, int(used.numel())
        self.max_edge = int(used.max()) + 1 if used.numel() else 0  # one past the largest id with members
        self.num_tokens = n + self.num_edges
        row = rank[inc.edge]
        ones = torch.ones(inc.nnz, dtype=dt, device=dev)
        self.mean = SparseOperator(row, inc.node, inv(inc.deg_e)[inc.edge], (self.num_edges, n))
        self.members = SparseOperator(row, inc.node, ones, (self.num_edges, n))
        self.incidence = SparseOperator(inc.node, inc.edge, ones, (n, inc.num_edges))
        loops = torch.arange(self.num_tokens, device=dev)
        self.start = torch.cat([inc.node, loops])
        self.end = torch.cat([n + row, loops])
        self.link_weight = 1.0 / torch.bincount(self.end, minlength=self.num_tokens).to(dt)[self.end]


class _Attention(nn.Module):
    """One NodeFormer layer of HyperGT: Q, K, V with ``heads`` x ``hidden`` channels, kernelised attention, Wo."""

    def __init__(self, hidden: int, heads: int, random_features: int) -> None:
        super().__init__()
        self.heads, self.hidden, self.random_features = heads, hidden, random_features
        self.q, self.k, self.v = (nn.Linear(hidden, heads * hidden) for _ in range(3))
        self.o = nn.Linear(heads * hidden, hidden)
        self.register_buffer("projection", torch.empty(random_features, hidden))

    def reset_parameters(self) -> None:
        for lin in (self.q, self.k, self.v, self.o):
            lin.reset_parameters()
        self.projection.copy_(orthogonal_features(self.random_features, self.hidden))

    def features(self, z: Tensor, tau: float, graph: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Query and key random features, heads first: ``[H, T, m]`` each; a fresh feature matrix in training (the
        reference redraws it every forward), the stored one in evaluation; ``graph``: the keys' stabiliser per
        graph (:func:`softmax_kernel`)."""
        proj = orthogonal_features(self.random_features, self.hidden).to(z) if self.training else self.projection
        return tuple(_KernelFeatures.apply(z, lin.weight, lin.bias, proj, self.heads, tau, is_query, graph)
                     for lin, is_query in ((self.q, True), (self.k, False)))

    def attend(self, z: Tensor, qf: Tensor, kf: Tensor, w: Tensor, rows: int,
               groups: GraphGroups | None = None) -> Tensor:
        r""":math:`\mathrm{Attn}(\mathbf{Z})\mathbf{W}_o + \mathbf{b}_o` for the first ``rows`` tokens, values
        :math:`\mathbf{v}_{hj} = \mathbf{W}_{v,h}\mathbf{z}_j + \mathbf{b}_{v,h}` and key weights ``w``
        (:func:`weighted_kernel_attention`). Both projections are folded into the :math:`K m \times D` matrices
        :math:`\mathbf{U}_{hk}` (:math:`\mathbf{U}_{hk} \mapsto (\mathbf{U}^{z}_{hk}\mathbf{W}_{v,h}^\top +
        \mathbf{a}_{hk}\mathbf{b}_{v,h}^\top)\mathbf{W}_{o,h}^\top`, summed over heads), so no
        :math:`T \times H d` value or attention tensor is formed. With ``groups`` each hypergraph's tokens
        attend to their own hypergraph's tokens: a block of :math:`g` graphs of :math:`t` tokens runs as
        :math:`H g` independent heads on the projected values (folding the maps into :math:`G` per-graph
        :math:`\mathbf{U}` would cost :math:`G` times the value map), through each graph's :math:`t \times t`
        kernel matrix where that takes fewer flops (:func:`pairwise_weighted_attention`)."""
        heads, d = self.heads, self.hidden
        if groups is not None:
            def block(g: int, t: int, *parts: Tensor) -> Tensor:  # [H, g t, .] as [H g, t, .]: graphs as heads
                flat = [p.reshape(heads * g, t, -1) for p in parts]
                attend = pairwise_weighted_attention if pairwise_is_cheaper(
                    t, self.random_features, w.size(-1), d) else weighted_kernel_attention
                return attend(*flat).reshape(heads, g * t, -1)
            v = self.v(z).view(z.size(0), heads, d).transpose(0, 1)
            out = groups.apply(block, qf, kf, v, w)[:, :rows]
            return self.o(out.transpose(0, 1).reshape(out.size(1), heads * d))
        w_v = self.v.weight.view(heads, d, -1)
        w_o = self.o.weight.view(-1, heads, d)

        def fold(u: Tensor, a: Tensor) -> Tensor:
            u = torch.einsum("hkmi,hdi->hkmd", u, w_v) + a.unsqueeze(-1) * self.v.bias.view(heads, 1, 1, d)
            return torch.einsum("hkmd,ohd->hkmo", u, w_o)
        out = weighted_kernel_attention(qf, kf, z.expand(heads, *z.shape), w, rows, fold)
        return out.sum(0) + self.o.bias


@register_model("HyperGT")
class HyperGT(HypergraphModel):
    r"""HyperGT from `"Hypergraph Transformer for Semi-Supervised Classification"
    <https://arxiv.org/abs/2312.11385>`_ (Liu, Tang, Ye, Dong, Chen and Wang, ICASSP 2024), DHG-Bench appendix A.2:
    nodes and hyperedges are the :math:`T = N + M` tokens of a Transformer with global attention (NodeFormer's
    kernelised Gumbel-softmax attention, linear in :math:`T`, as the paper's code computes it), with, in the
    abstract's words, "i) a positional encoding based on the hypergraph incidence matrix" and "ii) a hypergraph
    structure regularization in the loss function, capturing connectivities between nodes and hyperedges".

    .. math::
        \mathbf{Z}^{(0)} = \mathrm{Dropout}(\mathrm{ELU}(\mathrm{LN}(\begin{bmatrix}\mathbf{X} \\
        \mathbf{D}_e^{-1}\mathbf{H}^\top\mathbf{X}\end{bmatrix}\mathbf{W}_{in} + \begin{bmatrix}
        \mathbf{H}\mathbf{P}_E + \mathbf{b}_E \\ \mathbf{H}^\top\mathbf{P}_V + \mathbf{b}_V\end{bmatrix}))),
        \quad \mathbf{Z}^{(l+1)} = \mathrm{Dropout}(\mathrm{LN}(\mathbf{Z}^{(l)} +
        \mathrm{Attn}(\mathbf{Z}^{(l)})\mathbf{W}_o))

    with :math:`\mathrm{Attn}_i = \sum_j \phi(\mathbf{q}_i)^\top\phi(\mathbf{k}_j)\mathbf{v}_j / \sum_j
    \phi(\mathbf{q}_i)^\top\phi(\mathbf{k}_j)` per head (:func:`softmax_kernel`, :func:`kernel_attention`;
    queries and keys divided by :math:`\sqrt{\tau}`; in training the mean of :math:`K` Gumbel-weighted samples,
    :func:`gumbel_kernel_attention`; all samples in one batched product with the value and output maps folded in,
    :meth:`_Attention.attend`; the last layer's queries for node tokens only, the only rows read),
    :math:`\mathbf{P}_E \in \mathbb{R}^{M \times d}` and
    :math:`\mathbf{P}_V \in \mathbb{R}^{N \times d}` learned tables (the paper's "HEPE" and "HtEPE": a node's
    encoding sums the rows of its hyperedges, a hyperedge's the rows of its members). The output is a linear map of
    :math:`\mathbf{Z}^{(L)}` (or of all layers concatenated, ``jumping_knowledge``), node tokens only. In training
    the regulariser :math:`-\lambda\,\frac{1}{L}\sum_l \mathrm{mean}_{(s \to t)}\frac{\log a^{(l)}_{ts}}{d^{in}_t}`
    over the links member :math:`\to` hyperedge plus a self-loop per token (:func:`link_log_likelihood`; the
    paper's code minimises ``loss0 - lamda * mean(link_loss)``) is returned by :meth:`extra_loss`, which every
    task adds to its loss.

    The tables depend on the structure, so ``positional_encoding="trained"`` (the paper) creates them in
    :meth:`prepare`, which the trainer calls before building the optimiser; the model then serves only that
    structure (a transductive model: node and hyperedge ids index parameters, so it is not permutation
    equivariant; ``positional_encoding="none"``, the paper's ablation, is). ``"random"`` is DHG-Bench's behaviour:
    its encoders are created in the first forward, after the optimiser, so they stay a random projection of the
    incidence (drawn here from ``seed`` and the structure's size, as the reference redraws them whenever the size
    changes, e.g. per batch in hypergraph classification). DHG-Bench also discards the regulariser
    (``link_loss_weight=0``), uses :math:`\tau = 1` (its forward's default) and zero hyperedge features
    (``hyperedge_features="zero"``; the paper's code averages the members, ``hefeat mean``). Hyperedges without
    members are not tokens. In hypergraph classification the forward gets ``batch`` (the graph of each node of
    the block-diagonal batch): with ``attention_scope="graph"`` the tokens of each hypergraph (its nodes and
    hyperedges) attend to each other only (:class:`GraphGroups`), as attention over one hypergraph's tokens
    reads, so a graph's output does not depend on the graphs beside it in a batch; ``"batch"`` attends over every
    token of the batch, as DHG-Bench's code does. DHG-Bench on Cora: 2 layers, hidden 128, 4 heads, 30 random
    features, 10 Gumbel samples, LayerNorm, residual, activation and jumping knowledge on, lr 5e-3, weight decay
    1e-3, 100 epochs.

    For :math:`\mathcal{V} = \{0, 1, 2, 3\}`, :math:`\mathcal{E} = \{\{0, 1, 2\}, \{1, 2, 3\}\}`::

        hyperedge_index = torch.tensor([[0, 1, 2, 1, 2, 3],
                                        [0, 0, 0, 1, 1, 1]])

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Width :math:`d` of the tokens and of each head.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of attention layers. (default: :obj:`2`)
        dropout (float): Dropout after the input map and after each layer. (default: :obj:`0.5`)
        heads (int): Attention heads. (default: :obj:`4`)
        random_features (int): Random features :math:`m` of the softmax kernel. (default: :obj:`30`)
        gumbel (bool): Gumbel-softmax attention in training. (default: :obj:`True`)
        gumbel_samples (int): Gumbel samples :math:`K`. (default: :obj:`10`)
        tau (float): Temperature :math:`\tau > 0`. (default: :obj:`0.25`)
        positional_encoding (str): ``"trained"``, ``"random"`` (DHG-Bench) or ``"none"``.
            (default: :obj:`"trained"`)
        link_loss_weight (float): :math:`\lambda \geq 0` of the link regulariser (0: DHG-Bench).
            (default: :obj:`1.0`)
        hyperedge_features (str): ``"mean"`` of the members or ``"zero"`` (DHG-Bench). (default: :obj:`"mean"`)
        layer_norm (bool): LayerNorm after the input map and each layer. (default: :obj:`True`)
        residual (bool): Residual connection around each attention layer. (default: :obj:`True`)
        activation (bool): ELU after each layer. (default: :obj:`False`)
        jumping_knowledge (bool): Concatenate all layers before the output map. (default: :obj:`False`)
        attention_scope (str): ``"graph"`` or ``"batch"`` (DHG-Bench). (default: :obj:`"graph"`)
        seed (int): Seed of the ``"random"`` positional encodings. (default: :obj:`0`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse), hyperedge indices
          :math:`(2, \mathrm{nnz})`, optional :math:`|\mathcal{E}|`, optional graph of each node
          :math:`(|\mathcal{V}|,)`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = ("Liu, Tang, Ye, Dong, Chen and Wang, Hypergraph Transformer for Semi-Supervised Classification, "
             "ICASSP 2024, https://arxiv.org/abs/2312.11385")
    equivariant = False  # learned encodings indexed by node and hyperedge id (transductive)
    equivariant_kwargs = {"positional_encoding": "none"}  # ... and equivariant without them

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, heads: int = 4, random_features: int = 30, gumbel: bool = True,
                 gumbel_samples: int = 10, tau: float = 0.25, positional_encoding: str = "trained",
                 link_loss_weight: float = 1.0, hyperedge_features: str = "mean", layer_norm: bool = True,
                 residual: bool = True, activation: bool = False, jumping_knowledge: bool = False,
                 attention_scope: str = "graph", seed: int = 0) -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        self.dropout, self.hidden = dropout, hidden_channels
        check_int("heads", heads)
        check_int("random_features", random_features)
        self.gumbel = check_bool("gumbel", gumbel)
        self.gumbel_samples = check_int("gumbel_samples", gumbel_samples)
        self.tau = check_float("tau", tau, 0.0)
        if self.tau == 0.0 or math.isinf(self.tau):
            raise ValueError(f"tau must be a positive finite number, got {tau!r}")
        self.positional_encoding = check_choice("positional_encoding", positional_encoding, POSITIONAL_ENCODINGS)
        self.link_loss_weight = check_float("link_loss_weight", link_loss_weight, 0.0)
        self.hyperedge_features = check_choice("hyperedge_features", hyperedge_features, HYPEREDGE_FEATURES)
        self.layer_norm = check_bool("layer_norm", layer_norm)
        self.residual = check_bool("residual", residual)
        self.activation = check_bool("activation", activation)
        self.jumping_knowledge = check_bool("jumping_knowledge", jumping_knowledge)
        self.attention_scope = check_choice("attention_scope", attention_scope, ATTENTION_SCOPES)
        self.seed = check_int("seed", seed, 0)
        self.lin_in = Linear(in_channels, hidden_channels)
        self.convs = nn.ModuleList(_Attention(hidden_channels, heads, random_features) for _ in range(num_layers))
        self.norms = nn.ModuleList(nn.LayerNorm(hidden_channels) if layer_norm else nn.Identity()
                                   for _ in range(num_layers + 1))
        self.lin_out = nn.Linear(hidden_channels * (num_layers + 1 if jumping_knowledge else 1), out_channels)
        if self.positional_encoding == "trained":
            self.pe_bias_e = nn.Parameter(torch.empty(hidden_channels))  # HEPE's bias (node tokens)
            self.pe_bias_v = nn.Parameter(torch.empty(hidden_channels))  # HtEPE's bias (hyperedge tokens)
        self.register_parameter("pe_e", None)  # P_E [M, d], created by prepare
        self.register_parameter("pe_v", None)  # P_V [N, d]
        self._extra: Tensor | None = None
        self.reset_parameters()

    # ------------------------------------------------------------------------------------------- parameters

    def _init_table(self, table: Tensor, bias: Tensor, generator: torch.Generator | None = None) -> None:
        """``SparseLinear``'s init: weight and bias uniform in :math:`\\pm 1/\\sqrt{\\text{fan-in}}`."""
        bound = 1.0 / math.sqrt(max(table.size(0), 1))
        with torch.no_grad():
            table.copy_(torch.rand(table.shape, generator=generator).mul_(2 * bound).sub_(bound))
            bias.copy_(torch.rand(bias.shape, generator=generator).mul_(2 * bound).sub_(bound))

    def reset_parameters(self) -> None:
        self.lin_in.reset_parameters()
        for conv in self.convs:
            conv.reset_parameters()
        for norm in self.norms:
            if isinstance(norm, nn.LayerNorm):
                norm.reset_parameters()
        self.lin_out.reset_parameters()
        if self.positional_encoding == "trained":
            bound = 1.0 / math.sqrt(self.hidden)  # until prepare knows the fan-ins
            nn.init.uniform_(self.pe_bias_e, -bound, bound)
            nn.init.uniform_(self.pe_bias_v, -bound, bound)
            if self.pe_e is not None:
                self._init_table(self.pe_e, self.pe_bias_e)
                self._init_table(self.pe_v, self.pe_bias_v)

    def prepare(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None, **task_info) -> None:
        """Create the trained tables :math:`\\mathbf{P}_E`, :math:`\\mathbf{P}_V` for this structure (before the
        optimiser is built: the trainer's ``Task.prepare`` hook); kept if they already have its sizes. Other
        keyword arguments the task offers (labels) are not used."""
        if self.positional_encoding != "trained":
            return
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        like = self.lin_in.weight
        if self.pe_e is not None and (self.pe_e.size(0), self.pe_v.size(0)) == (inc.num_edges, inc.num_nodes):
            return
        self.pe_e = nn.Parameter(torch.empty(inc.num_edges, self.hidden, dtype=like.dtype, device=like.device))
        self.pe_v = nn.Parameter(torch.empty(inc.num_nodes, self.hidden, dtype=like.dtype, device=like.device))
        self._init_table(self.pe_e, self.pe_bias_e)
        self._init_table(self.pe_v, self.pe_bias_v)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):  # type: ignore[no-untyped-def]
        """A state dict with trained tables recreates them with its sizes (a prepared model's round trip)."""
        for name in ("pe_e", "pe_v"):
            saved = state_dict.get(prefix + name)
            if saved is not None and (getattr(self, name) is None or getattr(self, name).shape != saved.shape):
                setattr(self, name, nn.Parameter(torch.empty_like(saved, device=self.lin_in.weight.device)))
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def extra_loss(self) -> Tensor | None:
        """The link regulariser :math:`-\\lambda\\,\\overline{\\log a}` of the last training forward (``None``
        outside training or with :math:`\\lambda = 0`); returned once."""
        extra, self._extra = self._extra, None
        return extra

    # ------------------------------------------------------------------------------------------------ forward

    def pe_tables(self, inc: Incidence, like: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        r""":math:`(\mathbf{P}_E, \mathbf{P}_V, \mathbf{b}_E, \mathbf{b}_V)` for the structure ``inc``: the
        trained parameters, or (``"random"``) a draw fixed by ``seed`` and the structure's size."""
        tok = inc.memo("hypergt", lambda: _Tokens(inc))
        if self.positional_encoding == "trained":
            if self.pe_e is None:
                raise ValueError("HyperGT with positional_encoding='trained' learns one encoding per node and "
                                 "hyperedge id: call model.prepare(x, hyperedge_index, num_hyperedges) with the "
                                 "structure it is trained on before building the optimiser (the trainer does), "
                                 "or use positional_encoding='random' or 'none'")
            if inc.num_nodes != self.pe_v.size(0) or tok.max_edge > self.pe_e.size(0):
                raise ValueError(f"HyperGT was prepared for {self.pe_v.size(0)} nodes and {self.pe_e.size(0)} "
                                 f"hyperedges, got {inc.num_nodes} nodes and hyperedge ids up to {tok.max_edge - 1}; "
                                 "a structure of another size needs positional_encoding='random' or 'none'")
            return self.pe_e, self.pe_v, self.pe_bias_e, self.pe_bias_v
        if self.positional_encoding == "random":
            def draw() -> tuple[Tensor, ...]:
                g = torch.Generator().manual_seed(self.seed * 1_000_003 + inc.num_nodes * 7919 + inc.num_edges)
                tables = [torch.empty(inc.num_edges, self.hidden), torch.empty(inc.num_nodes, self.hidden)]
                biases = [torch.empty(self.hidden), torch.empty(self.hidden)]
                for t, b in zip(tables, biases):
                    self._init_table(t, b, g)
                return tuple(t.to(like) for t in (*tables, *biases))
            return self._cache.get((), ("hypergt-pe", self.seed, inc.num_nodes, inc.num_edges, like.dtype,
                                        like.device), draw)
        raise ValueError("positional_encoding='none' has no tables")

    def _encodings(self, tok: _Tokens, inc: Incidence, like: Tensor) -> tuple[Tensor, Tensor]:
        """Positional encodings of the node tokens and of the hyperedge tokens."""
        pe_e, pe_v, b_e, b_v = self.pe_tables(inc, like)
        if pe_e.size(0) != inc.num_edges:  # trailing hyperedges without members
            pe_e = pe_e[:inc.num_edges] if pe_e.size(0) > inc.num_edges else \
                torch.cat([pe_e, pe_e.new_zeros(inc.num_edges - pe_e.size(0), pe_e.size(1))])
        return tok.incidence @ pe_e + b_e, tok.members @ pe_v + b_v

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None,
                batch: Tensor | None = None) -> Tensor:
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        tok = inc.memo("hypergt", lambda: _Tokens(inc))
        groups = None
        if batch is not None and self.attention_scope == "graph":
            graph = batch.new_empty(tok.num_tokens)
            graph[:inc.num_nodes] = batch
            graph[tok.end[:inc.nnz]] = batch[inc.node]  # a hyperedge token's graph: its members'
            groups = GraphGroups(graph)
        graph = groups.graph if groups is not None else None
        h = self.lin_in(self.features(x))
        if self.positional_encoding == "none":
            node_pe = edge_pe = 0.0
        else:
            node_pe, edge_pe = self._encodings(tok, inc, h)
        edge_in = tok.mean @ h if self.hyperedge_features == "mean" else self.lin_in.bias.expand(tok.num_edges, -1)
        z = drop(F.elu(self.norms[0](torch.cat([h + node_pe, edge_in + edge_pe]))), self.dropout, self.training)
        layers, links = [z], []
        for i, (conv, norm) in enumerate(zip(self.convs, self.norms[1:])):
            # only node tokens are read after the last layer: its hyperedge-token outputs are not computed
            rows = inc.num_nodes if i == len(self.convs) - 1 else z.size(0)
            qf, kf = conv.features(z, self.tau, graph)
            if self.gumbel and self.training:
                noise = -torch.empty(qf.shape[:2] + (self.gumbel_samples,), dtype=qf.dtype,
                                     device=qf.device).exponential_().log() / self.tau
                top = noise.amax(1, keepdim=True) if graph is None else _per_graph(noise, graph, "amax")
                w = torch.exp(noise - top)  # as gumbel_kernel_attention; per graph, no graph's weights underflow
            else:
                w = qf.new_ones(qf.shape[:2] + (1,))
            if self.training and self.link_loss_weight > 0 and torch.is_grad_enabled():
                links.append(link_log_likelihood(qf, kf, tok.start, tok.end, tok.link_weight, graph))
            out = conv.attend(z, qf, kf, w, rows, groups)
            out = norm(out + z[:rows] if self.residual else out)
            if self.activation:
                out = F.elu(out)
            z = _row_dropout(out, z.size(0), self.dropout, self.training)
            layers.append(z)
        self._extra = -self.link_loss_weight * torch.stack(links).mean() if links else None
        z = torch.cat([layer[:inc.num_nodes] for layer in layers], dim=1) if self.jumping_knowledge else z
        return self.lin_out(z[:inc.num_nodes])
