"""Fairness study (DHG-Bench RQ4, section 4.4, appendices B.5 and C.3, Table A8, Figure 5).

Node classification on German, Bail and Credit with the standard protocol (50/25/25 split, final epoch, no fairness
regulariser; the sensitive attribute stays in the node features as in the reference), reporting test accuracy, ΔDP
and ΔEO from :func:`hypergvl.models.tasks.fairness.fairness_metrics`, mean and std over ``runs`` seeds. One point JSON per
(dataset, model, seed); a rerun computes only the seeds without a finished point.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Optional, Sequence

from tqdm import tqdm

from hypergvl.models.config import ConfigError
from hypergvl.models.study import FAIRNESS_DATASETS

from hypergvl.models.trainer import run_experiment, run_seeds

from .common import load_node_dataset, make_point, resolve_models, run_cell, seed_point, train_dir

log = logging.getLogger("hypergvl.models.study")


def run(models: Optional[Sequence[str]], out: Path, *, datasets: Sequence[str] = FAIRNESS_DATASETS, runs: int = 5,
        overrides: Sequence[str] = (), raw_root: Optional[str] = None, progress: bool = True,
        seeds: Optional[Sequence[int]] = None) -> list[dict[str, Any]]:
    """Every (dataset, model) cell over seeds ``0..runs-1`` (or ``seeds``, :func:`hypergvl.models.trainer.run_seeds`); returns the
    seed points (finished ones are read)."""
    models = resolve_models(models)
    seeds = run_seeds(runs, seeds)
    points = []
    bar = tqdm([(d, m) for d in datasets for m in models], desc="fairness", disable=None if progress else True,
               dynamic_ncols=True)
    cache: dict[str, Any] = {}

    def dataset(ds: str) -> tuple[Any, dict[str, Any]]:
        if ds not in cache:
            cache.clear()
            cache[ds] = load_node_dataset(ds, raw_root)
        data, info = cache[ds]
        if data.sensitive is None or data.num_classes != 2:
            raise ConfigError(f"dataset {ds!r} has no binary sensitive attribute and binary labels; "
                              f"fairness datasets: {', '.join(FAIRNESS_DATASETS)}")
        return data, info

    for ds, model in bar:
        bar.set_postfix_str(f"{ds} {model}")

        def train(done: list[int], ds: str = ds, model: str = model) -> dict[str, Any]:
            return run_experiment(model, ds, "node", out=train_dir(out, "fairness", ds, model), runs=len(done),
                                  seeds=done, overrides=overrides, data=dataset(ds)[0], resume=True, progress=False)

        def make_doc(summary: dict[str, Any], seed: int, ds: str = ds, model: str = model) -> dict[str, Any]:
            return seed_point("fairness", model, ds, summary, seed, overrides=list(overrides),
                              dataset_info=dataset(ds)[1], train_dir="/".join(("train", ds, model)))

        def on_error(e: Exception, seed: int, ds: str = ds, model: str = model) -> dict[str, Any]:
            log.warning("fairness %s %s seed %d failed: %s", ds, model, seed, e)
            return make_point("fairness", model, ds, "error", seed=seed, error=f"{type(e).__name__}: {e}",
                              dataset_info=cache[ds][1] if ds in cache else None, overrides=list(overrides))

        points += run_cell(out, "fairness", (ds, model), seeds, train, make_doc, on_error)
    return points
