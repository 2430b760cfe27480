"""Harness throughput: the sliding request window against a server, and the harness's own cost per sample.

1. Against the loopback OpenAI-compatible server of the tests (``tests/chat_server.py``, run in a process of its own
   like a real server), answering every request after a delay d: ``hypergvl evaluate`` samples/s at concurrency C
   beside the ideal C/d and beside the batch-barrier loop the harness had before (send C, wait for all C, repeat),
   measured in the same run, and beside a raw pool (C threads posting ready-made bodies back to back: the most this
   client machine can do, whatever the harness). With a fixed d the barrier loses its per-batch gaps and its image
   work in the main thread; with a spread delay (uniform in [d/2, 3d/2], as real servers answer) each batch also
   waits for its slowest request.
2. A zero-cost model that takes the image (its ``prepare`` decodes the PNG, in the prefetch threads): main-thread
   CPU time per sample (prompt, verification, log line), beside the old single-threaded loop that decodes the
   image in the main thread.

    .venv/bin/python benchmarks/harness.py                 # d = 200 ms, C = 8 32 128
    .venv/bin/python benchmarks/harness.py --delay 0.1 --concurrency 8 32
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def _server(delay: float, spread: bool, conn) -> None:
    from chat_server import serve

    rng, lock = random.Random(0), threading.Lock()

    def wait(prompt: str) -> float:
        if not spread:
            return delay
        with lock:
            return rng.uniform(0.5 * delay, 1.5 * delay)

    with serve(delay=wait, record=False) as chat:
        conn.send(chat.base_url)
        while conn.recv() == "span":  # until the parent says stop
            with chat.lock:
                events, chat.events = chat.events, []
            arrivals = [t for i, (t, n) in enumerate(events) if n > (events[i - 1][1] if i else 0)]
            conn.send((len(arrivals), arrivals[0] if arrivals else 0.0, arrivals[-1] if arrivals else 0.0))


class Server:
    def __init__(self, delay: float, spread: bool):
        self.parent, child = mp.Pipe()
        self.proc = mp.get_context("spawn").Process(target=_server, args=(delay, spread, child), daemon=True)
        self.proc.start()
        self.url = self.parent.recv()

    def span(self) -> float:
        """Requests per second the server received since the last call, from its first to its last arrival: the
        rate the client sustained (dataset loading and scoring around the requests are timed apart, as is the
        tail, when the last requests are in flight and none is left to send)."""
        self.parent.send("span")
        count, first, last = self.parent.recv()
        return (count - 1) / (last - first) if last > first else float("nan")

    def close(self) -> None:
        self.parent.send("stop")
        self.proc.join(10)


def build(out: Path, per_task: int) -> Path:
    from hypergvl.builder import BuildConfig, build as run_build

    run_build(BuildConfig(out=out, per_task=per_task, workers=2), progress=False)
    return out


def windowed(dataset: Path, url: str, c: int, n: int, tmp: Path) -> float:
    """Seconds of the whole ``evaluate_model`` call (dataset loading, digests and the final scoring included)."""
    from hypergvl.evaluators.harness import evaluate_model

    t0 = time.perf_counter()
    evaluate_model(str(dataset), "openai:bench", tmp / f"w{c}-{time.monotonic_ns()}", limit=n, progress=False,
                   model_options={"base_url": url, "concurrency": c, "max_retries": 0})
    return time.perf_counter() - t0


def barrier(dataset: Path, url: str, c: int, n: int) -> float:
    """The harness's loop before the window: read a batch of C samples, send all, wait for all, repeat."""
    from datasets import load_dataset

    from hypergvl.evaluators.adapters import Sample, make_adapter
    from hypergvl import expand

    vqa = expand(load_dataset(str(dataset), split="test"))
    adapter = make_adapter("openai:bench", base_url=url, concurrency=c, max_retries=0)
    for start in range(0, n, c):
        items = [vqa[k] for k in range(start, min(n, start + c))]
        adapter.generate([Sample(s["prompt"], s["image"]) for s in items])


def raw_pool(dataset: Path, url: str, c: int, n: int) -> None:
    """The most this client machine can do: C threads posting ready-made request bodies back to back (no reading,
    no prompt assembly, no verification or log): the ceiling the harness is measured against beside C/d."""
    from datasets import load_dataset

    from hypergvl.evaluators.adapters import Sample, make_adapter
    from hypergvl import expand

    vqa = expand(load_dataset(str(dataset), split="test"), decode_images=False)
    adapter = make_adapter("openai:bench", base_url=url, concurrency=c, max_retries=0)
    payloads = adapter.prepare([Sample(vqa[k]["prompt"], vqa[k]["image"]) for k in range(n)])
    adapter.run(payloads)


