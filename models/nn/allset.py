"""AllSet: every layer is two multiset functions, node-to-hyperedge then hyperedge-to-node.

Speed (same function as the per-incidence formulas, up to float rounding): the node-wise maps run on the
sources before pooling, pooling is a cached CSR product (:func:`~hypergvl.models.nn.sparse.aggregation`), attention
pools through :func:`~hypergvl.models.nn.sparse.weighted_aggregation` (no ``nnz x C`` message tensor), PMA's key map is
folded into one score vector per head, and an input LayerNorm on sparse features is folded into the first
linear map so the features stay sparse. With one head, attention pools by ``embedding_bag`` sums
(:class:`_BagAttention`, no zero-filled CSR output copied); the dense maps
(:func:`~hypergvl.models.nn.live_rows.live_mlp`) skip, in the backward, the rows whose gradient is zero (the nodes
outside the loss, and what only they feed).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import HypergraphModel, Linear, dense, glorot_
from .checks import check_bool, check_choice, check_common, check_int, check_probability
from .dropout import dropout as drop, relu_dropout
from .live_rows import live_mlp, live_rows_linear, mlp_tail
from .mlp import MLP, NORMALIZATIONS, mlp_or_identity
from .registry import register_model
from .sparse import (BagOperator, Incidence, Pattern, SparseOperator, aggregation, direction, scatter, softmax,
                     weighted_aggregation)


class PMA(nn.Module):
    r"""Pooling by multihead attention with one learned seed (Set Transformer; AllSet eq. 7), aggregating the
    sources of each target:

    .. math::
        \mathbf{o}_t = \mathrm{LN}\Big(\mathbf{s} + \big\Vert_{k} \sum_{j \to t} \alpha^k_{jt}
        \mathbf{V}^k \mathbf{x}_j\Big), \qquad
        \alpha^k_{jt} = \mathrm{softmax}_{j \to t}\big(\mathrm{LeakyReLU}(\mathbf{s}^{k\top}
        \mathbf{K}^k \mathbf{x}_j)\big), \qquad
        \mathbf{y}_t = \mathrm{LN}\big(\mathbf{o}_t + \mathrm{ReLU}(\mathrm{MLP}(\mathbf{o}_t))\big)
    """

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int,
                 heads: int) -> None:
        super().__init__()
        self.heads, self.head_channels = heads, hidden_channels // heads
        width = heads * self.head_channels
        self.lin_k = Linear(in_channels, width)
        self.lin_v = Linear(in_channels, width)
        self.seed = nn.Parameter(torch.empty(1, heads, self.head_channels))
        self.rff = MLP(width, width, out_channels, num_layers, 0.0, normalization="none")
        self.ln0, self.ln1 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for lin in (self.lin_k, self.lin_v):  # reference: default Linear init, then Glorot weights
            lin.reset_parameters()
            glorot_(lin.weight)
        nn.init.xavier_uniform_(self.seed)
        for module in (self.rff, self.ln0, self.ln1):
            module.reset_parameters()

    def forward(self, x: Tensor | SparseOperator, inc: Incidence, to: str) -> Tensor:
        """Pool the sources into the targets: ``to="edge"`` nodes into hyperedges, ``to="node"`` the reverse."""
        source, target = (inc.node, inc.edge) if to == "edge" else (inc.edge, inc.node)
        num_targets = inc.num_edges if to == "edge" else inc.num_nodes
        # s_k^T (K_k x + b_k) = (K_k^T s_k)^T x + b_k^T s_k: one score column per head instead of a width-wide key
        seed = self.seed[0]
        w_score = (seed.unsqueeze(-1) * self.lin_k.weight.view(self.heads, self.head_channels, -1)).sum(1)
        score = x @ w_score.t() + (self.lin_k.bias.view(self.heads, -1) * seed).sum(-1)
        alpha = softmax(F.leaky_relu(score, 0.2)[source], target, num_nodes=num_targets)
        if self.heads == 1:
            return self._one_head(x, inc, to, alpha, target, num_targets)
        if isinstance(x, SparseOperator) or num_targets >= x.size(0):
            value = self.lin_v(x).view(-1, self.heads, self.head_channels)
            out = weighted_aggregation(inc, to, alpha, value) + self.seed
        else:  # sum_j a_j (V x_j + b) = (sum_j a_j x_j) V^T + (sum_j a_j) b: the value map on the fewer rows
            pooled = weighted_aggregation(inc, to, alpha, x.unsqueeze(1).expand(-1, self.heads, -1))
            total = scatter(alpha, target, dim=0, dim_size=num_targets, reduce="sum").unsqueeze(-1)
            weight = self.lin_v.weight.view(self.heads, self.head_channels, -1)
            mapped = torch.einsum("thi,hci->thc", pooled, weight)
            out = mapped.addcmul_(total, self.lin_v.bias.view(self.heads, self.head_channels)).add_(self.seed)
        out = self.ln0(out.reshape(num_targets, -1))
        return self.ln1(torch.relu_(self.rff(out)) + out)

    def _one_head(self, x: Tensor | SparseOperator, inc: Incidence, to: str, alpha: Tensor, target: Tensor,
                  num_targets: int) -> Tensor:
        """:meth:`forward` with one head: ``embedding_bag`` pooling and
        :func:`~hypergvl.models.nn.live_rows.live_mlp` maps."""
        lin = self.lin_v
        if isinstance(x, SparseOperator) or num_targets >= x.size(0):
            value = lin(x) if isinstance(x, SparseOperator) else live_rows_linear(x, lin.weight, lin.bias)
            out = bag_attention(inc, to, alpha.view(-1), value).add_(self.seed[0])
        else:  # sum_j a_j (V x_j + b) = (sum_j a_j x_j) V^T + (sum_j a_j) b: the value map on the fewer rows
            pooled = bag_attention(inc, to, alpha.view(-1), x)
            total = scatter(alpha, target, dim=0, dim_size=num_targets, reduce="sum")
            out = torch.addcmul(live_rows_linear(pooled, lin.weight), total, lin.bias).add_(self.seed[0])
        out = self.ln0(out)
        return self.ln1(torch.relu_(live_mlp(self.rff, out)) + out)


class _BagAttention(torch.autograd.Function):
    """:func:`~hypergvl.models.nn.sparse.weighted_aggregation` for one head, ``[nnz]`` weights and ``x [S, C]``: the
    products are ``embedding_bag`` sums over the cached pattern (forward) and its transpose (backward), the
    weights' gradient one ``torch.sparse.sampled_addmm``."""

    @staticmethod
    def forward(ctx, weight: Tensor, x: Tensor, pattern: Pattern) -> Tensor:  # type: ignore[override]
        values = weight.new_zeros(pattern.num_entries).index_add_(0, pattern.inv, weight)
        x = x.contiguous()
        ctx.save_for_backward(values, x)
        ctx.pattern = pattern
        return F.embedding_bag(pattern.col, x, pattern.crow[:-1], mode="sum", per_sample_weights=values)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor | None, Tensor | None, None]:  # type: ignore[override]
        values, x = ctx.saved_tensors
        pattern = ctx.pattern
        grad = grad.contiguous()
        grad_w = grad_x = None
        if ctx.needs_input_grad[1]:
            grad_x = F.embedding_bag(pattern.col_t, grad, pattern.crow_t[:-1], mode="sum",
                                     per_sample_weights=values[pattern.perm_t])
        if ctx.needs_input_grad[0]:
            grad_w = torch.sparse.sampled_addmm(pattern.ones(x.dtype), grad, x.t(), beta=0.0).values()[pattern.inv]
        return grad_w, grad_x, None


