"""The wheel's packages, found rather than listed: every folder under each entry of ``pyproject.toml``'s
``[tool.setuptools] package-dir`` mapping (``hypergvl.models`` = ``models/`` ...) is a package of the one ``hypergvl``
namespace, whether it holds an ``__init__.py`` or not (an evaluate metric folder such as
``evaluators/hypergvl_accuracy/`` has none), except the data folders ``[tool.hypergvl] not-packages`` names (their
files are not shipped, or ship as package data of their parent). setuptools' own ``packages.find`` cannot map several
top-level folders into one namespace, hence this file; everything else is in ``pyproject.toml``."""
from fnmatch import fnmatch
from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.config.pyprojecttoml import read_configuration

HERE = Path(__file__).resolve().parent


def packages() -> list[str]:
    config = read_configuration(HERE / "pyproject.toml", expand=False)
    package_dir = config["tool"]["setuptools"]["package-dir"]
    excluded = config["tool"]["hypergvl"]["not-packages"]
    found = []
    for top, folder in package_dir.items():
        found += [top] + [f"{top}.{name}" for name in find_namespace_packages(HERE / folder)]
    return sorted(p for p in found if not any(fnmatch(p, pattern) for pattern in excluded)
                  and "__pycache__" not in p.split("."))


setup(packages=packages())
