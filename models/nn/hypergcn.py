"""HyperGCN: a GCN on a feature-dependent graph approximation of each hyperedge, with mediators."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import HypergraphModel
from .checks import check_bool, check_common, check_int
from .dropout import dropout as drop
from .registry import register_model
from .sparse import Incidence, SparseOperator, inv


def _extreme_members(inc: Incidence, score: Tensor, largest: bool) -> Tensor:
    """Per hyperedge, the member with the largest (or smallest) ``score``; ties go to the first incidence."""
    s = score[inc.node] if largest else -score[inc.node]
    best = torch.full((inc.num_edges,), -math.inf, dtype=s.dtype, device=s.device)
    best = best.scatter_reduce(0, inc.edge, s, reduce="amax")
    position = torch.arange(inc.nnz, device=s.device)
    candidate = torch.where(s == best[inc.edge], position, torch.full_like(position, inc.nnz))
    first = torch.full((inc.num_edges,), inc.nnz, dtype=torch.long, device=s.device)
    first = first.scatter_reduce(0, inc.edge, candidate, reduce="amin")
    return inc.node[first.clamp(max=max(inc.nnz - 1, 0))]


def hypergcn_laplacian(inc: Incidence, projection: Tensor, mediators: bool) -> SparseOperator:
    r"""The normalised adjacency :math:`\hat{\mathbf{D}}^{-1/2}(\mathbf{A}_S + \mathbf{I})
    \hat{\mathbf{D}}^{-1/2}` of HyperGCN's graph approximation (paper section 4, reference ``Laplacian``).

    For each hyperedge :math:`e` with :math:`S_e = \arg\max_{v \in e} p_v` and
    :math:`I_e = \arg\min_{v \in e} p_v` of the projection :math:`p`: with mediators, :math:`\{S_e, I_e\}` and
    :math:`\{S_e, m\}, \{I_e, m\}` for every other member :math:`m` get weight :math:`1/\max(2|e| - 3, 1)`;
    without, only :math:`\{S_e, I_e\}` gets :math:`1/|e|`. Weights of repeated pairs add up (a singleton
    hyperedge adds twice its weight to its node's self-loop, as the reference does).
    """
    v, e = inc.node, inc.edge
    rows: list[Tensor] = []
    cols: list[Tensor] = []
    weights: list[Tensor] = []
    if inc.nnz:
        sup, inf = _extreme_members(inc, projection, True), _extreme_members(inc, projection, False)
        size = inc.deg_e
        has = size > 0
        if mediators:
            w = 1.0 / torch.clamp(2 * size - 3, min=1)
            mediator = (v != sup[e]) & (v != inf[e])
            m, me = v[mediator], e[mediator]
            rows = [sup[has], inf[has], sup[me], inf[me], m, m]
            cols = [inf[has], sup[has], m, m, sup[me], inf[me]]
            weights = [w[has], w[has]] + [w[me]] * 4
        else:
            rows, cols, weights = [sup[has], inf[has]], [inf[has], sup[has]], [1.0 / size[has]] * 2
    loops = torch.arange(inc.num_nodes, device=v.device)
    row, col = torch.cat(rows + [loops]), torch.cat(cols + [loops])
    weight = torch.cat(weights + [torch.ones(inc.num_nodes, dtype=projection.dtype, device=v.device)])
    degree = torch.zeros(inc.num_nodes, dtype=weight.dtype, device=v.device).index_add_(0, row, weight)
    norm = inv(degree, 0.5)
    return SparseOperator(row, col, norm[row] * weight * norm[col], (inc.num_nodes, inc.num_nodes))


class HyperGCNConv(nn.Module):
    r""":math:`\mathbf{X}' = \hat{\mathbf{A}} \mathbf{X} \mathbf{W} + \mathbf{b}` with
    :math:`\mathbf{W}, \mathbf{b} \sim U(-1/\sqrt{F_{out}}, 1/\sqrt{F_{out}})` as in the reference."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_channels, out_channels))
        self.bias = nn.Parameter(torch.empty(out_channels))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.weight.size(1))
        nn.init.uniform_(self.weight, -bound, bound)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor | SparseOperator, adj: SparseOperator) -> Tensor:
        return (adj @ (x @ self.weight)).add_(self.bias)


