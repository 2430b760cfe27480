"""The ``hf:`` adapter: a transformers model (:class:`HFAdapter`, options :class:`HFConfig`), prompted as
transformers' own ``apply_chat_template(..., tokenize=True)`` would, greedy with penalties off unless the options
say otherwise. torch and transformers are imported inside the functions that need them (the first model), never when
this module is imported."""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from pathlib import Path

from .base import (DEFAULT_MAX_NEW_TOKENS, Generation, ModelInfo, Sample, _check, _check_batch, _is_int, _pil_image,
                   make_config, register_adapter)

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
    # lazy: transformers 1.5 s; 'hypergvl --help' imports this module, only an hf: model needs it
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
    # lazy: transformers 1.5 s; 'hypergvl --help' imports this module, only an hf: model needs it
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
    # lazy: transformers 1.5 s; 'hypergvl --help' imports this module, only an hf: model needs it
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
        # lazy: torch 5-10 s; 'hypergvl --help' imports this module, only an hf: model needs it
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
        # lazy: transformers 1.5 s; 'hypergvl --help' imports this module, only an hf: model needs it
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
        # lazy: torch 5-10 s; 'hypergvl --help' imports this module, only an hf: model needs it
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
