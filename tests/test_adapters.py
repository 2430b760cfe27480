"""Model adapters: the registry, the transformers adapter on a real (tiny, locally built) vision-language model,
and the OpenAI-compatible adapter against a local chat-completions server that misbehaves on purpose."""
from __future__ import annotations

import base64
import io
import json
import socket
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from PIL import Image

from evaluators.adapters import (ADAPTERS, AdapterError, ModelInfo, OpenAIConfig, Sample, make_adapter,
                                 register_adapter)


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
        ADAPTERS.pop("echo-test")
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
    ("hf:some/model", {"temperature": 0.7}, r"unknown option\(s\) temperature"),
])
def test_bad_options_are_errors(spec, options, message):
    with pytest.raises(ValueError, match=message):
        make_adapter(spec, **options)


def test_model_info_type_checked():
    with pytest.raises(ValueError, match="open, closed, baseline"):
        ModelInfo("m", "proprietary")


# ============================================================================================ hf: tiny LLaVA
@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory):
    """A randomly initialised LLaVA (CLIP vision tower + Llama) with a byte-level BPE tokenizer trained here,
    saved like a Hub checkpoint: nothing is downloaded."""
    torch = pytest.importorskip("torch")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (CLIPImageProcessor, CLIPVisionConfig, LlamaConfig, LlavaConfig,
                              LlavaForConditionalGeneration, LlavaProcessor, PreTrainedTokenizerFast)

    specials = ["<pad>", "<s>", "</s>", "<image>", "<|user|>", "<|assistant|>"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        ["How many vertices are in the hypergraph? List the answer after Ans: v0 v1 e0 {v1,v2}"] * 3,
        trainers.BpeTrainer(vocab_size=320, special_tokens=specials, show_progress=False,
                            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token="<pad>", bos_token="<s>", eos_token="</s>")
    template = ("{% for m in messages %}<|{{ m['role'] }}|>{% for c in m['content'] %}{% if c['type'] == 'image' %}"
                "<image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endfor %}"
                "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(size={"shortest_edge": 16}, crop_size={"height": 16, "width": 16}),
        tokenizer=tokenizer, patch_size=8, vision_feature_select_strategy="default", chat_template=template,
        num_additional_image_tokens=1)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                       num_attention_heads=2, image_size=16, patch_size=8, projection_dim=16,
                                       initializer_range=0.5),
        text_config=LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256,
                                initializer_range=0.5, pad_token_id=tokenizer.pad_token_id,
                                bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"), vision_feature_select_strategy="default",
        vision_feature_layer=-1, initializer_range=0.5)
    torch.manual_seed(0)  # large init so that the output depends on the input
    folder = tmp_path_factory.mktemp("tiny-llava")
    LlavaForConditionalGeneration(config).save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def hf_adapter(tiny_vlm):
    return make_adapter(f"hf:{tiny_vlm}", max_new_tokens=6, device="cpu", dtype="float32", batch_size=3)


def _greedy_by_hand(adapter, sample: Sample, steps: int) -> str:
    """Greedy decoding of one unpadded sample with plain forward passes (no generate, no padding)."""
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
            if token == processor.tokenizer.eos_token_id:
                break
            ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    return processor.tokenizer.decode(new, skip_special_tokens=True)


SAMPLES = [
    Sample("How many vertices are in the hypergraph?", _image(0)),
    Sample("List the answer after Ans: v0 v1 e0 {v1,v2} and more words to pad", _image(1, (64, 20))),
    Sample("v0", None),  # a text-only sample inside an image batch
    Sample("How many hyperedges?", _image(3)),
]


def test_hf_batched_greedy_equals_unpadded_greedy_by_hand(hf_adapter):
    batched = hf_adapter.generate(SAMPLES)  # two chunks (batch_size 3), left-padded, mixed image / no image
    assert len(batched) == len(SAMPLES) and all(isinstance(text, str) for text in batched)
    assert len(set(batched)) > 1, "the tiny model must be input-sensitive for this test to mean anything"
    assert batched == [_greedy_by_hand(hf_adapter, sample, 6) for sample in SAMPLES]
    assert batched == hf_adapter.generate(SAMPLES)  # deterministic


def test_hf_image_bytes_same_as_pil(hf_adapter):
    buffer = io.BytesIO()
    _image(0).save(buffer, format="PNG")
    as_bytes = hf_adapter.generate([Sample(SAMPLES[0].prompt, buffer.getvalue())])
    assert as_bytes == hf_adapter.generate([SAMPLES[0]])


