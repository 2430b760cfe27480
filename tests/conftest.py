"""Shared test set-up: offline Hub, a private HF_HOME, and the real-data folder beside the checkout.

The test folder is put on sys.path so helpers such as ``hypergvl_checker`` import by a unique name (hypergraphx
installs a top-level ``tests`` package into site-packages, so ``tests.*`` imports could be shadowed)."""
from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# One intra-op thread for torch, here and in every subprocess a test starts, unless the caller set one: the suite's
# tensors are tiny, and on the shared 2-core machine two threads contend. Measured at load average 17: 30 epochs of
# HGNN on a toy folder (test_datasets_folder's) took 11.6 s with 2 threads, 0.6 s with 1. Set before torch loads.
os.environ.setdefault("OMP_NUM_THREADS", "1")
if "HF_HOME" not in os.environ or not os.environ["HF_HOME"].startswith(tempfile.gettempdir()):
    os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="hf_home_")
    atexit.register(shutil.rmtree, os.environ["HF_HOME"], ignore_errors=True)  # each run's Hub cache dies with it

if (TESTS.parent / "hypergvl").is_dir() and not (TESTS.parent / "hypergvl" / "__init__.py").exists():
    # a build folder under the builder's default name, in the checkout root: with the editable install, Python takes
    # it (a namespace package on the path through the working directory) for the suite's package
    pytest.exit(f"{TESTS.parent / 'hypergvl'} (a build folder?) hides the editable install's hypergvl package from "
                "pytest and python -m: move it out of the checkout's root (e.g. to out/hypergvl)", returncode=4)

SHARED_DATA = Path(os.environ.get("HYPERGVL_RAW_ROOT", TESTS.parent.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def small_build(tmp_path_factory) -> Path:
    """A small real build (5 tasks x 8 meta problems, half synthetic, half real), shared by the tests."""
    from hypergvl.builder import BuildConfig, build

    out = tmp_path_factory.mktemp("build") / "hypergvl"
    build(BuildConfig(out=out, per_task=8, tasks=("VC", "HEC", "ISM", "HHM", "SHC"), rows_per_shard=4, workers=2),
          progress=False)
    return out


@pytest.fixture(scope="session")
def tiny_llava(tmp_path_factory) -> Path:
    """A tiny LLaVA checkpoint built from configs (``tiny_models``): an image-text-to-text model, nothing downloaded."""
    pytest.importorskip("torch")
    from tiny_models import make_tiny_llava

    return make_tiny_llava(tmp_path_factory.mktemp("tiny-llava"))


@pytest.fixture(scope="session")
def tiny_llm(tmp_path_factory) -> Path:
    """A tiny text-only causal LM checkpoint (``tiny_models``), for the LLM runs of HyperGVL sec. 3.3."""
    pytest.importorskip("torch")
    from tiny_models import make_tiny_llm

    return make_tiny_llm(tmp_path_factory.mktemp("tiny-llm"))


@pytest.fixture(scope="session")
def tiny_architectures(tmp_path_factory) -> dict:
    """A tiny checkpoint of every architecture of the matrix (``tiny_models.ARCHITECTURES``), built once per session:
    name -> (folder, Arch)."""
    pytest.importorskip("torch")
    from tiny_models import ARCHITECTURES

    root = tmp_path_factory.mktemp("architectures")
    return {name: (arch.build(root / name), arch) for name, arch in ARCHITECTURES.items()}
