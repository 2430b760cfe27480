"""``--set protocol=allset`` (models/protocols.py, the hook in models/train.py) and its reproduction table
(benchmarks/reproduce_allset.py): the transcribed values land in the resolved config with their sources, the
general setting is a recorded fallback, an unknown protocol is refused, the default resolution is byte-identical
to what the shipped DHG-Bench points were trained under, the shipped table is rebuilt from its points and a point
trained under another configuration is stale."""
import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from benchmark_scripts import load_script
from hnn_toys import planted

from hypergvl.models import protocols as P
from hypergvl.models import trainer as TR
from hypergvl.models.train import main as train_main
from hypergvl.models.nn import MODELS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ra():
    return load_script("reproduce_allset")


def _resolve(model, dataset, *extra, task="node"):
    return TR.resolve_config(model, task, dataset, None, ["protocol=allset", *extra])


# the ED-HNN README's reproduction commands (Graph-COM/ED-HNN@fea3b8f, README.md lines 66-68 and 107-109)
EDHNN_README = {
    "cora": {"num_layers": 1, "mlp1_layers": 0, "mlp2_layers": 0, "mlp3_layers": 1, "classifier_layers": 1,
             "hidden": 256, "classifier_hidden": 256, "aggregate": "mean", "alpha": 0.0, "lr": 1e-3,
             "weight_decay": 0.0, "epochs": 500},
    "cora-ca": {"num_layers": 1, "mlp1_layers": 0, "mlp2_layers": 0, "mlp3_layers": 1, "classifier_layers": 2,
                "hidden": 128, "classifier_hidden": 96, "aggregate": "mean", "alpha": 0.0, "lr": 1e-3,
                "weight_decay": 0.0, "epochs": 500},
}


@pytest.mark.parametrize("dataset", ["cora", "cora-ca"])
def test_edhnn_values_are_the_readme_commands_with_their_sources(dataset):
    cfg = _resolve("ED-HNN", dataset)
    for key, want in EDHNN_README[dataset].items():
        section = "trainer" if hasattr(cfg.trainer, key) else "model"
        got = getattr(cfg.trainer, key) if section == "trainer" else cfg.model[key]
        assert got == want, key
        assert cfg.sources[f"{section}.{key}"].startswith("protocol allset: Graph-COM/ED-HNN@fea3b8f "), key
    line = {"cora": 67, "cora-ca": 108}[dataset]
    assert cfg.sources["trainer.hidden"] == (f"protocol allset: Graph-COM/ED-HNN@fea3b8f README.md:{line} "
                                             f"(--MLP_hidden {EDHNN_README[dataset]['hidden']})")
    assert cfg.trainer.select == "best_val_first" and cfg.trainer.protocol == "allset"
    assert cfg.protocol["setting"] == "tuned" and cfg.protocol["runs"] == 10
    doc = TR.config_doc("ED-HNN", dataset, "node", cfg)["config"]
    assert doc["trainer"]["protocol"] == "allset" and doc["protocol"]["name"] == "allset"


def test_allsettransformer_values_are_its_run_script():
    """src/run_AllSetTransformer.sh (AllSet@6281a2f): Cora heads 4, MLP_hidden 256, Classifier_hidden 128; Cora-CA
    heads 8, 128, 128; 20 runs."""
    for dataset, (heads, hidden, dec) in {"cora": (4, 256, 128), "cora-ca": (8, 128, 128)}.items():
        cfg = _resolve("AllSetTransformer", dataset)
        assert (cfg.model["heads"], cfg.trainer.hidden, cfg.model["decoder_hidden"]) == (heads, hidden, dec)
        assert cfg.trainer.num_layers == 1 and cfg.model["decoder_num_layers"] == 1 and cfg.trainer.epochs == 500
        assert cfg.protocol["runs"] == 20 and "run_AllSetTransformer.sh:16" in cfg.protocol["runs_source"]
        assert "src/run_AllSetTransformer.sh" in cfg.sources["model.heads"]