def bag_attention(inc: Incidence, to: str, weight: Tensor, x: Tensor) -> Tensor:
    """``weighted_aggregation(inc, to, weight, x)`` for ``[nnz]`` weights and ``x [S, C]`` (:class:`_BagAttention`;
    the pattern is the one :func:`~hypergvl.models.nn.sparse.weighted_aggregation` caches)."""
    def build() -> Pattern:
        dst, src, n_dst, n_src, _ = direction(inc, to)
        return Pattern(dst, src, (n_dst, n_src))
    return _BagAttention.apply(weight, x, inc.memo(("pattern", to), build))


def layer_norm_linear(x: SparseOperator, norm: nn.LayerNorm, lin: Linear) -> Tensor:
    r"""``lin(norm(x.to_dense()))`` with ``x`` kept sparse: with :math:`\mu, \sigma` the mean and standard
    deviation of each row of :math:`\mathbf{x}` over all :math:`F` columns (zeros included),

    .. math::
        \mathrm{LN}(\mathbf{x})\mathbf{W}^\top + \mathbf{c} = \frac{1}{\sigma}\big(\mathbf{x}
        (\mathbf{W}\,\mathrm{diag}\,\boldsymbol{\gamma})^\top - \mu\,\mathbf{W}\boldsymbol{\gamma}\big) +
        \mathbf{W}\boldsymbol{\beta} + \mathbf{c}

    (the variance summed over the stored entries, centred, plus :math:`\mu^2` for each implicit zero)."""
    n, f = x.shape
    counts = x.matrix.crow_indices().diff()
    rows = torch.repeat_interleave(torch.arange(n, device=counts.device), counts)
    values = x.values
    mean = values.new_zeros(n).index_add_(0, rows, values) / f
    sq = values.new_zeros(n).index_add_(0, rows, (values - mean[rows]).square()) + (f - counts) * mean.square()
    rstd = torch.rsqrt(sq / f + norm.eps).unsqueeze(-1)
    scaled = lin.weight * norm.weight
    out = rstd * (x @ scaled.t() - mean.unsqueeze(-1) * scaled.sum(1)) + lin.weight @ norm.bias
    return out if lin.bias is None else out + lin.bias


