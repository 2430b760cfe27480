"""The memory claim of the AllSet, ED-HNN and UniGAT rewrites: no ``nnz x C`` tensor is kept for the backward
(autograd's saved-tensor hooks). CEGAT's counterpart: ``test_cegat.py``."""
from __future__ import annotations

import pytest
import torch

from hnn_toys import hypergraph_with_duplicate
from hypergvl.models.nn import build_model, edhnn


def _saved_shapes(model, x, index, m):
    shapes = []

    def pack(t):
        shapes.append(tuple(t.shape))
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(x, index, m).sum().backward()
    return shapes


@pytest.mark.parametrize("name, kwargs", [
    ("ED-HNN", {"mlp1_layers": 0, "mlp2_layers": 1, "mlp3_layers": 1}),
    ("ED-HNN", {"mlp2_layers": 2, "chunk": True}),
    ("UniGAT", {"heads": 2}),
    ("AllSetTransformer", {"heads": 2}),
    ("AllDeepSets", {}),
])
def test_no_incidence_by_channel_tensor_kept_for_backward(name, kwargs, monkeypatch):
    """The rewrites keep at most per-incidence scalars (one per head) for the backward, never ``nnz x C``."""
    if kwargs.pop("chunk", False):
        monkeypatch.setattr(edhnn, "CHUNK_FLOATS", 64)
    index, n, m = hypergraph_with_duplicate(5, num_nodes=12, num_edges=9)
    index = torch.cat([index, index], dim=1)                                # nnz distinct from N and M
    nnz = index.size(1)
    assert nnz not in (n, m)
    torch.manual_seed(0)
    model = build_model(name, in_channels=5, hidden_channels=8, out_channels=2, **kwargs).train()
    shapes = _saved_shapes(model, torch.rand(n, 5), index, m)
    assert shapes
    kept = [s for s in shapes if s and s[0] == nnz and len(s) > 1 and s[-1] >= 4]
    assert not kept, kept
