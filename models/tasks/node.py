"""Node classification (DHG-Bench sections 2 and 3.1; 50/25/25 random split, accuracy, B.5 fairness gaps)."""

from __future__ import annotations

from typing import Any, Iterator, Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import scores
from .base import Task, TaskModule, _num_features, _to_device, add_extra_loss
from .configs import NodeTaskConfig
from .fairness import fairness_metrics
from .heads import _NodeHead
from .registry import register_task
from .splits import split_indices

__all__ = ["NodeClassification"]


@register_task("node")
class NodeClassification(Task):
    """Node classification (DHG-Bench sections 2 and 3.1; scored at the final epoch by default, as the
    reference does for this task)."""

    Config = NodeTaskConfig
    metric = "accuracy"
    default_select = "last"

    def __init__(self, data: Any, cfg: NodeTaskConfig, seed: int, *, hidden: int,
                 device: torch.device | str = "cpu", split: Optional[dict[str, Tensor]] = None):
        super().__init__(data, cfg, seed, hidden=hidden, device=device)
        if not cfg.self_loops:
            # here, not at the top: the dataset package imports PyG (3-4 s), which the config check never needs (the
            # data, loaded by now, has imported it)
            from hypergvl.models.datasets.processing import singleton_nodes

            if data.num_nodes and bool(singleton_nodes(data).all()):
                raise ValueError("task.self_loops is false, but the data holds a singleton hyperedge for every node: "
                                 "load it with add_self_loops=False (NodeClassification.load_options)")
        if split is None:
            split = self.make_split(int(data.num_nodes), cfg, seed)
        self.split = {k: _to_device(v, self.device) for k, v in split.items()}
        self.x = _to_device(data.x, self.device)
        self.y = _to_device(torch.as_tensor(data.y).long().view(-1), self.device)
        self.hyperedge_index = _to_device(data.hyperedge_index, self.device)
        self.num_hyperedges = int(data.num_hyperedges)
        sens = getattr(data, "sensitive", None)
        sens = None if sens is None else torch.as_tensor(sens).view(-1).cpu().numpy()
        self.sensitive = sens if sens is not None and np.isin(sens, (0, 1)).all() else None
        self.in_channels = _num_features(self.x)
        self.out_channels = int(getattr(data, "num_classes", 0) or int(self.y.max()) + 1)

    @classmethod
    def load_options(cls, cfg: NodeTaskConfig) -> dict:
        return {**cls.load_kwargs, "add_self_loops": cfg.self_loops}

    @staticmethod
    def make_split(num_nodes: int, cfg: NodeTaskConfig, seed: int) -> dict[str, Tensor]:
        """The split of run ``seed`` (random, 50/25/25 by default). A caller that changes it (the robustness
        study's label sparsity removes training nodes) passes its version to the constructor as ``split``."""
        return split_indices(num_nodes, seed, cfg.train_frac, cfg.val_frac)

    def structure(self) -> dict[str, Any]:
        """The hypergraph, plus the training labels (``labels[v]`` the class of training node ``v``, -1 for
        every other node) and ``num_classes``, for an encoder that diffuses known labels."""
        labels = torch.full_like(self.y, -1)
        labels[self.split["train"]] = self.y[self.split["train"]]
        return {"x": self.x, "hyperedge_index": self.hyperedge_index, "num_hyperedges": self.num_hyperedges,
                "labels": labels, "num_classes": self.out_channels}

    def build_head(self) -> nn.Module:
        return _NodeHead()

    def train_batches(self, rng: np.random.Generator) -> Iterator[None]:
        yield None  # full batch

    def loss(self, module: nn.Module, batch: None) -> Tensor:
        out = module(self.x, self.hyperedge_index, self.num_hyperedges)
        idx = self.split["train"]
        return add_extra_loss(module, F.cross_entropy(out[idx], self.y[idx]))

    @torch.no_grad()
    def evaluate(self, module: TaskModule) -> dict[str, dict[str, float]]:
        pred = module(self.x, self.hyperedge_index, self.num_hyperedges).argmax(-1).cpu().numpy()
        y = self.y.cpu().numpy()
        res = {}
        for part in ("val", "test"):
            idx = self.split[part].cpu().numpy()
            res[part] = {"accuracy": scores.accuracy(y[idx], pred[idx])}
            if self.sensitive is not None and self.out_channels == 2:
                res[part].update(fairness_metrics(pred[idx], y[idx], self.sensitive[idx]))
        return res
