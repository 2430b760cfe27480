"""The claim table of DHG-Bench section 4.3 (hypergvl.models.study.robustness_claims) on hand-made accuracies whose
verdicts are known, and the shipped robustness points it is read from."""
import json
from pathlib import Path

import pytest

from hypergvl.models.study import robustness_claims as RC

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "space" / "seed_studies" / "robustness" / "points" / "cora"


def _acc(**kinds: dict) -> RC.Acc:
    return {k.replace("__", "_"): v for k, v in kinds.items()}


def _row(acc: RC.Acc, start: str) -> dict[str, str]:
    return next(r for r in RC.claim_rows("cora", acc) if r["quote"].startswith(start))


def test_seven_of_ten_under_seven_percent_counts_relative_drops():
    models = {f"M{i}": {0.0: 80.0, 0.9: 80.0 - d} for i, d in enumerate([1, 2, 3, 4, 5, 5.5, 5.5, 6, 7, 20])}
    # relative drops: 5.5/80 = 6.9% counts, 6/80 = 7.5% does not: 7 of 10 -> holds
    row = _row({"remove_incidence": models}, "For example, when 90%")
    assert row["verdict"] == RC.HOLDS and row["measured"].startswith("7 of 10 lose less than 7% (relative)")
    assert "M7 7.5%" in row["measured"] and "M9 25.0%" in row["measured"]
    models["M6"][0.9] = 74.0  # 6/80: now 6 of 10
    row = _row({"remove_incidence": models}, "For example, when 90%")
    assert row["verdict"] == RC.FAILS and row["measured"].startswith("6 of 10")


def test_spectral_against_spatial_and_the_four_named_methods():
    add = {"HGNN": {0.0: 80, 0.9: 70}, "PhenomNN": {0.0: 80, 0.9: 72}, "DPHGNN": {0.0: 70, 0.9: 60},
           "TF-HNN": {0.0: 80, 0.9: 75}, "HNHN": {0.0: 75, 0.9: 74}, "UniGCNII": {0.0: 80, 0.9: 79.5}}
    remove = {m: {0.0: v[0.0], 0.9: v[0.0] - 1} for m, v in add.items()}
    acc = _acc(add_incidence=add, remove_incidence=remove)
    named = _row(acc, "On Pubmed")
    assert named["verdict"] == RC.HOLDS and named["measured"].startswith("stated for Pubmed; on Cora:")
    # removal drops are equal for both groups, so "more vulnerable to structural perturbations" fails there
    assert _row(acc, "Spectral-based approaches")["verdict"] == RC.FAILS
    remove["HGNN"][0.9] = 60
    assert _row(acc, "Spectral-based approaches")["verdict"] == RC.HOLDS
    add["HNHN"][0.9] = 64  # a spatial model now loses more than TF-HNN (5): the four are not the most hurt
    assert _row(acc, "On Pubmed")["verdict"] == RC.FAILS


def test_shapes_noise_decelerates_masking_and_sparsity_accelerate():
    decel = {0.0: 80, 0.3: 60, 0.9: 50}  # 66.7 then 16.7 points per unit ratio
    accel = {0.0: 80, 0.3: 78, 0.9: 50}
    acc = _acc(feature_noise={"A": decel, "B": dict(decel)}, feature_mask={"A": accel, "B": dict(decel)},
               label_sparsity={"A": {0.0: 80, 0.4: 79, 0.8: 70}})
    assert _row(acc, "With increasing noise")["verdict"] == RC.HOLDS
    mask = _row(acc, "As the feature masking")
    assert mask["verdict"] == RC.FAILS and "accelerates for 1 of 2" in mask["measured"]  # 1 of 2 is not most
    assert _row(acc, "The impact of supervision sparsity")["verdict"] == RC.HOLDS
    assert _row(acc, "Compared to feature sparsity")["measured"].startswith(
        "accuracy under noise below accuracy under masking in 1 of 4")


def test_label_noise_linearity_and_against_sparsity():
    acc = _acc(label_noise={"A": {0.0: 80, 0.1: 75, 0.2: 70}, "B": {0.0: 80, 0.1: 80, 0.2: 70}},
               label_sparsity={"A": {0.0: 80, 0.8: 72}, "B": {0.0: 80, 0.8: 72}})
    lin = _row(acc, "Increasing label noise")
    assert lin["verdict"] == RC.FAILS and "R² >= 0.9 for 1 of 2" in lin["measured"]  # B's R² is 0.75
    assert _row(acc, "(same sentence)")["verdict"] == RC.HOLDS  # both lose 10 under noise, 8 under sparsity
    assert _row(acc, "As noise intensity increases")["verdict"] == RC.HOLDS


def test_claims_without_cells_or_about_other_sets_are_not_measurable():
    rows = RC.claim_rows("cora", {})
    assert all(r["verdict"] == RC.NOT_MEASURABLE for r in rows)
    actor = [r for r in rows if r["about"] == "Actor"]
    assert len(actor) == 2 and all(r["measured"] == "Actor not run here (Cora only)" for r in actor)


def test_the_clean_run_is_the_same_for_every_kind():
    """The report shares a model's ratio-0 cell across kinds: HGNN's six shipped ratio-0 cells (trained once per
    kind) are equal seed for seed, as the perturbations at ratio 0 are the identity."""
    cells = [json.loads(f.read_text()) for f in sorted(SHIPPED.glob("*/HGNN/r0.00.json"))]
    assert len(cells) == 6
    assert all(c["metrics"]["test"]["accuracy"]["values"] == cells[0]["metrics"]["test"]["accuracy"]["values"]
               for c in cells)


def test_shipped_robustness_points_name_a_clean_commit_or_are_hgnns_backfilled_cells():
    files = sorted(SHIPPED.rglob("*.json"))
    models = {f.relative_to(SHIPPED).parts[1] for f in files}
    assert len(models) == 10 and set(RC.NAMED_SPECTRAL) | {"SheafHyperGNN"} <= models
    for f in files:
        doc = json.loads(f.read_text())
        prov = doc["provenance"]
        if doc["model"] == "HGNN":
            assert doc["schema_version"] == 1 and prov["pre_provenance"] is True, f
        else:
            assert doc["status"] == "ok" and prov["dirty"] is False and len(prov["commit"]) == 40, f


@pytest.mark.parametrize("model", sorted(RC.CATEGORY))
def test_categories_name_registered_models(model):
    from hypergvl.models.nn import MODELS
    assert model in MODELS


def test_means_use_the_seeds_all_of_a_models_cells_share():
    def cell(seeds, values, status="ok"):
        return {"status": status, "seeds": seeds, "metrics": {"test": {"accuracy": {"values": values}}}}

    clean = cell([0, 1], [80.0, 70.0])
    by = {("cora", "remove_incidence"): {"A": {0.0: clean, 0.9: cell([0], [78.0])}},
          ("cora", "add_incidence"): {"A": {0.0: clean, 0.9: cell([0, 1], [60.0, 50.0])},
                                      "B": {0.0: cell([0], [75.0]), 0.5: cell([0], [1.0], "error")}},
          ("actor", "add_incidence"): {"A": {0.0: cell([3], [10.0])}}}
    acc, seeds = RC.accuracies(by, "cora")
    assert seeds == {"A": [0], "B": [0]}
    # seed 0 alone: the clean 80 (not the mean 75 of both seeds) against the perturbed 78 and 60
    assert acc == {"remove_incidence": {"A": {0.0: 80.0, 0.9: 78.0}}, "add_incidence": {"A": {0.0: 80.0, 0.9: 60.0},
                                                                                           "B": {0.0: 75.0}}}
