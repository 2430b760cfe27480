"""A user's mistake in --dataset or --model is answered in about a second, naming the thing and the fix, before any
retrying download or model load: tested with the network made to fail, counting every connection attempt."""
from __future__ import annotations

import socket

import pytest

from hypergvl.evaluators import preflight
from hypergvl.cli import main


@pytest.fixture()
def no_network(monkeypatch):
    """Every connection fails at once (as on this machine); returns the list of attempted addresses. A download
    through datasets, huggingface_hub or the openai: adapter would be a test failure."""
    attempts = []

    def refuse(address, *args, **kwargs):
        attempts.append(address)
        raise OSError("Name or service not known")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(preflight, "_reachable", {})
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "OPENAI_API_KEY", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)

    def no_download(*args, **kwargs):
        raise AssertionError("a download was attempted")

    import datasets
    import huggingface_hub

    monkeypatch.setattr(datasets, "load_dataset", no_download)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", no_download)
    return attempts


def _run(capsys, *argv) -> tuple[int, str, None]:
    """Exit status and stderr of one command. Speed is the mechanism (one probe or none, no retry: the network
    counters below), measured in benchmarks/cli_errors.py, never bounded here: a busy machine would fail it."""
    rc = main(list(argv))
    return rc, capsys.readouterr().err, None


def test_a_dataset_that_is_neither_a_folder_nor_reachable(no_network, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, err, _ = _run(capsys, "evaluate", "--dataset", "nope", "--model", "baseline:random", "--out", "run")
    assert rc == 2, rc
    assert f"no folder {tmp_path / 'nope'} exists" in err and "cannot be reached" in err and "HF_HUB_OFFLINE" in err
    assert len(no_network) == 1  # one probe, no retry
    rc, err, _ = _run(capsys, "score", "run", "--dataset", "org/also-missing", "--out", "scored")
    assert rc == 2 and "cannot be reached" in err and len(no_network) == 1  # the probe's answer is remembered
    assert not (tmp_path / "run").exists() and not (tmp_path / "scored").exists()  # nothing written


def test_a_dataset_argument_that_cannot_be_an_id_or_is_a_file(no_network, capsys, tmp_path):
    rc, err, _ = _run(capsys, "evaluate", "--dataset", str(tmp_path / "no such" / "dir!"), "--model",
                      "baseline:random", "--out", str(tmp_path / "run"))
    assert rc == 2 and "not a Hub dataset id" in err and no_network == []
    file = tmp_path / "samples.jsonl"
    file.write_text("{}\n")
    rc, err, _ = _run(capsys, "evaluate", "--dataset", str(file), "--model", "baseline:random", "--out",
                      str(tmp_path / "run"))
    assert rc == 2 and "a file, not a build folder" in err


def test_an_openai_model_with_nowhere_to_send(no_network, capsys, small_build, tmp_path):
    rc, err, _ = _run(capsys, "evaluate", "--dataset", str(small_build), "--model", "openai:my-model", "--out",
                         str(tmp_path / "run"))
    assert rc == 2 and "--base-url" in err and "OPENAI_API_KEY" in err and no_network == []


def test_an_hf_model_offline_and_not_cached(no_network, capsys, small_build, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rc, err, _ = _run(capsys, "evaluate", "--dataset", str(small_build), "--model", "hf:does/not-exist", "--out",
                         str(tmp_path / "run"))
    assert rc == 2 and "not in the local Hugging Face cache" in err and "HF_HUB_OFFLINE" in err
    assert no_network == []
    monkeypatch.delenv("HF_HUB_OFFLINE")
    rc, err, _ = _run(capsys, "evaluate", "--dataset", str(small_build), "--model", "hf:does/not-exist", "--out",
                         str(tmp_path / "run"))
    assert rc == 2 and "cannot be reached" in err and len(no_network) == 1


def test_what_exists_passes_without_a_network_call(no_network, small_build, tmp_path):
    preflight.check_dataset(str(small_build))
    model = tmp_path / "model"
    model.mkdir()
    preflight.check_model(f"hf:{model}")
    preflight.check_model("baseline:symbolic")
    assert no_network == []
    preflight.check_model("openai:m", {"base_url": "http://127.0.0.1:1/v1"})  # one probe, and an unknown answer
    assert no_network == [("127.0.0.1", 1)]                                   # leaves the server to the adapter


def test_an_openai_server_that_is_not_listening_is_refused_at_once(capsys, small_build, tmp_path, monkeypatch):
    """No server on --base-url's port: exit 2 naming the host, port and fix, after one connection attempt (no
    retries, no model or progress bar started), and no run folder."""
    attempts = []
    real = socket.create_connection
    monkeypatch.setattr(socket, "create_connection", lambda address, *a, **k: attempts.append(address) or
                        real(address, *a, **k))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    rc, err, _ = _run(capsys, "evaluate", "--dataset", str(small_build), "--model", "openai:m", "--base-url",
                      f"http://127.0.0.1:{port}/v1", "--out", str(tmp_path / "run"))
    assert rc == 2 and f"nothing listens at 127.0.0.1:{port} (connection refused)" in err and "retry" not in err
    assert attempts == [("127.0.0.1", port)] and not (tmp_path / "run").exists()
    assert "%" not in err and "sample/s" not in err  # no progress bar
