"""The hidden set stays hidden: the attacks of a loopback red-team pass on the Space, each through the endpoints the
attacker used (gradio_client, raw HTTP against the app started here on 127.0.0.1), each failing on the Space before
these rules and passing with them.

1. an uploaded ``reference`` is no oracle on the hidden references;
2. filtered views reveal no per-problem verdict (and the Ladder withholds what a boosting attack needs);
3. the hidden seed is in no card, log, error or served file, only in 0600 files;
4. rejected uploads count toward a limit of their own;
5. an upload of 256 MiB of short lines costs bounded memory, and concurrent worst-case uploads one grading at a time;
6. ``X-Forwarded-For`` picks no submitter unless it comes from a configured proxy; deployed, anonymous uploads are off;
7. a fresh page shows the current table;
8. a zip without results.json, invisible characters in names, the revision shown, an unpaired surrogate;
9. hidden scores only from runs the server makes (issue 43): the weighted probe and the solved download get nothing.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import urllib.error
import urllib.request
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from conftest import free_port, fresh, seeded_run
from hypergvl.vqa import combinations
from hypergvl.space.scoring import Limits, SampleIndex, SubmissionError, parse_samples, read_upload
from hypergvl.space.config import SpaceConfig
from hypergvl.space.service import Service, Submission

gradio_client = pytest.importorskip("gradio_client")
from gradio_client import Client, handle_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SEED = 4_611_686_018_427_387_847  # a 62-bit hidden seed: its digits appear nowhere by chance


def args(path, model, testset, **kw):
    a = dict(file=handle_file(str(path)), model=model, link="", revision="main", model_type="open", params=7,
             track="vision", routing="", testset=testset)
    a.update(kw)
    return list(a.values())


def lines(service, kind="hidden", name="baseline-symbolic-vision") -> list[dict]:
    return [json.loads(x) for x in (seeded_run(service, name, kind) / "samples.jsonl").read_text().splitlines()]


def jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def server_entry(svc, testset: str, records, model: str, submitter: str, *, track="vision", origin="request"):
    """Store ``records`` scored as the worker stores a run it made (``origin="request"``): the only way a hidden-set
    entry is made now. ``origin="upload"`` stores it as the hidden track took uploads before issue 43."""
    from hypergvl.space.scoring import score
    from hypergvl.space.store import Entry

    records = parse_samples("".join(json.dumps(r) + "\n" for r in records).encode())
    scored = score(records, svc.sets.index(testset), track.partition(":")[0])
    entry = Entry(model=model, revision="main", testset=testset, track=track, model_type="open", num_parameters=7.0,
                  link="", scores=scored.scores, cells=scored.cells, num_samples=scored.num_samples,
                  dataset_sha256=svc.sets.get(testset).served_sha256, origin=origin, submitter=submitter)
    svc.store.add_entry(entry)
    return entry


class App:
    def __init__(self, service, tmp_path, **config):
        from hypergvl.space.app import launch

        self.svc = fresh(service, tmp_path, **{"rate_limit": 10_000, "reject_limit": 10_000, **config})
        self.demo, self.url = launch(self.svc, port=free_port(), prevent_thread_lock=True, quiet=True)
        self.client = Client(self.url, verbose=False)

    def close(self):
        self.demo.close()


@pytest.fixture()
def app(space_service, tmp_path):
    a = App(space_service, tmp_path)
    yield a
    a.close()


def submit_text(client, *arguments) -> str:
    """The Submit endpoint's answer, or the refusal of its arguments (a test set the form does not offer)."""
    try:
        return client.predict(*arguments, api_name="/submit")
    except Exception as exc:  # noqa: BLE001 - gradio_client raises the app's refusal of an input
        return f"Refused: {exc}"


def table(client, testset, *filters, columns=None):
    out = client.predict(testset, ["open", "closed", "baseline"], "both", *filters,
                         columns or ["All", "VC", "HEC", "Ne", "DVC", "OEC", "ONe", "OSP", "OMF", "Avg.U", "Avg.R"],
                         api_name="/leaderboard")["value"]
    return [dict(zip(out["headers"], row)) for row in out["data"]]


