"""``hypergvl`` imported from a checkout's folders rather than from an installed copy.

``pyproject.toml``'s ``package-dir`` maps the core (``hypergvl_dataset/``) to ``hypergvl`` and the layers
(``models/``, ``evaluators/``, ``router/``, ``space/``) to its subpackages; this maps them the same way onto any
checkout or ``git archive`` export. Used where the package is not installed (``gpu_smoke.py`` on the lent GPU
machine, which gets the working tree only) and where another commit's code must run instead of the installed one
(``speed_since.py``)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def import_hypergvl_from(root: Path) -> ModuleType:
    """Import ``hypergvl`` from the checkout at ``root`` into this process, first dropping any installed or editable
    finder of it, so that every ``hypergvl.*`` submodule imported afterwards comes from ``root`` too."""
    root = Path(root).resolve()
    sys.meta_path[:] = [f for f in sys.meta_path if "hypergvl" not in getattr(f, "__module__", "")]
    sys.path_hooks[:] = [h for h in sys.path_hooks if "hypergvl" not in getattr(h, "__module__", "")]
    sys.path_importer_cache.clear()
    spec = importlib.util.spec_from_file_location(
        "hypergvl", root / "hypergvl_dataset" / "__init__.py",
        submodule_search_locations=[str(root / "hypergvl_dataset"), str(root)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["hypergvl"] = module
    spec.loader.exec_module(module)
    return module
