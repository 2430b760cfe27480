"""PhenomNN: unrolled minimisation of a clique-plus-star hypergraph energy, by sparse products over incidences."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import HypergraphModel
from .checks import check_choice, check_common, check_float, check_int
from .dropout import dropout as drop
from .mlp import MLP, NORMALIZATIONS
from .registry import register_model
from .sparse import Incidence, inv


class PhenomOperators:
    r"""The two propagation operators of :class:`PhenomNN` and their row sums, built once per structure:
    :math:`\mathbf{A}_\beta = \mathbf{D}_1^{-1/2}(\mathbf{H}\mathbf{H}^\top + \mathbf{I})\mathbf{D}_1^{-1/2}`
    (clique expansion with co-occurrence counts) and :math:`\mathbf{A}_\gamma = \mathbf{D}_2^{-1/2}(\mathbf{H}
    \mathbf{B}\mathbf{H}^\top + \mathbf{I})\mathbf{D}_2^{-1/2}` (:math:`\mathbf{B} = \mathrm{diag}(|e|)^{-1}`),
    where :math:`\mathbf{D}_1 = \mathrm{diag}(\mathbf{H}\,|e| + 1)` and :math:`\mathbf{D}_2 =
    \mathrm{diag}(d_v + 1)` are the row sums; each is a :class:`Propagation` (one CSR matrix, or the factors
    :math:`\mathbf{H}`, :math:`\mathbf{H}^\top` when the clique expansion would be large)."""

    def __init__(self, inc: Incidence) -> None:
        ones = torch.ones_like(inc.deg_v)
        d1 = torch.zeros_like(inc.deg_v).index_add_(0, inc.node, inc.deg_e[inc.edge]) + 1.0
        d2 = inc.deg_v + 1.0
        self.a_beta = inc.propagation(d1.rsqrt(), torch.ones_like(inc.deg_e), d1.rsqrt(), 1.0 / d1)
        self.a_gamma = inc.propagation(d2.rsqrt(), inv(inc.deg_e), d2.rsqrt(), 1.0 / d2)
        self.d_beta = (self.a_beta @ ones.unsqueeze(-1)).squeeze(-1)
        self.d_gamma = (self.a_gamma @ ones.unsqueeze(-1)).squeeze(-1)


@register_model("PhenomNN")
class PhenomNN(HypergraphModel):
    r"""PhenomNN from `"From Hypergraph Energy Functions to Hypergraph Neural Networks"
    <https://arxiv.org/abs/2306.09623>`_ (Wang et al., ICML 2023), DHG-Bench appendix A.2: node embeddings are
    the minimiser of a parameterised energy with a clique-expansion term (weight :math:`\lambda_0`) and a
    star-expansion term (:math:`\lambda_1`); :math:`K` preconditioned gradient steps with ReLU (section 4 of the
    paper, the official code's update) are the layers.

    .. math::
        \mathbf{Y}^{(0)} = \mathrm{ReLU}(f(\mathbf{X}; \mathbf{W})), \qquad
        \mathbf{Y}^{(k+1)} = \mathrm{ReLU}\left((1-\alpha)\mathbf{Y}^{(k)} + \alpha\,\tilde{\mathbf{Q}}^{-1}
        \left(\lambda_0\mathbf{A}_\beta\mathbf{Y}^{(k)} + \lambda_1\mathbf{A}_\gamma\mathbf{Y}^{(k)}
        + \mathbf{Y}^{(0)}\right)\right), \qquad \mathbf{Z} = g(\mathbf{Y}^{(K)})

    with :math:`\mathbf{A}_\beta`, :math:`\mathbf{A}_\gamma` from :class:`PhenomOperators`,
    :math:`\tilde{\mathbf{Q}} = \lambda_0\mathbf{D}_\beta + \lambda_1\mathbf{D}_\gamma + \mathbf{I}` (the
    diagonal row sums of the two operators), :math:`f` the encoder MLP, :math:`g` the decoder MLP, dropout on
    the inputs of both, and :math:`\alpha = 1/(1 + \lambda_0 + \lambda_1)` when ``alpha=0`` (the paper's step
    size). Every product is sparse, :math:`O(\mathrm{nnz})` per step, with the operators cached per structure;
    isolated nodes only keep their own term. DHG-Bench's code computes the same function (its operators are
    torch sparse matrices built with scipy). DHG-Bench on Cora: hidden 64, a linear encoder and decoder,
    :math:`\lambda_0 = \lambda_1 = 10`, :math:`\alpha = 0.5`, 16 steps, lr 1e-2, weight decay 1e-5, 50 epochs.

    For :math:`\mathcal{V} = \{0, 1, 2, 3\}`, :math:`\mathcal{E} = \{\{0, 1, 2\}, \{1, 2, 3\}\}`::

        hyperedge_index = torch.tensor([[0, 1, 2, 1, 2, 3],
                                        [0, 0, 0, 1, 1, 1]])

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Width of the embeddings :math:`\mathbf{Y}`.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of propagation steps :math:`K`. (default: :obj:`16`)
        dropout (float): Dropout on the encoder and decoder inputs and inside them. (default: :obj:`0.5`)
        lambda0 (float): Weight :math:`\lambda_0 \geq 0` of the clique-expansion energy. (default: :obj:`1.0`)
        lambda1 (float): Weight :math:`\lambda_1 \geq 0` of the star-expansion energy. (default: :obj:`1.0`)
        alpha (float): Step size :math:`\alpha \in [0, 1]`; 0 means :math:`1/(1+\lambda_0+\lambda_1)`.
            (default: :obj:`0.0`)
        encoder_layers (int): Depth of the encoder MLP :math:`f`. (default: :obj:`1`)
        decoder_layers (int): Depth of the decoder MLP :math:`g`. (default: :obj:`1`)
        decoder_hidden (int): Width of the decoder's hidden layers. (default: :obj:`64`)
        normalization (str): ``"ln"``, ``"bn"`` or ``"none"`` inside the MLPs. (default: :obj:`"ln"`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{nnz})`, optional number of hyperedges :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = ("Wang et al., From Hypergraph Energy Functions to Hypergraph Neural Networks, ICML 2023, "
             "https://arxiv.org/abs/2306.09623")

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 16,
                 dropout: float = 0.5, *, lambda0: float = 1.0, lambda1: float = 1.0, alpha: float = 0.0,
                 encoder_layers: int = 1, decoder_layers: int = 1, decoder_hidden: int = 64,
                 normalization: str = "ln") -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        self.steps, self.dropout = num_layers, dropout
        self.lambda0 = check_float("lambda0", lambda0, 0.0)
        self.lambda1 = check_float("lambda1", lambda1, 0.0)
        alpha = check_float("alpha", alpha, 0.0, 1.0)
        self.alpha = alpha if alpha > 0 else 1.0 / (1.0 + self.lambda0 + self.lambda1)
        check_choice("normalization", normalization, NORMALIZATIONS)
        self.encoder = MLP(in_channels, hidden_channels, hidden_channels, check_int("encoder_layers", encoder_layers),
                           dropout, normalization=normalization)
        self.decoder = MLP(hidden_channels, check_int("decoder_hidden", decoder_hidden), out_channels,
                           check_int("decoder_layers", decoder_layers), dropout, normalization=normalization)

    def reset_parameters(self) -> None:
        self.encoder.reset_parameters()
        self.decoder.reset_parameters()

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        ops = inc.memo("phenomnn", lambda: PhenomOperators(inc))
        q_inv = inc.memo(("phenomnn-q", self.lambda0, self.lambda1),
                         lambda: (1.0 / (self.lambda0 * ops.d_beta + self.lambda1 * ops.d_gamma + 1.0)).unsqueeze(-1))
        y0 = F.relu(self.encoder(drop(self.features(x), self.dropout, self.training)))
        y = y0
        for _ in range(self.steps):
            total = y0
            if self.lambda0:
                total = total + self.lambda0 * (ops.a_beta @ y)
            if self.lambda1:
                total = total + self.lambda1 * (ops.a_gamma @ y)
            y = F.relu((1.0 - self.alpha) * y + self.alpha * q_inv * total)
        return self.decoder(drop(y, self.dropout, self.training))
