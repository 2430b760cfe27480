"""The Leaderboard tab: the HyperGVL Table 3 layout, re-scored by the server, with filters and column selection."""
from __future__ import annotations

import re
import time

import gradio as gr
import pandas as pd

from hypergvl.render import visual_labels
from hypergvl.tasks import TASK_CODES
from hypergvl.text import text_labels

from ..scoring import SCALES, SOURCES, SubmissionError
from ..service import MODEL_TYPES, Service, spreadsheet_safe
from .base import ALL, SCORE_COLUMNS, OnLoad, Page, register_tab

INFO_COLUMNS = ["Revision", "Type", "Params (B)", "Track", "Scored from", "Date", "Dataset version", "Scorer", "Link"]
# how the server got the responses it scored: a hidden-set row is always one of its own runs
SCORED_FROM = {"upload": "uploaded responses", "request": "server run", "seed": "server run"}
# the harnesses whose logs `hypergvl import-lm-eval` / `import-lmms-eval` turn into a run: their provenance names them
HARNESSES = ("lm-eval", "lmms-eval")
_VERSION = re.compile(r"^[0-9A-Za-z.+-]{1,32}$")
HEADLINE_COLUMNS = ["Avg.U", "Avg.R", "All"]
# the table's order: the headline first (visible without scrolling at 1,280 px), per-task next, metadata last
TABLE_COLUMNS = HEADLINE_COLUMNS + list(TASK_CODES) + INFO_COLUMNS
DEFAULT_COLUMNS = HEADLINE_COLUMNS + list(TASK_CODES) + ["Type", "Params (B)", "Scored from", "Revision"]  # the rest: "Columns"


def _opt(value):
    return None if value in (None, "", ALL) else value


def scored_from(entry) -> str:
    """How the server got the responses it scored; an upload imported from another harness's logs says which one
    (``provenance.config.harness`` of its results.json, as submitted: a label, never trusted for the scores)."""
    label = SCORED_FROM[entry.origin]
    config = (entry.submitted_provenance or {}).get("config") if entry.origin == "upload" else None
    harness = config.get("harness") if isinstance(config, dict) else None
    if not isinstance(harness, dict) or harness.get("name") not in HARNESSES:
        return label
    version = harness.get("version")
    version = f" {version}" if isinstance(version, str) and _VERSION.match(version) else ""
    return f"{label} ({harness['name']}{version})"


def leaderboard_frame(service: Service, testset: str, *, model_types=None, track: str = "both", source=ALL,
                      scale=ALL, text_rep=ALL, visual_rep=ALL, columns=None) -> pd.DataFrame:
    """The Table 3 layout for the filters, as a DataFrame (numbers as floats; user text as plain strings)."""
    tracks = ("vision", "text-only") if track == "both" else (track,)
    rows = service.leaderboard_rows(testset, tracks=tracks, model_types=tuple(model_types or MODEL_TYPES + ("baseline",)),
                                    scale=_opt(scale), source=_opt(source), text_rep=_opt(text_rep),
                                    visual_rep=_opt(visual_rep))
    wanted = set(columns if columns is not None else DEFAULT_COLUMNS)
    columns = [c for c in TABLE_COLUMNS if c in wanted]  # the table's own order, whatever was clicked
    records = []
    for r in rows:
        e = r["entry"]
        rec = {"Model": spreadsheet_safe(e.model) + (" (text only)" if e.text_only else ""), "Revision": e.revision,
               "Type": e.model_type, "Params (B)": e.num_parameters, "Track": e.track, "Scored from": scored_from(e),
               "Date": time.strftime("%Y-%m-%d", time.gmtime(e.created)), "Dataset version": e.dataset_sha256[:12],
               "Scorer": f"v{e.scorer_version}", "Link": e.link}
        rec.update({t: r["per_task"].get(t) for t in TASK_CODES})
        rec["Avg.U"], rec["Avg.R"], rec["All"] = r["avg_u"], r["avg_r"], r["accuracy"]
        records.append(rec)
    frame = pd.DataFrame(records, columns=["Model"] + INFO_COLUMNS + SCORE_COLUMNS)
    for c in SCORE_COLUMNS + ["Params (B)"]:
        frame[c] = pd.to_numeric(frame[c], errors="coerce").round(1)
    return frame[["Model"] + columns]


