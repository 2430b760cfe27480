"""``load`` and ``build``: the two entry points of ``hypergvl.models.datasets``.

``load(name)`` reads the raw upstream files (default: upstream URLs; ``raw_root=`` or ``HYPERGVL_RAW_ROOT``: a
local folder laid out like ``../shared/data``) or a built Hub repository (``hub_dir=``: a local folder or
a Hub id), then applies DHG-Bench's processing, identically for both routes.
"""
from __future__ import annotations

import os
from typing import Any

from . import catalog  # noqa: F401  (fills the registry)
from .data import HypergraphData, HypergraphGraphDataset
from .folder import is_folder_name, read_folder
from .hub import read_built, write_built
from .processing import FEATURE_CHOICES, add_self_loops as _add_self_loops, derived_features
from .registry import DatasetSpec, get_spec
from .sources import RAW_ROOT_ENV, RawReader

__all__ = ["load", "build", "load_raw_structure"]


def _options(spec: DatasetSpec, options: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        accepted = ", ".join(spec.options) or "none"
        raise ValueError(f"{spec.display_name} does not take option(s) {unknown}; accepted options: {accepted}")
    return {**spec.options, **options}


def _check_features(display_name: str, level: str, features: str) -> None:
    if features not in FEATURE_CHOICES:
        raise ValueError(f"features must be one of {list(FEATURE_CHOICES)}, got {features!r}")
    if level == "graph" and features != "raw":
        raise ValueError(f"{display_name} is a graph-level set whose features are DHG-Bench's one-hot degrees; "
                         f"only features='raw' applies, got {features!r}")


def load_raw_structure(spec: DatasetSpec, raw_root: str | os.PathLike | None, *, with_features: bool,
                       options: dict[str, Any]) -> HypergraphData | HypergraphGraphDataset:
    """Parse the raw files of ``spec`` (no self-loops). A missing file raises ``FileNotFoundError`` naming it."""
    reader = RawReader(spec.source, raw_root)
    try:
        return spec.loader(reader, features=with_features, name=spec.name, **options)
    except FileNotFoundError as err:
        message = f"{spec.display_name}: {err}"
        if with_features and spec.feature_file is not None and reader.base is not None \
                and reader.location(spec.feature_file) in str(err):
            message += (". Its node features are not available; for structure-only uses (e.g. hyperedge "
                        "prediction) ask for features='none', 'identity' or 'onehot-degree' explicitly "
                        "(build: --features none)")
        elif raw_root is None and not os.environ.get(RAW_ROOT_ENV):
            message += f" (pass raw_root= or set {RAW_ROOT_ENV} to read a local copy)"
        raise FileNotFoundError(message) from None


def load(name: str, raw_root: str | os.PathLike | None = None, hub_dir: str | os.PathLike | None = None, *,
         features: str = "raw", add_self_loops: bool | None = None,
         **options: Any) -> HypergraphData | HypergraphGraphDataset:
    """Load a DHG-Bench dataset with the benchmark's processing.

    Args:
        name: a registered name (``hypergvl.models.datasets.DATASETS``), case-insensitive, or a path with a ``/``
            (``./my-hypergraph``): a folder of plain files, :mod:`hypergvl.models.datasets.folder`.
        raw_root: a folder (or URL) laid out like ``../shared/data``; default ``$HYPERGVL_RAW_ROOT``, else
            the upstream URLs.
        hub_dir: read a repository written by ``hypergvl datasets build`` instead (a local folder or
            a Hub dataset id). Exclusive with ``raw_root``.
        features: ``raw`` (the dataset's own features; graph-level sets: one-hot degree), or, only when asked
            for, ``none`` / ``identity`` / ``onehot-degree`` (for structure-only uses such as hyperedge
            prediction on sets whose feature file is unavailable).
        add_self_loops: add a singleton hyperedge for every node lacking one. ``None`` uses DHG-Bench's
            default: ``True`` for node-level sets (node classification), ``False`` for graph-level sets.
            Hyperedge prediction uses ``False``.
        options: dataset-specific options (Walmart: ``feature_noise=0.6``, ``feature_dim=100``, ``seed=0``).

    Returns:
        a validated :class:`HypergraphData` (node level) or :class:`HypergraphGraphDataset` (graph level).
    """
    if is_folder_name(name):
        if hub_dir is not None or options:
            raise ValueError(f"{name} is read as a folder (its name has a '/'): hub_dir= and dataset options do not "
                             "apply to it")
        obj = read_folder(name, features=features == "raw")
        level = "graph" if isinstance(obj, HypergraphGraphDataset) else "node"
        _check_features(name, level, features)
        return _processed(obj, level, features, add_self_loops)
    spec = get_spec(name)
    _check_features(spec.display_name, spec.level, features)
    merged = _options(spec, options)
    if raw_root is not None and hub_dir is not None:
        raise ValueError("pass either raw_root= (raw upstream files) or hub_dir= (a built repository), not both")
    if hub_dir is not None:
        obj, meta = read_built(hub_dir)
        if meta["name"] != spec.name:
            raise ValueError(f"{hub_dir} holds dataset {meta['name']!r}, not {spec.name!r}")
        if meta["options"] != merged:
            raise ValueError(f"{hub_dir} was built with options {meta['options']}, requested {merged}; "
                             "build again from the raw files with these options")
        if features == "raw" and meta["feature_source"] != "raw":
            raise ValueError(f"{hub_dir} was built without features (structure only); pass features='none', "
                             "'identity' or 'onehot-degree'")
    else:
        obj = load_raw_structure(spec, raw_root, with_features=features == "raw", options=merged)
    return _processed(obj, spec.level, features, add_self_loops)


def _processed(obj: HypergraphData | HypergraphGraphDataset, level: str, features: str,
               add_self_loops: bool | None) -> HypergraphData | HypergraphGraphDataset:
    """DHG-Bench's processing of a raw structure (the same for raw files, built repositories and folders)."""
    if add_self_loops is None:
        add_self_loops = level == "node"
    if isinstance(obj, HypergraphGraphDataset):
        if add_self_loops:
            obj = HypergraphGraphDataset([_add_self_loops(g) for g in obj.graphs], obj.num_classes,
                                         obj.num_features, obj.name)
    else:
        if features != "raw":
            obj = obj.replace(x=derived_features(obj, features))
        if add_self_loops:
            obj = _add_self_loops(obj)
    obj.validate()
    return obj


def build(name: str, out_dir: str | os.PathLike, raw_root: str | os.PathLike | None = None, *,
          features: str = "raw", overwrite: bool = False, **options: Any):
    """Write the Hub repository of ``name`` (parquet + card) to ``out_dir`` from the raw files.

    ``features``: ``raw`` or ``none`` (structure only, for sets whose feature file is unavailable).
    Returns the output path.
    """
    spec = get_spec(name)
    if features not in ("raw", "none"):
        raise ValueError(f"build features must be 'raw' or 'none', got {features!r}")
    _check_features(spec.display_name, spec.level, features)
    merged = _options(spec, options)
    obj = load_raw_structure(spec, raw_root, with_features=features == "raw", options=merged)
    obj.validate()
    return write_built(spec, obj, out_dir, feature_source=features, options=merged, overwrite=overwrite)