def test_alldeepsets_gets_a_width_from_allsets_search_grid_not_the_config_default():
    """AllSet searched MLP_hidden over 64..512 (src/run_all_experiments.sh) and publishes no choice for AllDeepSets;
    at the DHG-Bench config's 64 its own SetGNN collapses on Cora under dropout 0.5 (40.62 / 44.31 / 61.45, seeds
    0-2, docs/reproduction.md), so the protocol takes 256, the Cora width its run script gives the same SetGNN."""
    for dataset in ("cora", "cora-ca"):
        cfg = _resolve("AllDeepSets", dataset)
        assert cfg.trainer.hidden == 256 and "run_all_experiments.sh:27" in cfg.sources["trainer.hidden"]
    assert TR.resolve_config("AllDeepSets", "node", "cora").trainer.hidden == 64  # without the protocol: unchanged


def test_a_model_without_tuned_values_gets_the_general_setting_as_a_recorded_fallback():
    cfg = _resolve("HGNN", "cora")
    assert cfg.protocol["setting"] == "fallback" and "no per-dataset values" in cfg.protocol["note"]
    assert (cfg.trainer.lr, cfg.trainer.weight_decay, cfg.trainer.epochs, cfg.trainer.dropout) == (1e-3, 0.0, 500, 0.5)
    assert "run_one_model.sh:19" in cfg.sources["trainer.epochs"]
    assert cfg.model["symmetric"] is True and "--HCHA_symdegnorm" in cfg.sources["model.symmetric"]
    assert cfg.sources["trainer.hidden"] == "HGNN.yaml [node.default]"  # AllSet publishes a grid, not a choice
    # a model the protocol has no flags for gets the general setting only; the command line still wins
    tf = _resolve("TF-HNN", "cora", "epochs=7")
    assert tf.protocol["setting"] == "fallback" and tf.trainer.epochs == 7 and tf.sources["trainer.epochs"] == "--set"
    assert tf.trainer.select == "best_val_first" and tf.protocol["runs"] == 10


