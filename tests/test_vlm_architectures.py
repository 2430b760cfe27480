"""The architecture matrix: every popular open VLM family (and two text-only LLMs) through ``hypergvl evaluate
--model hf:DIR``, from tiny checkpoints built with each architecture's real processor class (``tiny_models``).

For each: the same responses at batch size 1 and 2 (a processor that read a batch's images as one sample's would
fail or answer otherwise), exactly one BOS token in every prompt where the tokenizer has one (templates that write
BOS themselves were tokenised with a second), and the image placeholder tokens in the input ids of every sample."""
from __future__ import annotations

import json

import pytest

from tiny_models import ARCHITECTURES

OPTIONS = {"device": "cpu", "dtype": "float32", "max_new_tokens": 4}
SELECTION = {"tasks": ["VC", "HEC"], "text_reps": ["n_set"], "limit": 3}


def _records(folder) -> list[dict]:
    return sorted((json.loads(x) for x in (folder / "samples.jsonl").read_text().splitlines()), key=lambda r: r["id"])


def _samples(small_build, vision: bool):
    """The prompts and images the harness sends for SELECTION."""
    from hypergvl.evaluators.adapters import Sample
    from hypergvl.build_folder import load_rows
    from hypergvl.evaluators.selection import Selection, plan

    rows = load_rows(str(small_build))
    vqa, indices, _, _ = plan(rows, Selection(tuple(SELECTION["tasks"]), tuple(SELECTION["text_reps"]),
                                              ("enc_hy",) if vision else ("none",), SELECTION["limit"]))
    return [Sample(vqa[k]["prompt"], vqa[k]["image"]) for k in indices]


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_architecture_batches_alike_with_one_bos_and_its_image_tokens(name, tiny_architectures, small_build,
                                                                      tmp_path):
    from hypergvl.evaluators.adapters import make_adapter
    from hypergvl.evaluators.harness import evaluate_model

    folder, arch = tiny_architectures[name]
    adapter = make_adapter(f"hf:{folder}", **OPTIONS)
    assert adapter.kind == ("vision" if arch.vision else "text")
    bos = adapter.tokenizer.bos_token_id
    for sample in _samples(small_build, arch.vision):
        (ids,) = adapter.prepare([sample])["input_ids"]
        if bos is not None:
            assert (ids == bos).sum().item() == 1, "one BOS per prompt"
        if arch.vision:
            assert (ids == adapter.processor.image_token_id).sum().item() >= 1, "the image tokens are in the input"

    visual = ["enc_hy"] if arch.vision else ["none"]
    results = {}
    for batch in (1, 2):
        out = tmp_path / f"b{batch}"
        results[batch] = evaluate_model(str(small_build), f"hf:{folder}", out, visual_reps=visual, batch_size=batch,
                                        model_options=OPTIONS, progress=False, **SELECTION)
    one, two = _records(tmp_path / "b1"), _records(tmp_path / "b2")
    assert len(one) == 3 and [r["response"] for r in one] == [r["response"] for r in two]
    assert len({r["response"] for r in one}) > 1, "an input-blind model proves nothing"
    assert all(r["finish_reason"] in ("stop", "length") for r in one)
    res = results[2]
    assert res["truncated_share"] == sum(r["finish_reason"] == "length" for r in two) / 3
    assert res["generation"]["max_new_tokens"] == 4 and res["generation"]["repetition_penalty"] == 1.0


def test_greedy_overrides_the_checkpoints_penalty_and_checkpoint_keeps_it(tiny_architectures, small_build, tmp_path):
    """Every tiny checkpoint ships repetition_penalty=1.05 in its generation_config."""
    from hypergvl.evaluators.adapters import make_adapter

    folder, _ = tiny_architectures["qwen2"]
    greedy = make_adapter(f"hf:{folder}", **OPTIONS)
    kept = make_adapter(f"hf:{folder}", generation_config="checkpoint", **OPTIONS)
    assert greedy.generation_settings()["repetition_penalty"] == 1.0 and greedy.generation.do_sample is False
    assert kept.generation_settings()["repetition_penalty"] == 1.05
    assert kept.generation_settings()["generation_config"] == "checkpoint"


def test_a_text_checkpoint_without_a_chat_template_gets_the_raw_prompt(tiny_architectures, tmp_path):
    """A base LLM (no chat template): the prompt as it is, with the tokenizer's own BOS, once."""
    import shutil

    from hypergvl.evaluators.adapters import Sample, make_adapter

    folder = shutil.copytree(tiny_architectures["llama"][0], tmp_path / "base")
    (folder / "chat_template.jinja").unlink()
    adapter = make_adapter(f"hf:{folder}", **OPTIONS)
    assert not adapter.chat_template
    ids = adapter.prepare([Sample("Q: How many vertices are in the hypergraph?")])["input_ids"][0].tolist()
    tok = adapter.tokenizer
    plain = tok("Q: How many vertices are in the hypergraph?", add_special_tokens=False)["input_ids"]
    assert ids == [tok.bos_token_id] + plain
    assert len(adapter.generate([Sample("v0 v1")])) == 1
