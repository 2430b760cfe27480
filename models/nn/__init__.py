"""The hypergraph neural network zoo of DHG-Bench (section 3.2, appendix A.2): one model per file.

>>> from hypergvl.models.nn import MODELS, build_model
>>> model = build_model("HGNN", in_channels=16, hidden_channels=32, out_channels=3)

Every model takes ``(in_channels, hidden_channels, out_channels, num_layers=2, dropout=0.5, *, <keywords>)``
and is called as ``model(x, hyperedge_index, num_hyperedges=None) -> [num_nodes, out_channels]``.
"""
from .registry import MODELS, UnknownModelError, build_model, model_defaults, register_model
from . import (allset, cegat, cegcn, edhnn, hcha, hgnn, hnhn, hypergcn, mlp, tfhnn, unigcnii,  # noqa: F401
               unignn)  # importing the model modules fills MODELS
from . import dphgnn, ehnn, thypergnn  # noqa: F401
from . import hjrl, hypernd, legcn, phenomnn, sheafhypergnn  # noqa: F401
from . import hypergt  # noqa: F401

__all__ = ["MODELS", "register_model", "build_model", "model_defaults", "UnknownModelError"]
