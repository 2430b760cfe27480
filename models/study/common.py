"""Pieces shared by the three studies: result points (the versioned JSON schema), datasets, synthetic hypergraphs."""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np
import torch

from hypergvl.models.config import ConfigError
from hypergvl.models.nn import MODELS
from hypergvl.models.study import STUDIES
from hypergvl.models.trainer import mean_std, write_json_atomic
from hypergvl.provenance import provenance

SCHEMA = "hypergvl.hnn-study.point"
SCHEMA_VERSION = 2
#: Versions :func:`read_point` accepts: 2 (one file per seed) and 1 (one file per cell aggregating its seeds).
READABLE_VERSIONS = (1, 2)
STATUSES = ("ok", "oom", "error")
TIME_METHOD = ("training steps only (forward, backward, optimiser) summed over epochs 1..best_val_epoch; "
               "evaluation excluded (time_to_best_val_with_eval_s includes it)")

#: Published statistics of the two large node-classification sets (DHG-Bench Table A1) that are not in
#: ../shared/data; the efficiency study replaces them by synthetic hypergraphs of this size (stated in every point).
SYNTHETIC = {
    "synthetic-yelp": {"like": "Yelp", "nodes": 50758, "hyperedges": 679302, "mean_order": 6.66, "features": 1862,
                       "classes": 9},
    "synthetic-trivago": {"like": "Trivago", "nodes": 172738, "hyperedges": 233202, "mean_order": 3.12,
                          "features": 300, "classes": 160},
}


# ----------------------------------------------------------------------------------------------------------- points

def ratio_tag(ratio: float) -> str:
    return f"r{ratio:.2f}"


def seed_tag(seed: int) -> str:
    return f"seed{seed}"


def point_path(out: Path, study: str, *parts: str) -> Path:
    """``OUT/<study>/points/<part>/.../<last>.json``: with ``seed_tag(k)`` last, the version-2 file of one seed;
    without it, where version 1 kept a cell's aggregate (read, never written, by this version)."""
    return Path(out) / study / "points" / Path(*parts[:-1]) / f"{parts[-1]}.json"


def train_dir(out: Path, study: str, *parts: str) -> Path:
    """``OUT/<study>/train/<parts...>/``: the trainer's own folder (config, runs, summary) behind a point."""
    return Path(out) / study / "train" / Path(*parts)


def stats(values: Sequence[float]) -> dict[str, Any]:
    """``{"mean", "std", "values"}`` (population std, as the trainer and the reference report)."""
    vals = [float(v) for v in values]
    finite = [v for v in vals if not math.isnan(v)]
    mean, std = mean_std(finite) if finite else (math.nan, math.nan)
    return {"mean": mean, "std": std, "values": vals}


