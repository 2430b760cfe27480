"""The tensor models (EHNN, T-HyperGNN) refuse hypergraph classification (DHG-Bench appendix C.1): the registry's
refusal, its validation at registration, and the trainer refusing with the reason before writing anything."""
from __future__ import annotations

import pytest
import torch

from hypergvl.models.nn import MODELS
from hypergvl.models.nn.registry import task_refusal


@pytest.mark.parametrize("name", ["EHNN", "T-HyperGNN"])
def test_tensor_models_refuse_hypergraph_classification(name):
    refusal = task_refusal(name, "graph")
    assert refusal and "appendix C.1" in refusal and name in refusal
    assert task_refusal(name, "node") is None and task_refusal(name, "hyperedge") is None


def test_only_the_tensor_models_refuse_a_task():
    from hypergvl.models.tasks import TASKS
    refusing = {n for n, cls in MODELS.items() if getattr(cls, "unsupported_tasks", {})}
    assert refusing == {"EHNN", "T-HyperGNN"}
    assert all(set(MODELS[n].unsupported_tasks) <= set(TASKS) for n in refusing)  # names of real tasks


def test_register_model_rejects_a_malformed_refusal():
    from hypergvl.models.nn import register_model

    class Bad(torch.nn.Module):
        paper = "x http://example.org"
        unsupported_tasks = {"graph": ""}

        def __init__(self, in_channels, hidden_channels, out_channels, num_layers=2, dropout=0.5):
            super().__init__()
    with pytest.raises(TypeError, match="unsupported_tasks"):
        register_model("__bad_refusal__")(Bad)
    assert "__bad_refusal__" not in MODELS


def test_trainer_refuses_with_the_reason(tmp_path, capsys, monkeypatch, shared_data):
    monkeypatch.setenv("HYPERGVL_RAW_ROOT", str(shared_data))  # the CLI checks the raw files are there first
    from hypergvl.models.train import main as train_main
    code = train_main(["--model", "EHNN", "--dataset", "rhg-10", "--task", "graph", "--runs", "1",
                    "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "does not support task 'graph'" in err and "appendix C.1" in err
    assert not (tmp_path / "out").exists()  # refused before anything was written or loaded
