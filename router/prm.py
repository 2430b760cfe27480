"""The Problem-Representation Mapping (PRM) dataset that WiseHyGR is trained on (``hypergvl router prm``).

HyperGVL sec. 4: "we construct a Problem-Representation Mapping (PRM) dataset {(p, R_p)}, where R_p is the
representation combination with the highest average accuracy for each vision-language QA set related to the meta
problem p in HyperGVL. When multiple combinations yield the same accuracy, we include multiple (p, R_p) pairs. [...]
with the training and validating split in a ratio of 8:2. The hypergraph in meta problem p is converted to the
HO-Neigh representation [...]. This hypergraph HO-Neigh description, along with the problem question, serves as input
to WiseHyGR, with the label being the optimal representation combination."

Built from ``hypergvl evaluate`` output folders only (their ``samples.jsonl``; no model is re-run): for each meta
problem the accuracy of each (text, visual) combination is averaged over the given runs (one run per model), and
every combination reaching the maximum becomes one (p, R_p) row. The label set is the combinations the runs answered
(every run, every meta problem: the runs must be exhaustive over the same representations), in
:func:`hypergvl.vqa.combinations` order: the paper's 35 over the paper's representations, more when a representation
is registered beyond them. It is recorded in the PRM (``prm.json`` ``combinations`` and the ``label`` ClassLabel's
names) and, after training, in the router's ``id2label``; a registered combination outside it is not routed. The HO-Neigh description and the
question are regenerated from the sample's ``reference`` (hypergraph(s), task, parameters), exactly as the builder
writes them. Choices the paper leaves open, fixed here:

- Meta problems where all combinations tie (every combination right, or every one wrong) carry no routing signal;
  they are kept by default (the paper does not exclude them) and dropped with ``--drop-uninformative``; the card
  reports how many there were.
- Every row also carries ``accuracies``: the combinations' accuracies averaged over the runs (in label order), the same for all rows of a meta problem. The paper's label is their argmax; the column
  lets training use soft targets or per-pair regression (``hypergvl router train --target``) and lets validation
  score the routed accuracy. Readers accept PRM folders without it (argmax training only).
- The 8:2 split is by meta problem (all pairs of a problem are on one side), a seeded permutation of the sorted meta
  ids (not stratified by task): validation gets ``round(0.2 n)`` problems, at least one when n >= 2.

Output: a Hub dataset folder: ``data/train-00000-of-00001.parquet``, ``data/validation-00000-of-00001.parquet``,
``prm.json`` (settings, source runs, counts) and ``README.md`` (card with the source runs, the label distribution and
the split), written last.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from hypergvl.atomic import atomic_path, write_json, write_text
from hypergvl.evaluators.run_folder import LOG, RESULTS, read_results, samples
from hypergvl.provenance import provenance
from hypergvl.runlog import damaged
from hypergvl.tasks import get_task, parse_reference
from hypergvl.text import encode, ism_text
from hypergvl.paper import PAPER_COMBINATIONS
from hypergvl.vqa import combinations

__all__ = ["combination_name", "parse_combination", "PRMConfig", "PRMData", "read_run", "build_prm", "load_prm",
           "log_to_console", "router_description", "router_question", "main"]

logger = logging.getLogger(__name__)


def log_to_console() -> None:
    """The router commands' logging: their own lines at INFO, the libraries' only at WARNING or worse (numexpr's
    thread-count line, accelerate's per-checkpoint "Saving current state" lines)."""
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("hypergvl.router").setLevel(logging.INFO)



def combination_name(text_rep: str, visual_rep: str) -> str:
    """The label name of a combination: ``"n_set+enc_hy"``."""
    return f"{text_rep}+{visual_rep}"


def parse_combination(name: str) -> tuple[str, str]:
    """``"n_set+enc_hy"`` -> ``("n_set", "enc_hy")``; ValueError for a name that is not ``<text>+<visual>``."""
    t, plus, v = str(name).partition("+")
    if not (plus and t and v) or "+" in v:
        raise ValueError(f"{name!r} is not a combination name <text_rep>+<visual_rep>")
    return t, v


PRM_FORMAT = 1
SPLITS = ("train", "validation")


@dataclass(frozen=True)
class PRMConfig:
    """Settings of a PRM build (saved in ``prm.json``)."""

    results: tuple[str, ...]
    out: str
    seed: int = 0
    val_fraction: float = 0.2
    drop_uninformative: bool = False

    def __post_init__(self):
        if not self.results:
            raise ValueError("give at least one hypergvl evaluate output folder")
        if not 0 < self.val_fraction < 1:
            raise ValueError(f"val_fraction must lie in (0, 1), got {self.val_fraction}")


def router_description(reference: str | dict) -> str:
    """The HO-Neigh description of a meta problem's hypergraph(s), as the builder writes ``text_ho_neigh``."""
    ref = parse_reference(reference)
    if ref.hypergraph2 is not None:
        return ism_text("ho_neigh", ref.hypergraph, ref.hypergraph2)
    return encode("ho_neigh", ref.hypergraph)


def router_question(reference: str | dict) -> str:
    """The appendix E.2 question of a meta problem, as the builder writes ``question``."""
    ref = parse_reference(reference)
    return get_task(ref.task).question(ref.params)


@dataclass
class Run:
    """One ``hypergvl evaluate`` output: per meta problem, per combination, whether the sample was answered right."""

    path: str
    model: str
    sha256: str
    dataset: dict
    correct: dict[str, dict[tuple[str, str], bool]]
    info: dict[str, dict]  # meta id -> task, scale, source, reference


def read_run(path: str | os.PathLike) -> Run:
    """Read ``samples.jsonl`` (and the model name from ``results.json`` when present) of an evaluate output."""
    folder = Path(path)
    log = folder / LOG
    records = samples(folder)  # ValueError when the folder has no log
    raw = log.read_bytes()
    correct: dict[str, dict[tuple[str, str], bool]] = {}
    info: dict[str, dict] = {}
    registered = frozenset(combinations())
    for n, rec in records:
        try:
            meta, combo = rec["meta_id"], (rec["text_rep"], rec["visual_rep"])
            ok = bool(rec["correct"])
        except (KeyError, TypeError) as exc:
            raise damaged(log, n, f"not a scored sample record (no {exc})") from None
        if combo not in registered:
            raise ValueError(f"{log} line {n} has unknown combination {combination_name(*combo)} (a representation "
                             "that is not registered)")
        correct.setdefault(meta, {})[combo] = ok  # a rerun's later line wins, as in the harness
        info[meta] = {k: rec.get(k) for k in ("task", "scale", "source", "reference")}
    if not correct:
        raise ValueError(f"{log} holds no samples")
    model, dataset = folder.name, {}
    if (folder / RESULTS).is_file():
        res = read_results(folder)
        model = res.get("model", {}).get("name", model)
        dataset = res.get("dataset", {})
    return Run(str(folder), model, hashlib.sha256(raw).hexdigest(), dataset, correct, info)


def best_combinations(runs: Sequence[Run]) -> dict[str, tuple[list[int], float]]:
    """meta id -> (indices into :func:`run_combinations` reaching the highest accuracy averaged over the runs, that
    accuracy)."""
    return {m: (idx, best) for m, (idx, best, _) in combination_accuracies(runs).items()}


def run_combinations(runs: Sequence[Run]) -> tuple[tuple[str, str], ...]:
    """The PRM's label set: every combination the runs answered, in :func:`hypergvl.vqa.combinations` order."""
    seen = {c for run in runs for got in run.correct.values() for c in got}
    return tuple(c for c in combinations() if c in seen)


def combination_accuracies(runs: Sequence[Run]) -> dict[str, tuple[list[int], float, list[float]]]:
    """meta id -> (best indices, best accuracy, the accuracies averaged over the runs), indices into
    :func:`run_combinations`.

    Every run must hold every one of those combinations of the same meta problems (the PRM compares exhaustive runs
    over the same representations)."""
    labels = run_combinations(runs)
    metas = sorted(runs[0].correct)
    for run in runs[1:]:
        extra = sorted(set(run.correct) ^ set(metas))
        if extra:
            raise ValueError(f"runs {runs[0].path} and {run.path} answer different meta problems (e.g. {extra[0]}); "
                             "build the PRM from runs over the same dataset")
    out = {}
    for meta in metas:
        ref = runs[0].info[meta]["reference"]
        counts = np.zeros(len(labels), dtype=np.int64)
        for run in runs:
            got = run.correct[meta]
            if len(got) != len(labels):
                missing = [combination_name(*c) for c in labels if c not in got]
                raise ValueError(f"{run.path} lacks {len(missing)} of the {len(labels)} combinations of meta problem "
                                 f"{meta} (e.g. {missing[0]}); the PRM needs exhaustive runs over the same "
                                 "representations")
            if run.info[meta]["reference"] != ref:
                raise ValueError(f"runs {runs[0].path} and {run.path} disagree on meta problem {meta} "
                                 "(different builds?)")
            counts += np.array([got[c] for c in labels], dtype=np.int64)
        best = int(counts.max())  # integer counts over the same runs: ties are exact
        out[meta] = ([int(i) for i in np.flatnonzero(counts == best)], best / len(runs),
                     [float(c) / len(runs) for c in counts])
    return out


def split_meta_ids(meta_ids: Sequence[str], seed: int, val_fraction: float = 0.2) -> dict[str, str]:
    """meta id -> ``train`` / ``validation``: a seeded permutation of the sorted ids, ``round(f n)`` to validation."""
    ids = sorted(set(meta_ids))
    n_val = int(round(val_fraction * len(ids)))
    if len(ids) >= 2:
        n_val = min(max(n_val, 1), len(ids) - 1)
    perm = np.random.default_rng(seed).permutation(len(ids))
    val = {ids[i] for i in perm[:n_val]}
    return {m: ("validation" if m in val else "train") for m in ids}


def _features(names: Sequence[str]):
    # lazy: datasets 2.7 s; the routing policy imports this module (through router.model)
    from datasets import ClassLabel, Features, Sequence, Value

    return Features({"meta_id": Value("string"), "task": Value("string"), "scale": Value("string"),
                     "source": Value("string"), "description": Value("string"), "question": Value("string"),
                     "label": ClassLabel(names=list(names)), "text_rep": Value("string"),
                     "visual_rep": Value("string"), "best_accuracy": Value("float64"), "num_best": Value("int32"),
                     "informative": Value("bool"), "accuracies": Sequence(Value("float64"), length=len(names))})


def _dataset_seed(dataset: dict) -> int | None:
    """The build seed of a run's dataset when it is a local build folder (for the studies' disjointness check)."""
    manifest = Path(str(dataset.get("id", ""))) / ".hypergvl-build.json"
    try:
        return int(json.loads(manifest.read_text())["seed"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def build_prm(cfg: PRMConfig, progress: bool = True) -> dict:
    """Write the PRM dataset folder; returns the summary saved as ``prm.json``."""
    # lazy: pyarrow + datasets 3 s; the routing policy imports this module (through router.model)
    import pyarrow.parquet as pq
    from datasets import Dataset
    from tqdm.auto import tqdm

    runs = [read_run(p) for p in cfg.results]
    accs = combination_accuracies(runs)
    pairs = run_combinations(runs)
    names = [combination_name(*c) for c in pairs]
    best = {m: (idx, b) for m, (idx, b, _) in accs.items()}
    uninformative = sorted(m for m, (idx, _) in best.items() if len(idx) == len(pairs))
    kept = [m for m in sorted(best) if not (cfg.drop_uninformative and m in uninformative)]
    if not kept:
        raise ValueError(f"no meta problem left: every one is uninformative (all {len(pairs)} combinations tie)")
    split = split_meta_ids(kept, cfg.seed, cfg.val_fraction)
    rows = {s: [] for s in SPLITS}
    info = runs[0].info
    for meta in tqdm(kept, desc="PRM", unit="problem", disable=None if progress else True):
        idx, acc = best[meta]
        ref = info[meta]["reference"]
        description, question = router_description(ref), router_question(ref)
        for i in idx:
            t, v = pairs[i]
            rows[split[meta]].append({
                "meta_id": meta, "task": info[meta]["task"], "scale": info[meta]["scale"] or "",
                "source": info[meta]["source"] or "", "description": description, "question": question, "label": i,
                "text_rep": t, "visual_rep": v, "best_accuracy": acc, "num_best": len(idx),
                "informative": len(idx) < len(pairs), "accuracies": accs[meta][2]})
    out = Path(cfg.out)
    (out / "data").mkdir(parents=True, exist_ok=True)
    for s in SPLITS:
        path = out / "data" / f"{s}-00000-of-00001.parquet"
        with atomic_path(path) as tmp:
            pq.write_table(Dataset.from_list(rows[s], features=_features(names)).data.table, tmp)
    summary = {
        "format": PRM_FORMAT, "config": {**asdict(cfg), "results": list(cfg.results)},
        "provenance": provenance({**asdict(cfg), "results": list(cfg.results)}, seeds=[cfg.seed]),
        "runs": [{"path": r.path, "model": r.model, "samples_sha256": r.sha256, "dataset": r.dataset,
                  "dataset_seed": _dataset_seed(r.dataset)} for r in runs],
        "combinations": names, "num_meta_problems": len(best), "num_uninformative": len(uninformative),
        "uninformative_dropped": cfg.drop_uninformative,
        "split": {s: {"meta_problems": len({r["meta_id"] for r in rows[s]}), "pairs": len(rows[s])} for s in SPLITS},
        "labels": {s: dict(sorted(Counter(names[r["label"]] for r in rows[s]).items())) for s in SPLITS},
        "tasks": {s: dict(sorted(Counter(r["task"] for r in rows[s] if r["label"] == best[r["meta_id"]][0][0]).items()))
                  for s in SPLITS},
    }
    write_json(out / "prm.json", summary, sort_keys=True)
    write_text(out / "README.md", prm_card(summary))
    return summary


def prm_card(summary: dict) -> str:
    """The dataset card: YAML configs, source runs, split, label distribution."""
    sp, lab = summary["split"], summary["labels"]
    lines = ["---", "configs:", "- config_name: default", "  data_files:"]
    for s in SPLITS:
        lines += [f"  - split: {s}", f"    path: data/{s}-*.parquet"]
    lines += ["task_categories:", "- text-classification", "tags:", "- hypergraph", "- hypergvl", "- wisehygr",
              "---", "", "# HyperGVL PRM: Problem-Representation Mapping for the WiseHyGR router", "",
              "HyperGVL sec. 4: for each meta problem p, R_p is the (text, visual) representation combination with the",
              "highest accuracy averaged over the source runs; ties give several (p, R_p) rows. Input: the HO-Neigh",
              "description of the hypergraph (`description`) and the question (`question`); label: one of "
              f"{len(summary.get('combinations', PAPER_COMBINATIONS))}",
              "combinations `<text_rep>+<visual_rep>` (`label`, a ClassLabel).", "",
              "## Source runs (hypergvl evaluate outputs)", "", "| model | run | dataset | samples.jsonl sha256 |",
              "| --- | --- | --- | --- |"]
    for r in summary["runs"]:
        lines.append(f"| {r['model']} | `{Path(r['path']).name}` | `{r['dataset'].get('id', '')}` | "
                     f"`{r['samples_sha256'][:16]}...` |")
    drop = "dropped" if summary["uninformative_dropped"] else "kept (the paper does not exclude them)"
    lines += ["", "## Split", "",
              f"{summary['num_meta_problems']} meta problems; {summary['num_uninformative']} are uninformative (all "
              f"combinations tie), {drop}. Split 8:2 by meta problem (seed {summary['config']['seed']}); no meta "
              "problem is on both sides.", "", "| split | meta problems | (p, R_p) pairs |", "| --- | --- | --- |"]
    for s in SPLITS:
        lines.append(f"| {s} | {sp[s]['meta_problems']} | {sp[s]['pairs']} |")
    lines += ["", "## Label distribution (pairs per combination)", "", "| combination | train | validation |",
              "| --- | --- | --- |"]
    for name in summary.get("combinations") or [combination_name(*c) for c in PAPER_COMBINATIONS]:
        a, b = lab["train"].get(name, 0), lab["validation"].get(name, 0)
        if a or b:
            lines.append(f"| `{name}` | {a} | {b} |")
    lines += ["", "## Meta problems per task", "", "| task | train | validation |", "| --- | --- | --- |"]
    for t in sorted(set(summary["tasks"]["train"]) | set(summary["tasks"]["validation"])):
        lines.append(f"| {t} | {summary['tasks']['train'].get(t, 0)} | {summary['tasks']['validation'].get(t, 0)} |")
    lines += ["", "## Building it", "", "```bash", "hypergvl router prm --results RUN_DIR [RUN_DIR ...] --out DIR",
              "```", ""]
    return "\n".join(lines)


class PRMData(dict):
    """``{"train": rows, "validation": rows}`` plus ``labels``: the combination names its ``label`` column indexes."""

    labels: tuple[str, ...] = ()


def _label_names(table) -> list[str] | None:
    """The ``label`` ClassLabel's names a parquet file's ``datasets`` metadata records, or None."""
    meta = (table.schema.metadata or {}).get(b"huggingface")
    try:
        return list(json.loads(meta)["info"]["features"]["label"]["names"])
    except (TypeError, ValueError, KeyError):
        return None


def load_prm(source: str | os.PathLike) -> PRMData:
    """``{"train": rows, "validation": rows}`` of a PRM folder (or a Hub dataset id, fetched with the hub client),
    with ``labels``: its label set (the ClassLabel's names; a PRM without them has the paper's 35)."""
    # lazy: pyarrow 0.7 s; the routing policy imports this module (through router.model)
    import pyarrow.parquet as pq

    folder = Path(source)
    if not folder.is_dir():
        # lazy: huggingface_hub 0.23 s; only a Hub id needs it
        from huggingface_hub import snapshot_download

        try:
            folder = Path(snapshot_download(str(source), repo_type="dataset"))
        except Exception as exc:  # noqa: BLE001 - the hub client raises many types for a missing/offline repo
            if type(exc).__name__ == "HFValidationError":  # not of the form owner/name: meant as a folder
                raise ValueError(f"{source}: no such PRM folder") from None
            raise ValueError(f"{source} is neither a PRM folder nor a reachable Hub dataset "
                             f"({type(exc).__name__})") from None
    out, names = PRMData(), None
    for s in SPLITS:
        files = sorted((folder / "data").glob(f"{s}-*.parquet"))
        if not files:
            raise ValueError(f"{source} is not a PRM dataset: no data/{s}-*.parquet")
        tables = [pq.read_table(f) for f in files]
        out[s] = [r for t in tables for r in t.to_pylist()]
        names = names or _label_names(tables[0])
    out.labels = tuple(names or (combination_name(*c) for c in PAPER_COMBINATIONS))
    for name in out.labels:
        parse_combination(name)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="hypergvl router prm", description=__doc__.split("\n\n")[0])
    p.add_argument("--results", nargs="+", required=True, metavar="RUN_DIR",
                   help="hypergvl evaluate output folders over every combination (one per model)")
    p.add_argument("--out", required=True, type=Path, help="output folder (a Hub dataset folder)")
    p.add_argument("--seed", type=int, default=0, help="seed of the 8:2 split (default 0)")
    p.add_argument("--drop-uninformative", action="store_true",
                   help="drop meta problems where all combinations tie (kept by default, as in the paper)")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    log_to_console()
    try:
        s = build_prm(PRMConfig(tuple(str(r) for r in args.results), str(args.out), args.seed,
                                drop_uninformative=args.drop_uninformative), progress=not args.no_progress)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"PRM: {s['num_meta_problems']} meta problems, {s['num_uninformative']} uninformative "
          f"({'dropped' if s['uninformative_dropped'] else 'kept'}); train {s['split']['train']['meta_problems']} "
          f"problems / {s['split']['train']['pairs']} pairs, validation {s['split']['validation']['meta_problems']} / "
          f"{s['split']['validation']['pairs']}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
