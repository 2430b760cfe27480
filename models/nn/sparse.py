"""The sparse incidence toolbox: constant sparse operators, the validated incidence structure with its memo of derived
operators, and the incidence aggregations, all with cheap backwards (the public interface the models build on).

Speed (docs/design.md "Speed facts"): propagation matrices are CSR tensors multiplied through :class:`_SpMM`, whose
backward uses a transposed copy built once (``torch``'s own CSR backward transposes on every call and costs more than
the whole forward). What depends only on the structure is built once per :class:`Incidence` (:meth:`Incidence.memo`).

Tensors:

- :func:`coo_tensor`, :func:`csr_tensor`: a torch sparse COO / CSR tensor without the invariant checks (CSR's beta
  warning silenced).
- :func:`bag`: ``csr @ w`` computed as an ``embedding_bag`` sum of the rows of ``w``.
- :func:`inv`: ``t ** -power`` with the ``inf`` of a zero degree replaced by 0 (degree normalisation).
- :func:`scatter`, :func:`softmax`: ``torch_geometric.utils``' two functions on the same torch operations, so the
  models import no ``torch_geometric`` (its import pulls in ``transformers``: 0.7 s of every ``hypergvl train``).

Operators (``op @ z``, gradients in ``z`` only):

- :class:`SparseOperator`: a constant sparse matrix ``A`` kept in CSR with its transpose ``A^T``;
  :meth:`~SparseOperator.with_values` swaps the values, keeping the pattern.
- :class:`BagOperator`: a :class:`SparseOperator` whose products run as ``embedding_bag`` sums (faster on CPU).
- :class:`Propagation`: ``diag(left) H diag(mid) H^T diag(right) (+ diag(diagonal))`` as one ``N x N`` operator, one
  CSR matrix or the two factors ``H`` and ``H^T``.

Structure:

- :class:`Incidence`: a hypergraph's incidences (row 0 nodes, row 1 hyperedges), its counts and degrees, a memo of
  derived operators, :meth:`~Incidence.propagation` and the weighted :meth:`~Incidence.clique_expansion`.
- :class:`GraphGroups`: the tokens of a block-diagonal batch grouped by hypergraph (same-size graphs in one block)
  for computations that stay within one hypergraph; :data:`ATTENTION_SCOPES` names the two attention scopes
  (``"graph"``, ``"batch"``).

Aggregations over the incidences (``to="edge"`` pools into hyperedges, ``to="node"`` into nodes):

- :func:`direction`: ``(dst, src, num_dst, num_src, deg_dst)`` of the incidences for one direction.
- :func:`aggregation`: the cached constant operator of ``scatter(x[src], dst, reduce)``, ``reduce`` "sum" or "mean".
- :class:`Pattern`: the distinct ``(dst, src)`` pairs as a CSR pattern and its transpose, to carry per-incidence
  weights.
- :func:`weighted_aggregation`: ``scatter(z[src] * weight, dst, reduce="sum")`` (one weight or one per head) with
  CSR products forward and backward and no ``nnz x C`` message tensor.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, TypeVar

import torch
import torch.nn.functional as F
from torch import Tensor

from .checks import check_choice

__all__ = [
    "coo_tensor", "csr_tensor", "bag", "inv", "scatter", "softmax", "SparseOperator", "BagOperator", "Propagation",
    "Incidence", "ATTENTION_SCOPES", "GraphGroups", "direction", "aggregation", "Pattern", "weighted_aggregation",
]

T = TypeVar("T")


# ------------------------------------------------------------------------------------- sparse operators

def coo_tensor(index: Tensor, values: Tensor, shape: tuple[int, int], is_coalesced: bool = False) -> Tensor:
    """``torch.sparse_coo_tensor`` without the invariant checks."""
    return torch.sparse_coo_tensor(index, values, shape, is_coalesced=is_coalesced, check_invariants=False)


def csr_tensor(crow: Tensor, col: Tensor, values: Tensor, shape: tuple[int, int]) -> Tensor:
    """``torch.sparse_csr_tensor`` without the invariant checks or the beta warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
        return torch.sparse_csr_tensor(crow, col, values, shape, check_invariants=False)