def test_hf_dtype_option(tiny_vlm):
    import torch

    adapter = make_adapter(f"hf:{tiny_vlm}", max_new_tokens=3, device="cpu", dtype="bfloat16")
    assert adapter.model.dtype == torch.bfloat16  # the option reaches from_pretrained; generation runs in it
    out = adapter.generate(SAMPLES[:2])
    assert len(out) == 2 and all(isinstance(text, str) for text in out)


def test_hf_info_and_bad_sample(hf_adapter, tiny_vlm):
    info = hf_adapter.info()
    assert info.name == str(tiny_vlm) and info.type == "open"
    assert info.num_parameters == sum(p.numel() for p in hf_adapter.model.parameters()) > 0
    with pytest.raises(ValueError, match=r"batch\[0\] must be a Sample"):
        hf_adapter.generate(["just a string"])
    with pytest.raises(ValueError, match="PIL image, encoded image bytes or None"):
        hf_adapter.generate([Sample("x", np.zeros((4, 4, 3)))])


# ============================================================================================ openai: local server
class ChatServer(ThreadingHTTPServer):
    """A chat-completions endpoint. ``script`` holds the next actions ("ok", 429, 500, 400, "drop", "slow",
    "garbage"); when it is empty every request succeeds with ``echo:<prompt text>``."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), ChatHandler)
        self.script: deque = deque()
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.in_flight = self.max_in_flight = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class ChatHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass

    def _done(self):
        """Leave the in-flight count once, before the reply is written: the client may send its next request as
        soon as it has the reply, before this thread would reach ``finally``."""
        if getattr(self, "_counted", False):
            server: ChatServer = self.server
            with server.lock:
                server.in_flight -= 1
            self._counted = False

    def _send(self, status: int, body: bytes, headers=()):
        self._done()
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        server: ChatServer = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with server.lock:
            server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
            action = server.script.popleft() if server.script else "ok"
            server.in_flight += 1
            server.max_in_flight = max(server.max_in_flight, server.in_flight)
        self._counted = True
        try:
            prompt = next(part["text"] for part in body["messages"][0]["content"] if part["type"] == "text")
            if action == "drop":
                self.close_connection = True  # no status line at all: the client sees a dropped connection
                return
            if action == "slow":  # longer than the client's timeout, then hang up
                time.sleep(1.0)
                self.close_connection = True
                return
            if action == "garbage":
                self._send(200, b"<html>not json</html>")
            elif isinstance(action, int):
                self._send(action, json.dumps({"error": {"message": f"status {action}"}}).encode(),
                           [("Retry-After", "0")] if action == 429 else [])
            else:
                time.sleep(0.01 * (len(prompt) % 5))  # finish out of order
                reply = {"model": body["model"] + "-2024-08-06",
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": f"echo:{prompt}"}}]}
                self._send(200, json.dumps(reply).encode())
        finally:
            self._done()


@pytest.fixture
def server():
    chat = ChatServer()
    thread = threading.Thread(target=chat.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield chat
    chat.shutdown()
    chat.server_close()


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


def test_openai_unreachable_server_fails_fast_and_clearly():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    adapter = make_adapter("openai:m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=2, backoff=0.01,
                           max_backoff=0.02, timeout=1.0)
    start = time.monotonic()
    with pytest.raises(AdapterError, match=r"no response after 3 attempts; last error: URLError.*refused"):
        adapter.generate([Sample("hello")])
    assert time.monotonic() - start < 5


def test_openai_backoff_is_exponential_jittered_and_capped():
    adapter = make_adapter("openai:m", **{"backoff": 1.0, "max_backoff": 8.0, "seed": 3})
    delays = [adapter._delay(attempt, None) for attempt in range(6)]
    for attempt, delay in enumerate(delays):
        assert 0.5 * min(8.0, 2 ** attempt) <= delay <= min(8.0, 1.5 * 2 ** attempt)
    assert adapter._delay(0, "5") == 5.0 and adapter._delay(0, "100") == 8.0  # Retry-After honoured, capped
    again = make_adapter("openai:m", backoff=1.0, max_backoff=8.0, seed=3)
    assert [again._delay(a, None) for a in range(6)] == delays  # the jitter is seeded
    assert isinstance(adapter.config, OpenAIConfig)
