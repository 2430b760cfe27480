"""Shared machinery of the hypergraph neural network zoo: structure cache, sparse operators, dropout, checks.

Every model of :mod:`hypergvl.models.nn` has the same constructor head and the same forward::

    Model(in_channels, hidden_channels, out_channels, num_layers=2, dropout=0.5, *, <typed keywords>)
    model(x, hyperedge_index, num_hyperedges=None) -> [num_nodes, out_channels]

``hyperedge_index`` is a ``LongTensor [2, nnz]`` (row 0 node ids, row 1 hyperedge ids: PyG ``HypergraphConv``
convention) and ``x`` is a dense ``[N, F]`` tensor or a torch sparse tensor (COO, CSR, ...).

Speed (docs/design.md "Speed facts"): everything that depends only on the structure (degrees, normalised
propagation matrices, clique expansions) is computed once per ``hyperedge_index`` tensor and kept in a small
per-model cache keyed on that tensor's identity (a weak reference, so a freed tensor whose memory is reused
can never hit), its ``_version`` (in-place edits miss), the node and hyperedge counts and the dtype.
Propagation matrices are CSR tensors multiplied through :class:`_SpMM`, whose backward uses a transposed copy
built once (``torch``'s own CSR backward transposes on every call and costs more than the whole forward).
Sparse bag-of-words features stay sparse: :func:`prepare_input` turns them into a :class:`SparseOperator`
that the first :class:`Linear` multiplies. :func:`dropout` draws its mask from 16-bit random integers,
four per 64-bit draw, several times cheaper on CPU than ``torch.nn.functional.dropout``'s Bernoulli sampler.
"""
from __future__ import annotations

import math
import operator
import warnings
import weakref
from typing import Any, Callable, Iterable, Sequence, TypeVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = [
    "HypergraphModel", "Incidence", "SparseOperator", "Linear", "prepare_input", "dense", "dropout",
    "glorot_", "check_int", "check_probability", "check_choice", "check_bool", "check_float", "check_common",
    "aggregation", "weighted_aggregation", "mlp_tail", "live_rows_linear", "relu_dropout", "live_mlp",
]

T = TypeVar("T")


# ----------------------------------------------------------------------------------------------- checks

def check_int(name: str, value: Any, minimum: int = 1) -> int:
    """Return ``value`` if it is an ``int`` (not a bool) >= ``minimum``, else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def check_float(name: str, value: Any, low: float = -math.inf, high: float = math.inf,
                high_inclusive: bool = True) -> float:
    """Return ``float(value)`` if it is a real number in ``[low, high]`` (or ``[low, high)``), else raise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    if value < low or value > high or (value == high and not high_inclusive):
        bracket = "]" if high_inclusive else ")"
        raise ValueError(f"{name} must lie in [{low}, {high}{bracket}, got {value!r}")
    return float(value)


def check_probability(name: str, value: Any) -> float:
    """A dropout probability: a real number in ``[0, 1)``."""
    return check_float(name, value, 0.0, 1.0, high_inclusive=False)


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be a bool, got {value!r}")
    return value


def check_common(in_channels: Any, hidden_channels: Any, out_channels: Any, num_layers: Any,
                 dropout: Any, min_layers: int = 1) -> None:
    """Validate the five arguments every model shares."""
    check_int("in_channels", in_channels)
    check_int("hidden_channels", hidden_channels)
    check_int("out_channels", out_channels)
    check_int("num_layers", num_layers, min_layers)
    check_probability("dropout", dropout)


def glorot_(tensor: Tensor) -> Tensor:
    """Glorot/Xavier uniform init over the last two dimensions (PyG ``inits.glorot``)."""
    bound = math.sqrt(6.0 / (tensor.size(-2) + tensor.size(-1)))
    with torch.no_grad():
        return tensor.uniform_(-bound, bound)


# ------------------------------------------------------------------------------------- sparse operators

def _coo(index: Tensor, values: Tensor, shape: tuple[int, int], is_coalesced: bool = False) -> Tensor:
    return torch.sparse_coo_tensor(index, values, shape, is_coalesced=is_coalesced, check_invariants=False)