class _SpMM(torch.autograd.Function):
    """``A @ Z`` for a constant sparse ``A``; the backward multiplies by a stored ``A^T`` (no transpose)."""

    @staticmethod
    def forward(ctx: Any, z: Tensor, op: "SparseOperator") -> Tensor:  # type: ignore[override]
        ctx.op = op
        return op.matrix @ z

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:  # type: ignore[override]
        return ctx.op.transposed @ grad.contiguous(), None


class SparseOperator:
    """A constant sparse matrix ``A`` (CSR) together with ``A^T`` (CSR), for ``A @ Z`` with gradients in ``Z``.

    Duplicate ``(row, col)`` entries are summed. :meth:`with_values` returns the same pattern with new values
    (used to apply dropout to sparse input features without rebuilding the transpose).

    >>> op = SparseOperator(torch.tensor([0, 1, 1]), torch.tensor([1, 0, 1]), torch.tensor([2., 3., 4.]), (2, 2))
    >>> (op @ torch.eye(2)).tolist()
    [[0.0, 2.0], [3.0, 4.0]]
    """

    @classmethod
    def from_sparse(cls, t: Tensor) -> "SparseOperator":
        """The operator of a torch sparse matrix ``t`` (any sparse layout)."""
        op = object.__new__(cls)
        op._store(t.to_sparse_coo().coalesce())  # one already coalesced (a sparse product's) is not sorted again
        return op

    def __init__(self, row: Tensor, col: Tensor, value: Tensor, shape: tuple[int, int]) -> None:
        self._store(coo_tensor(torch.stack([row, col]), value, (int(shape[0]), int(shape[1]))).coalesce())

    def _store(self, coo: Tensor) -> None:
        (n, m), index, vals = coo.shape, coo.indices(), coo.values()
        self.shape = (n, m)
        # Row-major order of A^T is column-major order of A.
        self._perm = torch.argsort(index[1] * max(n, 1) + index[0])
        t_index = index.flip(0)[:, self._perm]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
            self.matrix = coo.to_sparse_csr()
            self.transposed = coo_tensor(t_index, vals[self._perm], (m, n), is_coalesced=True).to_sparse_csr()

    @property
    def values(self) -> Tensor:
        return self.matrix.values()

    def row_indices(self) -> Tensor:
        """The row of every stored entry, in the row-major order of :attr:`values`; computed once per pattern
        (operators made by :meth:`with_values` after the first call share it)."""
        if getattr(self, "_row_index", None) is None:
            crow = self.matrix.crow_indices()
            self._row_index = torch.repeat_interleave(torch.arange(self.shape[0], device=crow.device), crow.diff())
        return self._row_index

    @property
    def nnz(self) -> int:
        return int(self.matrix.values().numel())

    def with_values(self, values: Tensor) -> "SparseOperator":
        """The same sparsity pattern with ``values`` (in the row-major order of :attr:`values`)."""
        new = object.__new__(SparseOperator)
        new.shape, new._perm, new._row_index = self.shape, self._perm, getattr(self, "_row_index", None)
        new.matrix = csr_tensor(self.matrix.crow_indices(), self.matrix.col_indices(), values, self.shape)
        new.transposed = csr_tensor(self.transposed.crow_indices(), self.transposed.col_indices(),
                              values[self._perm], (self.shape[1], self.shape[0]))
        return new

    def to_dense(self) -> Tensor:
        return self.matrix.to_dense()

    def __matmul__(self, z: Tensor) -> Tensor:
        if z.dim() != 2:
            raise ValueError(f"SparseOperator multiplies 2-D tensors, got shape {tuple(z.shape)}")
        if torch.is_grad_enabled() and z.requires_grad:
            return _SpMM.apply(z, self)
        return self.matrix @ z


