"""The names ``hypergvl train``, ``study`` and ``datasets`` check before they import torch: the models (with their
``--set`` keys), the HNN tasks (with theirs), the trainer's keys, the perturbations and the datasets (with what
``datasets list`` prints and the raw files they read).

The table is :mod:`hypergvl.models._names_table`, a plain literal written from the live registries by
``python -m hypergvl.models.names`` (importing them takes torch and PyG, 5-30 s, which a typo or ``--help`` should not
cost); ``tests/models/test_names.py`` checks it equals them, so a model, task, dataset or perturbation added to the
package without regenerating the table fails that test, which names the command. Nothing here imports torch.

A refusal names the thing, the nearest valid names (:func:`unknown_name`) and the fix; the commands print it as one
line and exit with status 2.
"""
from __future__ import annotations

import difflib
import os
import pprint
import sys
import urllib.parse
from pathlib import Path
from typing import Sequence

from . import _names_table as table
from .values import ConfigError, annotation, coerce, type_spec

# imports inside functions: live_table reads the registries (torch, PyG and every registering module: 5-30 s), which
# the CLI's checks, the one reason this module exists, must not cost

#: the module holding the table (rewritten by :func:`write_table`)
TABLE_FILE = Path(__file__).resolve().parent / "_names_table.py"
RAW_ROOT_ENV = "HYPERGVL_RAW_ROOT"
CACHE_ENV = "HYPERGVL_CACHE"
_TRUE = {"1", "ON", "YES", "TRUE"}
_LEVEL_WORDS = {"node": "a single hypergraph (node level)", "graph": "a collection of hypergraphs (graph level)"}

MODELS: dict[str, tuple[str, ...]] = table.MODELS
TASKS: dict[str, tuple[str, ...]] = table.TASKS
TASK_LEVELS: dict[str, str] = table.TASK_LEVELS  # the dataset level each HNN task reads
TRAINER_KEYS: tuple[str, ...] = table.TRAINER_KEYS
PERTURBATIONS: tuple[str, ...] = table.PERTURBATIONS
DATASETS: dict[str, dict] = table.DATASETS
#: each key's type (hypergvl.models.values.type_spec): {"trainer": {key: spec}, "task": {task: {key: spec}},
#: "model": {model: {key: spec}}}
KEY_TYPES: dict[str, dict] = table.KEY_TYPES


def unknown_name(kind: str, name: str, choices: Sequence[str]) -> str:
    """``unknown KIND 'NAME'; did you mean X? choose one of ...``: the nearest names by :mod:`difflib` (any case)."""
    lowered = {c.lower(): c for c in choices}
    close = [lowered[c] for c in difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.6)]
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    return f"unknown {kind} {name!r}; {hint}choose one of {', '.join(choices)}"


def is_folder_name(name: str) -> bool:
    """Whether ``name`` names a folder of the user's own rather than a registered dataset: it has a path separator
    (:func:`hypergvl.models.datasets.folder.is_folder_name`, which a test checks agrees)."""
    return "/" in name or os.sep in name


def cache_path(url: str) -> Path:
    """Where :func:`hypergvl.models.datasets.sources.read_location` caches a download of ``url``."""
    parsed = urllib.parse.urlparse(url)
    root = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "hypergvl" / "raw")
    return root / parsed.netloc / parsed.path.lstrip("/")


def offline() -> bool:
    """Whether the user asked for no network (``HF_HUB_OFFLINE``, ``HF_DATASETS_OFFLINE``)."""
    return any(os.environ.get(n, "").upper() in _TRUE for n in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))


