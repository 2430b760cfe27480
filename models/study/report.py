"""``hypergvl study report``: the paper's tables (Markdown) and figures (PNG) from result folders only.

Nothing is trained here. Inputs are folders written by the studies (their ``points/**/*.json``, schema in
:mod:`hypergvl.models.study`; the seed points of a cell are merged by :func:`hypergvl.models.study.common.aggregate`) and, for the
effectiveness tables, any ``summary.json`` of :mod:`hypergvl.models.trainer` outside a study's ``train/`` folder (e.g.
``benchmarks/reproduce_dhgbench.py --out DIR``). Outputs in ``--out``:

* ``robustness.md`` -- per dataset and kind, accuracy (mean±std over runs) per model and ratio, and the drop from
  ratio 0 to the largest ratio (label noise: with the R² of a straight-line fit); ``figures/robustness_<level>.png``
  in the layout of Figures 2-4 (one figure per level, a row per dataset, a column per kind);
* ``fairness.md`` -- Table A8's layout (Acc, ΔDP, ΔEO per dataset), the comparison with the paper, and the average
  ranks of Figure 5 (``figures/fairness_ranks.png``);
* ``efficiency.md`` -- per dataset: accuracy, time to the best validation epoch, time per epoch, peak memory, OOM
  with its cap; ``figures/efficiency.png`` (Figure 1: time vs accuracy, marker area = peak memory);
* ``effectiveness.md`` -- Table 1/A5 (node accuracy), A6 (hyperedge AUROC, AP) and A7 (graph Acc, Macro-F1);
* ``report.json`` -- every number of every table, as printed (rounded to 2 decimals) and unrounded;
* ``README.md`` -- all of the above on one page.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from hypergvl.models.config import ConfigError
from hypergvl.models.study import STUDIES

from hypergvl.models.trainer import SUMMARY_FILE, NotATrainerSummary, read_summary, write_json_atomic
from hypergvl.provenance import provenance

from .common import SCHEMA_VERSION, aggregate, iter_points
from .paper import FAIRNESS_METRICS, degenerate_note, paper_value, within
from .robustness_claims import accuracies, claim_rows

LEVELS = ("structure", "feature", "supervision")
METRIC_NAMES = {"accuracy": "Acc", "delta_dp": "ΔDP", "delta_eo": "ΔEO", "auroc": "AUROC", "ap": "AP",
                "macro_f1": "F1_ma"}


def fmt(mean: Optional[float], std: Optional[float] = None) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "n/a"
    return f"{mean:.2f}" if std is None else f"{mean:.2f}±{std:.2f}"


def _status_cell(p: dict[str, Any]) -> str:
    if p["status"] == "oom":
        return f"OOM (cap {p.get('memory_cap_gib', '?')} GiB)" if p.get("memory_cap_gib") else "OOM"
    err = p.get("error") or ""
    return "timed out" if err.startswith("timed out") else "error"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _metric(p: dict[str, Any], name: str) -> Optional[dict[str, Any]]:
    return (p.get("metrics") or {}).get("test", {}).get(name)


# ------------------------------------------------------------------------------------------------------ robustness

def robustness(points: list[dict], fig_dir: Path, record: dict) -> str:
    if not points:
        return ""
    by = defaultdict(dict)  # (dataset, kind) -> model -> ratio -> point
    levels = {}
    options = defaultdict(set)  # (dataset, model) -> the option sets its cells were trained with
    for p in points:
        pert = p["perturbation"]
        by[(p["dataset"], pert["kind"])].setdefault(p["model"], {})[float(pert["ratio"])] = p
        levels[pert["kind"]] = pert["level"]
        options[(p["dataset"], p["model"])].add(tuple(p.get("overrides") or ()))
    mixed = {k: v for k, v in options.items() if len(v) > 1}
    if mixed:  # one row per model: cells trained with other options would be compared as if they were one model
        which = "; ".join(f"{m} on {ds}: " + " / ".join(", ".join(o) or "none" for o in sorted(v))
                          for (ds, m), v in sorted(mixed.items()))
        raise ConfigError(f"robustness cells of one model were trained with different options ({which}); report "
                          "them from separate folders")
    shared = _share_clean(by)
    out = ["## Robustness (DHG-Bench RQ3, Figures 2-4)", "",
           "Node classification test accuracy (%), mean±std over runs, under each perturbation (appendix B.4). "
           "Each run perturbs a fresh copy of the clean data with its own seed."]
    set_by = sorted((ds, m, next(iter(o))) for (ds, m), o in options.items() if any(o))
    if set_by:
        out[-1] += (" Trained with options (`--set`) in every cell: " + "; ".join(
            f"{m} on {ds}: {', '.join(f'`{x}`' for x in o)}" for ds, m, o in set_by) + ".")
    if shared:
        out[-1] += (" Ratio 0 is the clean run, the same for every kind (each perturbation at ratio 0 is the "
                    "identity), so a kind without its own ratio-0 cell shows the model's clean cell of another kind "
                    f"({shared} cells).")
    rec = record.setdefault("robustness", [])
    for (ds, kind), models in sorted(by.items()):
        ratios = sorted({r for m in models.values() for r in m})
        rows = []
        for model in sorted(models):
            cells = [model]
            for r in ratios:
                p = models[model].get(r)
                if p is None:
                    cells.append("")
                elif p["status"] != "ok":
                    cells.append(_status_cell(p))
                else:
                    a = _metric(p, "accuracy")
                    cells.append(fmt(a["mean"], a["std"]))
                    rec.append({"dataset": ds, "kind": kind, "model": model, "ratio": r, "metric": "accuracy",
                                "mean": a["mean"], "std": a["std"], "cell": cells[-1], "point": p["_path"]})
            rows.append(cells)
        runs = sorted({p.get("runs") for m in models.values() for p in m.values() if p.get("runs")})
        out += ["", f"### {ds}: {kind} ({levels[kind]}; runs: {', '.join(map(str, runs)) or 'n/a'})", "",
                table(["model"] + [f"{r:g}" for r in ratios], rows)]
    out += ["", "### Change from the clean data to the largest ratio", "",
            "Accuracy at the largest ratio minus accuracy at ratio 0 (points); label noise also gives the R² of a "
            "least-squares line through the mean accuracies (1 = exactly linear).", ""]
    rows = []
    for (ds, kind), models in sorted(by.items()):
        for model in sorted(models):
            ok = {r: _metric(p, "accuracy")["mean"] for r, p in models[model].items() if p["status"] == "ok"}
            if 0.0 not in ok or len(ok) < 2:
                continue
            rmax = max(ok)
            r2 = ""
            if kind == "label_noise" and len(ok) >= 3:
                xs, ys = np.array(sorted(ok)), np.array([ok[r] for r in sorted(ok)])
                fit = np.polyval(np.polyfit(xs, ys, 1), xs)
                ss = float(((ys - ys.mean()) ** 2).sum())
                r2 = f"{1 - float(((ys - fit) ** 2).sum()) / ss:.3f}" if ss > 0 else "n/a"
            rows.append([ds, kind, model, fmt(ok[0.0]), f"{rmax:g}", fmt(ok[rmax]), f"{ok[rmax] - ok[0.0]:+.2f}", r2])
    if rows:
        out.append(table(["dataset", "kind", "model", "acc r=0", "largest r", "acc", "change", "R² (label noise)"],
                         rows))
    else:  # the clean baseline was not trained: say how to get it, rather than print an empty table
        out.append("No cell was trained at ratio 0 (the clean data) beside a larger ratio, so there is no change to "
                   "show: add 0 to the study's `--ratios`.")
    out += _grid_run(by)
    out += _claims(by, record)
    figs = _robustness_figures(by, levels, fig_dir)
    out += [""] + [f"![{f.stem}](figures/{f.name})" for f in figs]
    return "\n".join(out)


def _share_clean(by: dict) -> int:
    """Give every (dataset, kind, model) without a ratio-0 cell the model's ok ratio-0 cell of another kind of the
    same dataset (the clean run: every perturbation at ratio 0 is the identity); returns how many were shared."""
    n = 0
    for (ds, kind), models in by.items():
        for model, cells in models.items():
            if 0.0 in cells:
                continue
            clean = next((m[model][0.0] for (d, k), m in sorted(by.items())
                          if d == ds and model in m and m[model].get(0.0, {}).get("status") == "ok"), None)
            if clean is not None:
                cells[0.0] = clean
                n += 1
    return n


def _grid_run(by: dict) -> list[str]:
    """Per dataset, what was trained: for each model and kind, the ratios (clean 0 apart) and the number of seeds."""
    from hypergvl.models.perturb import PERTURBATIONS  # PyG (3-4 s), as the figures

    out = []
    for ds in sorted({d for d, _ in by}):
        kinds = [k for k in PERTURBATIONS if (ds, k) in by]
        models = sorted({m for k in kinds for m in by[(ds, k)]})
        rows = []
        for model in models:
            clean = next((by[(ds, k)][model][0.0] for k in kinds if 0.0 in by[(ds, k)].get(model, {})), None)
            row = [model, str(clean.get("runs", len(clean.get("seeds") or []))) if clean else ""]
            for k in kinds:
                cells = {r: c for r, c in by[(ds, k)].get(model, {}).items() if r > 0}
                runs = sorted({c.get("runs", len(c.get("seeds") or [])) for c in cells.values()})
                grid = PERTURBATIONS[k].grid[1:]
                rs = "paper grid" if sorted(cells) == list(grid) else ", ".join(f"{r:g}" for r in sorted(cells))
                seeds = "/".join(map(str, runs))
                row.append(f"{rs} ({seeds} seed{'' if runs == [1] else 's'})" if cells else "not run")
            rows.append(row)
        out += ["", f"### {ds}: what was trained", "",
                "Ratios besides the clean 0 (\"paper grid\": all of appendix B.4's) and seeds per cell, for each "
                "model and kind; a model trained on fewer ratios or seeds than the paper's (5) was cut for time.", "",
                table(["model", "clean seeds"] + kinds, rows)]
    return out


def _claims(by: dict, record: dict) -> list[str]:
    """The claim table of section 4.3 for each dataset (:mod:`hypergvl.models.study.robustness_claims`)."""
    out = []
    rec = record.setdefault("robustness_claims", [])
    for ds in sorted({d for d, _ in by}):
        acc, seeds = accuracies(by, ds)
        rows = claim_rows(ds, acc)
        rec += [{"dataset": ds, **r} for r in rows]
        used = "; ".join(f"{m} {', '.join(map(str, s)) or 'none'}" for m, s in seeds.items())
        out += ["", f"### {ds}: the paper's statements (section 4.3)", "",
                "Each statement of section 4.3 about this dataset or about all datasets, our measurement from the "
                "cells above and the verdict (rules in `models/study/robustness_claims.py`). A model's numbers here "
                f"are means of test accuracy over the seeds all its cells share: {used}.",
                "", table(["section", "about", "the paper", "measured here", "verdict"],
                          [[r["section"], r["about"], r["quote"], r["measured"], r["verdict"]] for r in rows])]
    return out


def _robustness_figures(by: dict, levels: dict, fig_dir: Path) -> list[Path]:
    # lazy: matplotlib.pyplot 2.1 s; the Space imports this module: pyplot (Agg) only for a figure
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: pyplot 2.1 s; as matplotlib above

    from hypergvl.models.perturb import PERTURBATIONS  # the dataset package, PyG (3-4 s): robustness figures only

    written = []
    datasets = sorted({ds for ds, _ in by})
    all_models = sorted({m for models in by.values() for m in models})
    palette = plt.cm.tab10 if len(all_models) <= 10 else plt.cm.tab20  # tab20's light/dark pairs look alike
    colors = {m: palette(i % palette.N) for i, m in enumerate(all_models)}
    markers = {m: "osD^v<>ph*"[i % 10] for i, m in enumerate(all_models)}
    for level in LEVELS:
        kinds = [k for k in PERTURBATIONS if levels.get(k) == level and any((d, k) in by for d in datasets)]
        if not kinds:
            continue
        fig, axes = plt.subplots(len(datasets), len(kinds), figsize=(4.6 * len(kinds) + 1.5, 3.4 * len(datasets)),
                                 squeeze=False)
        for i, ds in enumerate(datasets):
            for j, kind in enumerate(kinds):
                ax = axes[i][j]
                for model, pts in sorted(by.get((ds, kind), {}).items()):
                    ok = sorted((r, _metric(p, "accuracy")) for r, p in pts.items() if p["status"] == "ok")
                    if not ok:
                        continue
                    xs = [r for r, _ in ok]
                    ys = np.array([a["mean"] for _, a in ok])
                    sd = np.array([a["std"] for _, a in ok])
                    ax.plot(xs, ys, marker=markers[model], ms=4, lw=1.3, label=model, color=colors[model])
                    ax.fill_between(xs, ys - sd, ys + sd, alpha=0.12, color=colors[model])
                ax.set_title(f"{ds}: {kind.replace('_', ' ')}", fontsize=10)
                ax.set_xlabel(PERTURBATIONS[kind].label)
                ax.set_xticks(PERTURBATIONS[kind].grid)  # the paper's ratios, not matplotlib's 0.025 steps
                ax.tick_params(labelsize=8)
                ax.set_ylabel("test accuracy (%)")
                ax.grid(alpha=0.3)
        handles, labels = axes[0][0].get_legend_handles_labels()
        for row in axes:
            for ax in row:
                h, lab = ax.get_legend_handles_labels()
                if len(lab) > len(labels):
                    handles, labels = h, lab
        # the legend in a column right of the panels, where it covers neither a curve nor an axis label
        width = fig.get_figwidth()
        fig.legend(handles, labels, loc="center right", ncol=1, fontsize=9, frameon=False)
        fig.suptitle(f"{level.capitalize()} robustness (mean ± std over runs)", fontsize=11)
        fig.tight_layout(rect=(0, 0, 1 - 1.45 / width, 0.97))
        path = fig_dir / f"robustness_{level}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


# -------------------------------------------------------------------------------------------------------- fairness

def fairness(points: list[dict], fig_dir: Path, record: dict) -> str:
    if not points:
        return ""
    datasets = [d for d in ("german", "bail", "credit") if any(p["dataset"] == d for p in points)]
    datasets += sorted({p["dataset"] for p in points} - set(datasets))
    cell = {(p["model"], p["dataset"]): p for p in points}
    models = sorted({p["model"] for p in points})
    rec = record.setdefault("fairness", [])
    rows = []
    for model in models:
        cells = [model]
        for ds in datasets:
            p = cell.get((model, ds))
            for metric in FAIRNESS_METRICS:
                if p is None:
                    cells.append("")
                elif p["status"] != "ok":
                    cells.append(_status_cell(p))
                else:
                    v = _metric(p, metric)
                    cells.append(fmt(v["mean"], v["std"]))
                    rec.append({"dataset": ds, "model": model, "metric": metric, "mean": v["mean"], "std": v["std"],
                                "runs": p["runs"], "cell": cells[-1], "point": p["_path"]})
        rows.append(cells)
    runs = sorted({p.get("runs") for p in points if p.get("runs")})
    header = ["model"] + [f"{ds} {METRIC_NAMES[m]}" for ds in datasets for m in FAIRNESS_METRICS]
    out = ["## Fairness (DHG-Bench RQ4, Table A8)", "",
           f"Test accuracy, ΔDP and ΔEO (%), mean±std over {', '.join(map(str, runs))} runs "
           "(appendix B.5; ΔEO compares true positive rates, eq. 4).", "", table(header, rows)]
    # comparison with the paper
    comp, n_pass, n_all, n_flagged, n_uncommitted = [], 0, 0, 0, 0
    for model in models:
        for ds in datasets:
            p = cell.get((model, ds))
            if p is None or p["status"] != "ok":
                continue
            flag, uncommitted = _flag(p), _uncommitted(p)
            for metric in FAIRNESS_METRICS:
                paper = paper_value(model, ds, metric)
                if paper is None:
                    continue
                ours = _metric(p, metric)["mean"]
                strict = within(ours, paper, floor=1.5 if metric == "accuracy" else 0.0)
                loose = within(ours, paper, floor=1.5)
                note = "; ".join(filter(None, [flag, uncommitted and f"no recorded commit for {uncommitted}: "
                                                                      "not counted"]))
                if uncommitted:
                    n_uncommitted += 1
                else:
                    n_all += 1
                    n_pass += strict and not flag
                    n_flagged += strict and bool(flag)
                comp.append([model, ds, METRIC_NAMES[metric], fmt(ours), fmt(*paper), f"{abs(ours - paper[0]):.2f}",
                             f"{max(2 * paper[1], 1.5 if metric == 'accuracy' else 0.0):.2f}",
                             ("degenerate" if flag else "yes") if strict else "no",
                             ("degenerate" if flag else "yes") if loose else "no", note])
                rec.append({"dataset": ds, "model": model, "metric": metric, "paper_mean": paper[0],
                            "paper_std": paper[1], "ours": ours, "pass": bool(strict) and not flag,
                            "pass_floor_1_5": bool(loose) and not flag, "flag": flag,
                            **({"uncommitted": True} if uncommitted else {})})
    if comp:
        out += ["", f"### Beside the paper's Table A8 ({n_pass} of {n_all} cells pass; {n_flagged} more within the "
                f"rule are degenerate; {n_uncommitted} cells with a seed that recorded no commit are not counted)", "",
                "Pass: |ours − paper| ≤ max(2 × paper std, 1.5) for accuracy and ≤ 2 × paper std for ΔDP/ΔEO; "
                "the last column applies the 1.5-point floor to the gaps too. The paper's UniGNN row is UniGCNII. "
                "A cell whose seeds predict one class (both gaps exactly 0: the points store no predictions, and "
                "one predicted class makes both gaps 0) or collapse (a seed 10 points or more below the median) "
                "reads `degenerate` and is not counted as a pass (`hypergvl.models.study.paper.degenerate_note`).",
                "", table(["model", "dataset", "metric", "ours", "paper", "abs. diff", "limit", "pass",
                           "pass (1.5 floor)", "flag"], comp)]
    ranks = _average_ranks(points, datasets)
    if ranks:
        rows = [[m, *(f"{r[k][0]:.2f}±{r[k][1]:.2f}" for k in FAIRNESS_METRICS), str(r["datasets"])]
                for m, r in ranks.items()]
        out += ["", "### Average ranks (Figure 5)", "",
                "Rank per dataset among the models that ran (1 = best: highest Acc, lowest ΔDP/ΔEO), mean±std over "
                "the datasets where the model ran; models that ran on fewer than two datasets are left out "
                "(when there are at least two datasets), as in the paper.", "",
                table(["model", "Acc rank", "ΔDP rank", "ΔEO rank", "datasets"], rows)]
        record["fairness_ranks"] = {m: {k: r[k] for k in FAIRNESS_METRICS} for m, r in ranks.items()}
        path = _rank_figure(ranks, fig_dir)
        out += ["", f"![fairness ranks](figures/{path.name})"]
    return "\n".join(out)


def _flag(cell: dict[str, Any]) -> Optional[str]:
    """A fairness cell's degenerate flag from its seeds' test metrics (:func:`degenerate_note`)."""
    paths = [q for q in cell.get("_points") or [] if q]
    if paths:
        tests = [json.loads(Path(q).read_text())["metrics"]["test"] for q in paths]
    else:  # a version-1 cell: its per-seed values
        m = cell["metrics"]["test"]
        tests = [dict(zip(m, vals)) for vals in zip(*(m[k].get("values") or [] for k in m))]
    return degenerate_note("fairness", tests, "accuracy")


def _uncommitted(cell: dict[str, Any]) -> str:
    """``"seeds 0, 1"``: the seeds of a cell whose points name no commit (``""`` when all do)."""
    seeds = []
    for q in cell.get("_points") or []:
        doc = json.loads(Path(q).read_text()) if q else {}
        if not (doc.get("provenance") or {}).get("commit"):
            seeds.append(str(doc.get("seed", "?")))
    return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(seeds)}" if seeds else ""


def _average_ranks(points: list[dict], datasets: list[str]) -> dict[str, dict]:
    # lazy: scipy.stats 6.4 s; the Space imports this module: only the rank table needs it
    from scipy.stats import rankdata

    per = defaultdict(lambda: defaultdict(list))
    for ds in datasets:
        ok = [p for p in points if p["dataset"] == ds and p["status"] == "ok"]
        if not ok:
            continue
        for metric in FAIRNESS_METRICS:
            vals = np.array([_metric(p, metric)["mean"] for p in ok], dtype=float)
            vals = np.where(np.isnan(vals), np.inf, vals)
            r = rankdata(-vals if metric == "accuracy" else vals, method="average")
            for p, rk in zip(ok, r):
                per[p["model"]][metric].append(float(rk))
    need = min(2, len(datasets))
    out = {}
    for model, d in sorted(per.items()):
        n = len(d["accuracy"])
        if n >= need:
            out[model] = {k: (float(np.mean(d[k])), float(np.std(d[k]))) for k in FAIRNESS_METRICS}
            out[model]["datasets"] = n
    return out


def _rank_figure(ranks: dict, fig_dir: Path) -> Path:
    # lazy: matplotlib.pyplot 2.1 s; the Space imports this module: pyplot (Agg) only for a figure
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: pyplot 2.1 s; as matplotlib above

    models = list(ranks)
    x = np.arange(len(models))
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(models) + 2), 3.8))
    for i, (metric, marker) in enumerate(zip(FAIRNESS_METRICS, ("o", "s", "^"))):
        mean = [ranks[m][metric][0] for m in models]
        std = [ranks[m][metric][1] for m in models]
        ax.errorbar(x + (i - 1) * 0.22, mean, yerr=std, fmt=marker, capsize=3, label=METRIC_NAMES[metric])
    ax.set_xticks(x, models, rotation=45, ha="right")
    ax.set_ylabel("average rank (lower is better)")
    ax.set_title("Average ranks on Acc, ΔDP, ΔEO (Figure 5 layout; bars: std over datasets)", fontsize=10)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # outside: no point is hidden
    fig.tight_layout()
    path = fig_dir / "fairness_ranks.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ------------------------------------------------------------------------------------------------------ efficiency

def efficiency(points: list[dict], fig_dir: Path, record: dict) -> str:
    if not points:
        return ""
    order = {"cora": 0, "dblp-ca": 1, "synthetic-yelp": 2, "synthetic-trivago": 3}
    datasets = sorted({p["dataset"] for p in points}, key=lambda d: (order.get(d, 9), d))
    rec = record.setdefault("efficiency", [])
    out = ["## Efficiency (DHG-Bench RQ2, Figure 1)", "",
           "Node classification. Time to best validation: training steps of epochs 1..best validation epoch, "
           "evaluation excluded. Peak memory: CUDA max_memory_allocated on a GPU, else the peak RSS of the model's "
           "own subprocess (interpreter, torch and the dataset included). OOM: the run exceeded the memory cap "
           "(RLIMIT_AS of the subprocess on CPU)."]
    for ds in datasets:
        pts = sorted((p for p in points if p["dataset"] == ds), key=lambda p: p["model"])
        info = next((p.get("dataset_info") for p in pts if p.get("dataset_info")), None) or {}
        rows = []
        for p in pts:
            if p["status"] != "ok":
                rows.append([p["model"], _status_cell(p), "", "", "", "", ""])
                continue
            e, a = p["efficiency"], _metric(p, "accuracy")
            cells = [p["model"], fmt(a["mean"], a["std"]), fmt(e["train_time_to_best_val_s"]["mean"]),
                     fmt(1000 * e["epoch_time_s"]["mean"]), "/".join(map(str, e["best_val_epoch"])),
                     fmt(e["peak_memory_mib"]["mean"]), fmt(e.get("baseline_rss_mib"))]
            rows.append(cells)
            rec.append({"dataset": ds, "model": p["model"], "accuracy": a["mean"],
                        "train_time_to_best_val_s": e["train_time_to_best_val_s"]["mean"],
                        "epoch_time_ms": 1000 * e["epoch_time_s"]["mean"],
                        "peak_memory_mib": e["peak_memory_mib"]["mean"], "cells": cells[1:], "point": p["_path"]})
        note = ""
        if info:
            note = (f" ({info.get('nodes')} nodes, {info.get('hyperedges')} hyperedges incl. singletons, "
                    f"{info.get('features')} features; features: {info.get('features_source')})")
            if info.get("synthetic"):
                note += f". {info.get('note')}"
        out += ["", f"### {ds}{note}", "",
                table(["model", "test acc", "time to best val (s)", "epoch (ms)", "best val epoch",
                       "peak memory (MiB)", "RSS after loading (MiB)"], rows)]
    path = _efficiency_figure(points, datasets, fig_dir)
    out += ["", f"![efficiency](figures/{path.name})"]
    return "\n".join(out)


#: where a marker's label may go, tried in this order: (dx, dy) in units of the marker's radius plus a gap, and the
#: text's anchor; then the same directions twice and three times as far, with a leader line
_LABEL_SPOTS = ((0, 1, "center", "bottom"), (1, 0, "left", "center"), (-1, 0, "right", "center"),
                (0, -1, "center", "top"), (1, 1, "left", "bottom"), (-1, 1, "right", "bottom"),
                (1, -1, "left", "top"), (-1, -1, "right", "top"))


def label_points(ax, xy: Sequence[tuple[float, float]], names: Sequence[str], sizes: Sequence[float],
                 fontsize: float = 7) -> list:
    """Label each marker of a scatter on ``ax`` (``sizes``: its area in points², as ``scatter(s=...)``) with its
    name where the text overlaps no other label, no marker and stays inside the axes: the first free spot of
    :data:`_LABEL_SPOTS`, near first; where none is free, the spot inside the axes that overlaps least (a leader
    line joins a label placed beyond the nearest ring). Call it
    after the figure's layout is final (the check is in display coordinates). Returns the annotations."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    inside = ax.get_window_extent(renderer)
    px = fig.dpi / 72  # pixels per point
    centres = ax.transData.transform(np.asarray(xy, dtype=float).reshape(-1, 2))
    radii = [math.sqrt(max(s, 1.0)) / 2 * px for s in sizes]
    obstacles = [(cx - r, cy - r, cx + r, cy + r) for (cx, cy), r in zip(centres, radii)]

    def overlap(a, b) -> float:
        w = min(a[2], b[2]) - max(a[0], b[0])
        h = min(a[3], b[3]) - max(a[1], b[1])
        return w * h if w > 0 and h > 0 else 0.0

    def outside(b) -> float:  # area of the box outside the axes
        w, h = b[2] - b[0], b[3] - b[1]
        return w * h - overlap(b, (inside.x0, inside.y0, inside.x1, inside.y1))

    out = []
    order = sorted(range(len(names)), key=lambda i: (-centres[i][1], centres[i][0]))  # top first, left to right
    for i in order:
        (cx, cy), r = centres[i], radii[i]
        best = None
        for reach in (1, 2, 3):
            for dx, dy, ha, va in _LABEL_SPOTS:
                off = (reach * (r / px + 2)) * dx, (reach * (r / px + 2)) * dy  # points
                a = ax.annotate(names[i], xy[i], xytext=off, textcoords="offset points", fontsize=fontsize, ha=ha,
                                va=va)
                e = a.get_window_extent(renderer)
                box = (e.x0 - 1, e.y0 - 1, e.x1 + 1, e.y1 + 1)
                cost = (outside(box), sum(overlap(box, o) for j, o in enumerate(obstacles) if j != i))
                if best is None or cost < best[0]:
                    if best is not None:
                        best[1].remove()
                    best = (cost, a, box, reach)
                else:
                    a.remove()
                if cost == (0, 0):
                    break
            if best[0] == (0, 0):
                break
        cost, a, box, reach = best
        if reach > 1:  # far from its marker: draw the line back to it
            a.remove()
            a = ax.annotate(names[i], xy[i], xytext=a.xyann, textcoords="offset points", fontsize=fontsize,
                            ha=a.get_horizontalalignment(), va=a.get_verticalalignment(),
                            arrowprops={"arrowstyle": "-", "lw": 0.5, "color": "0.4", "shrinkA": 0, "shrinkB": r / px})
        obstacles.append(box)
        out.append(a)
    return out


