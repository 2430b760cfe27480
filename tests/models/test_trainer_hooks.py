"""The two generic trainer hooks: ``encoder.prepare`` runs before the optimiser is built (with the training labels
for node classification, the encoder's structure for hyperedge prediction, nothing for varying batches), and
``encoder.extra_loss`` is added to every task's loss. The models that use them: ``nn/test_hypergt.py``,
``nn/test_hypernd.py``, ``nn/test_hjrl.py``."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from hnn_toys import make_task
from hypergvl.models import tasks as T


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/models/conftest.py


class HookedEncoder(nn.Module):
    """A test encoder using both hooks: ``prepare`` creates a per-node table (a parameter whose shape depends on
    the structure), ``extra_loss`` returns a fixed auxiliary loss after each training forward."""

    def __init__(self, in_channels: int, out_channels: int, extra: float | None = 2.5) -> None:
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels)
        self.table: nn.Parameter | None = None
        self.prepared: list[dict] = []
        self.extra, self._pending = extra, None

    def prepare(self, x, hyperedge_index, num_hyperedges=None, **info):
        self.prepared.append({"num_nodes": x.size(0), "hyperedge_index": hyperedge_index,
                              "num_hyperedges": num_hyperedges, **info})
        self.table = nn.Parameter(torch.zeros(x.size(0), self.lin.out_features))

    def forward(self, x, hyperedge_index, num_hyperedges=None):
        out = self.lin(x)
        if self.table is not None and self.table.size(0) == x.size(0):
            out = out + self.table
        if self.training and self.extra is not None:
            self._pending = torch.tensor(self.extra) + 0.0 * self.lin.weight.sum()
        return out

    def extra_loss(self):
        pending, self._pending = self._pending, None
        return pending


def test_prepare_hook_runs_before_the_optimiser_and_gives_the_training_labels():
    from accelerate import Accelerator

    from hypergvl.models.config import TrainerConfig

    from hypergvl.models.trainer import train_one_run

    task = make_task("node")
    encoder = HookedEncoder(task.in_channels, task.out_channels, extra=None)
    module = T.TaskModule(encoder, task.build_head())
    train_one_run(task, module, Accelerator(cpu=True), TrainerConfig(epochs=3, lr=0.1), 0, None, progress=False)
    assert len(encoder.prepared) == 1 and encoder.prepared[0]["num_nodes"] == task.x.size(0)
    assert encoder.table.abs().sum() > 0  # created at zero by prepare, then moved by the optimiser
    info = encoder.prepared[0]
    train = task.split["train"]
    assert info["num_classes"] == task.out_channels
    assert torch.equal(info["labels"][train], task.y[train])
    rest = torch.ones(task.x.size(0), dtype=torch.bool)
    rest[train] = False
    assert (info["labels"][rest] == -1).all()


def test_prepare_hook_sees_the_encoders_structure_and_none_for_varying_batches():
    for kind in ("hyperedge", "graph"):
        task = make_task(kind)
        encoder = HookedEncoder(task.in_channels, task.out_channels)
        task.prepare(T.TaskModule(encoder, task.build_head()))
        if kind == "hyperedge":  # the encoder's (training) hypergraph, no labels
            (info,) = encoder.prepared
            assert info["hyperedge_index"] is task.hyperedge_index and "labels" not in info
        else:  # a batch is another structure every time: nothing to prepare for
            assert encoder.prepared == []


@pytest.mark.parametrize("kind", ["node", "hyperedge", "graph"])
def test_every_task_adds_the_encoders_extra_loss(kind):
    task = make_task(kind)
    batch = next(iter(task.train_batches(np.random.default_rng(0))))
    losses = []
    for extra in (None, 2.5):
        torch.manual_seed(0)
        module = T.TaskModule(HookedEncoder(task.in_channels, task.out_channels, extra), task.build_head()).train()
        torch.manual_seed(1)
        losses.append(task.loss(module, batch))
    assert float((losses[1] - losses[0]).detach()) == pytest.approx(2.5, abs=1e-6)
