"""CEGAT's attention layer: the attention-weighted sum as CSR products (no ``edges x heads x channels`` message
tensor, forward or backward) computes PyG's ``GATConv``, values and gradients, on the clique expansion with one
self-loop per node, and keeps only per-edge scalars for the backward."""
from __future__ import annotations

import pytest
import torch
from torch_geometric.nn import GATConv

from hnn_toys import random_hypergraph
from hypergvl.models.nn import build_model
from hypergvl.models.nn import cegat


def _layer_and_graph(seed: int, concat: bool, heads: int = 3):
    _, hei, n = random_hypergraph(seed, num_nodes=14, num_edges=10, max_order=5)  # an isolated node, an order-1 edge
    torch.manual_seed(seed)
    model = build_model("CEGAT", in_channels=5, hidden_channels=4, out_channels=3, num_layers=1, output_heads=heads,
                        use_bn=False, dropout=0.0)
    layer = model.convs[0]
    layer.concat = concat
    layer.bias = torch.nn.Parameter(torch.randn(heads * 3 if concat else 3))
    graph = cegat.clique_attention(model.incidence(torch.zeros(n, 5), hei, None))
    return layer, graph, torch.randn(n, 5)


@pytest.mark.parametrize("seed,concat", [(0, True), (1, False), (2, True)])
def test_attention_layer_equals_pyg_gatconv_values_and_gradients(seed, concat):
    layer, (source, target, pattern), x = _layer_and_graph(seed, concat)
    ref = GATConv(5, 3, heads=3, concat=concat, add_self_loops=False)  # the self-loops are in the edges already
    with torch.no_grad():
        ref.lin.weight.copy_(layer.lin.weight)
        ref.att_src.copy_(layer.att_src)
        ref.att_dst.copy_(layer.att_dst)
        ref.bias.copy_(layer.bias)
    results = []
    for forward in (lambda z: layer(z, source, target, pattern), lambda z: ref(z, torch.stack([source, target]))):
        z = x.clone().requires_grad_(True)
        out = forward(z)
        (out * torch.arange(out.numel(), dtype=out.dtype).view_as(out).sin()).sum().backward()
        module = layer if len(results) == 0 else ref
        results.append([out.detach(), z.grad, module.lin.weight.grad, module.att_src.grad, module.att_dst.grad,
                        module.bias.grad])
    for got, want in zip(*results):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_no_edge_by_channel_tensor_is_kept_for_backward():
    """What autograd saves is at most per-edge scalars (one per head) or node-sized, never edges x heads x C."""
    layer, (source, target, pattern), x = _layer_and_graph(3, True, heads=4)
    shapes = []

    def pack(t):
        shapes.append(tuple(t.shape))
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        layer(x.requires_grad_(True), source, target, pattern).sum().backward()
    edges = source.numel()
    assert shapes and not [s for s in shapes if len(s) == 3 and s[0] == edges]
    assert max(torch.Size(s).numel() for s in shapes) < edges * 4 * 3  # below one message tensor


def test_clique_attention_holds_every_self_loop_once_and_each_pair_once():
    edges, hei, n = random_hypergraph(3, num_nodes=12, num_edges=8)
    inc = build_model("CEGAT", in_channels=2, hidden_channels=2, out_channels=2).incidence(torch.zeros(n, 2), hei, None)
    source, target, pattern = cegat.clique_attention(inc)
    pairs = list(zip(source.tolist(), target.tolist()))
    expected = {(u, v) for e in edges for u in e for v in e} | {(v, v) for v in range(n)}
    assert set(pairs) == expected and len(pairs) == len(expected)
    assert pattern.num_entries == len(pairs)
