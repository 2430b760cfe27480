"""The app through its API (gradio_client, loopback only): submissions re-scored, bad ones refused, 50 at once,
oversized uploads stopped, private files never served, and a SIGKILL mid-submission leaves the store consistent."""
from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import free_port, fresh, post_upload, seeded_run, vision_samples
from hypergvl.render import visual_labels
from hypergvl.text import text_labels
from hypergvl.space.scoring import Limits, SubmissionError

gradio_client = pytest.importorskip("gradio_client")
ROOT = Path(__file__).resolve().parents[2]


def variant(service, tmp_path: Path, k: int) -> tuple[Path, float]:
    """The symbolic baseline's answers with the first 8k made wrong, and the accuracy an independent check gives."""
    from hypergvl.tasks import score_response

    index = service.sets.index(service.sets.current("public").name)
    records = [json.loads(x) for x in (seeded_run(service) / "samples.jsonl").read_text().splitlines()]
    right = 0
    for i, r in enumerate(records):
        r.pop("correct", None)
        if i < 8 * k:
            r["response"] = f"Ans: wrong {i}"
        right += score_response(index.meta[r["meta_id"]][3], r["response"]).correct
    path = tmp_path / f"variant{k}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path, 100.0 * right / len(records)


@pytest.fixture()
def app(space_service, tmp_path):
    from hypergvl.space.app import launch

    svc = fresh(space_service, tmp_path, limits=Limits(max_bytes=1_000_000))
    demo, url = launch(svc, port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        yield svc, url
    finally:
        demo.close()


def submit_args(path, model, testset, **kw):
    from gradio_client import handle_file

    a = dict(file=handle_file(str(path)), model=model, link="", revision="main", model_type="open", params=7,
             track="vision", routing="", testset=testset)
    a.update(kw)
    return list(a.values())


def test_submit_rescored_refused_and_shown(app, tmp_path):
    from gradio_client import Client

    svc, url = app
    public = svc.sets.current("public").name
    client = Client(url, verbose=False, httpx_kwargs={"timeout": 600})  # a hang guard: a busy machine is slow
    good, want = variant(svc, tmp_path, 3)
    before = client.predict(public, ["open"], "both", "all", "all", "all", "all", ["Avg.U", "Avg.R"],
                            api_name="/leaderboard")  # cached for this store version
    assert before["value"]["data"] == []
    msg = client.predict(*submit_args(good, "org/good", public), api_name="/submit")
    assert msg.startswith("Accepted") and f"accuracy {want:.2f}" in msg
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text().replace('"response": ', '"response": 1, "x": ', 1))
    msg = client.predict(*submit_args(bad, "org/bad", public), api_name="/submit")
    assert msg.startswith("Rejected: line 1:")
    assert [e.model for e in svc.store.entries()] == ["org/good"]
    table = client.predict(public, ["open"], "both", "all", "all", "all", "all", ["Avg.U", "Avg.R"],
                           api_name="/leaderboard")
    table = table["value"]  # a Dataframe update: headers, data, and the styling that marks best and worst
    assert table["headers"] == ["Model", "Avg.U", "Avg.R"]
    assert [row[0] for row in table["data"]] == ["org/good"]  # the cached view refreshed when the entry landed


def test_oversized_upload_and_private_files(app, tmp_path):
    from gradio_client import Client

    svc, url = app
    big = tmp_path / "big.jsonl"
    big.write_bytes(b" " * 1_100_000)
    client = Client(url, verbose=False, httpx_kwargs={"timeout": 600})  # a hang guard: a busy machine is slow
    with pytest.raises(ValueError, match="exceeds the maximum file size"):
        client.predict(*submit_args(big, "org/big", svc.sets.current("public").name), api_name="/submit")
    assert post_upload(url, big.read_bytes())[0] == 413
    assert svc.store.entries() == []
    hidden = svc.sets.current("hidden")
    secret = [*Path(hidden.build).glob("data/*/*.parquet"), svc.config.data_dir / "private" / "hidden_seeds.json"]
    for path in secret:
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{url}gradio_api/file={path}", timeout=30)
        assert err.value.code in (403, 404)


