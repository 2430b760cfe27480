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

The configuration is resolved by :mod:`hypergvl.models.config` (defaults, the model's config file, a published
protocol, ``--set``) and saved with every result.

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
import json
import logging
import os
import re
import resource
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Callable, Optional, Sequence

import numpy as np
import torch
from accelerate import Accelerator
from tqdm import tqdm

from hypergvl.atomic import latest_dir, replace_dir, write_json
from hypergvl.models.config import (ConfigError, ResolvedConfig, TrainerConfig, model_class, model_kwarg_types,
                                    resolve_config)
from hypergvl.models.nn.registry import task_refusal  # a model may declare tasks it cannot serve
from hypergvl.models.tasks import Task, TaskModule, get_task
from hypergvl.provenance import provenance

log = logging.getLogger("hypergvl.models.trainer")

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


class TrainingDiverged(RuntimeError):
    """A run whose training loss stopped being finite: its weights are NaN or infinite from that step on, so it
    cannot recover and every score after it is meaningless (AUROC and AP refuse NaN scores outright). Raised at the
    end of the epoch it happened in, naming the run, epoch and loss; a study records it as the seed's error point."""


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
               disable=None if progress and accelerator.is_main_process else True, leave=False, dynamic_ncols=True)
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
        if not np.isfinite(total):
            raise TrainingDiverged(
                f"{desc or f'seed {seed}'}: the training loss is {total / max(batches, 1)} at epoch {epoch + 1} "
                f"(lr {trainer.lr}): the run diverged and its weights are no longer finite; a lower trainer.lr "
                f"(--set lr=...) or another seed may train")
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
    """``hypergvl.models.datasets.load(name, raw_root)`` (``name`` a registered dataset or a folder path); a bad name,
    a bad file or a missing file becomes a :class:`ConfigError`."""
    import hypergvl.models.datasets as mds  # PyG (3-4 s): after the config check, so a bad --set costs 2 s
    from hypergvl.models.datasets.folder import is_folder_name

    registry = getattr(mds, "DATASETS", None)
    if isinstance(registry, Mapping) and registry and name.lower() not in registry and not is_folder_name(name):
        raise ConfigError(f"unknown dataset {name!r}; valid datasets: {', '.join(sorted(registry))}, or a folder "
                          "of your own (a path with '/', docs/hnn.md)")
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


SUMMARY_FILE = "summary.json"
#: what every summary :func:`run_experiment` writes holds (and what its readers use)
SUMMARY_KEYS = ("model", "dataset", "task", "test_metrics", "runs")


class NotATrainerSummary(ValueError):
    """A ``summary.json`` that is JSON but not one :func:`run_experiment` wrote (it lacks :data:`SUMMARY_KEYS`)."""


def read_summary(out: Path | str) -> dict | None:
    """The summary of the run folder ``out`` (its ``summary.json``: mean ± std of every test metric, the runs, the
    config, ...), or ``None`` when the folder has none (not finished). The one reader of the file: a file that is
    not JSON is a ValueError naming it; JSON without :data:`SUMMARY_KEYS` is a :class:`NotATrainerSummary`."""
    path = Path(out) / SUMMARY_FILE
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:  # a cut or foreign file
        raise ValueError(f"{path}: not a JSON file ({exc})") from None
    if not isinstance(doc, dict) or not set(SUMMARY_KEYS) <= set(doc):
        raise NotATrainerSummary(f"{path}: not a trainer summary (it needs {', '.join(SUMMARY_KEYS)})")
    return doc


def finished_seeds(out: Path | str) -> list[int]:
    """The seeds whose runs the folder ``out`` holds (its ``runs/run_<k>.json``), ascending."""
    return sorted(int(m[1]) for p in (Path(out) / "runs").glob("run_*.json")
                  if (m := re.fullmatch(r"run_(\d+)", p.stem)))


def finished_runs(out: Path | str) -> int:
    """How many runs the folder ``out`` holds (one past the highest ``runs/run_<k>.json``; 0 if none)."""
    return max(finished_seeds(out), default=-1) + 1


#: config fields added after runs and points were written, with the value that gives the behaviour from before they
#: existed: a saved config that does not record one was run with that value
FIELDS_ADDED_LATER = {("task", "paper_loss"): "double_sigmoid", ("task", "paper_validation"): "train",
                      ("task", "self_loops"): True}  # node classification's: every earlier node run had them


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
    if refusal := task_refusal(model, task, model_class(model)):
        raise ConfigError(refusal)
    if perturb is not None and not hasattr(task_cls, "make_split"):
        raise ConfigError(f"perturbations apply to node classification only, not task {task!r}")
    if data is None:
        data = load_dataset(dataset, raw_root or os.environ.get("HYPERGVL_RAW_ROOT"),
                            **task_cls.load_options(cfg.task))
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
        write_json_atomic(out / SUMMARY_FILE, summary)
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
    # the suite's own INFO lines; libraries' (numexpr's thread count, ...) only from WARNING up
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("hypergvl").setLevel(logging.INFO)
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
    except TrainingDiverged as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a download that failed (offline, no raw root): one line that says what to do, no traceback
        print(f"error: {e}", file=sys.stderr)
        return 2 if "raw_root" in str(e) or "raw file" in str(e) else 1
    print(format_result(summary))
    return 0