class BagOperator(SparseOperator):
    """A constant sparse matrix whose products ``A @ W`` (and their gradient ``A^T G``) run as
    ``embedding_bag`` sums of the rows of ``W`` weighted by ``A``'s values: about 2.5x faster than the CSR
    product on CPU for a few hundred thousand nonzeros (measured on T-HyperGNN's Cora input, 1.2e5 nonzeros x
    128 columns: 2.7 ms against 7.1 ms). The same values up to float rounding. :meth:`wrap` reuses the CSR
    arrays of a :class:`SparseOperator` (T-HyperGNN's first-layer input, TF-HNN's and EHNN's sparse features
    and TF-HNN's propagation use it)."""

    @classmethod
    def wrap(cls, op: SparseOperator) -> "BagOperator":
        new = object.__new__(cls)
        new.__dict__.update(op.__dict__)
        return new

    def with_values(self, values: Tensor) -> "BagOperator":
        return BagOperator.wrap(super().with_values(values))

    def __matmul__(self, w: Tensor) -> Tensor:
        if w.dim() != 2:
            raise ValueError(f"BagOperator multiplies 2-D tensors, got shape {tuple(w.shape)}")
        return _BagProduct.apply(w, self) if torch.is_grad_enabled() and w.requires_grad else bag(self.matrix, w)


def bag(csr: Tensor, w: Tensor) -> Tensor:
    """``csr @ w`` by ``embedding_bag``; ``w`` made contiguous first (a transposed ``Linear`` weight is 10x slower)."""
    return F.embedding_bag(csr.col_indices(), w.contiguous(), csr.crow_indices()[:-1], mode="sum",
                           per_sample_weights=csr.values())


class _BagProduct(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w: Tensor, op: BagOperator) -> Tensor:  # type: ignore[override]
        ctx.op = op
        return bag(op.matrix, w)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None]:  # type: ignore[override]
        return bag(ctx.op.transposed, grad.contiguous()), None


class Propagation:
    """``diag(left) H diag(mid) H^T diag(right) (+ diag(diagonal))`` as one ``N x N`` operator.

    Built as a single CSR matrix when that is small (``sum_e |e|^2 <= 16 nnz(H)``, i.e. hyperedges of about 16
    members or fewer on average), else kept as the two factors ``H`` and ``H^T`` (memory ``O(nnz)`` even for
    hyperedges with thousands of members). One product is several times faster than two on CPU (measured on
    Cora: 1.8 ms against 16 ms for forward plus backward at width 128), mostly because the two-factor form
    allocates and fills an ``|E| x C`` intermediate twice per step.
    """

    def __init__(self, inc: "Incidence", left: Tensor, mid: Tensor, right: Tensor,
                 diagonal: Tensor | None = None) -> None:
        v, e, n, m = inc.node, inc.edge, inc.num_nodes, inc.num_edges
        self.shape = (n, n)
        if float((inc.deg_e ** 2).sum()) <= 16 * max(inc.nnz, 1):
            hl = coo_tensor(torch.stack([v, e]), left[v] * mid[e], (n, m))
            hr = coo_tensor(torch.stack([e, v]), right[v], (m, n))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
                prod = torch.sparse.mm(hl.coalesce(), hr.coalesce()).coalesce()
            row, col, val = prod.indices()[0], prod.indices()[1], prod.values()
            if diagonal is not None:
                ids = torch.arange(n, device=v.device)
                row, col, val = torch.cat([row, ids]), torch.cat([col, ids]), torch.cat([val, diagonal])
            self.factors = (SparseOperator(row, col, val, (n, n)),)
            self.diagonal = None
        else:
            self.factors = (SparseOperator(v, e, left[v] * mid[e], (n, m)),
                            SparseOperator(e, v, right[v], (m, n)))
            self.diagonal = None if diagonal is None else diagonal.unsqueeze(-1)

    def to_dense(self) -> Tensor:
        out = self.factors[0].to_dense()
        for f in self.factors[1:]:
            out = out @ f.to_dense()
        if self.diagonal is not None:
            out = out + torch.diag(self.diagonal.squeeze(-1))
        return out

    def __matmul__(self, z: Tensor) -> Tensor:
        out = z
        for f in reversed(self.factors):
            out = f @ out
        if self.diagonal is not None:
            out = out + self.diagonal * z
        return out


