"""HGNN: hypergraph convolution with a fixed, degree-normalised propagation matrix."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import HypergraphModel, Linear, glorot_
from .checks import check_bool, check_common
from .dropout import dropout as drop
from .registry import register_model
from .sparse import Incidence, Propagation, SparseOperator, inv


def hypergraph_propagation(inc: Incidence, symmetric: bool) -> Propagation:
    r"""The cached :math:`\mathbf{P}`: :math:`\mathbf{D}_v^{-1} \mathbf{H} \mathbf{D}_e^{-1} \mathbf{H}^\top`
    (``symmetric=False``) or :math:`\mathbf{D}_v^{-1/2} \mathbf{H} \mathbf{D}_e^{-1} \mathbf{H}^\top
    \mathbf{D}_v^{-1/2}` (``symmetric=True``); zero-degree entries give 0."""
    def build() -> Propagation:
        if symmetric:
            half = inv(inc.deg_v, 0.5)
            return inc.propagation(half, inv(inc.deg_e), half)
        return inc.propagation(inv(inc.deg_v), inv(inc.deg_e), torch.ones_like(inc.deg_v))
    return inc.memo(("hgnn", symmetric), build)


class HGNNConv(nn.Module):
    r"""One hypergraph convolution :math:`\mathbf{X}' = \mathbf{P} \mathbf{X} \mathbf{\Theta} + \mathbf{b}`
    with :math:`\mathbf{P}` from :func:`hypergraph_propagation` (PyG ``HypergraphConv`` without attention and
    with unit hyperedge weights computes exactly the row-normalised case).

    Args:
        in_channels (int): Input size. out_channels (int): Output size. bias (bool): Learn :math:`\mathbf{b}`.
    """

    def __init__(self, in_channels: int, out_channels: int, bias: bool = True) -> None:
        super().__init__()
        self.lin = Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.empty(out_channels)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        glorot_(self.lin.weight)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def forward(self, x: Tensor | SparseOperator, propagation: Propagation) -> Tensor:
        out = propagation @ self.lin(x)  # a fresh tensor that nothing saved: add the bias in place
        return out if self.bias is None else out.add_(self.bias)


@register_model("HGNN")
class HGNN(HypergraphModel):
    r"""HGNN from `"Hypergraph Neural Networks" <https://arxiv.org/abs/1809.09401>`_ (Feng et al., AAAI 2019),
    DHG-Bench appendix A.2.1: spectral convolution with the hypergraph Laplacian, truncated to first order.

    .. math::
        \mathbf{X}^{(l+1)} = \sigma\left(\mathbf{P}\,\mathbf{X}^{(l)} \mathbf{\Theta}^{(l)}
        + \mathbf{b}^{(l)}\right), \qquad
        \mathbf{P} = \mathbf{D}_v^{-1} \mathbf{H} \mathbf{D}_e^{-1} \mathbf{H}^{\top}

    where :math:`\mathbf{H} \in \{0,1\}^{N \times M}` is the incidence matrix, :math:`\mathbf{D}_v` and
    :math:`\mathbf{D}_e` the node and hyperedge degree matrices, :math:`\sigma` ELU on hidden layers (identity
    on the last) with dropout after it. DHG-Bench's HGNN uses this row-normalised :math:`\mathbf{P}` (as PyG's
    ``HypergraphConv``); ``symmetric=True`` gives the paper's
    :math:`\mathbf{D}_v^{-1/2} \mathbf{H} \mathbf{D}_e^{-1} \mathbf{H}^{\top} \mathbf{D}_v^{-1/2}`.
    DHG-Bench on Cora: 2 layers, hidden 128, dropout 0.5, lr 1e-3, 100 epochs.

    For :math:`\mathcal{V} = \{0, 1, 2, 3\}`, :math:`\mathcal{E} = \{\{0, 1, 2\}, \{1, 2, 3\}\}`::

        hyperedge_index = torch.tensor([[0, 1, 2, 1, 2, 3],
                                        [0, 0, 0, 1, 1, 1]])

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Size of the hidden layers.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of convolutions. (default: :obj:`2`)
        dropout (float): Dropout after each hidden layer. (default: :obj:`0.5`)
        symmetric (bool): Use the symmetric normalisation. (default: :obj:`False`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{nnz})`, optional number of hyperedges :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = "Feng et al., Hypergraph Neural Networks, AAAI 2019, https://arxiv.org/abs/1809.09401"

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, symmetric: bool = False) -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        self.dropout, self.symmetric = dropout, check_bool("symmetric", symmetric)
        dims = [in_channels] + [hidden_channels] * (num_layers - 1) + [out_channels]
        self.convs = nn.ModuleList(HGNNConv(a, b) for a, b in zip(dims[:-1], dims[1:]))

    def reset_parameters(self) -> None:
        for conv in self.convs:
            conv.reset_parameters()

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        prop = hypergraph_propagation(self.incidence(x, hyperedge_index, num_hyperedges), self.symmetric)
        h = self.features(x)
        for conv in self.convs[:-1]:
            h = drop(F.elu(conv(h, prop), inplace=True), self.dropout, self.training)
        return self.convs[-1](h, prop)