def test_fifty_concurrent_submissions_then_duplicates(space_service, tmp_path):
    from gradio_client import Client

    from hypergvl.space.app import launch

    svc = fresh(space_service, tmp_path, limits=Limits(max_bytes=1_000_000))
    demo, url = launch(svc, port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        public = svc.sets.current("public").name
        files = [variant(svc, tmp_path, k) for k in range(50)]
        client = Client(url, verbose=False, httpx_kwargs={"timeout": 600})  # a hang guard: a busy machine is slow
        jobs = [client.submit(*submit_args(p, f"org/m{k}", public), api_name="/submit") for k, (p, _) in enumerate(files)]
        results = [j.result(timeout=600) for j in jobs]
        assert all(r.startswith("Accepted") for r in results), [r for r in results if not r.startswith("Accepted")][:3]
        entries = {e.model: e for e in svc.store.entries()}
        assert len(entries) == 50
        for k, (_, want) in enumerate(files):
            assert entries[f"org/m{k}"].scores["accuracy"] == pytest.approx(want)
        again = [client.submit(*submit_args(files[k][0], f"org/m{k}", public), api_name="/submit") for k in range(10)]
        refused = [j.result(timeout=600) for j in again]
        assert all(r.startswith("Rejected") and "already" in r for r in refused)
        assert len(svc.store.entries()) == 50
    finally:
        demo.close()


def _start(data: Path, port: int) -> subprocess.Popen:
    env = dict(os.environ, HYPERGVL_SPACE_DATA=str(data), HYPERGVL_PER_TASK="1", HYPERGVL_RATE_LIMIT="1000",
               HYPERGVL_UPLOAD_FILES="1000", HYPERGVL_UPLOAD_BYTES=str(2 ** 40),
               GRADIO_SERVER_PORT=str(port), GRADIO_ANALYTICS_ENABLED="False")
    proc = subprocess.Popen([sys.executable, str(ROOT / "space" / "app.py")], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while True:  # no time bound (a busy machine starts it slowly): an app that exits instead fails here
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/gradio_api/info", timeout=30)
            return proc
        except OSError:
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.3)


def test_sigkill_during_submission_leaves_the_store_consistent(space_service, tmp_path):
    from gradio_client import Client

    data = tmp_path / "data"
    shutil.copytree(space_service.config.data_dir, data, ignore=shutil.ignore_patterns("leaderboard.sqlite*"))
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    public = space_service.sets.current("public").name
    files = [variant(space_service, tmp_path, k)[0] for k in range(40)]
    proc = _start(data, port)
    client = Client(url, verbose=False, httpx_kwargs={"timeout": 600})  # a hang guard: a busy machine is slow
    jobs = [client.submit(*submit_args(p, f"org/k{k}", public), api_name="/submit") for k, p in enumerate(files)]
    def finished() -> dict[str, str]:
        out = {}
        for k, j in enumerate(jobs):
            if j.done():
                try:
                    out[f"org/k{k}"] = j.result()
                except Exception as exc:  # noqa: BLE001 - an app error is a failure, reported below
                    out[f"org/k{k}"] = f"{type(exc).__name__}: {exc}"
        return out

    while len(finished()) < 3:  # no time bound: a server that dies or fails the jobs ends this loop and fails below
        assert proc.poll() is None, "the server exited before any submission was answered"
        time.sleep(0.01)
    done = finished()
    assert all(m.startswith("Accepted") for m in done.values()), done  # a fresh server accepts its first uploads
    before_kill = set(done)
    os.kill(proc.pid, signal.SIGKILL)  # while the queue is mid-way through the 40 submissions
    proc.wait()
    db = sqlite3.connect(data / "leaderboard.sqlite")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    stored = {m: json.loads(d) for m, d in db.execute("SELECT model, doc FROM entries")}
    db.close()
    uploaded = {m: d for m, d in stored.items() if m.startswith("org/k")}
    assert before_kill <= set(uploaded) and len(uploaded) < 40  # every acknowledged submission survived the kill
    from hypergvl.space.store import decode_cells

    for d in uploaded.values():  # every stored submission is whole
        assert decode_cells(d["cells"])[:, 5].sum() == vision_samples() and d["num_samples"] == vision_samples()
    proc = _start(data, port)
    try:
        client = Client(url, verbose=False, httpx_kwargs={"timeout": 600})  # a hang guard: a busy machine is slow
        outcomes = [client.predict(*submit_args(p, f"org/k{k}", public), api_name="/submit") for k, p in enumerate(files)]
        for k, msg in enumerate(outcomes):  # stored ones are duplicates now, absent ones go in: nothing half-done
            assert msg.startswith("Rejected" if f"org/k{k}" in uploaded else "Accepted"), (k, msg)
    finally:
        proc.kill()
        proc.wait()


def test_oauth_app_requires_a_login(space_service, tmp_path, monkeypatch):
    """Deployed with OAuth, the app shows a login button and refuses an anonymous submission (rate limit per user)."""
    pytest.importorskip("authlib", reason="gradio[oauth] is not installed")
    import gradio as gr

    for k, v in {"SYSTEM": "spaces", "SPACE_ID": "org/board", "OAUTH_CLIENT_ID": "id", "OAUTH_CLIENT_SECRET": "secret",
                 "OAUTH_SCOPES": "openid profile", "OPENID_PROVIDER_URL": "https://huggingface.co"}.items():
        monkeypatch.setenv(k, v)  # what a Space with `hf_oauth: true` sets
    import gradio.oauth

    for k in ("OAUTH_CLIENT_ID", "OAUTH_CLIENT_SECRET", "OAUTH_SCOPES", "OPENID_PROVIDER_URL"):
        monkeypatch.setattr(gradio.oauth, k, os.environ[k], raising=False)  # read by gradio at import time

    from hypergvl.space.app import build_app

    svc = fresh(space_service, tmp_path)
    app = build_app(svc, oauth=True)
    assert any(isinstance(b, gr.LoginButton) for b in app.blocks.values())
    submit = next(fn for fn in app.fns.values() if fn.api_name == "submit")
    good, _ = variant(svc, tmp_path, 1)
    msg = submit.fn(str(good), "org/x", "", "main", "open", 1, "vision", "", svc.sets.current("public").name, None,
                    None)
    assert msg == "Rejected: log in with your Hugging Face account to submit" and svc.store.entries() == []


def test_the_tabs_are_registered_in_page_order():
    """A tab is one module under space/tabs/ with one ``@register_tab``: the package's own in page order (a tab added
    beside them takes its place by its ``order``); a name registered twice is refused and an unknown one names the
    choices."""
    from hypergvl.space.tabs import TABS, in_order, register_tab

    ours = [("leaderboard", "Leaderboard"), ("paper", "Reported in the paper"), ("reps", "Representations"),
            ("router", "Router"), ("hnn", "HNN"), ("browse", "Browse"), ("submit", "Submit")]
    page = [(t.name, t.title) for t in in_order()]
    assert [t for t in page if t in ours] == ours and len(page) == len(TABS)
    assert [t.order for t in in_order()] == sorted(t.order for t in TABS.values())
    with pytest.raises(ValueError, match="Space tab 'hnn' registered twice"):
        register_tab("hnn", title="Again", order=99)(lambda page: None)
    assert TABS["hnn"].title == "HNN"
    with pytest.raises(KeyError, match="unknown Space tab 'nope'; choose one of leaderboard, paper, reps, router"):
        TABS["nope"]


def test_hnn_tab_reads_the_shipped_study_results(space_service, tmp_path):
    """The HNN tab is `hypergvl.models.study report` over the shipped result folders: tables and the paper's figures."""
    from hypergvl.space.tabs.hnn import hnn_report

    svc = fresh(space_service, tmp_path, study_dirs=(ROOT / "space" / "seed_studies",))
    text, figures = hnn_report(svc)
    assert "Table A8" in text["fairness"] and "Figure 1" in text["efficiency"] and "node classification" in \
        text["effectiveness"]
    assert not any(line.startswith("![") for t in text.values() for line in t.splitlines())
    names = {caption for _, caption in figures}
    assert {"fairness_ranks.png", "efficiency.png"} <= names and all(Path(p).stat().st_size > 0 for p, _ in figures)
    assert hnn_report(svc) == (text, figures)  # cached: the same files give the same report without rebuilding


def test_only_the_public_set_is_downloaded(space_service, tmp_path):
    """The public zip holds the references; a hidden set's questions are never served (issue 43)."""
    import io
    import zipfile

    import pyarrow.parquet as pq

    from hypergvl.space.tabs.submit import download_zip

    svc = fresh(space_service, tmp_path)
    with pytest.raises(SubmissionError, match="never served"):
        download_zip(svc, svc.sets.current("hidden").name)
    public = zipfile.ZipFile(download_zip(svc, svc.sets.current("public").name))
    some = next(n for n in public.namelist() if n.endswith(".parquet"))
    assert "reference" in pq.read_schema(io.BytesIO(public.read(some))).names


def test_table4_fills_all_with_the_accuracy_over_each_representation(space_service):
    """The Representations tab's ``All`` column is the representation's accuracy over all its samples."""
    from hypergvl.space.tabs.representations import representation_frame
    from hypergvl.space.scoring import summarise

    entry = next(e for e in space_service.entries() if e.model == "baseline:symbolic" and not e.text_only)
    frame = representation_frame(entry)
    assert frame["All"].notna().all() and len(frame) == len(text_labels()) + len(visual_labels())
    n_set = frame.set_index("Representation").loc["N-Set", "All"]
    assert n_set == round(summarise(entry.cells, text_rep="n_set")["accuracy"], 1)


def test_browse_renders_each_problem_once_and_serves_it_as_a_png(space_service, tmp_path, monkeypatch):
    """The Browse tab's image is the problem rendered in the chosen pair (the same pixels as ``expand`` gives),
    written once as a PNG and served as that file: showing it again renders nothing and encodes nothing."""
    import numpy as np
    from PIL import Image

    import hypergvl.space.tabs.browse as browse
    from hypergvl.tasks import task_codes
    from hypergvl.vqa import expand

    svc = fresh(space_service, tmp_path)
    public, task = svc.sets.current("public").name, task_codes()[0]
    rendered = []
    monkeypatch.setattr(browse, "expand", lambda *a, **k: rendered.append(a[2]) or expand(*a, **k))
    b = browse.Browser(svc)
    image, prompt, answer, note = b.show(public, task, "all", "all", "n_set", "enc_hy", 1)
    rows = b.rows(public)
    (index,) = [i for i, r in enumerate(rows.select_columns(["id"])["id"]) if r in note]
    want = expand(rows.select([index]), ["n_set"], ["enc_hy"])[0]
    assert Path(image).parent == svc.config.data_dir / "figures" / "browse" and image.endswith(".png")
    assert np.array_equal(np.asarray(Image.open(image).convert("RGB")), np.asarray(want["image"].convert("RGB")))
    assert (prompt, answer) == (want["prompt"], rows[index]["answer"]) and rows[index]["task"] == task
    assert b.show(public, task, "all", "all", "n_set", "enc_hy", 1) == (image, prompt, answer, note)
    assert len(rendered) == 1  # shown again: nothing rendered
    other = b.show(public, task, "all", "all", "n_set", next(v for v in visual_labels() if v != "enc_hy"), 1)
    assert other[0] != image and len(rendered) == 2  # another pair is its own image
    assert b.show(svc.sets.current("hidden").name, task, "all", "all", "n_set", "enc_hy", 1)[3] == \
        "Only the public set can be browsed."


def test_page_views_are_computed_once_per_store_version_and_refresh_when_an_entry_lands(space_service, tmp_path):
    """The page-load events of the Leaderboard, Representations and Router tabs answer from a view computed once
    per store version (the same objects again, converted once), and an entry that lands is in the next answer."""
    import gradio as gr

    from hypergvl.space.app import build_app
    from hypergvl.space.service import Submission
    from hypergvl.space.tabs.leaderboard import leaderboard_frame, styled
    from hypergvl.space.tabs.router import router_frame

    svc = fresh(space_service, tmp_path)
    public = svc.sets.current("public").name
    for e in space_service.entries():
        svc.store.add_entry(e)
    demo = build_app(svc)
    loads = {f.outputs[0].elem_id: f.fn for f in demo.fns.values() if any(t[1] == "load" for t in f.targets)}
    lb, reps, routed = loads["lb"], loads["rep-model"], loads["rt-table"]
    table, rep, rt = lb(), reps(), routed()
    assert lb()["value"] is table["value"] and reps() is rep and routed() is rt  # nothing recomputed
    shown = {row[0] for row in table["value"]["data"]}
    assert shown == {e.model + (" (text only)" if e.text_only else "") for e in svc.entries()
                     if e.testset == public and e.track in ("vision", "text-only")}
    # converted once, to what Gradio's own Dataframe makes of the styled table (best and worst marked), which
    # Gradio then passes on unchanged
    want = gr.Dataframe(interactive=False).postprocess(styled(leaderboard_frame(svc, public)))
    assert table["value"] == want.model_dump() and "background-color" in str(table["value"]["metadata"])
    assert gr.Dataframe(interactive=False).postprocess(table["value"]) == want
    path, _ = variant(svc, tmp_path, 2)
    svc.submit_upload(path, Submission(model="org/landed", testset=public), "ip:10.9.0.1")
    assert {row[0] for row in lb()["value"]["data"]} == shown | {"org/landed"}
    assert "org/landed" in [label for label, _ in reps()[0].constructor_args["choices"]]
    again = routed()
    assert again is not rt and again[0].equals(router_frame(svc, public))


def test_views_lag_the_store_by_at_most_view_refresh_s(space_service, tmp_path, monkeypatch):
    """With ``view_refresh_s`` (a deployed Space's default: 5 s) a submission does not make every view be computed
    again at once: the views of the entries before it are served until the period has passed, then the entry is in
    the next answer, computed once; 0 (the default off a deployed Space): in the next answer at once."""
    import types

    from hypergvl.space import service as service_module
    from hypergvl.space.config import SpaceConfig
    from hypergvl.space.service import Submission

    clock = [500.0]
    monkeypatch.setattr(service_module, "time", types.SimpleNamespace(time=service_module.time.time,
                                                                      monotonic=lambda: clock[0]))
    svc = fresh(space_service, tmp_path, view_refresh_s=10.0)
    public = svc.sets.current("public").name
    computed = []

    def names():
        return svc.view(("probe",), lambda entries: computed.append(1) or sorted(e.model for e in entries))

    before = names()
    path, _ = variant(svc, tmp_path, 2)
    svc.submit_upload(path, Submission(model="org/landed", testset=public), "ip:10.9.0.1")
    clock[0] += 9.9
    assert names() is before and len(computed) == 1 and "org/landed" in [e.model for e in svc.entries()]
    clock[0] += 0.1
    assert names() == sorted(before + ["org/landed"]) and len(computed) == 2
    assert names() is names() and len(computed) == 2  # computed once for the new list
    assert SpaceConfig.from_env({"SPACE_ID": "u/s", "HYPERGVL_SPACE_DATA": str(tmp_path)}).view_refresh_s == 5.0
    assert SpaceConfig.from_env({"HYPERGVL_SPACE_DATA": str(tmp_path)}).view_refresh_s == 0.0
    with pytest.raises(ValueError, match="VIEW_REFRESH_S"):
        SpaceConfig.from_env({"HYPERGVL_VIEW_REFRESH_S": "-1", "HYPERGVL_SPACE_DATA": str(tmp_path)})
