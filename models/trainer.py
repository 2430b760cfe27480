"""Train and evaluate a hypergraph neural network on one DHG-Bench task: one loop for all three tasks.

Usage::

    hypergvl train --model HGNN --dataset cora --task node --runs 5 --out DIR \\
        [--config FILE] [--set key=value ...] [--raw-root DIR] [--resume]
    accelerate launch -m hypergvl.models.train ...            # the same, with accelerate choosing the device

Protocol (DHG-Bench appendix B.1): "We use the cross-entropy loss function ... for all three benchmark
classification tasks. Adam optimizer ... is adopted with an appropriate learning rate and weight decay to
achieve the best performance on the validation split ... we record the mean results and the standard deviation
across 5 runs." Run ``i`` uses seed ``i`` for its split, negatives, initialisation and dropout. The reported
epoch is the task's choice unless ``select`` says otherwise: the last epoch for node classification (the
reference trains a fixed number of epochs and scores the final model) and the best validation epoch for
hyperedge prediction and hypergraph classification (the reference's early-stopping selection).

Configuration is resolved in a fixed order and saved with every result: dataclass defaults, then the config
file (``models/configs/<MODEL>.yaml`` unless ``--config`` names another; its ``<task>.default`` section, then
its ``<task>.<dataset>`` section), then the settings of a published protocol when ``--set protocol=NAME`` (or the
file) names one (:mod:`hypergvl.models.protocols`: ``allset``, the AllSet / ED-HNN protocol, with the source of every value
in ``sources`` and the runs it asks for as the default ``--runs``), then ``--set key=value`` (the command line
wins). Keys are the fields of :class:`TrainerConfig`, of the task's config dataclass (:mod:`hypergvl.models.tasks`) and
the model's keyword arguments (read from its constructor signature); ``trainer.``, ``task.`` and ``model.``
prefixes are accepted.
An unknown key or a value of the wrong type is an error naming the key and the valid choices.

Outputs in ``--out DIR`` (all JSON written to a temporary file and renamed): ``config.json`` (the resolved
configuration), ``runs/run_<i>.json`` (one per finished run), ``summary.json`` (mean ± std in percent,
per-run metrics, time to the best validation epoch, per-epoch time, peak memory and how it was measured; the
summary and every run carry ``provenance``: commit, dirty flag, package versions, resolved config, command line,
seeds, device, :mod:`hypergvl.provenance`) and,
while a run is in progress, ``checkpoints/run_<i>/`` (``accelerate`` state plus the loop's own state), from
which ``--resume`` continues with the same final result as an uninterrupted run.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import logging
import os
import re
import resource
import shutil
import sys
import time
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Callable, Iterable, Literal, Optional, Sequence, Union

import numpy as np
import torch
import yaml
from tqdm import tqdm

from hypergvl.atomic import latest_dir, replace_dir, write_json
from hypergvl.provenance import provenance
from hypergvl.models import CONFIG_DIR
from hypergvl.models.tasks import TASKS, Task, TaskModule, get_task

log = logging.getLogger("hypergvl.models.trainer")

BASE_MODEL_ARGS = ("in_channels", "hidden_channels", "out_channels", "num_layers", "dropout")


class ConfigError(ValueError):
    """A configuration or usage error the user can fix (reported as one line and a non-zero exit)."""


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


# --------------------------------------------------------------------------------------------------------------
# configuration
# --------------------------------------------------------------------------------------------------------------


def _model_registry() -> dict[str, type]:
    from hypergvl.models.nn import MODELS

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
        raise ConfigError(f"{key}: expected {_type_name(ann)}, got {value!r}")
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
    raise ConfigError(f"{key}: expected {_type_name(ann)}, got {value!r}")


def _type_name(ann: Any) -> str:
    return getattr(ann, "__name__", None) or str(ann).replace("typing.", "")


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
    from hypergvl.models.protocols import PROTOCOLS, protocol_settings

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


# --------------------------------------------------------------------------------------------------------------
# files and measurements
# --------------------------------------------------------------------------------------------------------------


def write_json_atomic(path: Path, obj: Any) -> None:
    """``obj`` as JSON in ``path`` (:func:`hypergvl.atomic.write_json`; numpy and torch scalars as numbers), its
    folder created if needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, obj, default=_json_default)


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer, np.floating)):
        return o.item()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _reset_peak_memory(device: torch.device) -> str:
    """Reset the peak-memory counter; returns the method that :func:`_peak_memory_mib` will use."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        return "torch.cuda.max_memory_allocated (tensors on the GPU, peak during the run)"
    try:  # Linux: writing 5 to clear_refs resets VmHWM (peak RSS) to the current RSS
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return "peak resident set size of the process during the run (VmHWM, reset at the start of the run)"
    except OSError:
        return "peak resident set size of the process since it started (ru_maxrss)"


def _peak_memory_mib(device: torch.device, method: str) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    if "VmHWM" in method:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _epoch_seed(seed: int, epoch: int) -> int:
    return (seed * 1_000_003 + epoch * 7919 + 1) % 2**63


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and population standard deviation (numpy's default, as the reference reports)."""
    a = np.asarray(values, dtype=float)
    return float(a.mean()), float(a.std())