# ------------------------------------------------------------------------------------------------ 1. reference
def test_an_uploaded_reference_is_no_oracle_on_hidden_answers(app, space_service, tmp_path):
    """Finding 1: one-line uploads for VC-00000 whose `reference` holds answer 3..9 were told apart ("answered on
    another build" for every wrong answer). Now every one gets the same refusal: the hidden set takes no upload."""
    hidden = space_service.sets.current("hidden")
    index = space_service.sets.index(hidden.name)
    meta = next(m for m in index.meta if m.startswith("VC-"))
    true = json.loads(index.meta[meta][3])
    messages = set()
    for k in range(3, 10):
        ref = json.dumps({**true, "answer": str(k)})
        up = jsonl(tmp_path / f"probe{k}.jsonl", [{"id": f"{meta}/n_set/enc_hy", "response": "Ans: 1", "reference": ref}])
        messages.add(submit_text(app.client, *args(up, f"org/probe{k}", hidden.name)))
    up = jsonl(tmp_path / "exact.jsonl", [{"id": f"{meta}/n_set/enc_hy", "response": "Ans: 1",
                                           "reference": index.meta[meta][3]}])
    messages.add(submit_text(app.client, *args(up, "org/exact", hidden.name)))
    assert len(messages) == 1, messages
    assert "another build" not in messages.pop()
    public = space_service.sets.current("public")  # on the public set, whose references are published, it still helps
    pmeta = next(m for m in space_service.sets.index(public.name).meta if m.startswith("VC-"))
    up = jsonl(tmp_path / "public.jsonl", [{"id": f"{pmeta}/n_set/enc_hy", "response": "x", "reference": "{}"}])
    assert "another build" in app.client.predict(*args(up, "org/p", public.name), api_name="/submit")


# ------------------------------------------------------------------------------------------------ 2. views
def _integer(answer: str) -> int | None:
    return int(answer) if re.fullmatch(r"\d+", answer) else None


def pair_attack(client, testset, answers: dict[str, int], rng) -> int:
    """Finding 2's attacker after its one submission (``Ans: k`` on pair k): a filtered /leaderboard call per pair
    (35 over the paper's representations); a task whose view at pair k scores above 0 is answered k; where the views
    tell nothing, a guess among 1..pairs. Returns how many hidden answers it got right."""
    from hypergvl.vqa import combinations

    guess: dict[str, int] = {}
    pairs = combinations()
    for k, (t, v) in enumerate(pairs, 1):
        try:
            rows = table(client, testset, "all", "all", t, v)
        except Exception:  # noqa: BLE001 - the view is refused: nothing learnt
            continue
        row = next((r for r in rows if r["Model"] == "org/attacker"), None)
        for task in answers:
            if row is not None and isinstance(row.get(task), (int, float)) and row[task] > 0:
                guess[task] = k
    return sum(guess.get(task, int(rng.integers(1, len(pairs) + 1))) == a for task, a in answers.items())


def test_filtered_views_recover_no_hidden_answer(app, space_service, tmp_path):
    """Finding 2: one submission answering `Ans: k` on pair k, then 35 /leaderboard calls filtered by text and visual
    representation, recovered seven hidden answers. Now the hidden set's views are refused below the aggregation
    limit, and the attacker does no better than guessing (binomial bound, seeded); the same attack on the public set
    (whose answers are published) recovers every answer, so the test can tell."""
    from hypergvl.vqa import combinations

    pairs = combinations()
    results = {}
    for kind in ("hidden", "public"):
        s = space_service.sets.current(kind)
        index = space_service.sets.index(s.name)
        records = lines(space_service, kind)
        for r in records:
            t, v = r["id"].split("/")[1:]
            r["response"] = f"Ans: {pairs.index((t, v)) + 1}"
        if kind == "public":
            up = jsonl(tmp_path / f"attack-{kind}.jsonl", records)
            assert app.client.predict(*args(up, "org/attacker", s.name), api_name="/submit").startswith("Accepted")
        else:  # a hidden-set entry is a run the server made: a model answering `Ans: k` on pair k
            server_entry(app.svc, s.name, records, "org/attacker", "ip:127.0.0.1")  # the attacker, who also uploads below
        answers = {}
        for m, (t, _, _, ref) in index.meta.items():
            a = _integer(json.loads(ref)["answer"])
            if a is not None and 1 <= a <= len(pairs):
                answers[t] = a
        results[kind] = (pair_attack(app.client, s.name, answers, np.random.default_rng(2015)), len(answers))
    hits, n = results["hidden"]
    assert n >= 5
    # chance: each guess right with p = 1/35 (1/pairs); P(X >= 3) < 0.002 for n <= 12 problems
    assert hits <= 2, f"the attack recovered {hits} of {n} hidden answers"
    assert results["public"][0] == results["public"][1]  # where views are allowed, the attack works
    with pytest.raises(Exception, match="hidden set is shown over all"):
        table(app.client, space_service.sets.current("hidden").name, "all", "small", "all", "all")
    row = next(r for r in table(app.client, space_service.sets.current("hidden").name, "all", "all", "all", "all")
               if r["Model"] == "org/attacker")
    assert row["All"] == round(row["All"])  # rounded to the point
    assert row["VC"] is None or row["VC"] != row["VC"]  # one problem per task: no task column on the hidden set


