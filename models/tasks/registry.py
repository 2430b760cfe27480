"""The task registry: ``@register_task("node")`` fills :data:`TASKS`; :func:`get_task` looks names up."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from hypergvl.registry import Registry

if TYPE_CHECKING:
    from .base import Task

__all__ = ["TASKS", "register_task", "get_task"]

TASKS: Registry[type[Task]] = Registry("HNN task")  # "HNN": not the HyperGVL tasks of ``hypergvl.tasks``


def register_task(name: str) -> Callable[[type[Task]], type[Task]]:
    """Class decorator adding a :class:`Task` to :data:`TASKS` under ``name`` (setting ``cls.name``); duplicate
    names are rejected."""

    def decorate(cls: type[Task]) -> type[Task]:
        if name in TASKS:  # refused before ``cls.name`` is set, naming the class that holds the name
            raise ValueError(f"{TASKS.kind} {name!r} registered twice (already by {TASKS[name].__name__})")
        cls.name = name
        return TASKS.register(name, cls)

    return decorate


def get_task(name: str) -> type[Task]:
    """The task class registered as ``name``; an unknown name raises :class:`~hypergvl.registry.UnknownName`
    (a ``ValueError`` and a ``KeyError``) listing the valid ones."""
    return TASKS[name]
