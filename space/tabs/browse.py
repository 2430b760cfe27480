"""The Browse tab: the public set's problems by task, scale, source and representation pair (image, prompt,
reference answer)."""
from __future__ import annotations

import hashlib
import threading

import gradio as gr

from hypergvl.atomic import atomic_path
from hypergvl.build_folder import load_rows
from hypergvl.render import visual_labels
from hypergvl.tasks import task_codes
from hypergvl.text import text_labels
from hypergvl.vqa import expand

from ..scoring import SCALES, SOURCES
from ..service import Service
from ..testsets import PUBLIC
from .base import ALL, OnLoad, Page, figures_dir, register_tab

MAX_SHOWN = 1024  # (problem, representation pair) views kept in memory; their images stay on disk


class Browser:
    """The public set's samples by task, scale, source and representation pair.

    A public build never changes (its folder is named by its content), so each (problem, representation pair) is
    rendered once: its image is written as a PNG under ``<data>/figures/browse/`` and its (image path, prompt,
    answer) kept, so a page load costs a lookup, not a render and an image encoding per visitor."""

    def __init__(self, service: Service):
        self.service = service
        self._rows = {}
        self._meta = {}
        self._shown: dict[tuple, tuple[str | None, str, str]] = {}
        self._lock = threading.Lock()

    def rows(self, name: str):
        if name not in self._rows:
            s = self.service.sets.get(name)
            self._rows[name] = load_rows(s.build, s.build_sha256)
        return self._rows[name]

    def meta(self, name: str) -> list[tuple[str, str, str, str]]:
        """(task, scale, source, id) of every row of the set, read once."""
        if name not in self._meta:
            m = self.rows(name).select_columns(["task", "scale", "source", "id"])
            self._meta[name] = list(zip(m["task"], m["scale"], m["source"], m["id"]))
        return self._meta[name]

    def sample(self, name: str, index: int, text_rep: str, visual_rep: str) -> tuple[str | None, str, str]:
        """(PNG path of the image, prompt, reference answer) of row ``index`` in this representation pair; rendered
        and written once. Raises ValueError for a representation the set was built without."""
        key = (name, index, text_rep, visual_rep)
        with self._lock:
            if key in self._shown:
                return self._shown[key]
        s = self.service.sets.get(name)
        sub = self.rows(name).select([index])
        sample = expand(sub, [text_rep], [visual_rep])[0]
        image = sample["image"]
        path = None
        if image is not None:
            digest = hashlib.sha256(repr((s.build_sha256, sub[0]["id"], visual_rep)).encode()).hexdigest()[:24]
            target = figures_dir(self.service) / "browse" / f"{digest}.png"
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                with atomic_path(target) as tmp:
                    image.save(tmp, format="PNG")
            path = str(target)
        value = (path, sample["prompt"], sub[0]["answer"])
        with self._lock:
            while len(self._shown) >= MAX_SHOWN:
                self._shown.pop(next(iter(self._shown)))
            self._shown[key] = value
        return value

    def show(self, name: str, task: str, scale: str, source: str, text_rep: str, visual_rep: str, number: float):
        s = self.service.sets.get(name)
        if s.kind != PUBLIC:
            return None, "", "", "Only the public set can be browsed."
        meta = self.meta(name)
        keep = [i for i, (t, sc, so, _) in enumerate(meta)
                if t == task and (scale == ALL or sc == scale) and (source == ALL or so == source)]
        if not keep:
            return None, "", "", f"No {task} problem at scale {scale} from source {source}."
        k = min(max(int(number or 1), 1), len(keep)) - 1
        try:
            image, prompt, answer = self.sample(name, keep[k], text_rep, visual_rep)
        except ValueError as exc:  # a representation registered after this set was built: it has no column
            return None, "", "", str(exc)
        _, row_scale, row_source, row_id = meta[keep[k]]
        note = f"Problem {k + 1} of {len(keep)}: {row_id} ({row_scale}, {row_source})"
        return image, prompt, answer, note


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
        br_image = gr.Image(label="Image", type="filepath", elem_id="br-image")
        with gr.Column():
            br_prompt = gr.Textbox(label="Prompt", lines=12, interactive=False, elem_id="br-prompt")
            br_answer = gr.Textbox(label="Reference answer", interactive=False, elem_id="br-answer")
    br_inputs = [br_task, br_scale, br_source, br_text, br_visual, br_number]
    outputs = [br_image, br_prompt, br_answer, br_note]
    for c in br_inputs:
        c.change(lambda *a: browser.show(public, *a), br_inputs, outputs, api_name=False)
    return OnLoad(lambda: browser.show(public, task_codes()[0], ALL, ALL, "n_set", "enc_hy", 1), outputs)