def dataset_error(name: str, raw_root: str | None, task: str | None = None) -> str | None:
    """Why dataset ``name`` cannot be read for ``task`` before anything loads (one line), or None: an unknown name, a
    folder of one's own that is not there, a task the dataset has no labels for, a ``--raw-root`` (or
    ``$HYPERGVL_RAW_ROOT``) without the dataset's source folder or files, or no raw root while offline or for a
    source with no download URL, with nothing cached."""
    if is_folder_name(name):
        return None if Path(name).is_dir() else f"dataset folder {name} does not exist (a name with '/' is read as " \
                                                "a folder of your own, docs/hnn.md)"
    spec = DATASETS.get(name.lower())
    if spec is None:
        return unknown_name("dataset", name, list(DATASETS)) + ", or a folder of your own (a path with '/')"
    if task is not None and (level := TASK_LEVELS.get(task)) and level != spec["level"]:
        fits = [n for n, s in DATASETS.items() if s["level"] == level]
        return f"dataset {name!r} is {_LEVEL_WORDS[spec['level']]}, and --task {task} needs " \
               f"{_LEVEL_WORDS[level]}: choose one of {', '.join(fits)}"
    needed = [f for f in spec["files"] if f != spec["feature_file"]]
    root = raw_root if raw_root is not None else os.environ.get(RAW_ROOT_ENV) or None
    flag = "--raw-root" if raw_root is not None else f"${RAW_ROOT_ENV}"
    if root is not None:
        if urllib.parse.urlparse(str(root)).scheme in ("http", "https", "file"):
            return None
        base = Path(root) / spec["local_dir"]
        if not Path(root).is_dir():
            return f"{flag} {root}: no such folder; give a folder laid out like ../shared/data " \
                   f"(<root>/{spec['local_dir']}/...), or leave it out to download from upstream"
        missing = [f for f in needed if not (base / f).is_file()]
        if missing:
            return f"{flag} {root} lacks {spec['display_name']}'s raw file {base / missing[0]}" + \
                   (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "") + \
                   f"; give the folder that holds {spec['local_dir']}/ (laid out like ../shared/data)"
        return None
    if spec["url"] is None:
        return f"dataset {name!r}: {spec['source']} distributes its raw files only as an archive " \
               f"({spec['homepage']}); unpack it under <root>/{spec['local_dir']}/ and pass --raw-root <root> or " \
               f"set {RAW_ROOT_ENV}"
    if offline():
        urls = [spec["url"].rstrip("/") + "/" + f.strip("/") for f in needed]
        if not all(cache_path(u).is_file() for u in urls):
            return f"dataset {name!r}: offline (HF_HUB_OFFLINE) and its raw files are neither under a raw root nor " \
                   f"cached; pass --raw-root DIR (a folder laid out like ../shared/data) or set {RAW_ROOT_ENV}, or " \
                   "go online once to download them"
    return None


def option_error(name: str, options: Sequence[str]) -> str | None:
    """Why dataset ``name`` does not take ``options`` (as :func:`hypergvl.models.datasets.api.load` says), or None."""
    spec = DATASETS.get(name.lower())
    unknown = sorted(set(options) - set(spec["options"])) if spec else []
    if unknown:
        return f"{spec['display_name']} does not take option(s) {unknown}; accepted options: " \
               f"{', '.join(spec['options']) or 'none'}"
    return None


