"""Graph-scoped attention in a batch of hypergraphs (DPHGNN, HyperGT): ``GraphGroups`` gives block-diagonal dense
attention, ``attention_scope="graph"`` keeps each graph to itself, and ``TaskModule`` hands ``batch`` only to the
encoders that take it."""
from __future__ import annotations

import pytest
import torch

from hnn_toys import random_hypergraph, small_dphgnn
from hypergvl.models.nn import build_model


def test_graph_groups_give_block_diagonal_dense_attention():
    """Attention within each graph (one SDPA call per graph size) against dense softmax attention with the
    block-diagonal mask, on graphs of sizes 1 to 5, nodes listed out of graph order, two heads."""
    import torch.nn.functional as F

    from hypergvl.models.nn.sparse import GraphGroups
    torch.manual_seed(0)
    sizes = [3, 1, 5, 3, 2, 5, 5]
    batch = torch.repeat_interleave(torch.arange(len(sizes)), torch.tensor(sizes))
    batch = batch[torch.randperm(batch.numel())]
    q, k, v = torch.randn(3, 2, batch.numel(), 4, dtype=torch.float64).unbind(0)
    scores = q @ k.transpose(1, 2) / 2.0
    scores = scores.masked_fill(batch[:, None] != batch[None, :], float("-inf"))
    expected = torch.softmax(scores, -1) @ v
    def block(g, n, *qkv):
        qkv = (t.view(2, g, n, -1).transpose(0, 1) for t in qkv)
        return F.scaled_dot_product_attention(*qkv).transpose(0, 1).reshape(2, g * n, -1)
    torch.testing.assert_close(GraphGroups(batch).apply(block, q, k, v), expected)


def _hypergt(**kwargs):
    torch.manual_seed(0)
    return build_model("HyperGT", in_channels=4, hidden_channels=6, out_channels=3, heads=2, random_features=5,
                       positional_encoding="none", **kwargs)


@pytest.mark.parametrize("build", [small_dphgnn, _hypergt], ids=["DPHGNN", "HyperGT"])
def test_attention_scope_graph_keeps_each_graph_to_itself(build):
    """In a block-diagonal batch, ``attention_scope="graph"`` gives every graph the output it has alone, and a
    gradient; the reference's ``"batch"`` scope mixes the graphs; on one hypergraph (no ``batch``) the two agree."""
    graphs = [random_hypergraph(s, num_nodes=n) for s, n in ((0, 7), (1, 9), (2, 7))]
    xs = [torch.randn(n, 4, generator=torch.Generator().manual_seed(n + i)) for i, (_, _, n) in enumerate(graphs)]
    offsets = torch.tensor([0] + [n for _, _, n in graphs]).cumsum(0)
    edge_offsets = torch.tensor([0] + [len(e) for e, _, _ in graphs]).cumsum(0)
    hei = torch.cat([h + torch.stack([offsets[i], edge_offsets[i]])[:, None] for i, (_, h, _) in enumerate(graphs)], 1)
    batch = torch.repeat_interleave(torch.arange(3), torch.tensor([n for _, _, n in graphs]))
    x, m = torch.cat(xs), int(edge_offsets[-1])
    out = {}
    for scope in ("graph", "batch"):
        model = build(attention_scope=scope).eval()
        with torch.no_grad():
            out[scope], out[scope, None] = model(x, hei, m, batch=batch), model(x, hei, m)
            alone = torch.cat([model(xi, h, len(e)) for xi, (e, h, _) in zip(xs, graphs)])
        if scope == "graph":
            torch.testing.assert_close(out[scope], alone, rtol=1e-5, atol=1e-6)
            model.train()(x, hei, m, batch=batch).square().sum().backward()
            grads = [p.grad for p in model.parameters() if p.requires_grad]
            assert all(g is not None and torch.isfinite(g).all() for g in grads)
            assert any(g.abs().sum() > 0 for g in grads)
        else:
            assert not torch.allclose(out[scope], alone, rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(out["batch"], out["batch", None])  # the reference's scope ignores ``batch``
    torch.testing.assert_close(out["graph", None], out["batch", None])  # one hypergraph: one scope
    with pytest.raises(ValueError, match="attention_scope"):
        build(attention_scope="global")


def test_task_module_gives_batch_only_to_encoders_that_take_it():
    from hypergvl.models.tasks import base as T
    seen = {}

    class Plain(torch.nn.Module):
        def forward(self, x, hyperedge_index, num_hyperedges):
            return x

    class Batched(Plain):
        def forward(self, x, hyperedge_index, num_hyperedges, batch=None):
            seen["batch"] = batch
            return x

    class Head(torch.nn.Module):
        def forward(self, z, batch, num_graphs):
            return z

    x, hei, batch = torch.randn(3, 2), torch.tensor([[0, 1, 2], [0, 0, 1]]), torch.tensor([0, 0, 1])
    for enc in (Plain(), Batched()):
        T.TaskModule(enc, Head())(x, hei, 2, batch=batch, num_graphs=2)  # Plain would raise on a ``batch``
    assert seen["batch"] is batch