def _binary_index(n: int, seed: int) -> tuple[SampleIndex, list[tuple[str, str]]]:
    """``n`` generated DVC problems (one task, so one column) and for each its right answer and a wrong one."""
    from hypergvl.tasks import generate_problem
    meta, pairs = {}, []
    for i in range(n):
        row = generate_problem("DVC", seed + i, "small")
        mid = f"DVC-{i:05d}"
        meta[mid] = ("DVC", 0, 0, row["reference"])
        pairs.append((row["answer"], str(int(row["answer"]) + 1)))
    return SampleIndex(meta, "boost"), pairs


class _OneHiddenSet:
    """The TestSets interface over one generated hidden set (no build on disk: scoring needs only the index)."""

    def __init__(self, index: SampleIndex, per_task: int):
        from hypergvl.space.testsets import HIDDEN, TestSet

        self._index = index
        self.set = TestSet(name="hidden-boost", kind=HIDDEN, build="", download="", build_sha256="b" * 64,
                           served_sha256="b" * 64, per_task=per_task, created=0.0, current=True)

    def get(self, name):
        if name != self.set.name:
            raise KeyError(name)
        return self.set

    def all(self):
        return [self.set]

    def current(self, kind):
        return self.set

    def index(self, name):
        return self._index


def test_the_ladder_withholds_what_a_boosting_attack_needs(tmp_path):
    """Blum and Hardt's boosting attack on a leaderboard: one submitter uploads K = 100 random choices between the
    right and a wrong answer of every problem (20 times the default daily limit, lifted here), keeps those scored
    above 50 and takes the majority vote per problem. With the raw scores it recovers well above chance; with the
    Ladder's published scores (defaults: shown only when above the submitter's best by 1 point, rounded to 1 point)
    less than half of that advantage is left: every shown score still says something of its own submission, which
    is what the Ladder bounds (a handful of moves), not removes. The submissions are server-made runs (the hidden
    set takes no upload), such as checkpoints that answer at random."""
    from hypergvl.space.store import SQLiteStore

    n, k = 300, 100
    index, answers = _binary_index(n, 7)
    ids = list(index.meta)
    svc = Service(SpaceConfig(data_dir=tmp_path, rate_limit=10_000, study_dirs=()),
                  SQLiteStore(tmp_path / "store.sqlite"), _OneHiddenSet(index, per_task=n))
    rng = np.random.default_rng(2015)
    choices = rng.integers(0, 2, (k, n))
    raw, shown = [], []
    for j in range(k):
        recs = [{"id": f"{m}/n_set/enc_hy", "response": f"Ans: {answers[i][c]}"} for i, (m, c) in
                enumerate(zip(ids, choices[j]))]
        entry = server_entry(svc, "hidden-boost", recs, f"org/boost{j}", "ip:attacker", track="routed:rand")
        raw.append(entry.scores["accuracy"])
        s = svc.shown_scores(entry)
        shown.append(None if s is None else s["accuracy"])
        assert s is None or s["accuracy"] == round(s["accuracy"])

    truth = np.zeros(n, dtype=int)  # choice 0 is the right answer of every problem

    def vote(keep):
        keep = np.asarray(keep, dtype=bool)
        if not keep.any():
            return 0.5
        return float(((choices[keep].mean(0) > 0.5).astype(int) == truth).mean())

    sigma = (0.25 / n) ** 0.5
    with_raw, with_ladder = vote([a > 50 for a in raw]), vote([a is not None and a > 50 for a in shown])
    assert with_raw > 0.5 + 3 * sigma  # the attack works on raw scores
    assert with_ladder - 0.5 <= (with_raw - 0.5) / 2, (with_raw, with_ladder)  # the Ladder takes most of it away
    assert sum(a is not None for a in shown) <= 12  # the Ladder moved a handful of times in 100 submissions
    assert len(svc.store.entries()) == k  # every submission is stored, only its publication is limited


