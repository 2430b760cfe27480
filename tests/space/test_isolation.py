"""Uploads are graded in a child process with a time and memory budget: a slow or greedy grading is stopped with a
clear refusal, the server keeps none of its memory, and pages keep loading while a worst-case upload is graded."""
from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path

import pytest

import grading_stand_ins as stand_ins
from conftest import free_port, fresh, seeded_run, vision_samples
from hypergvl.space.isolation import GradingHost, run_bounded
from hypergvl.space.scoring import Limits, SubmissionError, read_upload


def _sleep(seconds):
    time.sleep(seconds)


def _hog(mib):
    blocks = [bytearray(os.urandom(1)) * (2 ** 20) for _ in range(mib)]  # touched pages: resident memory
    time.sleep(5)
    return len(blocks)


def _refuse():
    raise SubmissionError("line 3: field 'response' is missing")


def _pid():
    return os.getpid()


def test_work_that_imports_is_spawned_because_a_forked_child_waits_on_an_import_in_flight(tmp_path):
    """Why the worker's evaluation runs with ``start="spawn"``: while another thread of the parent is importing a
    module, a forked child that imports the same module waits forever on that module's import lock (the child has
    the lock but not the thread that would release it); a spawned child imports it afresh."""
    import pkgutil  # resolve_name: module-level, so a spawned child can unpickle it (this test module it cannot)
    import sys
    import threading

    release = tmp_path / "release"
    (tmp_path / "slow_to_import.py").write_text(
        "import os, time\n"
        f"while os.getpid() == {os.getpid()} and not os.path.exists({str(release)!r}):\n"
        "    time.sleep(0.02)\n")
    sys.path.insert(0, str(tmp_path))
    holder = threading.Thread(target=__import__, args=("slow_to_import",), daemon=True)
    holder.start()
    try:
        time.sleep(0.3)  # the holder is inside the module's body, holding its import lock
        with pytest.raises(SubmissionError, match="longer than 3 s"):
            run_bounded(pkgutil.resolve_name, ("slow_to_import:__name__",), seconds=3, memory_bytes=None)
        assert run_bounded(pkgutil.resolve_name, ("slow_to_import:__name__",), seconds=60, memory_bytes=None,
                           start="spawn") == "slow_to_import"  # the child has the parent's sys.path
        # the server's gradings: forked from the single-threaded grading host, which holds no other thread's lock
        host = GradingHost()
        try:
            assert host.run(pkgutil.resolve_name, ("slow_to_import:__name__",), seconds=60, memory_bytes=None,
                            what="grading") == "slow_to_import"
            assert holder.is_alive()  # while the import was still in flight here
        finally:
            host.close()
    finally:
        release.touch()
        holder.join(10)
        sys.path.remove(str(tmp_path))
        sys.modules.pop("slow_to_import", None)
    with pytest.raises(ValueError, match="start must be"):
        run_bounded(_pid, (), seconds=1, memory_bytes=None, start="forkserver")


def test_a_grading_past_its_time_is_stopped_in_time():
    # the refusal names the budget: the 600 s work was stopped, not waited for (no wall-clock bound asserted)
    with pytest.raises(SubmissionError, match="longer than 1 s and was stopped"):
        run_bounded(_sleep, (600,), seconds=1, memory_bytes=None)


def test_a_grading_past_its_memory_is_stopped_and_the_server_keeps_none_of_it():
    def resident():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    before = resident()
    with pytest.raises(SubmissionError, match="more than 200 MiB of memory"):
        run_bounded(_hog, (600,), seconds=60, memory_bytes=200 * 2 ** 20)
    assert run_bounded(_hog, (50,), seconds=60, memory_bytes=200 * 2 ** 20) == 50
    assert resident() - before < 50 * 2 ** 20


def test_the_work_runs_elsewhere_and_its_refusals_come_back_as_raised():
    assert run_bounded(_pid, (), seconds=30, memory_bytes=None) != os.getpid()
    with pytest.raises(SubmissionError, match="line 3: field 'response' is missing"):
        run_bounded(_refuse, (), seconds=30, memory_bytes=None)


