"""Hypergraph classification (DHG-Bench sections 2 and 3.1; 80/10/10 split, block-diagonal batches, readout)."""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import scores
from .base import Task, TaskModule, add_extra_loss
from .configs import GraphTaskConfig
from .heads import GraphReadout
from .registry import register_task
from .splits import reference_graph_split, split_indices

__all__ = ["HypergraphClassification"]


@register_task("graph")
class HypergraphClassification(Task):
    """Hypergraph classification (DHG-Bench sections 2 and 3.1; model selection on validation accuracy).

    A batch is one block-diagonal hypergraph: node and hyperedge ids of each graph are offset by the counts of
    the graphs before it, and ``batch[v]`` names the graph of node ``v`` for the readout.
    """

    Config = GraphTaskConfig
    metric = "accuracy"
    default_select = "best_val"
    graph_level = True

    def __init__(self, data: Any, cfg: GraphTaskConfig, seed: int, *, hidden: int,
                 device: torch.device | str = "cpu"):
        super().__init__(data, cfg, seed, hidden=hidden, device=device)
        self.graphs = []
        for g in data:
            x = g.x.to_dense() if g.x.layout != torch.strided else g.x
            self.graphs.append((x.float(), g.hyperedge_index.long(), int(g.num_hyperedges), int(torch.as_tensor(g.y))))
        self.paper = cfg.protocol == "paper"
        split = (reference_graph_split if self.paper else split_indices)(len(self.graphs), seed, cfg.train_frac,
                                                                          cfg.val_frac)
        self.split = {k: v.numpy() for k, v in split.items()}
        self.y = np.array([g[3] for g in self.graphs])
        self.in_channels = int(self.graphs[0][0].size(1))
        self.num_classes = int(getattr(data, "num_classes", 0) or self.y.max() + 1)
        self.out_channels = cfg.embed_dim or hidden

    def build_head(self) -> nn.Module:
        c = self.cfg
        return GraphReadout(self.out_channels, self.num_classes, c.graph_pooling, c.readout_layers,
                            c.readout_hidden, c.readout_dropout)

    def collate(self, ids: Sequence[int]) -> dict[str, Any]:
        """Block-diagonal batch of the graphs ``ids`` (under the paper protocol, hyperedge ids offset by node
        counts and then renumbered consecutively, see :class:`GraphTaskConfig`)."""
        xs, incid, batch = [], [], []
        node_off = edge_off = 0
        for j, i in enumerate(ids):
            x, hei, m, _ = self.graphs[i]
            xs.append(x)
            incid.append(hei + torch.tensor([[node_off], [node_off if self.paper else edge_off]]))
            batch.append(torch.full((x.size(0),), j, dtype=torch.long))
            node_off += x.size(0)
            edge_off += m
        index = torch.cat(incid, 1)
        if self.paper:
            used, index[1] = torch.unique(index[1], return_inverse=True)
            edge_off = used.numel()
        if self.cfg.self_loops:  # a singleton per node, also beside one it has (add_self_loop_hyperedges)
            loops = torch.arange(node_off)
            index = torch.cat([index, torch.stack([loops, edge_off + loops])], 1)
            edge_off += node_off
        d = self.device
        return {"x": torch.cat(xs).to(d), "hyperedge_index": index.to(d), "num_hyperedges": edge_off,
                "batch": torch.cat(batch).to(d), "num_graphs": len(ids),
                "y": torch.as_tensor(self.y[np.asarray(ids)]).long().to(d)}

    def _chunks(self, ids: np.ndarray) -> Iterator[dict[str, Any]]:
        for start in range(0, len(ids), self.cfg.batch_size):
            yield self.collate(ids[start:start + self.cfg.batch_size])

    def train_batches(self, rng: np.random.Generator) -> Iterator[dict[str, Any]]:
        return self._chunks(rng.permutation(self.split["train"]))

    def _forward(self, module: nn.Module, b: dict[str, Any]) -> Tensor:
        return module(b["x"], b["hyperedge_index"], b["num_hyperedges"], batch=b["batch"], num_graphs=b["num_graphs"])

    def loss(self, module: nn.Module, batch: dict[str, Any]) -> Tensor:
        return add_extra_loss(module, F.cross_entropy(self._forward(module, batch), batch["y"]))

    @torch.no_grad()
    def evaluate(self, module: TaskModule) -> dict[str, dict[str, float]]:
        res = {}
        for part in ("val", "test"):
            ids = self.split[part]
            pred = np.concatenate([self._forward(module, b).argmax(-1).cpu().numpy() for b in self._chunks(ids)])
            y = self.y[ids]
            res[part] = {"accuracy": scores.accuracy(y, pred), "macro_f1": scores.macro_f1(y, pred)}
        return res
