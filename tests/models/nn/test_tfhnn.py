"""TF-HNN (issue 12): the lazy propagation (the first linear map applied before propagating sparse features) equals
eq. 9 with the dense W, outputs and gradients, and is chosen only where it is cheaper."""
from __future__ import annotations

import pytest
import torch

from hnn_toys import dense_incidence, param_grads, random_hypergraph, sparse_features
from hypergvl.models.nn import build_model
from hypergvl.models.nn import tfhnn


def naive_tf_features(x, edges, n, steps, alpha):
    """TF-HNN eq. 9 with the dense W = D^-1/2 (H De^-1 H^T + I) D^-1/2."""
    h = dense_incidence(edges, n, torch.float64)
    de = h.sum(0)
    a = h @ torch.diag(torch.where(de > 0, 1 / de, 0)) @ h.t() + torch.eye(n, dtype=torch.float64)
    d = a.sum(1).rsqrt()
    w = d[:, None] * a * d[None, :]
    out = sum(alpha * (1 - alpha) ** k * torch.linalg.matrix_power(w, k) @ x for k in range(steps))
    return out + (1 - alpha) ** steps * torch.linalg.matrix_power(w, steps) @ x


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("steps,mlp_layers", [(2, 3), (1, 1), (3, 2)])
def test_tfhnn_lazy_propagation_equals_the_dense_formula(seed, steps, mlp_layers, monkeypatch):
    """Sparse features with the first Linear map applied before the propagation (forced here: the toy is too
    small for the cost rule): the same outputs and weight gradients as MLP(Z) with Z from the dense formula."""
    edges, hei, n = random_hypergraph(seed)
    x = sparse_features(n, 7, 0.3, seed)
    torch.manual_seed(seed)
    model = build_model("TF-HNN", in_channels=7, hidden_channels=5, out_channels=3, num_layers=steps,
                        alpha=0.3, mlp_num_layers=mlp_layers, dropout=0.0).double().train()
    monkeypatch.setattr(tfhnn, "SPARSE_COST", 0)
    assert tfhnn.propagate_lazily(model.incidence(x, hei, None), model.features(x), steps)
    out = model(x, hei)
    out.square().sum().backward()
    fast = param_grads(model)
    model.zero_grad()
    naive = model.decoder(naive_tf_features(x.to_dense(), edges, n, steps, 0.3))
    naive.square().sum().backward()
    torch.testing.assert_close(out, naive)
    for k, g in param_grads(model).items():
        torch.testing.assert_close(fast[k], g, msg=k)
    assert not any(isinstance(entry[-1], torch.Tensor) for entry in model._cache._entries)  # no dense Z kept


def test_tfhnn_chooses_the_lazy_form_only_for_sparse_features_where_it_is_cheaper():
    edges, hei, n = random_hypergraph(0, num_nodes=300, num_edges=200, max_order=4)
    model = build_model("TF-HNN", in_channels=500, hidden_channels=8, out_channels=2)
    inc = model.incidence(torch.zeros(n, 500), hei, None)
    sparse = model.features(sparse_features(n, 500, 0.01, 0).float())
    assert tfhnn.propagate_lazily(inc, sparse, 2)  # 20 (1.5e3 + 2 (nnz W + N)) < 1.5e5
    assert not tfhnn.propagate_lazily(inc, model.features(sparse_features(n, 5, 0.01, 0).float()), 2)  # F small
    assert not tfhnn.propagate_lazily(inc, torch.randn(n, 500), 2)  # dense features: Z cached
