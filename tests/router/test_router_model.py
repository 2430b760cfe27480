"""WiseHyGR training and inference offline on MiniLM: the loss falls, resuming gives the uninterrupted weights,
save/load routes identically, truncation keeps the question, the card lists the data and metrics."""
import dataclasses
import json
import os

import numpy as np
import pytest
import torch

from hypergvl import Hypergraph
from hypergvl.tasks import generate_problem
from hypergvl.router import WiseHyGR, combination_name
from hypergvl.router.model import describe, encode_pairs
from hypergvl.router.prm import PRMConfig, build_prm
from hypergvl.vqa import combinations
from hypergvl.router.train import TrainConfig, class_weights, group_problems, main as train_main, pair_loss, train

from router_fixtures import write_run


@pytest.fixture(scope="module")
def single_label_prm(tmp_path_factory):
    """Twelve problems, each with one best combination decided by its task (so a model can fit it)."""
    tasks = ("HEC", "VC", "OSP", "Ne")
    favourite = {"HEC": ("n_set", "enc_hy"), "VC": ("lo_inc", "cli_exp"), "OSP": ("ho_inc", "bi_inc"),
                 "Ne": ("adj_mat", "sh_inc")}
    rows = [generate_problem(t, seed=11, scale="small", index=i) for i, t in enumerate(tasks * 3)]
    problems = {r["id"]: r for r in rows}
    base = tmp_path_factory.mktemp("single")
    run = write_run(base / "run", problems, lambda m, c: c == favourite[problems[m]["task"]])
    build_prm(PRMConfig((str(run),), str(base / "prm")), progress=False)
    return base / "prm"


def _cfg(prm, out, **kw):
    return TrainConfig(prm=str(prm), out=str(out), **{"epochs": 4, "batch_size": 4, "max_length": 64, "lr": 3e-4,
                                                      "target": "best", "min_steps": None,
                                                      "warmup_ratio": 0.0, **kw})


def test_pair_loss_is_the_cross_entropy_of_the_expanded_pairs():
    torch.manual_seed(0)
    logits = torch.randn(3, 35)
    labels = [[0, 5], [7], [1, 2, 3]]
    w = torch.rand(35) + 0.5
    t = torch.zeros(3, 35)
    for i, ls in enumerate(labels):
        t[i, ls] = w[ls]
    rows = torch.tensor([i for i, ls in enumerate(labels) for _ in ls])
    flat = torch.tensor([c for ls in labels for c in ls])
    ref = torch.nn.functional.cross_entropy(logits[rows], flat, weight=w)
    assert torch.allclose(pair_loss(logits, t), ref, atol=1e-6)


def test_class_weights_are_sklearn_balanced():
    from sklearn.utils.class_weight import compute_class_weight

    probs = group_problems([{"meta_id": m, "description": "", "question": "", "label": c}
                            for m, cs in (("a", [0, 1]), ("b", [1]), ("c", [1, 4])) for c in cs])
    w = class_weights(probs, 5)
    ref = compute_class_weight("balanced", classes=np.array([0, 1, 4]), y=np.array([0, 1, 1, 1, 4]))
    assert w[[0, 1, 4]] == pytest.approx(ref) and w.sum() == pytest.approx(ref.sum())


def test_minilm_training_loss_falls_card_lists_data_and_metrics_and_save_load_routes_identically(single_label_prm,
                                                                                                   tmp_path):
    state = train(_cfg(single_label_prm, tmp_path / "r", epochs=2, batch_size=2), progress=False)
    losses = [h["train_loss"] for h in state["history"]]  # mean training loss of each epoch (5 steps)
    assert len(losses) == 2 and losses[1] < losses[0] - 0.2, losses
    r = WiseHyGR.from_pretrained(tmp_path / "r")
    rows = [generate_problem(t, seed=8, scale="medium") for t in ("HEC", "VC", "OSP", "Ne", "ISM")]
    d, q = [x["text_ho_neigh"] for x in rows], [x["question"] for x in rows]
    r.save_pretrained(tmp_path / "again")
    r2 = WiseHyGR.from_pretrained(tmp_path / "again")
    assert torch.equal(r.logits(d, q), r2.logits(d, q)) and r.route_texts(d, q) == r2.route_texts(d, q)
    card = (tmp_path / "r" / "README.md").read_text()
    meta = json.loads((tmp_path / "r" / "wisehygr.json").read_text())
    assert "PRM dataset" in card and str(single_label_prm) in card and "| validation |" in card
    assert "among_best" in card and "base_model: sentence-transformers/all-MiniLM-L6-v2" in card
    assert meta["prm"]["split"]["train"]["meta_problems"] + meta["prm"]["split"]["validation"]["meta_problems"] == 12
    assert len(meta["history"]) == 2 and meta["metrics"] == state["best"]
    assert [json.loads(l) for l in (tmp_path / "r" / "metrics.jsonl").read_text().splitlines()] == state["history"]
    assert not (tmp_path / "r" / "checkpoint").exists()  # finished: the resumable state is cleaned up
    again = _cfg(single_label_prm, tmp_path / "r", epochs=2, batch_size=2)
    assert train(again, progress=False) == state  # a rerun of a finished run: no-op
    with pytest.raises(ValueError, match="other settings"):
        train(dataclasses.replace(again, lr=1e-4), progress=False)


