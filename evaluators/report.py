"""``hypergvl report RESULTS...``: the paper's tables and figures from leaderboard submissions.

Table 3 layout: one row per model, one column per task (the paper's twelve, then any task beyond them a run has),
then Avg.U and Avg.R (the paper's six understanding and six reasoning tasks, HyperGVL sec. 3.2) and, when a run
has a task beyond the paper's, Avg.Ext (the mean over those); a run without a task shows ``-`` for it, and a line
under the table says over which tasks each average is taken (:data:`hypergvl.paper.AVERAGES`). Beside it, per
model, the share of answers cut at the token limit and the scorer version (:func:`generation_table`): a low score
with many cut answers asks for a larger ``--max-new-tokens``, not a verdict on the model. Table 4 layout:
one row per representation the run has (textual, then visual), one column per task (sec. 3.4). PNGs (with
``--out``):

* per model, a heatmap of accuracy by task x representation;
* ``fig3_lvlm_vs_llm.png`` when runs with images and text-only runs (``--visual-reps none``) are given: accuracy per
  task, one bar per run, text-only runs hatched (sec. 3.3, Fig. 3: "both LVLMs consistently outperform their LLMs");
* ``fig4_scale.png``: Avg.U and Avg.R by scale (small, medium, large), synthetic (solid) against real (dashed)
  hypergraphs, one colour per run (sec. 3.5, Fig. 4).

With ``--paper``, the paper's own numbers (:mod:`hypergvl.evaluators.paper`) beside ours, every such row labelled
``paper (Table N)`` (:func:`paper_tables`), in the paper's layout: its twelve tasks, Avg.U and Avg.R.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from hypergvl.atomic import atomic_path
from hypergvl.cli import UserError, command
from hypergvl.paper import AVERAGE_LABELS, PAPER_REASONING, PAPER_TASKS, PAPER_UNDERSTANDING
from hypergvl.render import visual_labels
from hypergvl.tasks import task_codes
from hypergvl.text import text_labels

from .paper import COLUMNS, load as load_paper, match
from .run_folder import LOG, finished_records, read_results



def load_results(path: Path) -> dict:
    """A run's results, checked against the folder's ``samples.jsonl`` when it has one (a cut or a count other than
    the results' is refused: :func:`hypergvl.evaluators.run_folder.finished_records`)."""
    res = read_results(path)
    folder = path if path.is_dir() else path.parent
    if (folder / LOG).is_file():
        finished_records(folder, res)
    if res.get("scored") is False:
        raise UserError(f"{path} holds unscored responses (a questions-only set): score them first with "
                        "`hypergvl score RUN --dataset FULL_BUILD --out DIR`")
    try:
        res["scores"]["per_task"], res["model"]["name"]
    except (KeyError, TypeError) as exc:
        raise UserError(f"{path} is not a hypergvl evaluate results.json (no {exc})") from None
    return res


def label(result: dict) -> str:
    """The model's name, marked when the run was text-only (an LLM, or an LVLM shown no image); runs that would read
    alike are told apart by :func:`load_all`."""
    return result.get("_label") or result["model"]["name"] + (" (text only)" if result.get("text_only") else "")


def load_all(paths: list[Path]) -> list[dict]:
    """Every run's results, each with a label no other run of the report has (tables, legends and heatmap file names
    use it): two runs of one model are marked with their folders, and numbered when those match too."""
    results = [load_results(p) for p in paths]
    base = [label(r) for r in results]
    for r, p, name in zip(results, paths, base):
        if base.count(name) > 1:
            folder = p if p.is_dir() else p.parent
            r["_label"] = f"{name} [{folder.name}]"
    seen: dict[str, int] = {}
    for r in results:
        name = label(r)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            r["_label"] = f"{name} #{seen[name]}"
    return results


def _cell(value) -> str:
    return "-" if value is None else f"{value:.1f}"


PAPER_LAYOUT = (PAPER_TASKS, ("avg_u", "avg_r"))  # the paper's Tables 3 and 4: its twelve tasks, Avg.U, Avg.R


def layout(scores: list[dict]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(task columns, average keys) of a table of these scores: the paper's twelve (Table 3's columns, ``-`` where
    a run has none), then every task beyond them one of the runs has, registered ones in
    :func:`hypergvl.tasks.task_codes` order; Avg.U, Avg.R, and Avg.Ext when a task beyond the paper's is among them."""
    have = [t for s in scores for t in s.get("per_task", {})]
    order = list(task_codes())
    tasks = tuple([t for t in order if t in PAPER_TASKS or t in have] + sorted({t for t in have if t not in order}))
    keys = ("avg_u", "avg_r") + (("avg_ext",) if any(t not in PAPER_TASKS for t in tasks) else ())
    return tasks, keys


def averages_line(tasks) -> str:
    """Over which of ``tasks`` (a table's task columns) each average is taken."""
    extra = [t for t in tasks if t not in PAPER_TASKS]
    text = (f"Avg.U: mean over the paper's understanding tasks ({', '.join(PAPER_UNDERSTANDING)}); Avg.R: over its "
            f"reasoning tasks ({', '.join(PAPER_REASONING)})")
    if extra:
        text += f"; Avg.Ext: over the tasks beyond the paper's ({', '.join(extra)})"
    return text + "; each over those a run has (a `-` task is not in it)."


def _head(first: str, columns=None) -> list[str]:
    tasks, keys = columns or (tuple(task_codes()), ("avg_u", "avg_r"))
    names = [*tasks, *(AVERAGE_LABELS[k] for k in keys)]
    return [f"| {first} | " + " | ".join(names) + " |", "|" + " --- |" * (len(names) + 1)]


def _line(name: str, scores: dict, columns=None) -> str:
    """One of our rows: per-task accuracy and the averages (one decimal; ``-`` where the run has none)."""
    tasks, keys = columns or (tuple(task_codes()), ("avg_u", "avg_r"))
    return (f"| {name} | " + " | ".join(_cell(scores["per_task"].get(t)) for t in tasks)
            + "".join(f" | {_cell(scores.get(k))}" for k in keys) + " |")


def _paper_line(number: int, row) -> str:
    """One of the paper's rows as printed (two decimals), labelled with its table."""
    return f"| paper (Table {number}): {row.name} | " + " | ".join(f"{row.cells[c]:.2f}" for c in COLUMNS) + " |"


def table3(results: list[dict]) -> str:
    columns = layout([r["scores"] for r in results])
    return "\n".join(_head("Model", columns) + [_line(label(r), r["scores"], columns) for r in results]
                     + ["", averages_line(columns[0])])


def generation_table(results: list[dict]) -> str:
    """Per run: how many answers were cut at the token limit (``finish_reason == "length"``), the limit, and the
    grading rules' version that made the scores. A run written before these were recorded shows ``-`` for them
    (and scorer version 1, the rules before versions were recorded)."""
    lines = ["| Model | Samples | Cut at limit | Max new tokens | Scorer version |", "|" + " --- |" * 5]
    for r in results:
        share, gen = r.get("truncated_share"), r.get("generation") or {}
        limit = gen.get("max_new_tokens", gen.get("max_tokens"))
        cut = "-" if share is None else f"{100 * share:.1f}%"
        lines.append(f"| {label(r)} | {r.get('num_samples', '-')} | {cut} | {limit if limit is not None else '-'} "
                     f"| {r.get('scorer_version') or '1'} |")
    return "\n".join(lines)


def table4(result: dict) -> str:
    columns = layout([result["scores"]])
    return "\n".join(_head("Representation", columns) + [_line(name, g, columns) for name, g in _by_rep(result)])


def _by_rep(result: dict) -> list[tuple[str, dict]]:
    """(label, scores) of each registered representation the run has: textual, then visual, by their labels."""
    s = result["scores"]
    return [(name, s[key][rep]) for key, names in (("by_text_rep", text_labels()), ("by_visual_rep", visual_labels()))
            for rep, name in names.items() if s.get(key, {}).get(rep)]


def paper_tables(results: list[dict]) -> str:
    """``--paper``: the numbers printed in HyperGVL Tables 3 and 4 beside ours, each such row labelled
    ``paper (Table N)``; they are the paper's, not re-scored here. Table 3: under each run with images whose model
    is one of the paper's (:func:`hypergvl.evaluators.paper.match`), that model's row; when some run is none of them, all the
    paper's rows follow for reference. Table 4 (the paper's means over its 12 LVLMs, sec. 3.4): under each of our
    representation rows, the paper's row for the same representation. Text-only runs are not matched: the paper's
    sec. 3.3 LLM results are a figure only (Fig. 3), with no numbers in its text."""
    p = load_paper()
    t3, t4 = p.tables[3], p.tables[4]
    lines = ["## Beside the paper (Table 3)", "",
             f"Rows `paper (Table 3)` are printed in {p.citation()}, Table 3: {t3.setting}. Not re-scored here. "
             "In the paper's layout: its twelve tasks, Avg.U and Avg.R.", "", *_head("Model", PAPER_LAYOUT)]
    unmatched = False
    for r in results:
        hit = None if r.get("text_only") else match(r["model"]["name"])
        lines += [_line(label(r), r["scores"], PAPER_LAYOUT)] + ([_paper_line(3, hit)] if hit else [])
        unmatched |= hit is None
    if unmatched:
        lines += [_paper_line(3, row) for row in t3.rows]
    lines += ["", f"Paper's averages: {t3.recomputation['note']}"]
    if any(r.get("text_only") for r in results):
        llm = p.llm_comparison
        pairs = ", ".join(f"{x['lvlm']} with {x['llm']}" for x in llm["pairs"])
        lines += ["", f"Text-only runs: the paper's sec. {llm['section']} compares {pairs} ({llm['figure']}: "
                  f"\"{llm['claim']}\"); numbers: {llm['numbers']}."]
    for r in results:
        lines += ["", f"## {label(r)} beside the paper (Table 4)", "",
                  f"Rows `paper (Table 4)`: {t4.setting}. Not this model's numbers.", "",
                  *_head("Representation", PAPER_LAYOUT)]
        for name, g in _by_rep(r):
            paper_row = next((row for row in t4.rows if row.name == name), None)  # a representation beyond the paper's: none
            lines += [_line(name, g, PAPER_LAYOUT)] + ([_paper_line(4, paper_row)] if paper_row else [])
    lines += ["", f"Paper's Table 4 averages: {t4.recomputation['note']}"]
    return "\n".join(lines + [""])


def heatmap(result: dict, path: Path) -> None:
    """Task x representation accuracy as a PNG (matplotlib, Agg)."""
    import numpy as np

    s = result["scores"]
    cols = [(k, rep, label) for k, names in (("by_text_rep", text_labels()), ("by_visual_rep", visual_labels()))
            for rep, label in names.items() if rep in s.get(k, {})]
    codes = layout([s])[0] or task_codes()
    grid = np.full((len(codes), len(cols)), np.nan)
    for j, (k, rep, _) in enumerate(cols):
        for i, t in enumerate(codes):
            v = s[k][rep]["per_task"].get(t)
            grid[i, j] = np.nan if v is None else v
    fig = _figure(1.0 + 0.7 * max(len(cols), 1), 6.0)
    ax = fig.add_subplot()
    im = ax.imshow(grid, vmin=0, vmax=100, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(cols)), [c[2] for c in cols], rotation=45, ha="right")
    ax.set_yticks(range(len(codes)), codes)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=7,
                        color="white" if grid[i, j] < 60 else "black")
    ax.set_title(f"{label(result)}: accuracy (%) by task and representation")
    fig.colorbar(im, ax=ax, fraction=0.03)
    _save(fig, path)


