"""``hypergvl space worker``: run the Space's PENDING evaluation requests, one at a time.

The worker claims a request (:meth:`hypergvl.space.store.Store.claim`: two workers cannot both win it), renews the claim while
it runs, answers the request's test set through the harness (``hypergvl.evaluators.harness.evaluate_model``, on the full
build: a hidden set's references never leave the server), re-scores the raw responses exactly as an upload is
re-scored (:func:`hypergvl.space.scoring.score`), and stores the entry and FINISHED in one step, or FAILED with the error.

A worker that dies leaves its claim to expire: the request returns to PENDING and the next worker resumes it from
the same run folder (``<data>/runs/<request id>``), so answers already given are kept.

    hypergvl space worker [--once] [--poll-s 10] [--ttl-s 600] [--worker-id NAME]
        [--base-url URL]   # the OpenAI-compatible endpoint that serves openai:<name> requests (closed models)
"""
from __future__ import annotations

import argparse
import logging
import os
import socket
import threading
import time
from pathlib import Path

from .scoring import parse_samples, score, scorer_version, scoring_provenance
from .config import SpaceConfig
from .service import Service, make_service
from .store import Entry, Request

log = logging.getLogger(__name__)


def evaluate_to_entry(service: Service, model: str, testset_name: str, track: str, out: Path, *,
                      model_options: dict | None = None, routing: str | None = None, **meta) -> Entry:
    """Answer ``testset_name`` with ``model`` (resumable in ``out``) and return the server-scored entry."""
    from hypergvl.evaluators.harness import evaluate_model
    from hypergvl.evaluators.run_folder import LOG
    from hypergvl.builder import TEXT_ONLY

    testset = service.sets.get(testset_name)
    kind = track.partition(":")[0]
    evaluate_model(testset.build, model, out, visual_reps=(TEXT_ONLY,) if kind == "text-only" else None,
                   routing=routing, model_options=model_options, progress=False)
    records = parse_samples((out / LOG).read_bytes(), service.config.limits)
    scored = score(records, service.sets.index(testset.name), kind)
    raw = service.keep_raw(out / LOG)  # what a re-grade under a new scorer version reads
    return Entry(model=meta.pop("name", model), testset=testset.name, track=track, scores=scored.scores,
                 cells=scored.cells, num_samples=scored.num_samples, dataset_sha256=testset.served_sha256,
                 raw_sha256=raw, scorer_version=scorer_version(), provenance=scoring_provenance(), **meta)


class Worker:
    def __init__(self, service: Service, worker_id: str | None = None, *, ttl_s: float | None = None,
                 base_url: str | None = None):
        self.service = service
        self.id = worker_id or f"{socket.gethostname()}-{os.getpid()}"
        self.ttl_s = ttl_s or service.config.claim_ttl_s
        self.base_url = base_url

    def _options(self, req: Request) -> dict:
        prefix = req.model.partition(":")[0]
        if prefix == "hf":
            return {"revision": req.revision}
        if prefix == "openai":
            if not self.base_url:
                raise RuntimeError("this worker serves no openai: models (start it with --base-url)")
            return {"base_url": self.base_url}
        return {}

    def run_once(self) -> Request | None:
        """Claim and run one request; returns it (None when the queue is empty)."""
        req = self.service.store.claim(self.id, self.ttl_s)
        if req is None:
            return None
        stop = threading.Event()

        def heartbeat():
            while not stop.wait(self.ttl_s / 3):
                try:
                    if not self.service.store.renew(req.id, self.id, self.ttl_s):
                        log.warning("%s: lost the claim on %s; another worker may finish it", self.id, req.id)
                except Exception as exc:  # noqa: BLE001 - a failed renewal only shortens the claim
                    log.warning("%s: could not renew the claim on %s: %s", self.id, req.id, exc)

        beat = threading.Thread(target=heartbeat, daemon=True)
        beat.start()
        try:
            if req.model.partition(":")[0] not in self.service.config.request_prefixes:
                raise RuntimeError(f"{req.model}: this Space does not run such models")
            entry = evaluate_to_entry(
                self.service, req.model, req.testset, req.track, self.service.config.data_dir / "runs" / req.id,
                model_options=self._options(req), revision=req.revision, model_type=req.model_type,
                num_parameters=req.num_parameters, link=req.link, origin="request", submitter=req.submitter)
            entry.id = req.id  # one entry per request, whichever worker finishes it
            if not self.service.store.finish(req.id, self.id, entry):
                log.warning("%s: %s was taken over by another worker; its result is kept there", self.id, req.id)
        except Exception as exc:  # noqa: BLE001 - shown to the user on the queue panel
            message = " ".join(f"{type(exc).__name__}: {exc}".split())
            self.service.store.fail(req.id, self.id, message[:500])
        # an interrupt (Ctrl-C, SIGTERM) leaves the claim to expire: the request returns to PENDING
        finally:
            stop.set()
        return req

    def run(self, poll_s: float = 10.0, once: bool = False) -> None:
        while True:
            done = self.run_once()
            if once:
                return
            if done is None:
                time.sleep(poll_s)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="hypergvl space worker", description=__doc__.splitlines()[0])
    p.add_argument("--once", action="store_true", help="run at most one request, then exit")
    p.add_argument("--poll-s", type=float, default=10.0)
    p.add_argument("--ttl-s", type=float, help="claim lifetime (renewed every third of it while running)")
    p.add_argument("--worker-id")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint for openai:<name> requests")
    args = p.parse_args(argv)

    service = make_service(SpaceConfig.from_env())
    Worker(service, args.worker_id, ttl_s=args.ttl_s, base_url=args.base_url).run(args.poll_s, args.once)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
