"""``hypergvl report RESULTS...``: the paper's tables from leaderboard submissions.

Table 3 layout: one row per model, one column per task, then Avg.U and Avg.R (HyperGVL sec. 3.2). Table 4 layout:
one row per representation (7 textual, then 5 visual), one column per task (sec. 3.4). Plus, per model, a PNG
heatmap of accuracy by task x representation.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from hypergvl_dataset.cli import UserError, command
from hypergvl_dataset.tasks import TASK_CODES

TEXT_NAMES = {"lo_inc": "LO-Inc", "n_pair": "N-Pair", "adj_mat": "Adj-Mat", "ho_neigh": "HO-Neigh",
              "ho_inc": "HO-Inc", "n_set": "N-Set", "inc_mat": "Inc-Mat"}
VISUAL_NAMES = {"enc_hy": "Enc-Hy", "bi_inc": "Bi-Inc", "sh_inc": "Sh-Inc", "st_inc": "St-Inc", "cli_exp": "Cli-Exp"}


def load_results(path: Path) -> dict:
    path = path / "results.json" if path.is_dir() else path
    try:
        res = json.loads(path.read_text())
        res["scores"]["per_task"], res["model"]["name"]
    except FileNotFoundError:
        raise UserError(f"no results file at {path}") from None
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise UserError(f"{path} is not a hypergvl evaluate results.json ({exc})") from None
    return res


def _cell(value) -> str:
    return "-" if value is None else f"{value:.1f}"


def table3(results: list[dict]) -> str:
    head = "| Model | " + " | ".join(TASK_CODES) + " | Avg.U | Avg.R |"
    lines = [head, "|" + " --- |" * (len(TASK_CODES) + 3)]
    for r in results:
        s = r["scores"]
        lines.append(f"| {r['model']['name']} | " + " | ".join(_cell(s["per_task"].get(t)) for t in TASK_CODES)
                     + f" | {_cell(s.get('avg_u'))} | {_cell(s.get('avg_r'))} |")
    return "\n".join(lines)


def table4(result: dict) -> str:
    s = result["scores"]
    lines = ["| Representation | " + " | ".join(TASK_CODES) + " | Avg.U | Avg.R |", "|" + " --- |" * (len(TASK_CODES) + 3)]
    for key, names in (("by_text_rep", TEXT_NAMES), ("by_visual_rep", VISUAL_NAMES)):
        for rep, label in names.items():
            g = s.get(key, {}).get(rep)
            if g:
                lines.append(f"| {label} | " + " | ".join(_cell(g["per_task"].get(t)) for t in TASK_CODES)
                             + f" | {_cell(g.get('avg_u'))} | {_cell(g.get('avg_r'))} |")
    return "\n".join(lines)


def heatmap(result: dict, path: Path) -> None:
    """Task x representation accuracy as a PNG (matplotlib, Agg)."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    s = result["scores"]
    cols = [(k, rep, label) for k, names in (("by_text_rep", TEXT_NAMES), ("by_visual_rep", VISUAL_NAMES))
            for rep, label in names.items() if rep in s.get(k, {})]
    grid = np.full((len(TASK_CODES), len(cols)), np.nan)
    for j, (k, rep, _) in enumerate(cols):
        for i, t in enumerate(TASK_CODES):
            v = s[k][rep]["per_task"].get(t)
            grid[i, j] = np.nan if v is None else v
    fig = Figure(figsize=(1.0 + 0.7 * max(len(cols), 1), 6.0), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    im = ax.imshow(grid, vmin=0, vmax=100, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(cols)), [c[2] for c in cols], rotation=45, ha="right")
    ax.set_yticks(range(len(TASK_CODES)), TASK_CODES)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=7,
                        color="white" if grid[i, j] < 60 else "black")
    ax.set_title(f"{result['model']['name']}: accuracy (%) by task and representation")
    fig.colorbar(im, ax=ax, fraction=0.03)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, format="png", metadata={"Software": None})
    os.replace(tmp, path)


def report(paths: list[Path], out: Path | None = None) -> str:
    results = [load_results(p) for p in paths]
    parts = ["## Accuracy by task (Table 3 layout)", "", table3(results), ""]
    for r in results:
        parts += [f"## {r['model']['name']}: accuracy by representation (Table 4 layout)", "", table4(r), ""]
    text = "\n".join(parts)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text(text)
        for r in results:
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in r["model"]["name"])
            heatmap(r, out / f"heatmap_{safe}.png")
    return text


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", nargs="+", type=Path, help="results.json files or evaluate output folders")
    p.add_argument("--out", type=Path, help="also write report.md and one heatmap PNG per model here")


@command("report", _args)
def _report(args: argparse.Namespace) -> int:
    """Markdown tables (paper Tables 3-4) and heatmaps from results.json files."""
    print(report(args.results, args.out))
    return 0