def _figure(width: float, height: float):
    # lazy: matplotlib 0.7 s; 'hypergvl --help' imports this module, only a figure needs it
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=120)
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: Path) -> None:
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})


def lvlm_vs_llm(results: list[dict], path: Path) -> bool:
    """Fig. 3: per-task accuracy, one bar per run, text-only runs hatched. Drawn only when both kinds are given."""
    import numpy as np

    if not (any(r.get("text_only") for r in results) and any(not r.get("text_only") for r in results)):
        return False
    tasks = [t for t in task_codes() if any(t in r["scores"]["per_task"] for r in results)]
    fig = _figure(2.0 + 0.9 * len(tasks), 5.0)
    ax = fig.add_subplot()
    width = 0.8 / len(results)
    x = np.arange(len(tasks))
    for j, r in enumerate(sorted(results, key=lambda r: (r["model"]["name"], bool(r.get("text_only"))))):
        values = [r["scores"]["per_task"].get(t) for t in tasks]
        ax.bar(x + (j - (len(results) - 1) / 2) * width, [np.nan if v is None else v for v in values], width,
               label=label(r), hatch="//" if r.get("text_only") else None,
               edgecolor="black" if r.get("text_only") else None, linewidth=0.5)
    ax.set_xticks(x, tasks)
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title("LVLMs and their LLMs (text only, hatched) by task (HyperGVL Fig. 3)")
    ax.legend(fontsize=8, ncols=min(len(results), 4), loc="upper center", bbox_to_anchor=(0.5, -0.08))
    _save(fig, path)
    return True