@register_model("HyperGCN")
class HyperGCN(HypergraphModel):
    r"""HyperGCN from `"HyperGCN: A New Method of Training Graph Convolutional Networks on Hypergraphs"
    <https://arxiv.org/abs/1809.02589>`_ (Yadati et al., NeurIPS 2019), DHG-Bench appendix A.2.1: each
    hyperedge is approximated by pairwise edges and the problem becomes a GCN on the approximating graph.

    .. math::
        \mathbf{X}^{(l+1)} = \mathrm{ReLU}\big(\hat{\mathbf{A}}^{(l)} \mathbf{X}^{(l)} \mathbf{W}^{(l)}
        + \mathbf{b}^{(l)}\big)

    with :math:`\hat{\mathbf{A}}` from :func:`hypergcn_laplacian`: a hyperedge connects its two members
    furthest apart along a random direction :math:`\mathbf{r}` (:math:`p = \mathbf{X}\mathbf{r}`), and with
    mediators also every other member to both. "FastHyperGCN" (``fast=True``, DHG-Bench's setting) builds
    :math:`\hat{\mathbf{A}}` once from the input features; otherwise every layer rebuilds it from
    :math:`\mathbf{X}^{(l)} \mathbf{W}^{(l)}` with a fresh :math:`\mathbf{r}` (from the global torch generator)
    on every forward. As in the reference code, the last layer is also followed by ReLU (``output_relu``).

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Size of the hidden layers.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of layers. (default: :obj:`2`)
        dropout (float): Dropout after each hidden layer. (default: :obj:`0.5`)
        mediators (bool): Use mediators. (default: :obj:`True`)
        fast (bool): Build the graph once from the input features. (default: :obj:`True`)
        seed (int or None): Seed of the random direction :math:`\mathbf{r}` in fast mode; ``None`` draws one
            from the global torch generator at construction. (default: :obj:`None`)
        output_relu (bool): ReLU after the last layer, as the reference. (default: :obj:`True`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{nnz})`, optional :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = ("Yadati et al., HyperGCN: A New Method of Training Graph Convolutional Networks on Hypergraphs, "
             "NeurIPS 2019, https://arxiv.org/abs/1809.02589")

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, mediators: bool = True, fast: bool = True, seed: int | None = None,
                 output_relu: bool = True) -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        self.dropout = dropout
        self.mediators, self.fast = check_bool("mediators", mediators), check_bool("fast", fast)
        # Like the reference's np.random.rand direction, it varies with the run's seed unless given explicitly;
        # a buffer, so that load_state_dict restores the graph approximation along with the weights.
        seed = int(torch.randint(2 ** 31, ())) if seed is None else check_int("seed", seed, 0)
        self.register_buffer("direction_seed", torch.tensor(seed))
        self.output_relu = check_bool("output_relu", output_relu)
        dims = [in_channels] + [hidden_channels] * (num_layers - 1) + [out_channels]
        self.convs = nn.ModuleList(HyperGCNConv(a, b) for a, b in zip(dims[:-1], dims[1:]))

    def reset_parameters(self) -> None:
        for conv in self.convs:
            conv.reset_parameters()

    def _fast_adjacency(self, x: Tensor, hyperedge_index: Tensor, h: Tensor | SparseOperator,
                        inc: Incidence) -> SparseOperator:
        def build() -> SparseOperator:
            generator = torch.Generator().manual_seed(int(self.direction_seed))
            direction = torch.rand(x.size(1), 1, generator=generator, dtype=inc.dtype).to(x.device)
            with torch.no_grad():
                projection = (h @ direction).squeeze(1)
            return hypergcn_laplacian(inc, projection, self.mediators)
        return self._cache.get((x, hyperedge_index), ("hypergcn", int(self.direction_seed), inc.num_nodes,
                                                      inc.num_edges, inc.dtype), build)

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        h = self.features(x)
        adj = self._fast_adjacency(x, hyperedge_index, h, inc) if self.fast else None
        for i, conv in enumerate(self.convs):
            if self.fast:
                h = conv(h, adj)
            else:
                hw = h @ conv.weight
                direction = torch.rand(hw.size(1), 1, dtype=hw.dtype, device=hw.device)
                h = hypergcn_laplacian(inc, (hw.detach() @ direction).squeeze(1), self.mediators) @ hw + conv.bias
            last = i == len(self.convs) - 1
            if not last or self.output_relu:
                h = F.relu(h, inplace=True)
            if not last:
                h = drop(h, self.dropout, self.training)
        return h