# --------------------------------------------------------------------------------------------------------------
# the loop
# --------------------------------------------------------------------------------------------------------------


@dataclass
class _LoopState:
    epoch: int = 0  # epochs completed
    best_val: float = -float("inf")
    best_epoch: int = 0
    best_metrics: Optional[dict] = None
    last_metrics: Optional[dict] = None
    last_eval_epoch: int = 0
    elapsed_s: float = 0.0
    time_to_best_s: float = 0.0
    train_time_to_best_s: float = 0.0
    epoch_times: list = dataclasses.field(default_factory=list)
    history: list = dataclasses.field(default_factory=list)


def _save_checkpoint(accelerator: Any, ckpt: Path, state: _LoopState) -> None:
    tmp = ckpt.with_name(ckpt.name + ".tmp")
    if accelerator.is_main_process and tmp.exists():
        shutil.rmtree(tmp)
    accelerator.wait_for_everyone()
    accelerator.save_state(str(tmp))
    if accelerator.is_main_process:
        write_json_atomic(tmp / "loop_state.json", dataclasses.asdict(state))
        replace_dir(tmp, ckpt)
    accelerator.wait_for_everyone()


def make_optimizer(params: Any, trainer: TrainerConfig) -> torch.optim.Adam:
    """The trainer's Adam(lr, weight_decay): the fused kernel (one pass over all parameters per step, the same
    update up to float rounding) where every parameter lives on a CPU or CUDA device, else the loop over tensors.
    On one CPU core this cuts EHNN's step on Cora from 3.2 to 0.4 ms (51 parameter tensors)."""
    params = list(params)
    fused = bool(params) and all(p.device.type in ("cpu", "cuda") and p.is_floating_point() for p in params)
    return torch.optim.Adam(params, lr=trainer.lr, weight_decay=trainer.weight_decay, fused=fused or None)


