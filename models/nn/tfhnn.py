"""TF-HNN: training-free hypergraph message passing precomputed once, then an MLP."""
from __future__ import annotations

from torch import Tensor

from .base import HypergraphModel, dense
from .checks import check_choice, check_common, check_float, check_int
from .mlp import MLP, NORMALIZATIONS
from .registry import register_model
from .sparse import BagOperator, Incidence, Propagation, SparseOperator, inv


def tfhnn_propagation(inc: Incidence) -> Propagation:
    r"""The cached :math:`\mathbf{W} = \mathbf{D}^{-1/2}(\mathbf{H}\mathbf{D}_e^{-1}\mathbf{H}^\top +
    \mathbf{I})\mathbf{D}^{-1/2}` with :math:`\mathbf{D}` its row sums (:math:`d_v + 1`); its sparse factors
    multiply by ``embedding_bag`` sums (:class:`~hypergvl.models.nn.sparse.BagOperator`)."""
    def build() -> Propagation:
        norm = inv(inc.deg_v + 1, 0.5)
        prop = inc.propagation(norm, inv(inc.deg_e), norm, diagonal=norm * norm)
        prop.factors = tuple(BagOperator.wrap(f) for f in prop.factors)
        return prop
    return inc.memo("tfhnn", build)


def tf_message_passing(inc: Incidence, x: Tensor, steps: int, alpha: float) -> Tensor:
    r""":math:`\alpha \sum_{l=0}^{L-1} (1 - \alpha)^l \mathbf{W}^l \mathbf{X} + (1 - \alpha)^L \mathbf{W}^L
    \mathbf{X}` (TF-MP-Module, TF-HNN eq. 9; the reference's ``diffusion``)."""
    prop = tfhnn_propagation(inc)
    out, power = alpha * x, x
    for step in range(1, steps + 1):
        power = prop @ power
        out = out + (alpha * (1 - alpha) ** step if step < steps else (1 - alpha) ** steps) * power
    return out


#: Multiply-adds of a sparse product cost about this many of a dense GEMM's on CPU (measured here: 2.4e9/s for
#: CSR x dense against 3.5e10/s for the dense product, one thread), for :func:`propagate_lazily`'s choice.
SPARSE_COST = 20


class PropagatedFeatures(SparseOperator):
    r"""The TF-MP features :math:`\mathbf{Z} = \mathcal{T}\mathbf{X}` of sparse :math:`\mathbf{X}`, kept as the
    pair (:math:`\mathcal{T}`, :math:`\mathbf{X}`): :math:`\mathbf{Z}\mathbf{W} = \mathcal{T}(\mathbf{X}\mathbf{W})`
    (:math:`\mathcal{T}` is linear), so the MLP's first Linear costs sparse products of its output width instead
    of a dense :math:`N \times F` matrix (bag-of-words :math:`\mathbf{X}` gives a dense :math:`\mathbf{Z}`: 16%
    nonzero on Cora against 1.3%). Only ``@`` and :meth:`to_dense` are defined (the MLP starts with a Linear)."""

    def __init__(self, inc: Incidence, x: SparseOperator, steps: int, alpha: float) -> None:
        self.inc, self.x, self.steps, self.alpha, self.shape = inc, BagOperator.wrap(x), steps, alpha, x.shape

    def __matmul__(self, w: Tensor) -> Tensor:
        return tf_message_passing(self.inc, self.x @ w, self.steps, self.alpha)

    def to_dense(self) -> Tensor:
        return tf_message_passing(self.inc, self.x.to_dense(), self.steps, self.alpha)


def propagate_lazily(inc: Incidence, x: Tensor | SparseOperator, steps: int) -> bool:
    r"""Whether :class:`PropagatedFeatures` is cheaper than the dense cached :math:`\mathbf{Z}` per output column:
    sparse ``x`` and :data:`SPARSE_COST` x (nnz(X) + L (nnz(W) + N)) < N F."""
    if not isinstance(x, SparseOperator):
        return False
    prop = tfhnn_propagation(inc)
    width = sum(f.nnz for f in prop.factors) + (inc.num_nodes if prop.diagonal is not None else 0)
    return SPARSE_COST * (x.nnz + steps * width) < x.shape[0] * x.shape[1]


