"""The HyperGVL leaderboard Space: browse, compare and submit, re-scored by the server.

    python space/app.py            # local: embedded SQLite store under space/.data, seeded with the baselines

Tabs: Leaderboard (HyperGVL Table 3 layout), Reported in the paper (the paper's own Tables 3 and 4, not re-scored
and not ranked with ours), Representations (Table 4, the task x representation heatmap, Figures 3
and 4), Router (routed results, Figure 5 style), HNN (DHG-Bench tables and figures from ``hypergvl.models.study`` result
folders), Browse (public set: image, prompt, reference answer), Submit (uploads re-scored by the server, requests
for the worker, the queue). Built from Gradio 6 components only (``gradio_leaderboard`` needs gradio<6).

Everything a user types or uploads is shown as text (Textbox, Dataframe ``str`` cells): no Markdown or HTML is
rendered from user input. Configuration: :class:`hypergvl.space.service.SpaceConfig` (environment variables)."""
from __future__ import annotations

import threading
import time
import zipfile
from pathlib import Path

if __name__ == "__main__" and __package__ in (None, ""):  # run as a script: `python space/app.py`, or the Space
    _here = Path(__file__).resolve().parent  # in a checkout this is space/; in a deployed Space, the repo root
    if _here.name != "space":  # a deployed Space (hypergvl.space.deploy): the studies it shows are staged beside
        import os

        os.environ.setdefault("HYPERGVL_SPACE_STUDIES", str(_here / "seed_studies"))
    from hypergvl.space.app import main

    main()
    raise SystemExit(0)

import gradio as gr  # noqa: E402
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot  # noqa: E402,F401 - imported once here, in the main thread: gradio switches the backend on
# every event (importing pyplot) while the HNN-report thread draws, and two threads importing pyplot at once leave
# one of them a partially initialised module ("no attribute 'switch_backend'"): the first submissions then failed.
import pandas as pd  # noqa: E402

from hypergvl.atomic import atomic_path  # noqa: E402
from hypergvl.evaluators.routing import policy_label  # noqa: E402
from hypergvl.render import visual_labels  # noqa: E402
from hypergvl.tasks import TASK_CODES, task_codes  # noqa: E402
from hypergvl.text import text_labels  # noqa: E402

from .scoring import POLICIES, SCALES, SOURCES, SubmissionError, groupings, summarise  # noqa: E402
from .config import SpaceConfig  # noqa: E402
from .service import (MODEL_TYPES, Service, Submission, current_sets, make_service,  # noqa: E402
                      spreadsheet_safe)
from .testsets import HIDDEN, PUBLIC  # noqa: E402
from .upload_limits import UploadLimit, submitter_name  # noqa: E402

ALL = "all"
INFO_COLUMNS = ["Revision", "Type", "Params (B)", "Track", "Scored from", "Date", "Dataset version", "Scorer", "Link"]
# how the server got the responses it scored: a hidden-set row is always one of its own runs
SCORED_FROM = {"upload": "uploaded responses", "request": "server run", "seed": "server run"}
SCORE_COLUMNS = list(TASK_CODES) + ["Avg.U", "Avg.R", "All"]
HEADLINE_COLUMNS = ["Avg.U", "Avg.R", "All"]
# the table's order: the headline first (visible without scrolling at 1,280 px), per-task next, metadata last
TABLE_COLUMNS = HEADLINE_COLUMNS + list(TASK_CODES) + INFO_COLUMNS
DEFAULT_COLUMNS = HEADLINE_COLUMNS + list(TASK_CODES) + ["Type", "Params (B)", "Scored from", "Revision"]  # the rest: "Columns"


# ================================================================================================ views
def _opt(value):
    return None if value in (None, "", ALL) else value


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
               "Type": e.model_type, "Params (B)": e.num_parameters, "Track": e.track, "Scored from": SCORED_FROM[e.origin],
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


