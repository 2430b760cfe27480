"""Provenance records: the commit is the checkout's HEAD (git asked independently), the versions are the installed
ones, the command names checkout files relatively, and old result files read as having none."""
import subprocess
import sys
from importlib import metadata

import pytest

from hypergvl import provenance as P


@pytest.fixture(autouse=True)
def fresh_cache():
    P._commit.cache_clear()
    yield
    P._commit.cache_clear()


def test_commit_is_the_checkouts_head_and_versions_are_installed_ones(monkeypatch):
    monkeypatch.delenv("HYPERGVL_COMMIT", raising=False)
    if not (P.REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    head = subprocess.run(["git", "-C", str(P.REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    rec = P.provenance({"lr": 0.1}, seeds=[0, 1], device="cpu")
    assert rec["commit"] == head.strip() and isinstance(rec["dirty"], bool)
    assert rec["versions"]["torch"] == metadata.version("torch")
    assert rec["config"] == {"lr": 0.1} and rec["seeds"] == [0, 1] and rec["device"] == "cpu"


def test_environment_override_and_relative_command(monkeypatch):
    monkeypatch.setenv("HYPERGVL_COMMIT", "abc123")
    monkeypatch.setattr(sys, "argv", [str(P.REPO_ROOT / "router" / "study.py"), "--out", "/elsewhere/x"])
    rec = P.provenance()
    assert rec["commit"] == "abc123" and rec["dirty"] is None
    assert rec["command"][1:] == ["router/study.py", "--out", "/elsewhere/x"]


def test_old_documents_have_no_provenance():
    assert P.of({"mean": 1.0}) == {} and P.of(None) == {} and P.of({"provenance": "x"}) == {}
    assert P.of({"provenance": {"commit": "a"}}) == {"commit": "a"}