class ZeroCost:
    """Answers "Ans: 0" at once; ``prepare`` decodes each image as a vision model's processor would."""

    def prepare(self, batch):
        from hypergvl.evaluators.adapters import _pil_image

        return [_pil_image(s.image).size if s.image is not None else None for s in batch]

    def run(self, prepared):
        return ["Ans: 0"] * len(prepared)

    def generate(self, batch):
        return self.run(self.prepare(batch))

    def info(self):
        from hypergvl.evaluators.adapters import ModelInfo

        return ModelInfo("bench:zero", "baseline", None, 0)


def own_cost(dataset: Path, n: int, tmp: Path) -> tuple[float, float, float, float]:
    """(main-thread CPU ms/sample, wall ms/sample) for the harness, then the same for the old in-line loop."""
    from datasets import load_dataset

    from hypergvl.evaluators.adapters import ADAPTERS, Sample, register_adapter
    from hypergvl.evaluators.harness import evaluate_model
    from hypergvl import expand
    from hypergvl.tasks import score_response

    if "bench" not in ADAPTERS:
        register_adapter("bench")(lambda rest, **o: ZeroCost())
    out = tmp / "zero"
    evaluate_model(str(dataset), "bench:zero", out / "warm", limit=64, progress=False)  # imports, metric load
    c0, t0 = time.thread_time(), time.perf_counter()
    evaluate_model(str(dataset), "bench:zero", out / "run", limit=n, progress=False)
    cpu, wall = time.thread_time() - c0, time.perf_counter() - t0

    vqa = expand(load_dataset(str(dataset), split="test"))
    model = ZeroCost()
    c0, t0 = time.thread_time(), time.perf_counter()
    with open(tmp / "naive.jsonl", "w") as f:
        for k in range(n):
            s = vqa[k]  # decodes the PNG here, in the main thread
            response = model.generate([Sample(s["prompt"], s["image"])])[0]
            v = score_response(s["reference"], response)
            rec = {"id": s["id"], "response": response, "parsed": v.parsed, "correct": v.correct,
                   "reference": s["reference"]}
            f.write(json.dumps(rec) + "\n")
    ncpu, nwall = time.thread_time() - c0, time.perf_counter() - t0
    return 1e3 * cpu / n, 1e3 * wall / n, 1e3 * ncpu / n, 1e3 * nwall / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay", type=float, default=0.2, help="server delay d in seconds (default 0.2)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32, 128])
    parser.add_argument("--rounds", type=int, default=20, help="samples per run = rounds x C")
    parser.add_argument("--per-task", type=int, default=8, help="meta problems per task of the build measured")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        dataset = build(tmp / "hypergvl", args.per_task)
        from datasets import load_dataset

        rows = len(load_dataset(str(dataset), split="test"))
        size = 35 * rows
        print(f"build: {rows} meta problems, {size} samples; server delay d = {1e3 * args.delay:.0f} ms")
        for spread in (False, True):
            server = Server(args.delay, spread)
            try:
                label = "uniform [d/2, 3d/2]" if spread else "fixed d"
                print(f"\nserver delay {label}")
                print(f"{'C':>5} {'n':>6} {'ideal C/d':>10} {'raw pool':>9} {'window':>8} {'% ideal':>8} {'% raw':>6} "
                      f"{'barrier':>8} {'% ideal':>8} {'window/barrier':>15} {'whole call':>11}")
                server.span()
                for c in args.concurrency:
                    n = min(size, args.rounds * c)
                    ideal = c / args.delay
                    raw_pool(dataset, server.url, c, n)
                    r = server.span()
                    seconds = windowed(dataset, server.url, c, n, tmp)
                    w = server.span()
                    barrier(dataset, server.url, c, n)
                    b = server.span()
                    print(f"{c:>5} {n:>6} {ideal:>10.1f} {r:>9.1f} {w:>8.1f} {100 * w / ideal:>7.1f}% "
                          f"{100 * w / r:>5.0f}% {b:>8.1f} {100 * b / ideal:>7.1f}% {w / b:>14.2f}x {seconds:>10.1f}s",
                          flush=True)
            finally:
                server.close()
        n = min(size, 2000)
        cpu, wall, ncpu, nwall = own_cost(dataset, n, tmp)
        print(f"\nzero-cost model taking the image, {n} samples:")
        print(f"  harness:    main-thread CPU {cpu:.3f} ms/sample, wall {wall:.3f} ms/sample "
              f"(84,000 samples: {84 * wall:.0f} s)")
        print(f"  naive loop: main-thread CPU {ncpu:.3f} ms/sample, wall {nwall:.3f} ms/sample "
              f"(ratio naive/harness: CPU {ncpu / cpu:.1f}x, wall {nwall / wall:.1f}x)")


if __name__ == "__main__":
    main()
