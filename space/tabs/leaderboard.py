"""The Leaderboard tab: the HyperGVL Table 3 layout, re-scored by the server, with filters and column selection.

A column per registered task; an entry scored before a task existed shows a blank there (never 0), its ``Tasks``
column says which tasks its All is averaged over, and Avg.U / Avg.R keep the paper's definition (the note under the
table). ``all public sets`` shows the entries of every public set side by side (two benchmark versions' sets, each
entry with its own ``Test set``)."""
from __future__ import annotations

import re
import time

import gradio as gr
import pandas as pd

from hypergvl.render import visual_labels
from hypergvl.tasks import task_codes
from hypergvl.text import text_labels

from ..scoring import SCALES, SOURCES, SubmissionError
from ..service import MODEL_TYPES, Service, spreadsheet_safe
from ..testsets import PUBLIC
from .base import ALL, OnLoad, Page, average_columns, averages_note, register_tab, score_cells, score_columns, tasks_text

INFO_COLUMNS = ["Revision", "Type", "Params (B)", "Track", "Scored from", "Date", "Tasks", "Test set", "Dataset version",
                "Scorer", "Link"]
# how the server got the responses it scored: a hidden-set row is always one of its own runs
SCORED_FROM = {"upload": "uploaded responses", "request": "server run", "seed": "server run"}
# the harnesses whose logs `hypergvl import-lm-eval` / `import-lmms-eval` turn into a run: their provenance names them
HARNESSES = ("lm-eval", "lmms-eval")
_VERSION = re.compile(r"^[0-9A-Za-z.+-]{1,32}$")
ALL_PUBLIC = "all public sets"  # the test-set choice that shows every public set's entries side by side


def table_columns() -> list[str]:
    """The table's order: the headline averages first (visible without scrolling at 1,280 px), per-task next (every
    registered task), metadata last."""
    return average_columns() + list(task_codes()) + INFO_COLUMNS


def default_columns() -> list[str]:
    """The columns shown before any is chosen under "Columns"."""
    return average_columns() + list(task_codes()) + ["Type", "Params (B)", "Scored from", "Tasks", "Revision"]


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
    """The Table 3 layout for the filters, as a DataFrame (numbers as floats, a blank where an entry has no score;
    user text as plain strings). ``testset`` :data:`ALL_PUBLIC`: every public set's entries in one table."""
    tracks = ("vision", "text-only") if track == "both" else (track,)
    names = [s.name for s in service.sets.all() if s.kind == PUBLIC] if testset == ALL_PUBLIC else [testset]
    rows = []
    for name in names:
        rows += service.leaderboard_rows(name, tracks=tracks,
                                         model_types=tuple(model_types or MODEL_TYPES + ("baseline",)),
                                         scale=_opt(scale), source=_opt(source), text_rep=_opt(text_rep),
                                         visual_rep=_opt(visual_rep))
    if len(names) > 1:
        rows.sort(key=lambda r: (r["accuracy"] is None, -(r["accuracy"] or 0.0)))
    wanted = set(columns if columns is not None else default_columns())
    if len(names) > 1:
        wanted.add("Test set")  # side by side, each row says which set (benchmark version) it was scored on
    columns = [c for c in table_columns() if c in wanted]  # the table's own order, whatever was clicked
    numbers = score_columns()
    records = []
    for r in rows:
        e = r["entry"]
        rec = {"Model": spreadsheet_safe(e.model) + (" (text only)" if e.text_only else ""), "Revision": e.revision,
               "Type": e.model_type, "Params (B)": e.num_parameters, "Track": e.track, "Scored from": scored_from(e),
               "Date": time.strftime("%Y-%m-%d", time.gmtime(e.created)), "Tasks": tasks_text(r.get("averaged_over")),
               "Test set": e.testset, "Dataset version": e.dataset_sha256[:12], "Scorer": f"v{e.scorer_version}",
               "Link": e.link}
        rec.update(score_cells(r))
        records.append(rec)
    frame = pd.DataFrame(records, columns=["Model"] + INFO_COLUMNS + numbers)
    for c in numbers + ["Params (B)"]:
        frame[c] = pd.to_numeric(frame[c], errors="coerce").round(1)
    return frame[["Model"] + columns]


