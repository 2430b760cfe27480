"""CEGCN: a GCN on the weighted clique expansion of the hypergraph (DHG-Bench baseline)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import HypergraphModel, Linear, glorot_
from .checks import check_bool, check_common
from .dropout import dropout as drop
from .mlp import make_norm
from .registry import register_model
from .sparse import Incidence, SparseOperator, inv


def gcn_operator(inc: Incidence) -> SparseOperator:
    r"""The cached :math:`\hat{\mathbf{A}} = \hat{\mathbf{D}}^{-1/2} (\mathbf{A} + \mathbf{I})
    \hat{\mathbf{D}}^{-1/2}` of the weighted clique expansion :math:`\mathbf{A}` (PyG ``gcn_norm`` with
    self-loops of weight 1)."""
    def build() -> SparseOperator:
        row, col, weight = inc.clique_expansion()
        loops = torch.arange(inc.num_nodes, device=row.device)
        row, col = torch.cat([row, loops]), torch.cat([col, loops])
        weight = torch.cat([weight, torch.ones(inc.num_nodes, dtype=weight.dtype, device=weight.device)])
        deg_inv_sqrt = inv(torch.zeros(inc.num_nodes, dtype=weight.dtype, device=weight.device)
                            .index_add_(0, col, weight), 0.5)
        return SparseOperator(col, row, deg_inv_sqrt[row] * weight * deg_inv_sqrt[col],
                              (inc.num_nodes, inc.num_nodes))
    return inc.memo("gcn", build)


@register_model("CEGCN")
class CEGCN(HypergraphModel):
    r"""CEGCN: GCN (`Kipf & Welling, ICLR 2017 <https://arxiv.org/abs/1609.02907>`_) on the clique expansion,
    the expansion baseline of AllSet (Chien et al., ICLR 2022) used by DHG-Bench (section 3.2, appendix A.2:
    "each hyperedge is converted into a clique over its incident nodes").

    .. math::
        \mathbf{X}^{(l+1)} = \hat{\mathbf{D}}^{-1/2} (\mathbf{A} + \mathbf{I}) \hat{\mathbf{D}}^{-1/2}
        \mathbf{X}^{(l)} \mathbf{\Theta}^{(l)} + \mathbf{b}^{(l)}, \qquad
        \mathbf{A} = \mathbf{H}\mathbf{H}^{\top} - \mathrm{diag}(\mathbf{H}\mathbf{H}^{\top})

    so :math:`A_{uv}` counts the hyperedges shared by :math:`u \neq v` and
    :math:`\hat{D}_{vv} = 1 + \sum_u A_{uv}`. Hidden layers are followed by ReLU, optional BatchNorm and
    dropout. (AllSet builds the expansion with one direction per pair; here it is symmetric, as a clique is.)

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Size of the hidden layers.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of GCN layers. (default: :obj:`2`)
        dropout (float): Dropout after each hidden layer. (default: :obj:`0.5`)
        use_bn (bool): BatchNorm after each hidden ReLU (DHG-Bench default ``True``, Cora ``False``).
            (default: :obj:`True`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{nnz})`, optional :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = ("Chien et al., You are AllSet: A Multiset Function Framework for Hypergraph Neural Networks "
             "(CEGCN baseline), ICLR 2022, https://arxiv.org/abs/2106.13264")

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, use_bn: bool = True) -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        self.dropout = dropout
        check_bool("use_bn", use_bn)
        dims = [in_channels] + [hidden_channels] * (num_layers - 1) + [out_channels]
        self.lins = nn.ModuleList(Linear(a, b, bias=False) for a, b in zip(dims[:-1], dims[1:]))
        self.biases = nn.ParameterList(nn.Parameter(torch.empty(b)) for b in dims[1:])
        self.norms = nn.ModuleList(make_norm("bn" if use_bn else "none", hidden_channels)
                                   for _ in range(num_layers - 1))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for lin, bias in zip(self.lins, self.biases):
            glorot_(lin.weight)
            nn.init.zeros_(bias)
        for norm in self.norms:
            if hasattr(norm, "reset_parameters"):
                norm.reset_parameters()

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        adj = gcn_operator(self.incidence(x, hyperedge_index, num_hyperedges))
        h = self.features(x)
        for i, (lin, bias) in enumerate(zip(self.lins, self.biases)):
            h = (adj @ lin(h)).add_(bias)  # fresh tensors nothing saved: bias and ReLU in place
            if i < len(self.norms):
                h = drop(self.norms[i](F.relu(h, inplace=True)), self.dropout, self.training)
        return h