def scale_curves(results: list[dict], path: Path) -> bool:
    """Fig. 4: Avg.U and Avg.R by scale, synthetic (solid) against real (dashed) hypergraphs, a colour per run."""
    scales = ("small", "medium", "large")
    runs = [r for r in results if r["scores"].get("by_source_and_scale")]
    # only the scales some run has problems of: a set without large problems gets no empty "large" position
    scales = tuple(sc for sc in scales if any((r["scores"]["by_source_and_scale"].get(f"{src}/{sc}") or {}).get(k)
                                              is not None for r in runs for src in ("synthetic", "real")
                                              for k in ("avg_u", "avg_r")))
    if not runs or not scales:
        return False
    fig = _figure(10.0, 4.0)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, key, title in zip(axes, ("avg_u", "avg_r"), ("understanding (Avg.U)", "reasoning (Avg.R)")):
        for j, r in enumerate(runs):
            groups = r["scores"]["by_source_and_scale"]
            for source, style in (("synthetic", "-"), ("real", "--")):
                ys = [(groups.get(f"{source}/{sc}") or {}).get(key) for sc in scales]
                pts = [(i, y) for i, y in enumerate(ys) if y is not None]
                if pts:
                    ax.plot(*zip(*pts), style, marker="o", color=f"C{j}", label=f"{label(r)}, {source}")
        ax.set_xticks(range(len(scales)), scales)
        ax.set_title(title)
        ax.set_xlabel("hypergraph scale")
        ax.set_ylim(0, 100)
    axes[0].set_ylabel("accuracy (%)")
    labelled = max(axes, key=lambda ax: len(ax.get_legend_handles_labels()[1]))  # a run may have no reasoning task
    if labelled.get_legend_handles_labels()[1]:
        labelled.legend(fontsize=7)  # (legend() on an axes without lines warns "No artists with labels")
    fig.suptitle("Accuracy by scale, synthetic vs real (HyperGVL Fig. 4)")
    _save(fig, path)
    return True