def representation_frame(entry) -> pd.DataFrame:
    """Table 4 layout for one entry: a row per representation (7 textual, 5 visual), a column per task."""
    rows = []
    for axis, labels, key in (("text_rep", text_labels(), "text_rep"), ("visual_rep", visual_labels(), "visual_rep")):
        for rep, label in labels.items():
            s = summarise(entry.cells, **{key: rep})
            if s is None:
                continue
            rows.append({"Representation": label, **{t: s["per_task"].get(t) for t in TASK_CODES},
                         "Avg.U": s["avg_u"], "Avg.R": s["avg_r"], "All": s["accuracy"]})
    frame = pd.DataFrame(rows, columns=["Representation"] + SCORE_COLUMNS)
    for c in SCORE_COLUMNS:
        frame[c] = pd.to_numeric(frame[c], errors="coerce").round(1)
    return frame


def _result_dict(entry) -> dict:
    """An entry as ``hypergvl.evaluators.report`` expects a results.json (matplotlib-safe label)."""
    name = entry.model.replace("$", r"\$")[:60]
    return {"model": {"name": name}, "scores": {**entry.scores, **groupings(entry.cells)}, "text_only": entry.text_only}


def _figures_dir(service: Service) -> Path:
    d = service.config.data_dir / "figures"
    d.mkdir(parents=True, exist_ok=True)
    return d


def public_only(service: Service, testset: str) -> None:
    """Per-entry breakdowns (Table 4, heatmaps, figures, routed runs) are served for public sets only: on a hidden
    set they would isolate single problems."""
    if service.sets.get(testset).kind != PUBLIC:
        raise SubmissionError("hidden-set results are shown on the Leaderboard tab only, aggregated over the set")


def representation_figures(service: Service, entry, testset: str) -> tuple[str | None, str | None, str | None]:
    """(heatmap, Fig. 3, Fig. 4) PNG paths for an entry and its test set (None where the results do not allow)."""
    from hypergvl.evaluators.report import heatmap, lvlm_vs_llm, scale_curves

    public_only(service, testset)
    public_only(service, entry.testset)

    def compute(entries):
        d = _figures_dir(service)
        stamp = f"{service.store.version()}-{entry.id}"
        heat = d / f"heatmap-{stamp}.png"
        heatmap(_result_dict(entry), heat)
        mine = [e for e in entries if e.testset == testset and e.model == entry.model and e.track in ("vision", "text-only")]
        fig3 = d / f"fig3-{stamp}.png"
        fig3_ok = lvlm_vs_llm([_result_dict(e) for e in mine], fig3)
        fig4 = d / f"fig4-{stamp}.png"
        vis = [e for e in entries if e.testset == testset and e.track == "vision"][:8]
        fig4_ok = scale_curves([_result_dict(e) for e in vis], fig4)
        return str(heat), str(fig3) if fig3_ok else None, str(fig4) if fig4_ok else None

    return service.view(("repfig", entry.id, testset), compute)


def router_frame(service: Service, testset: str) -> pd.DataFrame:
    """Routed results: a row per (model, policy) with accuracy per task and overall (HyperGVL Fig. 5)."""
    public_only(service, testset)
    rows = []
    for e in service.entries():
        if e.testset != testset or not e.track.startswith("routed:"):
            continue
        s = summarise(e.cells)
        rows.append({"Model": spreadsheet_safe(e.model), "Routing": policy_label(e.routing) if e.routing else e.routing,
                     **{t: s["per_task"].get(t) for t in TASK_CODES}, "All": s["accuracy"], "Problems": e.num_samples})
    frame = pd.DataFrame(rows, columns=["Model", "Routing"] + list(TASK_CODES) + ["All", "Problems"])
    for c in list(TASK_CODES) + ["All"]:
        frame[c] = pd.to_numeric(frame[c], errors="coerce").round(1)
    return frame.sort_values(["Model", "Routing"]).reset_index(drop=True)


def router_figure(service: Service, testset: str, model: str | None) -> str | None:
    from hypergvl.router.study import grouped_bars

    frame = router_frame(service, testset)
    if model:
        frame = frame[frame["Model"] == model]
    if frame.empty:
        return None
    model = frame["Model"].iloc[0]
    frame = frame[frame["Model"] == model]
    tasks = [t for t in TASK_CODES if frame[t].notna().any()]
    series = {r["Routing"]: [r[t] for t in tasks] + [r["All"]] for _, r in frame.iterrows()}
    path = _figures_dir(service) / f"router-{service.store.version()}-{abs(hash((testset, model)))}.png"
    grouped_bars(path, tasks + ["All"], series, f"Routing: {model.replace('$', '')[:60]} on {testset}")
    return str(path)


