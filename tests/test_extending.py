"""One place per addition, proven (docs/extending.md): for each seam, a toy is registered from a module *outside* the
package (a temporary file on ``sys.path``) in a fresh process, and the flows it touches run end to end there.

The most important seams first: a task and a text representation (build, evaluate with the baselines, score, report,
the Space app built and its leaderboard served beside an entry scored before they existed, the router's PRM, a
trained router and the test bed); then a renderer, a Space tab, a model adapter, a routing policy, a command (through
the ``hypergvl.commands`` entry-point group an installed distribution declares), a real source and the HNN seams
(a model trained one epoch, a dataset, a task, a perturbation) and a metric (``evaluate.load``-able). Each toy
module names its registry by the import docs/extending.md gives; nothing in a child process counts the registries.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent


def run_toy(tmp_path: Path, toys: dict[str, str], script: str, timeout: float = 900,
            dist: dict[str, str] | None = None) -> str:
    """Write the toy modules (name -> source) to a folder of their own, put it on the path of a fresh interpreter
    and run ``script`` there (in ``tmp_path``); ``dist``: entry-point groups (group -> ``name = module`` lines) of
    an installed distribution the folder also holds (a ``dist-info`` as ``pip install`` writes one). Returns the
    child's output; a failure shows its tail."""
    folder = tmp_path / "toys"
    folder.mkdir(exist_ok=True)
    for name, source in toys.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
    if dist:
        info = folder / "hypergvl_toy-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hypergvl-toy\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text("".join(f"[{g}]\n{lines}\n\n" for g, lines in dist.items()))
    (tmp_path / "child.py").write_text(textwrap.dedent(script))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(TESTS)]), "OMP_NUM_THREADS": "1",
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    run = subprocess.run([sys.executable, str(tmp_path / "child.py")], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=timeout)
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
    assert "CHILD OK" in run.stdout, run.stdout[-3000:]
    return run.stdout + run.stderr


# =============================================================================================== task and text rep
TASK_AND_REP = '''
"""A toy task (the largest vertex degree) and a toy lossless text representation (an edge list), as
docs/extending.md says: a Task subclass with @register_task, one @register_text_rep on the encoder."""
import re

from hypergvl import Hypergraph, answers
from hypergvl.tasks import Task, register_task
from hypergvl.tasks.kinds import _Count
from hypergvl.text import register_text_rep


def _parse_edge_list(text):
    head = re.search(r"among vertices (.*?) and hyperedges", text).group(1)
    body = text[text.index("The hyperedge list of"):]
    return Hypergraph(len(re.findall(r"v(\\d+)", head)),
                      [[int(v) for v in re.findall(r"v(\\d+)", e)] for e in re.findall(r"\\{([^}]*)\\}", body)])


@register_text_rep("edge_list", label="Edge-List", marker=r"The hyperedge list of", parse=_parse_edge_list,
                   lossless=True)
def edge_list(h, name="G"):
    verts = ", ".join(f"v{v}" for v in range(h.num_vertices))
    edges = ", ".join(f"e{i}" for i in range(h.num_hyperedges))
    return (f"{name} describes a hypergraph among vertices {verts} and hyperedges {edges}. The hyperedge list of "
            f"{name} is: " + "; ".join(f"e{i}={{" + ",".join(f"v{v}" for v in e) + "}"
                                       for i, e in enumerate(h.hyperedges)) + ".")


@register_task
class MaxDegree(_Count):
    code, level, name = "MXD", 2, "Maximum Degree"
    pattern = re.compile(r"Q: What is the largest vertex degree in hypergraph G")

    def question(self, params):
        return "Q: What is the largest vertex degree in hypergraph G? List the answer after “Ans:”."

    def solve(self, inst):
        return str(max(inst.hypergraph.degrees))
'''


