"""The shipped measurement of WiseHyGR's defaults (benchmarks/router_defaults.py) carries its provenance, was made
with the defaults the code has now, and is the table docs/router.md shows."""
import dataclasses
import json
from pathlib import Path

import pytest

from hypergvl.router.train import TrainConfig

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "router_defaults"


@pytest.mark.parametrize("name, profile", [("shuffled1", "shuffled:1"), ("default", "default")])
def test_shipped_default_training_results_are_current_and_documented(name, profile):
    r = json.loads((RESULTS / f"{name}.json").read_text())
    assert r["profile"] == profile and r["provenance"]["commit"] and r["provenance"]["dirty"] is False
    assert "benchmarks/router_defaults.py" in r["provenance"]["command"]
    defaults = dataclasses.asdict(TrainConfig(prm=r["train_config"]["prm"], out=r["train_config"]["out"]))
    assert r["train_config"] == defaults  # measured with the defaults as they are
    acc = r["accuracy"]
    row = next(line for line in (ROOT / "docs" / "router.md").read_text().splitlines()
               if line.startswith(f"| `{profile}`"))
    for key in ("router", "top", "rand", "profile best"):
        assert f"{acc[key]:.1f}" in row, (key, row)
    if profile.startswith("shuffled"):
        assert acc["router"] >= acc["top"] + 10.0
