"""The leaderboard Space under load: simulated visitors, submitters and the worker, driven by Locust.

The Space is started as its own process (``hypergvl space serve --port P --data-dir D``), its worker as another
(``hypergvl space worker --data-dir D``), and Locust (``pip install -e .[bench]``) runs in this process:

* **visitors** open the page (``GET /`` and every event the page fires at load, as the browser does: the queued ones
  through ``/gradio_api/queue/join`` and the event stream, the others through ``/gradio_api/run/predict``), then
  browse: every listener of every tab (Leaderboard filters with random choices, Representations, Router, Browse,
  the queue), 0.5 to 2 s apart;
* **submitters** (one per 10 visitors) upload a run through Gradio's upload route and submit it (each a new file,
  re-scored), or request an evaluation for the worker (which fails it: no model is reachable offline, so the
  worker's pass is short);
* at the start of each level, one **worst-case upload** (the public set, every response ~19,000 characters of the
  grader's worst case, as ``tests/space/test_isolation.py``) is submitted and graded while the visitors browse.

For each level (10, 50, 100 concurrent visitors by default) it reports p50/p95/p99 per endpoint (an event's time
is its whole round trip: join, queue, run, result; the events in flight when a level ends are waited for and
counted whole), the error rate, and the server's memory (its process and its children: idle before the level, and
the peak while the worst case is graded). The load generator runs on the same
machine as the Space: on a 2-core machine it takes cores the Space would have.

    .venv/bin/python benchmarks/space_load.py [--visitors 10 50 100] [--duration 60] [--per-task 4]
        [--data-dir DIR] [--out benchmarks/results/space_load.md]
    .venv/bin/python benchmarks/space_load.py --smoke     # 2 visitors, 5 s, the one-problem sets: seconds
"""
from __future__ import annotations

from gevent import monkey  # locust's own dependency; its users are greenlets: patched before ssl is imported

monkey.patch_all()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from pathlib import Path  # noqa: E402

import gevent  # noqa: E402
import psutil  # noqa: E402
import requests  # noqa: E402
from locust import HttpUser, between, events, task  # noqa: E402
from locust.env import Environment  # noqa: E402
from locust.stats import StatsEntry  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GOAL = "50 visitors: p95 < 1 s, p99 < 2 s, no errors, while a worst-case upload is graded"
SUBMITTER_EVENTS = ("upload + /submit", "/request")  # the rest is what visitors do
DRAIN_S = 180.0  # how long the events in flight at a level's end are waited for (then cut off: errors)


