"""``hypergvl space worker``: run the Space's PENDING evaluation requests, one at a time.

The worker claims a request (:meth:`hypergvl.space.store.Store.claim`: two workers cannot both win it), renews the claim while
it runs, answers the request's test set through the harness (``hypergvl.evaluators.harness.evaluate_model``, on the full
build: a hidden set's references never leave the server), re-scores the raw responses exactly as an upload is
re-scored (:func:`hypergvl.space.scoring.score`), and stores the entry and FINISHED in one step, or FAILED with the error.
This is the only way a hidden-set score is made (issue 43): uploaded responses are scored on the public set only.

Budgets (:class:`~hypergvl.space.config.SpaceConfig`): each request runs in a child process stopped after
``request_budget_s`` seconds (``$HYPERGVL_REQUEST_BUDGET_S``, FAILED then); each response is at most
``request_max_new_tokens`` tokens (``$HYPERGVL_REQUEST_MAX_NEW_TOKENS``); a request whose worker died
``request_attempts`` times (``$HYPERGVL_REQUEST_ATTEMPTS``) is FAILED instead of claimed again. An API model's
transient HTTP errors are retried by its adapter (``max_retries`` with backoff); a model's own error fails the request
at once, with the error shown on the queue panel.

A worker that dies leaves its claim to expire: the request returns to PENDING and the next worker resumes it from
the same run folder (``<data>/runs/<request id>``), so answers already given are kept.

Backends, by the request's model prefix:

* ``hf:ORG/NAME``: the model's ``transformers`` architecture, on this machine's accelerators through ``accelerate``
  (no remote code: a model whose config needs ``trust_remote_code`` fails to load);
* ``openai:NAME``: an OpenAI-compatible chat server the maintainer runs (``--base-url``; ``$OPENAI_API_KEY`` its key).
  A Hugging Face Inference Endpoint serving TGI or vLLM is one: ``--base-url https://<endpoint>.endpoints.huggingface.cloud/v1``
  with ``OPENAI_API_KEY`` set to a token that may call it;
* where the Space has no accelerator: ``--hf-job FLAVOR`` runs one worker pass as a Hugging Face Job on that hardware
  (``a10g-small``, ``a100-large``, ...) against the Space's Hub store, with the Space's secrets passed as the job's.

    hypergvl space worker [--once] [--poll-s 10] [--ttl-s 600] [--worker-id NAME]
        [--base-url URL]   # the OpenAI-compatible endpoint that serves openai:<name> requests (closed models)
    hypergvl space worker --hf-job FLAVOR [--image IMAGE] [--wheel FILE | --requirement REQ]
"""
from __future__ import annotations

import argparse
import hashlib
import logging
import os
import shlex
import socket
import tempfile
import threading
import time
from pathlib import Path

from hypergvl.evaluators.harness import evaluate_model
from hypergvl.evaluators.metric_spaces import package_source
from hypergvl.evaluators.run_folder import LOG
from hypergvl.vqa import TEXT_ONLY

from .scoring import parse_samples, score, scorer_version, scoring_provenance
from .config import SpaceConfig
from .isolation import run_bounded
from .service import Service, make_service, redact_paths
from .store import Entry, Request

log = logging.getLogger(__name__)


def _answer(build: str, model: str, out: str, visual_reps, routing, model_options) -> None:
    evaluate_model(build, model, Path(out), visual_reps=visual_reps, routing=routing, model_options=model_options,
                   progress=False)


