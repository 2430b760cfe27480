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


def test_pin_records_the_tree_as_it_was_when_the_run_started(monkeypatch, tmp_path):
    """A study pins the commit and dirty flag when it starts (issue 61: an efficiency point written after 8 minutes
    of training read the tree as it was then, dirty with files edited meanwhile, not the code it had loaded)."""
    monkeypatch.delenv("HYPERGVL_COMMIT", raising=False)
    monkeypatch.setattr(P, "REPO_ROOT", tmp_path)
    (tmp_path / ".git").mkdir()
    status = {"status": ""}  # `git status --porcelain`: empty while the tree is clean
    monkeypatch.setattr(P, "_git", lambda *a: "f" * 40 if a[0] == "rev-parse" else status["status"])
    P._commit.cache_clear()
    try:
        P.pin()  # the run starts on a clean tree
        status["status"] = " M models/study/report.py"  # a file is edited while it trains
        assert (P.provenance()["commit"], P.provenance()["dirty"]) == ("f" * 40, False)
        P._commit.cache_clear()
        P.pin()  # a run started on the edited tree
        assert P.provenance()["dirty"] is True
    finally:
        P._commit.cache_clear()


def test_old_documents_have_no_provenance():
    assert P.of({"mean": 1.0}) == {} and P.of(None) == {} and P.of({"provenance": "x"}) == {}
    assert P.of({"provenance": {"commit": "a"}}) == {"commit": "a"}


# ------------------------------------------------------------------------------ recorded commits exist (issue 61)

RESULT_ROOTS = ("space/seed_studies", "benchmarks/results", "models/study/results", "router", "space")


def _recorded_commits() -> dict[str, str]:
    """Every commit a shipped JSON result records (``provenance.commit`` of a document or of its runs, and the
    ``shipped_in`` of a pre-provenance record), each with one file that records it."""
    import json
    seen: dict[str, str] = {}
    for root in RESULT_ROOTS:
        for f in sorted((P.REPO_ROOT / root).rglob("*.json")):
            if ".venv" in f.parts or "node_modules" in f.parts:
                continue
            try:
                doc = json.loads(f.read_text())
            except (ValueError, UnicodeDecodeError):
                continue
            stack = [doc]
            while stack:  # provenance records may sit at any depth (a summary's runs, a table's rows)
                x = stack.pop()
                if isinstance(x, dict):
                    rec = x.get("provenance")
                    if isinstance(rec, dict):
                        for key in ("commit", "shipped_in"):
                            if isinstance(rec.get(key), str):
                                seen.setdefault(rec[key], str(f.relative_to(P.REPO_ROOT)))
                    stack.extend(x.values())
                elif isinstance(x, list):
                    stack.extend(x)
    return seen


def test_every_recorded_commit_is_in_the_history():
    """Each commit a shipped result names resolves as a commit of this repository (``git cat-file -e
    <sha>^{commit}``, batched); skipped, saying why, where the checkout has no history to ask."""
    if note := P.history_note():
        pytest.skip(f"cannot resolve recorded commits: {note}")
    commits = _recorded_commits()
    assert len(commits) > 50  # the shipped points name many commits
    bad = P.unresolved_commits(commits)
    assert bad == [], [(c, commits[c]) for c in bad]


def test_the_commit_check_catches_a_made_up_commit():
    """A well-formed 40-hex commit that no history holds fails the check, as does a blob's id (an object that is not
    a commit); HEAD passes."""
    if note := P.history_note():
        pytest.skip(f"cannot resolve recorded commits: {note}")
    head = subprocess.run(["git", "-C", str(P.REPO_ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    blob = subprocess.run(["git", "-C", str(P.REPO_ROOT), "rev-parse", "HEAD:pyproject.toml"], capture_output=True,
                          text=True).stdout.strip()
    fake = "0123456789abcdef0123456789abcdef01234567"
    assert P.unresolved_commits([head]) == []
    assert P.unresolved_commits([head, fake, blob]) == [fake, blob]


def test_without_history_the_check_says_why(monkeypatch):
    monkeypatch.setattr(P, "_git", lambda *args: None)
    assert "no git history" in P.history_note()
