"""`hypergvl submit` against a local Space: accepted with the server's scores and shown on the leaderboard, refused
verbatim, rate-limited, unreachable, a request queued, and bad arguments refused before any network call."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import free_port, fresh, seeded_run
from hypergvl import cli
from test_app import variant

gradio_client = pytest.importorskip("gradio_client")
ROOT = Path(__file__).resolve().parents[2]


def _launch(space_service, tmp_path_factory, **config):
    from hypergvl.space.app import launch

    svc = fresh(space_service, tmp_path_factory.mktemp("submit"), **config)
    demo, url = launch(svc, port=free_port(), prevent_thread_lock=True, quiet=True)
    return svc, url, demo


@pytest.fixture(scope="module")
def space(space_service, tmp_path_factory):
    svc, url, demo = _launch(space_service, tmp_path_factory)
    yield svc, url
    demo.close()


@pytest.fixture(scope="module")
def limited(space_service, tmp_path_factory):
    """A Space that takes one submission per submitter and window."""
    svc, url, demo = _launch(space_service, tmp_path_factory, rate_limit=1)
    yield svc, url
    demo.close()


def hypergvl(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        rc = cli.main(["submit", *map(str, argv)])
    except SystemExit as exc:  # argparse's own refusals
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def run_folder(svc, tmp_path: Path, k: int, name: str = "run") -> tuple[Path, float]:
    """A `hypergvl evaluate` folder: the symbolic baseline's results.json with its first 8k answers made wrong
    (samples.jsonl), and the accuracy an independent check gives."""
    samples, want = variant(svc, tmp_path, k)
    run = tmp_path / name
    run.mkdir()
    samples.rename(run / "samples.jsonl")
    shutil.copy(seeded_run(svc) / "results.json", run / "results.json")
    return run, want


def meta(*extra):
    return ["--type", "closed", "--params", "7", "--revision", "v1", *extra]


def test_accepted_with_the_servers_scores_then_on_the_leaderboard(space, tmp_path, capsys):
    from gradio_client import Client

    svc, url = space
    run, want = run_folder(svc, tmp_path, 3)
    rc, out, err = hypergvl(capsys, run, "--space", url, "--model", "org/cli", "--link", "org/cli", *meta())
    assert (rc, err) == (0, "") and len(out.splitlines()) == 1
    assert out.startswith(f"accepted: accuracy {want:.2f}, Avg.U ") and "Status FINISHED" in out
    (entry,) = [e for e in svc.store.entries() if e.model == "org/cli"]
    assert (entry.revision, entry.model_type, entry.num_parameters, entry.link, entry.track, entry.testset) == \
        ("v1", "closed", 7.0, "org/cli", "vision", svc.sets.current("public").name)
    assert f"Avg.U {entry.scores['avg_u']:.2f}, Avg.R {entry.scores['avg_r']:.2f}" in out
    table = Client(url, verbose=False).predict(svc.sets.current("public").name, ["closed"], "both", "all", "all",
                                               "all", "all", ["Revision", "All"], api_name="/leaderboard")["value"]
    (row,) = [r for r in table["data"] if r[0] == "org/cli"]
    assert table["headers"] == ["Model", "All", "Revision"]  # the headline first, metadata last
    assert row[2] == "v1" and row[1] == pytest.approx(want, abs=0.05)
    rc, out, err = hypergvl(capsys, run, "--space", url, "--model", "org/cli", *meta())
    assert rc == 1 and out == "" and err.startswith(f"refused by Space {url}: Rejected: ")  # the same file again


@pytest.mark.parametrize("name, track", [("baseline-symbolic-text-only", "text-only"),
                                         ("baseline-symbolic-routed-rand", "routed:rand")])
def test_the_track_comes_from_results_json(space, capsys, name, track):
    svc, url = space
    rc, out, err = hypergvl(capsys, seeded_run(svc, name), "--space", url, "--model", f"org/{name}", *meta())
    assert (rc, err) == (0, ""), err
    assert [e.track for e in svc.store.entries() if e.model == f"org/{name}"] == [track]


def test_refusals_are_the_servers_words(space, tmp_path, capsys):
    svc, url = space
    run, _ = run_folder(svc, tmp_path, 1)
    public, hidden = svc.sets.current("public"), svc.sets.current("hidden")
    results = json.loads((run / "results.json").read_text())
    results["dataset"]["build_sha256"] = "f" * 64  # answered on another build
    (run / "results.json").write_text(json.dumps(results))
    rc, out, err = hypergvl(capsys, run, "--space", url, "--model", "org/wrong-set", *meta())
    assert (rc, out) == (1, "")
    assert err == (f"refused by Space {url}: Rejected: the run was answered on build ffffffffffff, not on this test "
                   f"set ({public.served_sha256[:12]}): rebuild this set with `hypergvl build --per-task "
                   f"{public.per_task} --seed {svc.sets.public_seed} --out SET` (or download it: Submit tab, 'Download: "
                   "Public set (with answers)'), then hypergvl evaluate --dataset SET --model ... --out RUN\n")
    lines = (run / "samples.jsonl").read_text().splitlines(keepends=True)
    (run / "samples.jsonl").write_text("".join(lines[:-1]))  # one sample missing
    rc, out, err = hypergvl(capsys, run, "--space", url, "--model", "org/tampered", *meta())
    # a samples.jsonl that disagrees with its results.json is refused here, by the one run-folder reader, before upload
    assert rc == 2 and "samples.jsonl" in err and len(err.splitlines()) == 1, err
    assert not [e for e in svc.store.entries() if e.model in ("org/wrong-set", "org/tampered")]
    assert hidden.name not in err


def test_the_hidden_set_is_scored_from_the_servers_runs_only(space_service, tmp_path_factory, tmp_path, capsys):
    """A run on the hidden set is refused before anything is sent; requests are queued, the worker answers the
    hidden set on the server, and what it publishes follows the hidden set's rules: rounded, numbers over too few
    problems withheld, and a worse run of the same submitter withheld by the Ladder."""
    from hypergvl.space.worker import Worker

    svc, url, demo = _launch(space_service, tmp_path_factory)  # its own queue, which the worker empties
    hidden = svc.sets.current("hidden")
    run = tmp_path / "hidden-run"
    shutil.copytree(seeded_run(svc, kind="hidden"), run)
    rc, out, err = hypergvl(capsys, run, "--space", url, "--model", "org/hidden-1", "--testset", "hidden", *meta())
    assert rc == 2 and out == "" and "the hidden set takes no uploaded run" in err and "--request" in err
    for model in ("baseline:symbolic", "baseline:random"):
        rc, out, err = hypergvl(capsys, "--request", model, "--space", url, "--testset", "hidden", *meta())
        assert (rc, err) == (0, "") and out.startswith(f"Queued: {model} at v1 on {hidden.name}")
    worker = Worker(svc, "w-hidden", ttl_s=60)
    while worker.run_once() is not None:
        pass
    demo.close()
    entries = {e.model: e for e in svc.store.entries() if e.testset == hidden.name}
    assert set(entries) == {"baseline:symbolic", "baseline:random"}
    assert {e.origin for e in entries.values()} == {"request"}
    best, worse = svc.shown_scores(entries["baseline:symbolic"]), svc.shown_scores(entries["baseline:random"])
    assert best["accuracy"] == round(entries["baseline:symbolic"].scores["accuracy"]) > 50
    assert best["avg_u"] is None  # six problems: below the floor of ten
    assert worse is None  # the Ladder: not above the submitter's best by the margin


def test_a_second_submission_is_rate_limited(limited, tmp_path, capsys):
    svc, url = limited
    first, _ = run_folder(svc, tmp_path, 1, "first")
    second, _ = run_folder(svc, tmp_path, 2, "second")
    assert hypergvl(capsys, first, "--space", url, "--model", "org/first", *meta())[0] == 0
    rc, out, err = hypergvl(capsys, second, "--space", url, "--model", "org/second", *meta())
    assert (rc, out) == (1, "")
    assert err == f"rate limited by Space {url}: Rejected: rate limit: at most 1 submissions per 24 h; try again later\n"
    assert [e.model for e in svc.store.entries()] == ["org/first"]


def test_a_request_is_queued_and_shown(space, capsys):
    from gradio_client import Client

    svc, url = space
    args = ["--request", "hf:org/requested", "--space", url, "--track", "text-only", *meta()]
    rc, out, err = hypergvl(capsys, *args)
    assert (rc, err) == (0, "")
    assert out == f"Queued: hf:org/requested at v1 on {svc.sets.current('public').name} (text-only), PENDING.\n"
    queue = Client(url, verbose=False).predict(api_name="/queue")
    assert [row[:5] for row in queue["data"]] == [["PENDING", "hf:org/requested", "v1",
                                                   svc.sets.current("public").name, "text-only"]]
    rc, out, err = hypergvl(capsys, *args)
    assert rc == 1 and "already on the leaderboard or in the queue" in err


def test_an_unreachable_space_is_said_plainly(space, tmp_path):
    svc, _ = space
    port = free_port()  # closed again once free_port returns
    proc = subprocess.run([sys.executable, "-m", "hypergvl.cli", "submit", str(seeded_run(svc)), "--space",
                           f"http://127.0.0.1:{port}/", "--model", "org/x", *meta()], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith(f"hypergvl submit: error: cannot reach Space http://127.0.0.1:{port}/: ")
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr


@pytest.fixture()
def no_network(monkeypatch):
    calls = []
    monkeypatch.setattr(gradio_client, "Client", lambda *a, **k: calls.append(a) or pytest.fail("a network call"))
    yield
    assert calls == []


def _only(tmp_path: Path, name: str) -> Path:
    run = tmp_path / "partial"
    run.mkdir()
    (run / name).write_text("{}\n")
    return run


@pytest.mark.parametrize("argv, message", [
    (lambda t: [_only(t, "samples.jsonl"), "--model", "m", *meta()], "has no results.json"),
    (lambda t: [_only(t, "results.json"), "--model", "m", *meta()], "has no samples.jsonl"),
    (lambda t: [t / "absent", "--model", "m", *meta()], "is not a run folder"),
    (lambda t: [_only(t, "samples.jsonl"), "--model", "m", "--type", "free", "--params", "1"],
     "argument --type: invalid choice: 'free'"),
    (lambda t: ["--model", "m", *meta()], "give either RUN"),
    (lambda t: [t, "--request", "hf:org/x", *meta()], "give either RUN"),
    (lambda t: [t, *meta()], "--model NAME is required"),
    (lambda t: ["--request", "hf:org/x", "--model", "m", *meta()], "--model is for runs"),
])
def test_bad_arguments_exit_2_before_any_network_call(no_network, tmp_path, capsys, argv, message):
    rc, out, err = hypergvl(capsys, *argv(tmp_path), "--space", "http://127.0.0.1:9/")
    assert (rc, out) == (2, "") and message in err and "Traceback" not in err


def test_bad_results_json_and_space(no_network, tmp_path, capsys):
    run = _only(tmp_path, "samples.jsonl")
    (run / "results.json").write_text("{not json")
    rc, _, err = hypergvl(capsys, run, "--model", "m", "--space", "http://127.0.0.1:9/", *meta())
    assert rc == 2 and "is not a hypergvl evaluate results.json" in err
    rc, _, err = hypergvl(capsys, run, "--model", "m", "--space", "ftp://host/x", *meta())
    assert rc == 2 and "--space 'ftp://host/x' is neither an http(s) URL nor a Hub Space id" in err


@pytest.mark.parametrize("space, sent", [("http://127.0.0.1:7860/", False), ("org/board", True),
                                         ("https://org-board.hf.space/", True),
                                         ("https://huggingface.co/spaces/org/board", True),
                                         ("http://org-board.hf.space/", False),
                                         ("https://hf.space.example.com/", False)])
def test_the_hub_login_goes_to_the_hub_only_and_is_never_printed(monkeypatch, capsys, space, sent):
    seen = {}

    def client(src, token=None, **kw):
        seen["token"] = token
        raise ConnectionError(f"nothing listens at {src}")

    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    monkeypatch.setattr(gradio_client, "Client", client)
    rc, out, err = hypergvl(capsys, "--request", "hf:org/x", "--space", space, *meta())
    assert rc == 2 and err.startswith(f"hypergvl submit: error: cannot reach Space {space}: nothing listens")
    assert seen["token"] == ("hf_not_a_real_token" if sent else None)
    assert "hf_not_a_real_token" not in out + err


def test_results_json_is_what_the_space_reads(space, tmp_path):
    """The zip holds exactly the two files, the same bytes for the same run (a resubmission is a duplicate)."""
    import zipfile

    from hypergvl.evaluators.submit import _zip_run

    svc, _ = space
    run = seeded_run(svc)
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    za, zb = _zip_run(run, a), _zip_run(run, b)
    assert za.read_bytes() == zb.read_bytes()
    with zipfile.ZipFile(za) as z:
        assert sorted(z.namelist()) == ["results.json", "samples.jsonl"]
        assert json.loads(z.read("results.json")) == json.loads((run / "results.json").read_text())
        assert z.read("samples.jsonl") == (run / "samples.jsonl").read_bytes()