class Gradio:
    """The app's config (``/config``) and the two ways the browser runs an event."""

    def __init__(self, url: str):
        self.url = url.rstrip("/")
        cfg = requests.get(f"{self.url}/config", timeout=60).json()
        self.components = {c["id"]: c for c in cfg["components"]}
        self.deps = cfg["dependencies"]
        self.loads = [d for d in self.deps if any(t[1] == "load" for t in d["targets"])]
        self.browse = [d for d in self.deps if d not in self.loads and d.get("api_name") not in ("submit", "request")
                       and not any(t[1] == "tick" for t in d["targets"])]
        self.by_api = {d.get("api_name"): d for d in self.deps}

    def name(self, dep: dict) -> str:
        api = dep.get("api_name")
        if api and not str(api).startswith(("false", "lambda")):
            return f"/{api}"
        target, event = dep["targets"][0]
        elem = self.components.get(target, {}).get("props", {}).get("elem_id") or f"#{target}"
        return f"{elem}.{event}" if event != "load" else f"page load #{dep['id']}"

    def values(self, dep: dict, vary: bool) -> list:
        """The inputs' default values; ``vary``: a random choice for the component the visitor changed (a radio,
        dropdown or checkbox group), or for the filters of the Leaderboard's button on the public set (a hidden
        set refuses filters, as a visitor is told)."""
        out = []
        target = dep["targets"][0][0]
        for n, i in enumerate(dep["inputs"]):
            props = self.components[i].get("props", {})
            value, choices = props.get("value"), [c[1] if isinstance(c, list) else c for c in props.get("choices") or []]
            varied = i == target or (dep.get("api_name") == "leaderboard" and n > 0)
            if vary and varied and choices:
                if isinstance(value, list):
                    value = random.sample(choices, k=random.randint(1, len(choices)))
                else:
                    value = random.choice(choices)
            out.append(value)
        return out

    def run(self, session: requests.Session, dep: dict, data: list, session_hash: str) -> None:
        """Run one event as the browser does; raises on an error reply."""
        errors = []
        self.run_together(session, [(dep, data)], session_hash, lambda dep, seconds, exc: errors.append(exc))
        if errors[0] is not None:
            raise errors[0]

    def run_together(self, session: requests.Session, jobs: list[tuple[dict, list]], session_hash: str,
                     record) -> None:
        """Run events as the browser does (at a page's opening, every one at once): the queued ones joined and
        their results read from the session's one event stream, the others posted; ``record(dep, seconds, error)``
        as each ends."""
        start = time.perf_counter()

        def body(dep, data):
            return {"data": data, "fn_index": dep["id"], "trigger_id": dep["targets"][0][0],
                    "session_hash": session_hash, "event_data": None}

        def direct(dep, data):
            try:
                session.post(f"{self.url}/gradio_api/run/predict", json=body(dep, data), timeout=300).raise_for_status()
                record(dep, time.perf_counter() - start, None)
            except Exception as exc:  # noqa: BLE001 - counted, as every failure
                record(dep, time.perf_counter() - start, exc)

        spawned = [gevent.spawn(direct, dep, data) for dep, data in jobs if dep.get("queue") is False]
        pending = {}
        for dep, data in jobs:
            if dep.get("queue") is not False:
                r = session.post(f"{self.url}/gradio_api/queue/join", json=body(dep, data), timeout=300)
                r.raise_for_status()
                pending[r.json()["event_id"]] = dep
        if pending:
            with session.get(f"{self.url}/gradio_api/queue/data", params={"session_hash": session_hash},
                             stream=True, timeout=300) as stream:
                for line in stream.iter_lines(chunk_size=None):  # as it arrives (SSE lines are short)
                    if not line.startswith(b"data:"):
                        continue
                    msg = json.loads(line[5:])
                    if msg.get("msg") == "process_completed" and msg.get("event_id") in pending:
                        dep = pending.pop(msg["event_id"])
                        record(dep, time.perf_counter() - start,
                               None if msg.get("success") else RuntimeError(str(msg.get("output"))[:200]))
                        if not pending:
                            break
                    if msg.get("msg") == "close_stream":
                        break
            for dep in pending.values():
                record(dep, time.perf_counter() - start, RuntimeError("the event stream ended without its result"))
        gevent.joinall(spawned)


def timed(environment, name: str, fn) -> None:
    """``fn()`` recorded in Locust's statistics under ``name`` (its whole time; an exception is a failure)."""
    start = time.perf_counter()
    exc = None
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - every failure is counted, none stops the run
        exc = e
    except BaseException:  # still in flight DRAIN_S after the level ended: counted, as a failure, with its time
        environment.events.request.fire(request_type="EVENT", name=name, response_length=0, context={},
                                        response_time=(time.perf_counter() - start) * 1e3,
                                        exception=RuntimeError(f"still running {DRAIN_S:.0f} s after the level ended"))
        raise
    environment.events.request.fire(request_type="EVENT", name=name, response_time=(time.perf_counter() - start) * 1e3,
                                    response_length=0, exception=exc, context={})


class Visitor(HttpUser):
    """Opens the page, then browses every tab's listeners."""

    wait_time = between(0.5, 2.0)
    gradio: Gradio = None  # set by the runner

    def on_start(self):
        self.session = requests.Session()
        self.hash = uuid.uuid4().hex[:11]
        self.page()

    def page(self):
        """GET / and then the page's load events, all at once (as the browser fires them), each timed from when
        they were sent; the page's time is the whole."""
        def record(dep, seconds, exc):
            self.environment.events.request.fire(request_type="EVENT", name=self.gradio.name(dep), context={},
                                                 response_time=seconds * 1e3, response_length=0, exception=exc)

        def load():
            self.session.get(self.gradio.url + "/", timeout=300).raise_for_status()
            self.gradio.run_together(self.session, [(dep, self.gradio.values(dep, False)) for dep in self.gradio.loads],
                                     self.hash, record)
        timed(self.environment, "page (GET / and its load events)", load)

    @task(1)
    def reload(self):
        self.hash = uuid.uuid4().hex[:11]
        self.page()

    @task(6)
    def browse(self):
        dep = random.choice(self.gradio.browse)
        timed(self.environment, self.gradio.name(dep),
              lambda: self.gradio.run(self.session, dep, self.gradio.values(dep, True), self.hash))