def test_a_task_and_a_text_representation_flow_through_build_evaluate_score_report_space_and_router(tmp_path):
    run_toy(tmp_path, {"toy_task_rep": TASK_AND_REP}, '''
    import json
    from pathlib import Path

    import toy_task_rep  # noqa: F401 - the registrations
    from hypergvl.builder import BuildConfig, build
    from hypergvl.cli import main as cli
    from hypergvl.evaluators.baselines import load_profile
    from hypergvl.evaluators.harness import evaluate_model, score_run
    from hypergvl.evaluators.report import report
    from hypergvl.paper import PAPER_COMBINATIONS, PAPER_TASKS
    from hypergvl.router.prm import PRMConfig, build_prm, combination_name, load_prm
    from hypergvl.tasks import task_codes
    from hypergvl.text import TEXT_REPS, lossless
    from hypergvl.vqa import combinations

    here = Path.cwd()
    assert task_codes()[-1] == "MXD" and "edge_list" in TEXT_REPS and "edge_list" in lossless()
    assert ("edge_list", "enc_hy") in combinations() and len(PAPER_COMBINATIONS) < len(combinations())
    assert BuildConfig(out=here / "x").tasks == PAPER_TASKS  # the build default stays the paper's benchmark

    # build: the new task's rows carry the new representation's column
    out = here / "build"
    build(BuildConfig(out=out, per_task=2, tasks=("MXD", "VC"), workers=1), progress=False)
    import pandas as pd

    rows = pd.read_parquet(out / "data" / "mxd" / "test-00000-of-00001.parquet")
    assert rows["text_edge_list"].str.contains("The hyperedge list of").all() and set(rows["task"]) == {"MXD"}

    # evaluate with the baselines: the symbolic one reads the new text back and solves the new task exactly
    sym = evaluate_model(str(out), "baseline:symbolic", here / "sym", visual_reps=("enc_hy",), progress=False)
    s = sym["scores"]
    assert all(s["by_text_rep"][r]["per_task"]["MXD"] == 100.0 for r in lossless())  # edge_list among them
    assert s["by_text_rep"]["edge_list"]["accuracy"] == 100.0 and s["by_text_rep"]["n_pair"]["per_task"]["MXD"] < 100
    assert s["avg_ext"] == s["per_task"]["MXD"] and s["averaged_over"]["avg_ext"] == ["MXD"]
    assert s["averaged_over"]["avg_u"] == ["VC"] and s["avg_u"] == s["per_task"]["VC"]  # Avg.U keeps its tasks
    rnd = evaluate_model(str(out), "baseline:random", here / "rnd", visual_reps=("none",), progress=False)
    assert rnd["scores"]["per_task_count"]["MXD"] == 2 * len(TEXT_REPS)

    # score: a run graded again from its raw responses gives the same numbers
    again = score_run(here / "sym", str(out), here / "sym-scored")
    assert again["scores"]["per_task"] == s["per_task"] and again["scores"]["avg_ext"] == s["avg_ext"]

    # report: the new task has its own column and average, the new representation its own row
    text = report([here / "sym", here / "rnd"])
    assert "| SHC | HHM | MXD | Avg.U | Avg.R | Avg.Ext |" in text and "| Edge-List |" in text
    assert "Avg.Ext: over the tasks beyond the paper's (MXD)" in text
    assert cli(["report", str(here / "sym"), "--paper"]) == 0  # the paper's layout beside ours: its twelve only

    # the router's PRM over exhaustive runs: the label set is every registered pair
    runs = []
    for seed in (0, 1):
        runs.append(here / f"ex{seed}")
        evaluate_model(str(out), f"baseline:profile:dataset={out}:seed={seed}", runs[-1], progress=False)
    build_prm(PRMConfig(tuple(map(str, runs)), str(here / "prm")), progress=False)
    prm = load_prm(here / "prm")
    assert list(prm.labels) == [combination_name(*c) for c in combinations()] and "edge_list+enc_hy" in prm.labels

    # the test bed: the shipped (paper) profile runs on the new task and representation, and routes without them
    assert cli(["router", "testbed", "--summary"]) == 0
    prof = load_profile()
    assert "edge_list+enc_hy" in prof.not_routed() and 0.0 < prof.p("MXD", "small", "edge_list", "enc_hy") < 1.0
    routed = evaluate_model(str(out), f"baseline:profile:dataset={out}", here / "routed", routing="profile",
                            progress=False)
    assert routed["num_samples"] == 4

    # a router trained before the representation existed: it is not routed, with a clear message, never an error
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from hypergvl.router.model import WiseHyGR, resolve_backbone
    from hypergvl.router.policies import RouterPolicy
    from hypergvl.evaluators.routing import not_routed_note

    paper = [combination_name(*c) for c in PAPER_COMBINATIONS]
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                                     intermediate_size=64, num_labels=len(paper),
                                                     id2label=dict(enumerate(paper))))
    old = WiseHyGR(model, AutoTokenizer.from_pretrained(resolve_backbone("minilm")[0]), 64)
    old.save_pretrained(here / "old-router")
    assert old.not_routed() == [combination_name(*c) for c in combinations() if c not in PAPER_COMBINATIONS]
    note = not_routed_note(RouterPolicy(str(here / "old-router"), WiseHyGR.from_pretrained(here / "old-router")))
    assert note.startswith("routing router:") and "not routed: edge_list+enc_hy" in note
    routed = evaluate_model(str(out), "baseline:symbolic", here / "by-router", routing=f"router:{here / 'old-router'}",
                            progress=False)
    logged = [json.loads(l) for l in (here / "by-router" / "samples.jsonl").read_text().splitlines()]
    assert len(logged) == 4 and all((r["text_rep"], r["visual_rep"]) in PAPER_COMBINATIONS for r in logged)

    # the Space: sets over the new task, the leaderboard served with its column beside an entry scored before it
    import numpy as np
    from gradio_client import Client

    from hypergvl.space.app import build_app, launch
    from hypergvl.space.config import SpaceConfig
    from hypergvl.space.seed import seed
    from hypergvl.space.service import Service
    from hypergvl.space.store import Entry, encode_cells
    from hypergvl.space.testsets import TestSets
    from hypergvl.space.tabs.leaderboard import ALL_PUBLIC

    cfg = SpaceConfig(data_dir=here / "space", per_task=1, rate_limit=10_000, upload_files=10_000,
                      upload_bytes=2 ** 40, study_dirs=())
    service = Service(cfg, sets=TestSets(cfg.data_dir, per_task=1, tasks=("VC", "MXD")))
    seed(service)
    public = service.sets.current("public").name
    old_doc = Entry(model="org/old-model", revision="v1", testset=public, track="vision", model_type="open",
                    num_parameters=1.0, link="", scores={"accuracy": 50.0}, cells=np.zeros((0, 8)), num_samples=10,
                    dataset_sha256="old", origin="upload").to_doc()
    old_doc.pop("axes")  # stored before entries recorded their axes: its cells index the paper's tasks
    old_doc["cells"] = encode_cells(np.array([[0, 5, 0, 0, 0, 10, 5, 0]]))  # VC, n_set + enc_hy: 5 of 10
    service.store.add_entry(Entry.from_doc(old_doc))
    app = build_app(service)
    boxes = {b.elem_id: b for b in app.blocks.values() if getattr(b, "elem_id", None)}
    assert ("Edge-List", "edge_list") in boxes["lb-text"].choices and ("MXD", "MXD") in boxes["br-task"].choices
    assert ("MXD", "MXD") in boxes["lb-cols"].choices and ("Avg.Ext", "Avg.Ext") in boxes["lb-cols"].choices
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    demo, url = launch(service, port=port, prevent_thread_lock=True, quiet=True)
    try:
        client = Client(url, verbose=False)
        columns = ["VC", "MXD", "Avg.U", "Avg.R", "Avg.Ext", "All", "Tasks"]
        for testset in (public, ALL_PUBLIC):
            got = client.predict(testset, ["open", "closed", "baseline"], "both", "all", "all", "all", "all",
                                 columns, api_name="/leaderboard")["value"]
            table = {row[0]: dict(zip(got["headers"], row)) for row in got["data"]}
            sym_row = table["baseline:symbolic"]
            assert sym_row["VC"] == 100.0 and 0 < sym_row["MXD"] < 100 and sym_row["Avg.Ext"] == sym_row["MXD"]
            assert sym_row["Avg.U"] == 100.0 and sym_row["Tasks"] == "VC, MXD"
            old_row = table["org/old-model"]
            assert old_row["VC"] == 50.0 and old_row["Avg.U"] == 50.0 and old_row["All"] == 50.0
            assert old_row["MXD"] is None and old_row["Avg.Ext"] is None and old_row["Tasks"] == "VC"  # blank
    finally:
        demo.close()
    print("CHILD OK")
    ''', timeout=1800)


