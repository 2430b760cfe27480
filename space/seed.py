"""Seed an empty store with the baselines, scored by the server like any submission.

On every current test set: ``baseline:symbolic`` and ``baseline:random`` on the vision track (every registered pair) and
``baseline:symbolic`` text-only (HyperGVL sec. 3.3's LLM setting); on the public set also the routed runs of
``baseline:symbolic`` under Rand, Top and the oracle of its exhaustive run (HyperGVL sec. 4; a trained WiseHyGR
router enters through a submission). Idempotent: entries already stored are skipped."""
from __future__ import annotations

from pathlib import Path

from hypergvl.evaluators.harness import evaluate_model

from .service import Service, current_sets
from .store import DuplicateError, entry_key
from .testsets import PUBLIC
from .worker import evaluate_to_entry

BASELINES = (("baseline:symbolic", "vision", None), ("baseline:random", "vision", None),
             ("baseline:symbolic", "text-only", None))
ROUTED = (("baseline:symbolic", "rand", "rand:0"), ("baseline:symbolic", "top", "top"),
          ("baseline:symbolic", "oracle", "oracle:{exhaustive}"))


def run_dir(service: Service, testset: str, model: str, track: str) -> Path:
    """The folder the seeding ran ``model`` on ``track`` of ``testset`` in (its samples.jsonl is the raw record)."""
    folder = f"routed-{track.partition(':')[2]}" if track.startswith("routed:") else track
    return service.config.data_dir / "runs" / "seed" / testset / f"{model.replace(':', '-')}-{folder}"


def seed(service: Service, progress=None) -> int:
    """Evaluate and store the missing baseline entries; returns how many were added. ``progress(i, n, what)`` is
    called before each one (a first start only: a seeded store has none missing)."""
    sets = current_sets(service)
    have = {entry_key(e) for e in service.entries()}
    runs = service.config.data_dir / "runs" / "seed"
    added = 0
    jobs = [(s, m, track, None) for s in sets.values() for m, track, _ in BASELINES]
    jobs += [(sets[PUBLIC], m, f"routed:{policy}", spec) for m, policy, spec in ROUTED]
    jobs = [j for j in jobs if (j[1], "builtin", j[0].name, j[2]) not in have]
    for i, (testset, model, track, routing) in enumerate(jobs, 1):
        if progress:
            progress(i, len(jobs), f"{model} on {testset.label} ({track})")
        out = run_dir(service, testset.name, model, track)
        if routing and "{exhaustive}" in routing:  # the oracle reads an exhaustive run (resumed if it exists)
            exhaustive = runs / testset.name / f"{model.replace(':', '-')}-vision"
            evaluate_model(testset.build, model, exhaustive, progress=False)
            routing = routing.format(exhaustive=exhaustive)
        entry = evaluate_to_entry(service, model, testset.name, track, out, routing=routing, revision="builtin",
                                  model_type="baseline", num_parameters=0.0, link="", origin="seed",
                                  submitter="space")
        try:
            service.store.add_entry(entry)
            added += 1
        except DuplicateError:
            pass  # another process seeded it first
    return added
