"""HJRL: joint node and hyperedge embeddings on the cross expansion, with a hypergraph reconstruction loss."""
from __future__ import annotations

import warnings
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.autograd.function import once_differentiable

from .base import HypergraphModel, Linear, dense, glorot_
from .checks import check_bool, check_choice, check_common, check_float, check_int
from .dropout import keep_mask
from .registry import register_model
from .sparse import Incidence, SparseOperator, coo_tensor, inv

RECONSTRUCTIONS = ("paper", "dhgbench")
_CHUNK_ELEMENTS = 1 << 20  # node-hyperedge pairs scored at a time by the reconstruction loss
_PARTIAL_ELEMENTS = 1 << 24  # dense entries of partly covered hyperedge rows kept sparse beside full ones
_COLUMN_BLOCK = 4096  # hyperedges per tile of those pairs (tiles of about 256 x 4096, in cache)


class CrossExpansion:
    r"""The four normalised blocks of HJRL's cross-expansion adjacency (sparse, built once per structure):
    :math:`\mathbf{A}_{vv} = \mathbf{D}_v^{-1/2}\mathbf{H}\mathbf{D}_e^{-1}\mathbf{H}^\top\mathbf{D}_v^{-1/2}`,
    :math:`\mathbf{A}_{ve} = \mathbf{D}_v^{-1/2}\mathbf{H}\mathbf{D}_e^{-1}`,
    :math:`\mathbf{A}_{ev} = \mathbf{D}_e^{-1/2}\mathbf{H}^\top\mathbf{D}_v^{-1}` and
    :math:`\mathbf{A}_{ee} = \mathbf{D}_e^{-1/2}\mathbf{H}^\top\mathbf{D}_v^{-1}\mathbf{H}\mathbf{D}_e^{-1/2}`
    (zero-degree entries give 0); no dense :math:`N \times M` matrix."""

    def __init__(self, inc: Incidence, hyperedge_index: Tensor) -> None:
        v, e = inc.node, inc.edge
        dv, de = inc.deg_v, inc.deg_e
        self.vv = inc.propagation(inv(dv, 0.5), inv(de), inv(dv, 0.5))
        self.ve = SparseOperator(v, e, inv(dv, 0.5)[v] * inv(de)[e], (inc.num_nodes, inc.num_edges))
        self.ev = SparseOperator(e, v, inv(de, 0.5)[e] * inv(dv)[v], (inc.num_edges, inc.num_nodes))
        dual = Incidence(hyperedge_index.flip(0), inc.num_edges, inc.num_nodes, inc.dtype)
        self.ee = dual.propagation(inv(de, 0.5), inv(dv), inv(de, 0.5))


