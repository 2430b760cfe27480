"""The Router tab: routed results, a row per (model, routing policy), and the HyperGVL Figure 5 style bars. Public
sets only."""
from __future__ import annotations

import hashlib
import json

import gradio as gr
import pandas as pd

from hypergvl.evaluators.routing import policy_label
from hypergvl.router.study import grouped_bars
from hypergvl.tasks import task_codes

from ..scoring import summarise
from ..service import Service, spreadsheet_safe
from ..testsets import PUBLIC
from .base import OnLoad, Page, figures_dir, public_only, register_tab


def router_frame(service: Service, testset: str) -> pd.DataFrame:
    """Routed results: a row per (model, policy) with accuracy per task and overall (HyperGVL Fig. 5)."""
    public_only(service, testset)
    rows, codes = [], list(task_codes())
    for e in service.entries():
        if e.testset != testset or not e.track.startswith("routed:"):
            continue
        s = summarise(e.cells, e.axes)
        rows.append({"Model": spreadsheet_safe(e.model), "Routing": policy_label(e.routing) if e.routing else e.routing,
                     **{t: s["per_task"].get(t) for t in codes}, "All": s["accuracy"], "Problems": e.num_samples})
    frame = pd.DataFrame(rows, columns=["Model", "Routing"] + codes + ["All", "Problems"])
    for c in codes + ["All"]:
        frame[c] = pd.to_numeric(frame[c], errors="coerce").round(1)
    return frame.sort_values(["Model", "Routing"]).reset_index(drop=True)


def router_figure(service: Service, testset: str, model: str | None) -> str | None:
    frame = router_frame(service, testset)
    if model:
        frame = frame[frame["Model"] == model]
    if frame.empty:
        return None
    model = frame["Model"].iloc[0]
    frame = frame[frame["Model"] == model]
    tasks = [t for t in task_codes() if t in frame and frame[t].notna().any()]
    series = {r["Routing"]: [r[t] for t in tasks] + [r["All"]] for _, r in frame.iterrows()}
    title = f"Routing: {model.replace('$', '')[:60]} on {testset}"
    # named by what it shows: drawn once (matplotlib costs a visitor seconds), whatever else the store holds
    digest = hashlib.sha256(json.dumps([tasks, series, title], default=str).encode()).hexdigest()[:24]
    path = figures_dir(service) / f"router-{digest}.png"
    if not path.exists():
        grouped_bars(path, tasks + ["All"], series, title)
    return str(path)


@register_tab("router", title="Router", order=40)
def build(page: Page) -> OnLoad:
    service, public = page.service, page.public

    def routed(testset):
        if service.sets.get(testset).kind != PUBLIC:
            return pd.DataFrame(), None
        # once per store version and set: a page load costs a lookup
        return service.view(("router-tab", testset),
                            lambda entries: (router_frame(service, testset), router_figure(service, testset, None)))

    rt_set = gr.Radio(page.set_choices((PUBLIC,)), value=public, label="Test set", elem_id="rt-set")
    rt_table = gr.Dataframe(interactive=False, elem_id="rt-table", label="Routed results: one pair per problem")
    rt_fig = gr.Image(label="Router vs Rand vs Top vs oracle (Fig. 5 style)", show_label=False, type="filepath",
                      elem_id="rt-fig")
    rt_set.change(routed, rt_set, [rt_table, rt_fig], api_name=False)
    return OnLoad(lambda: routed(public), [rt_table, rt_fig])
