"""``hypergvl router study`` at toy size: in-domain (fresh build, four routings, Figure 5 PNG) and node classification
(baseline:neighbors on the real Cora files, three routings, Figure 6 PNG, resumable)."""
import json

from PIL import Image

from hypergvl.router.study import main, router_seeds


def test_in_domain_study_routes_fresh_problems_and_refuses_the_prm_seed(tiny_router, tmp_path, capsys):
    assert router_seeds(str(tiny_router)) == {0}  # the small build the PRM came from
    assert main(["in-domain", "--model", "baseline:symbolic", "--router", str(tiny_router), "--per-task", "2",
                 "--seed", "0", "--tasks", "VC", "--out", str(tmp_path / "same"), "--no-progress"]) == 2
    assert "seed the router's PRM was built from" in capsys.readouterr().err
    out = tmp_path / "study"
    assert main(["in-domain", "--model", "baseline:symbolic", "--router", str(tiny_router), "--per-task", "2",
                 "--seed", "77", "--tasks", "VC", "HEC", "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    s = json.loads((out / "in_domain.json").read_text())
    assert set(s["policies"]) == {"router", "rand", "top", "oracle"} and s["tasks"] == ["VC", "HEC"]
    for key, v in s["policies"].items():
        assert v["runs"][0]["num_samples"] == 4 and set(v["per_task"]) == {"VC", "HEC"}
        assert s["policies"]["oracle"]["accuracy"]["mean"] >= v["accuracy"]["mean"]
    assert s["policies"]["top"]["accuracy"] == {"mean": 100.0, "std": 0.0}
    assert s["policies"]["rand"]["routing"] == "rand:0" and s["provenance"]["seeds"] == [77, 0]
    assert sum(n for per in s["router_choices"].values() for c in per.values() for n in c.values()) == 4
    assert json.loads((out / "data" / ".hypergvl-build.json").read_text())["seed"] == 77
    assert Image.open(out / "in_domain.png").size[0] > 500


def test_node_classification_study_with_the_neighbour_baseline(tiny_router, shared_data, tmp_path):
    out = tmp_path / "nc"
    args = ["node-classification", "--model", "baseline:neighbors", "--router", str(tiny_router), "--datasets",
            "cora", "citeseer", "--num-nodes", "6", "--trials", "2", "--raw-root", str(shared_data), "--out",
            str(out), "--no-progress"]
    assert main(args) == 0
    s = json.loads((out / "node_classification.json").read_text())
    recs = [json.loads(l) for l in (out / "samples.jsonl").read_text().splitlines()]
    assert len(recs) == 6 * 2 * 3 and "citeseer" in s["skipped"] and not s["images"]
    acc = s["accuracy"]["cora"]
    # the neighbour vote reads the same neighbours from every text representation: routing cannot change it
    assert acc["router"]["trials"] == acc["rand"]["trials"] == acc["top"]["trials"]
    assert {r["text_rep"] for r in recs if r["policy"] == "top"} == {"n_set"}
    assert all(r["num_nodes"] <= 40 and r["parsed"] == r["response"] for r in recs)
    assert Image.open(out / "node_classification.png").size[0] > 500
    assert main(args) == 0  # a rerun answers nothing again
    assert len((out / "samples.jsonl").read_text().splitlines()) == len(recs)


def test_node_classification_sends_the_chosen_picture_when_asked(tiny_router, shared_data, tmp_path):
    out = tmp_path / "img"
    assert main(["node-classification", "--model", "baseline:neighbors", "--router", str(tiny_router), "--datasets",
                 "cora-ca", "--num-nodes", "2", "--trials", "1", "--raw-root", str(shared_data), "--images", "yes",
                 "--out", str(out), "--no-progress"]) == 0
    recs = [json.loads(l) for l in (out / "samples.jsonl").read_text().splitlines()]
    assert json.loads((out / "node_classification.json").read_text())["images"] is True
    assert {r["visual_rep"] for r in recs if r["policy"] == "top"} == {"enc_hy"}
    assert all(r["visual_rep"] is not None for r in recs)
