"""The metrics published as Hub evaluate metric Spaces (``hypergvl push-metrics``): pushed to the fake Hub, each
Space holds what a Gradio Space and ``evaluate.load`` need, declares the package its script imports, and, downloaded
back file by file, loads with evaluate and computes the same scores as the shipped metric."""
import ast
from importlib import metadata

import evaluate
import pytest
from fake_hub import FakeHub
from packaging.requirements import Requirement

from hypergvl.cli import UserError
from hypergvl.evaluators import METRIC_NAMES, metric_path
from hypergvl.evaluators.metric_spaces import push_metrics


def _download(hub, repo_id, dest):
    dest.mkdir()
    for item in hub.list_repo_tree(repo_id, repo_type="space", recursive=True):
        if item.path != ".gitattributes":
            (dest / item.path).write_bytes(open(hub.hf_hub_download(repo_id, item.path, repo_type="space"), "rb")
                                           .read())
    return dest


def test_each_metric_becomes_a_space_that_loads_and_scores_as_shipped(tmp_path, small_build):
    hub = FakeHub(root=tmp_path / "hub")
    assert push_metrics("org", api=hub) == [f"org/{n}" for n in METRIC_NAMES]
    for name in METRIC_NAMES:
        files = hub.files(f"org/{name}", repo_type="space")
        assert set(files) == {".gitattributes", f"{name}.py", "README.md", "app.py", "requirements.txt"}
        card = files["README.md"].decode()
        front = card.split("\n---\n")[0]
        assert "sdk: gradio" in front and "app_file: app.py" in front and "- metric" in front
        assert card.count("sdk:") == 1
        assert f'evaluate.load("org/{name}")' in files["app.py"].decode()
        ast.parse(files["app.py"])
        reqs = [Requirement(line) for line in files["requirements.txt"].decode().splitlines()]
        # the package the script imports is declared, and this environment satisfies every line
        assert [r.name for r in reqs] == ["hypergvl", "evaluate"]
        assert all(r.specifier.contains(metadata.version(r.name)) for r in reqs)
        assert "from hypergvl." in files[f"{name}.py"].decode()
    # pushing again updates the same Spaces (one commit each, none when nothing changed)
    assert push_metrics("org", api=hub, requirement="hypergvl==0.1.0")
    # the Space as evaluate sees it: a folder named after the metric holding its script
    folder = _download(hub, "org/hypergvl_accuracy", tmp_path / "hypergvl_accuracy")
    from datasets import load_dataset

    ds = load_dataset(str(small_build), split="test").select(range(40))
    predictions = [f"Ans: {a}" if i % 3 else "no idea" for i, a in enumerate(ds["answer"])]
    ours = evaluate.load(str(folder)).compute(predictions=predictions, references=ds["reference"])
    shipped = evaluate.load(metric_path("hypergvl_accuracy")).compute(predictions=predictions,
                                                                     references=ds["reference"])
    assert ours == shipped and 0 < ours["accuracy"] < 100


def test_push_refuses_a_bad_org_and_an_offline_hub_before_any_call(monkeypatch):
    hub = FakeHub()
    with pytest.raises(UserError, match="no slash"):
        push_metrics("org/name", api=hub)
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(UserError, match="--out DIR"):
        push_metrics("org")
    assert not hub.calls


def test_push_metrics_out_writes_loadable_folders(tmp_path):
    from hypergvl.cli import main

    assert main(["push-metrics", "org", "--names", "hyperedge_prediction", "--out", str(tmp_path / "s")]) == 0
    m = evaluate.load(str(tmp_path / "s" / "hyperedge_prediction"))
    assert m.compute(prediction_scores=[0.9, 0.1, 0.8, 0.3], references=[1, 0, 1, 0])
