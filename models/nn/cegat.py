"""CEGAT: a GAT on the clique expansion of the hypergraph (DHG-Bench baseline)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils.checkpoint import checkpoint
from torch_geometric.utils import scatter, softmax

from .base import HypergraphModel, Linear, glorot_
from .checks import check_bool, check_common, check_float, check_int, check_probability
from .dropout import dropout as drop
from .mlp import make_norm
from .registry import register_model
from .sparse import Incidence, SparseOperator


#: Message elements (edges x heads x channels) above which a GAT layer attends in blocks of target nodes.
BLOCK_ELEMENTS = 1 << 25


def clique_edges_with_loops(inc: Incidence) -> tuple[Tensor, Tensor]:
    """``(source, target)`` of the unweighted clique expansion plus one self-loop per node, sorted by target
    (cached; the order lets :class:`GATLayer` cut the edges into blocks of whole target neighbourhoods)."""
    def build() -> tuple[Tensor, Tensor]:
        row, col, _ = inc.clique_expansion()
        loops = torch.arange(inc.num_nodes, device=row.device)
        source, target = torch.cat([row, loops]), torch.cat([col, loops])
        order = torch.argsort(target, stable=True)
        return source[order], target[order]
    return inc.memo("clique_edges_with_loops", build)


def _attend(h: Tensor, a_src: Tensor, a_dst: Tensor, source: Tensor, target: Tensor, lo: int, hi: int,
            negative_slope: float, attention_dropout: float, training: bool) -> Tensor:
    """Attention-weighted sums into target nodes ``lo..hi-1`` over the edges given (all edges into them)."""
    local = target - lo
    score = a_src[source] + a_dst[target]
    alpha = softmax(F.leaky_relu(score, negative_slope), local, num_nodes=hi - lo)
    alpha = drop(alpha, attention_dropout, training)
    return scatter(h[source] * alpha.unsqueeze(-1), local, dim=0, dim_size=hi - lo, reduce="sum")


def target_blocks(target: Tensor, num_nodes: int, max_edges: int) -> list[tuple[int, int, int, int]]:
    """Cut edges sorted by target into ``(edge_start, edge_end, node_lo, node_hi)`` blocks of whole target
    neighbourhoods, each at most ``max_edges`` edges unless one node alone has more."""
    counts = torch.bincount(target, minlength=num_nodes)
    ends = torch.cumsum(counts, 0)
    blocks, lo, start = [], 0, 0
    while lo < num_nodes:
        hi = int(torch.searchsorted(ends, start + max_edges, right=True))
        hi = min(max(hi, lo + 1), num_nodes)
        end = int(ends[hi - 1])
        blocks.append((start, end, lo, hi))
        lo, start = hi, end
    return blocks


class GATLayer(nn.Module):
    r"""Graph attention (`Veličković et al., ICLR 2018 <https://arxiv.org/abs/1710.10903>`_), computing what
    PyG's ``GATConv`` computes, with a first linear map that accepts sparse features:

    .. math::
        \mathbf{x}'_i = \big\Vert_{k=1}^{K} \sum_{j \in \mathcal{N}(i)} \alpha^{k}_{ij}
        \mathbf{\Theta}^{k} \mathbf{x}_j + \mathbf{b}, \qquad
        \alpha^{k}_{ij} = \mathrm{softmax}_j\Big(\mathrm{LeakyReLU}\big(\mathbf{a}^{k\top}_{s}
        \mathbf{\Theta}^{k}\mathbf{x}_j + \mathbf{a}^{k\top}_{t} \mathbf{\Theta}^{k}\mathbf{x}_i\big)\Big)

    (heads concatenated, or averaged when ``concat=False``). ``source``/``target`` must contain self-loops.

    Memory: the per-edge messages are ``edges x heads x channels`` floats (sum |e|^2 = 3.3e7 clique pairs at
    Yelp scale x 8 heads x 32 x 4 B = 34 GB, why DHG-Bench reports CEGAT out of memory there). When they
    exceed :data:`BLOCK_ELEMENTS` and ``target`` is sorted (as :func:`clique_edges_with_loops` gives it), the
    layer attends block by block of whole target neighbourhoods under activation checkpointing, so only the
    node outputs are kept and each block's messages are recomputed in backward: the same function, bounded
    memory. With ``attention_dropout > 0`` the blocks draw their masks in a different order than one pass would.
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

    def forward(self, x: Tensor | SparseOperator, source: Tensor, target: Tensor) -> Tensor:
        h = self.lin(x).view(-1, self.heads, self.out_channels)
        num_nodes = h.size(0)
        a_src, a_dst = (h * self.att_src).sum(-1), (h * self.att_dst).sum(-1)
        args = (self.negative_slope, self.attention_dropout, self.training)
        max_edges = max(1, BLOCK_ELEMENTS // (self.heads * self.out_channels))
        if source.numel() <= max_edges or not bool((target[1:] >= target[:-1]).all()):
            out = _attend(h, a_src, a_dst, source, target, 0, num_nodes, *args)
        else:
            out = torch.cat([checkpoint(_attend, h, a_src, a_dst, source[s:e], target[s:e], lo, hi, *args,
                                        use_reentrant=False)
                             for s, e, lo, hi in target_blocks(target, num_nodes, max_edges)])
        out = out.reshape(num_nodes, -1) if self.concat else out.mean(dim=1)
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
        source, target = clique_edges_with_loops(self.incidence(x, hyperedge_index, num_hyperedges))
        h = self.features(x)
        for conv, norm in zip(self.convs[:-1], self.norms):
            h = drop(norm(F.relu(conv(h, source, target))), self.dropout, self.training)
        return self.convs[-1](h, source, target)
