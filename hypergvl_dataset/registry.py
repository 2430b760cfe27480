"""One registry helper for every concept the suite lets you add: a task, a text representation, a renderer, a
source, a model adapter, a routing policy, a hypergraph network, a dataset, a perturbation, ...

A :class:`Registry` is a read-only mapping from name to thing, filled by its ``register`` decorator. It refuses a
name registered twice, and a failed lookup names the kind and lists the choices::

    RENDERERS = Registry("renderer")

    @RENDERERS.register("enc_hy")
    def draw_enc_hy(...): ...

    RENDERERS["enc_hy"]      # the function
    RENDERERS["nope"]        # UnknownName: unknown renderer 'nope'; choose one of enc_hy, ...

``UnknownName`` is both a ``KeyError`` (what a mapping raises) and a ``ValueError`` (what a bad argument raises), so
callers that catch either keep working, and its text is the plain message (a ``KeyError``'s would be quoted).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownName(KeyError, ValueError):
    """A lookup of a name no one registered."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class Registry(Mapping[str, T], Generic[T]):
    """Named things of one ``kind``, registered once each, in registration order.

    ``normalise`` maps a name to its registered form for lookups and registration (e.g. ``str.upper`` for task
    codes, so that ``vc`` finds ``VC``); the listed choices are the registered forms."""

    def __init__(self, kind: str, *, normalise: Callable[[str], str] | None = None) -> None:
        self.kind = kind
        self._normalise = normalise or (lambda name: name)
        self._items: dict[str, T] = {}

    def register(self, name: str, thing: T | None = None):
        """``register(name, thing)`` adds ``thing``; ``@register(name)`` adds the decorated object and returns it."""
        if thing is not None:
            self._add(name, thing)
            return thing

        def deco(obj: T) -> T:
            self._add(name, obj)
            return obj
        return deco

    def _add(self, name: str, thing: T) -> None:
        key = self._normalise(name)
        if key in self._items:
            raise ValueError(f"{self.kind} {key!r} registered twice")
        self._items[key] = thing

    def unregister(self, name: str) -> T:
        """Remove a registration (a test's temporary toy); returns what was registered."""
        self[name]  # an unknown name raises UnknownName
        return self._items.pop(self._normalise(name))

    def choices(self) -> str:
        return ", ".join(self._items) or "(none registered)"

    def __getitem__(self, name: str) -> T:
        try:
            return self._items[self._normalise(name)]
        except (KeyError, TypeError, AttributeError):
            raise UnknownName(f"unknown {self.kind} {name!r}; choose one of {self.choices()}") from None

    def __contains__(self, name: object) -> bool:
        try:
            return self._normalise(name) in self._items  # type: ignore[arg-type]
        except (TypeError, AttributeError):
            return False

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {self.choices()})"
