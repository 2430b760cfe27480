"""PhenomNN (issue 12): the scalable operators (factored for large hyperedges) against DHG-Bench's dense A_beta,
A_gamma and degree matrices."""
from __future__ import annotations

import pytest
import torch

from hnn_toys import SEEDS, dense_h, inv, random_hypergraph
from hypergvl.models.nn import build_model


def naive_phenomnn(model, x, hei, n):
    """Dense A_beta, A_gamma, D_beta, D_gamma exactly as DHG-Bench's scipy preprocessing builds them."""
    m = int(hei[1].max()) + 1
    h = dense_h(hei, n, m)
    eye = torch.eye(n, dtype=torch.float64)
    c1 = h @ h.t() + eye
    b = torch.diag(inv(h.sum(0)))
    c2 = h @ b @ h.t() + eye
    a_beta = c1 / torch.outer(c1.sum(1).sqrt(), c1.sum(1).sqrt())
    a_gamma = c2 / torch.outer(c2.sum(1).sqrt(), c2.sum(1).sqrt())
    q = model.lambda0 * a_beta.sum(1) + model.lambda1 * a_gamma.sum(1) + 1.0
    y0 = torch.relu(model.encoder(x))
    y = y0
    for _ in range(model.steps):
        y = torch.relu((1 - model.alpha) * y + model.alpha * (model.lambda0 * a_beta @ y + model.lambda1 * a_gamma @ y
                                                                + y0) / q[:, None])
    return model.decoder(y)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kwargs", [{}, {"lambda0": 10.0, "lambda1": 0.5, "alpha": 0.3, "encoder_layers": 2,
                                         "decoder_layers": 2, "num_layers": 5}])
def test_phenomnn_equals_dense_operators(seed, kwargs):
    _, hei, n = random_hypergraph(seed)
    torch.manual_seed(seed)
    model = build_model("PhenomNN", in_channels=4, hidden_channels=6, out_channels=3, **kwargs).double().eval()
    x = torch.randn(n, 4, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(model(x, hei), naive_phenomnn(model, x, hei, n))


def test_phenomnn_large_hyperedges_use_the_factored_operator():
    """Hyperedges of 40 nodes: the operators stay as H and H^T (no clique expansion) and agree with dense."""
    n = 45
    hei = torch.stack([torch.cat([torch.arange(40), torch.arange(5, 45)]), torch.repeat_interleave(torch.arange(2), 40)])
    torch.manual_seed(0)
    model = build_model("PhenomNN", in_channels=3, hidden_channels=4, out_channels=2, num_layers=3).double().eval()
    x = torch.randn(n, 3, dtype=torch.float64)
    with torch.no_grad():
        out = model(x, hei)
        assert len(model.incidence(x, hei, None).memo("phenomnn", lambda: None).a_beta.factors) == 2
        torch.testing.assert_close(out, naive_phenomnn(model, x, hei, n))