def sparse_input_mlp(mlp: MLP, x: Tensor | SparseOperator) -> Tensor:
    """``mlp(x)``, with sparse ``x`` kept sparse through an input LayerNorm (:func:`layer_norm_linear`) or an
    identity input norm; a BatchNorm input norm (statistics per column) densifies as :class:`MLP` does."""
    norm = mlp.norms[0]
    if not isinstance(x, SparseOperator) or not mlp.input_norm or isinstance(norm, nn.BatchNorm1d):
        return mlp(x)
    first = layer_norm_linear(x, norm, mlp.lins[0]) if isinstance(norm, nn.LayerNorm) else mlp.lins[0](x)
    return mlp_tail(mlp, first)


class DeepSetsBlock(nn.Module):
    r"""AllDeepSets half-layer: :math:`\mathbf{y}_t = \mathrm{ReLU}(\mathrm{MLP}_{dec}(\bigoplus_{j \to t}
    \mathrm{ReLU}(\mathrm{MLP}_{enc}(\mathbf{x}_j))))` with :math:`\bigoplus` sum or mean."""

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int, dropout: float,
                 normalization: str, input_norm: bool, aggregate: str) -> None:
        super().__init__()
        self.enc = mlp_or_identity(in_channels, hidden_channels, hidden_channels, num_layers, dropout,
                                   normalization, input_norm)
        self.dec = mlp_or_identity(hidden_channels, hidden_channels, out_channels, num_layers, dropout,
                                   normalization, input_norm)
        self.dropout, self.aggregate = dropout, aggregate

    def reset_parameters(self) -> None:
        for mlp in (self.enc, self.dec):
            if isinstance(mlp, MLP):
                mlp.reset_parameters()

    def forward(self, x: Tensor | SparseOperator, inc: Incidence, to: str) -> Tensor:
        """Pool the sources into the targets: ``to="edge"`` nodes into hyperedges, ``to="node"`` the reverse."""
        h = drop(F.relu(sparse_input_mlp(self.enc, x) if isinstance(self.enc, MLP) else dense(x)), self.dropout,
                 self.training)
        return F.relu(self.dec(aggregation(inc, to, self.aggregate) @ h))


