"""Adding a text representation, a renderer, a task and a Space tab is one file with one registration each
(docs/extending.md): a toy of each, registered from a temporary module, is built into the dataset's rows; the text is
read back and solved by the symbolic baseline and shown under its label in the report; all three are offered by the
Space's filters under their labels, and the toy tab is on the page."""
from __future__ import annotations

import importlib.util
import io
import json
import sys

import gradio as gr
import numpy as np
from PIL import Image

from conftest import fresh

TOY = '''
import re

import gradio as gr
import numpy as np

from hypergvl import Hypergraph, answers
from hypergvl.render import register_renderer
from hypergvl.space.tabs.base import OnLoad, register_tab
from hypergvl.tasks import Task, register_task
from hypergvl.text import register_text_rep


def _parse_edge_list(text):
    n = len(re.findall(r"v(\\d+)", re.search(r"among vertices (.*?) and hyperedges", text).group(1)))
    body = text[text.index("The hyperedge list of"):]
    return Hypergraph(n, [[int(v) for v in re.findall(r"v(\\d+)", e)] for e in re.findall(r"\\{([^}]*)\\}", body)])


@register_text_rep("edge_list", label="Edge-List", marker=r"The hyperedge list of", parse=_parse_edge_list)
def edge_list(h, name="G"):
    verts = ", ".join(f"v{v}" for v in range(h.num_vertices))
    edges = ", ".join(f"e{i}" for i in range(h.num_hyperedges))
    return (f"{name} describes a hypergraph among vertices {verts} and hyperedges {edges}. The hyperedge list of "
            f"{name} is: " + "; ".join(f"e{i}={{" + ",".join(f"v{v}" for v in e) + "}" for i, e in
                                       enumerate(h.hyperedges)) + ".")


@register_renderer("dots", label="Dots")
def dots(panel, h):
    """The vertices as black discs on a row (a toy: it shows no hyperedge)."""
    x = np.linspace(60.0, panel.w - 60.0, h.num_vertices)
    panel.discs(np.stack([x, np.full(h.num_vertices, panel.h / 2)], axis=1), 12.0, "black")


@register_task
class MaxDegree(Task):
    code, level, name = "MXD", 2, "Maximum Degree"
    pattern = re.compile(r"Q: What is the largest vertex degree in hypergraph G")

    def question(self, params):
        return "Q: What is the largest vertex degree in hypergraph G? Give the answer after “Ans:”."

    def solve(self, inst):
        return str(max(inst.hypergraph.degrees))

    def parse(self, response):
        return answers.parse_int(response)

    def guess(self, rng, n, m, params):
        return str(rng.randint(0, m))


@register_tab("notes", title="Notes", order=80)
def notes(page):
    box = gr.Textbox(label="Notes", interactive=False, elem_id="notes")
    return OnLoad(lambda: f"{len(page.service.entries())} entries", [box])
'''


def test_a_toy_representation_and_task_are_built_solved_reported_and_filtered(space_service, tmp_path):
    from hypergvl.builder import BuildConfig, build
    from hypergvl.evaluators.harness import evaluate_model
    from hypergvl.render import RENDERERS, visual_labels
    from hypergvl.evaluators.report import report
    from hypergvl.space.app import build_app
    from hypergvl.space.tabs import TABS
    from hypergvl.tasks import TASKS
    from hypergvl.text import LOSSLESS, TEXT_REPS

    (tmp_path / "toy_extension.py").write_text(TOY)
    spec = importlib.util.spec_from_file_location("toy_extension", tmp_path / "toy_extension.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the four registrations
    try:
        out = tmp_path / "build"
        build(BuildConfig(out=out, per_task=2, tasks=("MXD", "VC"), workers=1), progress=False)
        shard = out / "data" / "mxd" / "test-00000-of-00001.parquet"
        import pandas as pd

        rows = pd.read_parquet(shard)
        assert "text_edge_list" in rows.columns and rows["text_edge_list"].str.contains("The hyperedge list of").all()
        assert visual_labels()["dots"] == "Dots"
        dots = [Image.open(io.BytesIO(cell["bytes"])) for cell in rows["image_dots"]]
        assert [im.size for im in dots] == [(1400, 1100)] * len(rows)
        assert all(np.asarray(im.convert("L")).min() == 0 for im in dots)  # the black discs were drawn

        run = tmp_path / "run"
        result = evaluate_model(str(out), "baseline:symbolic", run, visual_reps=("none",), progress=False)
        samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
        assert {s["task"] for s in samples} == {"MXD", "VC"} and len({s["text_rep"] for s in samples}) == 8
        # the toy representation is lossless: the symbolic baseline reads it back and solves both tasks exactly, as
        # on the paper's lossless ones; the vertex-vertex ones lose the degrees (HyperGVL Observation 11)
        right = {}
        for s in samples:
            right.setdefault((s["task"], s["text_rep"]), []).append(s["correct"])
        assert all(all(right[t, r]) for t in ("MXD", "VC") for r in ("edge_list", *LOSSLESS))
        assert not all(all(right["MXD", r]) for r in ("lo_inc", "n_pair", "adj_mat"))
        assert result["scores"]["by_text_rep"]["edge_list"]["accuracy"] == 100.0

        text = report([run / "results.json"])
        assert "| MXD |" in text and "| Edge-List |" in text

        app_service = fresh(space_service, tmp_path)
        app = build_app(app_service)
        boxes = {b.elem_id: b for b in app.blocks.values() if isinstance(b, gr.Dropdown)}
        assert ("Edge-List", "edge_list") in boxes["lb-text"].choices
        assert ("Edge-List", "edge_list") in boxes["br-text"].choices
        assert ("MXD", "MXD") in boxes["br-task"].choices
        assert ("Dots", "dots") in boxes["lb-visual"].choices and ("Dots", "dots") in boxes["br-visual"].choices
        tabs = [b.id for b in app.blocks.values() if isinstance(b, gr.Tab)]
        assert tabs[-2:] == ["tab-submit", "tab-notes"]  # in its order, after the seven
        notes = next(b for b in app.blocks.values() if b.elem_id == "notes")
        (load,) = [fn for fn in app.fns.values() if notes in fn.outputs]
        assert load.fn() == f"{len(app_service.entries())} entries"
    finally:
        TABS.unregister("notes")
        RENDERERS.unregister("dots")
        TEXT_REPS.unregister("edge_list")
        TASKS.unregister("MXD")
        sys.modules.pop("toy_extension", None)
    assert "edge_list" not in TEXT_REPS and "MXD" not in TASKS and "dots" not in RENDERERS and "notes" not in TABS
