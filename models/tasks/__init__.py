"""The three DHG-Bench learning tasks and the heads they share across all models.

DHG-Bench (Li et al., 2025), section 2: "we focus on three supervised learning tasks, covering node-, edge-,
and graph-level prediction". Every model in :mod:`hypergvl.models.nn` is an *encoder* mapping
``(x, hyperedge_index, num_hyperedges)`` to node representations; a task owns the data split, the head on top
of the encoder, the loss and the metrics, so that one training loop (:mod:`hypergvl.models.trainer`) serves all three.

* ``node`` -- node classification. Section 3.1: "we adopt a split of 50%/25%/25% for training, validation, and
  testing" (random per seed, not stratified); appendix B.1: cross-entropy loss, accuracy. When the dataset
  carries a binary sensitive attribute the group-fairness gaps of appendix B.5 are reported as well
  (:func:`fairness_metrics`).
* ``hyperedge`` -- hyperedge prediction. Section 3.1: "we randomly split the hyperedges (i.e., positive
  samples) into training (60%), validation (20%), and test (20%) sets ... for each training, validation, and
  test set, we sample an equal number of negative examples as the positive ones ... a mixed NS strategy that
  integrates ... sized NS (SNS), motif NS (MNS), and clique NS (CNS)". The encoder sees only the training
  hyperedges (the reference's first protocol leaked validation/test hyperedges into message passing; see
  docs/design.md). Head: max pooling of node embeddings over the candidate, a 2-layer MLP (hidden 64, LayerNorm,
  dropout 0.2), binary cross-entropy; metrics AUROC and AP (appendix B.1).
* ``graph`` -- hypergraph classification. Section 3.1: "we adopt an 80%/10%/10% train/validation/test data
  split"; graphs are batched into one block-diagonal hypergraph, node embeddings are mean-pooled per graph and
  classified; metrics accuracy and Macro-F1 (appendix B.1).

All metrics are reported in percent, as the paper's tables are.

Layout (one file per task plus the shared pieces; everything is re-exported here):

* :mod:`.registry` -- :data:`TASKS`, :func:`register_task`, :func:`get_task`;
* :mod:`.base` -- the :class:`Task` interface and :class:`TaskModule` (encoder plus head);
* :mod:`.configs` -- the typed task settings;
* :mod:`.splits` -- random and reference splits;
* :mod:`.heads` -- the node, hyperedge-scorer and graph-readout heads;
* :mod:`.fairness` -- accuracy, ΔDP and ΔEO (appendix B.5), also used by the ``hypergraph_fairness`` metric;
* :mod:`.hyperedges` -- hyperedge utilities and the publication-time hyperedge split;
* :mod:`.negatives` -- sized, motif, clique and mixed negative sampling;
* :mod:`.node`, :mod:`.hyperedge`, :mod:`.graph` -- the three tasks.
"""

from __future__ import annotations

from .base import Task, TaskModule
from .configs import GraphTaskConfig, HyperedgeTaskConfig, NodeTaskConfig
from .fairness import fairness_metrics
from .graph import HypergraphClassification
from .heads import GraphReadout, HyperedgeScorer
from .hyperedge import HyperedgePrediction, _Candidates, _scores
from .hyperedges import (Hyperedge, clique_expansion, greedy_cover, hyperedge_index_from_list, paper_split,
                         size_distribution, unique_hyperedges)
from .negatives import NEGATIVE_SAMPLERS, clique_negatives, mixed_negatives, motif_negatives, sized_negatives
from .node import NodeClassification
from .registry import TASKS, get_task, register_task
from .splits import reference_graph_split, split_indices

__all__ = [
    "TASKS",
    "register_task",
    "get_task",
    "Task",
    "TaskModule",
    "NodeTaskConfig",
    "HyperedgeTaskConfig",
    "GraphTaskConfig",
    "NodeClassification",
    "HyperedgePrediction",
    "HypergraphClassification",
    "HyperedgeScorer",
    "GraphReadout",
    "fairness_metrics",
    "unique_hyperedges",
    "greedy_cover",
    "paper_split",
    "hyperedge_index_from_list",
    "clique_expansion",
    "size_distribution",
    "NEGATIVE_SAMPLERS",
    "sized_negatives",
    "motif_negatives",
    "clique_negatives",
    "mixed_negatives",
    "split_indices",
    "reference_graph_split",
]