# =============================================================================================== renderer
RENDERER = '''
"""A toy visual representation: the vertices as black discs on a row (it shows no hyperedge)."""
import numpy as np

from hypergvl.render import register_renderer


@register_renderer("dots", label="Dots")
def dots(panel, h):
    x = np.linspace(60.0, panel.w - 60.0, h.num_vertices)
    panel.discs(np.stack([x, np.full(h.num_vertices, panel.h / 2)], axis=1), 12.0, "black")
'''


def test_a_renderer_is_drawn_into_every_build_evaluated_reported_and_generated_for_lmms_eval(tmp_path):
    run_toy(tmp_path, {"toy_renderer": RENDERER}, '''
    import io
    from pathlib import Path

    import numpy as np
    import pandas as pd
    from PIL import Image

    import toy_renderer  # noqa: F401
    from hypergvl.builder import BuildConfig, build
    from hypergvl.evaluators.harness import evaluate_model
    from hypergvl.evaluators.lmms_eval import task_files
    from hypergvl.evaluators.report import report
    from hypergvl.render import visual_labels

    here = Path.cwd()
    assert visual_labels()["dots"] == "Dots"
    build(BuildConfig(out=here / "b", per_task=1, tasks=("VC", "ISM"), workers=1), progress=False)
    rows = pd.read_parquet(here / "b" / "data" / "vc" / "test-00000-of-00001.parquet")
    im = Image.open(io.BytesIO(rows["image_dots"][0]["bytes"]))
    assert im.size == (1400, 1100) and np.asarray(im.convert("L")).min() == 0
    res = evaluate_model(str(here / "b"), "baseline:symbolic", here / "run", visual_reps=("dots",), progress=False)
    assert set(res["scores"]["by_visual_rep"]) == {"dots"}
    assert "| Dots |" in report([here / "run"])
    files = task_files()
    assert "hypergvl_n_set_dots.yaml" in files and "hypergvl_n_set_dots" in files["hypergvl.yaml"]
    print("CHILD OK")
    ''')


