"""HyperND: nonlinear feature diffusion to a fixed point, computed once per structure, then an MLP."""
from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from .base import HypergraphModel, dense
from .checks import check_bool, check_choice, check_common, check_float, check_int
from .live_rows import live_mlp, live_rows
from .mlp import MLP, NORMALIZATIONS
from .registry import register_model
from .sparse import BagOperator, Incidence, SparseOperator, bag, inv

AGGREGATES = ("sum", "mean")
_CHUNK_ELEMENTS = 1 << 26  # columns per chunk of the node-to-hyperedge map: about 256 MB of float32
_SPARSE_ROW_DENSITY = 0.25  # rows of the limit at most this full are multiplied from CSR (about 4x slower a stored
# entry than a dense block on one CPU core, measured on Cora)
_SKIP_ZERO_ROWS = 0.9  # the weight gradient skips rows with a zero output gradient when fewer than this share remain


def _signed_power(z: Tensor, p: float) -> Tensor:
    """``sign(z) |z|^p``: ``z^p`` on the non-negative features the paper assumes, odd and finite elsewhere."""
    return z if p == 1.0 else z.abs().pow(p).mul_(z.sign())


class HyperNDDiffusion:
    r"""The maps of :class:`HyperND` on one structure (constant sparse operators, built once):
    :meth:`v2e` :math:`\mathbf{Z} \mapsto \sigma(\mathbf{H}^\top \rho(\mathbf{D}_v^{-1/2}\mathbf{Z}))`,
    :meth:`e2v` :math:`\mathbf{Y} \mapsto \mathbf{D}_v^{-1/2}\mathbf{H}\mathbf{Y}` and
    :math:`\varphi(\mathbf{Z}) = 2\,\lVert v2e(\mathbf{Z}) \rVert_F`, all by sparse products (no
    :math:`\mathrm{nnz} \times F` tensor); for :math:`p \neq 1` the feature columns are processed in chunks."""

    def __init__(self, inc: Incidence, p: float, aggregate: str) -> None:
        self.p = p
        ones = torch.ones(inc.nnz, dtype=inc.dtype, device=inc.node.device)
        self.ht = SparseOperator(inc.edge, inc.node, ones, (inc.num_edges, inc.num_nodes))
        self.h = SparseOperator(inc.node, inc.edge, ones, (inc.num_nodes, inc.num_edges))
        self.node_scale = inv(inc.deg_v, 0.5).unsqueeze(-1)
        # sigma divides by |e|; the reference's aggregate="mean" divides by |e| once more, and by d_v on the nodes
        self.edge_scale = inv(inc.deg_e, 2.0 if aggregate == "mean" else 1.0).unsqueeze(-1)
        self.out_scale = self.node_scale * (inv(inc.deg_v).unsqueeze(-1) if aggregate == "mean" else 1.0)

    def v2e(self, z: Tensor) -> Tensor:
        if self.p == 1.0:
            return (self.ht @ (z * self.node_scale)) * self.edge_scale
        step = max(1, _CHUNK_ELEMENTS // max(z.size(0), self.ht.shape[0], 1))
        parts = [_signed_power((self.ht @ _signed_power(z[:, i:i + step] * self.node_scale, self.p))
                               * self.edge_scale, 1.0 / self.p) for i in range(0, z.size(1), step)]
        return torch.cat(parts, dim=1) if len(parts) != 1 else parts[0]

    def e2v(self, y: Tensor) -> Tensor:
        return (self.h @ y) * self.out_scale

    def propagate(self, z: Tensor) -> tuple[Tensor, Tensor]:
        r""":math:`(e2v(v2e(\mathbf{Z})), \lVert v2e(\mathbf{Z}) \rVert_F^2)` by blocks of feature columns
        (both maps act column by column), so no :math:`|\mathcal{E}| \times F` tensor is kept (at Yelp scale
        with 1,862 features it would be 730,060 x 1,871 floats, 5.5 GB)."""
        step = max(1, _CHUNK_ELEMENTS // max(z.size(0), self.ht.shape[0], 1))
        if step >= z.size(1):
            y = self.v2e(z)
            return self.e2v(y), y.square().sum().double()
        out, sq = torch.empty_like(z), torch.zeros((), dtype=torch.float64, device=z.device)
        for i in range(0, z.size(1), step):
            y = self.v2e(z[:, i:i + step])
            sq += y.square().sum().double()
            out[:, i:i + step] = self.e2v(y)
        return out, sq


def hypernd_diffusion(inc: Incidence, x: Tensor, p: float, alpha: float, steps: int, tol: float,
                      aggregate: str) -> tuple[Tensor, int]:
    r"""The HyperND fixed-point iteration from :math:`\mathbf{U} = \mathbf{X}/\varphi(\mathbf{X})`:
    :math:`\mathbf{G} = (1-\alpha)\,e2v(v2e(\mathbf{F})) + \alpha\mathbf{U}`,
    :math:`\mathbf{F} \leftarrow \mathbf{G}/\varphi(\mathbf{G})`, stopped after ``steps`` iterations or when
    :math:`\lVert \mathbf{F}_{new} - \mathbf{F} \rVert_F < \mathrm{tol}\,\lVert \mathbf{F}_{new} \rVert_F`.
    :math:`v2e` is 1-homogeneous and :math:`e2v` linear, so :math:`e2v(v2e(\mathbf{F}))` is
    :math:`e2v(v2e(\mathbf{G}))/\varphi(\mathbf{G})` (one nonlinear map per iteration, by column blocks:
    :meth:`HyperNDDiffusion.propagate`). A zero :math:`\varphi` (no signal) leaves zeros; isolated nodes keep
    :math:`\alpha\mathbf{U}`. Returns the limit and the number of iterations run."""
    maps = HyperNDDiffusion(inc, p, aggregate)

    def normalised(z: Tensor) -> tuple[Tensor, Tensor]:  # (Z / phi(Z), e2v(v2e(Z)) / phi(Z)), e2v being linear
        t, square = maps.propagate(z)
        phi = 2.0 * square.sqrt().to(z.dtype)
        scale = 1.0 / phi if phi > 0 else 0.0
        return z * scale, t * scale

    u, t = normalised(x)
    f, done = u, 0
    for done in range(1, steps + 1):
        f_new, t = normalised((1.0 - alpha) * t + alpha * u)
        change = torch.linalg.vector_norm(f_new - f)
        f = f_new
        if change < tol * torch.linalg.vector_norm(f):
            break
    return f, done


class _RowSplitProduct(torch.autograd.Function):
    """``F @ W`` for the constant :class:`DiffusedFeatures` ``F``, with the gradient in ``W`` only."""

    @staticmethod
    def forward(ctx: Any, w: Tensor, feats: "DiffusedFeatures") -> Tensor:  # type: ignore[override]
        ctx.feats = feats
        return feats.product(w)

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:  # type: ignore[override]
        feats = ctx.feats
        live = live_rows(grad)  # rows outside the loss (e.g. nodes not in the training split) give 0
        rows, block, sparse_rows, sparse_t = feats.parts(live if int(live.sum()) < _SKIP_ZERO_ROWS * live.numel()
                                                         else None)
        g = grad if rows is None else grad.index_select(0, rows)
        # F^T G in the layout of ``w`` (the transpose of Linear.weight): block^T G is about 10% faster than
        # (G^T block)^T on one core, and the sparse rows' part is the addmm input (no separate sum)
        if sparse_t is None:
            return block.t() @ g, None
        return bag(sparse_t, grad.index_select(0, sparse_rows)).addmm_(block.t(), g), None


class DiffusedFeatures(SparseOperator):
    r"""The diffusion limit :math:`\mathbf{F}` as the decoder's constant input (an operator
    :class:`~hypergvl.models.nn.base.Linear` multiplies by its weight): the rows at most ``_SPARSE_ROW_DENSITY`` full
    (on Cora the nodes whose only hyperedge is their singleton, about 1.3 % nonzero, half the nodes) are kept as
    CSR and the others as one dense block, and the weight gradient
    :math:`\mathbf{F}^\top\mathbf{G}` skips the rows where :math:`\mathbf{G}` is zero (the nodes outside the
    loss; those rows of the block are kept while they stay the same). The same product as ``F @ W``, up to float
    rounding."""

    def __init__(self, f: Tensor) -> None:
        self.shape = (int(f.size(0)), int(f.size(1)))
        self.full, self.live = f, None
        sparse = f.ne(0).sum(1) <= _SPARSE_ROW_DENSITY * f.size(1)
        if bool(sparse.any()):
            self.dense_rows, self.sparse_rows = (~sparse).nonzero().view(-1), sparse.nonzero().view(-1)
            self.block = f[self.dense_rows].contiguous()
            rows, cols = f[self.sparse_rows].nonzero(as_tuple=True)
            part = f[self.sparse_rows]
            self.sparse = BagOperator.wrap(SparseOperator(rows, cols, part[rows, cols],
                                                          (self.sparse_rows.numel(), self.shape[1])))
        else:
            self.block, self.sparse = f.contiguous(), None

    def to_dense(self) -> Tensor:
        return self.full

    def parts(self, live: Tensor | None) -> tuple[Tensor | None, Tensor, Tensor | None, Tensor | None]:
        """``(dense rows, their block, sparse rows, their transposed CSR)`` restricted to the ``live`` rows (all
        rows for ``None``; ``None`` rows mean all of them), kept while the live rows stay the same."""
        if live is None:
            return ((self.dense_rows, self.block, self.sparse_rows, self.sparse.transposed) if self.sparse is not None
                    else (None, self.block, None, None))
        if self.live is None or not torch.equal(self.live[0], live):
            if self.sparse is None:
                rows = live.nonzero().view(-1)
                self.live = (live, (rows, self.block[rows], None, None))
            else:
                dense_live, sparse_live = live[self.dense_rows], live[self.sparse_rows]
                sparse_rows = self.sparse_rows[sparse_live]
                part = self.full[sparse_rows]
                r, c = part.nonzero(as_tuple=True)
                sub = SparseOperator(r, c, part[r, c], (sparse_rows.numel(), self.shape[1]))
                self.live = (live, (self.dense_rows[dense_live], self.block[dense_live], sparse_rows, sub.transposed))
        return self.live[1]

    def product(self, w: Tensor) -> Tensor:
        if self.sparse is None:
            return self.block @ w
        out = w.new_empty(self.shape[0], w.size(1))
        out.index_copy_(0, self.dense_rows, self.block @ w)
        out.index_copy_(0, self.sparse_rows, bag(self.sparse.matrix, w))  # embedding_bag: 2x the CSR speed
        return out

    def __matmul__(self, w: Tensor) -> Tensor:
        if w.dim() != 2:
            raise ValueError(f"DiffusedFeatures multiplies 2-D tensors, got shape {tuple(w.shape)}")
        if torch.is_grad_enabled() and w.requires_grad:
            return _RowSplitProduct.apply(w, self)
        return self.product(w)


@register_model("HyperND")
class HyperND(HypergraphModel):
    r"""HyperND from `"Nonlinear Feature Diffusion on Hypergraphs" <https://arxiv.org/abs/2103.14867>`_
    (Prokopchik, Benson and Tudisco, ICML 2022), DHG-Bench appendix A.2: a nonlinear diffusion of the input
    features along the hypergraph to its limit point (section 3 of the paper), then a classifier on the limit.

    .. math::
        \mathbf{F}^{(k+1)} = \frac{\mathbf{G}^{(k)}}{\varphi(\mathbf{G}^{(k)})}, \quad
        \mathbf{G}^{(k)} = (1-\alpha)\,\mathbf{D}_v^{-1/2}\mathbf{H}\,
        \sigma\!\left(\mathbf{H}^\top \rho(\mathbf{D}_v^{-1/2}\mathbf{F}^{(k)})\right) + \alpha\,\mathbf{U},
        \quad \mathbf{U} = \frac{\mathbf{X}}{\varphi(\mathbf{X})}, \quad
        \mathbf{Y} = \mathrm{MLP}(\mathbf{F}^{(\infty)})

    with :math:`\mathbf{H}` the incidence matrix, :math:`\mathbf{D}_v` the node degrees (0 for isolated nodes),
    :math:`\rho(z) = z^p`, :math:`\sigma(s)_e = (s_e/|e|)^{1/p}` (a power mean over the members of :math:`e`;
    on negative entries the odd extension :math:`\mathrm{sign}(z)|z|^p`, where the reference gives NaN) and
    :math:`\varphi(\mathbf{Z}) = 2\lVert\sigma(\mathbf{H}^\top\rho(\mathbf{D}_v^{-1/2}\mathbf{Z}))\rVert_F`.
    The limit has no parameters: it is computed once per ``(x, hyperedge_index)`` and cached
    (:func:`hypernd_diffusion`, sparse products only), and the decoder's first layer reads it through
    :class:`DiffusedFeatures` (its nearly empty rows from CSR, its weight gradient over the rows in the loss).
    In node classification the paper "spreads both features and labels" (abstract; section 4): the diffused
    matrix is :math:`[\mathbf{X}, \mathbf{Y}]` with :math:`\mathbf{Y}` the one-hot labels of the training nodes
    (zero rows elsewhere), which the trainer hands over through :meth:`prepare` (``label_diffusion=True``, the
    default; the decoder then reads :math:`F_{in} + C` columns). Tasks without node labels diffuse the features
    only, as does ``label_diffusion=False``, DHG-Bench's code (its label lines, which would one-hot *all* labels,
    are commented out). ``aggregate="mean"`` is the reference's mean aggregation, which divides by
    :math:`|e|^2` and by :math:`d_v` (its default config). DHG-Bench on Cora: :math:`p = 2`,
    :math:`\alpha = 0.5`, tol 1e-5, 100 steps, sum aggregation, a 2-layer MLP of width 128 with LayerNorm.

    For :math:`\mathcal{V} = \{0, 1, 2, 3\}`, :math:`\mathcal{E} = \{\{0, 1, 2\}, \{1, 2, 3\}\}`::

        hyperedge_index = torch.tensor([[0, 1, 2, 1, 2, 3],
                                        [0, 0, 0, 1, 1, 1]])

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Width of the MLP.
        out_channels (int): Size of each output vector.
        num_layers (int): Depth of the MLP classifier. (default: :obj:`2`)
        dropout (float): Dropout inside the MLP. (default: :obj:`0.5`)
        p (float): The power :math:`p > 0` of :math:`\rho` and :math:`\sigma`. (default: :obj:`2.0`)
        alpha (float): Restart weight :math:`\alpha \in [0, 1]`. (default: :obj:`0.5`)
        steps (int): Maximum number of diffusion iterations. (default: :obj:`100`)
        tol (float): Relative change at which the iteration stops. (default: :obj:`0.0001`)
        aggregate (str): ``"sum"`` (the power mean above) or ``"mean"`` (DHG-Bench's doubly normalised
            variant). (default: :obj:`"sum"`)
        normalization (str): ``"ln"``, ``"bn"`` or ``"none"`` inside the MLP. (default: :obj:`"ln"`)
        label_diffusion (bool): Diffuse the training labels :meth:`prepare` receives with the features.
            (default: :obj:`True`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse; the diffused features
          are dense), hyperedge indices :math:`(2, \mathrm{nnz})`, optional :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = ("Prokopchik, Benson and Tudisco, Nonlinear Feature Diffusion on Hypergraphs, ICML 2022, "
             "https://arxiv.org/abs/2103.14867")

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, p: float = 2.0, alpha: float = 0.5, steps: int = 100,
                 tol: float = 1e-4, aggregate: str = "sum", normalization: str = "ln",
                 label_diffusion: bool = True) -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        self.p = check_float("p", p, 0.0)
        if self.p == 0.0 or math.isinf(self.p):
            raise ValueError(f"p must be a positive finite number, got {p!r}")
        self.alpha = check_float("alpha", alpha, 0.0, 1.0)
        self.steps = check_int("steps", steps)
        self.tol = check_float("tol", tol, 0.0)
        self.aggregate = check_choice("aggregate", aggregate, AGGREGATES)
        check_choice("normalization", normalization, NORMALIZATIONS)
        self.label_diffusion = check_bool("label_diffusion", label_diffusion)
        self._decoder_args = (hidden_channels, out_channels, num_layers, dropout, normalization)
        self.in_channels = in_channels
        self.decoder = MLP(in_channels, hidden_channels, out_channels, num_layers, dropout,
                           normalization=normalization)
        self.register_buffer("known_labels", None, persistent=False)  # [N, C] one-hot training labels

    def reset_parameters(self) -> None:
        self.decoder.reset_parameters()

    def prepare(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None,
                labels: Tensor | None = None, num_classes: int | None = None, **task_info) -> None:
        """Receive the training labels (``labels[v]`` the class of a training node, -1 elsewhere; the node task's
        ``Task.prepare`` hook, before the optimiser is built): with ``label_diffusion`` they are diffused with
        the features and the decoder is rebuilt for :math:`F_{in} + C` inputs. Without labels, nothing changes."""
        if not self.label_diffusion or labels is None:
            return
        labels = torch.as_tensor(labels).long().view(-1)
        if labels.numel() != x.size(0):
            raise ValueError(f"labels must have one entry per node ({x.size(0)}), got {labels.numel()}")
        c = int(num_classes) if num_classes is not None else int(labels.max()) + 1
        if int(labels.max()) >= c:
            raise ValueError(f"labels must lie in [-1, {c}), got {int(labels.max())}")
        like = next(self.decoder.parameters())
        known = torch.zeros(labels.numel(), c, dtype=like.dtype, device=like.device)
        seen = labels >= 0
        known[seen.nonzero().view(-1).to(like.device), labels[seen].to(like.device)] = 1.0
        if self.known_labels is None or self.known_labels.size(1) != c:
            hidden, out, layers, dropout, norm = self._decoder_args
            self.decoder = MLP(self.in_channels + c, hidden, out, layers, dropout, normalization=norm).to(like)
        self.known_labels = known
        self._cache.clear()

    def diffuse(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        """The diffusion limit :math:`\\mathbf{F}^{(\\infty)}` of ``x`` (cached unless ``x`` requires grad)."""
        inc = self.incidence(x, hyperedge_index, num_hyperedges)

        def build() -> Tensor:
            u = dense(self.features(x)).to(inc.dtype)
            if self.known_labels is not None:
                if self.known_labels.size(0) != u.size(0):
                    raise ValueError(f"HyperND was prepared with the labels of {self.known_labels.size(0)} nodes, "
                                     f"got {u.size(0)} nodes")
                u = torch.cat([u, self.known_labels.to(u)], dim=1)
            return hypernd_diffusion(inc, u, self.p, self.alpha, self.steps, self.tol, self.aggregate)[0]
        if x.requires_grad:
            return build()
        return self._cache.get((x, hyperedge_index), self._key(inc), build)

    def _key(self, inc: Incidence) -> tuple:
        return ("hypernd", inc.num_nodes, inc.num_edges, inc.dtype, self.p, self.alpha, self.steps, self.tol,
                self.aggregate)

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        if x.requires_grad:  # a gradient to the input features: the plain product
            return self.decoder(self.diffuse(x, hyperedge_index, num_hyperedges))
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        feats = self._cache.get((x, hyperedge_index), ("rows",) + self._key(inc), lambda: DiffusedFeatures(
            self.diffuse(x, hyperedge_index, num_hyperedges)))
        return live_mlp(self.decoder, feats)  # the MLP's maps, its dropout masks those of dropout.dropout
