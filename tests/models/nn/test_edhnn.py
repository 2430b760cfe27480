"""ED-HNN: the speed and memory rewrites (also with the per-incidence MLP in checkpointed chunks) compute the same
function as the per-incidence formula they replaced (``hnn_toys.assert_same_function``)."""
from __future__ import annotations

import pytest

from hnn_toys import assert_same_function
from hypergvl.models.nn import edhnn


@pytest.mark.parametrize("kwargs, size", [
    ({}, (11, 8)),                                                           # defaults: 2-layer MLPs, ln, mean
    ({}, (7, 12)),                                                           # more hyperedges than nodes
    ({"mlp1_layers": 0, "mlp2_layers": 1, "mlp3_layers": 1, "num_layers": 2}, (11, 8)),  # the Cora config's shape
    ({"mlp1_layers": 0, "mlp2_layers": 1, "mlp3_layers": 1, "num_layers": 2}, (7, 12)),
    ({"mlp2_layers": 1, "aggregate": "sum", "input_norm": False, "activation": "relu"}, (7, 12)),
    ({"mlp2_layers": 1, "normalization": "none", "alpha": 0.0}, (11, 8)),
    ({"mlp2_layers": 0, "mlp1_layers": 1}, (11, 8)),
    ({"mlp2_layers": 3, "aggregate": "sum", "dropout_order": "dhgbench"}, (7, 12)),
    ({"normalization": "bn"}, (11, 8)),
])
def test_edhnn_same_function(kwargs, size, monkeypatch):
    assert_same_function("ED-HNN", monkeypatch, size=size, **kwargs)


@pytest.mark.parametrize("kwargs", [{"mlp2_layers": 2}, {"mlp2_layers": 3, "aggregate": "sum"},
                                    {"mlp2_layers": 2, "input_norm": False}])
def test_edhnn_chunked_messages_same_function(kwargs, monkeypatch):
    """Above CHUNK_FLOATS the per-incidence MLP runs chunk by chunk under checkpoint; chunks of 4 incidences here.
    With one hidden layer the dropout masks are the same as in one piece, so training mode agrees too."""
    monkeypatch.setattr(edhnn, "CHUNK_FLOATS", 24)
    modes = ("eval", "train") if kwargs["mlp2_layers"] == 2 else ("eval",)
    assert_same_function("ED-HNN", monkeypatch, modes=modes, **kwargs)