def _csr(crow: Tensor, col: Tensor, values: Tensor, shape: tuple[int, int]) -> Tensor:
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
        coo = t.to_sparse_coo().coalesce()
        return cls(coo.indices()[0], coo.indices()[1], coo.values(), tuple(t.shape))

    def __init__(self, row: Tensor, col: Tensor, value: Tensor, shape: tuple[int, int]) -> None:
        n, m = int(shape[0]), int(shape[1])
        coo = _coo(torch.stack([row, col]), value, (n, m)).coalesce()
        index, vals = coo.indices(), coo.values()
        self.shape = (n, m)
        # Row-major order of A^T is column-major order of A.
        self._perm = torch.argsort(index[1] * max(n, 1) + index[0])
        t_index = index.flip(0)[:, self._perm]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
            self.matrix = coo.to_sparse_csr()
            self.transposed = _coo(t_index, vals[self._perm], (m, n), is_coalesced=True).to_sparse_csr()

    @property
    def values(self) -> Tensor:
        return self.matrix.values()

    @property
    def nnz(self) -> int:
        return int(self.matrix.values().numel())

    def with_values(self, values: Tensor) -> "SparseOperator":
        """The same sparsity pattern with ``values`` (in the row-major order of :attr:`values`)."""
        new = object.__new__(SparseOperator)
        new.shape, new._perm = self.shape, self._perm
        new.matrix = _csr(self.matrix.crow_indices(), self.matrix.col_indices(), values, self.shape)
        new.transposed = _csr(self.transposed.crow_indices(), self.transposed.col_indices(),
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
        return _BagProduct.apply(w, self) if torch.is_grad_enabled() and w.requires_grad else _bag(self.matrix, w)


def _bag(csr: Tensor, w: Tensor) -> Tensor:
    """``csr @ w`` by ``embedding_bag``; ``w`` made contiguous first (a transposed ``Linear`` weight is 10x slower)."""
    return F.embedding_bag(csr.col_indices(), w.contiguous(), csr.crow_indices()[:-1], mode="sum",
                           per_sample_weights=csr.values())


class _BagProduct(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w: Tensor, op: BagOperator) -> Tensor:  # type: ignore[override]
        ctx.op = op
        return _bag(op.matrix, w)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None]:  # type: ignore[override]
        return _bag(ctx.op.transposed, grad.contiguous()), None


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
            hl = _coo(torch.stack([v, e]), left[v] * mid[e], (n, m))
            hr = _coo(torch.stack([e, v]), right[v], (m, n))
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

def _inv(t: Tensor, power: float = 1.0) -> Tensor:
    """``t ** -power`` with ``inf`` (zero degree) replaced by 0, as every reference implementation does."""
    out = t.pow(-power)
    return torch.where(torch.isinf(out), torch.zeros_like(out), out)


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
            h = _coo(torch.stack([self.node, self.edge]), ones, (self.num_nodes, self.num_edges)).coalesce()
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


def _check_index_shape(hyperedge_index: Any) -> None:
    if not isinstance(hyperedge_index, Tensor) or hyperedge_index.dim() != 2 or hyperedge_index.size(0) != 2:
        shape = tuple(hyperedge_index.shape) if isinstance(hyperedge_index, Tensor) else type(hyperedge_index)
        raise ValueError(f"hyperedge_index must be a LongTensor of shape [2, nnz], got {shape}")
    if hyperedge_index.dtype != torch.long:
        raise ValueError(f"hyperedge_index must have dtype torch.long, got {hyperedge_index.dtype}")


def _check_index_range(hyperedge_index: Tensor, num_nodes: int, num_edges: int) -> None:
    if hyperedge_index.numel() == 0:
        return
    lo, hi = hyperedge_index.amin(dim=1).tolist(), hyperedge_index.amax(dim=1).tolist()
    if lo[0] < 0 or hi[0] >= num_nodes:
        raise ValueError(f"hyperedge_index node ids must lie in [0, {num_nodes}) (x has {num_nodes} rows), "
                         f"got range [{lo[0]}, {hi[0]}]")
    if lo[1] < 0 or hi[1] >= num_edges:
        raise ValueError(f"hyperedge_index hyperedge ids must lie in [0, {num_edges}), got range "
                         f"[{lo[1]}, {hi[1]}]")


class StructureCache:
    """A tiny LRU cache keyed on the identity and version of tensors (never on their memory address).

    Not part of a model's state: copying or pickling a model gives an empty cache.
    """

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._entries: list[tuple[tuple[weakref.ref, ...], tuple[int, ...], tuple, Any]] = []

    def get(self, tensors: Iterable[Tensor], extra: tuple, build: Callable[[], T]) -> T:
        """The cached value for ``tensors`` (by identity and version) and ``extra``, else ``build()``.

        ``build`` runs without autograd and outside inference mode, so a value first built during an
        evaluation under ``torch.inference_mode()`` can still be used by a later training step.
        """
        tensors = tuple(tensors)
        versions = tuple(-1 if t.is_inference() else t._version for t in tensors)
        self._entries = [entry for entry in self._entries if all(r() is not None for r in entry[0])]
        for i, (refs, vers, ext, value) in enumerate(self._entries):
            if vers == versions and ext == extra and all(r() is t for r, t in zip(refs, tensors)):
                if i:
                    self._entries.insert(0, self._entries.pop(i))
                return value
        with torch.inference_mode(False), torch.no_grad():
            value = build()
        self._entries.insert(0, (tuple(weakref.ref(t) for t in tensors), versions, extra, value))
        del self._entries[self.size:]
        return value

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __getstate__(self) -> dict:
        return {"size": self.size}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["size"])  # type: ignore[misc]

    def __deepcopy__(self, memo: dict) -> "StructureCache":
        return StructureCache(self.size)


