"""Stand-ins for ``torch_scatter``, ``torch_sparse`` and ``dask``, so that DHG-Bench's own model code (the PyPI
wheel ``dhg-bench``) runs here for ``benchmarks/epoch_time.py``'s reference column and the other scripts that build
its classes through ``benchmarks/dhgbench_reference.py``.

Why: ``torch_scatter`` and ``torch_sparse`` publish no wheels for torch 2.13 CPU and cannot be compiled within
this project's limits; ``dask`` is used only by T-HyperGNN's neighbour search. What stands in (stated here and in
the benchmark's output):

* ``torch_scatter.scatter``/``scatter_add``/``scatter_sum``/``scatter_mean``/``scatter_softmax``: torch's own
  ``Tensor.scatter_reduce`` (through ``torch_geometric.utils.scatter`` and ``softmax``), same values;
  torch_scatter's dedicated CPU kernels may be a little faster or slower than torch's.
* ``torch_sparse.spmm``: the algorithm of torch_sparse 0.6.18's pure-Python ``spmm.py`` (gather the rows of the
  dense matrix for every nonzero, multiply by the value, ``scatter_add``), so it materialises the same
  nnz x f tensor as the reference.
* ``torch_sparse.spspmm``: ``torch.sparse.mm`` of two COO matrices, with the values detached: torch_sparse's
  spspmm has no backward for the values, so nothing upstream of it gets a gradient in the reference either. As
  torch_sparse, it reads rows 0 and 1 of each index (row, col) whatever the index's shape (the wheel's LEGCN
  ``line_expansion`` passes a [P, 4] index, which makes its broken, almost edgeless line graph).
* ``torch_sparse.coalesce``: ``torch.sparse_coo_tensor(...).coalesce()`` (op ``add`` only, the one used).
* ``torch_sparse.SparseTensor``/``matmul`` (HyperGT only): a COO holder and the gather-scale-scatter product of
  torch_sparse's ``spmm_sum``.
* ``dask.delayed``/``dask.compute``/``dask.diagnostics.ProgressBar``: run the delayed calls one after another in
  this process (``compute`` returns the same nested tuple as dask's).

:func:`install` puts the three modules into ``sys.modules`` only when the real packages are absent; it is called
by the benchmarks only (``dhgbench_reference.import_dhgbench``), never by the project.
"""
from __future__ import annotations

import contextlib
import importlib.util
import sys
import types

import torch

__all__ = ["install"]


# ------------------------------------------------------------------------------------------------- torch_scatter

def _broadcast(src: torch.Tensor, index: torch.Tensor, dim: int) -> torch.Tensor:
    """torch_scatter's rule: a lower-rank index is aligned with ``dim`` and expanded to ``src``'s shape."""
    dim = dim % src.dim()
    if index.dim() == 1:
        shape = [1] * src.dim()
        shape[dim] = -1
        index = index.view(shape)
    return index.expand_as(src)


def scatter(src, index, dim=-1, out=None, dim_size=None, reduce="sum"):
    if out is not None:
        raise NotImplementedError("shim: scatter(out=...) is not used by DHG-Bench")
    dim = dim % src.dim()
    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() else 0
    reduce = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}.get(reduce, reduce)
    if reduce not in ("sum", "mean", "prod", "amax", "amin"):
        raise ValueError(f"shim: unknown reduce {reduce!r}")
    shape = list(src.shape)
    shape[dim] = dim_size
    idx = _broadcast(src, index, dim)
    if reduce in ("sum", "mean"):  # scatter_add keeps no output for backward (the reference mutates outputs)
        out = src.new_zeros(shape).scatter_add(dim, idx, src)
        if reduce == "mean":
            if index.dim() != 1:
                raise NotImplementedError("shim: scatter mean with a multi-dimensional index is not used")
            count = torch.bincount(index, minlength=dim_size).to(src.dtype)
            view = [1] * src.dim()
            view[dim] = -1
            out = out / count.clamp(min=1).view(view)
        return out
    base = (torch.ones if reduce == "prod" else torch.zeros)(shape, dtype=src.dtype, device=src.device)
    return base.scatter_reduce(dim, idx, src, reduce=reduce, include_self=reduce == "prod")


def scatter_add(src, index, dim=-1, out=None, dim_size=None):
    return scatter(src, index, dim, out, dim_size, "sum")


def scatter_mean(src, index, dim=-1, out=None, dim_size=None):
    return scatter(src, index, dim, out, dim_size, "mean")


def scatter_softmax(src, index, dim=-1, dim_size=None):
    from torch_geometric.utils import softmax

    return softmax(src, index, num_nodes=dim_size, dim=dim)


# -------------------------------------------------------------------------------------------------- torch_sparse