# ---------------------------------------------------------------------------------------------- structure

def inv(t: Tensor, power: float = 1.0) -> Tensor:
    """``t ** -power`` with ``inf`` (zero degree) replaced by 0, as every reference implementation does."""
    out = t.pow(-power)
    return torch.where(torch.isinf(out), torch.zeros_like(out), out)


SCATTER_REDUCES = ("sum", "add", "mean", "min", "max")


def scatter(src: Tensor, index: Tensor, dim: int = 0, dim_size: int | None = None, reduce: str = "sum") -> Tensor:
    """Reduce the slices of ``src`` along ``dim`` into ``dim_size`` slots by ``index`` (1-D), as
    ``torch_geometric.utils.scatter`` does without ``torch_scatter`` (the same torch operations in the same order,
    so the same numbers; tests/models/nn/test_shared_ops.py compares them): ``sum``/``add`` and ``mean`` (empty slots
    0, the count clamped at 1), ``min``/``max`` (empty slots 0)."""
    if reduce not in SCATTER_REDUCES:
        raise ValueError(f"unknown reduce {reduce!r}; choose one of {', '.join(SCATTER_REDUCES)}")
    if index.dim() != 1:
        raise ValueError(f"index must be one-dimensional, got {index.dim()} dimensions")
    dim = src.dim() + dim if dim < 0 else dim
    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() > 0 else 0
    size = src.size()[:dim] + (dim_size,) + src.size()[dim + 1:]
    spread = _broadcast(index, src, dim)
    if reduce in ("min", "max"):
        return src.new_zeros(size).scatter_reduce_(dim, spread, src, reduce=f"a{reduce}", include_self=False)
    out = src.new_zeros(size).scatter_add_(dim, spread, src)
    if reduce == "mean":
        count = src.new_zeros(dim_size).scatter_add_(0, index, src.new_ones(src.size(dim))).clamp(min=1)
        out = out / _broadcast(count, out, dim)
    return out


def _broadcast(t: Tensor, ref: Tensor, dim: int) -> Tensor:
    return t.view((1,) * dim + (-1,) + (1,) * (ref.dim() - dim - 1)).expand_as(ref)


def softmax(src: Tensor, index: Tensor, num_nodes: int | None = None, dim: int = 0) -> Tensor:
    """The softmax of ``src`` over the entries sharing an ``index`` (``torch_geometric.utils.softmax`` with an
    index: the group maximum subtracted without gradient, 1e-16 added to each group's sum)."""
    n = int(index.max()) + 1 if num_nodes is None and index.numel() > 0 else (num_nodes or 0)
    dim = src.dim() + dim if dim < 0 else dim
    src_max = scatter(src.detach(), index, dim, dim_size=n, reduce="max")
    out = (src - src_max.index_select(dim, index)).exp()
    out_sum = scatter(out, index, dim, dim_size=n, reduce="sum") + 1e-16
    return out / out_sum.index_select(dim, index)


