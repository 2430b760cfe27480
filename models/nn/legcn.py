"""LEGCN: a GCN on the line expansion of a hypergraph, computed by scatters over incidences (no line graph)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils.checkpoint import checkpoint

from .base import HypergraphModel, Linear, glorot_
from .checks import check_choice, check_common, check_float
from .dropout import dropout as drop
from .registry import register_model
from .sparse import Incidence, inv

EXPANSIONS = ("line", "isolated")

#: Incidence-copy floats (incidences x widest layer) above which LEGCN runs its layers in checkpointed blocks
#: (one copy of 1 GiB: Yelp scale, 4.6e6 x 256, is above; Trivago scale, 9.0e5 x 256, runs faster in one pass).
BLOCK_THRESHOLD = 1 << 28
#: Incidence-copy floats per block.
BLOCK_ELEMENTS = 1 << 25


def line_degree(inc: Incidence, vertex_weight: float, edge_weight: float) -> Tensor:
    r"""GCN degree of every line node :math:`p = (v_p, e_p)` (self-loop included):
    :math:`\hat d_p = w_v (d_{v_p} - 1) + w_e (|e_p| - 1) + 1`."""
    return vertex_weight * (inc.deg_v[inc.node] - 1) + edge_weight * (inc.deg_e[inc.edge] - 1) + 1


def line_adjacency_matmul(inc: Incidence, z: Tensor, vertex_weight: float, edge_weight: float) -> Tensor:
    r""":math:`\hat{\mathbf{A}} \mathbf{Z}` for the line-expansion adjacency with self-loops,
    :math:`\hat{\mathbf{A}} = w_v (\mathbf{R}_v \mathbf{R}_v^\top - \mathbf{I}) + w_e (\mathbf{R}_e
    \mathbf{R}_e^\top - \mathbf{I}) + \mathbf{I}`, where :math:`\mathbf{R}_v \in \{0,1\}^{P \times N}` and
    :math:`\mathbf{R}_e \in \{0,1\}^{P \times M}` select each incidence's node and hyperedge: one scatter and one
    gather per side, :math:`O(P \cdot C)` for ``z`` of shape ``[P, C]`` (the line graph itself has
    :math:`\sum_v d_v^2 + \sum_e |e|^2 - P` edges)."""
    by_node = z.new_zeros(inc.num_nodes, z.size(1)).index_add_(0, inc.node, z)
    by_edge = z.new_zeros(inc.num_edges, z.size(1)).index_add_(0, inc.edge, z)
    out = by_node[inc.node].mul_(vertex_weight).add_(by_edge[inc.edge], alpha=edge_weight)
    return out.add_(z, alpha=1.0 - vertex_weight - edge_weight)


@register_model("LEGCN")
class LEGCN(HypergraphModel):
    r"""LEGCN from `"Semi-supervised Hypergraph Node Classification on Hypergraph Line Expansion"
    <https://arxiv.org/abs/2005.04843>`_ (Yang et al., CIKM 2022), DHG-Bench appendix A.2: every incidence
    :math:`p = (v_p, e_p)` becomes a line node; two line nodes are adjacent when they share a vertex
    (weight :math:`w_v`) or a hyperedge (weight :math:`w_e`); node features are projected onto the line nodes,
    a GCN runs on the line graph and the line nodes are averaged back onto their vertices.

    .. math::
        \mathbf{Z}^{(0)} = \mathbf{R}_v \mathbf{X}, \qquad
        \mathbf{Z}^{(l+1)} = \sigma\left(\hat{\mathbf{D}}^{-1/2} \hat{\mathbf{A}} \hat{\mathbf{D}}^{-1/2}
        \mathbf{Z}^{(l)} \mathbf{\Theta}^{(l)} + \mathbf{b}^{(l)}\right), \qquad
        \mathbf{Y} = \mathbf{D}_v^{-1} \mathbf{R}_v^{\top} \mathbf{Z}^{(L)}

    with :math:`\mathbf{R}_v \in \{0,1\}^{P \times N}`, :math:`\mathbf{R}_e \in \{0,1\}^{P \times M}` the
    incidence-to-node and incidence-to-hyperedge selectors, :math:`\hat{\mathbf{A}} = w_v(\mathbf{R}_v
    \mathbf{R}_v^\top - \mathbf{I}) + w_e(\mathbf{R}_e\mathbf{R}_e^\top - \mathbf{I}) + \mathbf{I}` the line
    graph with GCN self-loops, :math:`\hat{\mathbf{D}}` its degrees (:math:`w_v(d_v - 1) + w_e(|e| - 1) + 1`)
    and :math:`\sigma` ReLU with dropout on hidden layers (identity on the last). The line graph is never built:
    :math:`\hat{\mathbf{A}}\mathbf{Z}` is one scatter and one gather per side (:func:`line_adjacency_matmul`),
    and :math:`\mathbf{X}\mathbf{\Theta}^{(0)}` is computed on the nodes before it is copied to the incidences.
    A node in no hyperedge has no line node and outputs zeros. DHG-Bench's current code computes exactly the
    unit-weight case (PyG ``GCNConv`` on the binary line graph, then a mean back-projection); the paper's two
    similarity weights are ``vertex_weight`` and ``edge_weight``.

    ``expansion="isolated"`` is DHG-Bench's code before its fix of 2026-06-30, which produced the paper's
    numbers: its line graph had no edges, so every line node is isolated (:math:`\hat{\mathbf{A}} =
    \mathbf{I}`) and LEGCN is the GCN weights applied to each incidence copy with independent dropout, then
    averaged per node (an MLP in effect). DHG-Bench on Cora: 2 layers, hidden 256, dropout 0.1, lr 1e-2,
    weight decay 1e-2, 100 epochs.

    For :math:`\mathcal{V} = \{0, 1, 2, 3\}`, :math:`\mathcal{E} = \{\{0, 1, 2\}, \{1, 2, 3\}\}`::

        hyperedge_index = torch.tensor([[0, 1, 2, 1, 2, 3],
                                        [0, 0, 0, 1, 1, 1]])

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Size of the hidden layers.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of GCN layers on the line graph. (default: :obj:`2`)
        dropout (float): Dropout after each hidden layer. (default: :obj:`0.5`)
        vertex_weight (float): :math:`w_v`, weight of line-graph edges between incidences sharing a vertex.
            (default: :obj:`1.0`)
        edge_weight (float): :math:`w_e`, weight of line-graph edges between incidences sharing a hyperedge.
            (default: :obj:`1.0`)
        expansion (str): ``"line"`` (the line expansion) or ``"isolated"`` (DHG-Bench's broken expansion behind
            the paper's numbers: no line-graph edges). (default: :obj:`"line"`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse),
          hyperedge indices :math:`(2, P)` (distinct incidences), optional number of hyperedges
          :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = ("Yang et al., Semi-supervised Hypergraph Node Classification on Hypergraph Line Expansion, CIKM 2022, "
             "https://arxiv.org/abs/2005.04843")

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, vertex_weight: float = 1.0, edge_weight: float = 1.0,
                 expansion: str = "line") -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        self.dropout = dropout
        self.vertex_weight = check_float("vertex_weight", vertex_weight, 0.0)
        self.edge_weight = check_float("edge_weight", edge_weight, 0.0)
        self.expansion = check_choice("expansion", expansion, EXPANSIONS)
        dims = [in_channels] + [hidden_channels] * (num_layers - 1) + [out_channels]
        self.lins = nn.ModuleList(Linear(a, b, bias=False) for a, b in zip(dims[:-1], dims[1:]))
        self.biases = nn.ParameterList(nn.Parameter(torch.empty(b)) for b in dims[1:])
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for lin, bias in zip(self.lins, self.biases):
            glorot_(lin.weight)
            nn.init.zeros_(bias)

    def _conv(self, inc: Incidence, z: Tensor, scale: Tensor) -> Tensor:
        if self.expansion == "isolated":
            return z
        return line_adjacency_matmul(inc, z * scale, self.vertex_weight, self.edge_weight).mul_(scale)

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        scale = inc.memo(("legcn", self.vertex_weight, self.edge_weight),
                         lambda: inv(line_degree(inc, self.vertex_weight, self.edge_weight), 0.5).unsqueeze(-1))
        y = self.lins[0](self.features(x))  # X Theta on the nodes, copied to the incidences below
        width = max(lin.weight.size(0) for lin in self.lins)
        if inc.nnz * width > BLOCK_THRESHOLD:
            z = self._blocked(inc, y, scale)
        else:
            z = y[inc.node]
            for i, (lin, bias) in enumerate(zip(self.lins, self.biases)):
                if i:
                    z = lin(z)
                z = self._conv(inc, z, scale) + bias
                if i < len(self.lins) - 1:
                    z = drop(F.relu(z), self.dropout, self.training)
        out = z.new_zeros(inc.num_nodes, z.size(1)).index_add_(0, inc.node, z)
        return out * inv(inc.deg_v).unsqueeze(-1)

    def _blocked(self, inc: Incidence, y: Tensor, scale: Tensor) -> Tensor:
        r"""The layers of :meth:`forward` over blocks of incidences, for when ``P x width`` floats are too many
        to keep (P = 4.6e6 incidences at Yelp scale x 256 x 4 B = 4.7 GB per copy; one-pass training keeps
        several). Layer ``i``'s aggregates :math:`\mathbf{R}_v^\top \hat{\mathbf{D}}^{-1/2}\mathbf{Z}`,
        :math:`\mathbf{R}_e^\top \hat{\mathbf{D}}^{-1/2}\mathbf{Z}` are summed block by block (their
        backward keeps only indices); then each block's line nodes, bias, ReLU, dropout and the next layer's
        map run under activation checkpointing, so a layer keeps only its (narrower) output. The same function
        as the one pass; dropout draws per block, so training masks differ from one pass's."""
        last = len(self.lins) - 1
        step = max(1, BLOCK_ELEMENTS // max(lin.weight.size(0) for lin in self.lins))
        spans = [(s, min(s + step, inc.nnz)) for s in range(0, inc.nnz, step)]
        src = None  # layer i's input on the incidences (None: y gathered per block, never materialised)
        for i in range(last + 1):
            chunk = (lambda s, e: y[inc.node[s:e]]) if src is None else (lambda s, e, z=src: z[s:e])
            aggregates = None
            if self.expansion == "line":
                width = y.size(1) if src is None else src.size(1)
                by_node, by_edge = y.new_zeros(inc.num_nodes, width), y.new_zeros(inc.num_edges, width)
                for s, e in spans:
                    zs = chunk(s, e) * scale[s:e]
                    by_node.index_add_(0, inc.node[s:e], zs)
                    by_edge.index_add_(0, inc.edge[s:e], zs)
                aggregates = (by_node, by_edge)
            src = torch.cat([checkpoint(self._block, i, s, e, inc, y if src is None else src, src is None, scale,
                                        aggregates, use_reentrant=False) for s, e in spans])
        return src

    def _block(self, i: int, s: int, e: int, inc: Incidence, inp: Tensor, gather: bool, scale: Tensor,
               aggregates: tuple[Tensor, Tensor] | None) -> Tensor:
        """Layer ``i`` on incidences ``s..e-1`` (bias, activation and the next layer's map included)."""
        z = inp[inc.node[s:e]] if gather else inp[s:e]
        if aggregates is not None:
            by_node, by_edge = aggregates
            w_v, w_e, sc = self.vertex_weight, self.edge_weight, scale[s:e]
            z = (by_node[inc.node[s:e]].mul_(w_v).add_(by_edge[inc.edge[s:e]], alpha=w_e)
                 .add_(z * sc, alpha=1.0 - w_v - w_e).mul_(sc))
        z = z + self.biases[i]
        if i < len(self.lins) - 1:
            z = self.lins[i + 1](drop(F.relu(z), self.dropout, self.training))
        return z