def report(paths: list[Path], out: Path | None = None, paper: bool = False) -> str:
    results = load_all(paths)
    parts = ["## Accuracy by task (Table 3 layout)", "", table3(results), "",
             "## Answers cut at the token limit", "", generation_table(results), ""]
    for r in results:
        parts += [f"## {label(r)}: accuracy by representation (Table 4 layout)", "", table4(r), ""]
    if paper:
        parts.append(paper_tables(results))
    text = "\n".join(parts)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text(text)
        for r in results:
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label(r))
            heatmap(r, out / f"heatmap_{safe}.png")
        lvlm_vs_llm(results, out / "fig3_lvlm_vs_llm.png")
        scale_curves(results, out / "fig4_scale.png")
    return text


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", nargs="+", type=Path, help="results.json files or evaluate output folders")
    p.add_argument("--out", type=Path, help="also write report.md, a heatmap PNG per model and the Fig. 3/4 PNGs here")
    p.add_argument("--paper", action="store_true",
                   help="also show the numbers printed in the HyperGVL paper (Tables 3 and 4) beside ours, labelled "
                        "'paper (Table N)': the matching model's row where the run's model is one of the paper's")


@command("report", _args)
def _report(args: argparse.Namespace) -> int:
    """Markdown tables (paper Tables 3-4), heatmaps and Fig. 3/4 plots from results.json files."""
    print(report(args.results, args.out, paper=args.paper))
    return 0
