"""Model adapters: the registry, the transformers adapter on a real (tiny, locally built) vision-language model,
and the OpenAI-compatible adapter against a local chat-completions server that misbehaves on purpose."""
from __future__ import annotations

import base64
import io
import socket
import time

import numpy as np
import pytest
from PIL import Image

from chat_server import serve

from hypergvl.evaluators.adapters import (ADAPTERS, DEFAULT_MAX_NEW_TOKENS, AdapterError, Generation, ModelInfo,
                                 OpenAIConfig, Sample, finish_reason, make_adapter, register_adapter)


def _image(seed: int, size=(40, 30)) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))


# ============================================================================================ registry
def test_unknown_prefix_lists_choices():
    with pytest.raises(ValueError, match=r"hf:\.\.\., openai:\.\.\.") as error:
        make_adapter("gemini:flash")
    assert "gemini:flash" in str(error.value)


def test_register_adapter_open_and_duplicates_rejected():
    @register_adapter("echo-test")
    def _echo(rest, **options):
        class Echo:
            def generate(self, batch):
                return [f"{rest}:{s.prompt}" for s in batch]

            def info(self):
                return ModelInfo(rest, "baseline")

        return Echo()

    try:
        adapter = make_adapter("echo-test:x")
        assert adapter.generate([Sample("a"), Sample("b")]) == ["x:a", "x:b"]
        assert adapter.info().to_dict() == {"name": "x", "type": "baseline", "revision": None, "num_parameters": None}
        with pytest.raises(ValueError, match="registered twice"):
            register_adapter("echo-test")(_echo)
    finally:
        ADAPTERS.unregister("echo-test")
    with pytest.raises(ValueError, match="without ':'"):
        register_adapter("a:b")


@pytest.mark.parametrize("spec, options, message", [
    ("openai:gpt-4o", {"concurency": 4}, r"unknown option\(s\) concurency .*valid: base_url"),
    ("openai:gpt-4o", {"concurrency": 0}, "concurrency must be a positive integer"),
    ("openai:gpt-4o", {"base_url": "ftp://x"}, "base_url must start with http"),
    ("openai:gpt-4o", {"max_retries": -1}, "max_retries"),
    ("openai:gpt-4o", {"model_type": "baseline"}, "model_type"),
    ("openai:", {}, "needs a model name"),
    ("hf:", {}, "needs a model id"),
    ("hf:some/model", {"dtype": "int8"}, "dtype must be"),
    ("hf:some/model", {"max_new_tokens": 0}, "max_new_tokens"),
    ("hf:some/model", {"generation_config": "sampled"}, "generation_config must be one of greedy, checkpoint"),
    ("hf:some/model", {"batch_size": 3}, r"unknown option\(s\) batch_size"),  # the caller's batch is the batch
    ("hf:some/model", {"temperature": 0.7}, r"unknown option\(s\) temperature"),
])
def test_bad_options_are_errors(spec, options, message):
    with pytest.raises(ValueError, match=message):
        make_adapter(spec, **options)


def test_generation_is_a_string_that_says_why_it_stopped():
    import pickle

    cut = Generation("Ans: 3? no wait", "length")
    assert cut == "Ans: 3? no wait" and isinstance(cut, str) and cut.finish_reason == "length"
    assert finish_reason(cut) == "length" and finish_reason("a plain baseline answer") == "stop"
    assert Generation("x").finish_reason == "stop"
    again = pickle.loads(pickle.dumps(cut))  # crosses prefetch and accelerate's gather_object
    assert again == cut and again.finish_reason == "length"
    with pytest.raises(ValueError, match="finish_reason must be one of stop, length"):
        Generation("x", "content_filter")


def test_one_default_token_limit_for_both_adapters():
    from hypergvl.evaluators.adapters import HFConfig

    assert HFConfig().max_new_tokens == OpenAIConfig().max_tokens == DEFAULT_MAX_NEW_TOKENS >= 4096


def test_model_info_type_checked():
    with pytest.raises(ValueError, match="open, closed, baseline"):
        ModelInfo("m", "proprietary")


