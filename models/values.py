"""The typed values of the training configuration's keys, without torch: :class:`ConfigError`, :func:`coerce` (a
command-line or config-file value converted to a key's annotation, or refused naming the key, the value and the
expected type), and the literal form of an annotation that :mod:`hypergvl.models._names_table` stores
(:func:`type_spec`, read back by :func:`annotation`), so ``hypergvl train --set lr=abc`` is refused by the same
:func:`coerce` before anything imports torch. :mod:`hypergvl.models.config` uses these for every key it resolves.
"""
from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union

import yaml

_BUILTINS = {"bool": bool, "int": int, "float": float, "str": str, "list": list, "tuple": tuple, "dict": dict,
             "None": type(None)}


class ConfigError(ValueError):
    """A configuration or usage error the user can fix (reported as one line and a non-zero exit)."""


def coerce(key: str, value: Any, ann: Any) -> Any:
    """``value`` converted to annotation ``ann`` (strings from the command line parsed), or ``ConfigError``."""
    if isinstance(value, str) and ann is not str:
        try:
            value = yaml.safe_load(value) if value.strip() else value
        except yaml.YAMLError:
            pass
    origin = typing.get_origin(ann)
    if ann is Any:
        return value
    if origin in (Union, types.UnionType):
        args = typing.get_args(ann)
        if value is None and type(None) in args:
            return None
        for a in args:
            if a is type(None):
                continue
            try:
                return coerce(key, value, a)
            except ConfigError:
                pass
        raise ConfigError(f"{key}: expected {type_name(ann)}, got {value!r}")
    if origin is Literal:
        if value in typing.get_args(ann):
            return value
        raise ConfigError(f"{key}: expected one of {', '.join(map(str, typing.get_args(ann)))}, got {value!r}")
    if ann is bool:
        if isinstance(value, bool):
            return value
    elif ann is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    elif ann is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
    elif isinstance(ann, type) and isinstance(value, ann):
        return value
    elif not isinstance(ann, type):  # an annotation we do not interpret (e.g. a Callable)
        return value
    raise ConfigError(f"{key}: expected {type_name(ann)}, got {value!r}")


def type_name(ann: Any) -> str:
    """``float``, ``int | None``, ``Literal['a', 'b']``: as a user would write the type."""
    if typing.get_origin(ann) in (Union, types.UnionType):
        return " | ".join(type_name(a) for a in typing.get_args(ann))
    if ann is type(None):
        return "None"
    return getattr(ann, "__name__", None) or str(ann).replace("typing.", "")


def type_spec(ann: Any) -> Any:
    """``ann`` as a literal: a builtin type's name (``"float"``, ``"None"``), ``("Literal", values)``,
    ``("Union", specs)``, or ``"Any"`` for anything else (which :func:`coerce` accepts as it comes, so the check
    before torch never refuses what the trainer's config would take)."""
    origin = typing.get_origin(ann)
    if origin in (Union, types.UnionType):
        return ("Union", tuple(type_spec(a) for a in typing.get_args(ann)))
    if origin is Literal:
        args = typing.get_args(ann)
        return ("Literal", args) if all(isinstance(a, (str, int, float, bool)) for a in args) else "Any"
    if ann is type(None):
        return "None"
    if origin is None and isinstance(ann, type) and _BUILTINS.get(ann.__name__) is ann:
        return ann.__name__
    return "Any"


def annotation(spec: Any) -> Any:
    """The annotation :func:`type_spec` wrote as ``spec``."""
    if isinstance(spec, tuple) and spec[0] == "Literal":
        return Literal[spec[1]]
    if isinstance(spec, tuple) and spec[0] == "Union":
        return Union[tuple(annotation(s) for s in spec[1])]
    return _BUILTINS.get(spec, Any)