def test_unknown_protocol_and_other_tasks_are_refused(tmp_path, capsys, monkeypatch, shared_data):
    monkeypatch.setenv("HYPERGVL_RAW_ROOT", str(shared_data))  # the CLI checks the raw files are there first
    for item in ("protocol=allsett", "trainer.protocol=dhg"):
        with pytest.raises(TR.ConfigError, match=r"unknown protocol .*valid protocols: allset"):
            TR.resolve_config("HGNN", "node", "cora", None, [item])
    with pytest.raises(TR.ConfigError, match="protocol 'allset' is defined for task.*node, not 'hyperedge'"):
        TR.resolve_config("HGNN", "hyperedge", "cora", None, ["protocol=allset"])
    # the tasks' own protocol key is still reached by its bare name
    assert TR.resolve_config("HGNN", "hyperedge", "cora", None, ["protocol=paper"]).task.protocol == "paper"
    rc = train_main(["--model", "HGNN", "--dataset", "cora", "--task", "node", "--out", str(tmp_path / "o"),
                  "--set", "protocol=nope"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: unknown protocol 'nope'")


def test_without_a_protocol_every_config_is_unchanged():
    """Independent truth: the shipped DHG-Bench points were resolved and written by the code before protocols
    existed (or since, then recording the later fields); today's resolution without a protocol serialises to the same
    JSON, byte for byte, once the fields added since (``FIELDS_ADDED_LATER``: node classification's ``self_loops``)
    hold their value from before. And no model on any task gets a protocol key."""
    points = sorted((ROOT / "benchmarks" / "results" / "points").glob("*/*/node/seed0.json"))
    assert len(points) >= 30
    for path in points:
        doc = json.loads(path.read_text())
        now = TR.config_doc(doc["model"], doc["dataset"], "node",
                            TR.resolve_config(doc["model"], "node", doc["dataset"]))["config"]
        assert json.dumps(now) == json.dumps(TR.fill_fields_added_later(doc["config"], now)), path
        # points written before the field record none; those written since (HJRL's Twitch row) record its value
        assert now["task"]["self_loops"] is True and doc["config"]["task"].get("self_loops", True) is True
    for model in MODELS:
        for task, dataset in (("node", "cora"), ("hyperedge", "cora"), ("graph", "rhg-3")):
            try:
                cfg = TR.resolve_config(model, task, dataset)
            except TR.ConfigError:  # a task the model refuses
                continue
            d = cfg.to_dict()
            assert "protocol" not in d and "protocol" not in d["trainer"] and cfg.protocol is None


def test_best_val_first_keeps_the_earliest_of_equal_validation_scores(tmp_path):
    """The same training (same seed) selected two ways: ``best_val_first`` is the first argmax of the recorded
    validation history (AllSet's Logger), ``best_val`` the last one (DHG-Bench's), and both report its test."""
    torch.set_num_threads(1)
    runs = {}
    for select in ("best_val", "best_val_first"):
        s = TR.run_experiment("MLP", "planted", "node", out=tmp_path / select, runs=1, data=planted(), progress=False,
                              overrides=["epochs=80", "hidden=8", "lr=0.02", f"select={select}"])
        runs[select] = s["runs"][0]
    hist = runs["best_val"]["history"]
    assert hist == runs["best_val_first"]["history"]
    vals = np.array([h["val"] for h in hist])
    best = np.flatnonzero(vals == vals.max())
    assert len(best) > 1  # the toy has ties, so the two rules differ here
    first, last = hist[best[0]], hist[best[-1]]
    assert runs["best_val_first"]["selected_epoch"] == first["epoch"]
    assert runs["best_val"]["selected_epoch"] == last["epoch"]
    assert runs["best_val_first"]["metrics"]["test"]["accuracy"] == first["test"]


def test_shipped_table_is_rebuilt_from_its_points(ra, tmp_path):
    out = tmp_path / "table.md"
    assert ra.main(["--points", str(ra.POINTS), "--table", str(out)]) == 0
    assert out.read_text() == ra.TABLE.read_text()
    rows = [ra.row_from_points(m, ds, ra.POINTS) for ds in ra.DATASETS for m in ra.MODELS]
    assert not [r for r in rows if r["status"] == "stale"]
    assert all(r["note"] != "cause not found" for r in rows if r["status"] == "miss")


def test_a_point_trained_under_another_configuration_is_stale(ra, tmp_path, monkeypatch):
    """A copied shipped point whose config says another learning rate reads stale; so does every shipped point of
    a row once the protocol's value changes (here its epochs), as reproduce_dhgbench's points_summary decides."""
    src = ra.POINTS / "HGNN" / "cora" / ra.FOLDER
    dest = tmp_path / "HGNN" / "cora" / ra.FOLDER
    shutil.copytree(src, dest)
    assert ra.row_from_points("HGNN", "cora", tmp_path)["status"] in ("pass", "miss")
    doc = json.loads((dest / "seed0.json").read_text())
    doc["config"]["trainer"]["lr"] = 0.5
    (dest / "seed0.json").write_text(json.dumps(doc))
    row = ra.row_from_points("HGNN", "cora", tmp_path)
    assert row["status"] == "stale" and "trainer.lr: saved 0.5, now 0.001" in row["note"]
    general = tuple(("trainer.epochs", 400, s) if k == "trainer.epochs" else (k, v, s)
                    for k, v, s in P.ALLSET_PROTOCOL.general)
    monkeypatch.setitem(P.PROTOCOLS, "allset", dataclasses.replace(P.ALLSET_PROTOCOL, general=general))
    row = ra.row_from_points("HGNN", "cora", ra.POINTS)
    assert row["status"] == "stale" and "trainer.epochs: saved 500, now 400" in row["note"]