# ============================================================================================ hf: tiny LLaVA
@pytest.fixture(scope="module")
def hf_adapter(tiny_llava):
    return make_adapter(f"hf:{tiny_llava}", max_new_tokens=6, device="cpu", dtype="float32")


def _greedy_by_hand(adapter, sample: Sample, steps: int, eos: int | None = None) -> tuple[str, str, list[int]]:
    """Greedy decoding of one unpadded sample with plain forward passes (no generate, no padding): the text,
    ``"stop"`` if it ended with EOS (the tokenizer's, or ``eos``), ``"length"`` if it ran ``steps`` tokens, and the
    token ids."""
    import torch

    processor, model = adapter.processor, adapter.model
    content = ([{"type": "image"}] if sample.image is not None else []) + [{"type": "text", "text": sample.prompt}]
    text = processor.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True,
                                         tokenize=False)
    images = [sample.image.convert("RGB")] if sample.image is not None else None
    inputs = processor(text=[text], images=images, return_tensors="pt")
    ids, new = inputs["input_ids"], []
    with torch.no_grad():
        for _ in range(steps):
            extra = {"pixel_values": inputs["pixel_values"]} if images else {}
            token = int(model(input_ids=ids, attention_mask=torch.ones_like(ids), **extra).logits[0, -1].argmax())
            new.append(token)
            if token == (processor.tokenizer.eos_token_id if eos is None else eos):
                return processor.tokenizer.decode(new, skip_special_tokens=True), "stop", new
            ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    return processor.tokenizer.decode(new, skip_special_tokens=True), "length", new


SAMPLES = [
    Sample("How many vertices are in the hypergraph?", _image(0)),
    Sample("List the answer after Ans: v0 v1 e0 {v1,v2} and more words to pad", _image(1, (64, 20))),
    Sample("v0", None),  # a text-only sample inside an image batch
    Sample("How many hyperedges?", _image(3)),
]


def test_hf_batched_greedy_equals_unpadded_greedy_by_hand(hf_adapter):
    batched = hf_adapter.generate(SAMPLES)  # one forward batch, left-padded, mixed image / no image
    assert len(batched) == len(SAMPLES) and all(isinstance(text, str) for text in batched)
    assert len(set(batched)) > 1, "the tiny model must be input-sensitive for this test to mean anything"
    by_hand = [_greedy_by_hand(hf_adapter, sample, 6)[:2] for sample in SAMPLES]
    assert [(str(g), g.finish_reason) for g in batched] == by_hand
    assert batched == hf_adapter.generate(SAMPLES)  # deterministic


def test_hf_finish_reason_stop_at_eos_and_length_at_the_limit(tiny_llava):
    """The finish reason follows the tokens: a sequence that generated EOS stopped, one that ran max_new_tokens
    without it was cut. The tiny model's EOS is set to the token it picks first for one sample, so that sample
    stops at once while another runs to the limit; the expected reasons come from greedy decoding by hand."""
    adapter = make_adapter(f"hf:{tiny_llava}", max_new_tokens=4, device="cpu", dtype="float32")
    assert all(g.finish_reason == "length" for g in adapter.generate(SAMPLES)), "random weights emit no EOS"
    eos = _greedy_by_hand(adapter, SAMPLES[0], 4)[2][0]
    expected = [_greedy_by_hand(adapter, s, 4, eos)[1] for s in SAMPLES]
    assert expected[0] == "stop" and "length" in expected
    adapter.generation.eos_token_id = eos
    adapter._eos = {eos}
    out = adapter.generate(SAMPLES)
    assert [g.finish_reason for g in out] == expected


def test_hf_image_bytes_same_as_pil(hf_adapter):
    buffer = io.BytesIO()
    _image(0).save(buffer, format="PNG")
    as_bytes = hf_adapter.generate([Sample(SAMPLES[0].prompt, buffer.getvalue())])
    assert as_bytes == hf_adapter.generate([SAMPLES[0]])


