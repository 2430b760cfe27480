"""Linear maps whose backward skips the rows with a zero output gradient (a loss over some rows, e.g. the training
nodes, leaves the other rows' gradient exactly zero through row-wise layers): the same gradients up to float rounding.

- :func:`live_rows`: the rows of a 2-D gradient that are not all zero.
- :func:`live_rows_linear`: ``F.linear`` with that backward, for maps of at least :data:`LIVE_MIN_WEIGHTS` weights
  when fewer than :data:`LIVE_ROWS` of the rows are live.
- :func:`mlp_tail`: the layers of a :class:`hypergvl.models.nn.mlp.MLP` after its first linear map (optionally
  through :func:`live_rows_linear`).
- :func:`live_mlp`: a whole :class:`hypergvl.models.nn.mlp.MLP` with its maps through :func:`live_rows_linear`.
"""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .dropout import dropout
from .sparse import SparseOperator

__all__ = ["LIVE_ROWS", "LIVE_MIN_WEIGHTS", "live_rows", "live_rows_linear", "mlp_tail", "live_mlp"]

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


def mlp_tail(mlp: nn.Module, h: Tensor, live: bool = False) -> Tensor:
    """The layers of a :class:`hypergvl.models.nn.mlp.MLP` after its first linear map: ``mlp(x)`` equals
    ``mlp_tail(mlp, mlp.lins[0](mlp.norms[0](x)))``, for a model that computes that first map in a cheaper,
    equal form (an input norm folded into the weights, a map over a concatenation split into its parts).
    ``live``: the maps through :func:`live_rows_linear` (the backward skips the rows with a zero gradient)."""
    for lin, norm in zip(mlp.lins[1:], mlp.norms[1:]):
        z = dropout(norm(F.relu(h)), mlp.dropout, mlp.training)
        h = live_rows_linear(z, lin.weight, lin.bias) if live else lin(z)
    return h


def live_mlp(mlp: nn.Module, x: Tensor | SparseOperator) -> Tensor:
    """``mlp(x)`` for a :class:`hypergvl.models.nn.mlp.MLP` (without an input norm) with its dense linear maps through
    :func:`live_rows_linear` (the backward skips the rows with a zero gradient); a sparse ``x``
    goes through the first map as :class:`~hypergvl.models.nn.base.Linear` does it. An MLP with an input norm runs as
    is."""
    if mlp.input_norm:
        return mlp(x)
    first = mlp.lins[0]
    h = first(x) if isinstance(x, SparseOperator) else live_rows_linear(x, first.weight, first.bias)
    return mlp_tail(mlp, h, live=True)