class Incidence:
    """A validated incidence structure (row 0 nodes, row 1 hyperedges) with a memo of derived operators.

    Attributes: ``node``, ``edge`` (``LongTensor [nnz]``), ``num_nodes``, ``num_edges``, ``deg_v``, ``deg_e``
    (float degree vectors: hyperedges per node, nodes per hyperedge; duplicate incidences count twice).
    """

    def __init__(self, hyperedge_index: Tensor, num_nodes: int, num_edges: int, dtype: torch.dtype) -> None:
        self.node, self.edge = hyperedge_index[0], hyperedge_index[1]
        self.num_nodes, self.num_edges, self.dtype = num_nodes, num_edges, dtype
        self.nnz = int(self.node.numel())
        self.deg_v = torch.bincount(self.node, minlength=num_nodes).to(dtype)
        self.deg_e = torch.bincount(self.edge, minlength=num_edges).to(dtype)
        self._memo: dict[Any, Any] = {}

    def memo(self, key: Any, build: Callable[[], T]) -> T:
        """Compute ``build()`` once per structure and key (without autograd, outside inference mode)."""
        if key not in self._memo:
            with torch.inference_mode(False), torch.no_grad():
                self._memo[key] = build()
        return self._memo[key]

    def propagation(self, left: Tensor, mid: Tensor, right: Tensor,
                    diagonal: Tensor | None = None) -> Propagation:
        return Propagation(self, left, mid, right, diagonal)

    def operator(self, row: Tensor, col: Tensor, value: Tensor, shape: tuple[int, int]) -> SparseOperator:
        return SparseOperator(row, col, value, shape)

    def clique_expansion(self) -> tuple[Tensor, Tensor, Tensor]:
        """Weighted clique expansion without self-loops: ``(row, col, weight)``, both directions.

        ``weight[u, v]`` is the number of hyperedges containing both ``u`` and ``v`` (u != v): the off-diagonal
        part of ``H H^T``. Memory grows with ``sum_e |e|^2`` (why CEGCN/CEGAT run out of memory on Yelp).
        """
        def build() -> tuple[Tensor, Tensor, Tensor]:
            ones = torch.ones(self.nnz, dtype=self.dtype, device=self.node.device)
            h = coo_tensor(torch.stack([self.node, self.edge]), ones, (self.num_nodes, self.num_edges)).coalesce()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                a = torch.sparse.mm(h, h.t().coalesce()).coalesce()
            row, col = a.indices()
            keep = row != col
            return row[keep], col[keep], a.values()[keep]
        return self.memo("clique_expansion", build)


ATTENTION_SCOPES = ("graph", "batch")  # attention within each hypergraph of a batch, or over the whole batch