# =============================================================================================== Space tab
TAB = '''
"""A toy Space tab: how many entries the store holds."""
import gradio as gr

from hypergvl.space.tabs.base import OnLoad, register_tab


@register_tab("notes", title="Notes", order=80)
def notes(page):
    box = gr.Textbox(label="Notes", interactive=False, elem_id="notes")
    return OnLoad(lambda: f"{len(page.service.entries())} entries", [box])
'''


def test_a_space_tab_is_on_the_page_in_its_order_and_filled_at_load(tmp_path):
    run_toy(tmp_path, {"toy_tab": TAB}, '''
    from pathlib import Path

    import gradio as gr

    import toy_tab  # noqa: F401
    from hypergvl.space.app import build_app
    from hypergvl.space.config import SpaceConfig
    from hypergvl.space.service import Service
    from hypergvl.space.tabs import in_order
    from hypergvl.space.testsets import TestSets

    cfg = SpaceConfig(data_dir=Path.cwd() / "space", per_task=1, study_dirs=())
    app = build_app(Service(cfg, sets=TestSets(cfg.data_dir, per_task=1, tasks=("VC",))))
    tabs = [b.id for b in app.blocks.values() if isinstance(b, gr.Tab)]
    assert tabs == [f"tab-{t.name}" for t in in_order()] and tabs[-2:] == ["tab-submit", "tab-notes"]
    notes = next(b for b in app.blocks.values() if b.elem_id == "notes")
    (load,) = [fn for fn in app.fns.values() if notes in fn.outputs]
    assert load.fn() == "0 entries"
    print("CHILD OK")
    ''')


# =============================================================================================== adapter
ADAPTER = '''
"""A toy model adapter, ``echo:WORD``: answers every sample ``Ans: WORD``."""
from hypergvl.evaluators.adapters import ModelInfo, register_adapter


class Echo:
    def __init__(self, word):
        self.word = word

    def generate(self, batch):
        return [f"Ans: {self.word}" for _ in batch]

    def info(self):
        return ModelInfo(f"echo:{self.word}", "baseline")


@register_adapter("echo")
def echo(rest, **options):
    return Echo(rest)
'''


