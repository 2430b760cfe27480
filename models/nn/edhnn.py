"""ED-HNN: equivariant hypergraph diffusion, implemented on the star expansion with shared-weight layers."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.utils import scatter

from ._common import (HypergraphModel, Incidence, Linear, check_choice, check_common, check_float, check_int,
                      dropout as drop)
from .mlp import MLP, NORMALIZATIONS, mlp_or_identity
from .registry import register_model


class EquivSetConv(nn.Module):
    r"""One equivariant diffusion step (ED-HNN eq. 6, reference ``EquivSetConv``):

    .. math::
        \mathbf{m}_e = \bigoplus_{u \in e} \hat\phi(\mathbf{x}_u), \qquad
        \mathbf{x}'_v = \hat\varphi\Big((1 - \alpha) \bigoplus_{e \ni v}
        \hat\rho\big([\mathbf{x}_v \Vert \mathbf{m}_e]\big) + \alpha\, \mathbf{x}^{(0)}_v\Big)

    :math:`\hat\phi, \hat\rho, \hat\varphi` are MLPs (depth 0 = identity; for :math:`\hat\rho` depth 0 keeps
    :math:`\mathbf{m}_e`), :math:`\bigoplus` sum or mean.
    """

    def __init__(self, channels: int, mlp1_layers: int, mlp2_layers: int, mlp3_layers: int, aggregate: str,
                 alpha: float, dropout: float, normalization: str, input_norm: bool) -> None:
        super().__init__()
        self.phi = mlp_or_identity(channels, channels, channels, mlp1_layers, dropout, normalization, input_norm)
        self.rho = mlp_or_identity(2 * channels, channels, channels, mlp2_layers, dropout, normalization,
                                   input_norm)
        self.varphi = mlp_or_identity(channels, channels, channels, mlp3_layers, dropout, normalization,
                                      input_norm)
        self.aggregate, self.alpha = aggregate, alpha

    def reset_parameters(self) -> None:
        for mlp in (self.phi, self.rho, self.varphi):
            if isinstance(mlp, MLP):
                mlp.reset_parameters()

    def forward(self, x: Tensor, x0: Tensor, inc: Incidence) -> Tensor:
        v, e = inc.node, inc.edge
        m = scatter(self.phi(x)[v], e, dim=0, dim_size=inc.num_edges, reduce=self.aggregate)
        message = m[e] if isinstance(self.rho, nn.Identity) else self.rho(torch.cat([x[v], m[e]], dim=-1))
        out = scatter(message, v, dim=0, dim_size=inc.num_nodes, reduce=self.aggregate)
        return self.varphi(torch.lerp(out, x0, self.alpha))  # (1 - alpha) out + alpha x0


@register_model("ED-HNN")
class EDHNN(HypergraphModel):
    r"""ED-HNN from `"Equivariant Hypergraph Diffusion Neural Operators" <https://arxiv.org/abs/2207.06680>`_
    (Wang et al., ICLR 2023), DHG-Bench appendix A.2.2: it "approximate[s] any continuous,
    permutation-equivariant hypergraph diffusion operator ... combining the star expansion of hypergraphs with
    standard message passing ... shared weights across layers".

    .. math::
        \mathbf{X}^{(0)} = \mathrm{ReLU}(\mathbf{X}\mathbf{W}_{in} + \mathbf{b}_{in}), \qquad
        \mathbf{X}^{(l)} = \sigma\big(\mathrm{EquivSetConv}(\mathbf{X}^{(l-1)}, \mathbf{X}^{(0)})\big),
        \qquad \mathbf{Y} = \mathrm{MLP}_{cls}(\mathbf{X}^{(L)})

    with one :class:`EquivSetConv` shared by all :math:`L` steps and dropout before the input map, before each
    step and before the classifier. The keyword defaults are DHG-Bench's ``default`` configuration; the ED-HNN
    paper's Cora run uses ``mlp1_layers=0, mlp2_layers=0, mlp3_layers=1, classifier_layers=1, alpha=0.0``,
    1 layer, hidden 256.

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Size of node and hyperedge representations.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of diffusion steps. (default: :obj:`2`)
        dropout (float): Dropout (also inside the MLPs). (default: :obj:`0.5`)
        mlp1_layers (int): Depth of :math:`\hat\phi` (0 = identity). (default: :obj:`2`)
        mlp2_layers (int): Depth of :math:`\hat\rho` (0 = keep the hyperedge message). (default: :obj:`2`)
        mlp3_layers (int): Depth of :math:`\hat\varphi` (0 = identity). (default: :obj:`2`)
        aggregate (str): ``"mean"`` or ``"sum"``. (default: :obj:`"mean"`)
        alpha (float): Restart weight of :math:`\mathbf{X}^{(0)}`. (default: :obj:`0.5`)
        normalization (str): ``"ln"``, ``"bn"`` or ``"none"`` inside the MLPs. (default: :obj:`"ln"`)
        input_norm (bool): Normalise the input of the inner MLPs. (default: :obj:`True`)
        classifier_layers (int): Depth of the classifier MLP. (default: :obj:`1`)
        classifier_hidden (int or None): Classifier width; ``None`` uses ``hidden_channels``.
            (default: :obj:`None`)
        activation (str): ``"relu"``, ``"prelu"`` or ``"identity"`` after each step. (default: :obj:`"prelu"`)
        dropout_order (str): ``"paper"``, dropout placed as above (the ED-HNN code); ``"dhgbench"``, as DHG-Bench's
            code places it: none on the input features, after the input map (so :math:`\mathbf{X}^{(0)}` is the
            dropped one) and after each step's activation. (default: :obj:`"paper"`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{nnz})`, optional :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = ("Wang et al., Equivariant Hypergraph Diffusion Neural Operators, ICLR 2023, "
             "https://arxiv.org/abs/2207.06680")

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, mlp1_layers: int = 2, mlp2_layers: int = 2, mlp3_layers: int = 2,
                 aggregate: str = "mean", alpha: float = 0.5, normalization: str = "ln", input_norm: bool = True,
                 classifier_layers: int = 1, classifier_hidden: int | None = None,
                 activation: str = "prelu", dropout_order: str = "paper") -> None:
        super().__init__()
        self.dropout_order = check_choice("dropout_order", dropout_order, ("paper", "dhgbench"))
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        for name, depth in (("mlp1_layers", mlp1_layers), ("mlp2_layers", mlp2_layers),
                            ("mlp3_layers", mlp3_layers)):
            check_int(name, depth, 0)
        check_choice("aggregate", aggregate, ("mean", "sum"))
        check_float("alpha", alpha, 0.0, 1.0)
        check_choice("normalization", normalization, NORMALIZATIONS)
        check_int("classifier_layers", classifier_layers)
        classifier_hidden = hidden_channels if classifier_hidden is None else check_int(
            "classifier_hidden", classifier_hidden)
        check_choice("activation", activation, ("relu", "prelu", "identity"))
        self.dropout, self.num_layers = dropout, num_layers
        self.lin_in = Linear(in_channels, hidden_channels)
        self.conv = EquivSetConv(hidden_channels, mlp1_layers, mlp2_layers, mlp3_layers, aggregate, alpha,
                                 dropout, normalization, input_norm)
        self.act = {"relu": nn.ReLU(), "prelu": nn.PReLU(), "identity": nn.Identity()}[activation]
        self.classifier = MLP(hidden_channels, classifier_hidden, out_channels, classifier_layers, dropout,
                              normalization=normalization)

    def reset_parameters(self) -> None:
        self.lin_in.reset_parameters()
        self.conv.reset_parameters()
        if isinstance(self.act, nn.PReLU):
            self.act.reset_parameters()
        self.classifier.reset_parameters()

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        p, train = self.dropout, self.training
        if self.dropout_order == "dhgbench":
            h = x0 = drop(F.relu(self.lin_in(self.features(x))), p, train)
            for _ in range(self.num_layers):
                h = drop(self.act(self.conv(h, x0, inc)), p, train)
            return self.classifier(h)
        h = x0 = F.relu(self.lin_in(drop(self.features(x), p, train)))
        for _ in range(self.num_layers):
            h = self.act(self.conv(drop(h, p, train), x0, inc))
        return self.classifier(drop(h, p, train))