class GraphGroups:
    r"""The tokens of a block-diagonal batch grouped for computations that stay within one hypergraph (the
    global attention of DPHGNN and HyperGT in hypergraph classification): graphs with the same number of tokens
    :math:`n` form one block of :math:`g` graphs, so a block's work is one batched call over :math:`[g, n]`
    (no padding, no mask) and attention costs :math:`\sum_g n_g^2`, not :math:`N^2`.

    ``graph[t]`` is the graph of token ``t`` (any order, any non-negative ids)."""

    def __init__(self, graph: Tensor) -> None:
        self.graph = graph
        order = torch.argsort(graph, stable=True)  # tokens graph by graph, in their listed order
        size = torch.bincount(graph)[graph[order]]  # the token count of each token's graph
        by_size = torch.argsort(size, stable=True)
        self.perm = order[by_size]  # tokens by graph size, then graph, then listed order
        sizes, counts = torch.unique_consecutive(size[by_size], return_counts=True)
        self.blocks = [(int(c) // int(n), int(n)) for n, c in zip(sizes, counts)]  # (graphs, tokens each)
        self.inverse = torch.empty_like(order)
        self.inverse[self.perm] = torch.arange(order.numel(), device=order.device)

    def apply(self, fn: Callable[..., Tensor], *tensors: Tensor) -> Tensor:
        """``fn(g, n, *blocks)`` on each block of the ``[B, T, ...]`` inputs (tokens on dim 1; each block
        ``[B, g n, ...]``, graph by graph), its ``[B, g n, ...]`` outputs put back in token order. One gather and
        one split per input: their backward is one scatter and one concatenation, not a zero-filled gradient of
        all tokens per block."""
        split = [g * n for g, n in self.blocks]
        parts = [t[:, self.perm].split(split, dim=1) for t in tensors]
        out = [fn(g, n, *ts) for (g, n), *ts in zip(self.blocks, *parts)]
        return torch.cat(out, dim=1)[:, self.inverse]


# -------------------------------------------------------------------------------- incidence aggregations

def direction(inc: Incidence, to: str) -> tuple[Tensor, Tensor, int, int, Tensor]:
    """``(dst, src, num_dst, num_src, deg_dst)`` of the incidences pooled into hyperedges or into nodes."""
    if to == "edge":
        return inc.edge, inc.node, inc.num_edges, inc.num_nodes, inc.deg_e
    if to == "node":
        return inc.node, inc.edge, inc.num_nodes, inc.num_edges, inc.deg_v
    raise ValueError(f"to must be 'edge' or 'node', got {to!r}")


def aggregation(inc: Incidence, to: str, reduce: str) -> SparseOperator:
    r"""The cached constant operator of ``scatter(x[src], dst, reduce=reduce)`` over the incidences.

    ``to="edge"`` pools the members of each hyperedge, ``to="node"`` the hyperedges of each node; ``reduce`` is
    ``"sum"`` or ``"mean"`` (a duplicate incidence counts twice and an empty target gets 0, as with ``scatter``).
    One CSR product instead of an ``nnz x C`` gather followed by a scatter.
    """
    check_choice("reduce", reduce, ("sum", "mean"))

    def build() -> SparseOperator:
        dst, src, n_dst, n_src, deg = direction(inc, to)
        scale = inv(deg) if reduce == "mean" else torch.ones_like(deg)
        return SparseOperator(dst, src, scale[dst], (n_dst, n_src))
    return inc.memo(("aggregation", to, reduce), build)


def _crow(row: Tensor, num_rows: int) -> Tensor:
    return torch.cat([row.new_zeros(1), torch.bincount(row, minlength=num_rows).cumsum(0)])


class Pattern:
    """The distinct ``(dst, src)`` pairs of the incidences as a CSR pattern and its transpose; ``inv[p]`` is the
    entry of incidence ``p`` (duplicate incidences share one entry, whose weight is their sum)."""

    def __init__(self, dst: Tensor, src: Tensor, shape: tuple[int, int]) -> None:
        n_dst, n_src = shape
        key = dst * max(n_src, 1) + src
        entries, self.inv = torch.unique(key, sorted=True, return_inverse=True)
        row, col = entries // max(n_src, 1), entries % max(n_src, 1)
        self.shape, self.num_entries = shape, int(entries.numel())
        self.crow, self.col = _crow(row, n_dst), col
        self.perm_t = torch.argsort(col * max(n_dst, 1) + row)  # entries in the transpose's row-major order
        self.crow_t, self.col_t = _crow(col, n_src), row[self.perm_t]
        self._ones: dict[torch.dtype, Tensor] = {}

    def matrix(self, values: Tensor) -> Tensor:
        return csr_tensor(self.crow, self.col, values, self.shape)

    def ones(self, dtype: torch.dtype) -> Tensor:
        """The pattern with unit values (the mask of ``torch.sparse.sampled_addmm``)."""
        if dtype not in self._ones:
            self._ones[dtype] = self.matrix(torch.ones(self.num_entries, dtype=dtype, device=self.col.device))
        return self._ones[dtype]

    def transposed(self, values: Tensor) -> Tensor:
        return csr_tensor(self.crow_t, self.col_t, values[self.perm_t], (self.shape[1], self.shape[0]))


def _stack(per_head: list[Tensor]) -> Tensor:
    return per_head[0].unsqueeze(1) if len(per_head) == 1 else torch.stack(per_head, dim=1)


class _WeightedAggregate(torch.autograd.Function):
    """``out[:, k] = A_k @ (B @ x[:, k])`` with ``A_k`` the pattern carrying the weights of head ``k`` and ``B`` an
    optional constant :class:`SparseOperator` (identity if ``None``), head by head; ``B @ x`` is recomputed in the
    backward instead of kept."""

    @staticmethod
    def forward(ctx: Any, weight: Tensor, x: Tensor, pattern: Pattern,  # type: ignore[override]
                through: SparseOperator | None) -> Tensor:
        values = weight.new_zeros(pattern.num_entries, weight.size(1)).index_add_(0, pattern.inv, weight)
        values = values.t().contiguous()  # [heads, entries]
        ctx.save_for_backward(values, x)
        ctx.pattern, ctx.through = pattern, through
        return _stack([pattern.matrix(values[k]) @ _source(x, k, through) for k in range(x.size(1))])

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None, None, None]:  # type: ignore[override]
        values, x = ctx.saved_tensors
        pattern, through = ctx.pattern, ctx.through
        grad_w, grad_x, per_entry = None, [], []
        for k in range(x.size(1)):
            g = grad[:, k].contiguous()
            if ctx.needs_input_grad[1]:
                gk = pattern.transposed(values[k]) @ g
                grad_x.append(gk if through is None else through.transposed @ gk)
            if ctx.needs_input_grad[0]:
                per_entry.append(torch.sparse.sampled_addmm(pattern.ones(x.dtype), g, _source(x, k, through).t(),
                                                            beta=0.0).values())
        if per_entry:
            grad_w = _stack(per_entry)[pattern.inv]
        return grad_w, _stack(grad_x) if grad_x else None, None, None


def _source(x: Tensor, k: int, through: SparseOperator | None) -> Tensor:
    xk = x[:, k].contiguous()
    return xk if through is None else through.matrix @ xk


def weighted_aggregation(inc: Incidence, to: str, weight: Tensor, x: Tensor,
                         through: SparseOperator | None = None) -> Tensor:
    r"""``out[t] = sum of weight[p] * z[src_p] over the incidences p with dst_p = t`` (``to`` as in
    :func:`aggregation`) with ``z = x``, or ``z = through @ x`` for a constant operator ``through`` (e.g. the
    pooling into hyperedges before an attention over them): ``scatter(z[src] * weight, dst, reduce="sum")``
    without the ``nnz x C`` message tensor, and with ``through``, without keeping ``z`` either.

    ``weight`` is ``[nnz]`` with ``x [S, C]``, or ``[nnz, H]`` (one weight per head) with ``x [S, H, C]``. The
    products are CSR products forward and backward (the pattern is cached per structure), head by head; the
    weights' gradient, :math:`\partial L / \partial w_p = \mathbf{g}_{dst_p}^\top \mathbf{z}_{src_p}`, is one
    ``torch.sparse.sampled_addmm`` per head. Memory beyond the inputs and the output: :math:`O(\mathrm{nnz}
    \cdot H)` and one head's ``z``.
    """
    def build() -> Pattern:
        dst, src, n_dst, n_src, _ = direction(inc, to)
        return Pattern(dst, src, (n_dst, n_src))
    return weighted_sum(inc.memo(("pattern", to), build), weight, x, through)


def weighted_sum(pattern: Pattern, weight: Tensor, x: Tensor, through: SparseOperator | None = None) -> Tensor:
    """``out[t] = sum of weight[p] * z[src_p] over the pairs p of ``pattern`` with dst_p = t`` (``weight`` in the
    order of the pairs ``Pattern(dst, src, shape)`` was built from; shapes and memory as in
    :func:`weighted_aggregation`, which is this over the incidences)."""
    flat = weight.dim() == 1
    out = _WeightedAggregate.apply(weight.unsqueeze(-1) if flat else weight, x.unsqueeze(1) if flat else x, pattern,
                                   through)
    return out.squeeze(1) if flat else out