def evaluate_to_entry(service: Service, model: str, testset_name: str, track: str, out: Path, *,
                      model_options: dict | None = None, routing: str | None = None, budget_s: float | None = None,
                      **meta) -> Entry:
    """Answer ``testset_name`` with ``model`` (resumable in ``out``) and return the server-scored entry; with
    ``budget_s``, in a child process stopped after that many seconds (a :class:`SubmissionError` then)."""
    testset = service.sets.get(testset_name)
    kind = track.partition(":")[0]
    work = (testset.build, model, str(out), (TEXT_ONLY,) if kind == "text-only" else None, routing, model_options)
    if budget_s is None:
        _answer(*work)
    else:
        # spawned, not forked: the evaluation imports the harness and the model's libraries, and a forked child would
        # wait forever on a module another thread (the Space warming a tab) was importing at the fork
        run_bounded(_answer, work, seconds=budget_s, memory_bytes=None, what="the evaluation", start="spawn")
    records = parse_samples((out / LOG).read_bytes(), service.config.limits)
    scored = score(records, service.sets.index(testset.name), kind)
    raw = service.keep_raw(out / LOG)  # what a re-grade under a new scorer version reads
    return Entry(model=meta.pop("name", model), testset=testset.name, track=track, scores=scored.scores,
                 cells=scored.cells, axes=scored.axes, num_samples=scored.num_samples, dataset_sha256=testset.served_sha256,
                 raw_sha256=raw, scorer_version=scorer_version(), provenance=scoring_provenance(), **meta)


def unavailable(spec: str, revision: str | None) -> str | None:
    """Why this worker cannot load the model of an ``hf:`` request, or None. The Hub model's ``config.json`` is
    fetched (offline: looked up in the cache) here, in a fraction of a second, before a child is spawned that imports
    the harness and the model's libraries: a request for a model that does not exist, that this worker may not read
    or that is not cached offline cost that child about 5 s of a core before it failed (benchmarks/space_load.py:
    the worker then took a core from the Space beside it), and is now refused at once."""
    prefix, _, repo = spec.partition(":")
    if prefix != "hf":
        return None
    if repo.startswith("/"):  # a local folder (HYPERGVL_LOCAL_REQUESTS=1: the operator's own run)
        return None if Path(repo).is_dir() else f"{spec}: no such folder on this worker"
    # lazy: huggingface_hub 0.23 s; only a worker checking an hf: request needs it
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (EntryNotFoundError, GatedRepoError, LocalEntryNotFoundError,
                                        RepositoryNotFoundError, RevisionNotFoundError)

    at = f" at {revision}" if revision else ""
    try:
        hf_hub_download(repo, "config.json", revision=revision or None)
    except GatedRepoError:
        return f"{spec}: a gated model this worker has no access to"
    except RepositoryNotFoundError:
        return f"{spec}: no such model on the Hub (or a private one)"
    except RevisionNotFoundError:
        return f"{spec}: the Hub has no revision {revision!r} of it"
    except LocalEntryNotFoundError:
        return f"{spec}{at}: not in this worker's cache, and the Hub cannot be reached (offline)"
    except EntryNotFoundError:
        return f"{spec}{at}: has no config.json (the harness loads transformers checkpoints)"
    return None


class Worker:
    def __init__(self, service: Service, worker_id: str | None = None, *, ttl_s: float | None = None,
                 base_url: str | None = None):
        self.service = service
        self.id = worker_id or f"{socket.gethostname()}-{os.getpid()}"
        self.ttl_s = ttl_s or service.config.claim_ttl_s
        self.base_url = base_url

    def _options(self, req: Request) -> dict:
        prefix = req.model.partition(":")[0]
        tokens = self.service.config.request_max_new_tokens
        if prefix == "hf":
            return {"revision": req.revision, "max_new_tokens": tokens}
        if prefix == "openai":
            if not self.base_url:
                raise RuntimeError("this worker serves no openai: models (start it with --base-url)")
            return {"base_url": self.base_url, "max_tokens": tokens}
        return {}

    def run_once(self) -> Request | None:
        """Claim and run one request; returns it (None when the queue is empty)."""
        req = self.service.store.claim(self.id, self.ttl_s)
        if req is None:
            return None
        cfg = self.service.config
        if req.attempts > cfg.request_attempts:  # every worker that ran it died: do not hand it to the next one
            self.service.store.fail(req.id, self.id, f"gave up after {cfg.request_attempts} attempts: the worker "
                                    "running it stopped each time (see the worker's log)")
            return req
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
            self.service.request_spec(req.model)  # queued before a rule, or written into the store by other means
            why = unavailable(req.model, req.revision)
            if why:
                raise RuntimeError(why)
            entry = evaluate_to_entry(
                self.service, req.model, req.testset, req.track, self.service.config.data_dir / "runs" / req.id,
                model_options=self._options(req), revision=req.revision, model_type=req.model_type,
                num_parameters=req.num_parameters, link=req.link, origin="request", submitter=req.submitter,
                budget_s=cfg.request_budget_s)
            entry.id = req.id  # one entry per request, whichever worker finishes it
            if not self.service.store.finish(req.id, self.id, entry):
                log.warning("%s: %s was taken over by another worker; its result is kept there", self.id, req.id)
        except Exception as exc:  # noqa: BLE001 - shown to the user on the queue panel
            message = redact_paths(" ".join(f"{type(exc).__name__}: {exc}".split()))  # no server folder shown
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


