"""The routing test bed: baseline:profile answers right with its table's probability (checked sample by sample
against the draw), refuses bad tables, and a router trained on its exhaustive runs must beat Top by 10 points
on fresh problems of another seed under a profile where Top is best nowhere."""
import json
import zlib

import numpy as np
import pytest

from hypergvl.evaluators.adapters import make_adapter
from hypergvl.evaluators.baselines import DEFAULT_PROFILE, load_profile
from hypergvl.evaluators.harness import evaluate_model
from hypergvl.builder import BuildConfig, build
from hypergvl.paper import PAPER_COMBINATIONS, PAPER_TASKS, PAPER_TEXT_REPS, PAPER_VISUAL_REPS
from hypergvl.router.prm import PRMConfig, build_prm, combination_name
from hypergvl.router.testbed import default_profile, shuffled_profile
from hypergvl.router.train import TrainConfig, train
from hypergvl.vqa import combinations

TASKS = ("VC", "HEC", "OEC")
# per task: the best pair on small and medium hypergraphs, and on large ones; Top (n_set+enc_hy) is at 0.45 everywhere
BEST = {"VC": ("lo_inc+cli_exp", "ho_inc+bi_inc"), "HEC": ("ho_neigh+st_inc", "inc_mat+sh_inc"),
        "OEC": ("adj_mat+bi_inc", "ho_inc+sh_inc")}


def _profile(path):
    """The CI profile, over the paper's 35 pairs (the test bed's layout, Table 4's: a representation registered
    beyond them is not in it, so not routed)."""
    table = {}
    for task, (small, large) in BEST.items():
        table[task] = {}
        for scale in ("small", "medium", "large"):
            row = {combination_name(*c): 0.1 for c in PAPER_COMBINATIONS}
            row["n_set+enc_hy"] = 0.45
            row[large if scale == "large" else small] = 0.95
            table[task][scale] = row
    path.write_text(json.dumps({"format": 1, "name": "ci", "p": table}))
    return path


def test_the_shipped_profile_is_the_documented_derivation_and_top_is_rarely_best():
    shipped = json.loads(DEFAULT_PROFILE.read_text())
    assert shipped == json.loads(json.dumps(default_profile()))
    prof = load_profile()
    cells = [(t, s) for t in prof.table for s in prof.table[t]]
    best = {prof.best(t, s) for t, s in cells}
    top_best = sum(prof.best(t, s) == ("n_set", "enc_hy") for t, s in cells)
    assert len(cells) == 3 * len(PAPER_TASKS) and len(best) >= 8 and top_best <= 6
    # the best pair moves with the scale on most tasks
    assert sum(prof.best(t, "small") != prof.best(t, "large") for t in prof.table) >= 8


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(format=2), "format"),
    (lambda d: d["p"].update(XX=d["p"]["VC"]), "unknown task 'XX'"),
    (lambda d: d["p"]["VC"].pop("large"), "needs exactly the scales"),
    (lambda d: d["p"]["VC"]["small"].pop("n_set+enc_hy"), "must list the same pairs as the other rows"),
    (lambda d: d["p"]["VC"]["small"].update({"n_set+nope": 0.5}), "not pairs '<text_rep>\\+<visual_rep>' of registered"),
    (lambda d: d["p"]["VC"]["small"].update({"n_set+enc_hy": 1.5}), "number in [0, 1]"),
])
def test_bad_profiles_are_refused_with_the_reason(tmp_path, change, message):
    d = json.loads(_profile(tmp_path / "p.json").read_text())
    change(d)
    (tmp_path / "bad.json").write_text(json.dumps(d))
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_profile(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="needs the build"):
        make_adapter(f"baseline:profile:{tmp_path / 'p.json'}")
    with pytest.raises(ValueError, match="unknown setting"):
        make_adapter("baseline:profile:dataset=x:temperature=1")


def test_profile_answers_are_right_exactly_when_the_seeded_draw_is_below_p(small_build, tmp_path):
    prof = load_profile()
    out = evaluate_model(str(small_build), f"baseline:profile:dataset={small_build}:seed=3", tmp_path / "run",
                         batch_size=64, progress=False)
    assert out["model"]["name"] == "baseline:profile:default@seed3"
    recs = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert len(recs) == 40 * len(combinations()) and not any(r["unparsed"] for r in recs)
    for r in recs:
        u = np.random.default_rng([3, zlib.crc32(r["id"].encode())]).random()
        assert r["correct"] == (u < prof.p(r["task"], r["scale"], r["text_rep"], r["visual_rep"])), r["id"]