def set_key_error(overrides: Sequence[str], model: str, task: str) -> str | None:
    """Why a ``--set KEY=VALUE`` cannot apply to ``model`` and ``task`` (its key is none of theirs or the
    trainer's, or its value is not of the key's type, by :data:`KEY_TYPES`), or None. Ranges are checked by the
    trainer's config (:func:`hypergvl.models.config.resolve_config`)."""
    sections = {"trainer": TRAINER_KEYS, "task": TASKS.get(task, ()), "model": MODELS.get(model, ())}
    types_ = {"trainer": KEY_TYPES["trainer"], "task": KEY_TYPES["task"].get(task, {}),
              "model": KEY_TYPES["model"].get(model, {})}
    valid = sorted({k for keys in sections.values() for k in keys} | {"protocol"})
    for item in overrides:
        if "=" not in item:
            return f"--set expects KEY=VALUE, got {item!r}"
        key, value = (s.strip() for s in item.split("=", 1))
        prefix, dot, bare = key.partition(".")
        if dot and prefix in sections:
            if bare not in sections[prefix]:
                return f"--set: " + unknown_name(f"{prefix} key", bare, sorted(sections[prefix])) + \
                    f" (model {model}, task {task})"
            places = [prefix]
        elif key not in valid:
            return "--set: " + unknown_name("key", key, valid) + f" (model {model}, task {task})"
        else:  # a bare protocol= is placed by its value, an ambiguous key refused by the config: both left to it
            places = [s for s in sections if key in sections[s]] if key != "protocol" else []
            bare = key
        if len(places) == 1:  # the value, by the same coerce as the trainer's config (its ranges are checked there)
            try:
                coerce(f"--set: {key}", value, annotation(types_[places[0]][bare]))
            except ConfigError as e:
                return f"{e} (model {model}, task {task})"
    return None


def live_table() -> dict:
    """The table as the live registries give it now (imports torch, PyG and every registering module)."""
    import dataclasses

    from hypergvl.models.config import TrainerConfig, _dataclass_types, model_kwarg_types
    from hypergvl.models.datasets import DATASETS as LIVE_DATASETS
    from hypergvl.models.nn import MODELS as LIVE_MODELS
    from hypergvl.models.perturb import PERTURBATIONS as LIVE_PERTURBATIONS
    from hypergvl.models.tasks import TASKS as LIVE_TASKS

    return {
        "MODELS": {name: tuple(model_kwarg_types(cls)) for name, cls in LIVE_MODELS.items()},
        "TASKS": {name: tuple(f.name for f in dataclasses.fields(cls.Config)) for name, cls in LIVE_TASKS.items()},
        "TASK_LEVELS": {name: "graph" if cls.graph_level else "node" for name, cls in LIVE_TASKS.items()},
        "TRAINER_KEYS": tuple(f.name for f in dataclasses.fields(TrainerConfig)),
        "PERTURBATIONS": tuple(LIVE_PERTURBATIONS),
        "KEY_TYPES": {"trainer": {key: type_spec(ann) for key, ann in _dataclass_types(TrainerConfig).items()},
                      "task": {name: {key: type_spec(ann) for key, ann in _dataclass_types(cls.Config).items()}
                               for name, cls in LIVE_TASKS.items()},
                      "model": {name: {key: type_spec(ann) for key, ann in model_kwarg_types(cls).items()}
                                for name, cls in LIVE_MODELS.items()}},
        "DATASETS": {name: {"display_name": s.display_name, "level": s.level, "tasks": tuple(s.tasks),
                            "source": s.source.name, "local_dir": s.source.local_dir, "url": s.source.url,
                            "homepage": s.source.homepage, "files": tuple(s.files), "feature_file": s.feature_file,
                            "options": tuple(s.options)}
                     for name, s in LIVE_DATASETS.items()},
    }


def current_table() -> dict:
    """The table this module read (what the CLI checks against)."""
    return {key: getattr(table, key) for key in ("MODELS", "TASKS", "TASK_LEVELS", "TRAINER_KEYS",
                                                 "PERTURBATIONS", "KEY_TYPES", "DATASETS")}


def write_table(path: Path = TABLE_FILE) -> Path:
    """Write :func:`live_table` as the literal module :mod:`hypergvl.models._names_table`."""
    body = "\n\n".join(f"{key} = {pprint.pformat(value, width=116, sort_dicts=False)}"
                       for key, value in live_table().items())
    path.write_text('"""Generated by ``python -m hypergvl.models.names`` from the live registries (do not edit; '
                    'tests/models/test_names.py\nchecks it equals them)."""\n# flake8: noqa\n\n' + body + "\n",
                    encoding="utf-8")
    return path


if __name__ == "__main__":
    print(write_table(Path(sys.argv[1]) if len(sys.argv) > 1 else TABLE_FILE))