def styled(frame: pd.DataFrame):
    """Best (green, bold) and worst (red) value of every score column marked."""
    cols = [c for c in score_columns() if c in frame.columns]
    if frame.empty or not cols:
        return frame
    style = frame.style.format(precision=1, na_rep="-", subset=cols + [c for c in ["Params (B)"] if c in frame])
    if len(frame) > 1:
        style = style.highlight_max(subset=cols, props="background-color: #c6efce; font-weight: bold")
        style = style.highlight_min(subset=cols, props="background-color: #ffc7ce")
    return style


def leaderboard_view(service: Service, table: gr.Dataframe, testset: str, types, track: str, source, scale,
                     text_rep, visual_rep, columns) -> tuple[dict, list[str]]:
    """(the table as the page's Dataframe takes it, column datatypes) for the filters, computed once per store
    version and filters (their order and repeats do not matter); a :class:`SubmissionError` for an unknown value,
    as :func:`leaderboard_frame`.

    The table is the styled frame already converted by ``table`` (the page's Dataframe) (``headers``, ``data`` and the ``metadata`` of each cell's style
    and shown value), which Gradio passes on as it is: converting a Styler costs 25 ms for six rows, growing with the
    rows, and Gradio would do it on every reply (twice for a component returned with a value)."""
    key = ("lb-table", testset, tuple(sorted(set(types or ()))), track, source, scale, text_rep, visual_rep,
           None if columns is None else tuple(sorted(set(columns))))

    def compute(entries):
        frame = leaderboard_frame(service, testset, model_types=types, track=track, source=source, scale=scale,
                                  text_rep=text_rep, visual_rep=visual_rep, columns=columns)
        return table.postprocess(styled(frame)).model_dump(), _datatypes(frame)

    return service.view(key, compute)


def _datatypes(frame: pd.DataFrame) -> list[str]:
    numbers = score_columns()
    return ["number" if c in numbers or c == "Params (B)" else "str" for c in frame.columns]


@register_tab("leaderboard", title="Leaderboard", order=10)
def build(page: Page) -> OnLoad:
    service, public = page.service, page.public

    def lb(testset, types, track, source, scale, text_rep, visual_rep, columns):
        try:
            table, datatypes = leaderboard_view(service, lb_table, testset, types, track, source, scale, text_rep,
                                                visual_rep, columns)
        except SubmissionError as exc:
            raise gr.Error(str(exc), print_exception=False) from None
        return gr.update(value=table, datatype=datatypes)

    with gr.Row():
        lb_set = gr.Radio(page.set_choices() + [(ALL_PUBLIC, ALL_PUBLIC)], value=public, label="Test set",
                          elem_id="lb-set")
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
    lb_cols = gr.CheckboxGroup(table_columns(), value=default_columns(), label="Columns",
                               elem_id="lb-cols")
    first = leaderboard_frame(service, public).iloc[0:0]  # the rows come with the page's load event
    lb_table = gr.Dataframe(value=first, datatype=_datatypes(first), interactive=False,
                            show_search="filter", pinned_columns=1, elem_id="lb", max_chars=80,
                            buttons=["copy", "fullscreen"])
    gr.Markdown("Green: best in the column; red: worst. " + averages_note())
    inputs = [lb_set, lb_types, lb_track, lb_source, lb_scale, lb_text, lb_visual, lb_cols]
    for c in inputs:
        c.change(lb, inputs, lb_table, api_name=False, queue=False)
    gr.Button("Refresh", elem_id="lb-refresh", size="sm").click(lb, inputs, lb_table, api_name="leaderboard")
    # a fresh page shows the table as stored now (computed once per store version, then cached)
    return OnLoad(lambda: lb(public, list(MODEL_TYPES) + ["baseline"], "both", ALL, ALL, ALL, ALL, default_columns()),
                  [lb_table], queue=False)
