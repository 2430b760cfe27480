"""Efficiency study (DHG-Bench RQ2, section 4.2, Figure 1): training time to the best validation epoch, time per
epoch and peak memory of node classification, each model in its own subprocess under a memory cap.

Section 3.3: "we perform node classification ... on datasets of varying scales (Cora, DBLP-CA, Yelp, and
Trivago), reporting the training time to reach the best validation performance and the peak GPU memory
consumption". The reference code measures neither (``../shared/reference/dhgbench-models.md`` section 12); here:

* time to best validation = the sum of the per-epoch *training* times (forward, backward, optimiser step) of
  epochs ``1..best_val_epoch``, evaluation excluded (the trainer evaluates every epoch unless a config says
  otherwise; the time including evaluation is recorded beside it); time per epoch likewise;
* peak memory: ``torch.cuda.max_memory_allocated`` on a GPU; on CPU the peak resident set size (VmHWM) of the
  fresh subprocess that runs the model, which includes the interpreter, torch and the loaded dataset (the RSS
  right after loading is recorded as ``baseline_rss_mib``);
* the cap: on CPU ``RLIMIT_AS`` (address space) of the subprocess, on GPU
  ``torch.cuda.set_per_process_memory_fraction``. An allocation beyond it, or the subprocess killed for memory,
  is recorded as ``status: "oom"`` with the cap, and the study goes on.

DBLP-CA's feature file is absent from ../shared/data: its real structure is used with random features of the
published width (stated in the point). Yelp and Trivago are absent too: ``synthetic-yelp`` and
``synthetic-trivago`` are random hypergraphs with their published statistics (``--scale`` shrinks them).
"""

from __future__ import annotations

import json
import logging
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

import torch
from tqdm import tqdm

from hypergvl.models.config import ConfigError
from hypergvl.models.study import EFFICIENCY_DATASETS
from hypergvl.models.trainer import run_experiment
from hypergvl.provenance import pin

from .common import (load_node_dataset, make_point, point_path, read_point, resolve_models, seed_point, seed_tag,
                     write_point)

log = logging.getLogger("hypergvl.models.study")

_OOM_MARKERS = ("can't allocate memory", "cannot allocate memory", "out of memory", "memoryerror",
                "std::bad_alloc", "defaultcpuallocator")


def _is_oom(text: str) -> bool:
    t = text.lower()
    return any(m in t for m in _OOM_MARKERS)


def run(models: Optional[Sequence[str]], out: Path, *, datasets: Sequence[str] = EFFICIENCY_DATASETS,
        runs: int = 1, overrides: Sequence[str] = (), raw_root: Optional[str] = None, memory_cap_gib: float = 8.0,
        scale: float = 1.0, threads: int = 1, timeout_s: Optional[float] = None,
        progress: bool = True) -> list[dict[str, Any]]:
    """One fresh subprocess per (dataset, model, seed); finished seed points (ok, or oom at the same cap) are
    skipped on rerun, and a cell stops at its first seed that runs out of memory or fails."""
    models = resolve_models(models)
    if memory_cap_gib <= 0:
        raise ConfigError(f"--memory-cap-gib must be > 0; got {memory_cap_gib}")

    def finished(doc: Optional[dict[str, Any]]) -> bool:
        return doc is not None and (doc["status"] == "ok" or (doc["status"] == "oom"
                                                             and doc.get("memory_cap_gib") == memory_cap_gib))

    points = []
    bar = tqdm([(d, m) for d in datasets for m in models], desc="efficiency", disable=None if progress else True,
               dynamic_ncols=True)
    for ds, model in bar:
        bar.set_postfix_str(f"{ds} {model}")
        legacy = read_point(point_path(out, "efficiency", ds, model))  # a version-1 cell
        if finished(legacy) and (legacy["status"] == "oom" or legacy.get("runs", 0) >= runs):
            points.append(legacy)
            continue
        for seed in range(runs):
            path = point_path(out, "efficiency", ds, model, seed_tag(seed))
            doc = read_point(path)
            if not finished(doc):
                spec = {"model": model, "dataset": ds, "seed": seed, "overrides": list(overrides),
                        "raw_root": raw_root, "scale": scale, "threads": threads, "memory_cap_gib": memory_cap_gib,
                        "train_dir": str(Path(out) / "efficiency" / "train" / ds / model), "point": str(path)}
                doc = _run_child(spec, timeout_s)
            points.append(doc)
            if doc["status"] != "ok":
                break
    return points