def test_an_upload_over_the_grading_time_is_refused_and_nothing_is_stored(space_service, tmp_path):
    from hypergvl.space.service import Submission

    svc = fresh(space_service, tmp_path, limits=Limits(max_grading_s=0.5))
    sub = Submission(model="org/slow", testset=svc.sets.current("public").name)
    upload = _worst_case_upload(svc, tmp_path / "worst.jsonl")
    with pytest.raises(SubmissionError, match="grading took longer than 0.5 s"):
        svc.submit_upload(upload, sub, "tester")
    assert svc.store.entries() == []


def test_concurrent_submissions_are_graded_one_after_another_in_children_of_the_grading_host(
        space_service, tmp_path, monkeypatch):
    """Two uploads submitted at once from two threads of the server: each is graded in its own child of the grading
    host (a single-threaded process, not the threaded server), one after the other, and both are stored with the
    accuracy an independent scoring gives; none is lost."""
    import threading

    import psutil

    import hypergvl.space.isolation as isolation
    import hypergvl.space.service as service_module
    from hypergvl.space.service import Submission
    from hypergvl.tasks import score_response

    gate = tmp_path / "gate"
    gate.mkdir()
    monkeypatch.setenv("HYPERGVL_TEST_GATE", str(gate))
    host = GradingHost()
    monkeypatch.setattr(isolation, "HOST", host)
    monkeypatch.setattr(service_module, "grade_upload", stand_ins.logged_grade)
    svc = fresh(space_service, tmp_path)
    public = svc.sets.current("public").name
    index = svc.sets.index(public)
    records = [json.loads(x) for x in (seeded_run(svc) / "samples.jsonl").read_text().splitlines()]
    want = {}
    for k in (1, 2):
        for i, r in enumerate(records):
            r.pop("correct", None)
            r["response"] = f"Ans: wrong {i}" if i < 20 * k else r["response"]
        (tmp_path / f"up{k}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        right = sum(score_response(index.meta[r["meta_id"]][3], r["response"]).correct for r in records)
        want[f"org/m{k}"] = 100.0 * right / len(records)
    done, errors = [], []

    def submit(k):
        try:
            done.append(svc.submit_upload(tmp_path / f"up{k}.jsonl", Submission(model=f"org/m{k}", testset=public),
                                          f"ip:10.8.0.{k}"))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    try:
        threads = [threading.Thread(target=submit, args=(k,)) for k in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [] and len(done) == 2
        assert {e.model: e.scores["accuracy"] for e in svc.store.entries()} == pytest.approx(want)
        lines = [line.split() for line in (gate / "log").read_text().splitlines()]
        assert [w[0] for w in lines] == ["start", "end", "start", "end"], lines  # one after the other
        assert lines[0][1] == lines[1][1] != lines[2][1] == lines[3][1]  # each in its own child
        assert {w[2] for w in lines} == {str(host.pid)}  # ... of the grading host
        process = psutil.Process(host.pid)
        assert process.ppid() == os.getpid() and process.num_threads() == 1
    finally:
        host.close()


def test_pages_are_served_while_an_upload_is_graded_in_a_child_within_its_budgets(space_service, tmp_path,
                                                                                   monkeypatch):
    """The mechanism that keeps pages loading while an upload is graded, without a wall-clock bound a busy machine
    breaks (latency is measured by ``benchmarks/space_load.py``): the grading runs in a child of the server's
    process, under the configured time and memory budgets, and while it is held there every page, leaderboard and
    queue call is answered (none waits for it)."""
    import psutil
    from gradio_client import Client, handle_file

    import hypergvl.space.service as service_module
    from hypergvl.space.app import launch

    import hypergvl.space.isolation as isolation

    gate = tmp_path / "gate"
    gate.mkdir()
    monkeypatch.setenv("HYPERGVL_TEST_GATE", str(gate))
    monkeypatch.setattr(isolation, "HOST", GradingHost())  # started with the gate in its environment
    budgets = []
    real = service_module.run_bounded
    monkeypatch.setattr(service_module, "grade_upload", stand_ins.gated_grade)
    monkeypatch.setattr(service_module, "run_bounded", lambda *a, **k: budgets.append(k) or real(*a, **k))
    svc = fresh(space_service, tmp_path)
    upload = _worst_case_upload(svc, tmp_path / "worst.jsonl")
    demo, url = launch(svc, port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        client = Client(url, verbose=False)
        public = svc.sets.current("public").name
        job = client.submit(handle_file(str(upload)), "org/worst", "", "main", "open", 7, "vision", "", public,
                            api_name="/submit")
        while not (gate / "pid").exists():  # the grading has started (a hang, not a time, would fail this)
            assert not job.done(), job.result()
            time.sleep(0.05)
        child = psutil.Process(int((gate / "pid").read_text()))
        host = psutil.Process(isolation.HOST.pid)  # in a child of the grading host, the server's own child
        assert child.pid != os.getpid() and child.ppid() == host.pid and host.ppid() == os.getpid()
        assert budgets == [{"seconds": svc.config.limits.max_grading_s,
                            "memory_bytes": svc.config.limits.max_grading_bytes, "start": "host"}]
        for _ in range(5):  # held in the child, the grading keeps nothing else waiting
            with urllib.request.urlopen(url, timeout=300) as page:
                assert page.status == 200 and b"HyperGVL" in page.read()
            table = client.predict(public, ["open"], "both", "all", "all", "all", "all", ["Avg.U"],
                                   api_name="/leaderboard")
            assert table["value"]["headers"] == ["Model", "Avg.U"]
            client.predict(api_name="/queue")
        assert not job.done() and child.is_running()
        (gate / "open").touch()
        assert job.result().startswith("Accepted"), job.result()
        assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
    finally:
        (gate / "open").touch()
        demo.close()
        isolation.HOST.close()


def _worst_case_upload(service, path, chars=19_000):
    """The symbolic baseline's run with every response replaced by a distinct worst case of the grader (a number
    then a run of numbers, read to the end of the answer region), each about ``chars`` characters."""
    records = [json.loads(x) for x in (seeded_run(service) / "samples.jsonl").read_text().splitlines()]
    with open(path, "w") as f:
        for i, r in enumerate(records):
            r.pop("correct", None)
            r["response"] = f"v{i}" + " 1" * (chars // 2)
            f.write(json.dumps(r) + "\n")
    return path


def test_a_worst_case_upload_is_graded_under_its_budgets(space_service, tmp_path):
    """A full public-set upload of worst-case responses is graded (all 420 samples) under the configured budgets;
    how long it takes is measured by ``benchmarks/space.py`` and ``benchmarks/space_load.py``, not bounded here."""
    from hypergvl.space.service import Submission

    svc = fresh(space_service, tmp_path)
    upload = _worst_case_upload(svc, tmp_path / "worst.jsonl")
    entry = svc.submit_upload(upload, Submission(model="org/worst", testset=svc.sets.current("public").name), "t")
    assert entry.num_samples == vision_samples()


def test_a_hidden_upload_keeps_no_reference_field(tmp_path):

    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"id": "a/b/c", "response": "Ans: 1", "reference": "x" * 1000}) + "\n")
    assert read_upload(path, keep_reference=False)[0] == [{"id": "a/b/c", "response": "Ans: 1", "line": 1}]
    assert "reference" not in read_upload(path)[0][0]


def test_a_kept_record_costs_its_response_never_its_reference(tmp_path):
    """One character outside the BMP stores a whole string at 4 bytes a character, and the reference (kilobytes a
    row) used to be kept: a 358 KB upload cost +1,567 MB. A public upload's record now keeps its id, response, line
    and the 32-byte digest of its reference, which is what the selection check compares."""
    import tracemalloc

    from hypergvl.space.scoring import reference_digest

    ref = "\U0001F600" + "x" * 4000
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"id": f"m{i}/n_set/enc_hy", "response": "Ans: 1", "reference": ref}) + "\n"
                            for i in range(2000)))
    tracemalloc.start()
    records = read_upload(path)[0]
    kept, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert records[0]["reference_sha256"] == reference_digest(ref) and "reference" not in records[0]
    assert kept < 2000 * 1024, kept  # under 1 KiB a record; the reference alone would be 16 KB at 4 bytes a character


