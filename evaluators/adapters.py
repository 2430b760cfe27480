"""Model adapters: the one interface the LVLM harness calls to get answers from a model.

HyperGVL sec. 3.1: "For all LVLMs, the zero-shot setting is adopted for the evaluation. The LVLMs are required to
provide answers in predefined formats" (the prompts of appendix E.2). An adapter turns a batch of samples (prompt
text plus the rendered hypergraph image) into raw response strings, which ``evaluators/hypergvl_accuracy`` then
verifies. Decoding is greedy so that a run can be repeated.

Adapters are built from a spec ``"<prefix>:<rest>"`` by :func:`make_adapter`; prefixes are registered with
:func:`register_adapter` (a factory ``(rest: str, **options) -> Adapter``):

* ``hf:<model id or local path>`` -- transformers ``AutoProcessor`` + ``AutoModelForImageTextToText``, the model's
  chat template, greedy decoding, left-padded batches (:class:`HFConfig` options).
* ``openai:<model>`` -- any OpenAI-compatible chat-completions server (OpenAI, vLLM, SGLang, ...), image sent as a
  base64 PNG data URL, concurrent requests, bounded retries with exponential backoff and jitter
  (:class:`OpenAIConfig` options). Standard library HTTP only.

Example (``image`` a PIL image or PNG bytes)::

    adapter = make_adapter("openai:gpt-4o", base_url="http://127.0.0.1:8000/v1", concurrency=8)
    adapter.generate([Sample("How many vertices are in the hypergraph? List the answer after “Ans:”.", image)])
    # -> ['Ans: 7']
"""
from __future__ import annotations

import base64
import copy
import dataclasses
import http.client
import io
import json
import logging
import os
import random
import socket
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

__all__ = ["Sample", "ModelInfo", "Adapter", "AdapterError", "ADAPTERS", "register_adapter", "make_adapter",
           "HFConfig", "HFAdapter", "OpenAIConfig", "OpenAIAdapter"]

logger = logging.getLogger(__name__)

MODEL_TYPES = ("open", "closed", "baseline")


@dataclass(frozen=True)
class Sample:
    """One query: the prompt text (representation + question) and the image, if the representation has one."""

    prompt: str
    image: Any = None  # PIL.Image.Image, encoded image bytes (PNG, JPEG, ...), or None


