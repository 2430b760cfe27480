"""The adapter interface: a query (:class:`Sample`), what a results file records of its model
(:class:`ModelInfo`), a response that says why it stopped (:class:`Generation`, :func:`finish_reason`), the
:class:`Adapter` protocol and :class:`AdapterError`, the ``ADAPTERS`` registry (:func:`register_adapter`,
:func:`make_adapter`), and the option checks and image helpers every adapter shares. Standard library only (Pillow
is imported by the first image), so listing the prefixes costs no model library."""
from __future__ import annotations

import dataclasses
import io
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from hypergvl.registry import Registry, UnknownName

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
    # lazy: PIL 0.25 s; 'hypergvl --help' imports this module, only image samples need it
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