# ---------------------------------------------------------------------------------------- input features

def prepare_input(cache: StructureCache, x: Tensor) -> Tensor | SparseOperator:
    """Dense ``x`` is returned as is; a sparse ``x`` (any layout) becomes a cached :class:`SparseOperator`.

    A sparse ``x`` that requires grad is densified instead (the operator is constant by construction).
    """
    if not isinstance(x, Tensor):
        raise ValueError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.layout == torch.strided:
        if x.dim() != 2:
            raise ValueError(f"x must be 2-D [num_nodes, in_channels], got shape {tuple(x.shape)}")
        return x
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D [num_nodes, in_channels], got shape {tuple(x.shape)}")
    if x.requires_grad:
        return x.to_dense()

    return cache.get((x,), (x.layout, x.dtype, x.device), lambda: SparseOperator.from_sparse(x))


def dense(x: Tensor | SparseOperator) -> Tensor:
    return x.to_dense() if isinstance(x, SparseOperator) else x


def _mask_draws(numel: int, p: float, device: torch.device) -> tuple[Tensor, int]:
    """``numel`` random 16-bit integers (four per 64-bit draw of the global generator) and the threshold at or
    above which an entry is kept, so that ``P(keep) = 1 - p`` (to 1/65536)."""
    raw = torch.randint(-2 ** 63, 2 ** 63 - 1, ((numel + 3) // 4,), dtype=torch.int64, device=device)
    return raw.view(torch.int16)[:numel], -32768 + int(round(p * 65536))


def _keep_mask(numel: int, p: float, device: torch.device) -> Tensor:
    """Bool mask with ``P(True) = 1 - p`` (to 1/65536), from :func:`_mask_draws`."""
    draws, threshold = _mask_draws(numel, p, device)
    return draws >= threshold


def _scaled_keep_mask(numel: int, p: float, device: torch.device, dtype: torch.dtype) -> Tensor:
    """``_keep_mask(numel, p, device).to(dtype) * (1 / (1 - p))`` bit for bit (the same random integers and
    comparisons), compared as floats: int16 -> float is exact, and a float compare plus a float multiply are about
    4x cheaper on CPU than the int16 compare and the bool -> float conversion (measured: 0.11 ms against 0.41 ms
    for 4,287 x 64 entries)."""
    draws, threshold = _mask_draws(numel, p, device)
    exact = dtype if dtype in (torch.float32, torch.float64) else torch.float32  # every int16 exactly
    return draws.to(exact).ge_(threshold).mul_(1.0 / (1.0 - p)).to(dtype)


def dropout(x: Tensor | SparseOperator, p: float, training: bool) -> Tensor | SparseOperator:
    """Inverted dropout (like ``F.dropout``) with a cheap mask (:func:`_scaled_keep_mask`, the entries kept where
    :func:`_keep_mask` is true); on sparse input it drops stored entries.

    Uses the global torch generator, so ``torch.manual_seed`` makes it reproducible.
    """
    if not training or p == 0.0:
        return x
    if isinstance(x, SparseOperator):
        vals = x.values
        return x.with_values(vals * _scaled_keep_mask(vals.numel(), p, vals.device, vals.dtype))
    return x * _scaled_keep_mask(x.numel(), p, x.device, x.dtype).view_as(x)


class Linear(nn.Linear):
    """``torch.nn.Linear`` that also accepts a :class:`SparseOperator` input (sparse features stay sparse)."""

    def forward(self, x: Tensor | SparseOperator) -> Tensor:  # type: ignore[override]
        if isinstance(x, SparseOperator):
            out = x @ self.weight.t()
            return out if self.bias is None else out + self.bias
        return F.linear(x, self.weight, self.bias)


# -------------------------------------------------------------------------------- incidence aggregations

def _direction(inc: Incidence, to: str) -> tuple[Tensor, Tensor, int, int, Tensor]:
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
        dst, src, n_dst, n_src, deg = _direction(inc, to)
        scale = _inv(deg) if reduce == "mean" else torch.ones_like(deg)
        return SparseOperator(dst, src, scale[dst], (n_dst, n_src))
    return inc.memo(("aggregation", to, reduce), build)


def _crow(row: Tensor, num_rows: int) -> Tensor:
    return torch.cat([row.new_zeros(1), torch.bincount(row, minlength=num_rows).cumsum(0)])


class _Pattern:
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
        return _csr(self.crow, self.col, values, self.shape)

    def ones(self, dtype: torch.dtype) -> Tensor:
        """The pattern with unit values (the mask of ``torch.sparse.sampled_addmm``)."""
        if dtype not in self._ones:
            self._ones[dtype] = self.matrix(torch.ones(self.num_entries, dtype=dtype, device=self.col.device))
        return self._ones[dtype]

    def transposed(self, values: Tensor) -> Tensor:
        return _csr(self.crow_t, self.col_t, values[self.perm_t], (self.shape[1], self.shape[0]))


def _stack(per_head: list[Tensor]) -> Tensor:
    return per_head[0].unsqueeze(1) if len(per_head) == 1 else torch.stack(per_head, dim=1)


class _WeightedAggregate(torch.autograd.Function):
    """``out[:, k] = A_k @ (B @ x[:, k])`` with ``A_k`` the pattern carrying the weights of head ``k`` and ``B`` an
    optional constant :class:`SparseOperator` (identity if ``None``), head by head; ``B @ x`` is recomputed in the
    backward instead of kept."""

    @staticmethod
    def forward(ctx: Any, weight: Tensor, x: Tensor, pattern: _Pattern,  # type: ignore[override]
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
    def build() -> _Pattern:
        dst, src, n_dst, n_src, _ = _direction(inc, to)
        return _Pattern(dst, src, (n_dst, n_src))
    pattern = inc.memo(("pattern", to), build)
    flat = weight.dim() == 1
    out = _WeightedAggregate.apply(weight.unsqueeze(-1) if flat else weight, x.unsqueeze(1) if flat else x, pattern,
                                   through)
    return out.squeeze(1) if flat else out


def mlp_tail(mlp: nn.Module, h: Tensor, live: bool = False) -> Tensor:
    """The layers of a :class:`hypergvl.models.nn.mlp.MLP` after its first linear map: ``mlp(x)`` equals
    ``mlp_tail(mlp, mlp.lins[0](mlp.norms[0](x)))``, for a model that computes that first map in a cheaper,
    equal form (an input norm folded into the weights, a map over a concatenation split into its parts).
    ``live``: the maps through :func:`live_rows_linear` (the backward skips the rows with a zero gradient)."""
    for lin, norm in zip(mlp.lins[1:], mlp.norms[1:]):
        z = dropout(norm(F.relu(h)), mlp.dropout, mlp.training)
        h = live_rows_linear(z, lin.weight, lin.bias) if live else lin(z)
    return h


# ------------------------------------------------------------------------------------------- base class

class HypergraphModel(nn.Module):
    """Base class of every registered model: holds the structure cache and the shared forward prologue."""

    paper: str = ""

    def __init__(self) -> None:
        super().__init__()
        self._cache = StructureCache(8)

    def incidence(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None) -> Incidence:
        """The (cached) :class:`Incidence` of ``hyperedge_index`` for ``x.size(0)`` nodes.

        ``num_hyperedges`` defaults to ``max(hyperedge_index[1]) + 1`` (0 when there is no incidence).
        """
        _check_index_shape(hyperedge_index)
        num_nodes = int(x.size(0))
        if num_hyperedges is None:
            num_hyperedges = self._cache.get(
                (hyperedge_index,), ("num_hyperedges",),
                lambda: int(hyperedge_index[1].max()) + 1 if hyperedge_index.numel() else 0)
        else:
            try:
                count = None if isinstance(num_hyperedges, bool) else operator.index(num_hyperedges)
            except TypeError:
                count = None
            if count is None or count < 0:
                raise ValueError(f"num_hyperedges must be a non-negative int or None, got {num_hyperedges!r}")
            num_hyperedges = count
        dtype = x.dtype if x.dtype.is_floating_point else torch.get_default_dtype()

        def build() -> Incidence:
            _check_index_range(hyperedge_index, num_nodes, num_hyperedges)
            return Incidence(hyperedge_index, num_nodes, num_hyperedges, dtype)
        return self._cache.get((hyperedge_index,), ("incidence", num_nodes, num_hyperedges, dtype), build)

    def features(self, x: Tensor) -> Tensor | SparseOperator:
        return prepare_input(self._cache, x)


# ------------------------------------------------------------------------- backward over the live rows only

#: :func:`live_rows_linear` multiplies only the rows with a nonzero output gradient when fewer than this share are
#: (above it, gathering and scattering the rows costs about what the skipped rows save: measured on Cora's AllSet).
LIVE_ROWS = 0.75
#: ... and only for maps with at least this many weights (in x out): on narrower ones (64 x 64, 128 x 7) the gathers
#: cost more than the skipped rows' products (measured on Cora: EHNN no faster, HyperND's last map 0.3 ms slower).
LIVE_MIN_WEIGHTS = 16384


def live_rows(grad: Tensor) -> Tensor:
    """The rows of a 2-D gradient that are not all zero (exact, a NaN counts as live; 5x faster than
    ``grad.ne(0).any(1)``)."""
    return (grad.amax(1) != 0) | (grad.amin(1) != 0)


class _LiveRowsLinear(torch.autograd.Function):
    """``F.linear(x, weight, bias)``; the backward multiplies only the rows of ``x`` whose output gradient is not
    all zero (a loss over some rows, e.g. the training nodes, leaves the others' gradient exactly zero through
    row-wise layers), when fewer than :data:`LIVE_ROWS` of them are: the same gradients (a zero row adds zero to
    the weight gradient and has a zero input gradient), up to float rounding."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        return F.linear(x, weight, bias)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:  # type: ignore[override]
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        live = live_rows(grad)
        if int(live.sum()) >= LIVE_ROWS * live.numel():
            g, xs = grad, x
        else:
            rows = live.nonzero().view(-1)
            g = grad.index_select(0, rows)
            xs = x.index_select(0, rows) if need_w else None
        grad_w = g.t() @ xs if need_w else None
        grad_b = g.sum(0) if need_b and ctx.has_bias else None
        grad_x = None
        if need_x:
            if g is grad:
                grad_x = grad @ weight
            else:  # each row written once: the products into the live rows, zeros into the others
                grad_x = grad.new_empty(x.shape).index_copy_(0, rows, g @ weight)
                grad_x.index_fill_(0, (~live).nonzero().view(-1), 0)
        return grad_x, grad_w, grad_b


def live_rows_linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``F.linear(x, weight, bias)`` with the backward of :class:`_LiveRowsLinear` (rows with a zero output
    gradient skipped) when autograd records it, ``x`` is 2-D and the map has at least :data:`LIVE_MIN_WEIGHTS`
    weights; plain ``F.linear`` otherwise."""
    if (x.dim() == 2 and weight.numel() >= LIVE_MIN_WEIGHTS and torch.is_grad_enabled()
            and (x.requires_grad or weight.requires_grad)):
        return _LiveRowsLinear.apply(x, weight, bias)
    return F.linear(x, weight, bias)


class _ReluDropout(torch.autograd.Function):
    """``dropout(relu(x), p)`` (the mask of :func:`dropout`, same random stream: the same values, bit for bit)
    keeping only the output for the backward (kept entries are its positive ones): no ReLU output and float mask
    kept side by side, the product taken in place, one threshold pass backward. About 1.6 ms less than the two
    ops for a 4,287 x 256 tensor (forward and backward, one CPU core)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, p: float) -> Tensor:  # type: ignore[override]
        scale = 1.0 / (1.0 - p)
        out = torch.relu(x).mul_(_scaled_keep_mask(x.numel(), p, x.device, x.dtype).view_as(x))
        ctx.scale = scale
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:  # type: ignore[override]
        (out,) = ctx.saved_tensors
        return torch.ops.aten.threshold_backward(grad, out, 0).mul_(ctx.scale), None


def relu_dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """``dropout(F.relu(x), p, training)`` in one pass (:class:`_ReluDropout`) when autograd records it."""
    if not training or p == 0.0 or not (torch.is_grad_enabled() and x.requires_grad):
        return dropout(F.relu(x), p, training)
    return _ReluDropout.apply(x, p)


def live_mlp(mlp: nn.Module, x: Tensor | SparseOperator) -> Tensor:
    """``mlp(x)`` for a :class:`hypergvl.models.nn.mlp.MLP` (without an input norm) with its dense linear maps through
    :func:`~hypergvl.models.nn._common.live_rows_linear` (the backward skips the rows with a zero gradient); a sparse ``x``
    goes through the first map as :class:`~hypergvl.models.nn._common.Linear` does it. An MLP with an input norm runs as
    is."""
    if mlp.input_norm:
        return mlp(x)
    first = mlp.lins[0]
    h = first(x) if isinstance(x, SparseOperator) else live_rows_linear(x, first.weight, first.bias)
    return mlp_tail(mlp, h, live=True)