def styled(frame: pd.DataFrame):
    """Best (green, bold) and worst (red) value of every score column marked."""
    cols = [c for c in SCORE_COLUMNS if c in frame.columns]
    if frame.empty or not cols:
        return frame
    style = frame.style.format(precision=1, na_rep="-", subset=cols + [c for c in ["Params (B)"] if c in frame])
    if len(frame) > 1:
        style = style.highlight_max(subset=cols, props="background-color: #c6efce; font-weight: bold")
        style = style.highlight_min(subset=cols, props="background-color: #ffc7ce")
    return style


def _datatypes(frame: pd.DataFrame) -> list[str]:
    return ["number" if c in SCORE_COLUMNS or c == "Params (B)" else "str" for c in frame.columns]


@register_tab("leaderboard", title="Leaderboard", order=10)
def build(page: Page) -> OnLoad:
    service, public = page.service, page.public

    def lb(testset, types, track, source, scale, text_rep, visual_rep, columns):
        try:
            frame = leaderboard_frame(service, testset, model_types=types, track=track, source=source, scale=scale,
                                      text_rep=text_rep, visual_rep=visual_rep, columns=columns)
        except SubmissionError as exc:
            raise gr.Error(str(exc), print_exception=False) from None
        return gr.Dataframe(value=styled(frame), datatype=_datatypes(frame))

    with gr.Row():
        lb_set = gr.Radio(page.set_choices(), value=public, label="Test set", elem_id="lb-set")
        lb_types = gr.CheckboxGroup(list(MODEL_TYPES) + ["baseline"], value=list(MODEL_TYPES) + ["baseline"],
                                    label="Model type", elem_id="lb-types")
        lb_track = gr.Radio(["both", "vision", "text-only"], value="both", label="Input",
                            elem_id="lb-track")
    with gr.Row():
        lb_source = gr.Radio([ALL, *SOURCES], value=ALL, label="Source", elem_id="lb-source")
        lb_scale = gr.Radio([ALL, *SCALES], value=ALL, label="Scale", elem_id="lb-scale")
        lb_text = gr.Dropdown([ALL, *[(v, k) for k, v in text_labels().items()]], value=ALL,
                              label="Text representation", elem_id="lb-text")
        lb_visual = gr.Dropdown([ALL, *[(v, k) for k, v in visual_labels().items()], ("none (text only)", "none")],
                                value=ALL, label="Visual representation", elem_id="lb-visual")
    lb_cols = gr.CheckboxGroup(TABLE_COLUMNS, value=DEFAULT_COLUMNS, label="Columns",
                               elem_id="lb-cols")
    first = leaderboard_frame(service, public).iloc[0:0]  # the rows come with the page's load event
    lb_table = gr.Dataframe(value=first, datatype=_datatypes(first), interactive=False,
                            show_search="filter", pinned_columns=1, elem_id="lb", max_chars=80,
                            buttons=["copy", "fullscreen"])
    gr.Markdown("Green: best in the column; red: worst. Avg.U: mean over the six understanding tasks; Avg.R: "
                "over the six reasoning tasks (HyperGVL Table 3).")
    inputs = [lb_set, lb_types, lb_track, lb_source, lb_scale, lb_text, lb_visual, lb_cols]
    for c in inputs:
        c.change(lb, inputs, lb_table, api_name=False, queue=False)
    gr.Button("Refresh", elem_id="lb-refresh", size="sm").click(lb, inputs, lb_table, api_name="leaderboard")
    # a fresh page shows the table as stored now (computed once per store version, then cached)
    return OnLoad(lambda: lb(public, list(MODEL_TYPES) + ["baseline"], "both", ALL, ALL, ALL, ALL, DEFAULT_COLUMNS),
                  [lb_table], queue=False)
