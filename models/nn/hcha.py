"""HCHA: hypergraph convolution with optional hypergraph attention."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import HypergraphModel, Linear, glorot_
from .checks import check_bool, check_choice, check_common, check_float, check_int
from .dropout import dropout as drop
from .hgnn import HGNNConv, hypergraph_propagation
from .registry import register_model
from .sparse import Incidence, SparseOperator, inv, scatter, softmax


class HCHAAttentionConv(nn.Module):
    r"""Hypergraph convolution with hypergraph attention (HCHA section 3.2), as DHG-Bench computes it.

    With :math:`\mathbf{z}_v = \mathbf{\Theta}\mathbf{x}_v` split into :math:`K` heads and the hyperedge
    representation :math:`\mathbf{u}_e = \frac{1}{|e|}\sum_{v \in e} \mathbf{z}_v`:

    .. math::
        \alpha_{ve} = \mathrm{softmax}\big(\mathrm{LeakyReLU}(\mathbf{a}^\top [\mathbf{z}_v \Vert
        \mathbf{u}_e])\big), \qquad
        \mathbf{x}'_v = d_v^{-\gamma} \sum_{e \ni v} \alpha_{ve} \frac{1}{|e|} \sum_{u \in e} \alpha_{ue}\,
        d_u^{-(1-\gamma)} \mathbf{z}_u + \mathbf{b}

    with the softmax over the hyperedges of :math:`v` (``attention_mode="edge"``) or over the members of
    :math:`e` (``"node"``), and :math:`\gamma = 1/2` (symmetric) or :math:`\gamma = 1` (row-normalised).
    """

    def __init__(self, in_channels: int, out_channels: int, heads: int, symmetric: bool, attention_mode: str,
                 negative_slope: float, attention_dropout: float) -> None:
        super().__init__()
        self.heads, self.out_channels, self.symmetric = heads, out_channels, symmetric
        self.attention_mode, self.negative_slope = attention_mode, negative_slope
        self.attention_dropout = attention_dropout
        self.lin = Linear(in_channels, heads * out_channels, bias=False)
        self.att = nn.Parameter(torch.empty(1, heads, 2 * out_channels))
        self.bias = nn.Parameter(torch.empty(heads * out_channels))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        glorot_(self.lin.weight)
        glorot_(self.att)
        nn.init.zeros_(self.bias)

    def forward(self, x: Tensor | SparseOperator, inc: Incidence) -> Tensor:
        v, e, n, m = inc.node, inc.edge, inc.num_nodes, inc.num_edges
        z = self.lin(x).view(n, self.heads, self.out_channels)
        inv_de = inv(inc.deg_e).view(-1, 1, 1)
        u = scatter(z[v], e, dim=0, dim_size=m, reduce="sum") * inv_de
        alpha = (torch.cat([z[v], u[e]], dim=-1) * self.att).sum(-1)
        alpha = F.leaky_relu(alpha, self.negative_slope)
        alpha = softmax(alpha, e, num_nodes=m) if self.attention_mode == "node" else softmax(alpha, v, num_nodes=n)
        alpha = drop(alpha, self.attention_dropout, self.training).unsqueeze(-1)
        dv = inv(inc.deg_v, 0.5 if self.symmetric else 1.0).view(-1, 1, 1)
        if self.symmetric:
            z = z * dv
        edge = scatter(alpha * z[v], e, dim=0, dim_size=m, reduce="sum") * inv_de
        out = scatter(alpha * edge[e], v, dim=0, dim_size=n, reduce="sum") * dv
        return out.reshape(n, -1) + self.bias


@register_model("HCHA")
class HCHA(HypergraphModel):
    r"""HCHA from `"Hypergraph Convolution and Hypergraph Attention" <https://arxiv.org/abs/1901.08150>`_
    (Bai et al., Pattern Recognition 2021), DHG-Bench appendix A.2.1.

    .. math::
        \mathbf{X}^{(l+1)} = \sigma\left(\mathbf{D}_v^{-1/2} \mathbf{H} \mathbf{W} \mathbf{D}_e^{-1}
        \mathbf{H}^{\top} \mathbf{D}_v^{-1/2} \mathbf{X}^{(l)} \mathbf{\Theta}^{(l)} + \mathbf{b}^{(l)}\right)

    with unit hyperedge weights :math:`\mathbf{W} = \mathbf{I}`, :math:`\sigma` ELU plus dropout on hidden
    layers. DHG-Bench runs HCHA with this symmetric normalisation (``HCHA_symdegnorm: true``) and no attention;
    ``use_attention=True`` replaces :math:`\mathbf{H}` by learned incidence weights (HCHA section 3.2, see
    :class:`HCHAAttentionConv`), hidden layers then having ``heads`` heads of ``hidden_channels // heads``.

    For :math:`\mathcal{E} = \{\{0, 1, 2\}, \{1, 2, 3\}\}`:
    ``hyperedge_index = torch.tensor([[0, 1, 2, 1, 2, 3], [0, 0, 0, 1, 1, 1]])``.

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Size of the hidden layers.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of convolutions. (default: :obj:`2`)
        dropout (float): Dropout after hidden layers and on attention coefficients. (default: :obj:`0.5`)
        symmetric (bool): Symmetric (``True``) or row (``False``) degree normalisation. (default: :obj:`True`)
        use_attention (bool): Hypergraph attention. (default: :obj:`False`)
        heads (int): Attention heads of hidden layers (``hidden_channels`` must be divisible).
            (default: :obj:`1`)
        attention_mode (str): ``"edge"`` (softmax over a node's hyperedges) or ``"node"`` (over a
            hyperedge's nodes). (default: :obj:`"edge"`)
        negative_slope (float): LeakyReLU slope of the attention scores. (default: :obj:`0.2`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{nnz})`, optional :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = ("Bai et al., Hypergraph Convolution and Hypergraph Attention, Pattern Recognition 2021, "
             "https://arxiv.org/abs/1901.08150")

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, symmetric: bool = True, use_attention: bool = False, heads: int = 1,
                 attention_mode: str = "edge", negative_slope: float = 0.2) -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        check_bool("symmetric", symmetric)
        check_bool("use_attention", use_attention)
        check_int("heads", heads)
        check_choice("attention_mode", attention_mode, ("edge", "node"))
        check_float("negative_slope", negative_slope, 0.0)
        if use_attention and hidden_channels % heads:
            raise ValueError(f"hidden_channels ({hidden_channels}) must be divisible by heads ({heads})")
        self.dropout, self.symmetric, self.use_attention = dropout, symmetric, use_attention
        dims = [in_channels] + [hidden_channels] * (num_layers - 1) + [out_channels]
        if use_attention:
            self.convs = nn.ModuleList(
                HCHAAttentionConv(a, b // (heads if i < num_layers - 1 else 1), heads if i < num_layers - 1 else 1,
                                  symmetric, attention_mode, negative_slope, dropout)
                for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])))
        else:
            self.convs = nn.ModuleList(HGNNConv(a, b) for a, b in zip(dims[:-1], dims[1:]))

    def reset_parameters(self) -> None:
        for conv in self.convs:
            conv.reset_parameters()

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        structure = inc if self.use_attention else hypergraph_propagation(inc, self.symmetric)
        h = self.features(x)
        for conv in self.convs[:-1]:
            h = drop(F.elu(conv(h, structure), inplace=True), self.dropout, self.training)
        return self.convs[-1](h, structure)