class _AllPairsSoftplus(torch.autograd.Function):
    r""":math:`\sum_{v,e} \mathrm{softplus}(g(\mathbf{a}_v^\top\mathbf{b}_e))` over all :math:`N \times M` pairs,
    :math:`g` the identity or (``squash``) the sigmoid, in tiles of at most ``_CHUNK_ELEMENTS`` pairs; the
    gradient is accumulated in the same pass (:math:`\partial/\partial s = \mathrm{sigmoid}(s)`, or
    :math:`\mathrm{sigmoid}(q)\,q(1-q)` with :math:`q = \mathrm{sigmoid}(s)`), so no tile is scored twice and
    none is kept. The tiles' sums are accumulated in float64."""

    @staticmethod
    def forward(ctx, a: Tensor, b: Tensor, squash: bool) -> Tensor:  # type: ignore[override]
        n, m = a.size(0), b.size(0)
        need = ctx.needs_input_grad[0] or ctx.needs_input_grad[1]
        # the gradients are accumulated transposed (C x N, C x M): those products are several times faster on
        # CPU than the row-major ones with a thin output
        grad_at = a.new_zeros(a.size(1), n) if need else None
        grad_bt = b.new_zeros(b.size(1), m) if need else None
        bt = b.t().contiguous()
        total = torch.zeros((), dtype=torch.float64, device=a.device)
        blocks = -(-m // _COLUMN_BLOCK) if m else 1
        cols = max(1, -(-m // blocks))  # equal column blocks of at most _COLUMN_BLOCK
        rows = max(1, _CHUNK_ELEMENTS // cols)
        for j in range(0, m, cols):
            btj = bt[:, j:j + cols]
            for i in range(0, n, rows):
                ai = a[i:i + rows]
                s = ai @ btj
                if squash:
                    q = s.sigmoid_()
                    total += F.softplus(q).sum().double()
                    g = torch.sigmoid(q).mul_(q).mul_(1.0 - q) if need else None
                else:
                    total += F.softplus(s).sum().double()
                    g = s.sigmoid_() if need else None
                if g is not None:
                    grad_at[:, i:i + rows].addmm_(btj, g.t())
                    grad_bt[:, j:j + cols].addmm_(ai.t(), g)
        grad_a = grad_at.t() if need else None
        grad_b = grad_bt.t() if need else None
        ctx.save_for_backward(grad_a, grad_b)
        return total.to(a.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad: Tensor) -> tuple[Tensor | None, Tensor | None, None]:  # type: ignore[override]
        grad_a, grad_b = ctx.saved_tensors
        return (grad * grad_a if ctx.needs_input_grad[0] else None,
                grad * grad_b if ctx.needs_input_grad[1] else None, None)


def hjrl_reconstruction_loss(node_out: Tensor, edge_out: Tensor, inc: Incidence, style: str = "paper",
                             pairs: tuple[Tensor, Tensor] | None = None) -> Tensor:
    r"""Mean binary cross-entropy with logits between the scores of all :math:`N \times M` node-hyperedge
    pairs and the incidence matrix :math:`\mathbf{H}`, with positive weight :math:`(NM - \mathrm{nnz}) /
    \mathrm{nnz}`: ``"paper"`` scores :math:`\mathbf{S} = \mathbf{X}\mathbf{Y}^\top`; ``"dhgbench"`` is the
    reference's :math:`\mathbf{S} = \mathrm{sigmoid}(\log\mathrm{softmax}(\mathbf{X})\mathbf{Y}^\top)` (a sigmoid
    before BCE *with logits*) with positive weight :math:`(N^2 - \mathrm{nnz})/\mathrm{nnz}`. With no dense
    :math:`N \times M` tensor: the loss is :math:`\frac{1}{NM}(\sum_{all} \mathrm{softplus}(s) + \sum_{H_{ve}=1}
    (w\,\mathrm{softplus}(-s) - \mathrm{softplus}(s)))`; the all-pairs sum is exact over tiles of pairs, its
    gradient accumulated in the same pass (:class:`_AllPairsSoftplus`), or, given ``pairs``
    :math:`(v_k, e_k)_{k \le K}` drawn uniformly from all pairs, estimated without bias by
    :math:`\frac{NM}{K}\sum_k \mathrm{softplus}(s_{v_k e_k})` (the positives' term stays exact; with every pair
    once it is the exact loss)."""
    n, m = inc.num_nodes, inc.num_edges
    nnz = max(inc.nnz, 1)
    squash = style == "dhgbench"
    a = F.log_softmax(node_out, dim=-1) if squash else node_out
    pos_weight = ((n * n if squash else n * m) - inc.nnz) / nnz

    def score(s: Tensor) -> Tensor:
        return torch.sigmoid(s) if squash else s
    if pairs is not None:
        rows, cols = pairs
        total = F.softplus(score((a[rows] * edge_out[cols]).sum(-1))).sum() * (n * m / max(rows.numel(), 1))
    else:
        total = _AllPairsSoftplus.apply(a, edge_out, squash)
    s_pos = score((a[inc.node] * edge_out[inc.edge]).sum(-1))
    total = total + (pos_weight * F.softplus(-s_pos) - F.softplus(s_pos)).sum()
    return total / max(n * m, 1)


class _AddToLoss(torch.autograd.Function):
    """Identity on ``out``; its backward also back-propagates a unit gradient into ``extra`` (a scalar), so
    whatever loss is computed from ``out`` is minimised as if ``extra`` were added to it."""

    @staticmethod
    def forward(ctx: Any, out: Tensor, extra: Tensor) -> Tensor:  # type: ignore[override]
        return out.clone()

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, Tensor]:  # type: ignore[override]
        return grad, torch.ones((), dtype=grad.dtype, device=grad.device)


class _FullRows(SparseOperator):
    r"""The hyperedge input :math:`\mathbf{Y}^{(0)} = c\,\mathbf{u}\mathbf{1}^\top + \mathbf{R}`
    (:math:`u_e = 1` for a hyperedge whose indicator is all ones, :math:`c = 1/F` row-normalised, else 1;
    :math:`\mathbf{R}` the sparse rows of the other hyperedges that see some features):
    :math:`\mathbf{Y}^{(0)}\mathbf{W} = \mathbf{u}\,(c\,\mathbf{1}^\top\mathbf{W}) + \mathbf{R}\mathbf{W}`, no
    dense :math:`M \times F` matrix (at Yelp scale with dense features it would be 730,060 x 1,862 floats, 5.4 GB;
    random real features leave a few rows with an exact float cancellation, hence :math:`\mathbf{R}`)."""

    def __init__(self, u: Tensor, num_features: int, normalise: bool, rest: SparseOperator | None = None) -> None:
        self.shape = (int(u.numel()), int(num_features))
        self.u, self.scale, self.rest = u.contiguous(), 1.0 / max(num_features, 1) if normalise else 1.0, rest

    def to_dense(self) -> Tensor:
        out = (self.u * self.scale).unsqueeze(1).expand(self.shape).clone()
        return out if self.rest is None else out + self.rest.to_dense()

    def __matmul__(self, w: Tensor) -> Tensor:
        if w.dim() != 2:
            raise ValueError(f"_FullRows multiplies 2-D tensors, got shape {tuple(w.shape)}")
        out = self.u.unsqueeze(1) * (w.sum(0) * self.scale)
        return out if self.rest is None else out + self.rest @ w


class _BiasReluDropout(torch.autograd.Function):
    """``dropout(relu(t + b), p)`` (the mask of :func:`~hypergvl.models.nn.dropout.dropout`, same random stream) keeping
    one bool per entry for the backward pass instead of the ReLU output and a float mask (8 bytes per entry: at
    Yelp scale each hyperedge-side term is 730,060 x 256)."""

    @staticmethod
    def forward(ctx: Any, t: Tensor, b: Tensor, p: float) -> Tensor:  # type: ignore[override]
        out = t + b
        keep = out > 0
        scale = 1.0
        if p > 0.0:
            keep &= keep_mask(out.numel(), p, out.device).view_as(out)
            scale = 1.0 / (1.0 - p)
        ctx.scale = scale
        ctx.save_for_backward(keep)
        return out.mul_(keep).mul_(scale) if scale != 1.0 else out.mul_(keep)

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, Tensor, None]:  # type: ignore[override]
        (keep,) = ctx.saved_tensors
        g = grad * keep
        if ctx.scale != 1.0:
            g.mul_(ctx.scale)
        return g, g.sum(0), None


@register_model("HJRL")
class HJRL(HypergraphModel):
    r"""HJRL from `"Hypergraph Joint Representation Learning for Hypervertices and Hyperedges via Cross
    Expansion" <https://discovery.researcher.life/article/hypergraph-joint-representation-learning-for-
    hypervertices-and-hyperedges-via-cross-expansion/f111df8775c23d32931eb7cb57f21a12>`_ (Yan et al., AAAI 2024),
    DHG-Bench appendix A.2: nodes and hyperedges both become vertices of the cross-expansion graph and are
    embedded jointly, each layer's weight shared by the four node/hyperedge paths, with a reconstruction loss of
    the incidence matrix.

    .. math::
        \mathbf{X}^{(l+1)} = \sigma(\mathbf{A}_{vv}\mathbf{X}^{(l)}\mathbf{W}^{(l)} + \mathbf{b}^{(l)})
        + \sigma(\mathbf{A}_{ve}\mathbf{Y}^{(l)}\mathbf{W}^{(l)} + \mathbf{b}^{(l)}), \qquad
        \mathbf{Y}^{(l+1)} = \sigma(\mathbf{A}_{ev}\mathbf{X}^{(l)}\mathbf{W}^{(l)} + \mathbf{b}^{(l)})
        + \sigma(\mathbf{A}_{ee}\mathbf{Y}^{(l)}\mathbf{W}^{(l)} + \mathbf{b}^{(l)})

    with the blocks of :class:`CrossExpansion`, :math:`\mathbf{X}^{(0)}` the row-normalised node features,
    :math:`\mathbf{Y}^{(0)}_e` the row-normalised indicator of the features present in :math:`e` (the
    reference's :math:`\mathbb{1}[\sum_{v \in e} \mathbf{x}_v \neq 0]`), :math:`\sigma` ReLU with dropout on each
    term in hidden layers and LeakyReLU (slope 0.01) on the last. The output is :math:`\mathbf{X}^{(L)}`. In
    training mode with ``reconstruction_weight`` :math:`\gamma > 0` the loss computed from the output is
    minimised plus :math:`\gamma\,\mathcal{L}_{rec}(\mathbf{X}^{(L)}, \mathbf{Y}^{(L)})`
    (:func:`hjrl_reconstruction_loss`, exact over all :math:`N \times M` pairs in chunks, or estimated from
    ``reconstruction_samples`` random pairs per step at Yelp or Trivago scale, where :math:`NM` is
    :math:`3.7 \times 10^{10}` or :math:`7.0 \times 10^{10}` with self-loops; its gradient joins through an
    identity node on the output, so every task's loss gets it). ``reconstruction="dhgbench"`` is the
    reference's loss: a sigmoid before BCE with logits, on the log-softmax outputs, with an :math:`N^2`-based
    positive weight. DHG-Bench on Cora: 2 layers, hidden 256, lr 1e-3, dropout 0.5, :math:`\gamma = 0.01`,
    100 epochs (its hyperedge and graph tasks train without the reconstruction term).

    For :math:`\mathcal{V} = \{0, 1, 2, 3\}`, :math:`\mathcal{E} = \{\{0, 1, 2\}, \{1, 2, 3\}\}`::

        hyperedge_index = torch.tensor([[0, 1, 2, 1, 2, 3],
                                        [0, 0, 0, 1, 1, 1]])

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Size of the hidden layers.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of cross-expansion layers. (default: :obj:`2`)
        dropout (float): Dropout on each term of the hidden layers. (default: :obj:`0.5`)
        reconstruction_weight (float): :math:`\gamma \geq 0`. (default: :obj:`0.1`)
        reconstruction (str): ``"paper"`` or ``"dhgbench"`` (the reference's loss). (default: :obj:`"paper"`)
        row_normalize (bool): Row-normalise the node and hyperedge input features. (default: :obj:`True`)
        reconstruction_samples (int): Node-hyperedge pairs drawn per training step (uniformly, with
            replacement) to estimate the reconstruction loss's all-pairs term; 0 sums all :math:`NM` pairs.
            (default: :obj:`0`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse; sparse ones stay sparse),
          hyperedge indices :math:`(2, \mathrm{nnz})` (distinct incidences), optional :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`; :meth:`embed` also returns :math:`(|\mathcal{E}|, F_{out})`
    """

    paper = ("Yan et al., Hypergraph Joint Representation Learning for Hypervertices and Hyperedges via Cross "
             "Expansion, AAAI 2024, https://discovery.researcher.life/article/hypergraph-joint-representation-"
             "learning-for-hypervertices-and-hyperedges-via-cross-expansion/f111df8775c23d32931eb7cb57f21a12")

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, reconstruction_weight: float = 0.1, reconstruction: str = "paper",
                 row_normalize: bool = True, reconstruction_samples: int = 0) -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        self.dropout = dropout
        self.gamma = check_float("reconstruction_weight", reconstruction_weight, 0.0)
        self.reconstruction = check_choice("reconstruction", reconstruction, RECONSTRUCTIONS)
        self.row_normalize = check_bool("row_normalize", row_normalize)
        self.reconstruction_samples = check_int("reconstruction_samples", reconstruction_samples, 0)
        dims = [in_channels] + [hidden_channels] * (num_layers - 1) + [out_channels]
        self.lins = nn.ModuleList(Linear(a, b, bias=False) for a, b in zip(dims[:-1], dims[1:]))
        self.biases = nn.ParameterList(nn.Parameter(torch.empty(b)) for b in dims[1:])
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for lin, bias in zip(self.lins, self.biases):
            glorot_(lin.weight)
            nn.init.zeros_(bias)

    def _inputs(self, inc: Incidence, x: Tensor) -> tuple[Tensor | SparseOperator, Tensor | SparseOperator]:
        feats = self.features(x)
        if isinstance(feats, SparseOperator):
            return self._sparse_inputs(inc, feats)
        xd = dense(feats).to(inc.dtype)
        ones = torch.ones(inc.nnz, dtype=inc.dtype, device=inc.node.device)
        ht = SparseOperator(inc.edge, inc.node, ones, (inc.num_edges, inc.num_nodes))
        with torch.no_grad():  # nonzero counts of H^T X by column blocks: no M x F tensor yet
            step = max(1, (1 << 24) // max(inc.num_edges, 1))
            count = sum(((ht @ xd[:, i:i + step]) != 0).sum(1) for i in range(0, xd.size(1), step))
        count = torch.as_tensor(count).expand(inc.num_edges)
        partial = ((count != 0) & (count != xd.size(1))).nonzero().view(-1)
        if partial.numel() * xd.size(1) <= max(_PARTIAL_ELEMENTS, inc.num_edges * xd.size(1) // 16):
            # (nearly) every hyperedge sees all features or none, as with dense real-valued features:
            # Y = u 1^T / F plus the few other rows (exact float cancellations) from a sparse matrix
            y: Tensor | SparseOperator = _FullRows(count.eq(xd.size(1)).to(inc.dtype), xd.size(1),
                                                   self.row_normalize, self._partial_rows(inc, xd, partial))
        else:
            y = ((ht @ xd) != 0).to(inc.dtype)
            if self.row_normalize:
                y = y * inv(y.sum(1, keepdim=True))
        if self.row_normalize:
            xd = xd * inv(xd.sum(1, keepdim=True))
        return xd, y

    def _partial_rows(self, inc: Incidence, xd: Tensor, rows: Tensor) -> SparseOperator | None:
        """The indicator rows of the hyperedges ``rows`` (as :meth:`_inputs` normalises them) in an
        ``M x F`` sparse matrix, or ``None`` for no rows."""
        if rows.numel() == 0:
            return None
        rank = torch.full((inc.num_edges,), -1, dtype=torch.long, device=rows.device)
        rank[rows] = torch.arange(rows.numel(), device=rows.device)
        keep = rank[inc.edge] >= 0
        ones = torch.ones(int(keep.sum()), dtype=xd.dtype, device=xd.device)
        sub = SparseOperator(rank[inc.edge[keep]], inc.node[keep], ones, (rows.numel(), inc.num_nodes))
        r, c = ((sub @ xd) != 0).nonzero(as_tuple=True)
        vals = torch.ones(r.numel(), dtype=xd.dtype, device=xd.device)
        if self.row_normalize:
            vals = inv(torch.zeros(rows.numel(), dtype=xd.dtype, device=xd.device).index_add_(0, r, vals))[r]
        return SparseOperator(rows[r], c, vals, (inc.num_edges, xd.size(1)))

    def _sparse_inputs(self, inc: Incidence, feats: SparseOperator) -> tuple[SparseOperator, SparseOperator]:
        r"""The inputs of :meth:`_inputs` for sparse features, kept sparse: the same values, and the pattern of
        :math:`\mathbf{H}^\top\mathbf{X}` from a sparse-sparse product (no dense :math:`M \times F`)."""
        csr, dt = feats.matrix, inc.dtype
        n, f = feats.shape
        rows = torch.repeat_interleave(torch.arange(n, device=csr.device), csr.crow_indices().diff())
        cols, vals = csr.col_indices(), csr.values().to(dt)
        ones = torch.ones(inc.nnz, dtype=dt, device=inc.node.device)
        ht = coo_tensor(torch.stack([inc.edge, inc.node]), ones, (inc.num_edges, n))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
            summed = torch.sparse.mm(ht, coo_tensor(torch.stack([rows, cols]), vals, (n, f))).coalesce()
        present = summed.values() != 0
        y_rows, y_cols = summed.indices()[0][present], summed.indices()[1][present]
        y_vals = torch.ones(y_rows.numel(), dtype=dt, device=vals.device)
        if self.row_normalize:
            x_sum = torch.zeros(n, dtype=dt, device=vals.device).index_add_(0, rows, vals)
            vals = vals * inv(x_sum)[rows]
            y_count = torch.zeros(inc.num_edges, dtype=dt, device=vals.device).index_add_(0, y_rows, y_vals)
            y_vals = inv(y_count)[y_rows]
        return (SparseOperator(rows, cols, vals, (n, f)),
                SparseOperator(y_rows, y_cols, y_vals, (inc.num_edges, f)))

    def embed(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> tuple[Tensor, Tensor]:
        """Node and hyperedge outputs :math:`(\\mathbf{X}^{(L)}, \\mathbf{Y}^{(L)})`."""
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        ops = inc.memo("hjrl", lambda: CrossExpansion(inc, hyperedge_index))
        if x.requires_grad:
            h, y = self._inputs(inc, x)
        else:
            h, y = self._cache.get((x, hyperedge_index), ("hjrl-in", inc.num_nodes, inc.num_edges, inc.dtype,
                                                          self.row_normalize), lambda: self._inputs(inc, x))
        last = len(self.lins) - 1
        for i, (lin, b) in enumerate(zip(self.lins, self.biases)):
            hw, yw = lin(h), lin(y)
            terms = [ops.vv @ hw, ops.ve @ yw, ops.ev @ hw, ops.ee @ yw]
            if i < last:
                terms = [_BiasReluDropout.apply(t, b, self.dropout if self.training else 0.0) for t in terms]
            else:
                terms = [F.leaky_relu(t + b, 0.01) for t in terms]
            h, y = terms[0] + terms[1], terms[2] + terms[3]
        return h, y

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        h, y = self.embed(x, hyperedge_index, num_hyperedges)
        if self.training and self.gamma > 0 and torch.is_grad_enabled():
            inc = self.incidence(x, hyperedge_index, num_hyperedges)
            pairs = None
            if self.reconstruction_samples:
                k, dev = self.reconstruction_samples, h.device
                pairs = (torch.randint(inc.num_nodes, (k,), device=dev), torch.randint(inc.num_edges, (k,), device=dev))
            h = _AddToLoss.apply(h, self.gamma * hjrl_reconstruction_loss(h, y, inc, self.reconstruction, pairs))
        return h
