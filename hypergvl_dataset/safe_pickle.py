"""A restricted unpickler for data files that come from outside the project.

docs/design.md (Conventions): "Unpickling data from outside uses a restricted unpickler (builtins containers,
numpy arrays/dtypes, scipy sparse matrices only)." A pickle can name any importable callable and call it
(``__reduce__`` -> ``os.system``), so :func:`safe_load` resolves only the globals listed below and refuses
everything else with :class:`pickle.UnpicklingError` naming the refused ``module.name`` — before anything
is called.

Allowed:

- builtin containers and scalars (``set``, ``frozenset``, ``list``, ``dict``, ``tuple``, ``bytes``,
  ``bytearray``, ``str``, ``int``, ``float``, ``complex``, ``bool``, ``range``, ``slice``), also under their
  Python 2 module name ``__builtin__`` (HyperGCN's PubMed pickle uses ``__builtin__.set``),
  ``_codecs.encode`` (how protocol-2 pickles written by Python 3 store ``bytes``), and ``object`` with
  ``copyreg._reconstructor`` (protocols 0-1 rebuild instances of the allowed classes with them: the
  reconstructor only calls ``__new__``/``__init__`` of classes that themselves passed this list);
- numpy: ``numpy.ndarray``, ``numpy.dtype``, and ``_reconstruct`` / ``scalar`` / ``_frombuffer`` from
  ``numpy.core.multiarray`` / ``numpy.core.numeric`` or their numpy-2 names ``numpy._core.*``;
- scipy sparse matrix and array classes (``csr_matrix``, ``coo_array``, ...) from ``scipy.sparse`` or its
  submodules, checked to be real sparse classes once resolved.

>>> import pickle
>>> safe_load(pickle.dumps({"a": [1, 2], "b": {3}}))
{'a': [1, 2], 'b': {3}}
"""
from __future__ import annotations

import _compat_pickle
import io
import pickle
from typing import IO, Any

__all__ = ["safe_load", "RestrictedUnpickler"]

_BUILTINS = frozenset({"set", "frozenset", "list", "dict", "tuple", "bytes", "bytearray", "str", "int",
                       "float", "complex", "bool", "range", "slice", "object"})
_NUMPY = {
    "numpy": frozenset({"ndarray", "dtype"}),
    "numpy.core.multiarray": frozenset({"_reconstruct", "scalar"}),
    "numpy._core.multiarray": frozenset({"_reconstruct", "scalar"}),
    "numpy.core.numeric": frozenset({"_frombuffer"}),
    "numpy._core.numeric": frozenset({"_frombuffer"}),
}
_SPARSE_CLASSES = frozenset(f"{fmt}_{kind}" for fmt in ("csr", "csc", "coo", "lil", "dok", "bsr", "dia")
                            for kind in ("matrix", "array"))


class RestrictedUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` whose :meth:`find_class` admits only the allow-list of this module."""

    def find_class(self, module: str, name: str) -> Any:
        # Python 2 names (``__builtin__.set``) map to their Python 3 names, as the stock unpickler maps them.
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        allowed = (
            (module == "builtins" and name in _BUILTINS)
            or (module == "_codecs" and name == "encode")
            or (module == "copyreg" and name == "_reconstructor")
            or name in _NUMPY.get(module, ())
            or ((module == "scipy.sparse" or module.startswith("scipy.sparse.")) and name in _SPARSE_CLASSES)
        )
        if not allowed:
            raise pickle.UnpicklingError(
                f"refused to unpickle global {module}.{name}: only builtin containers/scalars, numpy arrays "
                "and dtypes, and scipy sparse matrices are allowed")
        if module.startswith("scipy."):
            # Resolve from the public namespace: ``scipy.sparse.csr`` (old pickles) is deprecated there.
            # lazy: scipy.sparse 2.7 s; only a pickle holding a sparse matrix needs it
            import scipy.sparse

            obj = getattr(scipy.sparse, name)
            if not (isinstance(obj, type) and issubclass(obj, (scipy.sparse.spmatrix, scipy.sparse.sparray))):
                raise pickle.UnpicklingError(f"refused to unpickle global {module}.{name}: not a sparse class")
            return obj
        if module.startswith("numpy.core."):  # numpy >= 1.26 has numpy._core; numpy 2 deprecates numpy.core
            module = "numpy._core." + module[len("numpy.core."):]
        return super().find_class(module, name)


def safe_load(data: bytes | bytearray | memoryview | IO[bytes], *, encoding: str = "latin1") -> Any:
    """Unpickle ``data`` (bytes or a binary file object) through :class:`RestrictedUnpickler`.

    ``encoding="latin1"`` is what numpy recommends for Python 2 pickles (it leaves array buffers intact).
    Raises ``pickle.UnpicklingError`` naming the first global outside the allow-list.
    """
    fileobj = io.BytesIO(data) if isinstance(data, (bytes, bytearray, memoryview)) else data
    return RestrictedUnpickler(fileobj, encoding=encoding).load()