def test_a_model_adapter_answers_through_the_harness_by_its_prefix(tmp_path):
    run_toy(tmp_path, {"toy_adapter": ADAPTER}, '''
    from pathlib import Path

    import toy_adapter  # noqa: F401
    from hypergvl.builder import BuildConfig, build
    from hypergvl.cli import main as cli
    from hypergvl.evaluators.harness import evaluate_model

    here = Path.cwd()
    build(BuildConfig(out=here / "b", per_task=2, tasks=("ISM",), workers=1), progress=False)
    res = evaluate_model(str(here / "b"), "echo:Yes", here / "run", visual_reps=("none",), progress=False)
    import pandas as pd

    answers = pd.read_parquet(here / "b" / "data" / "ism" / "test-00000-of-00001.parquet")["answer"]
    assert res["model"]["name"] == "echo:Yes" and res["scores"]["per_task"]["ISM"] == 100.0 * (answers == "Yes").mean()
    assert cli(["evaluate", "--dataset", str(here / "b"), "--model", "echo:No", "--out", str(here / "run2"),
                "--visual-reps", "none", "--no-progress"]) == 0
    print("CHILD OK")
    ''')


# =============================================================================================== routing policy
POLICY = '''
"""A toy routing policy, ``last``: the last registered pair for every problem (a higher layer's policy: it is
found through the hypergvl.routing entry-point group)."""
from hypergvl.evaluators.routing import register_policy
from hypergvl.vqa import combinations


class Last:
    name = "last"

    def choose(self, rows):
        return [combinations()[-1] for _ in rows]


@register_policy("last", "last", "Last")
def last(arg):
    return Last()
'''


def test_a_routing_policy_from_an_entry_point_routes_an_evaluation(tmp_path):
    run_toy(tmp_path, {"toy_policy": POLICY}, '''
    import json
    from pathlib import Path

    from hypergvl.builder import BuildConfig, build
    from hypergvl.evaluators.harness import evaluate_model
    from hypergvl.evaluators.routing import policy_label, spec_forms
    from hypergvl.vqa import combinations

    here = Path.cwd()
    assert "last" in spec_forms() and policy_label("last") == "Last"  # found through the entry point alone
    build(BuildConfig(out=here / "b", per_task=2, tasks=("VC",), workers=1), progress=False)
    res = evaluate_model(str(here / "b"), "baseline:symbolic", here / "run", routing="last", progress=False)
    logged = [json.loads(l) for l in (here / "run" / "samples.jsonl").read_text().splitlines()]
    assert res["selection"]["routing"] == "last" and len(logged) == 2
    assert {(r["text_rep"], r["visual_rep"]) for r in logged} == {combinations()[-1]}
    print("CHILD OK")
    ''', dist={"hypergvl.routing": "last = toy_policy"})


# =============================================================================================== command
COMMAND = '''
"""A toy command, ``hypergvl hello NAME``."""
from hypergvl.cli import command


def _args(p):
    p.add_argument("name")


@command("hello", _args)
def hello(args):
    """Greet."""
    print(f"hello {args.name}")
    return 0
'''


def test_a_command_is_found_through_its_entry_point_as_an_installed_distribution_declares_it(tmp_path):
    """A command of a layer above the core is a module under the ``hypergvl.commands`` entry-point group: here a
    distribution's ``dist-info`` declares it (what ``pip install -e .`` writes from ``pyproject.toml``; a new entry
    point is read only after that reinstall)."""
    run_toy(tmp_path, {"toy_command": COMMAND}, '''
    import contextlib
    import io

    from hypergvl.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["hello", "world"]) == 0
    assert out.getvalue().strip() == "hello world"
    print("CHILD OK")
    ''', dist={"hypergvl.commands": "hello = toy_command"})


# =============================================================================================== real source
SOURCE = '''
"""A toy real source: a ring of triangles read from a local text file (one hyperedge a line)."""
from pathlib import Path

from hypergvl import Hypergraph
from hypergvl.sources import register_source


@register_source("toy-rings", domain="toy", description="triangles on a ring", licence="CC0-1.0",
                 citation="none", env_var="HYPERGVL_TOY_ROOT", default_base=lambda: str(Path.cwd() / "toy-data"))
def rings(read):
    edges = [[int(v) for v in line.split()] for line in read("rings.txt").decode().splitlines() if line.strip()]
    return Hypergraph(1 + max(v for e in edges for v in e), edges)
'''