class _SetGNN(HypergraphModel):
    """AllSet ``SetGNN``: ``num_layers`` blocks of (V->E, E->V) multiset functions, then an MLP decoder."""

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int, dropout: float,
                 pma: bool, heads: int, mlp_num_layers: int, decoder_hidden: int | None, decoder_num_layers: int,
                 normalization: str, input_norm: bool, input_dropout: float, gpr: bool, aggregate: str) -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        check_int("heads", heads)
        check_int("mlp_num_layers", mlp_num_layers)
        decoder_hidden = hidden_channels if decoder_hidden is None else check_int("decoder_hidden", decoder_hidden)
        check_int("decoder_num_layers", decoder_num_layers)
        check_choice("normalization", normalization, NORMALIZATIONS)
        check_bool("input_norm", input_norm)
        self.input_dropout = check_probability("input_dropout", input_dropout)
        self.gpr = check_bool("gpr", gpr)
        check_choice("aggregate", aggregate, ("sum", "mean"))
        if pma and hidden_channels % heads:
            raise ValueError(f"hidden_channels ({hidden_channels}) must be divisible by heads ({heads})")
        self.dropout, self.pma = dropout, pma

        def block(a: int) -> nn.Module:
            if pma:
                return PMA(a, hidden_channels, hidden_channels, mlp_num_layers, heads)
            return DeepSetsBlock(a, hidden_channels, hidden_channels, mlp_num_layers, dropout, normalization,
                                 input_norm, aggregate)
        self.v2e = nn.ModuleList(block(in_channels if i == 0 else hidden_channels) for i in range(num_layers))
        self.e2v = nn.ModuleList(block(hidden_channels) for _ in range(num_layers))
        if gpr:
            self.gpr_mlp = MLP(in_channels, hidden_channels, hidden_channels, mlp_num_layers, dropout,
                               normalization=normalization)
            self.gpr_weights = nn.Linear(num_layers + 1, 1, bias=False)
        self.decoder = MLP(hidden_channels, decoder_hidden, out_channels, decoder_num_layers, dropout,
                           normalization=normalization)

    def reset_parameters(self) -> None:
        for module in [*self.v2e, *self.e2v, self.decoder] + ([self.gpr_mlp, self.gpr_weights] if self.gpr else []):
            module.reset_parameters()

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        h = self.features(x)
        if self.pma and isinstance(h, SparseOperator):  # embedding_bag products of the sparse input (2x faster)
            h = BagOperator.wrap(h)
        layers = []
        if self.gpr:
            layers.append(F.relu(live_mlp(self.gpr_mlp, h)))  # a sparse h stays sparse
        else:
            h = drop(h, self.input_dropout, self.training)
        for v2e, e2v in zip(self.v2e, self.e2v):
            h = relu_dropout(v2e(h, inc, "edge"), self.dropout, self.training)
            h = F.relu(e2v(h, inc, "node"))
            layers.append(h)
            h = drop(h, self.dropout, self.training)
        if self.gpr:
            # gpr_weights (Linear(num_layers + 1, 1), no bias) over the stacked outputs, without stacking them
            w = self.gpr_weights.weight[0]
            h = sum(w[i] * layer for i, layer in enumerate(layers))
        return live_mlp(self.decoder, h)


