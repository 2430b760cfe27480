"""UniGAT: the speed and memory rewrite computes the same function as the per-incidence formula it replaced
(``hnn_toys.assert_same_function``)."""
from __future__ import annotations

import pytest

from hnn_toys import assert_same_function


@pytest.mark.parametrize("kwargs", [{}, {"heads": 3, "first_aggregate": "sum", "use_norm": True},
                                    {"heads": 1, "num_layers": 3, "attention_dropout": 0.0}])
def test_unigat_same_function(kwargs, monkeypatch):
    assert_same_function("UniGAT", monkeypatch, **kwargs)