def test_hf_dtype_option(tiny_llava):
    import torch

    adapter = make_adapter(f"hf:{tiny_llava}", max_new_tokens=3, device="cpu", dtype="bfloat16")
    assert adapter.model.dtype == torch.bfloat16  # the option reaches from_pretrained; generation runs in it
    out = adapter.generate(SAMPLES[:2])
    assert len(out) == 2 and all(isinstance(text, str) for text in out)


def test_hf_info_and_bad_sample(hf_adapter, tiny_llava):
    info = hf_adapter.info()
    assert info.name == str(tiny_llava) and info.type == "open"
    assert info.num_parameters == sum(p.numel() for p in hf_adapter.model.parameters()) > 0
    with pytest.raises(ValueError, match=r"batch\[0\] must be a Sample"):
        hf_adapter.generate(["just a string"])
    with pytest.raises(ValueError, match="PIL image, encoded image bytes or None"):
        hf_adapter.generate([Sample("x", np.zeros((4, 4, 3)))])


# ============================================================================================ openai: local server
@pytest.fixture
def server():
    with serve() as chat:
        yield chat


def _openai(server, **options):
    options = {"base_url": server.base_url, "backoff": 0.01, "max_backoff": 0.05, "timeout": 5.0, **options}
    return make_adapter("openai:gpt-4o", **options)


