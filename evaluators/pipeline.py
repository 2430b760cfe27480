"""The harness's data path: samples prepared ahead of the model, answers taken as they arrive.

docs/design.md: "The model, not the data pipeline, should be the bottleneck: prepare the next samples while the current
ones are answered." Two stages:

* :func:`prefetch` reads rows, images and prompts (and runs an adapter's ``prepare``, e.g. the transformers
  processor) in worker threads, in order, a bounded number of units ahead of the consumer.
* :func:`answers` asks the adapter. An adapter with a ``concurrency`` attribute above 1 (a server: ``openai:``)
  gets a sliding window: up to ``concurrency`` single-sample requests in flight at every moment, a new one sent as
  soon as any returns (no barrier between batches). Any other adapter gets consecutive batches; an adapter with
  ``prepare(batch)`` and ``run(prepared)`` has its CPU work done by the prefetch threads, its model work here.

Answers are yielded in completion order with their latency. A failed request stops new submissions; the requests
already in flight are still collected and yielded, then the first error is raised, so every answer received is
written before the run stops.
"""
from __future__ import annotations

import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Iterable, Iterator

_END = object()


def prefetch(fn: Callable[[Any], Any], units: Iterable, *, workers: int = 2, ahead: int = 8) -> Iterator:
    """``fn(unit)`` for each unit, in order, computed by ``workers`` threads up to ``ahead`` units in advance."""
    if workers < 1 or ahead < 1:
        raise ValueError("prefetch needs workers >= 1 and ahead >= 1")
    it = iter(units)
    pool = ThreadPoolExecutor(workers, thread_name_prefix="hypergvl-prefetch")
    pending: deque[Future] = deque()
    try:
        for unit in it:
            pending.append(pool.submit(fn, unit))
            if len(pending) >= ahead:
                break
        while pending:
            result = pending.popleft().result()
            unit = next(it, _END)
            if unit is not _END:
                pending.append(pool.submit(fn, unit))
            yield result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _timed(fn: Callable, arg) -> tuple[list, float]:
    t0 = time.perf_counter()
    out = fn(arg)
    return out, time.perf_counter() - t0


def window_size(adapter) -> int:
    """Requests the harness keeps in flight for ``adapter``: its ``concurrency`` (servers), else 1 (batches)."""
    c = getattr(adapter, "concurrency", 1)
    return c if isinstance(c, int) and c > 1 else 1


def answers(adapter, units: Iterator[tuple[list[dict], Any]]) -> Iterator[tuple[dict, str, float]]:
    """``(item, response, latency_s)`` for every item of the prepared units ``(items, payload)``, as they arrive.
    ``response`` is what the adapter returned: a ``str``, or an ``adapters.Generation`` that also carries its
    ``finish_reason``.

    ``payload`` is what the adapter's ``run`` takes (prepared in advance) or the list of ``Sample`` for
    ``generate``; a windowed adapter gets one-item units."""
    run = getattr(adapter, "run", None) if hasattr(adapter, "prepare") else None
    call = run or adapter.generate
    window = window_size(adapter)
    if window == 1:
        for items, payload in units:
            responses, seconds = _timed(call, payload)
            if len(responses) != len(items):
                raise RuntimeError(f"the model returned {len(responses)} responses for {len(items)} samples")
            for item, response in zip(items, responses):
                yield item, response, seconds / len(items)
        return
    with ThreadPoolExecutor(window, thread_name_prefix="hypergvl-request") as pool:
        in_flight: dict[Future, list[dict]] = {}
        error: BaseException | None = None
        exhausted = False
        try:
            while True:
                while not exhausted and error is None and len(in_flight) < window:
                    unit = next(units, _END)
                    if unit is _END:
                        exhausted = True
                        break
                    items, payload = unit
                    in_flight[pool.submit(_timed, call, payload)] = items
                if not in_flight:
                    break
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for fut in done:
                    items = in_flight.pop(fut)
                    try:
                        responses, seconds = fut.result()
                    except BaseException as exc:  # noqa: BLE001 - re-raised once the window has drained
                        error = error or exc
                        continue
                    for item, response in zip(items, responses):
                        yield item, response, seconds / len(items)
        finally:
            for fut in in_flight:
                fut.cancel()
        if error is not None:
            raise error