_ARGS = r"""
    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Size of node and hyperedge representations.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of (V->E, E->V) blocks. (default: :obj:`2`)
        dropout (float): Dropout between half-layers and inside MLPs. (default: :obj:`0.5`){heads}
        mlp_num_layers (int): Depth of the inner MLPs, at least 1. (default: :obj:`2`)
        decoder_hidden (int or None): Decoder width; ``None`` uses ``hidden_channels``. (default: :obj:`None`)
        decoder_num_layers (int): Decoder depth. (default: :obj:`2`)
        normalization (str): ``"ln"``, ``"bn"`` or ``"none"`` inside MLPs. (default: :obj:`"ln"`)
        input_dropout (float): Dropout on the input features (not with ``gpr``). (default: :obj:`0.2`)
        gpr (bool): Learn a weighted sum of all block outputs (AllSet ``GPR``; DHG-Bench Cora uses it).
            (default: :obj:`False`){extra}

    Shapes:
        - **input:** node features :math:`(|\mathcal{{V}}|, F_{{in}})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{{nnz}})`, optional :math:`|\mathcal{{E}}|`
        - **output:** :math:`(|\mathcal{{V}}|, F_{{out}})`
"""

_PAPER = ("Chien et al., You are AllSet: A Multiset Function Framework for Hypergraph Neural Networks, "
          "ICLR 2022, https://arxiv.org/abs/2106.13264")


@register_model("AllSetTransformer")
class AllSetTransformer(_SetGNN):
    __doc__ = r"""AllSetTransformer from `"You are AllSet: A Multiset Function Framework for Hypergraph Neural Networks"
    <https://arxiv.org/abs/2106.13264>`_ (Chien et al., ICLR 2022), DHG-Bench appendix A.2.2: "each layer as a
    composition of two multiset functions ... incorporating the Set Transformer".

    .. math::
        \mathbf{Z}_e^{(l)} = f_{V \to E}\big(\{\mathbf{X}_v^{(l-1)} : v \in e\}\big), \qquad
        \mathbf{X}_v^{(l)} = f_{E \to V}\big(\{\mathbf{Z}_e^{(l)} : e \ni v\}\big)

    with both :math:`f` the :class:`PMA` multiset function (ReLU and dropout after each), input dropout
    first and an MLP decoder last. The reference's ``LearnMask`` is left out: its mask only scales
    aggregation weights that the PMA path never reads.
    """ + _ARGS.format(heads="""
        heads (int): Attention heads (``hidden_channels`` must be divisible). (default: :obj:`1`)""",
                       extra="")

    paper = _PAPER

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, heads: int = 1, mlp_num_layers: int = 2, decoder_hidden: int | None = None,
                 decoder_num_layers: int = 2, normalization: str = "ln", input_dropout: float = 0.2,
                 gpr: bool = False) -> None:
        super().__init__(in_channels, hidden_channels, out_channels, num_layers, dropout, True, heads,
                         mlp_num_layers, decoder_hidden, decoder_num_layers, normalization, False,
                         input_dropout, gpr, "sum")


@register_model("AllDeepSets")
class AllDeepSets(_SetGNN):
    __doc__ = r"""AllDeepSets from AllSet (Chien et al., ICLR 2022, https://arxiv.org/abs/2106.13264): the AllSet layers
    with Deep Sets multiset functions instead of attention.

    .. math::
        f(\mathcal{S}) = \mathrm{ReLU}\Big(\mathrm{MLP}_{dec}\Big(\bigoplus_{\mathbf{x} \in \mathcal{S}}
        \mathrm{ReLU}(\mathrm{MLP}_{enc}(\mathbf{x}))\Big)\Big)

    applied node-to-hyperedge then hyperedge-to-node, with :math:`\bigoplus` a sum (AllSet's setting) or mean.
    """ + _ARGS.format(heads="", extra="""
        input_norm (bool): Normalise the input of every inner MLP. (default: :obj:`True`)
        aggregate (str): ``"sum"`` or ``"mean"``. (default: :obj:`"sum"`)""")

    paper = _PAPER

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, mlp_num_layers: int = 2, decoder_hidden: int | None = None,
                 decoder_num_layers: int = 2, normalization: str = "ln", input_norm: bool = True,
                 input_dropout: float = 0.2, gpr: bool = False, aggregate: str = "sum") -> None:
        super().__init__(in_channels, hidden_channels, out_channels, num_layers, dropout, False, 1,
                         mlp_num_layers, decoder_hidden, decoder_num_layers, normalization, input_norm,
                         input_dropout, gpr, aggregate)
