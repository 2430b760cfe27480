"""Input checks shared by the metric folders.

``evaluate`` checks only the first element of a batch and then casts the rest to the feature type, so ``None``
becomes the string ``"None"``, a string ``"101"`` passes as three numbers and ``0.7`` becomes the label 0. The
metrics call these checks on every element before the batch reaches ``evaluate``, so such inputs raise one clear
``ValueError`` naming the input and the index instead.
"""
from __future__ import annotations

import numpy as np

__all__ = ["check_numbers", "check_strings"]


def _sequence(name: str, values):
    if values is None:
        raise ValueError(f"{name} is missing")
    if isinstance(values, (str, bytes, dict, set)) or not hasattr(values, "__len__"):
        raise ValueError(f"{name} must be a list, got {type(values).__name__} {values!r:.60}")
    return values


def _same_length(columns: dict) -> None:
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError("inputs differ in length: " + ", ".join(f"{k} {v}" for k, v in lengths.items()))


def check_numbers(columns: dict) -> None:
    """Every column is a flat list (or 1-D array) of real numbers, all of the same length."""
    for name, values in columns.items():
        _sequence(name, values)
        if hasattr(values, "__array__") and not isinstance(values, (list, tuple)):
            array = np.asarray(values)
            if array.ndim != 1 or array.dtype.kind not in "biuf":
                raise ValueError(f"{name} must be a 1-D array of numbers, got shape {array.shape} {array.dtype}")
            continue
        for i, value in enumerate(values):
            if not isinstance(value, (int, float, np.number)):
                raise ValueError(f"{name}[{i}] must be a number, got {type(value).__name__} {value!r:.60}")
    _same_length(columns)


def check_strings(columns: dict) -> None:
    """Every column is a list of ``str``, all of the same length."""
    for name, values in columns.items():
        _sequence(name, values)
        for i, value in enumerate(values):
            if not isinstance(value, str):
                raise ValueError(f"{name}[{i}] must be a string, got {type(value).__name__} {value!r:.60}")
    _same_length(columns)