def _efficiency_figure(points: list[dict], datasets: list[str], fig_dir: Path) -> Path:
    # lazy: matplotlib.pyplot 2.1 s; the Space imports this module: pyplot (Agg) only for a figure
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: pyplot 2.1 s; as matplotlib above
    import matplotlib.ticker

    fig, axes = plt.subplots(1, len(datasets), figsize=(max(7.5, 5.2 * len(datasets)), 4.6), squeeze=False)
    labelled = []  # (axes, points, names, marker sizes): labelled once the layout is final
    for ax, ds in zip(axes[0], datasets):
        ok = [p for p in points if p["dataset"] == ds and p["status"] == "ok"]
        if ok:
            t = [max(p["efficiency"]["train_time_to_best_val_s"]["mean"], 1e-4) for p in ok]
            acc = [_metric(p, "accuracy")["mean"] for p in ok]
            mem = np.array([p["efficiency"]["peak_memory_mib"]["mean"] for p in ok])
            size = 40 + 500 * (mem - mem.min()) / max(float(np.ptp(mem)), 1.0)  # RSS shares a large baseline
            ax.scatter(t, acc, s=size, alpha=0.5, c=range(len(ok)), cmap="tab20", edgecolors="k", linewidths=0.5)
            ax.set_xscale("log")
            within_decade = max(t) / min(t) < 10  # no major tick may fall inside: label the minor ones
            ax.xaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g") if within_decade
                                         else matplotlib.ticker.NullFormatter())
            ax.margins(x=0.08, y=0.1)  # room for the labels of the outermost markers
            labelled.append((ax, list(zip(t, acc)), [p["model"] for p in ok], list(size)))
        ooms = [p["model"] for p in points if p["dataset"] == ds and p["status"] == "oom"]
        if ooms:
            ax.text(0.02, 0.02, "OOM: " + ", ".join(ooms), transform=ax.transAxes, fontsize=7, va="bottom")
        ax.set_title(ds, fontsize=10)
        ax.set_xlabel("training time to best validation (s, log)")
        ax.set_ylabel("test accuracy (%)")
        ax.grid(alpha=0.3)
    fig.suptitle("Time vs accuracy; marker area grows with peak memory from the panel's smallest (Figure 1 layout; "
                 "values in the table)", fontsize=10)
    fig.tight_layout()
    for ax, xy, names, sizes in labelled:
        label_points(ax, xy, names, sizes)
    path = fig_dir / "efficiency.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# --------------------------------------------------------------------------------------------------- effectiveness

