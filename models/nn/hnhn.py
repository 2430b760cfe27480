"""HNHN: hypernode-hyperedge convolutions with nonlinearities on both and degree-exponent normalisation."""
from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .base import HypergraphModel, Linear
from .checks import check_bool, check_choice, check_common, check_float
from .dropout import dropout as drop
from .registry import register_model
from .sparse import Incidence, SparseOperator, inv


def hnhn_operators(inc: Incidence, alpha: float, beta: float,
                   normalisation: str = "paper") -> tuple[SparseOperator, SparseOperator]:
    r"""The cached node-to-hyperedge (:math:`M \times N`) and hyperedge-to-node (:math:`N \times M`) operators

    .. math::
        [\mathbf{P}_{V \to E}]_{ev} = \frac{d_v^{\beta}}{\sum_{u \in e} d_u^{\beta}}, \qquad
        [\mathbf{P}_{E \to V}]_{ve} = \frac{|e|^{\alpha}}{\sum_{f \ni v} |f|^{\alpha}}

    i.e. :math:`\mathbf{D}_{E,\beta}^{-1} \mathbf{H}^\top \mathbf{D}_{V,\beta}` and
    :math:`\mathbf{D}_{V,\alpha}^{-1} \mathbf{H} \mathbf{D}_{E,\alpha}` of the HNHN paper (section 3.2).
    ``normalisation="allset"`` divides by the unpowered sums :math:`\sum_{u \in e} d_u` and
    :math:`\sum_{f \ni v} |f|` instead, as AllSet's ``HNHN.generate_norm`` and DHG-Bench's
    ``generate_HNHN_norm`` (which copies it) do.
    """
    def build() -> tuple[SparseOperator, SparseOperator]:
        v, e, n, m = inc.node, inc.edge, inc.num_nodes, inc.num_edges
        dv_beta = inc.deg_v.clamp(min=1) ** beta
        de_alpha = inc.deg_e.clamp(min=1) ** alpha
        dv_sum, de_sum = (dv_beta, de_alpha) if normalisation == "paper" else (inc.deg_v, inc.deg_e)
        de_beta_sum = dv_beta.new_zeros(m).index_add_(0, e, dv_sum[v])
        dv_alpha_sum = de_alpha.new_zeros(n).index_add_(0, v, de_sum[e])
        v2e = SparseOperator(e, v, dv_beta[v] * inv(de_beta_sum)[e], (m, n))
        e2v = SparseOperator(v, e, de_alpha[e] * inv(dv_alpha_sum)[v], (n, m))
        return v2e, e2v
    return inc.memo(("hnhn", alpha, beta, normalisation), build)


class HNHNConv(nn.Module):
    r"""One HNHN layer: :math:`\mathbf{X}_E = \sigma(\mathbf{P}_{V \to E} \mathbf{X}_V \mathbf{W}_E +
    \mathbf{b}_E)`, :math:`\mathbf{X}'_V = \mathbf{P}_{E \to V} \mathbf{X}_E \mathbf{W}_V + \mathbf{b}_V`
    (the weighted means of :func:`hnhn_operators` pass the biases through unchanged)."""

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, nonlinear_inbetween: bool) -> None:
        super().__init__()
        self.v2e = Linear(in_channels, hidden_channels)
        self.e2v = Linear(hidden_channels, out_channels)
        self.nonlinear_inbetween = nonlinear_inbetween

    def reset_parameters(self) -> None:
        self.v2e.reset_parameters()
        self.e2v.reset_parameters()

    def forward(self, x: Tensor | SparseOperator, ops: tuple[SparseOperator, SparseOperator]) -> Tensor:
        edge = ops[0] @ self.v2e(x)
        if self.nonlinear_inbetween:
            edge = F.relu(edge)
        return ops[1] @ self.e2v(edge)


@register_model("HNHN")
class HNHN(HypergraphModel):
    r"""HNHN from `"HNHN: Hypergraph Networks with Hyperedge Neurons" <https://arxiv.org/abs/2006.12278>`_
    (Dong et al., ICML GRL+ workshop 2020), DHG-Bench appendix A.2.2: "nonlinear activation functions applied
    to both hypernodes and hyperedges, combined with a normalization scheme that can flexibly adjust the
    importance of high-cardinality hyperedges and high-degree vertices".

    .. math::
        \mathbf{X}_E^{(l)} = \sigma\big(\mathbf{D}_{E,\beta}^{-1} \mathbf{H}^{\top} \mathbf{D}_{V,\beta}\,
        \mathbf{X}_V^{(l)} \mathbf{W}_E^{(l)} + \mathbf{b}_E^{(l)}\big), \qquad
        \mathbf{X}_V^{(l+1)} = \sigma\big(\mathbf{D}_{V,\alpha}^{-1} \mathbf{H} \mathbf{D}_{E,\alpha}\,
        \mathbf{X}_E^{(l)} \mathbf{W}_V^{(l)} + \mathbf{b}_V^{(l)}\big)

    with :math:`\mathbf{D}_{V,\beta} = \mathrm{diag}(d_v^\beta)`, :math:`\mathbf{D}_{E,\alpha} =
    \mathrm{diag}(|e|^\alpha)`, :math:`(\mathbf{D}_{E,\beta})_{ee} = \sum_{v \in e} d_v^\beta` and
    :math:`(\mathbf{D}_{V,\alpha})_{vv} = \sum_{e \ni v} |e|^\alpha` (paper section 3.2). The last layer has no
    outer nonlinearity; hidden ones are followed by ReLU and dropout.

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Size of hidden node and hyperedge representations.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of HNHN layers (DHG-Bench uses 1). (default: :obj:`2`)
        dropout (float): Dropout after each hidden layer. (default: :obj:`0.5`)
        alpha (float): Hyperedge-size exponent :math:`\alpha`. (default: :obj:`-1.5`)
        beta (float): Node-degree exponent :math:`\beta`. (default: :obj:`-0.5`)
        nonlinear_inbetween (bool): ReLU on hyperedge representations. (default: :obj:`True`)
        normalisation (str): ``paper`` (the HNHN paper's normalisers) or ``allset`` (the unpowered sums of the
            AllSet and DHG-Bench code, see :func:`hnhn_operators`). (default: :obj:`"paper"`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{nnz})`, optional :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = ("Dong et al., HNHN: Hypergraph Networks with Hyperedge Neurons, ICML GRL+ Workshop 2020, "
             "https://arxiv.org/abs/2006.12278")

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, alpha: float = -1.5, beta: float = -0.5,
                 nonlinear_inbetween: bool = True, normalisation: str = "paper") -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        self.dropout = dropout
        self.alpha, self.beta = check_float("alpha", alpha), check_float("beta", beta)
        check_bool("nonlinear_inbetween", nonlinear_inbetween)
        self.normalisation = check_choice("normalisation", normalisation, ("paper", "allset"))
        dims = [in_channels] + [hidden_channels] * (num_layers - 1) + [out_channels]
        self.convs = nn.ModuleList(HNHNConv(a, hidden_channels, b, nonlinear_inbetween)
                                   for a, b in zip(dims[:-1], dims[1:]))

    def reset_parameters(self) -> None:
        for conv in self.convs:
            conv.reset_parameters()

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        ops = hnhn_operators(self.incidence(x, hyperedge_index, num_hyperedges), self.alpha, self.beta,
                             self.normalisation)
        h = self.features(x)
        for conv in self.convs[:-1]:
            h = drop(F.relu(conv(h, ops), inplace=True), self.dropout, self.training)
        return self.convs[-1](h, ops)
