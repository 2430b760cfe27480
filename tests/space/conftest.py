"""Space tests: this folder's helpers (``store_contract``) and the checkout root (``space``) importable (``fake_hub`` is one folder up, shared)."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parents[1]):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import socket  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def space_service(tmp_path_factory):
    """A Space with one meta problem per task in each test set (420 vision samples), seeded with the baselines."""
    from hypergvl.space.seed import seed
    from hypergvl.space.config import SpaceConfig
    from hypergvl.space.service import Service

    service = Service(SpaceConfig(data_dir=tmp_path_factory.mktemp("space"), per_task=1, rate_limit=10_000,
                                  upload_files=10_000, upload_bytes=2 ** 40,
                                  study_dirs=()))
    seed(service)
    return service


def fresh(service, tmp_path, **config):
    """Another store (and config) over the same built test sets: for tests that count entries."""
    from dataclasses import replace

    from hypergvl.space.service import Service
    from hypergvl.space.store import SQLiteStore

    cfg = replace(service.config, **{"data_dir": tmp_path / "space-data", **config})
    return Service(cfg, SQLiteStore(tmp_path / "store.sqlite"), service.sets)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def seeded_run(service, name="baseline-symbolic-vision", kind="public") -> Path:
    """The folder of a seeded baseline run (a real `hypergvl evaluate` output folder)."""
    s = service.sets.current(kind)
    return service.sets.dir / "runs" / "seed" / s.name / name  # the seeding service's folder, shared by fresh()