def _limit(cap_bytes: int):
    def preexec() -> None:  # runs in the child before it executes python
        resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))

    return preexec


def _run_child(spec: dict[str, Any], timeout_s: Optional[float]) -> dict[str, Any]:
    cap = int(spec["memory_cap_gib"] * 2**30)
    env = {**os.environ, "OMP_NUM_THREADS": str(spec["threads"]), "MKL_NUM_THREADS": str(spec["threads"])}
    path = Path(spec["point"])
    if path.exists():
        path.unlink()  # a stale error point must not be mistaken for this run's result
    try:
        proc = subprocess.run([sys.executable, "-m", "hypergvl.models.study.efficiency", json.dumps(spec)],
                              capture_output=True, text=True, env=env, timeout=timeout_s,
                              preexec_fn=_limit(cap) if sys.platform.startswith("linux") else None)
        rc, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as e:
        rc, err = None, f"timed out after {timeout_s} s: {(e.stderr or '')[-500:]}"
    doc = read_point(path)
    if doc is not None:
        return doc
    killed = rc is not None and rc < 0 and -rc == 9
    status = "oom" if (_is_oom(err) or killed) else "error"
    tail = "\n".join(err.strip().splitlines()[-5:])
    doc = make_point("efficiency", spec["model"], spec["dataset"], status, seed=spec["seed"],
                     memory_cap_gib=spec["memory_cap_gib"],
                     memory_cap_method=_cap_method(), returncode=rc,
                     error=tail if status == "error" else None,
                     oom=(f"out of memory under a cap of {spec['memory_cap_gib']} GiB" if status == "oom" else None),
                     overrides=spec["overrides"], scale=spec["scale"])
    write_point(path, doc)
    return doc


def _cap_method() -> str:
    if torch.cuda.is_available():
        return "torch.cuda.set_per_process_memory_fraction (GPU) and RLIMIT_AS (host address space) of the subprocess"
    return "RLIMIT_AS (address space) of the subprocess"


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(spec: dict[str, Any]) -> int:
    """The subprocess: load the dataset, train run ``seed`` (earlier runs are read back from the trainer folder),
    write its point (``status`` ok, or oom on an allocation failure)."""
    pin()  # the commit and dirty flag of the code this process loaded, not of the tree when the point is written
    torch.set_num_threads(int(spec["threads"]))
    if torch.cuda.is_available():
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, spec["memory_cap_gib"] * 2**30 / total))
    base = {"memory_cap_gib": spec["memory_cap_gib"], "memory_cap_method": _cap_method(),
            "overrides": spec["overrides"], "scale": spec["scale"]}
    model, ds, seed = spec["model"], spec["dataset"], int(spec["seed"])
    info = None
    try:
        data, info = load_node_dataset(ds, spec["raw_root"], scale=spec["scale"])
        baseline = _rss_mib()
        summary = run_experiment(model, ds, "node", out=spec["train_dir"], runs=seed + 1,
                                 overrides=spec["overrides"], data=data, resume=True, progress=False)
    except (MemoryError, RuntimeError) as e:
        if not (isinstance(e, MemoryError) or _is_oom(str(e))):
            raise
        write_point(Path(spec["point"]), make_point(
            "efficiency", model, ds, "oom", seed=seed,
            oom=f"out of memory under a cap of {spec['memory_cap_gib']} GiB: {type(e).__name__}: {str(e)[:300]}",
            dataset_info=info, **base))
        return 0
    doc = seed_point("efficiency", model, ds, summary, seed, dataset_info=info,
                     train_dir="/".join(("train", ds, model)), **base)
    doc["efficiency"]["baseline_rss_mib"] = baseline
    write_point(Path(spec["point"]), doc)
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    sys.exit(child(json.loads(sys.argv[1])))