_HNN_CACHE: dict = {}
_HNN_LOCK = threading.Lock()


HNN_SECTIONS = ("effectiveness", "fairness", "efficiency", "robustness")


def hnn_report(service: Service) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The ``hypergvl.models.study report`` of the configured study folders: Markdown per section (its image links dropped:
    the figures go to the gallery) and (path, caption) figures. Built once per set of input files (their newest
    modification time), not on every page load."""
    from hypergvl.models.study.report import build

    dirs = [Path(d) for d in service.config.study_dirs if Path(d).is_dir()]
    if not dirs:
        return {"effectiveness": "No HNN study results are configured (`HYPERGVL_SPACE_STUDIES`)."}, []
    stamp = (tuple(map(str, dirs)), max((p.stat().st_mtime_ns for d in dirs for p in d.rglob("*.json")), default=0))
    with _HNN_LOCK:
        if _HNN_CACHE.get("stamp") != stamp:
            out = _figures_dir(service) / "hnn_report"
            written = build(dirs, out)
            text = {k: "\n".join(line for line in Path(written[k]).read_text().splitlines()
                                 if not line.startswith("!["))
                    for k in HNN_SECTIONS if k in written}
            figures = [(str(p), k.split("/", 1)[1]) for k, p in written.items() if k.startswith("figures/")]
            _HNN_CACHE.update(stamp=stamp, value=(text, figures))
        return _HNN_CACHE["value"]


def queue_frame(service: Service) -> pd.DataFrame:
    rows = [{"Status": r.status, "Model": r.model, "Revision": r.revision, "Test set": r.testset, "Track": r.track,
             "Submitted": time.strftime("%Y-%m-%d %H:%M", time.gmtime(r.created)), "Error": r.error or ""}
            for r in reversed(service.store.requests())]
    return pd.DataFrame(rows, columns=["Status", "Model", "Revision", "Test set", "Track", "Submitted", "Error"])


def download_zip(service: Service, name: str) -> str:
    """A zip of the public build (questions and answers): the only test set users may download. A hidden set's
    questions are never served (issue 43: the project's own solvers answered a questions-only download in 1.8 s)."""
    s = service.sets.get(name)
    if s.kind != PUBLIC:
        raise SubmissionError("a hidden set's questions are never served")
    target = service.config.data_dir / "downloads" / f"{s.name}.zip"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        root = Path(s.download)
        with atomic_path(target) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as z:
            for p in sorted(root.rglob("*")):
                if p.is_file():
                    z.write(p, f"{s.name}/{p.relative_to(root)}")
    return str(target)


# ================================================================================================ the paper's rows
def paper_frame(number: int) -> pd.DataFrame:
    """HyperGVL Table ``number`` as the paper prints it (:mod:`hypergvl.evaluators.paper`), rows in the paper's order, no rank."""
    from hypergvl.evaluators.paper import COLUMNS, load

    table = load().tables[number]
    first = ["Model", "Kind"] if number == 3 else ["Family", "Representation", "Kind"]
    rows = [{**dict(zip(first, ([r.name, r.kind] if number == 3 else [r.family, r.name, r.kind]))), **r.cells}
            for r in table.rows]
    return pd.DataFrame(rows, columns=first + list(COLUMNS))


def paper_tab() -> None:
    """The "Reported in the paper" tab: HyperGVL Tables 3 and 4 and its sec. 3.3 as printed, with their source; a
    tab of its own, never mixed into or ranked with the re-scored leaderboard."""
    from hypergvl.evaluators.paper import COLUMNS, load

    p = load()
    with gr.Tab("Reported in the paper", id="tab-paper"):
        gr.Markdown(f"These are the numbers printed in {p.citation()}, **not re-scored by this Space**: they are not "
                    "on the Leaderboard tab and are not ranked with it. Rows in the paper's order; "
                    f"{p.unit}, as printed.", elem_id="paper-source")
        for number in (3, 4):
            table = p.tables[number]
            frame = paper_frame(number)
            gr.Markdown(f"**Table {number}** (caption as extracted from the paper): \u201c{table.caption}\u201d  \n"
                        f"Setting: {table.setting}.  \nAverages: {table.recomputation['note']}")
            gr.Dataframe(value=frame.style.format(precision=2, subset=list(COLUMNS)), interactive=False,
                         datatype=["str"] * (len(frame.columns) - len(COLUMNS)) + ["number"] * len(COLUMNS),
                         elem_id=f"paper-t{number}", pinned_columns=1, max_height=700,
                         label=f"HyperGVL Table {number}, as printed in the paper")
        llm = p.llm_comparison
        pairs = ", ".join(f"{x['lvlm']} with {x['llm']}" for x in llm["pairs"])
        gr.Markdown(f"**Sec. {llm['section']}, LVLMs and their LLMs**: the paper compares {pairs} in {llm['figure']} "
                    f"(\u201c{llm['claim']}\u201d); numbers: {llm['numbers']}.", elem_id="paper-llm")


# ================================================================================================ browse
class Browser:
    """The public set's samples by task, scale, source and representation pair."""

    def __init__(self, service: Service):
        self.service = service
        self._rows = {}

    def rows(self, name: str):
        if name not in self._rows:
            from hypergvl.build_folder import load_rows

            s = self.service.sets.get(name)
            self._rows[name] = load_rows(s.build, s.build_sha256)
        return self._rows[name]

    def show(self, name: str, task: str, scale: str, source: str, text_rep: str, visual_rep: str, number: float):
        from hypergvl.builder import expand

        s = self.service.sets.get(name)
        if s.kind != PUBLIC:
            return None, "", "", "Only the public set can be browsed."
        rows = self.rows(name)
        meta = rows.select_columns(["task", "scale", "source"])
        keep = [i for i, (t, sc, so) in enumerate(zip(meta["task"], meta["scale"], meta["source"]))
                if t == task and (scale == ALL or sc == scale) and (source == ALL or so == source)]
        if not keep:
            return None, "", "", f"No {task} problem at scale {scale} from source {source}."
        k = min(max(int(number or 1), 1), len(keep)) - 1
        sub = rows.select([keep[k]])
        sample = expand(sub, [text_rep], [visual_rep])[0]
        row = sub[0]
        note = f"Problem {k + 1} of {len(keep)}: {row['id']} ({row['scale']}, {row['source']})"
        return sample["image"], sample["prompt"], row["answer"], note


# ================================================================================================ the app
def build_app(service: Service, *, oauth: bool = False) -> gr.Blocks:
    """The Blocks app over ``service`` (``oauth``: require a Hub login to submit, rate-limited per user)."""
    sets = current_sets(service)
    browser = Browser(service)
    threading.Thread(target=hnn_report, args=(service,), daemon=True).start()  # warm the HNN tab
    public, hidden = sets[PUBLIC].name, sets[HIDDEN].name

    def set_choices(kinds=(PUBLIC, HIDDEN)):
        return [(s.label, s.name) for s in sorted(service.sets.all(), key=lambda s: (s.kind != PUBLIC, not s.current,
                                                                                     -s.created))
                if s.kind in kinds]

    def lb(testset, types, track, source, scale, text_rep, visual_rep, columns):
        try:
            frame = leaderboard_frame(service, testset, model_types=types, track=track, source=source, scale=scale,
                                      text_rep=text_rep, visual_rep=visual_rep, columns=columns)
        except SubmissionError as exc:
            raise gr.Error(str(exc), print_exception=False) from None
        return gr.Dataframe(value=styled(frame), datatype=_datatypes(frame))

    def entry_choices(testset):
        if service.sets.get(testset).kind != PUBLIC:
            return []
        return [(e.model + (" (text only)" if e.text_only else ""), e.id) for e in service.entries()
                if e.testset == testset and e.track in ("vision", "text-only")]

    def reps(testset, entry_id):
        if service.sets.get(testset).kind != PUBLIC:
            return gr.Dropdown(choices=[], value=None), pd.DataFrame(), None, None, None
        entry = next((e for e in service.entries() if e.id == entry_id), None)
        if entry is None or entry.testset != testset:
            choices = entry_choices(testset)
            entry = next((e for e in service.entries() if choices and e.id == choices[0][1]), None)
            if entry is None:
                return gr.Dropdown(choices=[], value=None), pd.DataFrame(), None, None, None
        heat, fig3, fig4 = representation_figures(service, entry, testset)
        return (gr.Dropdown(choices=entry_choices(testset), value=entry.id), representation_frame(entry), heat, fig3,
                fig4)

    def routed(testset):
        if service.sets.get(testset).kind != PUBLIC:
            return pd.DataFrame(), None
        frame = router_frame(service, testset)
        return frame, router_figure(service, testset, None)

    def submitter_of(request: gr.Request | None, profile) -> str:
        # the peer address; X-Forwarded-For counts only from the configured proxies (launch sets uvicorn's list)
        host = getattr(getattr(request, "client", None), "host", None)
        name, _, reason = submitter_name(getattr(profile, "username", None), host, oauth=oauth,
                                         anonymous=service.config.anonymous_uploads)
        if name is None:
            raise SubmissionError(reason)
        return name

    def do_submit(file, model, link, revision, model_type, params, track, routing, testset, request: gr.Request,
                  profile=None):
        try:
            if file is None:
                raise SubmissionError("choose a samples.jsonl or a zip of an evaluate output folder")
            sub = Submission(model=model, testset=testset, track=track, routing=routing or None, model_type=model_type,
                             num_parameters=params or None, link=link, revision=revision)  # 0 = not given
            entry = service.submit_upload(getattr(file, "name", file), sub, submitter_of(request, profile))
        except SubmissionError as exc:
            return f"Rejected: {exc}"
        except Exception as exc:  # noqa: BLE001 - never a traceback page
            return f"Rejected: the upload could not be read ({type(exc).__name__})"
        finally:
            _forget_upload(file)
        s = entry.scores  # an upload is on the public set (service.submit_upload), whose scores are all shown
        return (f"Accepted: {entry.model} on {entry.testset} ({entry.track}, uploaded responses), re-scored by the "
                f"server over {entry.num_samples} samples: accuracy {_num(s['accuracy'])}, Avg.U {_num(s['avg_u'])}, "
                f"Avg.R {_num(s['avg_r'])}. Status FINISHED.")

    def do_request(model, link, revision, model_type, params, track, testset, request: gr.Request, profile=None):
        try:
            sub = Submission(model=model, testset=testset, track=track, model_type=model_type,
                             num_parameters=params or None, link=link, revision=revision)
            req = service.request(sub, submitter_of(request, profile))
        except SubmissionError as exc:
            return f"Rejected: {exc}", queue_frame(service)
        return f"Queued: {req.model} at {req.revision} on {req.testset} ({req.track}), PENDING.", queue_frame(service)

    if oauth:  # gradio injects the profile by annotation only
        def submit_fn(file, model, link, revision, model_type, params, track, routing, testset, request: gr.Request,
                      profile: gr.OAuthProfile | None):
            return do_submit(file, model, link, revision, model_type, params, track, routing, testset, request, profile)

        def request_fn(model, link, revision, model_type, params, track, testset, request: gr.Request,
                       profile: gr.OAuthProfile | None):
            return do_request(model, link, revision, model_type, params, track, testset, request, profile)
    else:
        def submit_fn(file, model, link, revision, model_type, params, track, routing, testset, request: gr.Request):
            return do_submit(file, model, link, revision, model_type, params, track, routing, testset, request)

        def request_fn(model, link, revision, model_type, params, track, testset, request: gr.Request):
            return do_request(model, link, revision, model_type, params, track, testset, request)

    window = int(service.config.upload_window_s)  # uploads kept at most this long (hypergvl.space.upload_limits)
    with gr.Blocks(title="HyperGVL leaderboard", delete_cache=(window, window)) as app:
        gr.Markdown("# HyperGVL leaderboard\nHypergraph understanding and reasoning of vision-language models "
                    "(12 tasks, 7 textual x 5 visual representations). Every score is computed by this server from "
                    "the raw responses; submitted scores are never used.")
        if oauth:
            gr.LoginButton()
        with gr.Tab("Leaderboard", id="tab-leaderboard"):
            with gr.Row():
                lb_set = gr.Radio(set_choices(), value=public, label="Test set", elem_id="lb-set")
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

        paper_tab()

        with gr.Tab("Representations", id="tab-reps"):
            rep_set = gr.Radio(set_choices((PUBLIC,)), value=public, label="Test set", elem_id="rep-set")
            rep_model = gr.Dropdown(entry_choices(public), label="Model", elem_id="rep-model")
            rep_table = gr.Dataframe(interactive=False, elem_id="rep-table", label="Accuracy by representation "
                                     "(HyperGVL Table 4 layout)")
            with gr.Row():
                rep_heat = gr.Image(label="Task x representation", show_label=False, type="filepath", elem_id="rep-heat")
                rep_fig3 = gr.Image(label="LVLM vs its text-only run (Fig. 3)", show_label=False, type="filepath",
                                    elem_id="rep-fig3")  # the figures carry their own titles, which a label covers
            rep_fig4 = gr.Image(label="Accuracy by scale, synthetic vs real (Fig. 4)", show_label=False, type="filepath",
                                elem_id="rep-fig4")
            outs = [rep_model, rep_table, rep_heat, rep_fig3, rep_fig4]
            rep_set.change(lambda s: reps(s, None), rep_set, outs, api_name=False)
            rep_model.change(reps, [rep_set, rep_model], outs, api_name=False)

        with gr.Tab("Router", id="tab-router"):
            rt_set = gr.Radio(set_choices((PUBLIC,)), value=public, label="Test set", elem_id="rt-set")
            rt_table = gr.Dataframe(interactive=False, elem_id="rt-table", label="Routed results: one pair per problem")
            rt_fig = gr.Image(label="Router vs Rand vs Top vs oracle (Fig. 5 style)", show_label=False, type="filepath",
                              elem_id="rt-fig")
            rt_set.change(routed, rt_set, [rt_table, rt_fig], api_name=False)

        with gr.Tab("HNN", id="tab-hnn"):
            gr.Markdown("DHG-Bench studies of the hypergraph neural networks, drawn from `hypergvl.models.study` result "
                        "folders (`hypergvl study report`): effectiveness, fairness (Table A8, Figure 5), "
                        "efficiency (Figure 1) and robustness (Figures 2-4).")
            hnn_md = {}
            for k in HNN_SECTIONS:
                with gr.Accordion(k.capitalize(), open=k == "effectiveness", elem_id=f"hnn-{k}"):
                    hnn_md[k] = gr.Markdown(elem_id=f"hnn-{k}-text")
            hnn_gallery = gr.Gallery(label="Figures 1-5 (click to enlarge)", elem_id="hnn-figures", columns=2,
                                     object_fit="contain", height=900)

        with gr.Tab("Browse", id="tab-browse"):
            with gr.Row():
                br_task = gr.Dropdown(list(task_codes()), value=TASK_CODES[0], label="Task", elem_id="br-task")
                br_scale = gr.Radio([ALL, *SCALES], value=ALL, label="Scale", elem_id="br-scale")
                br_source = gr.Radio([ALL, *SOURCES], value=ALL, label="Source", elem_id="br-source")
            with gr.Row():
                br_text = gr.Dropdown([(v, k) for k, v in text_labels().items()], value="n_set",
                                      label="Text representation", elem_id="br-text")
                br_visual = gr.Dropdown([(v, k) for k, v in visual_labels().items()], value="enc_hy",
                                        label="Visual representation", elem_id="br-visual")
                br_number = gr.Number(1, label="Problem", precision=0, minimum=1, elem_id="br-number")
            br_note = gr.Textbox(label="Problem", interactive=False, elem_id="br-note")
            with gr.Row():
                br_image = gr.Image(label="Image", type="pil", elem_id="br-image")
                with gr.Column():
                    br_prompt = gr.Textbox(label="Prompt", lines=12, interactive=False, elem_id="br-prompt")
                    br_answer = gr.Textbox(label="Reference answer", interactive=False, elem_id="br-answer")
            br_inputs = [br_task, br_scale, br_source, br_text, br_visual, br_number]
            for c in br_inputs:
                c.change(lambda *a: browser.show(public, *a), br_inputs, [br_image, br_prompt, br_answer, br_note],
                         api_name=False)

        with gr.Tab("Submit", id="tab-submit"):
            gr.Markdown(
                "**Public set: upload your run.** Evaluate with `hypergvl evaluate --dataset SET --model ... --out "
                f"RUN` on the public set (`hypergvl build --per-task {service.config.per_task} --seed "
                f"{service.config.public_seed}` rebuilds it exactly), then upload `samples.jsonl` or a zip of the "
                "`RUN` folder. The server re-scores every response against its own references and needs every "
                "sample of the chosen track exactly once; the row says *uploaded responses*.\n\n"
                "**Hidden set: request an evaluation** (below). Its scores come only from runs this server makes, "
                "and its questions are never served.")
            gr.Markdown("#### 1. Get the public set")
            with gr.Row():  # a download, drawn as such: a small secondary button, not a full-width heading
                gr.DownloadButton("⬇ Download: Public set (with answers)", size="sm", variant="secondary",
                                  value=lambda: download_zip(service, public), elem_id="dl-public", scale=0,
                                  min_width=320)
            with gr.Row():
                with gr.Column():
                    gr.Markdown("#### 2. Upload the run")
                    sub_file = gr.File(label="samples.jsonl or a zip of the evaluate folder",
                                       file_types=[".zip", ".jsonl"], elem_id="sub-file")
                    sub_set = gr.Radio([(sets[PUBLIC].label, public)], value=public, label="Test set",
                                       elem_id="sub-set")
                    sub_track = gr.Radio(["vision", "text-only", "routed"], value="vision", label="Track",
                                         elem_id="sub-track")
                    sub_routing = gr.Dropdown(["", *POLICIES], value="", label="Routing policy (routed track)",
                                              elem_id="sub-routing")
                with gr.Column():
                    gr.Markdown("#### 3. Describe the model (shown on the leaderboard)")
                    sub_model = gr.Textbox(label="Model name", max_length=120, elem_id="sub-model")
                    sub_link = gr.Textbox(label="Hub id or URL", max_length=300, elem_id="sub-link")
                    sub_revision = gr.Textbox("main", label="Revision", max_length=100, elem_id="sub-revision")
                    sub_type = gr.Radio(list(MODEL_TYPES), value="open", label="Type", elem_id="sub-type")
                    sub_params = gr.Number(None, label="Parameters (billions; 0 = not stated)", elem_id="sub-params")
            sub_btn = gr.Button("Submit", variant="primary", elem_id="sub-btn")
            sub_result = gr.Textbox(label="Result", interactive=False, elem_id="sub-result")
            sub_btn.click(submit_fn, [sub_file, sub_model, sub_link, sub_revision, sub_type, sub_params, sub_track,
                                      sub_routing, sub_set], sub_result, api_name="submit", concurrency_limit=1)

            gr.Markdown("**Request an evaluation** of a Hub model, on the public or the hidden set: the Space's "
                        "worker runs it (PENDING -> RUNNING -> FINISHED or FAILED) through its architecture as the installed "
                        "`transformers` ships it (never the checkpoint's own code), under a time and token budget "
                        "per request.")
            with gr.Row():
                req_model = gr.Textbox(label="Hub model id (org/name)", max_length=200, elem_id="req-model")
                req_revision = gr.Textbox("main", label="Revision", max_length=100, elem_id="req-revision")
                req_type = gr.Radio(list(MODEL_TYPES), value="open", label="Type", elem_id="req-type")
                req_params = gr.Number(None, label="Parameters (billions; 0 = not stated)", elem_id="req-params")
                req_track = gr.Radio(["vision", "text-only"], value="vision", label="Track", elem_id="req-track")
                req_set = gr.Radio([(sets[PUBLIC].label, public), (sets[HIDDEN].label, hidden)], value=public,
                                   label="Test set", elem_id="req-set")
            req_btn = gr.Button("Request evaluation", elem_id="req-btn")
            req_result = gr.Textbox(label="Request", interactive=False, elem_id="req-result")
            queue = gr.Dataframe(queue_frame(service), interactive=False, label="Queue", elem_id="queue",
                                 datatype=["str"] * 7)
            req_link = gr.Textbox(visible=False)
            req_btn.click(request_fn, [req_model, req_link, req_revision, req_type, req_params, req_track, req_set],
                          [req_result, queue], api_name="request", concurrency_limit=1)
            gr.Button("Refresh queue", size="sm", elem_id="queue-refresh").click(
                lambda: queue_frame(service), None, queue, api_name="queue")
            gr.Timer(15).tick(lambda: queue_frame(service), None, queue, api_name=False)

        def on_load():
            text, figures = hnn_report(service)
            heat = reps(public, None)
            return (*[text.get(k, "") for k in HNN_SECTIONS], figures, *heat, *routed(public),
                    *browser.show(public, TASK_CODES[0], ALL, ALL, "n_set", "enc_hy", 1))

        # a fresh page shows the table as stored now (computed once per store version, then cached)
        app.load(lambda: lb(public, list(MODEL_TYPES) + ["baseline"], "both", ALL, ALL, ALL, ALL, DEFAULT_COLUMNS),
                 None, lb_table, api_name=False, queue=False)
        app.load(on_load, None, [*hnn_md.values(), hnn_gallery, *outs, rt_table, rt_fig, br_image, br_prompt, br_answer,
                                 br_note], api_name=False)
    return app


def _num(v) -> str:
    return "-" if v is None else f"{v:.2f}"


def launch(service: Service, *, port: int | None = None, oauth: bool = False, prevent_thread_lock: bool = False,
           quiet: bool = False) -> tuple[gr.Blocks, str]:
    """Launch the app; returns the Blocks (``.close()`` stops it) and its local URL."""
    import os

    from starlette.middleware import Middleware

    app = build_app(service, oauth=oauth).queue(default_concurrency_limit=8, max_size=256)
    cfg = service.config
    data = cfg.data_dir
    limit = Middleware(UploadLimit, counters=service.counters, max_file_bytes=cfg.limits.max_bytes,
                       files=cfg.upload_files, total_bytes=cfg.upload_bytes, window_s=cfg.upload_window_s, oauth=oauth,
                       anonymous=cfg.anonymous_uploads)
    # uvicorn rewrites the client address from X-Forwarded-For for the peers in this list (by default loopback,
    # which let any local client choose its submitter identity): only the configured proxies, none by default
    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(service.config.trusted_proxies)
    # Only figures and the public download may be served; the hidden builds, the seeds, uploads and runs never.
    _, url, _ = app.launch(server_name="127.0.0.1" if port is not None else None, server_port=port,
                      max_file_size=service.config.limits.max_bytes, prevent_thread_lock=prevent_thread_lock,
                      quiet=quiet, show_error=False, allowed_paths=[str(data / "figures"), str(data / "downloads")],
                      app_kwargs={"middleware": [limit]},
                      blocked_paths=[str(data / d) for d in ("private", "builds", "uploads", "runs")]
                      + [str(data / "leaderboard.sqlite")])
    return app, url


def _forget_upload(file) -> None:
    """Delete a graded upload from Gradio's upload cache (the store keeps what it needs of it): what the upload route
    holds on disk is then only what is still being submitted."""
    path = getattr(file, "name", file)
    if not path:
        return
    path = Path(path).resolve()
    if path.is_relative_to(Path(gr.utils.get_upload_folder()).resolve()):
        path.unlink(missing_ok=True)


def start(service: Service) -> dict:
    """What the app does before it serves: build the test sets, seed the baselines (first start only), and re-grade
    the entries an older scorer version graded (:mod:`hypergvl.space.rescore`); returns the re-grade report."""
    from .rescore import rescore

    current_sets(service)
    if service.config.seed_baselines:
        from .seed import seed

        print("seeding the baselines (first start only) ...", flush=True)
        seed(service)
    report = rescore(service)
    if report["regraded"] or report["kept"]:
        print(f"scorer version {report['version']}: re-graded {len(report['regraded'])} entries, kept "
              f"{len(report['kept'])} as they were (listed by hypergvl space rescore)", flush=True)
    return report


def main(argv=None) -> None:
    """``hypergvl space serve``: the Space on this machine, configured by its environment variables
    (:meth:`~hypergvl.space.service.SpaceConfig.from_env`)."""
    import argparse
    import os

    argparse.ArgumentParser(prog="hypergvl space serve", description=__doc__.splitlines()[0]).parse_args(argv)
    service = make_service(SpaceConfig.from_env())
    start(service)
    launch(service, oauth=bool(os.environ.get("OAUTH_CLIENT_ID")))


if __name__ == "__main__":
    main()