class Submitter(HttpUser):
    """Uploads a run and submits it (a new file each time), or requests an evaluation; one per 10 visitors, every
    2 to 5 s (far above the 5 a day a submitter may make: the benchmark lifts the Space's quotas)."""

    wait_time = between(2.0, 5.0)
    gradio: Gradio = None
    run_lines: list[dict] = []
    public: str = ""

    def on_start(self):
        self.session = requests.Session()
        self.hash = uuid.uuid4().hex[:11]

    @task(2)
    def upload(self):
        k = uuid.uuid4().hex[:8]
        lines = [dict(r) for r in self.run_lines]
        lines[0]["response"] = f"{lines[0]['response']} {k}"  # a new file: a new digest
        data = "".join(json.dumps(r) + "\n" for r in lines).encode()

        def go():
            r = self.session.post(f"{self.gradio.url}/gradio_api/upload", files={"files": ("samples.jsonl", data)},
                                  timeout=300)
            r.raise_for_status()
            path = r.json()[0]
            dep = self.gradio.by_api["submit"]
            payload = {"path": path, "meta": {"_type": "gradio.FileData"}, "orig_name": "samples.jsonl"}
            self.gradio.run(self.session, dep, [payload, f"bench/{k}", "", "main", "open", 7, "vision", "",
                                                self.public], self.hash)
        timed(self.environment, "upload + /submit", go)

    @task(1)
    def request(self):
        dep = self.gradio.by_api["request"]
        data = [f"bench/model-{uuid.uuid4().hex[:8]}", "", "main", "open", 7, "vision", self.public]
        timed(self.environment, "/request", lambda: self.gradio.run(self.session, dep, data, self.hash))