# ------------------------------------------------------------------------------------------------ 3. the seed
def test_the_hidden_seed_is_only_in_private_files(space_service, tmp_path):
    """Finding 3: the private build's card printed the hidden seed (mode 0644). Now no served page, download, card,
    error or log holds it, and the files that do are mode 0600."""
    import logging

    from hypergvl.space.app import launch
    from hypergvl.space.tabs.submit import download_zip
    from hypergvl.space.testsets import TestSets

    data = tmp_path / "data"
    cfg = replace(space_service.config, data_dir=data, hidden_seed=SEED, seed_baselines=False)
    assert str(SEED) not in repr(cfg)
    sets = TestSets(data, per_task=1, hidden_seed=SEED)
    svc = Service(cfg, sets=sets)
    handler = logging.Handler()
    handler.records = []
    handler.emit = handler.records.append
    logging.getLogger().addHandler(handler)
    try:
        demo, url = launch(svc, port=free_port(), prevent_thread_lock=True, quiet=True)
        try:
            pages = [urllib.request.urlopen(url + p, timeout=30).read() for p in ("", "config", "gradio_api/info")]
            hidden = svc.sets.current("hidden").name
            bad = jsonl(tmp_path / "bad.jsonl", [{"id": "nope", "response": "x"}])
            msg = submit_text(Client(url, verbose=False), *args(bad, "org/x", hidden))
        finally:
            demo.close()
    finally:
        logging.getLogger().removeHandler(handler)
    digits = str(SEED).encode()
    assert not any(digits in p for p in pages) and str(SEED) not in msg
    assert not any(str(SEED) in r.getMessage() for r in handler.records)
    assert digits not in Path(download_zip(svc, svc.sets.current("public").name)).read_bytes()
    holding = [p for p in data.rglob("*") if p.is_file() and digits in p.read_bytes()]
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in holding), \
        [(str(p.relative_to(data)), oct(p.stat().st_mode & 0o777)) for p in holding]
    with pytest.raises(ValueError) as err:
        SpaceConfig.from_env({"HYPERGVL_HIDDEN_SEED": f"{SEED}x"})
    assert str(SEED) not in str(err.value)


# ------------------------------------------------------------------------------------------------ 4. rejections
def test_rejected_uploads_count_toward_a_limit_of_their_own(space_service, tmp_path):
    """Finding 4: rejected uploads never counted, so probing was free. Now the fourth attempt after three rejected
    ones is refused before its file is read, even a good one."""
    a = App(space_service, tmp_path, reject_limit=3)
    try:
        public = a.svc.sets.current("public").name
        bad = jsonl(tmp_path / "bad.jsonl", [{"id": "nope", "response": "x"}])
        first = [a.client.predict(*args(bad, f"org/b{i}", public), api_name="/submit") for i in range(3)]
        assert all(m.startswith("Rejected: line 1: unknown sample id") for m in first), first
        good = jsonl(tmp_path / "good.jsonl", lines(space_service, "public"))
        msg = a.client.predict(*args(good, "org/good", public), api_name="/submit")
        assert msg.startswith("Rejected: rate limit: at most 3 rejected"), msg
        assert a.svc.store.entries() == []
    finally:
        a.close()


# ------------------------------------------------------------------------------------------------ 5. memory
def _short_lines_zip(path: Path, mib: int) -> Path:
    """Finding 5's upload: a small zip of ``mib`` MiB of short lines (plus a results.json)."""
    block = b"\n" * 2 ** 20  # blank lines: skipped, but each one read and counted
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("run/results.json", b"{}")
        with z.open("run/samples.jsonl", "w") as f:
            for _ in range(mib):
                f.write(block)
    return path