# what a worker in a Hugging Face Job needs of the Space's configuration: settings as the job's environment ...
JOB_SETTINGS = ("HYPERGVL_REQUESTS_REPO", "HYPERGVL_RESULTS_REPO", "HYPERGVL_PUBLIC_SEED", "HYPERGVL_PER_TASK",
                "HYPERGVL_REQUEST_BUDGET_S", "HYPERGVL_REQUEST_MAX_NEW_TOKENS", "HYPERGVL_REQUEST_ATTEMPTS")
# ... and secrets as its secrets (never in its environment listing): the store's token, the hidden seed, an API key
JOB_SECRETS = ("HF_TOKEN", "HYPERGVL_HIDDEN_SEED", "OPENAI_API_KEY")
JOB_IMAGE = "python:3.12"
JOB_WHEELS = "wheels"  # where --hf-job uploads the package's wheel in the requests repository (the store reads
# only its requests/ and results/ folders)


def ship_wheel(api, repo: str, wheel: Path) -> str:
    """Upload ``wheel`` to the Space's requests repository ``repo`` (``wheels/<sha256 prefix>/<wheel name>``: a
    rebuilt wheel of the same version does not replace the one a running job reads) and return the shell line that
    installs it in a job (the job downloads it with its HF_TOKEN secret)."""
    from .hub_store import REPO_TYPE  # huggingface_hub's client (0.3 s): a worker on the SQLite store skips it

    fetch = ("import sys; from huggingface_hub import hf_hub_download; "
             f"print(hf_hub_download(sys.argv[1], sys.argv[2], repo_type={REPO_TYPE!r}))")
    data = Path(wheel).read_bytes()
    path = f"{JOB_WHEELS}/{hashlib.sha256(data).hexdigest()[:16]}/{Path(wheel).name}"
    api.upload_file(path_or_fileobj=data, path_in_repo=path, repo_id=repo, repo_type=REPO_TYPE,
                    commit_message=f"the package a Hugging Face Job worker installs ({Path(wheel).name})")
    return (f"pip install --quiet huggingface_hub && wheel=$(python -c {shlex.quote(fetch)} {shlex.quote(repo)} "
            f"{shlex.quote(path)}) && pip install --quiet \"$wheel\"")