def test_a_real_source_feeds_the_builders_real_rows(tmp_path):
    (tmp_path / "toy-data").mkdir()
    n = 60
    (tmp_path / "toy-data" / "rings.txt").write_text("".join(f"{i} {(i + 1) % n} {(i + 2) % n}\n" for i in range(n)))
    run_toy(tmp_path, {"toy_source": SOURCE}, '''
    from pathlib import Path

    import pandas as pd

    import toy_source  # noqa: F401
    from hypergvl.builder import BuildConfig, build

    here = Path.cwd()
    build(BuildConfig(out=here / "b", per_task=4, tasks=("VC",), sources=("toy-rings",), fallback_sources=(),
                      workers=1), progress=False)
    rows = pd.read_parquet(here / "b" / "data" / "vc" / "test-00000-of-00001.parquet")
    assert set(rows.loc[rows["source"] == "real", "origin"]) == {"toy-rings"}
    print("CHILD OK")
    ''')


# =============================================================================================== HNN model
HNN = '''
"""A toy hypergraph neural network: node features averaged into their hyperedges and back, then a linear map."""
import torch
from torch import nn

from hypergvl.models.nn import register_model


@register_model("ToyMean")
class ToyMean(nn.Module):
    paper = "a toy of tests/test_extending.py"

    def __init__(self, in_channels, hidden_channels, out_channels, num_layers=2, dropout=0.5, *, scale: float = 1.0):
        super().__init__()
        self.lin, self.scale = nn.Linear(in_channels, out_channels), scale

    def reset_parameters(self):
        self.lin.reset_parameters()

    def forward(self, x, hyperedge_index, num_hyperedges=None):
        x = x.to_dense() if x.is_sparse else x
        node, edge = hyperedge_index
        m = int(num_hyperedges if num_hyperedges is not None else edge.max() + 1)
        ones = torch.ones(node.numel(), 1, dtype=x.dtype)
        e = torch.zeros(m, x.size(1)).index_add_(0, edge, x[node]) / torch.zeros(m, 1).index_add_(0, edge, ones)
        v = torch.zeros_like(x).index_add_(0, node, e[edge])
        return self.lin(self.scale * v / torch.zeros(x.size(0), 1).index_add_(0, node, ones).clamp_min(1))
'''

PERTURBATION = '''
"""A toy perturbation: every node feature scaled by (1 - ratio)."""
from hypergvl.models.perturb import Perturbed, register_perturbation


@register_perturbation("feature_fade", level="feature", grid=(0.0, 0.5), unit="entries", label="feature fade")
def feature_fade(data, ratio, seed, train=None):
    x = data.x.to_dense() if data.x.is_sparse else data.x
    faded = data.__class__(**{**{k: getattr(data, k) for k in data.__dataclass_fields__}, "x": x * (1 - ratio)})
    return Perturbed(faded, train, int(x.numel() if ratio else 0), "entries")
'''

DATASET = '''
"""A toy node-level dataset read from a raw file: two planted communities of triangles."""
import torch

from hypergvl.models.datasets.data import HypergraphData
from hypergvl.models.datasets.registry import register_dataset
from hypergvl.models.datasets.sources import RawSource

TOY = RawSource("Toy", "Toy", None, "https://example.org/toy")


@register_dataset("toy-communities", display_name="Toy", level="node", tasks=("node_classification",), source=TOY,
                  files=("communities.txt",), feature_file=None, paper_stats={}, description="two communities",
                  license="cc0-1.0", license_note="made up", citation="none")
def load_toy(reader, *, features, name):
    edges = [[int(v) for v in line.split()] for line in reader.read_bytes("communities.txt").decode().splitlines()]
    n = 1 + max(v for e in edges for v in e)
    y = torch.tensor([int(v >= n // 2) for v in range(n)])
    x = torch.nn.functional.one_hot(y, 2).float() + 0.1 * torch.arange(n).float()[:, None] / n
    index = torch.tensor([[v, i] for i, e in enumerate(edges) for v in e]).T
    return HypergraphData(x=x, y=y, hyperedge_index=index, num_hyperedges=len(edges), num_nodes=n, name=name)
'''


