"""The Representations tab: one entry's accuracy by representation (HyperGVL Table 4 layout), its task x
representation heatmap, and Figures 3 (LVLM vs its text-only run) and 4 (accuracy by scale). Public sets only."""
from __future__ import annotations

import hashlib
from pathlib import Path

import gradio as gr
import pandas as pd

from hypergvl.evaluators.report import heatmap, lvlm_vs_llm, scale_curves
from hypergvl.render import visual_labels
from hypergvl.text import text_labels

from ..scoring import groupings, summarise
from ..service import Service
from ..testsets import PUBLIC
from .base import OnLoad, Page, figures_dir, public_only, register_tab, score_cells, score_columns


def representation_frame(entry) -> pd.DataFrame:
    """Table 4 layout for one entry: a row per registered representation it was scored on (textual, then visual),
    a column per registered task."""
    rows = []
    for axis, labels, key in (("text_rep", text_labels(), "text_rep"), ("visual_rep", visual_labels(), "visual_rep")):
        for rep, label in labels.items():
            s = summarise(entry.cells, entry.axes, **{key: rep})
            if s is None:
                continue
            rows.append({"Representation": label, **score_cells(s)})
    numbers = score_columns()
    frame = pd.DataFrame(rows, columns=["Representation"] + numbers)
    for c in numbers:
        frame[c] = pd.to_numeric(frame[c], errors="coerce").round(1)
    return frame


def _result_dict(entry) -> dict:
    """An entry as ``hypergvl.evaluators.report`` expects a results.json (matplotlib-safe label)."""
    name = entry.model.replace("$", r"\$")[:60]
    return {"model": {"name": name}, "scores": {**entry.scores, **groupings(entry.cells, entry.axes)}, "text_only": entry.text_only}


def representation_figures(service: Service, entry, testset: str) -> tuple[str | None, str | None, str | None]:
    """(heatmap, Fig. 3, Fig. 4) PNG paths for an entry and its test set (None where the results do not allow)."""
    public_only(service, testset)
    public_only(service, entry.testset)

    def named(kind: str, shown) -> Path:
        """A figure's file, named by the entries it shows (and their scorer versions): drawn once, whatever else
        the store holds (matplotlib costs a visitor seconds)."""
        digest = hashlib.sha256(repr([(e.id, e.scorer_version) for e in shown]).encode()).hexdigest()[:24]
        return figures_dir(service) / f"{kind}-{digest}.png"

    def compute(entries):
        heat = named("heatmap", [entry])
        if not heat.exists():
            heatmap(_result_dict(entry), heat)
        mine = [e for e in entries if e.testset == testset and e.model == entry.model and e.track in ("vision", "text-only")]
        fig3 = named("fig3", mine)
        fig3_ok = fig3.exists() or lvlm_vs_llm([_result_dict(e) for e in mine], fig3)
        vis = [e for e in entries if e.testset == testset and e.track == "vision"][:8]
        fig4 = named("fig4", vis)
        fig4_ok = fig4.exists() or scale_curves([_result_dict(e) for e in vis], fig4)
        return str(heat), str(fig3) if fig3_ok else None, str(fig4) if fig4_ok else None

    return service.view(("repfig", entry.id, testset), compute)


@register_tab("reps", title="Representations", order=30)
def build(page: Page) -> OnLoad:
    service, public = page.service, page.public

    def entry_choices(testset):
        if service.sets.get(testset).kind != PUBLIC:
            return []
        return [(e.model + (" (text only)" if e.text_only else ""), e.id) for e in service.entries()
                if e.testset == testset and e.track in ("vision", "text-only")]

    def reps(testset, entry_id):
        if service.sets.get(testset).kind != PUBLIC:
            return gr.Dropdown(choices=[], value=None), pd.DataFrame(), None, None, None

        def compute(entries):  # once per store version, set and model: a page load costs a lookup
            entry = next((e for e in entries if e.id == entry_id), None)
            if entry is None or entry.testset != testset:
                choices = entry_choices(testset)
                entry = next((e for e in entries if choices and e.id == choices[0][1]), None)
                if entry is None:
                    return gr.Dropdown(choices=[], value=None), pd.DataFrame(), None, None, None
            heat, fig3, fig4 = representation_figures(service, entry, testset)
            return (gr.Dropdown(choices=entry_choices(testset), value=entry.id), representation_frame(entry), heat,
                    fig3, fig4)

        return service.view(("reps-tab", testset, entry_id), compute)

    rep_set = gr.Radio(page.set_choices((PUBLIC,)), value=public, label="Test set", elem_id="rep-set")
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
    return OnLoad(lambda: reps(public, None), outs)
