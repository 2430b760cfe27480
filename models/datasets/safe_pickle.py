"""Restricted unpickling for raw dataset files downloaded from upstream repositories.

docs/design.md (Conventions): "Unpickling data from outside uses a restricted unpickler (builtins containers,
numpy arrays/dtypes, scipy sparse matrices only)." A pickle may name any importable callable and have it
called (``__reduce__`` returning ``(os.system, ("...",))``); the restricted unpickler resolves only builtin
containers and scalars (also under Python 2's ``__builtin__``, as HyperGCN's Pubmed pickle uses), numpy
``ndarray`` / ``dtype`` / ``_reconstruct`` / ``scalar`` (numpy 1 and 2 module names) and scipy sparse
matrix/array classes, and refuses every other global with ``pickle.UnpicklingError`` naming it, before
anything is called.

The project has one implementation of that policy, :mod:`hypergvl.safe_pickle` (it also reads
HyperGCN files); this module is the entry point the dataset loaders use. It is imported on first use so that
``import hypergvl.models.datasets`` stays light.

>>> import pickle
>>> loads(pickle.dumps({"e0": [0, 1], "e1": {2, 3}}))
{'e0': [0, 1], 'e1': {2, 3}}
"""
from __future__ import annotations

from typing import Any

from hypergvl.safe_pickle import safe_load

__all__ = ["loads"]


def loads(data: bytes) -> Any:
    """Unpickle ``data`` with the restricted unpickler (``encoding="latin1"`` for Python 2 pickles, as numpy
    advises). Raises ``pickle.UnpicklingError`` naming the first global outside the allow-list."""
    return safe_load(data, encoding="latin1")