def write_toy_communities(tmp_path, n: int = 40) -> None:
    """The toy dataset's raw file: two communities of ``n // 2`` nodes, each hyperedge three neighbours in a ring."""
    raw = tmp_path / "raw" / "Toy"
    raw.mkdir(parents=True)
    lines = [f"{i} {(i + 1) % (n // 2)} {(i + 2) % (n // 2)}" for i in range(n // 2)]
    lines += [f"{n // 2 + i} {n // 2 + (i + 1) % (n // 2)} {n // 2 + (i + 2) % (n // 2)}" for i in range(n // 2)]
    (raw / "communities.txt").write_text("\n".join(lines) + "\n")


def test_an_hnn_trains_one_epoch_under_a_perturbation_and_on_a_registered_dataset(tmp_path):
    """Three HNN seams in one fresh process: a model (``@register_model`` in a module of one's own) trains one
    epoch through the trainer, on a dataset registered with ``@register_dataset`` (read from a raw root), under a
    perturbation registered with ``@register_perturbation`` through the robustness study's hook."""
    write_toy_communities(tmp_path)
    run_toy(tmp_path, {"toy_hnn": HNN, "toy_perturbation": PERTURBATION, "toy_dataset": DATASET}, '''
    from pathlib import Path

    import toy_dataset, toy_hnn, toy_perturbation  # noqa: F401
    from hypergvl.models.datasets import DATASETS, load
    from hypergvl.models.nn import MODELS, build_model
    from hypergvl.models.perturb import PERTURBATIONS
    from hypergvl.models.study.robustness import make_hook
    from hypergvl.models.trainer import run_experiment

    here = Path.cwd()
    assert "ToyMean" in MODELS and "toy-communities" in DATASETS and "feature_fade" in PERTURBATIONS
    assert build_model("ToyMean", in_channels=2, hidden_channels=4, out_channels=2, scale=2.0).scale == 2.0
    data = load("toy-communities", raw_root=here / "raw")
    assert data.num_nodes == 40 and data.name == "toy-communities"
    summary = run_experiment("ToyMean", "toy-communities", "node", out=here / "run", runs=1, data=data,
                             progress=False, overrides=["epochs=1", "hidden=8"])
    assert len(summary["runs"]) == 1 and summary["runs"][0]["history"]
    hook = make_hook("feature_fade", 0.5, perturb_self_loops=True, options={})
    faded = run_experiment("ToyMean", "toy-communities", "node", out=here / "faded", runs=1, data=data,
                           progress=False, overrides=["epochs=1", "hidden=8"], perturb=hook)
    assert faded["runs"][0]["perturbation"]["kind"] == "feature_fade"
    print("CHILD OK")
    ''')


# =============================================================================================== HNN task
HNN_TASK = """
\"\"\"A toy HNN task: node classification scored by balanced accuracy (the mean of the per-class recalls), on a
random split whose fractions are the task's own settings.\"\"\"
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from hypergvl.models.tasks import Task, register_task, split_indices


@dataclass(frozen=True)
class BalancedConfig:
    train_frac: float = 0.4
    val_frac: float = 0.3


@register_task("node_balanced")
class BalancedNodeClassification(Task):
    Config = BalancedConfig
    metric = "balanced_accuracy"
    default_select = "best_val"

    def __init__(self, data, cfg, seed, *, hidden, device="cpu"):
        super().__init__(data, cfg, seed, hidden=hidden, device=device)
        self.split = split_indices(int(data.num_nodes), seed, cfg.train_frac, cfg.val_frac)
        self.x, self.y = data.x, torch.as_tensor(data.y).long().view(-1)
        self.hyperedge_index, self.num_hyperedges = data.hyperedge_index, int(data.num_hyperedges)
        self.in_channels, self.out_channels = int(self.x.size(1)), int(self.y.max()) + 1

    def build_head(self):
        return torch.nn.Identity()

    def train_batches(self, rng):
        yield None

    def loss(self, module, batch):
        idx = self.split["train"]
        return F.cross_entropy(module(self.x, self.hyperedge_index, self.num_hyperedges)[idx], self.y[idx])

    @torch.no_grad()
    def evaluate(self, module):
        pred = module(self.x, self.hyperedge_index, self.num_hyperedges).argmax(-1)
        out = {}
        for part in ("val", "test"):
            idx = self.split[part]
            recalls = [float((pred[idx][self.y[idx] == c] == c).float().mean())
                       for c in self.y[idx].unique().tolist()]
            out[part] = {"balanced_accuracy": 100.0 * sum(recalls) / len(recalls), "count": float(idx.numel())}
        return out
"""


def test_an_hnn_task_trains_one_epoch_with_its_own_settings_metric_and_selection(tmp_path):
    """The HNN-task seam (``@register_task("name")`` of ``hypergvl.models.tasks`` in a module of one's own): a
    package model (HGNN) trains one epoch on it through ``run_experiment``, the public entry point for names
    registered outside the package (docs/extending.md); the task's settings come from a config file section under
    its name and ``--set``-style overrides, and the run's summary (read by the one reader) reports the task's own
    metric, its selection rule and its split sizes."""
    write_toy_communities(tmp_path)
    (tmp_path / "toy.yaml").write_text("node_balanced:\n  default: {train_frac: 0.5, hidden: 8}\n"
                                       "  toy-communities: {val_frac: 0.25}\n")
    run_toy(tmp_path, {"toy_hnn_task": HNN_TASK, "toy_dataset": DATASET}, """
    from pathlib import Path

    import toy_dataset, toy_hnn_task  # noqa: F401
    from hypergvl.models.tasks import TASKS
    from hypergvl.models.trainer import read_summary, run_experiment

    here = Path.cwd()
    assert TASKS["node_balanced"].__name__ == "BalancedNodeClassification"
    run_experiment("HGNN", "toy-communities", "node_balanced", out=here / "run", runs=1, raw_root=str(here / "raw"),
                   config=here / "toy.yaml", progress=False, overrides=["epochs=1", "task.val_frac=0.2"])
    summary = read_summary(here / "run")
    assert (summary["task"], summary["metric"], summary["select"]) == ("node_balanced", "balanced_accuracy",
                                                                       "best_val"), summary
    assert summary["config"]["task"] == {"train_frac": 0.5, "val_frac": 0.2}, summary["config"]
    assert summary["config"]["trainer"]["hidden"] == 8 and summary["config"]["trainer"]["epochs"] == 1
    (run,) = summary["runs"]
    assert len(run["history"]) == 1, run["history"]
    # 40 nodes cut 50/20/30: 8 validation and 12 test nodes, each split's balanced accuracy a mean of recalls
    assert run["metrics"]["val"]["count"] == 8 and run["metrics"]["test"]["count"] == 12, run["metrics"]
    assert 0 <= summary["mean"] <= 100 and summary["mean"] == run["metrics"]["test"]["balanced_accuracy"]
    print("CHILD OK")
    """)


# =============================================================================================== metric
METRIC = '''
"""A toy metric: the share of predictions equal to their references, in percent."""
import datasets
import evaluate


class ToyAgreement(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(description="agreement", citation="", inputs_description="",
                                   features=datasets.Features({"predictions": datasets.Value("int64"),
                                                               "references": datasets.Value("int64")}))

    def _compute(self, predictions, references):
        return {"agreement": 100.0 * sum(p == r for p, r in zip(predictions, references)) / len(predictions)}
'''


def test_a_metric_folder_is_evaluate_loadable_and_the_packages_are_found_by_name(tmp_path):
    """A metric is a folder ``<name>/<name>.py`` (an ``evaluate.Metric``) with its card: ``evaluate.load`` reads it
    by path in a fresh process; the package's own are found by ``metric_path`` and load the same way."""
    folder = tmp_path / "toy_agreement"
    folder.mkdir()
    (folder / "toy_agreement.py").write_text(textwrap.dedent(METRIC))
    (folder / "README.md").write_text("# Toy agreement\n")
    run_toy(tmp_path, {}, f'''
    import evaluate

    from hypergvl.evaluators import METRIC_NAMES, metric_path

    toy = evaluate.load({str(folder)!r})
    assert toy.compute(predictions=[1, 0, 1, 1], references=[1, 1, 1, 1]) == {{"agreement": 75.0}}
    for name in METRIC_NAMES:
        assert metric_path(name).endswith(name)
    assert "accuracy" in evaluate.load(metric_path("hypergvl_accuracy")).compute(
        predictions=["Ans: 3"], references=[
            '{{"task": "VC", "hypergraph": {{"num_vertices": 3, "hyperedges": [[0, 1], [1, 2]]}}, '
            '"hypergraph2": null, "params": {{}}, "answer": "3"}}'])
    print("CHILD OK")
    ''')
