"""The model registry: ``@register_model("HGNN")`` fills :data:`MODELS`; :func:`build_model` looks names up.

Every registered class has the constructor head
``(in_channels, hidden_channels, out_channels, num_layers=2, dropout=0.5, *, <typed keywords>)``,
``reset_parameters()``, ``forward(x, hyperedge_index, num_hyperedges=None)`` and a ``paper`` citation.
A model that cannot serve a task declares it as ``unsupported_tasks = {"<task>": "<reason>"}``;
:func:`task_refusal` turns that into the message the trainer prints.

Optional: ``prepare(x, hyperedge_index, num_hyperedges, **task_info)`` creates parameters whose shape depends on
the structure (the trainer calls it before building the optimiser, ``hypergvl.models.tasks.Task.prepare``; node
classification also passes the training ``labels`` and ``num_classes``); ``extra_loss()`` returns an auxiliary
loss of the last training forward (or ``None``) that every task adds to its loss; ``equivariant = False`` with
``equivariant_kwargs`` marks a model whose paper indexes learned parameters by node or hyperedge id (the common
tests check it is equivariant when built with those keyword arguments).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

from torch import nn

from hypergvl.registry import Registry, UnknownName

__all__ = ["MODELS", "register_model", "build_model", "model_defaults", "task_refusal", "UnknownModelError"]

MODELS: Registry[type[nn.Module]] = Registry("model")

_HEAD = ("in_channels", "hidden_channels", "out_channels", "num_layers", "dropout")


class UnknownModelError(UnknownName):
    """Raised for a name that is not registered; an :class:`~hypergvl.registry.UnknownName`, so both a
    ``KeyError`` and a ``ValueError``."""


def register_model(name: str) -> Callable[[type[nn.Module]], type[nn.Module]]:
    """Class decorator adding a model to :data:`MODELS` under ``name`` (duplicates are rejected)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"model name must be a non-empty string, got {name!r}")

    def decorator(cls: type[nn.Module]) -> type[nn.Module]:
        if name in MODELS:  # refused before the class is checked, naming the class that holds the name
            raise ValueError(f"{MODELS.kind} {name!r} registered twice (already by {MODELS[name].__qualname__})")
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
        head = tuple(p.name for p in params[:len(_HEAD)])
        if head != _HEAD or any(p.kind is not p.KEYWORD_ONLY for p in params[len(_HEAD):]):
            raise TypeError(f"{cls.__qualname__}.__init__ must take {', '.join(_HEAD)} then keyword-only "
                            f"arguments, got {[p.name for p in params]}")
        if not getattr(cls, "paper", ""):
            raise TypeError(f"{cls.__qualname__} must set a class attribute `paper` (citation and link)")
        refused = getattr(cls, "unsupported_tasks", {})
        if not isinstance(refused, dict) or not all(isinstance(k, str) and isinstance(v, str) and v
                                                    for k, v in refused.items()):
            raise TypeError(f"{cls.__qualname__}.unsupported_tasks must map task names to non-empty reasons")
        return MODELS.register(name, cls)
    return decorator


def _lookup(name: str) -> type[nn.Module]:
    try:
        return MODELS[name]
    except UnknownName as exc:
        raise UnknownModelError(str(exc)) from None


def model_defaults(name: str) -> dict[str, Any]:
    """The model-specific keyword arguments of ``name`` and their defaults."""
    params = list(inspect.signature(_lookup(name).__init__).parameters.values())[1 + len(_HEAD):]
    return {p.name: p.default for p in params}


def task_refusal(name: str, task: str, cls: type | None = None) -> str | None:
    """Why model ``name`` (class ``cls``, default: the registered one) refuses ``task`` (its
    ``unsupported_tasks`` entry, as one sentence), or ``None`` when it supports the task."""
    reason = getattr(cls if cls is not None else _lookup(name), "unsupported_tasks", {}).get(task)
    return None if reason is None else f"model {name} does not support task {task!r}: {reason}"


def build_model(name: str, **kwargs: Any) -> nn.Module:
    """Instantiate the model registered as ``name``; an unknown keyword raises ``TypeError`` listing the
    accepted ones, a bad value raises ``ValueError`` from the model's own checks."""
    cls = _lookup(name)
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    accepted = [p.name for p in params]
    unknown = sorted(set(kwargs) - set(accepted))
    if unknown:
        raise TypeError(f"{name} got unexpected argument(s) {', '.join(unknown)}; "
                        f"accepted: {', '.join(accepted)}")
    missing = [p.name for p in params if p.default is p.empty and p.name not in kwargs]
    if missing:
        raise TypeError(f"{name} is missing required argument(s) {', '.join(missing)}")
    return cls(**kwargs)
