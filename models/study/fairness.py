"""Fairness study (DHG-Bench RQ4, section 4.4, appendices B.5 and C.3, Table A8, Figure 5).

Node classification on German, Bail and Credit with the standard protocol (50/25/25 split, final epoch, no fairness
regulariser; the sensitive attribute stays in the node features as in the reference), reporting test accuracy, ΔDP
and ΔEO from :func:`models.tasks.fairness.fairness_metrics`, mean and std over ``runs`` seeds. One point JSON per
(dataset, model); a rerun skips finished points and continues unfinished runs.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Optional, Sequence

from tqdm import tqdm

from models.train import ConfigError, run_experiment

from .common import (load_node_dataset, make_point, point_path, read_point, resolve_models, summary_metrics,
                     summary_timing, train_dir, write_point)

log = logging.getLogger("models.study")

FAIRNESS_DATASETS = ("german", "bail", "credit")


def run(models: Optional[Sequence[str]], out: Path, *, datasets: Sequence[str] = FAIRNESS_DATASETS, runs: int = 5,
        overrides: Sequence[str] = (), raw_root: Optional[str] = None, progress: bool = True) -> list[dict[str, Any]]:
    models = resolve_models(models)
    points = []
    bar = tqdm([(d, m) for d in datasets for m in models], desc="fairness", disable=not progress,
               dynamic_ncols=True)
    cache: dict[str, Any] = {}
    for ds, model in bar:
        bar.set_postfix_str(f"{ds} {model}")
        path = point_path(out, "fairness", ds, model)
        doc = read_point(path)
        if doc is not None and doc["status"] == "ok" and doc["runs"] >= runs:
            points.append(doc)
            continue
        if ds not in cache:
            cache.clear()
            cache[ds] = load_node_dataset(ds, raw_root)
        data, info = cache[ds]
        if data.sensitive is None or data.num_classes != 2:
            raise ConfigError(f"dataset {ds!r} has no binary sensitive attribute and binary labels; "
                              f"fairness datasets: {', '.join(FAIRNESS_DATASETS)}")
        try:
            summary = run_experiment(model, ds, "node", out=train_dir(out, "fairness", ds, model), runs=runs,
                                     overrides=overrides, data=data, resume=True, progress=False)
        except ConfigError:
            raise
        except Exception as e:
            log.warning("fairness %s %s failed: %s", ds, model, e)
            doc = make_point("fairness", model, ds, "error", error=f"{type(e).__name__}: {e}", dataset_info=info,
                             overrides=list(overrides))
            write_point(path, doc)
            points.append(doc)
            continue
        doc = make_point("fairness", model, ds, "ok", runs=len(summary["runs"]),
                         seeds=[r["seed"] for r in summary["runs"]],
                         metrics={"test": summary_metrics(summary, "test"), "val": summary_metrics(summary, "val")},
                         efficiency=summary_timing(summary), select=summary["select"], config=summary["config"],
                         overrides=list(overrides), dataset_info=info, train_dir="/".join(("train", ds, model)))
        write_point(path, doc)
        points.append(doc)
    return points