def test_openai_request_format_image_and_order(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    image = _image(7)
    samples = [Sample(f"question {i} " + "x" * i, image if i % 2 == 0 else None) for i in range(12)]
    adapter = _openai(server, concurrency=4, max_tokens=77)
    assert adapter.generate(samples) == [f"echo:{s.prompt}" for s in samples]
    assert 1 < server.max_in_flight <= 4  # concurrent, but bounded
    assert {r["path"] for r in server.requests} == {"/v1/chat/completions"}
    assert all("Authorization" not in r["headers"] for r in server.requests)
    by_prompt = {r["body"]["messages"][0]["content"][-1]["text"]: r["body"] for r in server.requests}
    body = by_prompt[samples[0].prompt]
    assert body["model"] == "gpt-4o" and body["max_tokens"] == 77 and body["temperature"] == 0.0
    image_part, text_part = body["messages"][0]["content"]
    assert image_part["type"] == "image_url" and text_part == {"type": "text", "text": samples[0].prompt}
    url = image_part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    decoded = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert decoded.format == "PNG" and np.array_equal(np.asarray(decoded), np.asarray(image))
    assert len(by_prompt[samples[1].prompt]["messages"][0]["content"]) == 1  # no image part without an image
    assert adapter.info() == ModelInfo("gpt-4o", "closed", "gpt-4o-2024-08-06", None)


def test_openai_jpeg_bytes_are_sent_as_png(server):
    buffer = io.BytesIO()
    _image(8).save(buffer, format="JPEG")
    _openai(server).generate([Sample("q", buffer.getvalue())])
    url = server.requests[0]["body"]["messages"][0]["content"][0]["image_url"]["url"]
    assert base64.b64decode(url.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


def test_openai_finish_reason_is_the_servers(server):
    server.script.extend(["ok", "length"])
    adapter = _openai(server, concurrency=1)
    done, cut = adapter.generate([Sample("a"), Sample("b")])
    assert (done, done.finish_reason) == ("echo:a", "stop") and (cut, cut.finish_reason) == ("echo:b", "length")
    assert server.requests[0]["body"]["max_tokens"] == DEFAULT_MAX_NEW_TOKENS
    assert adapter.generation_settings() == {"max_tokens": DEFAULT_MAX_NEW_TOKENS, "temperature": 0.0}


def test_openai_api_key_from_environment(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    _openai(server).generate([Sample("q")])
    assert server.requests[0]["headers"]["Authorization"] == "Bearer sk-test-123"


def test_openai_retries_429_500_dropped_and_slow(server):
    server.script.extend([429, 500, "drop", "slow", 503])
    adapter = _openai(server, max_retries=5, timeout=0.5)
    assert adapter.generate([Sample("hello")]) == ["echo:hello"]
    assert len(server.requests) == 6  # five failures, then success


def test_openai_gives_up_after_bounded_retries(server):
    server.script.extend([500] * 10)
    with pytest.raises(AdapterError, match=r"no response after 3 attempts; last error: HTTP 500"):
        _openai(server, max_retries=2).generate([Sample("hello")])
    assert len(server.requests) == 3


@pytest.mark.parametrize("action, message", [(400, "refused the request: HTTP 400"),
                                             (401, "refused the request: HTTP 401"),
                                             ("garbage", "non-JSON")])
def test_openai_client_errors_are_not_retried(server, action, message):
    server.script.append(action)
    with pytest.raises(AdapterError, match=message):
        _openai(server, max_retries=3).generate([Sample("hello")])
    assert len(server.requests) == 1


def test_openai_no_server_is_refused_without_retries_until_it_has_answered(monkeypatch):
    """A refused connection before the server ever answered means nothing listens there: one attempt, no retry,
    an error naming the URL; once the server has answered, a refused connection (a restart) is retried."""
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    adapter = make_adapter("openai:m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=2, backoff=0.01,
                           max_backoff=0.02, timeout=1.0)
    slept = []
    monkeypatch.setattr(time, "sleep", slept.append)
    with pytest.raises(AdapterError, match=rf"127.0.0.1:{port}/v1/chat/completions: no server there "
                                           r"\(ConnectionRefusedError.*start it or fix --base-url"):
        adapter.generate([Sample("hello")])
    assert slept == []  # no retry
    adapter._answered = True  # as after a first answer
    with pytest.raises(AdapterError, match=r"no response after 3 attempts; last error: ConnectionRefusedError"):
        adapter.generate([Sample("hello")])
    assert len(slept) == 2


def test_openai_backoff_is_exponential_jittered_and_capped():
    adapter = make_adapter("openai:m", **{"backoff": 1.0, "max_backoff": 8.0, "seed": 3})
    delays = [adapter._delay(attempt, None) for attempt in range(6)]
    for attempt, delay in enumerate(delays):
        assert 0.5 * min(8.0, 2 ** attempt) <= delay <= min(8.0, 1.5 * 2 ** attempt)
    assert adapter._delay(0, "5") == 5.0 and adapter._delay(0, "100") == 8.0  # Retry-After honoured, capped
    again = make_adapter("openai:m", backoff=1.0, max_backoff=8.0, seed=3)
    assert [again._delay(a, None) for a in range(6)] == delays  # the jitter is seeded
    assert isinstance(adapter.config, OpenAIConfig)


def test_hf_reasoning_template_gives_the_opening_tag_back(tiny_llm, tmp_path):
    """A chat template that opens ``<think>`` in its generation prompt (Qwen3, DeepSeek-R1) makes the model start
    inside the block: the stored response carries the tag, so a response cut before ``</think>`` is unfinished
    reasoning (unparsed), never read as an answer; a template without it leaves responses as generated."""
    import shutil

    from transformers import AutoTokenizer

    from hypergvl.answers import parse_int

    folder = tmp_path / "reasoning-llm"
    shutil.copytree(tiny_llm, folder)
    tok = AutoTokenizer.from_pretrained(folder)
    tok.chat_template = tok.chat_template.replace("<|assistant|>", "<|assistant|><think>\n")
    tok.save_pretrained(folder)
    text = [Sample(prompt="How many vertices? Ans:")]
    plain = make_adapter(f"hf:{tiny_llm}", max_new_tokens=3, device="cpu", dtype="float32").generate(text)
    reasoning = make_adapter(f"hf:{folder}", max_new_tokens=3, device="cpu", dtype="float32").generate(text)
    assert not str(plain[0]).startswith("<think>")
    assert str(reasoning[0]).startswith("<think>") and reasoning[0].finish_reason == "length"
    assert parse_int(str(reasoning[0]) + " maybe Ans: 3? no wait") is None
