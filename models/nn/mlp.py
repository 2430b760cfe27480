"""MLP: the structure-free baseline of DHG-Bench (section 3.2), also the building block of other models."""
from __future__ import annotations

from torch import Tensor, nn
import torch.nn.functional as F

from .base import HypergraphModel, Linear, dense
from .checks import check_bool, check_choice, check_common, check_int, check_probability
from .dropout import dropout as drop
from .registry import register_model
from .sparse import SparseOperator

NORMALIZATIONS = ("ln", "bn", "none")


def make_norm(kind: str, channels: int) -> nn.Module:
    """``"ln"`` LayerNorm, ``"bn"`` BatchNorm1d, ``"none"`` identity."""
    return {"ln": nn.LayerNorm, "bn": nn.BatchNorm1d}.get(kind, lambda c: nn.Identity())(channels)


@register_model("MLP")
class MLP(HypergraphModel):
    r"""A multi-layer perceptron on node features only, as in AllSet (`Chien et al., ICLR 2022
    <https://arxiv.org/abs/2106.13264>`_), whose ``MLP`` DHG-Bench reuses as a baseline (section 3.2: "we
    include MLP ... as baselines") and as the decoder of several models.

    .. math::
        \mathbf{h}^{(0)} = \mathrm{Norm}_0(\mathbf{x}), \qquad
        \mathbf{h}^{(l)} = \mathrm{Dropout}\big(\mathrm{Norm}_l(\mathrm{ReLU}(\mathbf{W}^{(l)}
        \mathbf{h}^{(l-1)} + \mathbf{b}^{(l)}))\big), \qquad
        \mathbf{y} = \mathbf{W}^{(L)} \mathbf{h}^{(L-1)} + \mathbf{b}^{(L)}

    with :math:`L` linear layers, :math:`\mathrm{Norm}_0` the optional input normalisation and
    :math:`\mathrm{Norm}_l` LayerNorm, BatchNorm or the identity. The hypergraph is ignored, so
    ``hyperedge_index`` may be ``None``.

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Size of the hidden layers.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of linear layers :math:`L \geq 1`. (default: :obj:`2`)
        dropout (float): Dropout after each hidden layer. (default: :obj:`0.5`)
        normalization (str): ``"ln"``, ``"bn"`` or ``"none"`` after each hidden layer
            (DHG-Bench uses ``"ln"``). (default: :obj:`"ln"`)
        input_norm (bool): Normalise the input features first (densifies sparse input). (default: :obj:`False`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{nnz})` or ``None`` (unused)
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = "MLP baseline as implemented in AllSet: Chien et al., ICLR 2022, https://arxiv.org/abs/2106.13264"

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, normalization: str = "ln", input_norm: bool = False) -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        check_choice("normalization", normalization, NORMALIZATIONS)
        check_bool("input_norm", input_norm)
        self.dropout, self.input_norm = dropout, input_norm
        dims = [in_channels] + [hidden_channels] * (num_layers - 1) + [out_channels]
        self.lins = nn.ModuleList(Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.norms = nn.ModuleList([make_norm(normalization if input_norm else "none", in_channels)] +
                                   [make_norm(normalization, hidden_channels) for _ in range(num_layers - 1)])
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for module in [*self.lins, *self.norms]:
            if hasattr(module, "reset_parameters"):
                module.reset_parameters()

    def forward(self, x: Tensor | SparseOperator, hyperedge_index: Tensor | None = None,
                num_hyperedges: int | None = None) -> Tensor:
        if isinstance(x, Tensor):
            x = self.features(x)
        if self.input_norm:
            x = self.norms[0](dense(x))
        for lin, norm in zip(self.lins[:-1], self.norms[1:]):
            x = drop(norm(F.relu(lin(x))), self.dropout, self.training)
        return self.lins[-1](x)


def mlp_or_identity(in_channels: int, hidden_channels: int, out_channels: int, num_layers: int, dropout: float,
                    normalization: str, input_norm: bool) -> nn.Module:
    """An :class:`MLP` block, or ``nn.Identity`` for ``num_layers == 0`` (AllSet / ED-HNN convention)."""
    check_int("MLP depth", num_layers, 0)
    check_probability("dropout", dropout)
    if num_layers == 0:
        return nn.Identity()
    return MLP(in_channels, hidden_channels, out_channels, num_layers, dropout,
               normalization=normalization, input_norm=input_norm)
