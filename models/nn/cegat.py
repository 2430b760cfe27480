"""CEGAT: a GAT on the clique expansion of the hypergraph (DHG-Bench baseline)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import HypergraphModel, Linear, glorot_
from .checks import check_bool, check_common, check_float, check_int, check_probability
from .dropout import dropout as drop
from .mlp import make_norm
from .registry import register_model
from .sparse import Incidence, Pattern, SparseOperator, softmax, weighted_sum


def clique_attention(inc: Incidence) -> tuple[Tensor, Tensor, Pattern]:
    """``(source, target)`` of the unweighted clique expansion plus one self-loop per node, and the pairs' CSR
    pattern (cached per structure)."""
    def build() -> tuple[Tensor, Tensor, Pattern]:
        row, col, _ = inc.clique_expansion()
        loops = torch.arange(inc.num_nodes, device=row.device)
        source, target = torch.cat([row, loops]), torch.cat([col, loops])
        return source, target, Pattern(target, source, (inc.num_nodes, inc.num_nodes))
    return inc.memo("clique_attention", build)


class GATLayer(nn.Module):
    r"""Graph attention (`Veličković et al., ICLR 2018 <https://arxiv.org/abs/1710.10903>`_), computing what
    PyG's ``GATConv`` computes, with a first linear map that accepts sparse features:

    .. math::
        \mathbf{x}'_i = \big\Vert_{k=1}^{K} \sum_{j \in \mathcal{N}(i)} \alpha^{k}_{ij}
        \mathbf{\Theta}^{k} \mathbf{x}_j + \mathbf{b}, \qquad
        \alpha^{k}_{ij} = \mathrm{softmax}_j\Big(\mathrm{LeakyReLU}\big(\mathbf{a}^{k\top}_{s}
        \mathbf{\Theta}^{k}\mathbf{x}_j + \mathbf{a}^{k\top}_{t} \mathbf{\Theta}^{k}\mathbf{x}_i\big)\Big)

    (heads concatenated, or averaged when ``concat=False``). The edges must contain self-loops.

    Memory: the attention-weighted sum is a CSR product per head (:func:`~.sparse.weighted_sum`), forward and
    backward, so no ``edges x heads x channels`` message tensor is formed or kept: what the layer keeps beyond
    its input and output is the ``edges x heads`` scores and weights. The per-edge messages of the plain form
    are what makes CEGAT run out of memory at Yelp scale in DHG-Bench (sum |e|^2 = 3.3e7 clique pairs x 8 heads
    x 32 x 4 B = 34 GB); here each kept tensor is 3.3e7 x 8 x 4 B = 1 GB. A CEGAT training step on a batch of 256
    RHG-3 graphs is 5.6x faster than with gather-multiply-scatter (``benchmarks/cegat_attention.py``).
    """

    def __init__(self, in_channels: int, out_channels: int, heads: int = 1, concat: bool = True,
                 negative_slope: float = 0.2, attention_dropout: float = 0.0) -> None:
        super().__init__()
        self.heads, self.out_channels, self.concat = heads, out_channels, concat
        self.negative_slope, self.attention_dropout = negative_slope, attention_dropout
        self.lin = Linear(in_channels, heads * out_channels, bias=False)
        self.att_src = nn.Parameter(torch.empty(1, heads, out_channels))
        self.att_dst = nn.Parameter(torch.empty(1, heads, out_channels))
        self.bias = nn.Parameter(torch.empty(heads * out_channels if concat else out_channels))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        glorot_(self.lin.weight)
        glorot_(self.att_src)
        glorot_(self.att_dst)
        nn.init.zeros_(self.bias)

    def forward(self, x: Tensor | SparseOperator, source: Tensor, target: Tensor, pattern: Pattern) -> Tensor:
        """``source``/``target``: the edges (self-loops included); ``pattern``: ``Pattern(target, source, (n, n))``."""
        h = self.lin(x).view(-1, self.heads, self.out_channels)
        a_src, a_dst = (h * self.att_src).sum(-1), (h * self.att_dst).sum(-1)
        score = F.leaky_relu(a_src[source] + a_dst[target], self.negative_slope)
        alpha = drop(softmax(score, target, num_nodes=h.size(0)), self.attention_dropout, self.training)
        out = weighted_sum(pattern, alpha, h)
        out = out.reshape(h.size(0), -1) if self.concat else out.mean(dim=1)
        return out + self.bias


@register_model("CEGAT")
class CEGAT(HypergraphModel):
    r"""CEGAT: GAT on the clique expansion, the expansion baseline of AllSet (`Chien et al., ICLR 2022
    <https://arxiv.org/abs/2106.13264>`_) used by DHG-Bench (appendix A.2: "CEGAT employs GAT to model node importance within the cliques").

    .. math::
        \mathbf{X}^{(l+1)} = \mathrm{GAT}^{(l)}\big(\mathbf{X}^{(l)}, \mathcal{G}_{CE}\big), \qquad
        \mathcal{G}_{CE} = \{(u, v) : u \neq v,\ \exists e \in \mathcal{E},\ \{u, v\} \subseteq e\}
        \cup \{(v, v)\}

    Hidden layers have ``heads`` heads of ``hidden_channels`` each (concatenated or averaged) followed by ReLU,
    optional BatchNorm and dropout; the last layer has ``output_heads`` heads, averaged.

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Size of each hidden attention head.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of GAT layers. (default: :obj:`2`)
        dropout (float): Dropout after each hidden layer. (default: :obj:`0.5`)
        heads (int): Heads of the hidden layers (DHG-Bench default 8, Cora 4). (default: :obj:`8`)
        output_heads (int): Heads of the last layer. (default: :obj:`1`)
        concat (bool): Concatenate hidden heads, else average them (Cora: ``False``). (default: :obj:`True`)
        use_bn (bool): BatchNorm after each hidden ReLU (Cora: ``False``). (default: :obj:`True`)
        negative_slope (float): LeakyReLU slope of the scores. (default: :obj:`0.2`)
        attention_dropout (float): Dropout on attention coefficients. (default: :obj:`0.0`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{nnz})`, optional :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = ("Chien et al., You are AllSet: A Multiset Function Framework for Hypergraph Neural Networks "
             "(CEGAT baseline), ICLR 2022, https://arxiv.org/abs/2106.13264")

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, heads: int = 8, output_heads: int = 1, concat: bool = True,
                 use_bn: bool = True, negative_slope: float = 0.2, attention_dropout: float = 0.0) -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        check_int("heads", heads)
        check_int("output_heads", output_heads)
        check_bool("concat", concat)
        check_bool("use_bn", use_bn)
        check_float("negative_slope", negative_slope, 0.0)
        check_probability("attention_dropout", attention_dropout)
        self.dropout = dropout
        width = hidden_channels * heads if concat else hidden_channels
        self.convs = nn.ModuleList()
        for i in range(num_layers - 1):
            self.convs.append(GATLayer(in_channels if i == 0 else width, hidden_channels, heads, concat,
                                       negative_slope, attention_dropout))
        self.convs.append(GATLayer(in_channels if num_layers == 1 else width, out_channels, output_heads, False,
                                   negative_slope, attention_dropout))
        self.norms = nn.ModuleList(make_norm("bn" if use_bn else "none", width) for _ in range(num_layers - 1))

    def reset_parameters(self) -> None:
        for module in [*self.convs, *self.norms]:
            if hasattr(module, "reset_parameters"):
                module.reset_parameters()

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        graph = clique_attention(self.incidence(x, hyperedge_index, num_hyperedges))
        h = self.features(x)
        for conv, norm in zip(self.convs[:-1], self.norms):
            h = drop(norm(F.relu(conv(h, *graph))), self.dropout, self.training)
        return self.convs[-1](h, *graph)