_EFFECT = {"node": ("Table 1 / A5: node classification", ("accuracy",)),
           "hyperedge": ("Table A6: hyperedge prediction", ("auroc", "ap")),
           "graph": ("Table A7: hypergraph classification", ("accuracy", "macro_f1"))}


def _summaries(roots: Iterable[Path]) -> list[dict]:
    out = []
    for root in roots:
        for p in sorted(Path(root).glob(f"**/{SUMMARY_FILE}")):
            parts = p.relative_to(root).parts
            if any(parts[i] == "train" and i > 0 and parts[i - 1] in STUDIES for i in range(len(parts))):
                continue
            if parts[0] == "train" and Path(root).name in STUDIES:  # the input is a study folder itself
                continue
            try:
                doc = read_summary(p.parent)
            except NotATrainerSummary:  # another tool's summary.json among the inputs
                continue
            out.append({**doc, "_path": str(p)})
    return out


def effectiveness(summaries: list[dict], record: dict) -> str:
    if not summaries:
        return ""
    out = ["## Effectiveness (trainer summaries found in the inputs)"]
    rec = record.setdefault("effectiveness", [])
    for task, (title, metrics) in _EFFECT.items():
        docs = [s for s in summaries if s["task"] == task]
        if not docs:
            continue
        datasets = sorted({s["dataset"] for s in docs})
        cell = {(s["model"], s["dataset"]): s for s in docs}
        rows = []
        for model in sorted({s["model"] for s in docs}):
            cells = [model]
            for ds in datasets:
                for m in metrics:
                    s = cell.get((model, ds))
                    v = None if s is None else s["test_metrics"].get(m)
                    cells.append("" if v is None else fmt(v["mean"], v["std"]))
                    if v is not None:
                        rec.append({"task": task, "dataset": ds, "model": model, "metric": m, "mean": v["mean"],
                                    "std": v["std"], "runs": len(s["runs"]), "cell": cells[-1], "summary": s["_path"]})
            rows.append(cells)
        out += ["", f"### {title}", "",
                table(["model"] + [f"{ds} {METRIC_NAMES[m]}" for ds in datasets for m in metrics], rows)]
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------------------ build