def test_resume_after_interruption_gives_the_uninterrupted_weights(single_label_prm, tiny_backbone, tmp_path,
                                                                   monkeypatch):
    import hypergvl.router.train as rt

    tiny = {"backbone": str(tiny_backbone), "epochs": 2}
    train(_cfg(single_label_prm, tmp_path / "full", **tiny), progress=False)
    calls = {"n": 0}
    real = rt.pair_loss

    def interrupted(logits, targets):
        calls["n"] += logits.requires_grad  # training steps only (validation logits carry no graph)
        if calls["n"] == 4:  # the 4th step (epoch 1, its first batch) dies after 3 steps were checkpointed
            raise KeyboardInterrupt
        return real(logits, targets)

    monkeypatch.setattr(rt, "pair_loss", interrupted)
    with pytest.raises(KeyboardInterrupt):
        train(_cfg(single_label_prm, tmp_path / "cut", checkpoint_every=1, **tiny), progress=False)
    assert json.loads((tmp_path / "cut" / "checkpoint" / "trainer_state.json").read_text())["state"]["global_step"] == 3
    monkeypatch.setattr(rt, "pair_loss", real)
    train(_cfg(single_label_prm, tmp_path / "cut", checkpoint_every=1, **tiny), progress=False)
    a = WiseHyGR.from_pretrained(tmp_path / "full").model.state_dict()
    b = WiseHyGR.from_pretrained(tmp_path / "cut").model.state_dict()
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


def test_saved_router_labels_and_reload(tiny_router):
    r = WiseHyGR.from_pretrained(tiny_router)
    # its PRM's label set: every registered pair (the runs were exhaustive), in combinations() order
    assert r2_labels(r) == [combination_name(*c) for c in combinations()] == list(r.labels)
    assert "n_set+bi_inc" in r.labels and r.max_length == 160 and r.not_routed() == []
    with pytest.raises(ValueError, match="not a WiseHyGR router"):
        WiseHyGR.from_pretrained(tiny_router / "..")


def r2_labels(r):
    return [r.model.config.id2label[i] for i in range(r.model.config.num_labels)]


def test_route_and_route_batch_agree_and_read_ho_neigh(tiny_router):
    r = WiseHyGR.from_pretrained(tiny_router)
    rows = [generate_problem(t, seed=5, scale="small") for t in ("HEC", "ISM", "OSP")]
    one = [r.route(x["hypergraph"], x["question"], x["hypergraph2"] or None) for x in rows]
    many = r.route_batch([x["hypergraph"] for x in rows], [x["question"] for x in rows],
                         [x["hypergraph2"] or None for x in rows])
    assert one == many == r.route_texts([x["text_ho_neigh"] for x in rows], [x["question"] for x in rows])
    assert describe(rows[1]["hypergraph"], rows[1]["hypergraph2"]) == rows[1]["text_ho_neigh"]


def test_long_descriptions_are_cut_from_the_documented_side_and_the_question_is_kept(tiny_router):
    r = WiseHyGR.from_pretrained(tiny_router)
    h = Hypergraph(20, [[i, (i + 1) % 20, (i + 7) % 20] for i in range(20)])
    d = describe(h)
    q = "Q: How many hyperedges are in the hypergraph? List the answer after “Ans:” as “Ans: 3”."
    tok = r.tokenizer
    q_ids = tok(q, add_special_tokens=False)["input_ids"]
    d_ids = tok(d, add_special_tokens=False)["input_ids"]
    assert len(d_ids) > 160  # the router was trained with max_length 160
    for side, kept in (("right", d_ids[:160 - 3 - len(q_ids)]), ("left", d_ids[len(d_ids) - (160 - 3 - len(q_ids)):])):
        ids = encode_pairs(tok, [d], [q], 160, side)["input_ids"][0]
        assert len(ids) == 160
        assert ids == [tok.cls_token_id] + kept + [tok.sep_token_id] + q_ids + [tok.sep_token_id]
    with pytest.raises(ValueError, match="question alone"):
        encode_pairs(tok, [d], [q * 20], 160)


def test_train_cli_refuses_bad_flags(prm_dir, tmp_path, capsys):
    assert train_main(["--prm", str(prm_dir), "--out", str(tmp_path / "x"), "--epochs", "0"]) == 2
    assert "epochs must be at least 1" in capsys.readouterr().err
    assert train_main(["--prm", str(tmp_path / "missing"), "--out", str(tmp_path / "y")]) == 2