def launch_job(env, *, flavor: str, image: str = JOB_IMAGE, requirement: str | None = None,
               wheel: Path | None = None, base_url: str | None = None, api=None):
    """Run one worker pass (``--once``) as a Hugging Face Job on ``flavor`` hardware; returns the job's info.

    The job installs the package as the published metric Spaces do (no package index serves ``hypergvl``): by
    default a wheel built from this checkout (or ``wheel``), uploaded to the Space's requests repository
    (:func:`ship_wheel`) and downloaded there with the job's token; or the pip line ``requirement`` (a VCS line,
    ``hypergvl @ git+https://github.com/ORG/hypergvl@COMMIT``). It rebuilds the Space's test sets from the
    same seeds (deterministic: the same names and digests) and claims a request from the Space's Hub store, so the
    Space must use one (``HYPERGVL_REQUESTS_REPO``/``HYPERGVL_RESULTS_REPO``): a job's local store would be lost with it.
    Its time limit is the request budget plus 30 minutes for the install and the build."""
    # lazy: huggingface_hub 0.23 s; only launching a job needs it
    from huggingface_hub import HfApi

    cfg = SpaceConfig.from_env(env)
    if not (env.get("HYPERGVL_REQUESTS_REPO") and env.get("HYPERGVL_RESULTS_REPO") and env.get("HF_TOKEN")):
        raise ValueError("--hf-job needs the Space's Hub store: set HF_TOKEN, HYPERGVL_REQUESTS_REPO and "
                         "HYPERGVL_RESULTS_REPO (a job's own store would be lost when it ends)")
    if cfg.hidden_seed is None:
        raise ValueError("--hf-job needs the hidden seed as $HYPERGVL_HIDDEN_SEED: a job rebuilds the hidden set "
                         "from it (a seed kept in the Space's data folder does not reach the job)")
    api = api or HfApi(token=env["HF_TOKEN"])
    with tempfile.TemporaryDirectory() as tmp:
        source = package_source(requirement, wheel, Path(tmp))
        install = (f"pip install --quiet {shlex.quote(source['requirement'])}" if "requirement" in source
                   else ship_wheel(api, env["HYPERGVL_REQUESTS_REPO"], source["wheel"]))
    worker = ["hypergvl", "space", "worker", "--once"] + (["--base-url", base_url] if base_url else [])
    command = ["bash", "-c", f"{install} && " + shlex.join(worker)]
    return api.run_job(image=image, command=command, flavor=flavor,
                       env={k: env[k] for k in JOB_SETTINGS if env.get(k)},
                       secrets={k: env[k] for k in JOB_SECRETS if env.get(k)},
                       timeout=int(cfg.request_budget_s) + 1800, labels={"hypergvl": "space-worker"})


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="hypergvl space worker", description=__doc__.splitlines()[0])
    p.add_argument("--once", action="store_true", help="run at most one request, then exit")
    p.add_argument("--poll-s", type=float, default=10.0)
    p.add_argument("--ttl-s", type=float, help="claim lifetime (renewed every third of it while running)")
    p.add_argument("--worker-id")
    p.add_argument("--data-dir", type=Path, help="the Space's data folder (default $HYPERGVL_SPACE_DATA)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint for openai:<name> requests")
    p.add_argument("--hf-job", metavar="FLAVOR", help="instead: run one worker pass as a Hugging Face Job on this "
                   "hardware (a10g-small, a100-large, ...) against the Space's Hub store")
    p.add_argument("--image", default=JOB_IMAGE, help=f"the job's container image (default {JOB_IMAGE})")
    p.add_argument("--wheel", type=Path, help="the hypergvl wheel the job installs (default: one built from this "
                                              "checkout, as `hypergvl push-metrics` does)")
    p.add_argument("--requirement", help="instead of a wheel, the pip requirement line that installs this package in "
                                         "the job (e.g. hypergvl @ git+https://github.com/ORG/hypergvl@COMMIT)")
    args = p.parse_args(argv)

    if args.hf_job:
        job = launch_job(os.environ, flavor=args.hf_job, image=args.image, requirement=args.requirement,
                         wheel=args.wheel, base_url=args.base_url)
        print(f"started Hugging Face Job {getattr(job, 'id', job)} ({args.hf_job}): one worker pass")
        return 0
    env = dict(os.environ, **({"HYPERGVL_SPACE_DATA": str(args.data_dir)} if args.data_dir else {}))
    service = make_service(SpaceConfig.from_env(env))
    Worker(service, args.worker_id, ttl_s=args.ttl_s, base_url=args.base_url).run(args.poll_s, args.once)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
