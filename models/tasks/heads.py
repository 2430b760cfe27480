"""The task heads shared by every encoder: node logits, the hyperedge scorer and the graph readout."""

from __future__ import annotations

from torch import Tensor, nn

from hypergvl.models.nn.mlp import MLP
from hypergvl.models.nn.sparse import scatter

__all__ = ["HyperedgeScorer", "GraphReadout"]


def _mlp(in_channels: int, hidden_channels: int, out_channels: int, num_layers: int, dropout: float) -> nn.Module:
    """The reference's head MLP: AllSet's ``MLP`` with LayerNorm and no input norm (:class:`hypergvl.models.nn.MLP`):
    linear layers with ReLU, LayerNorm and dropout between them; one layer is a plain linear map."""
    return MLP(in_channels, hidden_channels, out_channels, num_layers, dropout, normalization="ln", input_norm=False)


class _NodeHead(nn.Module):
    """Node classification reads the encoder's output as class logits (``out_channels = num_classes``)."""

    def forward(self, h: Tensor) -> Tensor:
        return h


class HyperedgeScorer(nn.Module):
    """Candidate hyperedge score: pool the node embeddings of the candidate, then an MLP to one logit.

    ``pooling`` is ``max`` (the benchmark's setting), ``mean`` or ``maxmin`` (elementwise max minus min), the
    "Hyperedge Pooling" choices of DHG-Bench Table A4. Candidates are given flat: ``nodes[i]`` belongs to
    candidate ``candidate[i]``.
    """

    def __init__(self, in_channels: int, hidden_channels: int = 64, num_layers: int = 2, dropout: float = 0.2,
                 pooling: str = "max"):
        super().__init__()
        self.pooling = pooling
        self.mlp = _mlp(in_channels, hidden_channels, 1, num_layers, dropout)

    def forward(self, h: Tensor, nodes: Tensor, candidate: Tensor, num_candidates: int) -> Tensor:
        z = h[nodes]
        if self.pooling == "maxmin":
            pooled = (scatter(z, candidate, 0, dim_size=num_candidates, reduce="max")
                      - scatter(z, candidate, 0, dim_size=num_candidates, reduce="min"))
        else:
            pooled = scatter(z, candidate, 0, dim_size=num_candidates, reduce=self.pooling)
        return self.mlp(pooled).view(-1)


class GraphReadout(nn.Module):
    """Hypergraph classification head: pool node embeddings per graph (``mean`` or ``max``), then classify."""

    def __init__(self, in_channels: int, num_classes: int, pooling: str = "mean", num_layers: int = 1,
                 hidden_channels: int = 128, dropout: float = 0.2):
        super().__init__()
        self.pooling = pooling
        self.mlp = _mlp(in_channels, hidden_channels, num_classes, num_layers, dropout)

    def forward(self, h: Tensor, batch: Tensor, num_graphs: int) -> Tensor:
        return self.mlp(scatter(h, batch, 0, dim_size=num_graphs, reduce=self.pooling))
