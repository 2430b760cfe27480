"""UniGNN: GNN layers lifted to hypergraphs by two-stage aggregation (UniGCN, UniGIN, UniGAT)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import HypergraphModel, Linear, glorot_
from .checks import check_bool, check_choice, check_common, check_float, check_int, check_probability
from .dropout import dropout as drop
from .hgnn import hypergraph_propagation
from .registry import register_model
from .sparse import Incidence, Propagation, SparseOperator, aggregation, inv, softmax, weighted_aggregation


def unigcn_propagation(inc: Incidence, first_aggregate: str = "mean") -> Propagation:
    r"""The cached UniGCN operator :math:`\mathbf{x}'_v = \frac{1}{\sqrt{d_v}} \sum_{e \ni v}
    \frac{1}{\sqrt{d_e}} \mathbf{h}_e` with :math:`\mathbf{h}_e` the mean (or sum) of the members of :math:`e`
    and :math:`d_e` the mean (or sum) of their degrees (UniGNN eq. 6 and its code); :math:`d_v = 0` gives 1."""
    def build() -> Propagation:
        dv = torch.where(inc.deg_v > 0, inc.deg_v.pow(-0.5), torch.ones_like(inc.deg_v))
        de = inc.deg_v.new_zeros(inc.num_edges).index_add_(0, inc.edge, inc.deg_v[inc.node])
        size = inv(inc.deg_e) if first_aggregate == "mean" else torch.ones_like(inc.deg_e)
        return inc.propagation(dv, inv(de * size, 0.5) * size, torch.ones_like(dv))
    return inc.memo(("unigcn", first_aggregate), build)


def unigin_propagation(inc: Incidence, first_aggregate: str = "mean") -> Propagation:
    r"""The cached UniGIN neighbourhood sum :math:`\sum_{e \ni v} \mathbf{h}_e` (mean or sum members)."""
    def build() -> Propagation:
        size = inv(inc.deg_e) if first_aggregate == "mean" else torch.ones_like(inc.deg_e)
        ones = torch.ones_like(inc.deg_v)
        return inc.propagation(ones, size, ones)
    return inc.memo(("unigin", first_aggregate), build)


def reduce_propagation(inc: Incidence, reduce: str) -> Propagation:
    r"""The un-normalised two-stage aggregation :math:`\mathbf{x}'_v = \mathrm{reduce}_{e \ni v}\,
    \mathrm{reduce}_{u \in e}\, \mathbf{x}_u` with ``reduce`` ``"mean"`` or ``"sum"``: what DHG-Bench's UniGCNII
    code computes (two ``scatter(..., reduce=args.reduce)`` calls, no degree normalisation); its yamls set
    ``reduce: 'mean'`` everywhere but Trivago. Mean-of-means is HGNN's random-walk operator
    :math:`\mathbf{D}_v^{-1} \mathbf{H} \mathbf{D}_e^{-1} \mathbf{H}^\top` and sum-of-sums UniGIN's with summed
    members, so both are those cached operators. A node in no hyperedge gets 0, as ``scatter`` gives."""
    if reduce == "mean":
        return hypergraph_propagation(inc, symmetric=False)
    return unigin_propagation(inc, "sum")


def l2_normalize_rows(x: Tensor) -> Tensor:
    """Rows scaled to unit norm with the scale not back-propagated (UniGNN ``normalize_l2``)."""
    norm = x.detach().norm(dim=1, keepdim=True)
    return x * torch.where(norm > 0, 1.0 / norm, torch.zeros_like(norm))


class UniGCNConv(nn.Module):
    r"""UniGCN: :math:`\mathbf{X}' = \mathbf{P}_{\mathrm{UniGCN}} \mathbf{X} \mathbf{W}`."""

    def __init__(self, in_channels: int, out_channels: int, heads: int = 1) -> None:
        super().__init__()
        self.lin = Linear(in_channels, heads * out_channels, bias=False)

    def reset_parameters(self) -> None:
        self.lin.reset_parameters()

    def forward(self, x: Tensor | SparseOperator, inc: Incidence, first_aggregate: str) -> Tensor:
        return unigcn_propagation(inc, first_aggregate) @ self.lin(x)


class UniGINConv(nn.Module):
    r"""UniGIN: :math:`\mathbf{x}'_v = (1 + \varepsilon)\mathbf{W}\mathbf{x}_v + \sum_{e \ni v}
    \mathbf{h}_e` with :math:`\mathbf{h}_e` aggregated from :math:`\mathbf{W}\mathbf{x}_u`, learned
    :math:`\varepsilon` (initially 0)."""

    def __init__(self, in_channels: int, out_channels: int, heads: int = 1) -> None:
        super().__init__()
        self.lin = Linear(in_channels, heads * out_channels, bias=False)
        self.eps = nn.Parameter(torch.zeros(1))

    def reset_parameters(self) -> None:
        self.lin.reset_parameters()
        nn.init.zeros_(self.eps)

    def forward(self, x: Tensor | SparseOperator, inc: Incidence, first_aggregate: str) -> Tensor:
        h = self.lin(x)
        return (1 + self.eps) * h + unigin_propagation(inc, first_aggregate) @ h


class UniGATConv(nn.Module):
    r"""UniGAT: :math:`\mathbf{x}'_v = \sum_{e \ni v} \alpha_{ve} \mathbf{h}_e`,
    :math:`\alpha_{ve} = \mathrm{softmax}_{e \ni v}(\mathrm{LeakyReLU}(\mathbf{a}^\top \mathbf{h}_e))`
    per head, :math:`\mathbf{h}_e` aggregated from :math:`\mathbf{W}\mathbf{x}_u` (UniGNN code: the score
    depends on the hyperedge only)."""

    def __init__(self, in_channels: int, out_channels: int, heads: int = 1, negative_slope: float = 0.2,
                 attention_dropout: float = 0.0) -> None:
        super().__init__()
        self.heads, self.out_channels = heads, out_channels
        self.negative_slope, self.attention_dropout = negative_slope, attention_dropout
        self.lin = Linear(in_channels, heads * out_channels, bias=False)
        self.att_e = nn.Parameter(torch.empty(1, heads, out_channels))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.lin.reset_parameters()
        glorot_(self.att_e)

    def forward(self, x: Tensor | SparseOperator, inc: Incidence, first_aggregate: str) -> Tensor:
        # The same function as pooling h_e = pool(W x_u) and attending over the h_e, up to float rounding, without
        # a |E| x heads x C tensor (nor nnz x heads x C messages): a^T h_e = pool(a^T W x_u) is pooled from the
        # nodes' scores, and h_e is formed head by head inside the attention (recomputed in its backward).
        n = inc.num_nodes
        pool = aggregation(inc, "edge", first_aggregate)
        h = self.lin(x).view(n, self.heads, self.out_channels)
        score = F.leaky_relu(pool @ (h * self.att_e).sum(-1), self.negative_slope)[inc.edge]
        alpha = drop(softmax(score, inc.node, num_nodes=n), self.attention_dropout, self.training)
        return weighted_aggregation(inc, "node", alpha, h, through=pool).reshape(n, -1)


class _UniGNN(HypergraphModel):
    """UniGNN model of the reference code: input dropout, ``num_layers`` convolutions with ReLU and dropout
    between them, optional row L2 normalisation after each; the last convolution has one head."""

    conv_class: type[nn.Module]

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int, dropout: float,
                 heads: int, input_dropout: float, first_aggregate: str, use_norm: bool, **conv_kwargs: float) -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        check_int("heads", heads)
        self.dropout = dropout
        self.input_dropout = check_probability("input_dropout", input_dropout)
        self.first_aggregate = check_choice("first_aggregate", first_aggregate, ("mean", "sum"))
        self.use_norm = check_bool("use_norm", use_norm)
        width = hidden_channels * heads
        self.convs = nn.ModuleList(
            self.conv_class(in_channels if i == 0 else width, hidden_channels, heads, **conv_kwargs)
            for i in range(num_layers - 1))
        self.convs.append(self.conv_class(in_channels if num_layers == 1 else width, out_channels, 1, **conv_kwargs))

    def reset_parameters(self) -> None:
        for conv in self.convs:
            conv.reset_parameters()

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        h = drop(self.features(x), self.input_dropout, self.training)
        for i, conv in enumerate(self.convs):
            h = conv(h, inc, self.first_aggregate)
            if self.use_norm:
                h = l2_normalize_rows(h)
            if i < len(self.convs) - 1:
                h = drop(F.relu(h), self.dropout, self.training)
        return h


_ARGS_DOC = r"""
    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Size of each hidden head.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of convolutions. (default: :obj:`2`)
        dropout (float): Dropout after each hidden layer. (default: :obj:`0.5`)
        heads (int): Heads (width multiplier) of hidden convolutions. (default: :obj:`{heads}`)
        input_dropout (float): Dropout on the input features (UniGNN default 0.6). (default: :obj:`0.6`)
        first_aggregate (str): ``"mean"`` or ``"sum"`` of member features into a hyperedge.
            (default: :obj:`"mean"`)
        use_norm (bool): L2-normalise node rows after each convolution. (default: :obj:`False`){extra}

    Shapes:
        - **input:** node features :math:`(|\mathcal{{V}}|, F_{{in}})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{{nnz}})`, optional :math:`|\mathcal{{E}}|`
        - **output:** :math:`(|\mathcal{{V}}|, F_{{out}})`