def worst_case(lines: list[dict], path: Path, tag: str, chars: int = 19_000) -> Path:
    """The run with every response a distinct worst case of the grader (tests/space/test_isolation.py's)."""
    with open(path, "w") as f:
        for i, r in enumerate(lines):
            r = {k: v for k, v in r.items() if k != "correct"}
            r["response"] = f"{tag}v{i}" + " 1" * (chars // 2)
            f.write(json.dumps(r) + "\n")
    return path


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` from ``/proc/PID/task/*/children`` (Linux): psutil's ``children()`` reads every
    process of the machine instead, and on a busy machine that scan, four times a second in this process's only
    thread, was most of the load generator's time (py-spy) and held every simulated visitor meanwhile."""
    out = []
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            out += [int(c) for c in children.read_text().split()]
        except OSError:
            pass
    return out


def tree_rss(proc: psutil.Process) -> int:
    """Resident memory of ``proc`` and its descendants (the grading host and its grading child included)."""
    total, todo = 0, [proc.pid]
    while todo:
        pid = todo.pop()
        try:
            total += psutil.Process(pid).memory_info().rss
        except psutil.Error:
            continue
        todo += _children(pid)
    return total


def start_space(data: Path, port: int, per_task: int, log) -> subprocess.Popen:
    env = dict(os.environ, HYPERGVL_PER_TASK=str(per_task), HF_HUB_OFFLINE="1",
               # the benchmark's submitters are one address: its quotas would refuse them after a few
               HYPERGVL_RATE_LIMIT="100000", HYPERGVL_REJECT_LIMIT="100000", HYPERGVL_UPLOAD_FILES="100000",
               HYPERGVL_UPLOAD_BYTES=str(2 ** 40), HYPERGVL_ANONYMOUS_REQUESTS="100000",
               # a deployed Space's default (SpaceConfig.view_refresh_s): views lag a submission by up to 5 s
               HYPERGVL_VIEW_REFRESH_S=os.environ.get("HYPERGVL_VIEW_REFRESH_S", "5"),
               HYPERGVL_SPACE_STUDIES=os.environ.get("HYPERGVL_SPACE_STUDIES", str(ROOT / "space" / "seed_studies")))
    return subprocess.Popen([sys.executable, "-m", "hypergvl.space.app", "--port", str(port), "--data-dir", str(data)],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def level(gradio: Gradio, server: psutil.Process, visitors: int, duration: float, worst: Path | None) -> dict:
    # at the level's end no new event starts, and the ones in flight are waited for (up to DRAIN_S) and counted with
    # their whole time: an event cut off was counted as an error with the time it had so far
    env = Environment(user_classes=[Visitor, Submitter], events=events, host=gradio.url, stop_timeout=DRAIN_S)
    runner = env.create_local_runner()
    idle = tree_rss(server)
    peak = [idle]
    graded = {}

    def sample():
        while True:
            peak[0] = max(peak[0], tree_rss(server))
            gevent.sleep(0.25)

    def grade_worst():
        s = requests.Session()
        start = time.perf_counter()
        try:
            r = s.post(f"{gradio.url}/gradio_api/upload", files={"files": ("samples.jsonl", worst.read_bytes())},
                       timeout=600)
            r.raise_for_status()
            payload = {"path": r.json()[0], "meta": {"_type": "gradio.FileData"}, "orig_name": "samples.jsonl"}
            gradio.run(s, gradio.by_api["submit"], [payload, f"bench/worst-{worst.stem}", "", "main", "open", 7,
                                                    "vision", "", Submitter.public], uuid.uuid4().hex[:11])
            graded["seconds"] = time.perf_counter() - start
        except Exception as exc:  # noqa: BLE001
            graded["error"] = f"{type(exc).__name__}: {exc}"[:200]

    sampler = gevent.spawn(sample)
    load_before = os.getloadavg()
    submitters = max(1, visitors // 10)
    runner.start(visitors + submitters, spawn_rate=max(1.0, (visitors + submitters) / 5))
    grader = gevent.spawn(grade_worst) if worst else None
    gevent.sleep(duration)
    runner.stop()
    runner.quit()
    if grader:
        grader.join(timeout=600)
    sampler.kill()
    load_after = os.getloadavg()
    stats = env.stats
    rows = []
    for (name, _), e in sorted(stats.entries.items()):
        rows.append({"endpoint": name, "n": e.num_requests, "errors": e.num_failures,
                     "p50": e.get_response_time_percentile(0.5) / 1e3, "p95": e.get_response_time_percentile(0.95) / 1e3,
                     "p99": e.get_response_time_percentile(0.99) / 1e3})
    # the goal's figure: what the visitors saw (the submitters' uploads wait for the one grading slot, by design,
    # behind the worst case: theirs are in "total" and in their own rows)
    seen = StatsEntry(stats, "visitors", None)
    for (name, _), e in stats.entries.items():
        if name not in SUBMITTER_EVENTS:
            seen.extend(e)
    errors = [f"{e.name}: {e.error}"[:160] for e in stats.errors.values()][:5]
    return {"visitors": visitors, "submitters": submitters, "duration_s": duration, "rows": rows,
            "total": _summary(stats.total), "visitors_only": _summary(seen),
            "memory_mib": {"idle": idle / 2 ** 20, "peak_while_grading": peak[0] / 2 ** 20},
            "worst_case": graded, "error_samples": errors,
            # the machine's 1/5/15-minute load averages as the level started and ended (other jobs share the cores)
            "load_average": {"before": list(load_before), "after": list(load_after)}}


def _summary(e: StatsEntry) -> dict:
    return {"n": e.num_requests, "errors": e.num_failures, "error_rate": e.fail_ratio,
            "p50": e.get_response_time_percentile(0.5) / 1e3, "p95": e.get_response_time_percentile(0.95) / 1e3,
            "p99": e.get_response_time_percentile(0.99) / 1e3}


def commit() -> str:
    """The checkout's commit, with ``+dirty`` when tracked files differ from it (the figures are then not its)."""
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                               text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (no git checkout)"
    return sha + ("+dirty" if dirty else "")


def report(results: list[dict], command: str, sha: str) -> str:
    out = ["# The Space under load (benchmarks/space_load.py)", "", f"Command: `{command}`", "",
           f"Commit: {sha}; visitors per level: {', '.join(str(r['visitors']) for r in results)}; "
           f"{os.cpu_count()} CPUs.", "",
           "The Space, its worker and Locust ran on one shared 2-core machine (other jobs running): the load "
           f"generator takes cores the Space would have. Goal: {GOAL}.", ""]
    out += ["Visitors' events only (the goal's figure; submitters' uploads wait for the one grading slot behind the "
            "worst case, and are in the totals below):", "",
            "| visitors | load average (1 min) at start / end | events | error rate | p50 s | p95 s | p99 s |",
            "|---|---|---|---|---|---|---|"]
    for r in results:
        v, la = r["visitors_only"], r["load_average"]
        out.append(f"| {r['visitors']} | {la['before'][0]:.1f} / {la['after'][0]:.1f} | {v['n']} | "
                   f"{v['error_rate']:.1%} | {v['p50']:.2f} | {v['p95']:.2f} | {v['p99']:.2f} |")
    out += ["", "Every event, visitors' and submitters':", "",
            "| visitors | load average (1 min) at start / end | events | error rate | p50 s | p95 s | p99 s | "
            "server MiB idle | peak while the worst case is graded | worst case graded in |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        t, m, w = r["total"], r["memory_mib"], r["worst_case"]
        la = r["load_average"]
        out.append(f"| {r['visitors']} | {la['before'][0]:.1f} / {la['after'][0]:.1f} | {t['n']} | {t['error_rate']:.1%} | {t['p50']:.2f} | {t['p95']:.2f} | "
                   f"{t['p99']:.2f} | {m['idle']:.0f} | {m['peak_while_grading']:.0f} | "
                   f"{w.get('seconds', 0):.0f} s{' ' + w['error'] if 'error' in w else ''} |")
    for r in results:
        out += ["", f"## {r['visitors']} visitors, {r['submitters']} submitters, {r['duration_s']:.0f} s", "",
                "| endpoint | n | errors | p50 s | p95 s | p99 s |", "|---|---|---|---|---|---|"]
        out += [f"| {x['endpoint']} | {x['n']} | {x['errors']} | {x['p50']:.2f} | {x['p95']:.2f} | {x['p99']:.2f} |"
                for x in r["rows"]]
        if r["error_samples"]:
            out += ["", "Errors: " + "; ".join(r["error_samples"])]
    return "\n".join(out) + "\n"


def wait_up(space: subprocess.Popen, url: str, log) -> subprocess.Popen:
    """Wait until the Space answers (a first start builds the sets and seeds the baselines: half a minute or more;
    later ones seconds); its log if it exits first."""
    while True:
        if space.poll() is not None:
            log.seek(0)
            raise SystemExit(f"the Space exited:\n{log.read()[-3000:]}")
        try:
            if requests.get(url + "/config", timeout=5).ok:
                return space
        except requests.RequestException:
            pass
        time.sleep(0.5)


def stop(procs: list) -> None:
    for proc in procs:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--visitors", type=int, nargs="+", default=[10, 50, 100])
    p.add_argument("--duration", type=float, default=60.0, help="seconds per level")
    p.add_argument("--per-task", type=int, default=4, help="the Space's test-set size (its default: 4)")
    p.add_argument("--data-dir", type=Path, help="a prepared data folder, built and seeded on first use; each run "
                   "works on a copy of it, so runs start from the same entries (and a second run in seconds)")
    p.add_argument("--port", type=int, default=7871)
    p.add_argument("--out", type=Path, help="write the report (Markdown) and a .json beside it")
    p.add_argument("--no-worst-case", action="store_true")
    p.add_argument("--smoke", action="store_true", help="2 visitors for 5 s on one-problem sets, no worst case")
    args = p.parse_args(argv)
    if args.smoke:
        args.visitors, args.duration, args.per_task, args.no_worst_case = [2], 5.0, 1, True
    tmp = tempfile.TemporaryDirectory(prefix="space-load-")
    data = Path(tmp.name) / "data"
    log = open(Path(tmp.name) / "space.log", "w+")
    url = f"http://127.0.0.1:{args.port}"
    t0 = time.monotonic()
    if args.data_dir:  # a prepared folder (built and seeded on first use), copied: every run starts from its entries
        if not (args.data_dir / "leaderboard.sqlite").exists():
            stop([wait_up(start_space(args.data_dir, args.port, args.per_task, log), url, log)])
        shutil.copytree(args.data_dir, data)
    space = start_space(data, args.port, args.per_task, log)
    worker = None
    try:
        wait_up(space, url, log)
        worker = subprocess.Popen([sys.executable, "-m", "hypergvl.space.worker", "--data-dir", str(data),
                                   "--poll-s", "2"], cwd=ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1",
                                                                        HYPERGVL_PER_TASK=str(args.per_task)),
                                  stdout=log, stderr=subprocess.STDOUT)
        print(f"the Space answers after {time.monotonic() - t0:.0f} s", flush=True)
        gradio = Gradio(url)
        Visitor.gradio = Submitter.gradio = gradio
        # untimed first: one visit, and the Representations tab on every set and model a visitor may pick. A Space that
        # has run a while has drawn its entries' figures (files kept in its data folder, drawn once per entry);
        # the level measures that state, not the first draws
        warm = requests.Session()
        for dep in gradio.loads + gradio.browse:
            gradio.run(warm, dep, gradio.values(dep, False), uuid.uuid4().hex[:11])
        for dep in gradio.browse:
            props = gradio.components[dep["targets"][0][0]].get("props", {})
            if props.get("elem_id") in ("rep-set", "rep-model"):
                for choice in props.get("choices") or []:
                    data_ = gradio.values(dep, False)
                    data_[dep["inputs"].index(dep["targets"][0][0])] = \
                        choice[1] if isinstance(choice, list) else choice
                    gradio.run(warm, dep, data_, uuid.uuid4().hex[:11])
        public = next(d for d in (data / "runs" / "seed").iterdir() if d.name.startswith("public"))
        Submitter.public = public.name
        Submitter.run_lines = [json.loads(x) for x in  # the seeded symbolic baseline's run: a valid upload
                               (public / "baseline-symbolic-vision" / "samples.jsonl").read_text().splitlines()]
        server = psutil.Process(space.pid)
        results = []
        for n in args.visitors:
            worst = None if args.no_worst_case else worst_case(
                [dict(r) for r in Submitter.run_lines], Path(tmp.name) / f"worst{n}-{uuid.uuid4().hex[:6]}.jsonl",
                tag=uuid.uuid4().hex[:6])
            r = level(gradio, server, n, args.duration, worst)
            t, v = r["total"], r["visitors_only"]
            print(f"{n:4d} visitors: {t['n']} events, errors {t['error_rate']:.1%}, p50 {t['p50']:.2f} s, "
                  f"p95 {t['p95']:.2f} s, p99 {t['p99']:.2f} s (visitors' own: {v['n']} events, errors "
                  f"{v['error_rate']:.1%}, p50 {v['p50']:.2f} s, p95 {v['p95']:.2f} s, p99 {v['p99']:.2f} s); server {r['memory_mib']['idle']:.0f} MiB idle, "
                  f"{r['memory_mib']['peak_while_grading']:.0f} MiB peak; worst case {r['worst_case']}; load average "
                  f"{r['load_average']['before'][0]:.1f} -> {r['load_average']['after'][0]:.1f}", flush=True)
            results.append(r)
        command = "python benchmarks/space_load.py " + " ".join(argv if argv is not None else sys.argv[1:])
        sha = commit()
        text = report(results, command, sha)
        if args.out:
            args.out.write_text(text)
            args.out.with_suffix(".json").write_text(json.dumps({"commit": sha, "command": command,
                                                                 "visitors": args.visitors, "levels": results},
                                                                indent=1))
        else:
            print(text)
        return 0
    finally:
        stop([worker, space])
        log.close()
        tmp.cleanup()


if __name__ == "__main__":
    raise SystemExit(main())
