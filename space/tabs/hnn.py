"""The HNN tab: the DHG-Bench tables and figures of the configured ``hypergvl.models.study`` result folders."""
from __future__ import annotations

import threading
from pathlib import Path

import gradio as gr

from ..service import Service
from .base import OnLoad, Page, figures_dir, register_tab

_HNN_CACHE: dict = {}
_HNN_LOCK = threading.Lock()


HNN_SECTIONS = ("effectiveness", "fairness", "efficiency", "robustness")


def hnn_report(service: Service) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The ``hypergvl.models.study report`` of the configured study folders: Markdown per section (its image links dropped:
    the figures go to the gallery) and (path, caption) figures. Built once per set of input files (their newest
    modification time), not on every page load."""
    from hypergvl.models.study.report import build  # torch and the HNN library (2-3 s): not at the Space's start

    dirs = [Path(d) for d in service.config.study_dirs if Path(d).is_dir()]
    if not dirs:
        return {"effectiveness": "No HNN study results are configured (`HYPERGVL_SPACE_STUDIES`)."}, []
    stamp = (tuple(map(str, dirs)), max((p.stat().st_mtime_ns for d in dirs for p in d.rglob("*.json")), default=0))
    with _HNN_LOCK:
        if _HNN_CACHE.get("stamp") != stamp:
            out = figures_dir(service) / "hnn_report"
            written = build(dirs, out)
            text = {k: "\n".join(line for line in Path(written[k]).read_text().splitlines()
                                 if not line.startswith("!["))
                    for k in HNN_SECTIONS if k in written}
            figures = [(str(p), k.split("/", 1)[1]) for k, p in written.items() if k.startswith("figures/")]
            _HNN_CACHE.update(stamp=stamp, value=(text, figures))
        return _HNN_CACHE["value"]


@register_tab("hnn", title="HNN", order=50)
def build(page: Page) -> OnLoad:
    gr.Markdown("DHG-Bench studies of the hypergraph neural networks, drawn from `hypergvl.models.study` result "
                "folders (`hypergvl study report`): effectiveness, fairness (Table A8, Figure 5), "
                "efficiency (Figure 1) and robustness (Figures 2-4).")
    hnn_md = {}
    for k in HNN_SECTIONS:
        with gr.Accordion(k.capitalize(), open=k == "effectiveness", elem_id=f"hnn-{k}"):
            hnn_md[k] = gr.Markdown(elem_id=f"hnn-{k}-text")
    hnn_gallery = gr.Gallery(label="Figures 1-5 (click to enlarge)", elem_id="hnn-figures", columns=2,
                             object_fit="contain", height=900)

    def on_load():
        text, figures = hnn_report(page.service)
        return (*[text.get(k, "") for k in HNN_SECTIONS], figures)

    return OnLoad(on_load, [*hnn_md.values(), hnn_gallery])
