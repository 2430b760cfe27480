"""The real offline end-to-end run (slow; the command documented in docs/router.md, at the same size): PRM from
baseline:symbolic on a build, a MiniLM router trained on it, routed evaluation on fresh problems of another seed.
The router must beat Rand and come within 3 points of Top on the held-out problems."""
import json

import pytest

from hypergvl.evaluators.harness import evaluate_model
from hypergvl.builder import BuildConfig, build
from hypergvl.router.prm import PRMConfig, build_prm
from hypergvl.router.train import TrainConfig, train

pytestmark = pytest.mark.slow


def test_symbolic_router_beats_rand_and_is_within_3_points_of_top(tmp_path):
    build(BuildConfig(out=tmp_path / "prm_src", per_task=20, seed=101), progress=False)
    build(BuildConfig(out=tmp_path / "fresh", per_task=20, seed=202), progress=False)
    evaluate_model(str(tmp_path / "prm_src"), "baseline:symbolic", tmp_path / "sym", batch_size=64, progress=False)
    build_prm(PRMConfig((str(tmp_path / "sym"),), str(tmp_path / "prm")), progress=False)
    train(TrainConfig(prm=str(tmp_path / "prm"), out=str(tmp_path / "router"), max_length=256, lr=2e-4, head_lr=None,
                      epochs=5, min_steps=None, batch_size=16, target="best", header=False), progress=False)  # docs/router.md's run
    acc = {}
    for key, spec in (("router", f"router:{tmp_path / 'router'}"), ("rand", "rand:0"), ("top", "top")):
        res = evaluate_model(str(tmp_path / "fresh"), "baseline:symbolic", tmp_path / key, routing=spec,
                             progress=False)
        acc[key] = res["scores"]["accuracy"]
    (tmp_path / "acc.json").write_text(json.dumps(acc))
    assert acc["router"] > acc["rand"] and acc["router"] >= acc["top"] - 3.0, acc