def train_one_run(task: Task, module: TaskModule, accelerator: Any, trainer: TrainerConfig, seed: int,
                  ckpt: Optional[Path], desc: str = "", progress: bool = True) -> dict[str, Any]:
    """Train ``module`` on ``task`` for one seed; returns the run's record (metrics in percent, timings)."""
    task.prepare(module)  # structure-sized parameters exist before the optimiser collects them (Task.prepare)
    optimizer = make_optimizer(module.parameters(), trainer)
    wrapped, optimizer = accelerator.prepare(module, optimizer)
    model = accelerator.unwrap_model(wrapped)
    state = _LoopState()
    found = latest_dir(ckpt, "loop_state.json") if ckpt is not None else None
    if found is not None:
        accelerator.load_state(str(found))
        state = _LoopState(**json.loads((found / "loop_state.json").read_text()))
        log.info("resumed %s from %s after epoch %d", desc, found, state.epoch)
    device = accelerator.device
    mem_method = _reset_peak_memory(device)

    bar = tqdm(range(state.epoch, trainer.epochs), desc=desc, initial=state.epoch, total=trainer.epochs,
               disable=not (progress and accelerator.is_main_process), leave=False, dynamic_ncols=True)
    for epoch in bar:
        t0 = time.perf_counter()
        torch.manual_seed(_epoch_seed(seed, epoch))
        rng = np.random.default_rng([seed, epoch])
        wrapped.train()
        total, batches = 0.0, 0
        for batch in task.train_batches(rng):
            optimizer.zero_grad()
            loss = task.loss(wrapped, batch)
            accelerator.backward(loss)
            optimizer.step()
            total += float(loss.detach())
            batches += 1
        train_s = time.perf_counter() - t0
        state.epoch_times.append(train_s)
        state.epoch = epoch + 1
        # The reference evaluates every eval_every epochs only; the last epoch is added where the selection needs
        # it (select=last) or nothing was evaluated yet (epochs < eval_every).
        if state.epoch % trainer.eval_every == 0 or (state.epoch == trainer.epochs and (
                trainer.select == "last" or not state.history)):
            model.eval()
            metrics = task.evaluate(model)
            state.last_metrics, state.last_eval_epoch = metrics, state.epoch
            val = metrics["val"][task.metric]
            state.history.append({"epoch": state.epoch, "loss": total / max(batches, 1), "val": val,
                                  "test": metrics["test"][task.metric]})
            state.elapsed_s += time.perf_counter() - t0
            # ties go to the later epoch, as in the reference; best_val_first keeps the earlier (AllSet's argmax)
            if val > state.best_val or (val == state.best_val and trainer.select != "best_val_first"):
                state.best_val, state.best_epoch, state.best_metrics = val, state.epoch, metrics
                state.time_to_best_s = state.elapsed_s
                state.train_time_to_best_s = float(sum(state.epoch_times))
            bar.set_postfix(loss=f"{total / max(batches, 1):.4f}", val=f"{val:.2f}")
        else:
            state.elapsed_s += time.perf_counter() - t0
        if trainer.patience and state.epoch - state.best_epoch >= trainer.patience:
            break
        if ckpt is not None and trainer.checkpoint_every and state.epoch % trainer.checkpoint_every == 0 \
                and state.epoch < trainer.epochs:
            _save_checkpoint(accelerator, ckpt, state)
    bar.close()

    best = trainer.select in ("best_val", "best_val_first")
    selected = state.best_metrics if best else state.last_metrics
    selected_epoch = state.best_epoch if best else state.last_eval_epoch
    times = np.asarray(state.epoch_times)
    return {
        "seed": seed,
        "metrics": selected,
        "selected_epoch": selected_epoch,
        "best_val_epoch": state.best_epoch,
        "epochs_run": state.epoch,
        "best_val_metrics": state.best_metrics,
        "last_metrics": state.last_metrics,
        "time_to_best_val_s": state.time_to_best_s,
        "train_time_to_best_val_s": state.train_time_to_best_s,
        "epoch_time_s": {"median": float(np.median(times)), "mean": float(times.mean())},
        "epoch_times_s": [float(t) for t in times],  # training steps of each epoch; their sum up to
        # best_val_epoch is train_time_to_best_val_s
        "time_method": "wall clock (time.perf_counter); time_to_best_val_s includes evaluation, "
                       "train_time_to_best_val_s and epoch_time_s count training steps only",
        "total_time_s": state.elapsed_s,
        "peak_memory_mib": _peak_memory_mib(device, mem_method),
        "memory_method": mem_method,
        "device": str(device),
        "history": state.history,
    }