def test_leaderboard_filters_key_the_cache_normalised_and_bounded(space_service, tmp_path):
    """``model_types`` repeated n times is one view, not n (measured before: +24 KB a new length, +241 MB in 37 s);
    an unknown filter value is refused; however many keys, at most MAX_VIEWS views are kept."""
    from hypergvl.space import service as service_module

    svc = fresh(space_service, tmp_path)
    public = svc.sets.current("public").name
    svc.leaderboard_rows(public, model_types=("open",))
    for n in range(2, 60):
        svc.leaderboard_rows(public, model_types=("open",) * n + ("nonsense",), tracks=("vision", "text-only") * n)
    views = svc._views[2]  # (when, entries, views)
    assert len([k for k in views if k[0] == "lb"]) <= 2, list(views)
    with pytest.raises(SubmissionError, match="unknown scale"):
        svc.leaderboard_rows(public, scale="huge" * 1000)
    seeded = space_service.leaderboard_rows
    assert seeded(public, model_types=("nonsense",)) == [] != seeded(public, model_types=("nonsense", "baseline"))
    for i, combo in enumerate(service_module.MODEL_TYPES * 200):
        svc.view(("probe", i), lambda entries: i)
    assert len(svc._views[2]) <= service_module.MAX_VIEWS


def test_a_formula_model_name_is_refused_and_stored_ones_are_quoted_in_tables(space_service, tmp_path):
    from hypergvl.space.tabs.leaderboard import leaderboard_frame
    from hypergvl.space.service import Submission, spreadsheet_safe

    svc = fresh(space_service, tmp_path)
    public = svc.sets.current("public").name
    for name in ('=HYPERLINK("http://x","y")', "+1", "-2+3", "@SUM(A1)"):
        with pytest.raises(SubmissionError, match="formula"):
            svc.submit_upload(seeded_run(svc) / "samples.jsonl", Submission(model=name, testset=public), "t")
    assert spreadsheet_safe('=HYPERLINK("x")') == '\'=HYPERLINK("x")' and spreadsheet_safe("org/m") == "org/m"
    svc.submit_upload(seeded_run(svc) / "samples.jsonl", Submission(model="org/fine", testset=public), "t")
    entry = svc.store.entries()[0]
    entry.model = "=1+1"  # an entry stored before names were checked
    svc._cache = {"version": svc.store.version(), "entries": [entry]}
    assert list(leaderboard_frame(svc, public)["Model"]) == ["'=1+1"]


