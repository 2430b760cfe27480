"""A training run's configuration, resolved in a fixed order and saved with every result: dataclass defaults,
then the config file (``models/configs/<MODEL>.yaml`` unless another is named; its ``<task>.default`` section, then
its ``<task>.<dataset>`` section), then a published protocol's settings (:mod:`hypergvl.models.protocols`), then
``--set key=value`` (which wins). Keys are the fields of :class:`TrainerConfig`, of the task's config dataclass
(:mod:`hypergvl.models.tasks`) and the model's keyword arguments (read from its constructor signature); ``trainer.``,
``task.`` and ``model.`` prefixes are accepted. An unknown key or a value of the wrong type is a
:class:`ConfigError` naming the key and the valid choices. The loop that uses it is :mod:`hypergvl.models.trainer`.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Literal, Optional, Sequence

import yaml

from hypergvl.models import CONFIG_DIR
from hypergvl.models.nn import MODELS
from hypergvl.models.protocols import PROTOCOLS, protocol_settings
from hypergvl.models.tasks import TASKS, get_task
from hypergvl.models.values import ConfigError, coerce  # noqa: F401 (ConfigError: imported from here too)

BASE_MODEL_ARGS = ("in_channels", "hidden_channels", "out_channels", "num_layers", "dropout")


@dataclass(frozen=True)
class TrainerConfig:
    """Settings of the training loop and the encoder's common constructor arguments.

    Defaults are DHG-Bench's general ones (hidden 128, lr 1e-3, no weight decay, 100 epochs, dropout 0.5,
    2 layers). ``select``: ``auto`` (the task's reference choice), ``last``, ``best_val`` (the later of equal
    validation scores, as DHG-Bench) or ``best_val_first`` (the earlier, as AllSet's ``argmax``). ``patience``:
    stop after this many epochs without a better validation score (0: never). ``eval_every``: evaluate every
    this many epochs, and at the last one when ``select`` is ``last`` or nothing was evaluated yet (as the
    reference's ``display_step``: with 50 epochs and 20, ``best_val`` chooses between epochs 20 and 40).
    ``checkpoint_every``: save a resumable checkpoint every this many epochs (0: never). ``protocol``: a
    published protocol (:mod:`hypergvl.models.protocols`) whose settings :func:`resolve_config` layers between the config
    file and ``--set``; ``None`` (the default) is DHG-Bench's, and a resolved config then omits the key.
    """

    lr: float = 1e-3
    weight_decay: float = 0.0
    epochs: int = 100
    hidden: int = 128
    num_layers: int = 2
    dropout: float = 0.5
    patience: int = 0
    select: Literal["auto", "last", "best_val", "best_val_first"] = "auto"
    eval_every: int = 1
    checkpoint_every: int = 10
    protocol: Optional[str] = None

    def __post_init__(self) -> None:
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0; got {self.lr}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0; got {self.weight_decay}")
        for key in ("epochs", "hidden", "num_layers", "eval_every"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be >= 1; got {getattr(self, key)}")
        for key in ("patience", "checkpoint_every"):
            if getattr(self, key) < 0:
                raise ValueError(f"{key} must be >= 0; got {getattr(self, key)}")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be in [0, 1); got {self.dropout}")


def _model_registry() -> dict[str, type]:
    return MODELS


def model_class(name: str) -> type:
    registry = _model_registry()
    if name not in registry:
        raise ConfigError(f"unknown model {name!r}; valid models: {', '.join(sorted(registry))}")
    return registry[name]


def model_kwarg_types(cls: type) -> dict[str, Any]:
    """Model-specific constructor arguments of ``cls`` and their annotations (``Any`` when unannotated)."""
    try:
        hints = typing.get_type_hints(cls.__init__)
    except Exception:  # unresolvable annotation: fall back to the raw ones
        hints = {}
    out = {}
    for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
        if p.name in BASE_MODEL_ARGS or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        ann = hints.get(p.name, p.annotation)
        out[p.name] = Any if ann is inspect.Parameter.empty else ann
    return out


def _dataclass_types(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


@dataclass
class ResolvedConfig:
    """``model`` holds the model arguments the config file or the command line set; ``model_defaults`` the
    constructor's defaults of the others, so a saved configuration also records what a later change of a default
    would change (:func:`saved_config_difference` then calls the folder stale)."""

    trainer: TrainerConfig
    task: Any
    model: dict[str, Any]
    sources: dict[str, str]
    model_defaults: dict[str, Any] = dataclasses.field(default_factory=dict)
    protocol: Optional[dict[str, Any]] = None  # hypergvl.models.protocols.protocol_settings's record, when one applies

    def to_dict(self) -> dict[str, Any]:
        trainer = dataclasses.asdict(self.trainer)
        if trainer["protocol"] is None:  # without a protocol, the config is the one of before protocols existed
            del trainer["protocol"]
        out = {"trainer": trainer, "task": dataclasses.asdict(self.task), "model": dict(self.model),
               "model_defaults": dict(self.model_defaults), "sources": dict(self.sources)}
        return out if self.protocol is None else {**out, "protocol": dict(self.protocol)}


def model_defaults(cls: type, given: Mapping[str, Any] = {}) -> dict[str, Any]:
    """The constructor defaults of ``cls``'s model-specific arguments not in ``given`` (JSON-able ones as they
    are, others by ``repr``)."""
    params = inspect.signature(cls.__init__).parameters
    out = {}
    for name in model_kwarg_types(cls):
        default = params[name].default
        if name in given or default is inspect.Parameter.empty:
            continue
        try:
            json.dumps(default)
        except TypeError:
            default = repr(default)
        out[name] = default
    return out


def _read_config_file(path: Path) -> dict:
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"config file {path} is not valid YAML: {e}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"config file {path}: top level must map task names to sections")
    for task_name, sections in raw.items():
        if task_name not in TASKS:
            raise ConfigError(f"config file {path}: unknown task section {task_name!r}; "
                              f"valid: {', '.join(sorted(TASKS))}")
        if not isinstance(sections, dict) or not all(isinstance(v, dict) for v in sections.values()):
            raise ConfigError(f"config file {path}: section {task_name!r} must map 'default' and dataset names "
                              f"to key: value mappings")
    return raw


def resolve_config(model: str, task: str, dataset: str, config_file: Optional[Path] = None,
                   overrides: Sequence[str] = ()) -> ResolvedConfig:
    """Defaults, then the config file's ``<task>.default`` and ``<task>.<dataset>``, then the settings of the
    protocol (``trainer.protocol``, from the file or ``overrides``; :func:`hypergvl.models.protocols.protocol_settings`,
    each value's source named), then ``overrides``. A bare ``protocol=`` names the trainer's protocol when its
    value is one (or the task has none), else the task's own ``protocol`` (hyperedge and graph tasks)."""
    try:
        task_cls = get_task(task)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    model_cls = model_class(model)
    sections = {"trainer": _dataclass_types(TrainerConfig), "task": _dataclass_types(task_cls.Config),
                "model": model_kwarg_types(model_cls)}

    def place(key: str, where: str) -> tuple[str, str]:
        if "." in key:
            prefix, name = key.split(".", 1)
            if prefix in sections and name in sections[prefix]:
                return prefix, name
        hits = [s for s, types_ in sections.items() if key in types_]
        if len(hits) == 1:
            return hits[0], key
        if len(hits) > 1:
            raise ConfigError(f"{where}: key {key!r} is ambiguous; write one of "
                              f"{', '.join(f'{s}.{key}' for s in hits)}")
        valid = {s: sorted(t) for s, t in sections.items()}
        raise ConfigError(f"{where}: unknown key {key!r} for model {model}, task {task}; valid keys: "
                          + "; ".join(f"{s}: {', '.join(v) or '(none)'}" for s, v in valid.items()))

    values: dict[str, dict[str, Any]] = {s: {} for s in sections}
    sources: dict[str, str] = {}

    def apply(items: Iterable[tuple[str, Any]], where: str) -> None:
        for key, value in items:
            section, name = place(str(key), where)
            values[section][name] = coerce(f"{where}: {key}", value, sections[section][name])
            sources[f"{section}.{name}"] = where

    path = config_file if config_file is not None else CONFIG_DIR / f"{model}.yaml"
    if config_file is not None or path.exists():
        raw = _read_config_file(path)
        for task_name, secs in raw.items():  # check every section's keys, not only the ones used now
            if task_name != task:
                other = {"trainer": sections["trainer"], "task": _dataclass_types(TASKS[task_name].Config),
                         "model": sections["model"]}
                for sec_name, sec in secs.items():
                    for key in sec:
                        if not any(key.split(".", 1)[-1] in t for t in other.values()):
                            raise ConfigError(f"{path} [{task_name}.{sec_name}]: unknown key {key!r}")
        secs = raw.get(task, {})
        apply(secs.get("default", {}).items(), f"{path.name} [{task}.default]")
        ds_key = next((k for k in secs if k.lower() == dataset.lower()), None)
        if ds_key is not None:
            apply(secs[ds_key].items(), f"{path.name} [{task}.{ds_key}]")

    pairs = []
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"--set expects key=value, got {item!r}")
        key, value = (s.strip() for s in item.split("=", 1))
        if key == "protocol":  # the trainer's protocol, or the task's own where it has one and is named
            key = "trainer.protocol" if value in PROTOCOLS or "protocol" not in sections["task"] else "task.protocol"
        pairs.append((key, value))
    protocol = values["trainer"].get("protocol")
    for key, value in pairs:
        if place(key, "--set") == ("trainer", "protocol"):
            protocol = coerce(f"--set: {key}", value, sections["trainer"]["protocol"])
    record = None
    if protocol is not None:
        try:
            settings, record = protocol_settings(protocol, model, task, dataset)
        except ValueError as e:
            raise ConfigError(str(e)) from None
        for key, value, source in settings:
            apply([(key, value)], f"protocol {protocol}: {source}")
    apply(pairs, "--set")

    try:
        trainer = TrainerConfig(**values["trainer"])
        task_cfg = task_cls.Config(**values["task"])
    except ValueError as e:
        raise ConfigError(str(e)) from None
    try:  # the model validates its own arguments: build a tiny one now rather than fail after loading data
        model_cls(in_channels=3, hidden_channels=trainer.hidden, out_channels=2, num_layers=trainer.num_layers,
                  dropout=trainer.dropout, **values["model"])
    except (TypeError, ValueError) as e:
        raise ConfigError(f"model {model}: {e}") from None
    if trainer.select == "auto":
        trainer = dataclasses.replace(trainer, select=task_cls.default_select)
        sources["trainer.select"] = f"task {task} default"
    return ResolvedConfig(trainer, task_cfg, values["model"], sources, model_defaults(model_cls, values["model"]),
                          record)
