"""Argument checks of the model constructors: each returns the checked value or raises ``ValueError`` naming the
argument.

- :func:`check_int`: an ``int`` (not a bool) at or above a minimum.
- :func:`check_float`: a real number (not a bool, not NaN) in ``[low, high]`` or ``[low, high)``, as a ``float``.
- :func:`check_probability`: a dropout probability, a real number in ``[0, 1)``.
- :func:`check_choice`: one of a list of strings.
- :func:`check_bool`: a ``bool``.
- :func:`check_common`: the five arguments every model shares (channels, layer count, dropout).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

__all__ = ["check_int", "check_float", "check_probability", "check_choice", "check_bool", "check_common"]


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