@pytest.fixture(scope="module")
def routing_backbone(tmp_path_factory):
    """A randomly initialised 2-layer BERT (hidden 64) with MiniLM's tokenizer: small enough to train in seconds,
    large enough to tell the tasks and sizes apart."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from hypergvl.router.model import resolve_backbone

    out = tmp_path_factory.mktemp("routing-backbone") / "bert"
    torch.manual_seed(0)
    BertModel(BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
                         max_position_embeddings=256)).save_pretrained(out)
    AutoTokenizer.from_pretrained(resolve_backbone("minilm")[0]).save_pretrained(out)
    return out


def _routed_accuracies(tmp_path, profile, **settings) -> tuple[dict, dict]:
    """Exhaustive runs of ``profile`` (a profile JSON file) on 120 problems of three tasks (two model seeds), a
    router trained on them with ``settings`` over TrainConfig's defaults, and the accuracies of the router, Top and
    the profile's best pairs on 60 fresh problems of another seed; and the trainer's final state.

    The exhaustive runs answer the paper's 35 pairs, the test bed's layout (Table 4's, as the profiles are), so the
    router's labels are those 35 whatever else is registered: the 10-point margin was measured at this budget for
    that label set. A representation registered beyond them is in the builds but not in the PRM, so not routed
    (tests/test_extending.py trains a router whose PRM has one)."""
    build(BuildConfig(out=tmp_path / "src", per_task=40, seed=301, tasks=TASKS, workers=1), progress=False)
    build(BuildConfig(out=tmp_path / "fresh", per_task=20, seed=302, tasks=TASKS, workers=1), progress=False)
    runs = []
    for s in (0, 1):
        runs.append(tmp_path / f"ex{s}")
        evaluate_model(str(tmp_path / "src"), f"baseline:profile:{profile}:dataset={tmp_path / 'src'}:seed={s}",
                       runs[-1], batch_size=256, progress=False, text_reps=PAPER_TEXT_REPS,
                       visual_reps=PAPER_VISUAL_REPS)
    build_prm(PRMConfig(tuple(map(str, runs)), str(tmp_path / "prm")), progress=False)
    state = train(TrainConfig(prm=str(tmp_path / "prm"), out=str(tmp_path / "router"), **settings), progress=False)
    acc = {}
    for key, spec in (("router", f"router:{tmp_path / 'router'}"), ("top", "top"), ("profile", f"profile:{profile}")):
        res = evaluate_model(str(tmp_path / "fresh"), f"baseline:profile:{profile}:dataset={tmp_path / 'fresh'}:seed=7",
                             tmp_path / f"routed-{key}", routing=spec, progress=False)
        acc[key] = res["scores"]["accuracy"]
    return acc, state


def test_router_trained_on_the_test_bed_beats_top_by_10_points_on_fresh_problems(tmp_path, routing_backbone):
    """The router learns the per-problem preference: trained on two exhaustive runs of 120 problems, it beats
    Top by 10 points on 60 fresh problems of another seed. What makes it learn at this size (measured in the
    ablation of docs/router.md): the fresh head at its own rate (``head_lr``), short inputs (the size header, the
    question and the start of the description in 64 tokens) and enough optimiser steps (batch 8, 30 epochs)."""
    acc, state = _routed_accuracies(tmp_path, _profile(tmp_path / "ci.json"), backbone=str(routing_backbone),
                                    max_length=64, lr=1e-3, head_lr=1e-2, epochs=30, batch_size=8, seed=0,
                                    target="regression", header=True)
    assert state["best"]["routed"] > state["best"]["top"]
    assert acc["router"] >= acc["top"] + 10.0, acc


@pytest.mark.slow
def test_hypergvl_router_train_with_no_option_beats_top_by_10_points(tmp_path):
    """The README's command exactly (every default, the offline MiniLM backbone) on a shuffled profile (per task one
    best pair for small and medium hypergraphs and another for large ones, neither Top nor the shipped profile's
    best): 78.3 against Top's 51.7 when measured (3 min 43 s on the 2-core machine)."""
    profile = tmp_path / "shuffled.json"
    profile.write_text(json.dumps(shuffled_profile(1)))
    acc, _ = _routed_accuracies(tmp_path, profile)
    assert acc["router"] >= acc["top"] + 10.0, acc


def test_the_shuffled_profile_differs_from_the_shipped_one_in_every_cell_and_moves_with_the_scale(tmp_path):
    (tmp_path / "s.json").write_text(json.dumps(shuffled_profile(1)))
    prof = load_profile(tmp_path / "s.json")
    shipped = load_profile()
    for task in prof.table:
        assert prof.best(task, "small") == prof.best(task, "medium") != prof.best(task, "large")
        for scale in ("small", "medium", "large"):
            assert prof.best(task, scale) not in (("n_set", "enc_hy"), shipped.best(task, scale))
            assert prof.p(task, scale, "n_set", "enc_hy") == 0.5 and prof.p(task, scale, *prof.best(task, scale)) == 0.9
    assert shuffled_profile(1) == shuffled_profile(1) != shuffled_profile(2)