"""

_PAPER = ("Huang & Yang, UniGNN: a Unified Framework for Graph and Hypergraph Neural Networks, IJCAI 2021, "
          "https://arxiv.org/abs/2105.00956")


@register_model("UniGCN")
class UniGCN(_UniGNN):
    __doc__ = r"""UniGCN from `"UniGNN: a Unified Framework for Graph and Hypergraph Neural Networks"
    <https://arxiv.org/abs/2105.00956>`_ (Huang & Yang, IJCAI 2021), DHG-Bench appendix A.2.2: GCN lifted by
    first aggregating members into hyperedges, then hyperedges into nodes.

    .. math::
        \mathbf{h}_e = \frac{1}{|e|}\sum_{u \in e} \mathbf{W}\mathbf{x}_u, \qquad
        \mathbf{x}'_v = \frac{1}{\sqrt{d_v}} \sum_{e \ni v} \frac{1}{\sqrt{d_e}} \mathbf{h}_e, \qquad
        d_e = \frac{1}{|e|}\sum_{u \in e} d_u
    """ + _ARGS_DOC.format(heads=1, extra="")

    paper = _PAPER
    conv_class = UniGCNConv

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, heads: int = 1, input_dropout: float = 0.6, first_aggregate: str = "mean",
                 use_norm: bool = False) -> None:
        super().__init__(in_channels, hidden_channels, out_channels, num_layers, dropout, heads, input_dropout,
                         first_aggregate, use_norm)


@register_model("UniGIN")
class UniGIN(_UniGNN):
    __doc__ = r"""UniGIN from UniGNN (Huang & Yang, IJCAI 2021, https://arxiv.org/abs/2105.00956): GIN lifted to
    hypergraphs.

    .. math::
        \mathbf{h}_e = \frac{1}{|e|}\sum_{u \in e} \mathbf{W}\mathbf{x}_u, \qquad
        \mathbf{x}'_v = (1 + \varepsilon)\,\mathbf{W}\mathbf{x}_v + \sum_{e \ni v} \mathbf{h}_e
    """ + _ARGS_DOC.format(heads=1, extra="")

    paper = _PAPER
    conv_class = UniGINConv

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, heads: int = 1, input_dropout: float = 0.6, first_aggregate: str = "mean",
                 use_norm: bool = False) -> None:
        super().__init__(in_channels, hidden_channels, out_channels, num_layers, dropout, heads, input_dropout,
                         first_aggregate, use_norm)


@register_model("UniGAT")
class UniGAT(_UniGNN):
    __doc__ = r"""UniGAT from UniGNN (Huang & Yang, IJCAI 2021, https://arxiv.org/abs/2105.00956): GAT lifted to
    hypergraphs, attending over the hyperedges of each node.

    .. math::
        \mathbf{h}_e = \frac{1}{|e|}\sum_{u \in e} \mathbf{W}\mathbf{x}_u, \qquad
        \alpha_{ve} = \mathrm{softmax}_{e \ni v}\big(\mathrm{LeakyReLU}(\mathbf{a}^\top \mathbf{h}_e)\big),
        \qquad \mathbf{x}'_v = \sum_{e \ni v} \alpha_{ve} \mathbf{h}_e
    """ + _ARGS_DOC.format(heads=8, extra="""
        negative_slope (float): LeakyReLU slope of the scores. (default: :obj:`0.2`)
        attention_dropout (float): Dropout on attention coefficients. (default: :obj:`0.5`)""")

    paper = _PAPER
    conv_class = UniGATConv

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, heads: int = 8, input_dropout: float = 0.6, first_aggregate: str = "mean",
                 use_norm: bool = False, negative_slope: float = 0.2, attention_dropout: float = 0.5) -> None:
        check_float("negative_slope", negative_slope, 0.0)
        check_probability("attention_dropout", attention_dropout)
        super().__init__(in_channels, hidden_channels, out_channels, num_layers, dropout, heads, input_dropout,
                         first_aggregate, use_norm, negative_slope=negative_slope,
                         attention_dropout=attention_dropout)
