"""The installed package lives in a user's project: the wheel puts one name, ``hypergvl``, on the path.

The project's folders are called ``models/``, ``evaluators/``, ``router/`` and ``space/`` (the card's layout), and
most machine-learning projects have a ``models/`` package of their own. The wheel maps every folder under the one
``hypergvl`` namespace (``pyproject.toml``, setuptools ``package-dir``), so a user's packages and ours never meet.
Here the wheel is built from this checkout, installed into a folder of its own (no dependencies: those of the test
environment serve), and run from a user project that holds its own ``models``, ``router``, ``evaluators`` and
``space`` packages, through the ``hypergvl`` command and the Python API."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
USER_PACKAGES = ("models", "router", "evaluators", "space")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the wheel, the folder it is installed into)."""
    from hypergvl.space.deploy import build_wheel

    base = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(base / "dist")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(base / "site"),
                    str(wheel)], check=True, timeout=600)
    return wheel, base / "site"


@pytest.fixture()
def user_project(tmp_path) -> Path:
    """A user's project: its own packages under the names of our folders."""
    for name in USER_PACKAGES:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("OWNER = 'user'\n")
    return tmp_path


def run(site: Path, cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``args`` with the installed wheel ahead of this checkout's editable install, from ``cwd`` (on the path,
    as it is for ``python -c`` and ``python -m``)."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_wheel_installs_one_top_level_name(installed):
    wheel, site = installed
    with zipfile.ZipFile(wheel) as z:
        tops = {n.split("/")[0] for n in z.namelist()}
        names = z.namelist()
    assert {t for t in tops if not t.endswith(".dist-info")} == {"hypergvl"}
    # every folder of the checkout's packages is in it, data files included (configs, profiles, metric cards, YAMLs,
    # the paper tables `hypergvl study` compares against: once missing, so an installed study crashed at its report)
    for folder, package in (("hypergvl_dataset", "hypergvl"), ("models", "hypergvl/models"),
                            ("evaluators", "hypergvl/evaluators"), ("router", "hypergvl/router"),
                            ("space", "hypergvl/space")):
        for f in (ROOT / folder).rglob("*"):
            rel = f.relative_to(ROOT / folder)
            if f.suffix in (".py", ".yaml", ".json", ".csv") and not {"__pycache__", "results", "seed_studies", ".data"} & set(rel.parts):
                assert f"{package}/{rel.as_posix()}" in names, f"{folder}/{rel} is not in the wheel"
    entry_points = (site / f"{wheel.name.split('-py3')[0]}.dist-info" / "entry_points.txt").read_text()
    assert "hypergvl = hypergvl.cli:main" in entry_points
    assert not any(f"= {p}." in entry_points or f"= {p}\n" in entry_points for p in (*USER_PACKAGES, "hypergvl_dataset"))


def test_python_api_beside_the_users_own_packages(installed, user_project):
    _, site = installed
    code = """
import models, router, evaluators, space
assert {models.OWNER, router.OWNER, evaluators.OWNER, space.OWNER} == {'user'}
import hypergvl, hypergvl.models.nn, hypergvl.models.train, hypergvl.evaluators.harness, hypergvl.space.scoring
from hypergvl.router import WiseHyGR
from hypergvl.evaluators import metric_path
from hypergvl.models.nn import MODELS, build_model
import evaluate
metric = evaluate.load(metric_path("hypergvl_accuracy"))
print(hypergvl.__file__)
print(sorted(MODELS)[:3], WiseHyGR.__module__, metric.name)
assert models.OWNER == 'user'   # still the user's, after all of ours loaded
"""
    r = run(site, user_project, sys.executable, "-c", code)
    assert r.returncode == 0, r.stderr[-3000:]
    where, rest = r.stdout.strip().splitlines()[:2]
    assert Path(where).is_relative_to(site)  # the wheel's copy, not the checkout's
    assert "hypergvl.router.model" in rest and "hypergvl_accuracy" in rest


def test_cli_from_a_users_project(installed, user_project):
    _, site = installed
    hypergvl = [sys.executable, "-m", "hypergvl"]  # the cwd, with the user's packages, is on the path
    r = run(site, user_project, *hypergvl, "--help")
    assert r.returncode == 0, r.stderr[-3000:]
    for name in ("build", "evaluate", "train", "study", "router", "space", "datasets", "demo"):
        assert f"    {name}" in r.stdout
    r = run(site, user_project, *hypergvl, "build", "--out", "hypergvl", "--per-task", "1", "--tasks", "VC", "HEC")
    assert r.returncode == 0, r.stderr[-3000:]
    # a build folder named hypergvl in the working directory (the builder's default) shadows nothing
    r = run(site, user_project, *hypergvl, "evaluate", "--dataset", "hypergvl", "--model", "baseline:symbolic",
            "--out", "run", "--no-progress")
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads((user_project / "run" / "results.json").read_text())["num_samples"] == 70
    r = run(site, user_project, *hypergvl, "router", "prm", "--results", "run", "--out", "prm")
    assert r.returncode == 0, r.stderr[-3000:]
    r = run(site, user_project, *hypergvl, "train", "--model", "HGNN")
    assert r.returncode == 2 and "usage: hypergvl train" in r.stderr


def test_the_space_keeps_its_data_outside_the_installed_package(installed, user_project):
    """`hypergvl space serve` from the wheel used to write its store, test sets and uploads into site-packages
    (space/.data beside the installed module). Installed, its data folder is the user's data folder; from a
    checkout it stays space/.data; $HYPERGVL_SPACE_DATA chooses any."""
    _, site = installed
    code = """
import os, sys
from hypergvl.space.config import SpaceConfig
os.environ.pop("HYPERGVL_SPACE_DATA", None)
os.environ.pop("SPACE_ID", None)
os.environ["XDG_DATA_HOME"] = sys.argv[1]
print(SpaceConfig.from_env().data_dir)
print(SpaceConfig().data_dir)
os.environ["HYPERGVL_SPACE_DATA"] = sys.argv[1] + "/chosen"
print(SpaceConfig.from_env().data_dir)
"""
    r = run(site, user_project, sys.executable, "-c", code, str(user_project / "xdg"))
    assert r.returncode == 0, r.stderr[-3000:]
    installed_dir, default_dir, chosen = map(Path, r.stdout.split())
    assert installed_dir == default_dir == user_project / "xdg" / "hypergvl" / "space"
    assert chosen == user_project / "xdg" / "chosen"
    from hypergvl.space.config import SpaceConfig

    assert SpaceConfig.from_env({}).data_dir == ROOT / "space" / ".data"  # a checkout keeps it beside the app
