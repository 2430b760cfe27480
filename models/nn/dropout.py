"""Dropout with a cheap mask: 16-bit random integers, four per 64-bit draw of the global generator, several times
cheaper on CPU than ``torch.nn.functional.dropout``'s Bernoulli sampler. Every function here draws the same random
stream, so their masks agree bit for bit for the same seed.

- :func:`keep_mask`: a bool mask with ``P(True) = 1 - p`` (models that apply the mask themselves: HJRL, HyperGT).
- :func:`dropout`: inverted dropout (like ``F.dropout``) on a dense tensor or on the stored entries of a
  :class:`~hypergvl.models.nn.sparse.SparseOperator`.
- :func:`relu_dropout`: ``dropout(relu(x), p)`` in one pass with a lean backward.
"""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from .sparse import SparseOperator

__all__ = ["keep_mask", "dropout", "relu_dropout"]


def _mask_draws(numel: int, p: float, device: torch.device) -> tuple[Tensor, int]:
    """``numel`` random 16-bit integers (four per 64-bit draw of the global generator) and the threshold at or
    above which an entry is kept, so that ``P(keep) = 1 - p`` (to 1/65536)."""
    raw = torch.randint(-2 ** 63, 2 ** 63 - 1, ((numel + 3) // 4,), dtype=torch.int64, device=device)
    return raw.view(torch.int16)[:numel], -32768 + int(round(p * 65536))


def keep_mask(numel: int, p: float, device: torch.device) -> Tensor:
    """Bool mask with ``P(True) = 1 - p`` (to 1/65536), from :func:`_mask_draws`."""
    draws, threshold = _mask_draws(numel, p, device)
    return draws >= threshold


def _scaled_keep_mask(numel: int, p: float, device: torch.device, dtype: torch.dtype) -> Tensor:
    """``keep_mask(numel, p, device).to(dtype) * (1 / (1 - p))`` bit for bit (the same random integers and
    comparisons), compared as floats: int16 -> float is exact, and a float compare plus a float multiply are about
    4x cheaper on CPU than the int16 compare and the bool -> float conversion (measured: 0.11 ms against 0.41 ms
    for 4,287 x 64 entries)."""
    draws, threshold = _mask_draws(numel, p, device)
    exact = dtype if dtype in (torch.float32, torch.float64) else torch.float32  # every int16 exactly
    return draws.to(exact).ge_(threshold).mul_(1.0 / (1.0 - p)).to(dtype)


def dropout(x: Tensor | SparseOperator, p: float, training: bool) -> Tensor | SparseOperator:
    """Inverted dropout (like ``F.dropout``) with a cheap mask (:func:`_scaled_keep_mask`, the entries kept where
    :func:`keep_mask` is true); on sparse input it drops stored entries.

    Uses the global torch generator, so ``torch.manual_seed`` makes it reproducible.
    """
    if not training or p == 0.0:
        return x
    if isinstance(x, SparseOperator):
        vals = x.values
        return x.with_values(vals * _scaled_keep_mask(vals.numel(), p, vals.device, vals.dtype))
    return x * _scaled_keep_mask(x.numel(), p, x.device, x.dtype).view_as(x)


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