def test_a_zip_of_256_mib_of_short_lines_costs_bounded_memory(tmp_path):
    import tracemalloc

    bomb = _short_lines_zip(tmp_path / "lines.zip", 255)  # with results.json: within the 256 MiB unpacked
    assert bomb.stat().st_size < 400_000
    tracemalloc.start()
    try:
        with pytest.raises(SubmissionError, match="more than 100,000 lines"):
            read_upload(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2 ** 20, f"peak {peak / 2**20:.0f} MiB"  # today: the whole 256 MiB and a list of its lines


def test_concurrent_worst_case_uploads_cost_one_grading_at_a_time(space_service, tmp_path):
    """Issue 43: 30 uploads of astral-character responses at once peaked at 3,258 MB and left 993 MB unfreed.
    Three waves of six such uploads at once (each 420 responses of 10,000 characters outside the BMP, 17 MB) to the
    Space started as its own process are graded one at a time, each in a child process: the process tree never
    holds more than one grading, its peak (the server's resident memory plus what each child holds alone) stays
    within the bound the README states, and the server's own growth is a high-water mark reached by the first wave
    (Gradio's upload buffers, reused), not a cost per upload."""
    import threading
    import time

    import psutil
    from test_app import _start

    records = lines(space_service, "public")
    data = tmp_path / "data"
    shutil.copytree(space_service.config.data_dir, data, ignore=shutil.ignore_patterns("leaderboard.sqlite*"))
    port = free_port()
    proc = _start(data, port)
    server = psutil.Process(proc.pid)
    url = f"http://127.0.0.1:{port}/"
    public = space_service.sets.current("public").name
    peak, most, stop = [0], [0], threading.Event()

    def sample():
        while not stop.is_set():
            try:  # the server's descendants: the grading host and the grading children it forks
                kids = server.children(recursive=True)
                rss = server.memory_info().rss + sum(c.memory_full_info().uss for c in kids)
                grading = [c for c in kids if c.ppid() != server.pid]  # the host's children
            except psutil.Error:  # a child ended while it was read
                continue
            peak[0], most[0] = max(peak[0], rss), max(most[0], len(grading))
            time.sleep(0.02)

    def wave(w: int) -> list[str]:
        ups = [jsonl(tmp_path / f"astral{w}-{k}.jsonl",
                     [{**r, "response": "\U0001F600" * 10_000 + f" Ans: {w}-{k}"} for r in records]) for k in range(6)]
        assert all(16e6 < u.stat().st_size < 64 * 2 ** 20 for u in ups)
        answers = [""] * len(ups)

        def send(k):
            answers[k] = submit_text(Client(url, verbose=False), *args(ups[k], f"org/astral{w}-{k}", public))

        senders = [threading.Thread(target=send, args=(k,)) for k in range(len(ups))]
        for t in senders:
            t.start()
        for t in senders:
            t.join(600)
        return answers

    try:
        Client(url, verbose=False).predict(public, ["open"], "both", "all", "all", "all", "all", ["All"],
                                           api_name="/leaderboard")  # warm: the first page's caches
        base = server.memory_info().rss
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.monotonic()
        answers, after = [], []
        for w in range(3):
            answers += wave(w)
            after.append((server.memory_info().rss - base) / 2 ** 20)
        took = time.monotonic() - started
        stop.set()
        sampler.join()
    finally:
        proc.kill()
        proc.wait()
    assert all(x.startswith("Accepted") for x in answers), answers
    added = (peak[0] - base) / 2 ** 20
    print(f"3 waves of 6 uploads of 17 MB at once: {took:.1f} s, at most {most[0]} grading process(es), tree peak "
          f"+{added:.0f} MiB, server +{after[0]:.0f}, +{after[1]:.0f}, +{after[2]:.0f} MiB after each wave")
    assert most[0] == 1  # one grading at a time, whatever arrives together
    assert added < 512, added  # the README's bound for any number of concurrent uploads
    assert after[0] < 384 and after[2] - after[0] < 64, after  # reached once, then reused: nothing kept per upload


def test_nesting_is_limited_while_reading():
    deep = b'{"id": "a", "response": "x", "extra": ' + b"[" * 40 + b"]" * 40 + b"}\n"
    with pytest.raises(SubmissionError, match="line 1: nested deeper than 32 levels"):
        parse_samples(deep)
    deeper = b'{"id": "a", "response": "x", "extra": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    with pytest.raises(SubmissionError, match="line 1: nested deeper"):
        parse_samples(deeper)


def test_zip_entries_are_counted_before_the_directory_is_read(tmp_path):
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as z:
        for i in range(2000):
            z.writestr(f"run/{i}", b"")
    with pytest.raises(SubmissionError, match="holds 2000 entries"):
        read_upload(path)


# ------------------------------------------------------------------------------------------------ 6. identity
def test_x_forwarded_for_picks_no_submitter(space_service, tmp_path):
    """Finding 6: after the limit, `X-Forwarded-For: 10.9.8.7` made a loopback client a new submitter. Now the header
    counts only from a configured proxy."""
    public = space_service.sets.current("public").name
    records = lines(space_service, "public")
    for trusted, second in (((), "Rejected: rate limit"), (("127.0.0.1",), "Accepted")):
        a = App(space_service, tmp_path / str(len(trusted)), rate_limit=1, trusted_proxies=trusted)
        try:
            one = jsonl(tmp_path / f"one{len(trusted)}.jsonl", records)
            two = jsonl(tmp_path / f"two{len(trusted)}.jsonl", records[::-1])
            assert a.client.predict(*args(one, "org/one", public), api_name="/submit").startswith("Accepted")
            forged = Client(a.url, verbose=False, headers={"X-Forwarded-For": "10.9.8.7"})
            assert forged.predict(*args(two, "org/two", public), api_name="/submit").startswith(second)
        finally:
            a.close()


def test_a_deployed_space_takes_no_anonymous_upload_unless_configured(space_service, tmp_path):
    assert SpaceConfig.from_env({"SPACE_ID": "org/board"}).anonymous_uploads is False
    assert SpaceConfig.from_env({"SPACE_ID": "org/board", "HYPERGVL_ANONYMOUS_UPLOADS": "1"}).anonymous_uploads
    assert SpaceConfig.from_env({}).anonymous_uploads
    a = App(space_service, tmp_path, anonymous_uploads=False)
    try:
        good = jsonl(tmp_path / "good.jsonl", lines(space_service, "public"))
        # refused at Gradio's upload route already (hypergvl.space.upload_limits), before the file is stored
        with pytest.raises(Exception, match="403 Forbidden"):
            a.client.predict(*args(good, "org/anon", a.svc.sets.current("public").name), api_name="/submit")
        assert a.svc.store.entries() == []
    finally:
        a.close()


# ------------------------------------------------------------------------------------------------ 7. fresh page
def test_a_fresh_page_shows_the_entries_stored_after_start(space_service, tmp_path):
    """Finding 7: the first frame was computed once at start; a new page showed 3 rows of 25. The page's table now
    comes with its load event, from the store as it is."""
    from hypergvl.space.app import launch

    svc = fresh(space_service, tmp_path)
    demo, url = launch(svc, port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        stored = [e for e in space_service.entries() if e.testset == svc.sets.current("public").name
                  and e.track in ("vision", "text-only")]
        for e in stored:  # stored after the app started
            svc.store.add_entry(replace(e, id=f"late-{e.id}", model=f"late/{e.model}"))
        config = json.loads(urllib.request.urlopen(url + "config", timeout=30).read())
        lb = next(c for c in config["components"] if c.get("props", {}).get("elem_id") == "lb")
        assert not lb["props"]["value"]["data"]  # nothing frozen into the page
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if chromium is None:
            pytest.skip("no chromium: the page's load event is checked in a browser")
        from playwright.sync_api import expect, sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(url)
            for e in stored:
                expect(page.locator("#lb")).to_contain_text(f"late/{e.model}", timeout=600_000)  # a hang guard, not a bound
            browser.close()
    finally:
        demo.close()


# ------------------------------------------------------------------------------------------------ 8. smaller
def test_a_zip_without_results_json_is_refused_as_the_readme_says(app, space_service, tmp_path):
    run = seeded_run(space_service)
    up = tmp_path / "run.zip"
    with zipfile.ZipFile(up, "w") as z:
        z.writestr("run/samples.jsonl", (run / "samples.jsonl").read_bytes())
    msg = app.client.predict(*args(up, "org/zip", space_service.sets.current("public").name), api_name="/submit")
    assert msg.startswith("Rejected: the zip has no results.json")
    assert "zip of the `RUN` folder (then its `results.json` must show" in (ROOT / "space" / "README.md").read_text()


@pytest.mark.parametrize("name", ["org/model\u200b", "org/\u202eledom", "org/mo\u2066del", "org/m\u00addel"])
def test_names_with_invisible_or_direction_characters_are_refused(app, space_service, tmp_path, name):
    good = jsonl(tmp_path / "good.jsonl", lines(space_service, "public"))
    msg = app.client.predict(*args(good, name, space_service.sets.current("public").name), api_name="/submit")
    assert msg.startswith("Rejected: the model name holds an invisible or direction-changing character (U+")
    assert app.svc.store.entries() == []


def test_a_new_revision_makes_a_row_that_shows_it(app, space_service, tmp_path):
    public = space_service.sets.current("public").name
    records = lines(space_service, "public")
    for rev, recs in (("main", records), ("v2", records[::-1])):
        up = jsonl(tmp_path / f"{rev}.jsonl", recs)
        assert app.client.predict(*args(up, "org/same", public, revision=rev), api_name="/submit").startswith("Acc")
    rows = [r for r in table(app.client, public, "all", "all", "all", "all", columns=["Revision", "Scorer", "All"])
            if r["Model"] == "org/same"]
    assert sorted(r["Revision"] for r in rows) == ["main", "v2"]
    assert len({tuple(r.values()) for r in rows}) == 2


def test_an_unpaired_surrogate_is_reported_with_its_line(app, space_service, tmp_path):
    records = lines(space_service, "public")
    up = tmp_path / "sur.jsonl"
    text = "".join(json.dumps(r) + "\n" for r in records)
    first, rest = text.split("\n", 1)
    second, rest = rest.split("\n", 1)
    second = second.replace('"response": "', '"response": "\\ud800', 1)
    up.write_text(first + "\n" + second + "\n" + rest)
    msg = app.client.predict(*args(up, "org/sur", space_service.sets.current("public").name), api_name="/submit")
    assert msg.startswith("Rejected: line 2: field 'response' holds an unpaired surrogate (U+D800"), msg
    with pytest.raises(SubmissionError, match="line 1"):
        parse_samples(b'{"id": "\\udc00", "response": "x"}\n')
    assert parse_samples(b'{"id": "a", "response": "\\ud83d\\ude00"}\n')[0]["response"] == "\U0001F600"


def test_limits_hold_for_a_plain_jsonl_too(tmp_path):
    up = tmp_path / "lines.jsonl"
    up.write_bytes(b"\n" * 200_000)
    with pytest.raises(SubmissionError, match="more than 100,000 lines"):
        read_upload(up)
    assert os.path.getsize(up) < Limits().max_bytes


# ------------------------------------------------------------------------------------------------ 9. server runs
def _shown_accuracy(message: str) -> float | None:
    """The accuracy an upload's answer publishes (None: refused, or withheld by the Ladder)."""
    m = re.search(r"accuracy (\d+(?:\.\d+)?)", message) if message.startswith("Accepted") else None
    return float(m.group(1)) if m else None


def weighted_probe(submit, problems: dict[str, list[str]], candidates: dict[str, tuple[str, str]]) -> dict[str, str]:
    """The second attack's weighted probe, one problem per submission (issue 43): answer candidate 0 of one problem
    on all its samples (every sample shares its reference), pad with the answers already learned, leave the rest
    empty. ``submit(records)`` returns the published accuracy or None. With k answers known, a right candidate
    publishes (k+1)/n and a wrong one k/n (or nothing: the Ladder withholds what does not beat the best by its
    margin), so each submission decides one problem: shown near (k+1)/n means candidate 0, anything else candidate 1.
    Returns the attacker's answer per problem."""
    known: dict[str, str] = {}
    n = len(problems)

    def records(probe=None):
        answers = {**known, **({probe[0]: probe[1]} if probe else {})}
        return [{"id": sid, "response": f"Ans: {answers[p]}" if p in answers else ""}
                for p, ids in problems.items() for sid in ids]

    submit(records())  # the Ladder's first score: nothing answered
    for p, (first, second) in candidates.items():
        shown = submit(records((p, first)))
        right, wrong = 100 * (len(known) + 1) / n, 100 * len(known) / n
        known[p] = first if shown is not None and abs(shown - right) < abs(shown - wrong) else second
    return known


def _probe_setup(svc, testset):
    """The hidden set's sample ids by problem (an attacker guesses them from the public set's naming:
    ``TASK-00000/text/visual``) and, per problem, its right answer and a wrong one in a seeded random order."""
    index = svc.sets.index(testset)
    problems: dict[str, list[str]] = {}
    for r in lines(svc, "hidden"):
        problems.setdefault(r["id"].split("/")[0], []).append(r["id"])
    rng = np.random.default_rng(43)
    candidates, truth = {}, {}
    for p in problems:
        answer = json.loads(index.meta[p][3])["answer"]
        truth[p] = answer
        pair = [answer, "none"]  # the right answer and one graded wrong for every task
        rng.shuffle(pair)
        candidates[p] = tuple(pair)
    return problems, candidates, truth


def test_the_weighted_probe_recovers_no_more_than_chance(app, space_service, tmp_path):
    """Issue 43's first finding: all samples of a problem share one reference, so answering a candidate on them
    and padding with answers already learned decided a problem a submission through the Ladder (48 of 48 hidden
    answers in 8 submissions, chance 24). Run here twice with the same attacker:

    * against the hidden track as it took uploads (scored, stored and published by the Space's own rules: rounding,
      the floor, the Ladder), it recovers every answer, so the test can tell;
    * against the started Space, whose hidden track takes no uploads (`/submit` refuses them, `hypergvl submit`
      too), it learns nothing: its answers are what guessing gives, and nothing is stored."""
    from hypergvl.space.service import HIDDEN_BY_REQUEST

    hidden = space_service.sets.current("hidden").name
    problems, candidates, truth = _probe_setup(space_service, hidden)
    n = len(problems)
    assert n >= 12 and all(len(ids) == len(combinations()) for ids in problems.values())

    then = fresh(space_service, tmp_path / "then")
    counter = iter(range(10_000))

    def as_it_was(records):  # the pre-issue-43 hidden track: an upload scored and published
        entry = server_entry(then, hidden, records, f"org/probe{next(counter)}", "ip:attacker", origin="upload")
        shown = then.shown_scores(entry)
        return None if shown is None else shown["accuracy"]

    recovered = weighted_probe(as_it_was, problems, candidates)
    assert sum(recovered[p] == truth[p] for p in problems) == n  # the attack works where uploads are scored

    answers = []

    def live(records):
        up = jsonl(tmp_path / f"probe{len(answers)}.jsonl", records)
        answers.append(submit_text(app.client, *args(up, f"org/probe{len(answers)}", hidden)))
        return _shown_accuracy(answers[-1])

    recovered = weighted_probe(live, problems, candidates)
    # the form offers the public set only, so the endpoint refuses a hidden one as an input it does not take
    assert answers and all(a.startswith("Refused") and "not in the list of choices" in a for a in answers), answers[0]
    with pytest.raises(SubmissionError) as refused:  # and the service behind it, with the way to a hidden score
        app.svc.submit_upload(jsonl(tmp_path / "direct.jsonl", lines(space_service, "hidden")),
                              Submission(model="org/direct", testset=hidden), "ip:attacker")
    assert str(refused.value) == HIDDEN_BY_REQUEST
    hits = sum(recovered[p] == truth[p] for p in problems)
    blind = sum(candidates[p][1] == truth[p] for p in problems)  # the attacker's fallback without any answer
    assert hits == blind  # exactly what guessing gives: the Space told it nothing
    assert hits <= 10  # Binomial(12, 1/2) above its 98th percentile would be suspicious of the seed, not the Space
    assert not [e for e in app.svc.store.entries() if e.testset == hidden]


def test_solving_the_download_scores_nothing_hidden(app, space_service, tmp_path, capsys):
    """Issue 43's second finding: the questions-only download kept every parameter, and the project's own solvers
    answered it in 1.8 s for a perfect hidden score. Now no page or route serves a hidden set's questions; solved
    responses (here the symbolic baseline's: it reads most answers off the question) are refused on the hidden track
    by the Space and by `hypergvl submit`, and on the public set, where they are accepted, the row says they were
    uploaded, unlike the server's own runs."""
    from hypergvl.cli import main as hypergvl
    from hypergvl.space.tabs.leaderboard import leaderboard_frame
    from hypergvl.space.tabs.submit import download_zip
    from hypergvl.space.scoring import SubmissionError as Refused
    from hypergvl.space.service import HIDDEN_BY_REQUEST

    svc = app.svc
    hidden, public = svc.sets.current("hidden"), svc.sets.current("public")
    config = urllib.request.urlopen(app.url.rstrip("/") + "/config", timeout=30).read().decode()
    assert '"dl-public"' in config and '"dl-hidden"' not in config and "questions only" not in config
    with pytest.raises(Refused, match="never served"):
        download_zip(svc, hidden.name)
    guessed = f"{app.url.rstrip('/')}/gradio_api/file={svc.config.data_dir / 'downloads' / (hidden.name + '.zip')}"
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(guessed, timeout=30)
    assert not [p for p in (svc.config.data_dir / "downloads").glob("*") if hidden.name in p.name]

    solved = {k: lines(space_service, k) for k in ("hidden", "public")}
    answer = submit_text(app.client, *args(jsonl(tmp_path / "solved.jsonl", solved["hidden"]), "org/solver",
                                           hidden.name))
    assert answer.startswith("Refused") and "not in the list of choices" in answer
    with pytest.raises(Refused) as refused:
        svc.submit_upload(jsonl(tmp_path / "direct.jsonl", solved["hidden"]), Submission(model="org/solver",
                                                                                        testset=hidden.name), "ip:1")
    assert str(refused.value) == HIDDEN_BY_REQUEST
    run = tmp_path / "run"
    shutil.copytree(seeded_run(space_service, kind="hidden"), run)
    code = hypergvl(["submit", str(run), "--space", app.url, "--model", "org/solver", "--testset", "hidden",
                     "--type", "open", "--params", "7"])
    assert code == 2 and "the hidden set takes no uploaded run" in capsys.readouterr().err

    answer = app.client.predict(*args(jsonl(tmp_path / "public.jsonl", solved["public"]), "org/solver",
                                      public.name), api_name="/submit")
    assert answer.startswith("Accepted") and "uploaded responses" in answer and _shown_accuracy(answer) > 50
    assert not [e for e in svc.store.entries() if e.testset == hidden.name]
    frame = leaderboard_frame(svc, public.name, columns=["All", "Scored from"])
    assert frame.loc[frame["Model"] == "org/solver", "Scored from"].tolist() == ["uploaded responses"]


def test_the_rejection_count_survives_a_restart(space_service, tmp_path):
    """The counter lived in memory, so a restart reset it; now it is in the Space's data folder."""
    from hypergvl.space.service import RateLimited

    svc = fresh(space_service, tmp_path, reject_limit=2)
    bad = jsonl(tmp_path / "bad.jsonl", [{"id": "nope", "response": "x"}])
    public = svc.sets.current("public").name
    for i in range(2):
        with pytest.raises(SubmissionError, match="unknown sample id"):
            svc.submit_upload(bad, Submission(model=f"org/b{i}", testset=public), "prober")
    restarted = Service(svc.config, svc.store, svc.sets)
    with pytest.raises(RateLimited, match="at most 2 rejected"):
        restarted.submit_upload(bad, Submission(model="org/b3", testset=public), "prober")
    assert restarted.counters.rejections("someone-else") == 0
