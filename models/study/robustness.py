"""Robustness study (DHG-Bench RQ3, section 4.3, appendix B.4): accuracy under structure, feature and label noise.

Node classification on each dataset, for every model, perturbation kind (:mod:`models.perturb`) and ratio, over
seeds ``0..runs-1``: run ``i`` draws its split with seed ``i``, then its perturbation with seed ``i`` from a fresh
copy of the clean data, and trains and tests on the result (poisoning: training and evaluation both see the
perturbed structure and features; label kinds change training labels or the training set only). The node
classification singletons are added after perturbing, unless ``perturb_self_loops`` (the reference's order).
One point JSON per (dataset, kind, model, ratio); a rerun skips finished points.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Optional, Sequence

from tqdm import tqdm

from models import perturb as P
from models.train import ConfigError, run_experiment

from .common import (load_node_dataset, make_point, point_path, ratio_tag, read_point, resolve_models,
                     summary_metrics, summary_timing, train_dir, write_point)

log = logging.getLogger("models.study")


def make_hook(kind: str, ratio: float, *, perturb_self_loops: bool, options: dict[str, Any]):
    """The trainer's ``perturb`` hook for one point: perturb the clean data with the run's seed, then add the
    node-classification singletons (unless they were perturbed too)."""
    from models.datasets.processing import add_self_loops

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
        progress: bool = True) -> list[dict[str, Any]]:
    """Train and test over the grid; returns the point documents (finished ones are read, not retrained)."""
    models = resolve_models(models)
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
    bar = tqdm(todo, desc="robustness", disable=not progress, dynamic_ncols=True)
    for ds, spec, ratio, model in bar:
        bar.set_postfix_str(f"{ds} {spec.name} {ratio:g} {model}")
        path = point_path(out, "robustness", ds, spec.name, model, ratio_tag(ratio))
        doc = read_point(path)
        if doc is not None and doc["status"] == "ok":
            points.append(doc)
            continue
        if ds not in cache:
            cache.clear()
            cache[ds] = load_node_dataset(ds, raw_root, add_self_loops=perturb_self_loops)
        data, info = cache[ds]
        options = {"by": mask_by} if spec.name == "feature_mask" else {}
        hook = make_hook(spec.name, ratio, perturb_self_loops=perturb_self_loops, options=options)
        try:
            summary = run_experiment(model, ds, "node", out=train_dir(out, "robustness", ds, spec.name, model,
                                                                      ratio_tag(ratio)),
                                     runs=runs, overrides=overrides, data=data, resume=True, progress=False,
                                     perturb=hook)
        except ConfigError:
            raise
        except Exception as e:  # a model that fails on a perturbed input is recorded and the grid continues
            log.warning("robustness %s %s %s %s failed: %s", ds, spec.name, ratio, model, e)
            doc = make_point("robustness", model, ds, "error", error=f"{type(e).__name__}: {e}",
                             perturbation={"kind": spec.name, "ratio": ratio, "level": spec.level,
                                           "options": options, "perturb_self_loops": perturb_self_loops},
                             dataset_info=info, overrides=list(overrides))
            write_point(path, doc)
            points.append(doc)
            continue
        per_run = [r["perturbation"] for r in summary["runs"]]
        doc = make_point(
            "robustness", model, ds, "ok", runs=len(summary["runs"]), seeds=[r["seed"] for r in summary["runs"]],
            perturbation={"kind": spec.name, "ratio": ratio, "level": spec.level, "unit": spec.unit,
                          "options": options, "perturb_self_loops": perturb_self_loops,
                          "changed": [p["changed"] for p in per_run],
                          "train_nodes": [p["train_nodes"] for p in per_run],
                          "incidences": [p["incidences"] for p in per_run]},
            metrics={"test": summary_metrics(summary, "test"), "val": summary_metrics(summary, "val")},
            efficiency=summary_timing(summary), select=summary["select"], config=summary["config"],
            overrides=list(overrides), dataset_info=info,
            train_dir="/".join(("train", ds, spec.name, model, ratio_tag(ratio))))
        write_point(path, doc)
        points.append(doc)
    return points
