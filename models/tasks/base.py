"""The :class:`Task` interface the training loop drives, and :class:`TaskModule` (encoder plus head)."""

from __future__ import annotations

import abc
import inspect
from typing import Any, ClassVar, Iterator

import numpy as np
import torch
from torch import Tensor, nn

__all__ = ["Task", "TaskModule", "add_extra_loss"]


class TaskModule(nn.Module):
    """Encoder plus task head as one module (so ``accelerate`` prepares, saves and restores a single model).

    An encoder whose ``forward`` takes a ``batch`` keyword also gets the head's ``batch`` input (in hypergraph
    classification, the graph of each node of the block-diagonal batch), for computations that must stay within
    one hypergraph (DPHGNN's and HyperGT's attention)."""

    def __init__(self, encoder: nn.Module, head: nn.Module):
        super().__init__()
        self.encoder = encoder
        self.head = head
        self._encoder_takes_batch = "batch" in inspect.signature(encoder.forward).parameters

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int, **head_inputs: Any) -> Tensor:
        extra = {"batch": head_inputs["batch"]} if self._encoder_takes_batch and "batch" in head_inputs else {}
        return self.head(self.encoder(x, hyperedge_index, num_hyperedges, **extra), **head_inputs)


class Task(abc.ABC):
    """One benchmark task on one dataset for one seed: split, encoder inputs, head, loss and metrics.

    The training loop only calls :meth:`prepare`, :meth:`build_head`, :meth:`train_batches`, :meth:`loss` and
    :meth:`evaluate`; ``metric`` names the reported test metric and the validation metric used for model
    selection; ``default_select`` is the reference's choice (``last`` epoch or ``best_val``).

    Two optional encoder hooks, named by no model: ``encoder.prepare(**task.structure())`` runs before the
    optimiser is built (:meth:`prepare`: parameters whose shape depends on the structure exist when the optimiser
    collects them), and ``encoder.extra_loss()`` is added to every training step's loss (:func:`add_extra_loss`).
    """

    name: ClassVar[str]
    Config: ClassVar[type]
    metric: ClassVar[str]
    default_select: ClassVar[str]
    graph_level: ClassVar[bool] = False  # True: the dataset is a collection of hypergraphs
    load_kwargs: ClassVar[dict] = {}  # extra arguments of hypergvl.models.datasets.load for this task

    in_channels: int
    out_channels: int  # width of the encoder's output

    @classmethod
    def load_options(cls, cfg: Any) -> dict:
        """The arguments of :func:`hypergvl.models.datasets.load` for a run under task settings ``cfg``."""
        return dict(cls.load_kwargs)

    def __init__(self, data: Any, cfg: Any, seed: int, *, hidden: int, device: torch.device | str = "cpu"):
        self.cfg = cfg
        self.seed = seed
        self.hidden = hidden  # the encoder's hidden width (the default width of its output for embedding tasks)
        self.device = torch.device(device)

    def structure(self) -> dict[str, Any] | None:
        """The one structure the encoder is trained and evaluated on, as keyword arguments of
        ``encoder.prepare``: ``x``, ``hyperedge_index``, ``num_hyperedges`` (plus what else the task may show the
        encoder), or ``None`` when the batches carry different structures."""
        return None

    def prepare(self, module: nn.Module) -> None:
        """Hook (a), called before the optimiser exists: ``encoder.prepare(**self.structure())`` when the encoder
        of ``module`` defines ``prepare`` and the task has one structure."""
        hook = getattr(getattr(_unwrap(module), "encoder", None), "prepare", None)
        structure = self.structure()
        if callable(hook) and structure is not None:
            hook(**structure)

    @abc.abstractmethod
    def build_head(self) -> nn.Module:
        """The head module on top of the encoder (its input width is :attr:`out_channels`)."""

    @abc.abstractmethod
    def train_batches(self, rng: np.random.Generator) -> Iterator[Any]:
        """The training batches of one epoch (order drawn from ``rng``)."""

    @abc.abstractmethod
    def loss(self, module: nn.Module, batch: Any) -> Tensor:
        """Training loss of ``batch``; ``module`` is the (possibly wrapped) :class:`TaskModule`."""

    @abc.abstractmethod
    def evaluate(self, module: TaskModule) -> dict[str, dict[str, float]]:
        """Metrics in percent for ``{"val": ..., "test": ...}`` (``module`` in eval mode, no gradients)."""


def _unwrap(module: nn.Module) -> nn.Module:
    """The module inside a distributed wrapper (``accelerate`` may wrap the :class:`TaskModule`)."""
    inner = getattr(module, "module", None)
    return inner if isinstance(inner, nn.Module) else module


def add_extra_loss(module: nn.Module, loss: Tensor) -> Tensor:
    """Hook (b), used by every task's :meth:`Task.loss`: ``loss`` plus ``encoder.extra_loss()`` (the auxiliary
    loss of the forward pass just run, a scalar tensor, or ``None`` for none) when the encoder defines it."""
    hook = getattr(getattr(_unwrap(module), "encoder", None), "extra_loss", None)
    extra = hook() if callable(hook) else None
    return loss if extra is None else loss + extra


def _to_device(t: Tensor, device: torch.device) -> Tensor:
    return t.to(device) if t.device != device else t


def _num_features(x: Tensor) -> int:
    return int(x.size(1))
