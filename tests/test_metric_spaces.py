"""The metrics published as Hub evaluate metric Spaces (``hypergvl push-metrics``): pushed to the fake Hub, each
Space holds what a Gradio Space and ``evaluate.load`` need, declares the package its script imports, and, downloaded
back file by file, loads with evaluate and computes the same scores as the shipped metric. Written with the
defaults, each folder installs the package from the wheel beside its app, and its app, started as a Space starts it,
answers ``compute`` through its widget's API as ``evaluate.load`` of the folder does."""
import ast
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import evaluate
import pytest
from fake_hub import FakeHub
from packaging.requirements import Requirement

from hypergvl.cli import UserError
from hypergvl.evaluators import METRIC_NAMES, metric_path
from hypergvl.evaluators.metric_spaces import push_metrics
from space_process import started


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    from hypergvl.wheel import build_wheel

    return build_wheel(tmp_path_factory.mktemp("dist"))


def _download(hub, repo_id, dest):
    dest.mkdir()
    for item in hub.list_repo_tree(repo_id, repo_type="space", recursive=True):
        if item.path != ".gitattributes":
            (dest / item.path).write_bytes(open(hub.hf_hub_download(repo_id, item.path, repo_type="space"), "rb")
                                           .read())
    return dest


def test_each_metric_becomes_a_space_that_loads_and_scores_as_shipped(tmp_path, small_build, wheel):
    hub = FakeHub(root=tmp_path / "hub")
    assert push_metrics("org", api=hub, wheel=wheel) == [f"org/{n}" for n in METRIC_NAMES]
    for name in METRIC_NAMES:
        files = hub.files(f"org/{name}", repo_type="space")
        assert set(files) == {".gitattributes", f"{name}.py", "README.md", "app.py", "requirements.txt", wheel.name}
        card = files["README.md"].decode()
        front = card.split("\n---\n")[0]
        assert "sdk: gradio" in front and "app_file: app.py" in front and "- metric" in front
        assert f"sdk_version: {metadata.version('gradio')}" in front and card.count("sdk:") == 1
        assert "gr.inputs" not in files["app.py"].decode() and f'"{name}.py"' in files["app.py"].decode()
        ast.parse(files["app.py"])
        # the package the script imports is the wheel uploaded beside the app, named by its relative path
        first, *rest = files["requirements.txt"].decode().splitlines()
        assert first == f"./{wheel.name}" and files[wheel.name] == wheel.read_bytes()
        reqs = [Requirement(line) for line in rest]
        assert [r.name for r in reqs] == ["evaluate"]
        assert all(r.specifier.contains(metadata.version(r.name)) for r in reqs)
        assert "from hypergvl." in files[f"{name}.py"].decode()
    # pushing again updates the same Spaces; a requirement line instead of the wheel ships no wheel
    assert push_metrics("org", api=hub, requirement="hypergvl @ git+https://example.org/hypergvl@abc")
    files = hub.files("org/hypergvl_accuracy", repo_type="space")
    assert files["requirements.txt"].decode().splitlines()[0] == "hypergvl @ git+https://example.org/hypergvl@abc"
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
    with pytest.raises(UserError, match="not both"):
        push_metrics("org", api=hub, requirement="hypergvl", wheel="x.whl")
    assert not hub.calls


def _inputs(name, small_build):
    """(the app's boxes, the same as compute's keyword arguments) for one call of metric ``name``."""
    if name == "hypergvl_accuracy":
        from datasets import load_dataset

        ds = load_dataset(str(small_build), split="test").select(range(40))
        kwargs = {"predictions": [f"Ans: {a}" if i % 3 else "no idea" for i, a in enumerate(ds["answer"])],
                  "references": list(ds["reference"])}
        reps = {"scales": list(ds["scale"])}  # the rows' group labels, a keyword argument beside the columns
        return [json.dumps(kwargs["predictions"]), json.dumps(kwargs["references"]), json.dumps(reps)], \
            {**kwargs, **reps}
    columns = {"hyperedge_prediction": {"prediction_scores": [0.9, 0.2, 0.8, 0.3, 0.6], "references": [1, 0, 1, 0, 0]},
               "hypergraph_classification": {"predictions": [0, 1, 2, 1, 0, 2], "references": [0, 1, 1, 1, 0, 2]},
               "hypergraph_fairness": {"predictions": [1, 0, 1, 1, 0, 0], "references": [1, 0, 0, 1, 0, 1],
                                       "sensitive_attributes": [0, 0, 0, 1, 1, 1]}}[name]
    return [json.dumps(v) for v in columns.values()] + ["{}"], columns


@pytest.mark.slow
def test_each_written_space_installs_from_its_folder_and_its_app_answers_compute(tmp_path, small_build):
    """``push-metrics --out`` with its defaults, then each folder as the Hub runs it: pip installs the package line
    of its requirements.txt from the folder (the wheel beside the app; the other lines, evaluate, are this
    environment's), and ``python app.py`` starts in a fresh process whose ``hypergvl`` is that install; its
    ``/compute`` endpoint answers as ``evaluate.load(folder).compute`` does, and a bad input comes back as the
    metric's error."""
    from hypergvl.cli import main

    assert main(["push-metrics", "org", "--out", str(tmp_path / "spaces")]) == 0
    for name in METRIC_NAMES:
        folder = tmp_path / "spaces" / name
        package = (folder / "requirements.txt").read_text().splitlines()[0]
        assert package.startswith("./hypergvl-") and (folder / package).is_file()
        site = tmp_path / f"site-{name}"
        subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", "--target",
                        str(site), package], cwd=folder, check=True, timeout=600)
        assert (site / "hypergvl" / "tasks").is_dir()
        boxes, kwargs = _inputs(name, small_build)
        expected = evaluate.load(str(folder)).compute(**kwargs)
        with started(folder, pythonpath=site) as client:
            assert client.predict(*boxes, api_name="/compute") == json.loads(json.dumps(expected))
            bad = ["[1, 0]"] + ["[1]"] * (len(boxes) - 2) + ["{}"]  # columns of different lengths
            with pytest.raises(Exception, match="ValueError"):
                client.predict(*bad, api_name="/compute")
    # what the apps imported: the package the Space installed, not this checkout's
    where = subprocess.run([sys.executable, "-c", "import hypergvl.tasks; print(hypergvl.tasks.__file__)"],
                           cwd=folder, env={**os.environ, "PYTHONPATH": str(site)}, capture_output=True, text=True,
                           check=True).stdout
    assert Path(where.strip()).is_relative_to(site)


def test_push_metrics_out_writes_loadable_folders(tmp_path):
    from hypergvl.cli import main

    assert main(["push-metrics", "org", "--names", "hyperedge_prediction", "--out", str(tmp_path / "s")]) == 0
    m = evaluate.load(str(tmp_path / "s" / "hyperedge_prediction"))
    assert m.compute(prediction_scores=[0.9, 0.1, 0.8, 0.3], references=[1, 0, 1, 0])