def spmm(index, value, m, n, matrix):
    """torch_sparse 0.6.18 ``spmm.py``: ``out[row] += value * matrix[col]`` through an nnz x f gather."""
    assert n == matrix.size(-2)
    row, col = index[0], index[1]
    matrix = matrix if matrix.dim() > 1 else matrix.unsqueeze(-1)
    out = matrix.index_select(-2, col) * value.unsqueeze(-1)
    return scatter_add(out, row, dim=-2, dim_size=m)


def spspmm(indexA, valueA, indexB, valueB, m, k, n, coalesced=False):
    # torch_sparse reads rows 0 and 1 of an index (row, col) whatever its shape; so does this
    a = torch.sparse_coo_tensor(torch.stack([indexA[0], indexA[1]]), valueA.detach(), (m, k)).coalesce()
    b = torch.sparse_coo_tensor(torch.stack([indexB[0], indexB[1]]), valueB.detach(), (k, n)).coalesce()
    c = torch.sparse.mm(a, b).coalesce()
    return c.indices(), c.values()


def coalesce(index, value, m, n, op="add"):
    if op not in ("add", "sum"):
        raise NotImplementedError(f"shim: coalesce(op={op!r}) is not used by DHG-Bench's models")
    c = torch.sparse_coo_tensor(index, value, (m, n)).coalesce()
    return c.indices(), c.values()


class SparseTensor:
    """The part of torch_sparse's ``SparseTensor`` that HyperGT uses: ``SparseTensor(row=, col=, value=,
    sparse_sizes=)`` consumed by :func:`matmul`."""

    def __init__(self, row, col, value=None, sparse_sizes=None, **kwargs):
        self.row, self.col = row, col
        self.value = value if value is not None else torch.ones(row.numel(), device=row.device)
        self.sparse_sizes = sparse_sizes


def matmul(src, other, reduce="sum"):
    """``src @ other`` over the last two dimensions of ``other`` (torch_sparse's ``spmm_sum``: gather, scale,
    scatter-add)."""
    if reduce not in ("sum", "add"):
        raise NotImplementedError(f"shim: matmul(reduce={reduce!r}) is not used by DHG-Bench")
    out = other.index_select(-2, src.col) * src.value.unsqueeze(-1)
    return scatter_add(out, src.row, dim=-2, dim_size=src.sparse_sizes[0])


# ---------------------------------------------------------------------------------------------------------- dask

class _Delayed:
    def __init__(self, fn, args, kwargs):
        self.fn, self.args, self.kwargs = fn, args, kwargs


def delayed(fn):
    return lambda *args, **kwargs: _Delayed(fn, args, kwargs)


def _evaluate(obj):
    if isinstance(obj, _Delayed):
        return obj.fn(*obj.args, **obj.kwargs)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_evaluate(o) for o in obj)
    return obj


def compute(*objs, **kwargs):
    return tuple(_evaluate(o) for o in objs)


@contextlib.contextmanager
def ProgressBar():  # noqa: N802 (dask's name)
    yield


# ------------------------------------------------------------------------------------------------------- install

def _module(name: str, **attrs) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    mod.__file__ = __file__
    return mod


def install() -> list[str]:
    """Register the stand-ins for whichever of torch_scatter, torch_sparse, dask are not installed; returns their
    names. torch_geometric is imported first, so it sees the real state (no torch_sparse) and keeps its own
    fallbacks."""
    import torch_geometric  # noqa: F401

    shimmed = []
    if importlib.util.find_spec("torch_scatter") is None:
        sys.modules["torch_scatter"] = _module("torch_scatter", scatter=scatter, scatter_add=scatter_add,
                                               scatter_sum=scatter_add, scatter_mean=scatter_mean,
                                               scatter_softmax=scatter_softmax)
        shimmed.append("torch_scatter")
    if importlib.util.find_spec("torch_sparse") is None:
        sys.modules["torch_sparse"] = _module("torch_sparse", spmm=spmm, spspmm=spspmm, coalesce=coalesce,
                                              SparseTensor=SparseTensor, matmul=matmul)
        shimmed.append("torch_sparse")
    if importlib.util.find_spec("dask") is None:
        diagnostics = _module("dask.diagnostics", ProgressBar=ProgressBar)
        sys.modules["dask"] = _module("dask", delayed=delayed, compute=compute, diagnostics=diagnostics)
        sys.modules["dask.diagnostics"] = diagnostics
        shimmed.append("dask")
    if not _has_legacy_qr():
        torch.qr = qr  # HyperGT's random features orthogonalise with it
        shimmed.append("torch.qr")
    return shimmed


def qr(input, some: bool = True):
    """``torch.qr``, removed from torch (deprecated since 1.9), which the wheel's HyperGT calls: torch's own
    replacement, ``torch.linalg.qr`` in the mode the removed function's ``some`` named (its documentation's
    mapping)."""
    return torch.linalg.qr(input, mode="reduced" if some else "complete")


def _has_legacy_qr() -> bool:
    try:
        torch.qr(torch.eye(1))
    except (RuntimeError, AttributeError):
        return False
    return True