def build(inputs: Sequence[Path], out: Path) -> dict[str, Path]:
    """Write the report of the result folders ``inputs`` to ``out``; returns the files written."""
    inputs = [Path(i) for i in inputs]
    files = iter_points(inputs)
    points = aggregate(files)  # one cell per (study, model, dataset, setting), its seeds merged
    summaries = _summaries(inputs)
    if not points and not summaries:
        raise ConfigError(f"no study points or trainer summaries under {', '.join(map(str, inputs))}")
    out = Path(out)
    fig_dir = out / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    record: dict[str, Any] = {"schema": "hypergvl.hnn-study.report", "schema_version": SCHEMA_VERSION,
                              "inputs": [str(i) for i in inputs], "point_files": len(files), "cells": len(points),
                              # this report's process; each number's own is in the point or summary it names
                              "provenance": provenance({"inputs": [str(i) for i in inputs], "out": str(out)})}
    sections = {
        "robustness": robustness([p for p in points if p["study"] == "robustness"], fig_dir, record),
        "fairness": fairness([p for p in points if p["study"] == "fairness"], fig_dir, record),
        "efficiency": efficiency([p for p in points if p["study"] == "efficiency"], fig_dir, record),
        "effectiveness": effectiveness(summaries, record),
    }
    written = {}
    for name, text in sections.items():
        if text:
            path = out / f"{name}.md"
            path.write_text(text + "\n")
            written[name] = path
    index = ["# HNN studies report", "", f"Built by `hypergvl study report` from {len(files)} study point "
             f"files ({len(points)} cells) and {len(summaries)} trainer summaries; no training.", ""]
    index += [sections[k] + "\n" for k in sections if sections[k]]
    (out / "README.md").write_text("\n".join(index))
    written["README"] = out / "README.md"
    write_json_atomic(out / "report.json", record)
    written["report.json"] = out / "report.json"
    for f in sorted(fig_dir.glob("*.png")):
        written[f"figures/{f.name}"] = f
    return written
