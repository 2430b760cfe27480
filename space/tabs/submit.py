"""The Submit tab: the public set's download, uploads re-scored by the server, evaluation requests for the worker,
and the queue."""
from __future__ import annotations

import time
import zipfile
from pathlib import Path

import gradio as gr
import pandas as pd

from hypergvl.atomic import atomic_path

from ..scoring import SubmissionError, policies
from ..service import MODEL_TYPES, Service, Submission, redact_paths
from ..testsets import HIDDEN, PUBLIC
from ..upload_limits import submitter_name
from .base import Page, register_tab
from .leaderboard import scored_from


def queue_frame(service: Service) -> pd.DataFrame:
    rows = [{"Status": r.status, "Model": r.model, "Revision": r.revision, "Test set": r.testset, "Track": r.track,
             "Submitted": time.strftime("%Y-%m-%d %H:%M", time.gmtime(r.created)),
             "Error": redact_paths(r.error or "")}
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


def _num(v) -> str:
    return "-" if v is None else f"{v:.2f}"


def _forget_upload(file) -> None:
    """Delete a graded upload from Gradio's upload cache (the store keeps what it needs of it): what the upload route
    holds on disk is then only what is still being submitted."""
    path = getattr(file, "name", file)
    if not path:
        return
    path = Path(path).resolve()
    if path.is_relative_to(Path(gr.utils.get_upload_folder()).resolve()):
        path.unlink(missing_ok=True)


@register_tab("submit", title="Submit", order=70)
def build(page: Page) -> None:
    service, sets, oauth, public, hidden = page.service, page.sets, page.oauth, page.public, page.hidden

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
            return f"Rejected: {redact_paths(str(exc))}"
        except Exception as exc:  # noqa: BLE001 - never a traceback page
            return f"Rejected: the upload could not be read ({type(exc).__name__})"
        finally:
            _forget_upload(file)
        s = entry.scores  # an upload is on the public set (service.submit_upload), whose scores are all shown
        return (f"Accepted: {entry.model} on {entry.testset} ({entry.track}, {scored_from(entry)}), re-scored by the "
                f"server over {entry.num_samples} samples: accuracy {_num(s['accuracy'])}, Avg.U {_num(s['avg_u'])}, "
                f"Avg.R {_num(s['avg_r'])}" + (f", Avg.Ext {_num(s['avg_ext'])}" if s.get("avg_ext") is not None else "")
                + ". Status FINISHED.")

    def do_request(model, link, revision, model_type, params, track, testset, request: gr.Request, profile=None):
        try:
            sub = Submission(model=model, testset=testset, track=track, model_type=model_type,
                             num_parameters=params or None, link=link, revision=revision)
            req = service.request(sub, submitter_of(request, profile))
        except SubmissionError as exc:
            return f"Rejected: {redact_paths(str(exc))}", queue_frame(service)
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

    gr.Markdown(
        "**Public set: upload your run.** Evaluate with `hypergvl evaluate --dataset SET --model ... --out "
        f"RUN` on the public set (`hypergvl build --per-task {service.config.per_task} --seed "
        f"{service.config.public_seed}` rebuilds it exactly), then upload `samples.jsonl` or a zip of the "
        "`RUN` folder. The server re-scores every response against its own references and needs every "
        "sample of the chosen track exactly once; the row says *uploaded responses*.\n\n"
        "**Hidden set: request an evaluation** (below). Its scores come only from runs this server makes, "
        "and its questions are never served.")
    gr.Markdown("#### 1. Get the public set")
    # a download, drawn as such: a small secondary button, not a full-width heading; its file is zipped and handed to
    # Gradio once, at start (as a function of the page load, Gradio read and hashed its 9 MB on every visit)
    with gr.Row():
        gr.DownloadButton("⬇ Download: Public set (with answers)", size="sm", variant="secondary",
                          value=download_zip(service, public), elem_id="dl-public", scale=0,
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
            sub_routing = gr.Dropdown(["", *policies()], value="", label="Routing policy (routed track)",
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