def _crash():
    os._exit(3)


def test_a_grading_process_that_dies_is_a_refusal_naming_its_exit():
    with pytest.raises(SubmissionError, match="without a result .*code 3"):
        run_bounded(_crash, (), seconds=30, memory_bytes=None)


def test_a_grading_host_that_dies_refuses_its_job_and_the_next_job_gets_a_new_host():
    host = GradingHost()
    try:
        assert host.run(stand_ins.pid, (), seconds=30, memory_bytes=None, what="grading") != host.pid
        first = host.pid
        with pytest.raises(SubmissionError, match="grading stopped without a result .*host ended with code -9"):
            host.run(stand_ins.kill_parent, (), seconds=30, memory_bytes=None, what="grading")
        assert host.pid is None  # gone, and the server was not left waiting on it
        with pytest.raises(SubmissionError, match="line 7: the next job"):
            host.run(stand_ins.refuse, ("line 7: the next job",), seconds=30, memory_bytes=None, what="grading")
        assert host.pid not in (None, first)  # answered by a new host
    finally:
        host.close()



def test_gradings_run_at_a_lower_priority_than_the_server():
    """The grading host (and every grading forked from it) runs ``GRADING_NICE`` steps nicer than the server, so
    that page loads get the cores first while a long upload is graded (50 visitors on two cores: p95 1.3-1.5 s with
    it, 1.8-3.9 s without, benchmarks/space_load.py)."""
    from hypergvl.space import isolation

    host = isolation.GradingHost()
    try:
        child = host.run(os.nice, (0,), seconds=60, memory_bytes=None, what="a probe")  # the child's niceness
    finally:
        host.close()
    assert child == min(19, os.nice(0) + isolation.GRADING_NICE)
