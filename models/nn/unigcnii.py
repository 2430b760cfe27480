"""UniGCNII: GCNII (initial residual + identity mapping) lifted to hypergraphs by UniGNN."""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .base import HypergraphModel, Linear
from .checks import check_bool, check_choice, check_common, check_float, check_probability
from .dropout import dropout as drop
from .registry import register_model
from .sparse import Propagation
from .unignn import l2_normalize_rows, reduce_propagation, unigcn_propagation

#: ``propagation`` choices: UniGNN's degree-normalised operator, or DHG-Bench's un-normalised mean/sum aggregation.
PROPAGATIONS = ("unignn", "mean", "sum")


class UniGCNIIConv(nn.Module):
    r"""One UniGCNII layer with initial residual :math:`\alpha` and identity mapping :math:`\beta`:

    .. math::
        \tilde{\mathbf{X}} = (1 - \alpha)\, \mathbf{P}_{\mathrm{UniGCN}} \mathbf{X} + \alpha \mathbf{X}^{(0)},
        \qquad \mathbf{X}' = (1 - \beta)\, \tilde{\mathbf{X}} + \beta\, \tilde{\mathbf{X}} \mathbf{W}
    """

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.lin = Linear(channels, channels, bias=False)

    def reset_parameters(self) -> None:
        self.lin.reset_parameters()

    def forward(self, x: Tensor, x0: Tensor, propagation: Propagation, alpha: float, beta: float,
                use_norm: bool) -> Tensor:
        h = propagation @ x
        if use_norm:
            h = l2_normalize_rows(h)
        h = torch.lerp(h, x0, alpha)                                            # (1 - alpha) h + alpha x0
        return torch.addmm(h, h, self.lin.weight.t(), beta=1 - beta, alpha=beta)  # (1 - beta) h + beta h W


@register_model("UniGCNII")
class UniGCNII(HypergraphModel):
    r"""UniGCNII from `"UniGNN: a Unified Framework for Graph and Hypergraph Neural Networks"
    <https://arxiv.org/abs/2105.00956>`_ (Huang & Yang, IJCAI 2021), the UniGNN variant DHG-Bench reports
    (section 3.2: "we report only UniGCNII, the most competitive variant").

    .. math::
        \mathbf{X}^{(0)} = \mathrm{ReLU}(\mathbf{X}\mathbf{W}_{in} + \mathbf{b}_{in}), \qquad
        \mathbf{X}^{(l)} = \mathrm{ReLU}\Big((1 - \beta_l)\tilde{\mathbf{X}}^{(l)}
        + \beta_l \tilde{\mathbf{X}}^{(l)} \mathbf{W}^{(l)}\Big), \qquad
        \tilde{\mathbf{X}}^{(l)} = (1 - \alpha)\mathbf{P}\mathbf{X}^{(l-1)} + \alpha \mathbf{X}^{(0)}

    with :math:`\beta_l = \log(\lambda / l + 1)`, :math:`\mathbf{P}` the UniGCN operator
    (:func:`hypergvl.models.nn.unignn.unigcn_propagation`, mean member aggregation) and the output
    :math:`\mathbf{X}^{(L)} \mathbf{W}_{out} + \mathbf{b}_{out}`. Dropout precedes every linear map and
    convolution. DHG-Bench on Cora: 2 layers, hidden 256, dropout 0.8, :math:`\alpha = 0.3`,
    :math:`\lambda = 0.8`.

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Size of the hidden layers.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of UniGCNII convolutions (between the input and output maps).
            (default: :obj:`2`)
        dropout (float): Dropout before each convolution and before the output map. (default: :obj:`0.5`)
        alpha (float): Initial-residual weight :math:`\alpha \in [0, 1]`. (default: :obj:`0.3`)
        lamda (float): Identity-mapping strength :math:`\lambda > 0`. (default: :obj:`0.8`)
        input_dropout (float or None): Dropout on the input features; ``None`` uses ``dropout``, as
            DHG-Bench's code does. (default: :obj:`None`)
        use_norm (bool): L2-normalise rows after propagation. (default: :obj:`False`)
        activation (str): ``"relu"`` or ``"prelu"`` (one learnable slope). DHG-Bench's yamls ask for PReLU but its
            UniGCNII applies ``F.relu`` whatever they say. (default: :obj:`"relu"`)
        propagation (str): ``"unignn"``, the UniGNN paper's operator :math:`\mathbf{P}` above; ``"mean"`` or
            ``"sum"``, the un-normalised two-stage aggregation DHG-Bench's code runs instead
            (:func:`hypergvl.models.nn.unignn.reduce_propagation`, its ``reduce`` key). (default: :obj:`"unignn"`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{nnz})`, optional :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = ("Huang & Yang, UniGNN: a Unified Framework for Graph and Hypergraph Neural Networks, IJCAI 2021, "
             "https://arxiv.org/abs/2105.00956")

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, alpha: float = 0.3, lamda: float = 0.8, input_dropout: float | None = None,
                 use_norm: bool = False, activation: str = "relu", propagation: str = "unignn") -> None:
        super().__init__()
        self.propagation = check_choice("propagation", propagation, PROPAGATIONS)
        check_choice("activation", activation, ("relu", "prelu"))
        self.act = nn.PReLU() if activation == "prelu" else nn.ReLU()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        self.dropout, self.alpha = dropout, check_float("alpha", alpha, 0.0, 1.0)
        self.lamda = check_float("lamda", lamda, 0.0)
        if lamda <= 0:
            raise ValueError(f"lamda must be > 0, got {lamda!r}")
        self.input_dropout = dropout if input_dropout is None else check_probability("input_dropout", input_dropout)
        self.use_norm = check_bool("use_norm", use_norm)
        self.lin_in = Linear(in_channels, hidden_channels)
        self.convs = nn.ModuleList(UniGCNIIConv(hidden_channels) for _ in range(num_layers))
        self.lin_out = Linear(hidden_channels, out_channels)

    def reset_parameters(self) -> None:
        self.lin_in.reset_parameters()
        for conv in self.convs:
            conv.reset_parameters()
        self.lin_out.reset_parameters()
        if isinstance(self.act, nn.PReLU):
            self.act.reset_parameters()

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        p = unigcn_propagation(inc) if self.propagation == "unignn" else reduce_propagation(inc, self.propagation)
        h = drop(self.features(x), self.input_dropout, self.training)
        h = x0 = self.act(self.lin_in(h))
        for i, conv in enumerate(self.convs):
            h = drop(h, self.dropout, self.training)
            h = self.act(conv(h, x0, p, self.alpha, math.log(self.lamda / (i + 1) + 1), self.use_norm))
        return self.lin_out(drop(h, self.dropout, self.training))
