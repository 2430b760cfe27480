"""Model adapters: the one interface the LVLM harness calls to get answers from a model.

HyperGVL sec. 3.1: "For all LVLMs, the zero-shot setting is adopted for the evaluation. The LVLMs are required to
provide answers in predefined formats" (the prompts of appendix E.2). An adapter turns a batch of samples (prompt
text plus the rendered hypergraph image) into raw response strings, which ``evaluators/hypergvl_accuracy`` then
verifies. Decoding is greedy so that a run can be repeated. A response may be a :class:`Generation` (a ``str`` that
also says whether it stopped by itself or was cut at the token limit, ``finish_reason`` ``"stop"`` / ``"length"``),
so that a run shows how many answers the limit cut off; both model adapters default to
:data:`DEFAULT_MAX_NEW_TOKENS` new tokens, room for a reasoning model's thinking before its answer.

Adapters are built from a spec ``"<prefix>:<rest>"`` by :func:`make_adapter`; prefixes are registered with
:func:`register_adapter` (a factory ``(rest: str, **options) -> Adapter``):

* ``hf:<model id or local path>`` -- transformers ``AutoProcessor`` + the model's generative auto class, prompted
  as transformers' own ``apply_chat_template(..., tokenize=True)`` would (one image list per sample, one BOS),
  greedy decoding with penalties off, left-padded batches (:class:`HFConfig` options). Never remote code
  (``trust_remote_code=False``): a checkpoint runs only through an architecture of the installed transformers.
* ``openai:<model>`` -- any OpenAI-compatible chat-completions server (OpenAI, vLLM, SGLang, ...), image sent as a
  base64 PNG data URL, concurrent requests, bounded retries with exponential backoff and jitter
  (:class:`OpenAIConfig` options). Standard library HTTP only.

Example (``image`` a PIL image or PNG bytes)::

    adapter = make_adapter("openai:gpt-4o", base_url="http://127.0.0.1:8000/v1", concurrency=8)
    adapter.generate([Sample("How many vertices are in the hypergraph? List the answer after “Ans:”.", image)])
    # -> ['Ans: 7']  (a Generation: .finish_reason == 'stop')
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

from hypergvl.registry import Registry, UnknownName

__all__ = ["Sample", "ModelInfo", "Generation", "finish_reason", "Adapter", "AdapterError", "ADAPTERS",
           "register_adapter", "make_adapter", "HFConfig", "HFAdapter", "OpenAIConfig", "OpenAIAdapter",
           "DEFAULT_MAX_NEW_TOKENS"]

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


FINISH_REASONS = ("stop", "length")
DEFAULT_MAX_NEW_TOKENS = 4096  # one limit for hf: and openai:, room for a reasoning model's thinking


class Generation(str):
    """A response text that also says why generation stopped: ``finish_reason`` is ``"stop"`` (the model ended
    its answer: an EOS token, a stop sequence) or ``"length"`` (cut at the token limit). It *is* the text (a ``str``
    subclass), so every caller that expects a string keeps working; an adapter that returns plain ``str`` (the
    baselines) is read as ``"stop"`` (:func:`finish_reason`)."""

    finish_reason: str

    def __new__(cls, text: str, finish_reason: str = "stop"):
        if finish_reason not in FINISH_REASONS:
            raise ValueError(f"finish_reason must be one of {', '.join(FINISH_REASONS)}, got {finish_reason!r}")
        obj = super().__new__(cls, text)
        obj.finish_reason = finish_reason
        return obj

    def __reduce__(self):
        return Generation, (str(self), self.finish_reason)


def finish_reason(response) -> str:
    """``"length"`` for a response cut at the token limit, else ``"stop"`` (plain strings included)."""
    return getattr(response, "finish_reason", "stop")


class Adapter(Protocol):
    def generate(self, batch: list[Sample]) -> list[str]:
        """One raw response per sample, in order: a ``str``, or a :class:`Generation` that says why it stopped."""

    def info(self) -> ModelInfo:
        """Name, revision, type and parameter count (when known) of the model."""


class AdapterError(RuntimeError):
    """A model could not produce a response (server error after all retries, bad request, ...)."""


AdapterFactory = Callable[..., Adapter]
ADAPTERS: Registry[AdapterFactory] = Registry("adapter prefix")


def register_adapter(prefix: str) -> Callable[[AdapterFactory], AdapterFactory]:
    """Register ``factory(rest: str, **options) -> Adapter`` for specs ``"<prefix>:<rest>"``."""
    if not prefix or ":" in prefix:
        raise ValueError(f"an adapter prefix must be a non-empty name without ':', got {prefix!r}")

    return ADAPTERS.register(prefix)


def make_adapter(spec: str, **options) -> Adapter:
    """Build the adapter for ``spec`` (``"hf:Qwen/Qwen2.5-VL-7B-Instruct"``, ``"openai:gpt-4o"``, ...); an unknown
    prefix raises :class:`~hypergvl.registry.UnknownName` naming the spec and listing the prefixes."""
    prefix, _, rest = spec.partition(":")
    if prefix not in ADAPTERS:
        choices = ", ".join(f"{name}:..." for name in sorted(ADAPTERS))
        raise UnknownName(f"unknown model spec {spec!r}; the prefix must be one of: {choices}")
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
# Decoding options that change which token greedy search picks or when it stops early. ``greedy`` (the default)
# sets each to its neutral value, whatever the checkpoint's generation_config says (a checkpoint may ship
# repetition_penalty=1.05 or do_sample=True with a temperature); ``checkpoint`` keeps the checkpoint's own.
NEUTRAL_DECODING = {
    "do_sample": False, "num_beams": 1, "num_return_sequences": 1, "temperature": 1.0, "top_k": None, "top_p": 1.0,
    "min_p": None, "typical_p": None, "epsilon_cutoff": None, "eta_cutoff": None, "repetition_penalty": 1.0,
    "encoder_repetition_penalty": 1.0, "length_penalty": 1.0, "no_repeat_ngram_size": 0, "bad_words_ids": None,
    "suppress_tokens": None, "begin_suppress_tokens": None, "sequence_bias": None, "min_length": None,
    "min_new_tokens": None, "exponential_decay_length_penalty": None, "forced_bos_token_id": None,
    "forced_eos_token_id": None, "guidance_scale": None, "penalty_alpha": None, "dola_layers": None,
    "stop_strings": None, "max_time": None,
}
GENERATION_CONFIGS = ("greedy", "checkpoint")


@dataclass(frozen=True)
class HFConfig:
    """Options of the ``hf:`` adapter. A call of ``generate(batch)`` is one forward batch: the harness's
    ``--batch-size`` samples, never split further."""

    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    device: str | None = None  # "cuda", "cuda:1", "cpu", ...; None = cuda when available, else cpu
    dtype: str = "auto"  # "auto" (the checkpoint's), "float32", "bfloat16" or "float16"
    revision: str | None = None  # a Hub branch, tag or commit
    generation_config: str = "greedy"  # or "checkpoint": the checkpoint's generation_config.json as it is

    def __post_init__(self):
        _check(_is_int(self.max_new_tokens) and self.max_new_tokens > 0, "max_new_tokens must be a positive integer")
        _check(self.dtype in ("auto", "float32", "bfloat16", "float16"),
               f"dtype must be auto, float32, bfloat16 or float16, got {self.dtype!r}")
        _check(self.device is None or isinstance(self.device, str), "device must be a string such as 'cuda' or 'cpu'")
        _check(self.generation_config in GENERATION_CONFIGS,
               f"generation_config must be one of {', '.join(GENERATION_CONFIGS)}, got {self.generation_config!r}")


def _looks_like_path(model: str) -> bool:
    """A spec meant as a local folder (absolute, ./, ../ or ~), as opposed to a Hub id such as ``org/name``."""
    return Path(model).expanduser().is_absolute() or model.startswith((".", "~"))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def _load_error(model: str, exc: Exception) -> ValueError:
    """One line for a checkpoint that cannot be found: a missing folder, an unknown or unreachable Hub id."""
    if _looks_like_path(model):
        return ValueError(f"hf:{model}: no such model folder")
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes")
    where = "offline (HF_HUB_OFFLINE=1), and it is not in the local cache" if offline else _first_line(exc)
    return ValueError(f"hf:{model}: not a local model folder and not a loadable Hub model: {where}")


def _config(model: str, revision: str | None):
    from transformers import AutoConfig

    if _looks_like_path(model) and not Path(model).expanduser().is_dir():
        raise ValueError(f"hf:{model}: no such model folder")
    try:
        return AutoConfig.from_pretrained(model, revision=revision, trust_remote_code=False)
    except (OSError, ValueError, KeyError) as exc:  # KeyError / ValueError: a model_type this transformers lacks
        if isinstance(exc, ValueError) and "custom code" in str(exc):
            raise ValueError(f"hf:{model}: its config needs the checkpoint's own code (trust_remote_code), which "
                             "this harness never runs: only architectures the installed transformers ships") from None
        if isinstance(exc, OSError) or not (Path(model).expanduser() / "config.json").is_file():
            raise _load_error(model, exc) from None
        raise ValueError(f"hf:{model}: transformers cannot read its config.json ({_first_line(exc)}); the "
                         "architecture may need a newer transformers") from None


def _is_vision_config(config) -> bool:
    """A vision tower or an image placeholder token in the config means an image-text model, whichever auto-class
    mapping its class sits in (Phi-4-multimodal's is the causal-LM one)."""
    if getattr(config, "vision_config", None) is not None:
        return True
    return any(getattr(config, key, None) is not None for key in ("image_token_id", "image_token_index"))


def model_kind(model: str, revision: str | None = None) -> str:
    """``"vision"`` for an image-text model, ``"text"`` for a causal LM without a vision tower.

    Decided from the config (:func:`_is_vision_config`, then transformers' image-text-to-text mapping); anything
    that is neither (an encoder, a seq2seq model, ...) is refused with a message naming the architecture."""
    from transformers.models.auto import modeling_auto

    config = _config(model, revision)
    if _is_vision_config(config) or config.model_type in modeling_auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES:
        return "vision"
    if config.model_type in modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "text"
    architectures = ", ".join(config.architectures or [config.model_type])
    raise ValueError(f"hf:{model}: {architectures} is neither an image-text-to-text model nor a causal language "
                     "model; the harness needs one of these")


def _model_class(config, kind: str):
    """The auto class that builds this config's generative model: image-text-to-text when transformers maps it
    there, else causal LM (text models, and vision models such as Phi-4-multimodal mapped only there)."""
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText
    from transformers.models.auto import modeling_auto

    if kind == "vision" and config.model_type in modeling_auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES:
        return AutoModelForImageTextToText
    if config.model_type in modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return AutoModelForCausalLM
    raise ValueError(f"{', '.join(config.architectures or [config.model_type])} has an image input but no "
                     "image-text-to-text or causal-LM class in this transformers")


def _eos_ids(generation, tokenizer) -> set[int]:
    ids = generation.eos_token_id if generation.eos_token_id is not None else tokenizer.eos_token_id
    return set(ids if isinstance(ids, (list, tuple)) else [] if ids is None else [ids])


def _opens_reasoning(prompt: str) -> bool:
    """Whether a rendered prompt ends inside an open ``<think>`` block (reasoning chat templates such as Qwen3's or
    DeepSeek-R1's open it in the generation prompt). The model's text then starts inside that block, so the stored
    response gets the opening tag back: a response cut before ``</think>`` is then seen as unfinished reasoning
    (unparsed), not read as an answer."""
    return prompt.rfind("<think>") > prompt.rfind("</think>")


class HFAdapter:
    """A transformers model, prompted as transformers' own ``apply_chat_template(..., tokenize=True)`` prompts it.

    * The user turn is the image (when the sample has one) followed by the prompt text, rendered by the checkpoint's
      chat template. A checkpoint without one (PaliGemma) gets the raw prompt, with the processor's image token in
      front for a sample with an image, as its processor asks ("add ``<image>`` tokens in the very beginning of your
      text"); the processor adds its own BOS and separator.
    * Tokenised once: a rendered prompt that already starts with the BOS token is tokenised with
      ``add_special_tokens=False`` (Gemma 3, Mllama, Idefics3 and Mistral3 templates write BOS themselves), others
      with the tokenizer's special tokens, as ``ProcessorMixin.apply_chat_template`` does: one BOS either way.
    * Images go to the processor as one list per sample (``[[image], [image], ...]``), never one flat list, which
      Gemma 3, Mllama and SmolVLM read as one sample with several images.
    * The kind is read from the config (:func:`model_kind`): a vision model gets ``AutoProcessor``, a causal LM
      without a vision tower (the LLM behind an LVLM, HyperGVL sec. 3.3) ``AutoTokenizer`` and no images.
    * Decoding is greedy with every sampling option and penalty neutral (:data:`NEUTRAL_DECODING`), unless
      ``generation_config="checkpoint"``; :meth:`generation_settings` is what ``results.json`` records.
    * Batches are left-padded so every sequence continues from its last prompt token; each response says why it
      stopped (:class:`Generation`: ``"stop"`` at an EOS token, ``"length"`` at ``max_new_tokens``).

    :meth:`prepare` (chat template, image decoding, the processor) is CPU work the harness runs ahead in its
    prefetch threads; :meth:`run` is the model's part. ``generate(batch) == run(prepare(batch))``.
    """

    def __init__(self, model: str, config: HFConfig):
        import torch

        self.name, self.config = model, config
        self.kind = model_kind(model, config.revision)
        self.device = torch.device(config.device or ("cuda" if torch.cuda.is_available() else "cpu"))
        dtype = config.dtype if config.dtype == "auto" else getattr(torch, config.dtype)
        self.processor, self.model = self._load(model, dtype)
        tokenizer = self.processor.tokenizer if self.kind == "vision" else self.processor
        tokenizer.padding_side = "left"
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.tokenizer = tokenizer
        self.chat_template = getattr(self.processor, "chat_template", None) is not None
        self.model.to(self.device).eval()
        generation = copy.deepcopy(self.model.generation_config)
        if config.generation_config == "greedy":
            generation.update(**NEUTRAL_DECODING)
        generation.update(max_new_tokens=config.max_new_tokens, max_length=None,
                          pad_token_id=tokenizer.pad_token_id)
        self.generation = generation
        self._eos = _eos_ids(generation, tokenizer)

    def _load(self, model: str, dtype):
        """(processor or tokenizer, model); every failure (a missing optional package, an architecture this
        transformers lacks, a broken folder) becomes one ValueError line naming the checkpoint."""
        from transformers import AutoConfig, AutoProcessor, AutoTokenizer

        revision = self.config.revision
        stage = "processor" if self.kind == "vision" else "tokenizer"
        try:
            loader = AutoProcessor if self.kind == "vision" else AutoTokenizer
            processor = loader.from_pretrained(model, revision=revision, trust_remote_code=False)
            if self.kind == "vision" and not hasattr(processor, "tokenizer"):
                raise ValueError(f"AutoProcessor gave a {type(processor).__name__}, which has no tokenizer")
            stage = "model"
            auto = _model_class(AutoConfig.from_pretrained(model, revision=revision, trust_remote_code=False),
                                self.kind)
            loaded = auto.from_pretrained(model, revision=revision, dtype=dtype, trust_remote_code=False)
        except ImportError as exc:
            raise ValueError(f"hf:{model}: its {stage} needs a package that is not installed: "
                             f"{_first_line(exc)}") from None
        except Exception as exc:  # noqa: BLE001 - transformers raises many types for checkpoints it cannot build
            raise ValueError(f"hf:{model}: cannot load its {stage}: {_first_line(exc)}") from None
        return processor, loaded

    @property
    def takes_images(self) -> bool:
        return self.kind == "vision"

    def generation_settings(self) -> dict:
        """The decoding settings every response was produced with (written to ``results.json``)."""
        keys = ["max_new_tokens", *NEUTRAL_DECODING]
        settings = {k: getattr(self.generation, k, None) for k in keys}
        return {"generation_config": self.config.generation_config, **settings,
                "eos_token_id": sorted(self._eos), "pad_token_id": self.generation.pad_token_id}

    def _prompt(self, sample: Sample) -> str:
        if self.kind == "text":
            if sample.image is not None:
                raise ValueError(f"hf:{self.name} is a text-only model and takes no images; evaluate it with "
                                 "--visual-reps none")
            if not self.chat_template:
                return sample.prompt
            messages = [{"role": "user", "content": sample.prompt}]
            return self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        if not self.chat_template:
            image_token = getattr(self.processor, "image_token", None) if sample.image is not None else None
            return (image_token or "") + sample.prompt
        content = [{"type": "image"}] if sample.image is not None else []
        content.append({"type": "text", "text": sample.prompt})
        messages = [{"role": "user", "content": content}]
        return self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def _special_tokens(self, texts: list[str]) -> bool:
        """Whether the tokenizer adds its special tokens: not when the rendered prompt holds BOS already, and never
        on a text model's rendered chat (as ``PreTrainedTokenizer.apply_chat_template`` tokenises it)."""
        if self.kind == "text":
            return not self.chat_template
        bos = self.tokenizer.bos_token
        return not (self.chat_template and bos is not None and texts[0].startswith(bos))

    def prepare(self, batch: list[Sample]):
        """The tokenised, left-padded model inputs (CPU tensors) of the whole batch: one forward pass."""
        _check_batch(batch)
        texts = [self._prompt(sample) for sample in batch]
        self._reasoning_prefix = "<think>" if _opens_reasoning(texts[0]) else ""
        special = self._special_tokens(texts)
        if self.kind == "text":
            return self.tokenizer(texts, padding=True, return_tensors="pt", add_special_tokens=special)
        images = [[_pil_image(s.image)] if s.image is not None else [] for s in batch]
        return self.processor(text=texts, images=images if any(images) else None, padding=True,
                              return_tensors="pt", add_special_tokens=special)

    def run(self, inputs) -> list[Generation]:
        import torch

        if self.kind == "vision":  # BatchFeature.to casts the floating tensors only (pixels), as transformers does
            inputs = inputs.to(self.device, dtype=self.model.dtype)
        else:
            inputs = inputs.to(self.device)
        inputs.pop("labels", None)  # PaliGemma's processor adds training labels
        if "token_type_ids" in inputs and "token_type_ids" not in _forward_names(self.model):
            inputs.pop("token_type_ids")
        with torch.inference_mode():
            output = self.model.generate(**inputs, generation_config=self.generation)
        new = output[:, inputs["input_ids"].shape[1]:].tolist()
        prefix = getattr(self, "_reasoning_prefix", "")
        return [Generation(prefix + self.tokenizer.decode(ids, skip_special_tokens=True), self._finish_reason(ids))
                for ids in new]

    def _finish_reason(self, ids: list[int]) -> str:
        """``"stop"`` when an EOS token was generated, ``"length"`` when ``max_new_tokens`` tokens came without one
        (a shorter sequence without EOS stopped on another criterion: ``"stop"``)."""
        if any(t in self._eos for t in ids):
            return "stop"
        return "length" if len(ids) >= self.generation.max_new_tokens else "stop"

    def generate(self, batch: list[Sample]) -> list[Generation]:
        return self.run(self.prepare(batch))

    def info(self) -> ModelInfo:
        revision = self.config.revision or getattr(self.model.config, "_commit_hash", None)
        return ModelInfo(self.name, "open", revision, sum(p.numel() for p in self.model.parameters()))


def _forward_names(model) -> set[str]:
    import inspect

    return set(inspect.signature(model.forward).parameters)


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
    max_tokens: int = DEFAULT_MAX_NEW_TOKENS
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
        """Requests kept in flight: the harness runs a sliding window of this many (``hypergvl.evaluators.pipeline``)."""
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

    def _one(self, payload: bytes) -> Generation:
        """The response text, and why it stopped: ``"length"`` when the server says ``choices[0].finish_reason``
        is ``"length"`` (cut at ``max_tokens``), else ``"stop"``."""
        data = self._post(payload)
        try:
            choice = data["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise AdapterError(f"{self.url} answered without choices[0].message.content: {str(data)[:200]}") from None
        if isinstance(data.get("model"), str):
            self._served_model = data["model"]
        if isinstance(content, list):  # some servers return content parts
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        reason = "length" if choice.get("finish_reason") == "length" else "stop"
        return Generation(content if isinstance(content, str) else "", reason)

    def prepare(self, batch: list[Sample]) -> list[bytes]:
        """The request bodies (image as a base64 PNG data URL): CPU work the harness does ahead of the requests."""
        _check_batch(batch)
        return [self._payload(sample) for sample in batch]

    def run(self, payloads: list[bytes]) -> list[Generation]:
        """One response per request body, in order, ``concurrency`` requests at a time."""
        if len(payloads) <= 1:
            return [self._one(p) for p in payloads]
        with ThreadPoolExecutor(max_workers=min(self.config.concurrency, len(payloads))) as pool:
            return list(pool.map(self._one, payloads))

    def generate(self, batch: list[Sample]) -> list[Generation]:
        return self.run(self.prepare(batch))

    def generation_settings(self) -> dict:
        """The sampling settings every request carried (written to ``results.json``)."""
        return {"max_tokens": self.config.max_tokens, "temperature": self.config.temperature}

    def info(self) -> ModelInfo:
        """The revision is the model name the server reported (e.g. a dated snapshot), once it has answered."""
        return ModelInfo(self.model, self.config.model_type, self._served_model, None)


@register_adapter("openai")
def _openai_adapter(rest: str, **options) -> OpenAIAdapter:
    if not rest:
        raise ValueError("the openai: spec needs a model name, e.g. openai:gpt-4o")
    return OpenAIAdapter(rest, make_config(OpenAIConfig, options))