def test_a_wrong_prm_is_refused_before_transformers_loads(tmp_path):
    """A missing or empty PRM folder is read before torch, accelerate and transformers are imported (they cost 8-9 s,
    which a mistyped path should not), and nothing is written."""
    import subprocess
    import sys

    code = ("import sys\nfrom hypergvl.router.train import main\nrc = main(sys.argv[1:])\n"
            "heavy = [m for m in ('torch', 'transformers', 'accelerate') if m in sys.modules]\n"
            "assert not heavy, heavy\nsys.exit(rc)")
    (tmp_path / "empty").mkdir()
    for prm, message in ((tmp_path / "missing", "missing: no such PRM folder"),
                         (tmp_path / "empty", "is not a PRM dataset: no data/train-*.parquet")):
        proc = subprocess.run([sys.executable, "-c", code, "--prm", str(prm), "--out", str(tmp_path / "out")],
                              capture_output=True, text=True, timeout=60, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert not (tmp_path / "out").exists()


def test_accelerate_launch_with_two_processes(prm_dir, tiny_backbone, tmp_path):
    import subprocess
    import sys

    out = tmp_path / "ddp"
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
           "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "hypergvl.router.train",
           "--prm", str(prm_dir), "--backbone", str(tiny_backbone), "--out", str(out), "--max-steps", "3",
           "--batch-size", "4", "--max-length", "160", "--no-progress"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.count("router saved to") == 1  # printed by the main process only
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["key"]["num_processes"] == 2 and state["state"]["global_step"] == 3
    assert WiseHyGR.from_pretrained(out).route_texts(["G describes ..."], ["Q: How many vertices?"])[0] in combinations()


def test_push_to_hub_uploads_the_saved_folder(tiny_router, monkeypatch):
    import huggingface_hub

    calls = {}

    class FakeApi:
        def __init__(self, token=None):
            calls["token"] = token

        def create_repo(self, repo_id, repo_type, private, exist_ok):
            calls["create"] = (repo_id, repo_type, private)
            return f"https://huggingface.co/{repo_id}"

        def upload_folder(self, repo_id, folder_path, repo_type, commit_message):
            from pathlib import Path

            calls["files"] = sorted(p.name for p in Path(folder_path).iterdir())
            calls["card"] = (Path(folder_path) / "README.md").read_text()

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    url = WiseHyGR.from_pretrained(tiny_router).push_to_hub("org/wisehygr", private=True, token="t")
    assert url == "https://huggingface.co/org/wisehygr" and calls["create"] == ("org/wisehygr", "model", True)
    assert {"config.json", "model.safetensors", "wisehygr.json", "README.md", "tokenizer.json"} <= set(calls["files"])
    assert "## Training data" in calls["card"] and "## Intended use" in calls["card"]


def test_the_pushed_router_loads_from_its_uploaded_files_alone(tiny_router, monkeypatch, tmp_path):
    """What ``push_to_hub`` uploads, loaded the two ways its card and the Hub offer, in a fresh process from those
    files alone: the card's ``WiseHyGR.from_pretrained`` routes as the trained router does, and plain transformers
    (``AutoModelForSequenceClassification``, ``AutoTokenizer``) gives the same logits and the 35 labels by name."""
    import shutil
    import subprocess
    import sys

    import huggingface_hub

    published = tmp_path / "org--wisehygr"

    class FakeApi:
        def __init__(self, token=None):
            pass

        def create_repo(self, repo_id, **kw):
            return f"https://huggingface.co/{repo_id}"

        def upload_folder(self, repo_id, folder_path, **kw):
            shutil.copytree(folder_path, published)

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    router = WiseHyGR.from_pretrained(tiny_router)
    router.push_to_hub("org/wisehygr")
    card = (published / "README.md").read_text()
    assert 'WiseHyGR.from_pretrained("DIR_OR_HUB_ID")' in card
    rows = [generate_problem(t, seed=8, scale="medium") for t in ("HEC", "VC", "OSP", "Ne", "ISM")]
    d, q = [x["text_ho_neigh"] for x in rows], [x["question"] for x in rows]
    code = """
import json, sys, torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer
from hypergvl.router import WiseHyGR
folder, d, q = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
r = WiseHyGR.from_pretrained(folder)
model, tok = AutoModelForSequenceClassification.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
enc = r.encode(d, q)
with torch.no_grad():
    plain = model(**enc).logits
print(json.dumps({"routes": r.route_texts(d, q), "plain": plain.tolist(), "ours": r.logits(d, q).tolist(),
                  "labels": [model.config.id2label[i] for i in range(model.config.num_labels)]}))
"""
    run = subprocess.run([sys.executable, "-c", code, str(published), json.dumps(d), json.dumps(q)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert [tuple(x) for x in got["routes"]] == [tuple(x) for x in router.route_texts(d, q)]
    assert torch.allclose(torch.tensor(got["plain"]), router.logits(d, q), atol=1e-5)
    assert torch.allclose(torch.tensor(got["ours"]), router.logits(d, q), atol=1e-5)
    assert got["labels"] == list(router.labels) and len(router.labels) == len(router.combinations)
