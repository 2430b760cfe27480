"""Restricted unpickling for raw dataset files downloaded from upstream repositories.

DESIGN.md (Conventions): "Unpickling data from outside uses a restricted unpickler (builtins containers,
numpy arrays/dtypes, scipy sparse matrices only)." A pickle may name any importable callable and have it
called (``__reduce__`` returning ``(os.system, ("...",))``), so :class:`SafeUnpickler` resolves only the
globals below and refuses every other one with :class:`pickle.UnpicklingError` naming it, before anything
is called.

Allowed globals:

- builtin containers and scalars (``dict``, ``list``, ``set``, ``frozenset``, ``tuple``, ``bytes``,
  ``bytearray``, ``str``, ``int``, ``float``, ``complex``, ``bool``), also under the Python 2 module name
  ``__builtin__`` (HyperGCN's Pubmed hypergraph is a protocol-2 pickle of ``__builtin__.set``), and
  ``_codecs.encode`` (how protocol-2 pickles written by Python 3 store ``bytes``);
- numpy: ``numpy.ndarray``, ``numpy.dtype`` and ``_reconstruct`` / ``scalar`` from
  ``numpy.core.multiarray`` (numpy 1) or ``numpy._core.multiarray`` (numpy 2);
- scipy sparse matrix / array classes (``csr_matrix``, ``coo_array``, ...) from ``scipy.sparse`` or one of
  its private submodules (``scipy.sparse.csr``, ``scipy.sparse._csr``), resolved from the public
  ``scipy.sparse`` namespace.

>>> import pickle
>>> loads(pickle.dumps({"e0": [0, 1], "e1": {2, 3}}))
{'e0': [0, 1], 'e1': {2, 3}}
"""
from __future__ import annotations

import _compat_pickle
import io
import pickle
from typing import Any

__all__ = ["SafeUnpickler", "loads"]

_BUILTINS = frozenset({"dict", "list", "set", "frozenset", "tuple", "bytes", "bytearray", "str", "int",
                       "float", "complex", "bool"})
_NUMPY = {
    "numpy": frozenset({"ndarray", "dtype"}),
    "numpy.core.multiarray": frozenset({"_reconstruct", "scalar"}),
    "numpy._core.multiarray": frozenset({"_reconstruct", "scalar"}),
}
_SPARSE = frozenset(f"{fmt}_{kind}" for fmt in ("csr", "csc", "coo", "lil", "dok", "bsr", "dia")
                    for kind in ("matrix", "array"))


class SafeUnpickler(pickle.Unpickler):
    """A :class:`pickle.Unpickler` whose :meth:`find_class` admits only the allow-list of this module."""

    def find_class(self, module: str, name: str) -> Any:
        # Python 2 names map to Python 3 names exactly as the stock unpickler maps them (fix_imports).
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        if module == "builtins" and name in _BUILTINS:
            return super().find_class(module, name)
        if module == "_codecs" and name == "encode":
            return super().find_class(module, name)
        if name in _NUMPY.get(module, ()):
            import numpy

            if module == "numpy":
                return getattr(numpy, name)
            return getattr(numpy._core.multiarray if hasattr(numpy, "_core") else numpy.core.multiarray, name)
        if (module == "scipy.sparse" or module.startswith("scipy.sparse.")) and name in _SPARSE:
            import scipy.sparse

            return getattr(scipy.sparse, name)
        raise pickle.UnpicklingError(
            f"refused to unpickle global '{module}.{name}': only builtin containers, numpy arrays/dtypes and "
            "scipy sparse matrices are allowed in raw dataset files")


def loads(data: bytes) -> Any:
    """Unpickle ``data`` through :class:`SafeUnpickler`.

    ``encoding="latin1"`` is numpy's advice for Python 2 pickles: it keeps array buffers byte-exact.
    Raises ``pickle.UnpicklingError`` naming the first global outside the allow-list.
    """
    return SafeUnpickler(io.BytesIO(data), encoding="latin1").load()
