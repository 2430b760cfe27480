"""The dataset registry: ``DATASETS`` maps a lower-case name to its :class:`DatasetSpec`.

Filled at import by :func:`register_dataset` (``models/datasets/catalog.py``); a duplicate name is rejected
and a failed lookup (any case: ``DATASETS["Cora"]`` is ``cora``) raises
:class:`~hypergvl.registry.UnknownName` listing the valid names.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from hypergvl.registry import Registry

from .sources import RawSource

__all__ = ["DatasetSpec", "DATASETS", "register_dataset", "get_spec", "LEVELS", "TASKS"]

LEVELS = ("node", "graph")
TASKS = ("node_classification", "hyperedge_prediction", "fairness", "hypergraph_classification")


@dataclass(frozen=True)
class DatasetSpec:
    """What the registry knows about one dataset.

    Args:
        name: registry key (lower case, e.g. ``cora-ca``).
        display_name: the name in the DHG-Bench paper (``Cora-CA``).
        level: ``node`` (one hypergraph) or ``graph`` (a set of hypergraphs).
        tasks: the DHG-Bench tasks that use it (subset of :data:`TASKS`).
        source: the upstream repository of its raw files.
        files: the raw files it reads, relative to the source.
        feature_file: the raw file holding only its node features (``None`` when they are derived or share a
            file with the labels); named in the hint of a missing-features error.
        paper_stats: its row of the paper's Table A1 / A2 / A3.
        description: the paper's appendix A.1 description.
        license: Hub licence id of the data (``unknown`` when upstream ships no licence file).
        license_note: one sentence on where the data comes from and under which terms.
        citation: BibTeX of the paper that introduced the data.
        options: dataset-specific load options and their defaults (e.g. Walmart's feature noise).
        loader: ``loader(reader, features: bool, **options)`` returning the raw structure
            (:class:`HypergraphData` without self-loops, or a :class:`HypergraphGraphDataset`).
    """

    name: str
    display_name: str
    level: str
    tasks: tuple[str, ...]
    source: RawSource
    files: tuple[str, ...]
    feature_file: str | None
    paper_stats: Mapping[str, Any]
    description: str
    license: str
    license_note: str
    citation: str
    options: Mapping[str, Any] = field(default_factory=dict)
    loader: Callable[..., Any] | None = None

    def __post_init__(self):
        if self.level not in LEVELS:
            raise ValueError(f"dataset {self.name!r}: level must be one of {list(LEVELS)}, got {self.level!r}")
        unknown = [t for t in self.tasks if t not in TASKS]
        if unknown:
            raise ValueError(f"dataset {self.name!r}: unknown tasks {unknown}; choose from {list(TASKS)}")
        if self.feature_file is not None and self.feature_file not in self.files:
            raise ValueError(f"dataset {self.name!r}: feature_file {self.feature_file!r} is not in files")


#: the registry, a read-only mapping ``name -> DatasetSpec`` in registration order; lookups ignore case
DATASETS: Registry[DatasetSpec] = Registry("dataset", normalise=str.lower)


def register_dataset(name: str, **spec: Any) -> Callable[[Callable], Callable]:
    """Decorator registering ``loader`` under ``name`` with the :class:`DatasetSpec` fields in ``spec``.

    >>> "cora" in DATASETS  # doctest: +SKIP
    True
    """
    key = name.lower()
    if key != name:
        raise ValueError(f"dataset names are lower case, got {name!r}")

    def decorate(loader: Callable) -> Callable:
        DATASETS.register(key, DatasetSpec(name=key, loader=loader, **spec))
        return loader

    return decorate


def get_spec(name: str) -> DatasetSpec:
    """The spec registered under ``name`` (case-insensitive); an unknown name raises
    :class:`~hypergvl.registry.UnknownName` (a ``KeyError`` and a ``ValueError``) listing the valid names."""
    return DATASETS[str(name)]
