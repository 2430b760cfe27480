"""Robustness study (DHG-Bench RQ3, section 4.3, appendix B.4): accuracy under structure, feature and label noise.

Node classification on each dataset, for every model, perturbation kind (:mod:`hypergvl.models.perturb`) and ratio, over
seeds ``0..runs-1``: run ``i`` draws its split with seed ``i``, then its perturbation with seed ``i`` from a fresh
copy of the clean data, and trains and tests on the result (poisoning: training and evaluation both see the
perturbed structure and features; label kinds change training labels or the training set only). The node
classification singletons are added after perturbing, unless ``perturb_self_loops`` (the reference's order).
One point JSON per (dataset, kind, model, ratio, seed); a rerun computes only the seeds without a finished point.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Optional, Sequence

from tqdm import tqdm

from hypergvl.models import perturb as P
from hypergvl.models.config import ConfigError
from hypergvl.models.datasets.processing import add_self_loops
from hypergvl.models.trainer import run_experiment, run_seeds

from .common import load_node_dataset, make_point, ratio_tag, resolve_models, run_cell, seed_point, train_dir

log = logging.getLogger("hypergvl.models.study")


def make_hook(kind: str, ratio: float, *, perturb_self_loops: bool, options: dict[str, Any]):
    """The trainer's ``perturb`` hook for one point: perturb the clean data with the run's seed, then add the
    node-classification singletons (unless they were perturbed too)."""
    def hook(data: Any, split: dict, seed: int):
        out = P.apply(kind, data, ratio, seed, split["train"], **options)
        run_data = out.data if perturb_self_loops else add_self_loops(out.data)
        info = {"kind": kind, "ratio": ratio, "seed": seed, "changed": out.changed, "unit": out.unit,
                "train_nodes": int(out.train.numel()), "incidences": int(run_data.num_incidences)}
        return run_data, {**split, "train": out.train}, info

    return hook


def run(models: Optional[Sequence[str]], datasets: Sequence[str], kinds: Sequence[str], out: Path, *,
        ratios: Optional[Sequence[float]] = None, runs: int = 5, overrides: Sequence[str] = (),
        raw_root: Optional[str] = None, perturb_self_loops: bool = False, mask_by: str = "column",
        progress: bool = True, seeds: Optional[Sequence[int]] = None) -> list[dict[str, Any]]:
    """Train and test over the grid; returns the point documents (finished ones are read, not retrained).
    ``seeds`` (default ``0..runs-1``) restricts every cell to those seeds (:func:`hypergvl.models.trainer.run_seeds`)."""
    models = resolve_models(models)
    seeds = run_seeds(runs, seeds)
    specs = []
    for k in kinds:
        try:
            specs.append(P.get_perturbation(k))
        except ValueError as e:
            raise ConfigError(str(e)) from None
    for r in ratios or ():
        bad = [s.name for s in specs if not (0 <= r < 1 if s.name == "label_sparsity" else 0 <= r <= 1)]
        if bad:
            raise ConfigError(f"ratio {r} is out of range for {', '.join(bad)} (0 to 1; label_sparsity below 1)")
    todo = [(ds, s, r, m) for ds in datasets for s in specs for r in (ratios or s.grid) for m in models]
    points = []
    cache: dict[str, Any] = {}

    def dataset(ds: str) -> tuple[Any, dict[str, Any]]:
        if ds not in cache:
            cache.clear()
            cache[ds] = load_node_dataset(ds, raw_root, add_self_loops=perturb_self_loops)
        return cache[ds]

    bar = tqdm(todo, desc="robustness", disable=None if progress else True, dynamic_ncols=True)
    for ds, spec, ratio, model in bar:
        bar.set_postfix_str(f"{ds} {spec.name} {ratio:g} {model}")
        parts = (ds, spec.name, model, ratio_tag(ratio))
        options = {"by": mask_by} if spec.name == "feature_mask" else {}
        setting = {"kind": spec.name, "ratio": ratio, "level": spec.level, "unit": spec.unit, "options": options,
                   "perturb_self_loops": perturb_self_loops}
        hook = make_hook(spec.name, ratio, perturb_self_loops=perturb_self_loops, options=options)

        def train(done: list[int], ds: str = ds, parts: tuple = parts, model: str = model,
                  hook=hook) -> dict[str, Any]:
            return run_experiment(model, ds, "node", out=train_dir(out, "robustness", *parts), runs=len(done),
                                  seeds=done, overrides=overrides, data=dataset(ds)[0], resume=True, progress=False,
                                  perturb=hook)

        def make_doc(summary: dict[str, Any], seed: int, ds: str = ds, parts: tuple = parts, model: str = model,
                     setting: dict = setting) -> dict[str, Any]:
            info = next(r for r in summary["runs"] if r["seed"] == seed)["perturbation"]
            return seed_point("robustness", model, ds, summary, seed,
                              perturbation={**setting, **{k: info[k] for k in ("changed", "train_nodes",
                                                                                 "incidences")}},
                              overrides=list(overrides), dataset_info=dataset(ds)[1],
                              train_dir="/".join(("train", *parts)))

        def on_error(e: Exception, seed: int, ds: str = ds, model: str = model,
                     setting: dict = setting) -> dict[str, Any]:  # a model failing on a perturbed input
            log.warning("robustness %s %s %s %s seed %d failed: %s", ds, setting["kind"], setting["ratio"], model,
                        seed, e)
            return make_point("robustness", model, ds, "error", seed=seed, error=f"{type(e).__name__}: {e}",
                              perturbation=setting, dataset_info=cache[ds][1] if ds in cache else None,
                              overrides=list(overrides))

        points += run_cell(out, "robustness", parts, seeds, train, make_doc, on_error)
    return points