def _finite(v: Any) -> Any:
    """JSON has no NaN: NaN and infinities become ``None`` (recursively)."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def environment() -> dict[str, Any]:
    return {"torch": torch.__version__, "python": platform.python_version(), "machine": platform.machine(),
            "torch_threads": torch.get_num_threads(), "cuda": torch.cuda.is_available()}


def make_point(study: str, model: str, dataset: str, status: str, **fields: Any) -> dict[str, Any]:
    """A point document of the schema in :mod:`hypergvl.models.study` (``status`` one of ok, oom, error)."""
    if study not in STUDIES or status not in STATUSES:
        raise ValueError(f"bad point: study {study!r}, status {status!r}")
    doc = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "study": study, "model": model, "dataset": dataset,
           "task": "node", "status": status}
    doc.update(fields)
    doc.setdefault("environment", environment())
    if "provenance" not in doc:  # seed_point passes the one of the process that trained the run
        doc["provenance"] = provenance(doc.get("config"), seeds=[doc["seed"]] if "seed" in doc else None,
                                       device=(doc.get("efficiency") or {}).get("device"))
    doc["created"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return _finite(doc)


def write_point(path: Path, doc: dict[str, Any]) -> None:
    write_json_atomic(Path(path), doc)


def read_point(path: Path) -> Optional[dict[str, Any]]:
    """The point at ``path`` if it exists and has this schema (another version raises a one-line error)."""
    path = Path(path)
    if not path.exists():
        return None
    doc = json.loads(path.read_text())
    if doc.get("schema") != SCHEMA:
        return None
    if doc.get("schema_version") not in READABLE_VERSIONS:
        raise ConfigError(f"{path}: schema version {doc.get('schema_version')}, this code reads "
                          f"{' and '.join(map(str, READABLE_VERSIONS))}")
    return doc


def iter_points(roots: Iterable[Path]) -> list[dict[str, Any]]:
    """Every point under ``roots`` (``*/points/**/*.json``), each with ``_path`` added, in path order."""
    out = []
    for root in roots:
        root = Path(root)
        if not root.exists():
            raise ConfigError(f"result folder {root} does not exist")
        for p in sorted(root.glob("**/points/**/*.json")):
            doc = read_point(p)
            if doc is not None:
                out.append({**doc, "_path": str(p)})
    return out


def run_efficiency(record: dict[str, Any]) -> dict[str, Any]:
    """Efficiency fields of one trainer run record (a version-2 point's ``efficiency``)."""
    return {
        "train_time_to_best_val_s": record["train_time_to_best_val_s"],
        "epoch_time_s": record["epoch_time_s"]["mean"],
        "best_val_epoch": record["best_val_epoch"],
        "epochs_run": record["epochs_run"],
        "time_to_best_val_with_eval_s": record["time_to_best_val_s"],
        "peak_memory_mib": record["peak_memory_mib"],
        "memory_method": record["memory_method"],
        "time_method": TIME_METHOD,
        "device": record["device"],
    }


def seed_point(study: str, model: str, dataset: str, summary: dict[str, Any], seed: int,
               **fields: Any) -> dict[str, Any]:
    """The version-2 ``ok`` point of run ``seed`` of a trainer summary (metrics and efficiency of that run)."""
    record = next(r for r in summary["runs"] if r["seed"] == seed)
    if "provenance" in record:  # the process that trained the run; a run from before provenance gets this one's
        fields.setdefault("provenance", record["provenance"])
    return make_point(study, model, dataset, "ok", seed=seed,
                      metrics={part: dict(record["metrics"][part]) for part in ("test", "val")},
                      efficiency=run_efficiency(record), select=summary["select"], config=summary["config"],
                      **fields)


def run_cell(out: Path, study: str, parts: Sequence[str], seeds: Sequence[int],
             train: Callable[[list[int]], dict[str, Any]],
             make_doc: Callable[[dict[str, Any], int], dict[str, Any]],
             on_error: Callable[[Exception, int], dict[str, Any]]) -> list[dict[str, Any]]:
    """The seed points ``seeds`` (ascending) of one cell (``parts``: its path under ``points/``), computing only the
    missing ones (a seed whose point is absent or not ``ok``).

    ``train(done)`` returns the trainer summary of the runs ``done`` (the cell's seeds up to the one needed; it
    resumes: finished runs are read back, not retrained); ``make_doc(summary, seed)`` builds seed ``seed``'s point
    (:func:`seed_point`). An exception in ``train`` becomes the seed's point ``on_error(exc, seed)`` and ends the
    cell (the later seeds would fail alike). A version-1 cell point with ``status`` ok and runs covering ``seeds``
    stands for the whole cell.
    """
    seeds = sorted(seeds)
    legacy = read_point(point_path(out, study, *parts))
    if legacy is not None and legacy["status"] == "ok" and legacy.get("runs", 0) > seeds[-1]:
        return [legacy]
    docs = []
    for i, seed in enumerate(seeds):
        path = point_path(out, study, *parts, seed_tag(seed))
        doc = read_point(path)
        if doc is None or doc["status"] != "ok":
            try:
                summary = train(seeds[:i + 1])
            except ConfigError:
                raise
            except Exception as e:  # recorded; the study goes on with the next cell
                doc = on_error(e, seed)
                write_point(path, doc)
                docs.append(doc)
                break
            doc = make_doc(summary, seed)
            write_point(path, doc)
        docs.append(doc)
    return docs


def setting_key(doc: dict[str, Any]) -> tuple:
    """What distinguishes the cells of one (study, model, dataset): the perturbation kind and ratio (robustness) and
    the config options (``--set``) the model was trained with, so seeds trained with other options never merge."""
    pert = doc.get("perturbation") or {}
    return (pert.get("kind"), None if pert.get("ratio") is None else float(pert["ratio"]),
            tuple(doc.get("overrides") or ()))


def aggregate(points: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One cell document per (study, model, dataset, setting), in the version-1 layout the report reads.

    Version-2 seed points of a cell are merged (``runs``, ``seeds``, ``metrics`` and ``efficiency`` as
    ``{"mean", "std", "values"}`` over the seeds in seed order, per-run ``perturbation`` lists); a version-1
    point is already a cell and is used as it is unless version-2 seed points of the same cell exist. A cell
    with a seed that is not ``ok`` takes that seed's status (and its ``oom``/``error`` fields).
    """
    v1, v2 = {}, defaultdict(list)
    for p in points:
        key = (p["study"], p["model"], p["dataset"], setting_key(p))
        if p.get("schema_version", 1) == 1:
            v1[key] = p
        else:
            v2[key].append(p)
    cells = [p for k, p in v1.items() if k not in v2]
    for key, seeds in v2.items():
        seeds = sorted(seeds, key=lambda p: p["seed"])
        first = seeds[0]
        bad = next((p for p in seeds if p["status"] != "ok"), None)
        cell = {k: v for k, v in first.items() if k not in ("seed", "metrics", "efficiency", "created", "_path")}
        cell["_path"] = str(Path(first["_path"]).parent) if "_path" in first else None
        cell["_points"] = [p.get("_path") for p in seeds]
        if bad is not None:
            cell.update({k: v for k, v in bad.items() if k not in ("seed", "metrics", "efficiency", "_path")})
            cell["seeds"] = [p["seed"] for p in seeds]
            cells.append(cell)
            continue
        cell["runs"], cell["seeds"] = len(seeds), [p["seed"] for p in seeds]
        cell["metrics"] = {part: {name: stats([p["metrics"][part].get(name, math.nan) for p in seeds])
                                  for name in sorted({n for p in seeds for n in p["metrics"][part]})}
                           for part in ("test", "val")}
        effs = [p["efficiency"] for p in seeds]
        cell["efficiency"] = {
            **{k: stats([e[k] for e in effs]) for k in ("train_time_to_best_val_s", "epoch_time_s",
                                                         "time_to_best_val_with_eval_s", "peak_memory_mib")},
            **{k: [e[k] for e in effs] for k in ("best_val_epoch", "epochs_run")},
            **{k: effs[0][k] for k in ("memory_method", "time_method", "device")},
            **({"baseline_rss_mib": float(np.mean([e["baseline_rss_mib"] for e in effs]))}
               if all("baseline_rss_mib" in e for e in effs) else {}),
        }
        if "perturbation" in first:
            cell["perturbation"] = {**first["perturbation"],
                                    **{k: [p["perturbation"][k] for p in seeds]
                                       for k in ("changed", "train_nodes", "incidences")}}
        cell["created"] = max(p["created"] for p in seeds)
        cells.append(cell)
    return sorted(cells, key=lambda c: (c["study"], c["dataset"], str(setting_key(c)), c["model"]))


def summary_metrics(summary: dict[str, Any], part: str = "test") -> dict[str, dict[str, Any]]:
    """Per-metric ``stats`` of the trainer's selected metrics over its runs (``part`` test or val)."""
    names = sorted({k for r in summary["runs"] for k in r["metrics"][part]})
    return {k: stats([r["metrics"][part].get(k, math.nan) for r in summary["runs"]]) for k in names}


def summary_timing(summary: dict[str, Any]) -> dict[str, Any]:
    """Efficiency fields of a trainer summary, per run and aggregated."""
    runs = summary["runs"]
    return {
        "train_time_to_best_val_s": stats([r["train_time_to_best_val_s"] for r in runs]),
        "epoch_time_s": stats([r["epoch_time_s"]["mean"] for r in runs]),
        "best_val_epoch": [r["best_val_epoch"] for r in runs],
        "epochs_run": [r["epochs_run"] for r in runs],
        "time_to_best_val_with_eval_s": stats([r["time_to_best_val_s"] for r in runs]),
        "peak_memory_mib": stats([r["peak_memory_mib"] for r in runs]),
        "memory_method": runs[0]["memory_method"],
        "time_method": TIME_METHOD,
        "device": runs[0]["device"],
    }


# --------------------------------------------------------------------------------------------------------- datasets

def raw_root(arg: Optional[str]) -> Optional[str]:
    return arg or os.environ.get("HYPERGVL_RAW_ROOT")


def synthetic_hypergraph(nodes: int, hyperedges: int, mean_order: float, features: int, classes: int,
                         seed: int = 0, name: str = "synthetic"):
    """A random hypergraph of the given size, for timing and memory only (accuracy is not comparable).

    Hyperedge sizes are ``2 + Poisson(mean_order - 2)`` (at most ``nodes``); members are drawn uniformly with
    replacement and repeats within a hyperedge merged (so the realised mean order is a little lower for small
    hypergraphs; :func:`describe` reports it). Labels are uniform over ``classes``; features are standard normal
    plus 1 on feature ``y mod features`` (a weak class signal, so training is not degenerate).
    """
    # the dataset package loads PyG (3-4 s): `hypergvl study report` and the Space's HNN tab, which import this
    # module to read points, never need it
    from hypergvl.models.datasets.data import HypergraphData
    from hypergvl.models.datasets.processing import add_self_loops, incidence_from_pairs

    for key, v in (("nodes", nodes), ("hyperedges", hyperedges), ("features", features), ("classes", classes)):
        if v < 1:
            raise ValueError(f"synthetic hypergraph: {key} must be >= 1; got {v}")
    if mean_order < 2:
        raise ValueError(f"synthetic hypergraph: mean_order must be >= 2; got {mean_order}")
    rng = np.random.default_rng([seed, 0x5717])
    sizes = np.minimum(2 + rng.poisson(mean_order - 2, hyperedges), nodes)
    edges = np.repeat(np.arange(hyperedges), sizes)
    members = rng.integers(0, nodes, edges.size)
    index, m = incidence_from_pairs(members, edges)
    y = rng.integers(0, classes, nodes)
    x = rng.standard_normal((nodes, features), dtype=np.float32)
    x[np.arange(nodes), y % features] += 1.0
    data = HypergraphData(x=torch.from_numpy(x), y=torch.from_numpy(y).long(), hyperedge_index=index,
                          num_hyperedges=m, num_nodes=nodes, name=name)
    return add_self_loops(data)


def describe(data: Any, **extra: Any) -> dict[str, Any]:
    """Size of a loaded hypergraph, for the point documents."""
    sizes = torch.bincount(data.hyperedge_index[1], minlength=data.num_hyperedges).float()
    return {"nodes": int(data.num_nodes), "hyperedges": int(data.num_hyperedges),
            "incidences": int(data.num_incidences), "mean_order": float(sizes.mean()) if sizes.numel() else 0.0,
            "features": int(data.x.shape[1]), "classes": int(data.num_classes), **extra}


def load_node_dataset(name: str, root: Optional[str], *, add_self_loops: bool = True, scale: float = 1.0,
                      seed: int = 0) -> tuple[Any, dict[str, Any]]:
    """A node-classification hypergraph and its description for the studies.

    ``synthetic-yelp`` / ``synthetic-trivago``: :func:`synthetic_hypergraph` at ``scale`` times the published size
    (DHG-Bench Table A1). A real set whose feature file is absent (DBLP-CA in ../shared/data) gets standard normal
    features of the published width, stated in the description.
    """
    import hypergvl.models.datasets as mds  # PyG (3-4 s): loaded with the first dataset, as in the trainer
    from hypergvl.models.datasets.registry import get_spec

    key = name.lower()
    if key in SYNTHETIC:
        s = SYNTHETIC[key]
        if not 0 < scale <= 1:
            raise ConfigError(f"--scale must be in (0, 1]; got {scale}")
        n, m = max(int(s["nodes"] * scale), s["classes"]), max(int(s["hyperedges"] * scale), 1)
        data = synthetic_hypergraph(n, m, s["mean_order"], s["features"], s["classes"], seed=seed, name=key)
        return data, describe(data, synthetic=True, scale=scale, published={k: v for k, v in s.items()},
                              features_source="synthetic (standard normal plus a class signal)",
                              note=f"synthetic hypergraph with {s['like']}'s published statistics (Table A1) "
                                   f"times {scale}; not {s['like']} itself, so accuracy is not comparable")
    try:
        spec = get_spec(key)
    except (KeyError, ValueError) as e:
        raise ConfigError(str(e.args[0] if e.args else e)) from None
    try:
        data = mds.load(key, raw_root=root, add_self_loops=add_self_loops)
        source = "raw"
    except FileNotFoundError as e:
        if "feature" not in str(e).lower():
            raise ConfigError(f"cannot load dataset {name!r}: {e}") from None
        data = mds.load(key, raw_root=root, add_self_loops=add_self_loops, features="none")
        width = int(spec.paper_stats.get("features", 128))
        rng = np.random.default_rng([seed, 0xFEA7])
        data = data.replace(x=torch.from_numpy(rng.standard_normal((data.num_nodes, width), dtype=np.float32)))
        source = f"random standard normal, {width} wide (the raw feature file is absent)"
    except ValueError as e:
        raise ConfigError(f"cannot load dataset {name!r}: {e}") from None
    return data, describe(data, synthetic=False, features_source=source, self_loops=add_self_loops)


def resolve_models(names: Optional[Sequence[str]]) -> list[str]:
    """The models to study: ``names`` (checked against the registry) or every registered model."""
    if not names:
        return sorted(MODELS)
    bad = [n for n in names if n not in MODELS]
    if bad:
        raise ConfigError(f"unknown model(s) {', '.join(bad)}; valid models: {', '.join(sorted(MODELS))}")
    return list(names)
