"""The task registry: ``@register_task("node")`` fills :data:`TASKS`; :func:`get_task` looks names up."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .base import Task

__all__ = ["TASKS", "register_task", "get_task"]

TASKS: dict[str, type["Task"]] = {}


def register_task(name: str) -> Callable[[type["Task"]], type["Task"]]:
    """Class decorator adding a :class:`Task` to :data:`TASKS` under ``name``; duplicate names are rejected."""

    def decorate(cls: type["Task"]) -> type["Task"]:
        if name in TASKS:
            raise ValueError(f"task {name!r} is already registered (by {TASKS[name].__name__})")
        cls.name = name
        TASKS[name] = cls
        return cls

    return decorate


def get_task(name: str) -> type["Task"]:
    """The task class registered as ``name``; an unknown name raises ``ValueError`` listing the valid ones."""
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; valid tasks: {', '.join(sorted(TASKS))}") from None