@dataclass(frozen=True)
class ModelInfo:
    """What a results file records about the model that produced the responses."""

    name: str
    type: str  # "open" (weights available), "closed" (API only) or "baseline"
    revision: str | None = None
    num_parameters: int | None = None

    def __post_init__(self):
        if self.type not in MODEL_TYPES:
            raise ValueError(f"model type must be one of {', '.join(MODEL_TYPES)}, got {self.type!r}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class Adapter(Protocol):
    def generate(self, batch: list[Sample]) -> list[str]:
        """One raw response per sample, in order."""

    def info(self) -> ModelInfo:
        """Name, revision, type and parameter count (when known) of the model."""


class AdapterError(RuntimeError):
    """A model could not produce a response (server error after all retries, bad request, ...)."""


AdapterFactory = Callable[..., Adapter]
ADAPTERS: dict[str, AdapterFactory] = {}


def register_adapter(prefix: str) -> Callable[[AdapterFactory], AdapterFactory]:
    """Register ``factory(rest: str, **options) -> Adapter`` for specs ``"<prefix>:<rest>"``."""
    if not prefix or ":" in prefix:
        raise ValueError(f"an adapter prefix must be a non-empty name without ':', got {prefix!r}")

    def decorator(factory: AdapterFactory) -> AdapterFactory:
        if prefix in ADAPTERS:
            raise ValueError(f"adapter prefix {prefix!r} registered twice")
        ADAPTERS[prefix] = factory
        return factory

    return decorator


def make_adapter(spec: str, **options) -> Adapter:
    """Build the adapter for ``spec`` (``"hf:Qwen/Qwen2.5-VL-7B-Instruct"``, ``"openai:gpt-4o"``, ...)."""
    prefix, _, rest = spec.partition(":")
    if prefix not in ADAPTERS:
        choices = ", ".join(f"{name}:..." for name in sorted(ADAPTERS))
        raise ValueError(f"unknown model spec {spec!r}; the prefix must be one of: {choices}")
    return ADAPTERS[prefix](rest, **options)


def make_config(cls: type, options: dict):
    """``cls(**options)``, turning an unknown option into a ValueError that lists the valid ones."""
    valid = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(f"unknown option(s) {', '.join(unknown)} for {cls.__name__}; valid: {', '.join(valid)}")
    return cls(**options)


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _pil_image(image):
    """A sample's image as an RGB PIL image."""
    from PIL import Image

    if isinstance(image, (bytes, bytearray)):
        image = Image.open(io.BytesIO(image))
    if not isinstance(image, Image.Image):
        raise ValueError(f"a sample image must be a PIL image, encoded image bytes or None, got {type(image).__name__}")
    return image.convert("RGB")


def _png_bytes(image) -> bytes:
    if isinstance(image, (bytes, bytearray)) and bytes(image[:8]) == b"\x89PNG\r\n\x1a\n":
        return bytes(image)
    buffer = io.BytesIO()
    _pil_image(image).save(buffer, format="PNG")
    return buffer.getvalue()


def _check_batch(batch) -> None:
    for i, sample in enumerate(batch):
        if not isinstance(sample, Sample) or not isinstance(sample.prompt, str):
            raise ValueError(f"batch[{i}] must be a Sample with a string prompt, got {sample!r:.80}")


# ============================================================================================ transformers
@dataclass(frozen=True)
class HFConfig:
    """Options of the ``hf:`` adapter."""

    max_new_tokens: int = 512
    batch_size: int = 8  # samples per forward pass; a longer batch is split
    device: str | None = None  # "cuda", "cuda:1", "cpu", ...; None = cuda when available, else cpu
    dtype: str = "auto"  # "auto" (the checkpoint's), "float32", "bfloat16" or "float16"
    revision: str | None = None  # a Hub branch, tag or commit

    def __post_init__(self):
        _check(_is_int(self.max_new_tokens) and self.max_new_tokens > 0, "max_new_tokens must be a positive integer")
        _check(_is_int(self.batch_size) and self.batch_size > 0, "batch_size must be a positive integer")
        _check(self.dtype in ("auto", "float32", "bfloat16", "float16"),
               f"dtype must be auto, float32, bfloat16 or float16, got {self.dtype!r}")
        _check(self.device is None or isinstance(self.device, str), "device must be a string such as 'cuda' or 'cpu'")


def _looks_like_path(model: str) -> bool:
    """A spec meant as a local folder (absolute, ./, ../ or ~), as opposed to a Hub id such as ``org/name``."""
    return Path(model).expanduser().is_absolute() or model.startswith((".", "~"))


def _load_error(model: str, exc: Exception) -> ValueError:
    """One line for a checkpoint that cannot be loaded: a missing folder, an unknown or unreachable Hub id."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if _looks_like_path(model):
        return ValueError(f"hf:{model}: no such model folder")
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes")
    where = "offline (HF_HUB_OFFLINE=1), and it is not in the local cache" if offline else first
    return ValueError(f"hf:{model}: not a local model folder and not a loadable Hub model: {where}")


def model_kind(model: str, revision: str | None = None) -> str:
    """``"vision"`` for an image-text-to-text checkpoint, ``"text"`` for a causal LM (no vision tower).

    Anything else (an encoder, a seq2seq model, ...) is refused with a message naming the architecture."""
    from transformers import AutoConfig
    from transformers.models.auto import modeling_auto

    if _looks_like_path(model) and not Path(model).expanduser().is_dir():
        raise ValueError(f"hf:{model}: no such model folder")
    try:
        config = AutoConfig.from_pretrained(model, revision=revision)
    except (OSError, ValueError) as exc:
        raise _load_error(model, exc) from None
    if config.model_type in modeling_auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES:
        return "vision"
    if config.model_type in modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "text"
    architectures = ", ".join(config.architectures or [config.model_type])
    raise ValueError(f"hf:{model}: {architectures} is neither an image-text-to-text model nor a causal language "
                     "model; the harness needs one of these")


class HFAdapter:
    """A transformers model prompted through its own chat template: an image-text-to-text LVLM, or a text-only LLM.

    An LVLM's user turn is the image (when the sample has one) followed by the prompt text. A checkpoint without a
    vision tower (a causal LM, e.g. the LLM behind an LVLM: HyperGVL sec. 3.3) is loaded with
    ``AutoModelForCausalLM`` and gets the prompt text alone; it refuses samples with images. Decoding is greedy
    (``do_sample=False``); batches are left-padded so every sequence continues from its last prompt token.

    :meth:`prepare` (chat template, image decoding, the processor) is CPU work the harness runs ahead in its
    prefetch threads; :meth:`run` is the model's part. ``generate(batch) == run(prepare(batch))``.
    """

    def __init__(self, model: str, config: HFConfig):
        import torch
        from transformers import AutoModelForCausalLM, AutoModelForImageTextToText, AutoProcessor, AutoTokenizer

        self.name, self.config = model, config
        self.kind = model_kind(model, config.revision)
        self.device = torch.device(config.device or ("cuda" if torch.cuda.is_available() else "cpu"))
        dtype = config.dtype if config.dtype == "auto" else getattr(torch, config.dtype)
        try:
            if self.kind == "vision":
                self.processor = AutoProcessor.from_pretrained(model, revision=config.revision)
                tokenizer = self.processor.tokenizer
                auto = AutoModelForImageTextToText
            else:
                self.processor = tokenizer = AutoTokenizer.from_pretrained(model, revision=config.revision)
                auto = AutoModelForCausalLM
            self.model = auto.from_pretrained(model, revision=config.revision, dtype=dtype)
        except OSError as exc:
            raise _load_error(model, exc) from None
        tokenizer.padding_side = "left"
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.tokenizer = tokenizer
        self.model.to(self.device).eval()
        generation = copy.deepcopy(self.model.generation_config)
        generation.update(do_sample=False, temperature=None, top_p=None, top_k=None,
                          max_new_tokens=config.max_new_tokens, pad_token_id=tokenizer.pad_token_id)
        self.generation = generation

    @property
    def takes_images(self) -> bool:
        return self.kind == "vision"

    def _prompt(self, sample: Sample) -> str:
        if self.kind == "text":
            if sample.image is not None:
                raise ValueError(f"hf:{self.name} is a text-only model and takes no images; evaluate it with "
                                 "--visual-reps none")
            messages = [{"role": "user", "content": sample.prompt}]
        else:
            content = [{"type": "image"}] if sample.image is not None else []
            content.append({"type": "text", "text": sample.prompt})
            messages = [{"role": "user", "content": content}]
        return self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def prepare(self, batch: list[Sample]) -> list:
        """Tokenised, padded model inputs (CPU tensors), one per chunk of ``config.batch_size`` samples."""
        _check_batch(batch)
        size, chunks = self.config.batch_size, []
        for start in range(0, len(batch), size):
            chunk = batch[start:start + size]
            texts = [self._prompt(sample) for sample in chunk]
            if self.kind == "text":
                chunks.append(self.tokenizer(texts, padding=True, return_tensors="pt", add_special_tokens=False))
                continue
            images = [_pil_image(sample.image) for sample in chunk if sample.image is not None]
            chunks.append(self.processor(text=texts, images=images or None, padding=True, return_tensors="pt"))
        return chunks

    def run(self, prepared: list) -> list[str]:
        import torch

        out = []
        for inputs in prepared:
            inputs = inputs.to(self.device)
            if "pixel_values" in inputs:
                inputs["pixel_values"] = inputs["pixel_values"].to(self.model.dtype)
            with torch.inference_mode():
                output = self.model.generate(**inputs, generation_config=self.generation)
            out += self.tokenizer.batch_decode(output[:, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
        return out

    def generate(self, batch: list[Sample]) -> list[str]:
        return self.run(self.prepare(batch))

    def info(self) -> ModelInfo:
        revision = self.config.revision or getattr(self.model.config, "_commit_hash", None)
        return ModelInfo(self.name, "open", revision, sum(p.numel() for p in self.model.parameters()))


@register_adapter("hf")
def _hf_adapter(rest: str, **options) -> HFAdapter:
    if not rest:
        raise ValueError("the hf: spec needs a model id or a local folder, e.g. hf:Qwen/Qwen2.5-VL-7B-Instruct")
    return HFAdapter(rest, make_config(HFConfig, options))


# ============================================================================================ OpenAI-compatible
@dataclass(frozen=True)
class OpenAIConfig:
    """Options of the ``openai:`` adapter. The API key is read from ``OPENAI_API_KEY`` (none for local servers)."""

    base_url: str = "https://api.openai.com/v1"
    max_tokens: int = 1024
    temperature: float = 0.0  # 0 = greedy, as for the open models
    concurrency: int = 4  # requests in flight at once
    timeout: float = 120.0  # seconds per request
    max_retries: int = 5  # after the first attempt, on HTTP 429 / 5xx, dropped connections and timeouts
    backoff: float = 1.0  # seconds before the first retry; doubles each retry, with +-50% jitter
    max_backoff: float = 60.0
    seed: int = 0  # of the jitter
    model_type: str = "closed"  # "open" when the server runs an open-weight model (vLLM, SGLang, ...)

    def __post_init__(self):
        _check(isinstance(self.base_url, str) and self.base_url.startswith(("http://", "https://")),
               f"base_url must start with http:// or https://, got {self.base_url!r}")
        _check(_is_int(self.max_tokens) and self.max_tokens > 0, "max_tokens must be a positive integer")
        _check(_is_number(self.temperature) and self.temperature >= 0, "temperature must be a number >= 0")
        _check(_is_int(self.concurrency) and self.concurrency > 0, "concurrency must be a positive integer")
        _check(_is_number(self.timeout) and self.timeout > 0, "timeout must be a positive number of seconds")
        _check(_is_int(self.max_retries) and self.max_retries >= 0, "max_retries must be an integer >= 0")
        _check(_is_number(self.backoff) and self.backoff >= 0, "backoff must be a number of seconds >= 0")
        _check(_is_number(self.max_backoff) and self.max_backoff >= 0, "max_backoff must be a number >= 0")
        _check(_is_int(self.seed), "seed must be an integer")
        _check(self.model_type in ("open", "closed"), f"model_type must be open or closed, got {self.model_type!r}")


_IMAGE_SLOT = "@@hypergvl-image@@"  # the image part precedes the text, so its slot is the first occurrence
_RETRYABLE = (http.client.HTTPException, OSError)  # refused, reset or dropped connections, timeouts


class OpenAIAdapter:
    """Chat completions over HTTP: one request per sample, ``concurrency`` at a time, order preserved."""

    def __init__(self, model: str, config: OpenAIConfig):
        self.model, self.config = model, config
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        parts = urllib.parse.urlsplit(self.url)
        self._scheme, self._netloc = parts.scheme, parts.netloc
        self._path = parts.path + (f"?{parts.query}" if parts.query else "")
        self._local = threading.local()  # one kept-alive connection per request thread
        self.headers = {"Content-Type": "application/json"}
        api_key = os.environ.get("OPENAI_API_KEY")
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self._rng = random.Random(config.seed)
        self._lock = threading.Lock()
        self._served_model: str | None = None

    @property
    def concurrency(self) -> int:
        """Requests kept in flight: the harness runs a sliding window of this many (``evaluators.pipeline``)."""
        return self.config.concurrency

    def _payload(self, sample: Sample) -> bytes:
        """The JSON request body. The base64 image is spliced in after encoding the rest: its alphabet needs no JSON
        escaping, and scanning tens of kilobytes for escapes would be most of the harness's work per request."""
        content: list[dict] = []  # without an image, a text-only message: the one text part
        if sample.image is not None:
            content.append({"type": "image_url", "image_url": {"url": _IMAGE_SLOT}})
        content.append({"type": "text", "text": sample.prompt})
        body = json.dumps({"model": self.model, "messages": [{"role": "user", "content": content}],
                           "max_tokens": self.config.max_tokens, "temperature": self.config.temperature}).encode()
        if sample.image is None:
            return body
        head, tail = body.split(_IMAGE_SLOT.encode(), 1)
        return b"".join((head, b"data:image/png;base64,", base64.b64encode(_png_bytes(sample.image)), tail))

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        with self._lock:
            jitter = 0.5 + self._rng.random()
        delay = min(self.config.max_backoff, self.config.backoff * 2 ** attempt) * jitter
        if retry_after is not None and retry_after.strip().isdigit():
            delay = max(delay, float(retry_after))
        return min(delay, self.config.max_backoff)

    def _connection(self) -> http.client.HTTPConnection:
        """This thread's kept-alive connection to the server (opened on first use, and again after a failure)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            conn = self._local.conn = cls(self._netloc, timeout=self.config.timeout)
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _exchange(self, payload: bytes) -> tuple[int, bytes, str | None]:
        """One POST on this thread's connection: (status, body, Retry-After). A kept-alive connection the server has
        closed meanwhile is reopened once without counting as an attempt."""
        for fresh in (False, True):
            conn = self._connection()
            reused = conn.sock is not None
            try:
                if conn.sock is None:  # http.client sends headers and body apart: without TCP_NODELAY the body waits
                    conn.connect()     # for the server's delayed ACK of the headers (about 40 ms a request)
                    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conn.request("POST", self._path, body=payload, headers=self.headers)
                response = conn.getresponse()
                body = response.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self._drop_connection()
                if reused and not fresh:
                    continue
                raise
            except BaseException:
                self._drop_connection()
                raise
            if response.will_close:
                self._drop_connection()
            return response.status, body, response.getheader("Retry-After")
        raise AssertionError("unreachable")

    def _post(self, payload: bytes) -> dict:
        last_error = ""
        attempts = self.config.max_retries + 1
        for attempt in range(attempts):
            retry_after = None
            try:
                status, body, retry_after = self._exchange(payload)
            except _RETRYABLE as error:
                last_error = f"{type(error).__name__}: {getattr(error, 'reason', error)}"
            else:
                if 200 <= status < 300:
                    try:
                        return json.loads(body)
                    except ValueError:
                        raise AdapterError(f"{self.url} answered with non-JSON: {body[:200]!r}") from None
                detail = body[:300].decode("utf-8", "replace")
                if status != 429 and status < 500:
                    raise AdapterError(f"{self.url} refused the request: HTTP {status} {detail}")
                last_error = f"HTTP {status} {detail}"
            if attempt + 1 < attempts:
                delay = self._delay(attempt, retry_after)
                logger.warning("%s: %s; retry %d/%d in %.2f s", self.url, last_error, attempt + 1,
                               self.config.max_retries, delay)
                time.sleep(delay)
        raise AdapterError(f"{self.url}: no response after {attempts} attempts; last error: {last_error}")

    def _one(self, payload: bytes) -> str:
        data = self._post(payload)
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise AdapterError(f"{self.url} answered without choices[0].message.content: {str(data)[:200]}") from None
        if isinstance(data.get("model"), str):
            self._served_model = data["model"]
        if isinstance(content, list):  # some servers return content parts
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        return content if isinstance(content, str) else ""

    def prepare(self, batch: list[Sample]) -> list[bytes]:
        """The request bodies (image as a base64 PNG data URL): CPU work the harness does ahead of the requests."""
        _check_batch(batch)
        return [self._payload(sample) for sample in batch]

    def run(self, payloads: list[bytes]) -> list[str]:
        """One response per request body, in order, ``concurrency`` requests at a time."""
        if len(payloads) <= 1:
            return [self._one(p) for p in payloads]
        with ThreadPoolExecutor(max_workers=min(self.config.concurrency, len(payloads))) as pool:
            return list(pool.map(self._one, payloads))

    def generate(self, batch: list[Sample]) -> list[str]:
        return self.run(self.prepare(batch))

    def info(self) -> ModelInfo:
        """The revision is the model name the server reported (e.g. a dated snapshot), once it has answered."""
        return ModelInfo(self.model, self.config.model_type, self._served_model, None)


@register_adapter("openai")
def _openai_adapter(rest: str, **options) -> OpenAIAdapter:
    if not rest:
        raise ValueError("the openai: spec needs a model name, e.g. openai:gpt-4o")
    return OpenAIAdapter(rest, make_config(OpenAIConfig, options))