def load_dataset(name: str, raw_root: Optional[str], **kwargs: Any) -> Any:
    """``hypergvl.models.datasets.load(name, raw_root)``; a bad name or a missing file becomes a :class:`ConfigError`."""
    import hypergvl.models.datasets as mds

    registry = getattr(mds, "DATASETS", None)
    if isinstance(registry, Mapping) and registry and name.lower() not in registry:
        raise ConfigError(f"unknown dataset {name!r}; valid datasets: {', '.join(sorted(registry))}")
    try:
        return mds.load(name, raw_root=raw_root, **kwargs)
    except (KeyError, ValueError, FileNotFoundError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        raise ConfigError(f"cannot load dataset {name!r}: {msg}") from None


def _is_graph_collection(data: Any) -> bool:
    return not hasattr(data, "hyperedge_index")


def config_doc(model: str, dataset: str, task: str, cfg: ResolvedConfig) -> dict:
    """What ``config.json`` of a run folder holds (as JSON reads it back)."""
    doc = {"model": model, "dataset": dataset, "task": task, "config": cfg.to_dict()}
    return json.loads(json.dumps(doc, default=_json_default))


def finished_runs(out: Path | str) -> int:
    """How many runs the folder ``out`` holds (one past the highest ``runs/run_<k>.json``; 0 if none)."""
    ks = [int(m[1]) for p in (Path(out) / "runs").glob("run_*.json") if (m := re.fullmatch(r"run_(\d+)", p.stem))]
    return max(ks, default=-1) + 1


#: config fields added after runs and points were written, with the value that gives the behaviour from before they
#: existed: a saved config that does not record one was run with that value
FIELDS_ADDED_LATER = {("task", "paper_loss"): "double_sigmoid", ("task", "paper_validation"): "train"}


def fill_fields_added_later(saved: dict, now: dict) -> dict:
    """``saved`` (a resolved config: ``{"trainer": ..., "task": ..., ...}``) with each field of
    :data:`FIELDS_ADDED_LATER` that ``now`` has and ``saved`` lacks set to its value from before it existed."""
    saved = {k: dict(v) if isinstance(v, dict) else v for k, v in saved.items()}
    for (section, key), before in FIELDS_ADDED_LATER.items():
        if isinstance(saved.get(section), dict) and key in (now.get(section) or {}) and key not in saved[section]:
            saved[section][key] = before
    return saved


def saved_config_difference(out: Path | str, doc: dict) -> str | None:
    """How the run folder ``out``'s ``config.json`` differs from ``doc`` (:func:`config_doc`), or ``None``
    when it holds the same run (or no ``config.json``; see :data:`FIELDS_ADDED_LATER`)."""
    path = Path(out) / "config.json"
    if not path.exists():
        return None
    saved = json.loads(path.read_text())
    if isinstance(saved.get("config"), dict) and isinstance(doc.get("config"), dict):
        saved["config"] = fill_fields_added_later(saved["config"], doc["config"])
    if {k: saved.get(k) for k in doc} == doc:
        return None
    return _dict_diff(saved, doc)


def run_seeds(runs: int, seeds: Optional[Sequence[int]] = None) -> list[int]:
    """The seeds of an experiment: ``0..runs-1``, or ``seeds`` (ascending) when given. Run ``k`` depends on ``k``
    alone (its split, initialisation and training), so one experiment's seeds can be split over processes or
    machines and each comes out as in the full run."""
    if seeds is None:
        if runs < 1:
            raise ConfigError(f"--runs must be >= 1; got {runs}")
        return list(range(runs))
    if not seeds or any(int(s) != s or s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise ConfigError(f"--seeds must be distinct integers >= 0; got {list(seeds)}")
    return sorted(int(s) for s in seeds)


def run_experiment(model: str, dataset: str, task: str, *, out: Path | str, runs: int = 5,
                   config: Optional[Path | str] = None, overrides: Sequence[str] = (),
                   raw_root: Optional[str] = None, resume: bool = False, data: Any = None,
                   progress: bool = True, perturb: Optional[Callable[..., tuple]] = None,
                   seeds: Optional[Sequence[int]] = None) -> dict[str, Any]:
    """Run ``runs`` seeds (0..runs-1) of ``model`` on ``task``/``dataset``; returns (and writes) the summary.

    ``seeds`` names the runs instead (:func:`run_seeds`); ``runs`` is then ignored.

    ``data`` may hold the already-loaded dataset (then ``dataset`` only names it); otherwise it is loaded with
    :func:`hypergvl.models.datasets.load`. See the module docstring for the files written to ``out``.

    ``perturb`` (node classification only; the robustness study, :mod:`hypergvl.models.study`) is called for every run
    after the run's split is drawn and before the task and the model see the data:
    ``perturb(data, split, seed) -> (data, split, info)`` gets the clean data (never to be modified), the split
    of seed ``seed`` and returns the data and split this run uses plus a JSON-able ``info`` stored in the run's
    record under ``perturbation``.
    """
    from accelerate import Accelerator

    # imported here, as in main: the package's __init__ pulls networkx, which training never needs
    seeds = run_seeds(runs, seeds)
    cfg = resolve_config(model, task, dataset, Path(config) if config is not None else None, overrides)
    out = Path(out)
    identity = {"model": model, "dataset": dataset, "task": task}
    doc = config_doc(model, dataset, task, cfg)
    config_path = out / "config.json"
    if config_path.exists():
        if not resume:
            raise ConfigError(f"{out} already holds results; pass --resume to continue them or choose another --out")
        if diff := saved_config_difference(out, doc):
            raise ConfigError(f"--resume: the configuration differs from the one in {config_path}: {diff}")

    task_cls = get_task(task)
    from hypergvl.models.nn.registry import task_refusal  # a model may declare tasks it cannot serve
    if refusal := task_refusal(model, task, model_class(model)):
        raise ConfigError(refusal)
    if perturb is not None and not hasattr(task_cls, "make_split"):
        raise ConfigError(f"perturbations apply to node classification only, not task {task!r}")
    if data is None:
        data = load_dataset(dataset, raw_root or os.environ.get("HYPERGVL_RAW_ROOT"), **task_cls.load_kwargs)
    if _is_graph_collection(data) != task_cls.graph_level:
        kind = "a collection of hypergraphs" if task_cls.graph_level else "a single hypergraph"
        raise ConfigError(f"task {task!r} needs {kind}; dataset {dataset!r} is not one")

    accelerator = Accelerator()
    if accelerator.is_main_process:
        write_json_atomic(config_path, doc)
    records = []
    for run in seeds:  # ints, ascending (run_seeds)
        run_path = out / "runs" / f"run_{run}.json"
        if run_path.exists():
            records.append(json.loads(run_path.read_text()))
            continue
        seed = run
        torch.manual_seed(seed)
        info = None
        if perturb is None:
            t = task_cls(data, cfg.task, seed, hidden=cfg.trainer.hidden, device=accelerator.device)
        else:  # after the split, before the task and the model's preprocessing see the data
            run_data, split, info = perturb(data, task_cls.make_split(int(data.num_nodes), cfg.task, seed), seed)
            t = task_cls(run_data, cfg.task, seed, hidden=cfg.trainer.hidden, device=accelerator.device, split=split)
        model_kwargs = dict(cfg.model)
        if "seed" in model_kwarg_types(model_class(model)) and "model.seed" not in cfg.sources:
            model_kwargs["seed"] = seed  # a model's own randomness follows the run unless the config fixes it
        torch.manual_seed(seed)
        encoder = model_class(model)(in_channels=t.in_channels, hidden_channels=cfg.trainer.hidden,
                                     out_channels=t.out_channels, num_layers=cfg.trainer.num_layers,
                                     dropout=cfg.trainer.dropout, **model_kwargs)
        module = TaskModule(encoder, t.build_head()).to(accelerator.device)
        ckpt = out / "checkpoints" / f"run_{run}"
        record = train_one_run(t, module, accelerator, cfg.trainer, seed, ckpt,
                               desc=f"{model}/{dataset}/{task} seed {run} ({len(records) + 1}/{len(seeds)})",
                               progress=progress)
        record = {"run": run, **record}
        if info is not None:
            record["perturbation"] = info
        record["provenance"] = provenance(cfg.to_dict(), seeds=[seed], device=str(accelerator.device))
        accelerator = Accelerator()  # a fresh one: save_state/load_state must see this run's model only
        if accelerator.is_main_process:
            write_json_atomic(run_path, record)
            for p in (ckpt, ckpt.with_name(ckpt.name + ".old")):
                shutil.rmtree(p, ignore_errors=True)
        records.append(record)

    metric = task_cls.metric
    names = sorted({k for r in records for k in r["metrics"]["test"]})
    agg = {k: dict(zip(("mean", "std"), mean_std([r["metrics"]["test"][k] for r in records]))) for k in names}
    summary = {
        **identity,
        "metric": metric,
        "mean": agg[metric]["mean"],
        "std": agg[metric]["std"],
        "std_kind": "population (ddof=0)",
        "units": "percent",
        "select": cfg.trainer.select,
        **({"protocol": cfg.protocol} if cfg.protocol else {}),
        "test_metrics": agg,
        "val_metrics": {k: dict(zip(("mean", "std"), mean_std([r["metrics"]["val"][k] for r in records])))
                        for k in sorted({k for r in records for k in r["metrics"]["val"]})},
        "runs": records,
        "config": cfg.to_dict(),
        "environment": {"torch": torch.__version__, "device": str(accelerator.device),
                        "num_processes": accelerator.num_processes, "torch_threads": torch.get_num_threads()},
        # this process's record; each run keeps the one of the process that trained it (runs[k].provenance,
        # absent in runs trained before results carried provenance)
        "provenance": provenance(cfg.to_dict(), seeds=[r["seed"] for r in records], device=str(accelerator.device)),
    }
    if accelerator.is_main_process:
        write_json_atomic(out / "summary.json", summary)
        shutil.rmtree(out / "checkpoints", ignore_errors=True)
    return summary


def _dict_diff(a: Any, b: Any, prefix: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        parts = [_dict_diff(a.get(k), b.get(k), f"{prefix}{k}.") for k in sorted(set(a) | set(b))
                 if a.get(k) != b.get(k)]
        return "; ".join(p for p in parts if p)
    return f"{prefix.rstrip('.')}: saved {a!r}, now {b!r}"


def format_result(summary: dict[str, Any]) -> str:
    n = len(summary["runs"])
    return (f"{summary['model']} {summary['dataset']} {summary['task']}: test {summary['metric']} "
            f"{summary['mean']:.2f} ± {summary['std']:.2f} ({n} run{'' if n == 1 else 's'})")


def run_cli(args: argparse.Namespace) -> int:
    """Run ``hypergvl train`` with the arguments :mod:`hypergvl.models.train` parsed and checked."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("accelerate").setLevel(logging.WARNING)
    try:
        if args.runs is None:
            cfg = resolve_config(args.model, args.task, args.dataset, args.config, args.overrides)
            args.runs = cfg.protocol["runs"] if cfg.protocol else 5
        if args.resume and (held := finished_runs(args.out)) > args.runs:  # run_experiment would summarise the first
            raise ConfigError(f"--resume: {args.out} holds {held} finished runs, more than --runs {args.runs}; pass "
                              f"--runs {held} or more (a summary of {args.runs} would leave out the others)")
        summary = run_experiment(args.model, args.dataset, args.task, out=args.out, runs=args.runs,
                                 config=args.config, overrides=args.overrides, raw_root=args.raw_root,
                                 resume=args.resume, progress=not args.no_progress)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(format_result(summary))
    return 0
