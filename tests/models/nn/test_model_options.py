"""The DHG-Bench compatibility options and bad arguments of LEGCN, HyperND, PhenomNN, SheafHyperGNN and HJRL
(issue 12): every other setting runs forward and backward, takes sparse input and is permutation equivariant, and
each model refuses its bad arguments. HyperGT's: ``test_hypergt.py``."""
from __future__ import annotations

import pytest
import torch

from hnn_toys import random_hypergraph
from hypergvl.models.nn import build_model


VARIANTS = [
    ("LEGCN", {"expansion": "isolated", "num_layers": 3}),
    ("LEGCN", {"vertex_weight": 0.0, "edge_weight": 2.5}),
    ("HyperND", {"p": 1.0, "alpha": 0.0, "aggregate": "mean", "num_layers": 1}),
    ("HyperND", {"p": 3.0, "steps": 3, "tol": 0.0, "normalization": "none"}),
    ("PhenomNN", {"lambda0": 0.0, "lambda1": 5.0, "alpha": 0.5, "num_layers": 2, "encoder_layers": 2}),
    ("SheafHyperGNN", {"normalisation": "rw", "stalk_dim": 3, "input_norm": False, "num_layers": 3}),
    ("SheafHyperGNN", {"restriction_grad": False, "num_layers": 1}),
    ("HJRL", {"reconstruction": "dhgbench", "num_layers": 1, "row_normalize": False}),
    ("HJRL", {"reconstruction_weight": 0.0, "num_layers": 3}),
]


@pytest.mark.parametrize("name,kwargs", VARIANTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(VARIANTS)])
def test_other_settings_forward_backward_sparse_and_permutation(name, kwargs):
    _, hei, n = random_hypergraph(11)
    torch.manual_seed(0)
    model = build_model(name, in_channels=4, hidden_channels=6, out_channels=3, **kwargs)
    x = torch.rand(n, 4) * (torch.rand(n, 4) < 0.7)
    x[:, 0] = 1.0
    out = model(x.to_sparse_csr(), hei)
    assert out.shape == (n, 3) and torch.isfinite(out).all()
    out.square().sum().backward()
    frozen = {k for k, p in model.named_parameters() if p.grad is None}
    assert all(k.startswith("builders.") for k in frozen) and bool(frozen) == (kwargs.get("restriction_grad") is False)
    model.eval()
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(2))
    relabel = torch.argsort(perm)
    with torch.no_grad():
        base = model(x, hei)
        torch.testing.assert_close(model(x.to_sparse(), hei), base, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(model(x[perm], torch.stack([relabel[hei[0]], hei[1]])), base[perm],
                                   rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,kwargs", [
    ("LEGCN", {"expansion": "clique"}), ("LEGCN", {"vertex_weight": -1.0}),
    ("HyperND", {"p": 0.0}), ("HyperND", {"alpha": 1.5}), ("HyperND", {"steps": 0}), ("HyperND", {"aggregate": "max"}),
    ("PhenomNN", {"lambda0": -1.0}), ("PhenomNN", {"decoder_hidden": 0}), ("PhenomNN", {"alpha": 2.0}),
    ("SheafHyperGNN", {"stalk_dim": 0}), ("SheafHyperGNN", {"normalisation": "none"}),
    ("SheafHyperGNN", {"restriction_grad": 0}),
    ("HJRL", {"reconstruction": "bce"}), ("HJRL", {"reconstruction_weight": -0.1}),
])
def test_bad_model_specific_arguments(name, kwargs):
    with pytest.raises(ValueError):
        build_model(name, in_channels=4, hidden_channels=6, out_channels=3, **kwargs)
