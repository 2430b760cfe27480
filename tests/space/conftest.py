"""Space tests: this folder's helpers (``store_contract``) and the checkout root (``space``) importable (``fake_hub`` is one folder up, shared)."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parents[1]):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import http.client  # noqa: E402
import socket  # noqa: E402
import urllib.parse  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def space_service(tmp_path_factory):
    """A Space with one meta problem per task in each test set (:func:`vision_samples`: 420 over the paper's tasks and
    representations), seeded with the baselines."""
    from hypergvl.space.seed import seed
    from hypergvl.space.config import SpaceConfig
    from hypergvl.space.service import Service

    service = Service(SpaceConfig(data_dir=tmp_path_factory.mktemp("space"), per_task=1, rate_limit=10_000,
                                  upload_files=10_000, upload_bytes=2 ** 40,
                                  study_dirs=()))
    seed(service)
    return service


def set_tasks() -> tuple[str, ...]:
    """The tasks of the Space's test sets: the build default (the paper's twelve)."""
    from hypergvl.builder import BuildConfig

    return BuildConfig.__dataclass_fields__["tasks"].default


def vision_samples(per_task: int = 1) -> int:
    """Samples of a complete vision-track submission on a test set: its problems x the registered pairs."""
    from hypergvl.vqa import combinations

    return len(set_tasks()) * per_task * len(combinations())


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


def post_upload(url: str, body: bytes, *, chunked: bool = False) -> tuple[int, str]:
    """POST a multipart upload of ``body`` to the Space's upload route (with its Content-Length, or chunked
    without one); (status, text)."""
    u = urllib.parse.urlparse(url)
    boundary = "hypergvlboundary"
    data = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"s.jsonl\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + body + f"\r\n--{boundary}--\r\n".encode()
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    try:
        conn.request("POST", "/gradio_api/upload", body=iter([data]) if chunked else data, headers=headers,
                     encode_chunked=chunked)
    except (BrokenPipeError, ConnectionResetError):
        pass  # refused from its headers: the server answered and closed before the body was sent
    resp = conn.getresponse()
    text = resp.read().decode(errors="replace")
    conn.close()
    return resp.status, text
