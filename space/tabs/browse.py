"""The Browse tab: the public set's problems by task, scale, source and representation pair (image, prompt,
reference answer)."""
from __future__ import annotations

import gradio as gr

from hypergvl.build_folder import load_rows
from hypergvl.render import visual_labels
from hypergvl.tasks import task_codes
from hypergvl.text import text_labels
from hypergvl.vqa import expand

from ..scoring import SCALES, SOURCES
from ..service import Service
from ..testsets import PUBLIC
from .base import ALL, OnLoad, Page, register_tab


class Browser:
    """The public set's samples by task, scale, source and representation pair."""

    def __init__(self, service: Service):
        self.service = service
        self._rows = {}

    def rows(self, name: str):
        if name not in self._rows:
            s = self.service.sets.get(name)
            self._rows[name] = load_rows(s.build, s.build_sha256)
        return self._rows[name]

    def show(self, name: str, task: str, scale: str, source: str, text_rep: str, visual_rep: str, number: float):
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
        try:
            sample = expand(sub, [text_rep], [visual_rep])[0]
        except ValueError as exc:  # a representation registered after this set was built: it has no column
            return None, "", "", str(exc)
        row = sub[0]
        note = f"Problem {k + 1} of {len(keep)}: {row['id']} ({row['scale']}, {row['source']})"
        return sample["image"], sample["prompt"], row["answer"], note


@register_tab("browse", title="Browse", order=60)
def build(page: Page) -> OnLoad:
    browser, public = Browser(page.service), page.public
    with gr.Row():
        br_task = gr.Dropdown(list(task_codes()), value=task_codes()[0], label="Task", elem_id="br-task")
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
    outputs = [br_image, br_prompt, br_answer, br_note]
    for c in br_inputs:
        c.change(lambda *a: browser.show(public, *a), br_inputs, outputs, api_name=False)
    return OnLoad(lambda: browser.show(public, task_codes()[0], ALL, ALL, "n_set", "enc_hy", 1), outputs)