@register_model("TF-HNN")
class TFHNN(HypergraphModel):
    r"""TF-HNN from `"Training-Free Message Passing for Learning on Hypergraphs"
    <https://arxiv.org/abs/2402.05569>`_ (Tang et al., ICLR 2025), DHG-Bench appendix A.2.1: "decouple[s]
    hypergraph structural processing from model training ... removes learnable parameters and nonlinear
    activations, and compresses multi-layer propagation into a single step".

    .. math::
        \mathbf{Z} = \alpha \sum_{l=0}^{L-1} (1 - \alpha)^l \mathbf{W}^l \mathbf{X}
        + (1 - \alpha)^L \mathbf{W}^L \mathbf{X}, \qquad
        \mathbf{W} = \mathbf{D}^{-1/2}\big(\mathbf{H}\mathbf{D}_e^{-1}\mathbf{H}^{\top} + \mathbf{I}\big)
        \mathbf{D}^{-1/2}, \qquad \mathbf{Y} = \mathrm{MLP}(\mathbf{Z})

    :math:`\mathbf{Z}` is computed once per (features, structure) pair and cached (recomputed when ``x``
    requires grad); for sparse features where that is cheaper (:func:`propagate_lazily`), the MLP's first Linear
    map is applied before the propagation instead: with :math:`\mathbf{Z} = \mathcal{T}\mathbf{X}` the linear
    map above, :math:`\mathbf{Z}\mathbf{W}_1 = \mathcal{T}(\mathbf{X}\mathbf{W}_1)` (:class:`PropagatedFeatures`;
    the same function, as :math:`\mathcal{T}` is linear).
    DHG-Bench on Cora: :math:`L = 2`, :math:`\alpha = 0.1`, a 3-layer MLP of width 256, dropout 0.7.

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Width of the MLP.
        out_channels (int): Size of each output vector.
        num_layers (int): Propagation steps :math:`L`. (default: :obj:`2`)
        dropout (float): Dropout inside the MLP. (default: :obj:`0.5`)
        alpha (float): Restart weight :math:`\alpha \in [0, 1]`. (default: :obj:`0.5`)
        mlp_num_layers (int): Depth of the MLP. (default: :obj:`2`)
        normalization (str): ``"ln"``, ``"bn"`` or ``"none"`` inside the MLP. (default: :obj:`"ln"`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse; the propagated
          features are dense), hyperedge indices :math:`(2, \mathrm{nnz})`, optional :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = ("Tang et al., Training-Free Message Passing for Learning on Hypergraphs, ICLR 2025, "
             "https://arxiv.org/abs/2402.05569")

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, alpha: float = 0.5, mlp_num_layers: int = 2,
                 normalization: str = "ln") -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        self.steps, self.alpha = num_layers, check_float("alpha", alpha, 0.0, 1.0)
        check_int("mlp_num_layers", mlp_num_layers)
        check_choice("normalization", normalization, NORMALIZATIONS)
        self.decoder = MLP(in_channels, hidden_channels, out_channels, mlp_num_layers, dropout,
                           normalization=normalization)

    def reset_parameters(self) -> None:
        self.decoder.reset_parameters()

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        features = self.features(x)
        if x.requires_grad:
            z = tf_message_passing(inc, dense(features), self.steps, self.alpha)
        elif propagate_lazily(inc, features, self.steps):
            z = PropagatedFeatures(inc, features, self.steps, self.alpha)
        else:
            z = self._cache.get((x, hyperedge_index), ("tf-mp", inc.num_nodes, inc.num_edges, inc.dtype),
                                lambda: tf_message_passing(inc, dense(self.features(x)), self.steps, self.alpha))
        return self.decoder(z)
