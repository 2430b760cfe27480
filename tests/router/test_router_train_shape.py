"""``router/train.py::train`` in the HNN trainer's shape (resume, parameter groups, one epoch, finish) trains exactly
as the single function it replaced: on a tiny run (a 1-layer BERT, twelve meta problems, the default regression
target with its two learning rates, 3 epochs of 3 steps) the per-epoch losses and validation numbers and the saved
weights equal the numbers the old function gave (computed from it at commit 452434f, before the refactor, by this
test's ``_fingerprint``), and ``metrics.jsonl`` holds the history, written whole."""
import json

import pytest
import torch

from hypergvl.paper import PAPER_COMBINATIONS
from hypergvl.router import WiseHyGR
from hypergvl.router.prm import PRMConfig, build_prm
from hypergvl.router.train import TrainConfig, train
from hypergvl.tasks import generate_problem

from router_fixtures import write_run

#: from the function before the refactor (commit 452434f): per epoch (train_loss, val_loss, routed), then the sum
#: and the sum of squares of every saved weight, and the best epoch
BEFORE = {"epochs": [[0.6769095857938131, 0.6372815370559692, 50.0], [0.6250542203585306, 0.5930905342102051, 50.0],
                     [0.5865667263666788, 0.5774311423301697, 50.0]],
          "weight_sum": 83.76874346276136, "weight_sq": 499.56084231511073, "best_epoch": 2}


@pytest.fixture(scope="module")
def graded_prm(tmp_path_factory):
    """Twelve problems, the paper's 35 combinations right or wrong by a rule of task and pair (so the accuracies
    column varies): the pinned numbers are for those 35 labels, whatever else is registered."""
    tasks = ("HEC", "VC", "OSP", "Ne")
    rows = [generate_problem(t, seed=11, scale="small", index=i) for i, t in enumerate(tasks * 3)]
    problems = {r["id"]: r for r in rows}
    base = tmp_path_factory.mktemp("graded")
    run = write_run(base / "run", problems, lambda m, c: (len(c[0]) + len(c[1]) + len(problems[m]["task"])) % 3 == 0,
                    pairs=PAPER_COMBINATIONS)
    build_prm(PRMConfig((str(run),), str(base / "prm")), progress=False)
    return base / "prm"


def _fingerprint(prm, backbone, out) -> dict:
    state = train(TrainConfig(prm=str(prm), out=str(out), backbone=str(backbone), epochs=3, batch_size=4,
                              max_length=64, min_steps=None), progress=False)
    weights = WiseHyGR.from_pretrained(out).model.state_dict()
    return {"epochs": [[h["train_loss"], h["val_loss"], h["routed"]] for h in state["history"]],
            "weight_sum": float(sum(w.double().sum() for w in weights.values())),
            "weight_sq": float(sum((w.double() ** 2).sum() for w in weights.values())),
            "best_epoch": state["best"]["epoch"], "history": state["history"]}


def test_the_trainer_gives_the_numbers_of_the_function_it_replaced(graded_prm, tiny_backbone, tmp_path):
    got = _fingerprint(graded_prm, tiny_backbone, tmp_path / "r")
    assert got["best_epoch"] == BEFORE["best_epoch"]
    flat = [x for epoch in got["epochs"] for x in epoch]
    assert len(got["epochs"]) == len(BEFORE["epochs"])
    assert flat == pytest.approx([x for epoch in BEFORE["epochs"] for x in epoch], rel=1e-5, abs=1e-7)
    assert got["weight_sum"] == pytest.approx(BEFORE["weight_sum"], rel=1e-6)
    assert got["weight_sq"] == pytest.approx(BEFORE["weight_sq"], rel=1e-6)
    lines = (tmp_path / "r" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == got["history"]
