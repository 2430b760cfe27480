"""Tiny transformers checkpoints built from configs, saved like Hub checkpoints: nothing is downloaded.

``make_tiny_llava`` is an image-text-to-text model (CLIP vision tower + Llama); ``make_tiny_llm`` a text-only causal
LM (the same Llama, no vision tower) for the LVLM-versus-LLM runs of HyperGVL sec. 3.3; ``make_tiny_encoder`` a
DistilBERT encoder, an architecture the harness must refuse. Weights are randomly initialised with a large scale,
so that outputs depend on the input. :data:`ARCHITECTURES` is the matrix of popular VLM families (and two text-only
LLMs), each saved with its architecture's real processor class, for ``tests/test_vlm_architectures.py``."""
from __future__ import annotations

from pathlib import Path

SPECIALS = ["<pad>", "<s>", "</s>", "<image>", "<|user|>", "<|assistant|>"]
CORPUS = ["How many vertices are in the hypergraph? List the answer after Ans: v0 v1 e0 {v1,v2}"] * 3


def _tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=320, special_tokens=SPECIALS, show_progress=False,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token="<pad>", bos_token="<s>", eos_token="</s>")


def _llama(tokenizer):
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                       num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096,
                       initializer_range=0.5, pad_token_id=tokenizer.pad_token_id,
                       bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)


def make_tiny_llava(folder: Path) -> Path:
    """A randomly initialised LLaVA with a byte-level BPE tokenizer trained here, saved to ``folder``."""
    import torch
    from transformers import CLIPImageProcessor, CLIPVisionConfig, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor

    tokenizer = _tokenizer()
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
        text_config=_llama(tokenizer), image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default", vision_feature_layer=-1, initializer_range=0.5)
    torch.manual_seed(0)  # large init so that the output depends on the input
    LlavaForConditionalGeneration(config).save_pretrained(folder)
    processor.save_pretrained(folder)
    return Path(folder)


def make_tiny_llm(folder: Path) -> Path:
    """A randomly initialised Llama causal LM with a chat template (text only), saved to ``folder``."""
    import torch
    from transformers import LlamaForCausalLM

    tokenizer = _tokenizer()
    tokenizer.chat_template = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}"
                               "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    torch.manual_seed(0)
    LlamaForCausalLM(_llama(tokenizer)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return Path(folder)


def make_tiny_encoder(folder: Path) -> Path:
    """A DistilBERT encoder (neither image-text-to-text nor causal LM), saved to ``folder``."""
    from transformers import DistilBertConfig, DistilBertModel

    DistilBertModel(DistilBertConfig(vocab_size=64, dim=8, n_layers=1, n_heads=2, hidden_dim=16)).save_pretrained(folder)
    return Path(folder)


# ============================================================================================ the architecture matrix
# Tiny checkpoints of the popular open VLM families, each saved with its architecture's real processor class (the
# image processor, the tokenizer's special tokens and a chat template of the real one's shape), so that
# `hypergvl evaluate --model hf:DIR` meets what it meets on the Hub checkpoint. Hidden sizes 16, one layer, images of
# a few patches: a checkpoint builds in well under a second.
from dataclasses import dataclass  # noqa: E402
from typing import Callable  # noqa: E402


@dataclass(frozen=True)
class Arch:
    name: str
    vision: bool
    build: Callable[[Path], Path]
    bos_in_template: bool = False  # the real chat template writes BOS itself (the double-BOS trap)


ARCHITECTURES: dict[str, Arch] = {}


def architecture(name: str, vision: bool = True, bos_in_template: bool = False):
    def decorator(build):
        ARCHITECTURES[name] = Arch(name, vision, build, bos_in_template)
        return build
    return decorator


def _bpe(specials: list[str], bos: str | None = "<s>", eos: str = "</s>", pad: str = "<pad>", **extra):
    """A byte-level BPE tokenizer trained here on the HyperGVL vocabulary, with ``specials`` as special tokens and
    ``extra`` named special tokens (``image_token="<image>"`` gives ``tokenizer.image_token`` and its id)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    named = [t for t in [pad, bos, eos] if t]
    tokens = list(dict.fromkeys(named + specials + list(extra.values())))
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=320 + len(tokens), special_tokens=tokens,
                                                        show_progress=False,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    if bos:  # the tokenizer adds BOS itself, as Llama's, Gemma's and Mistral's do
        bpe.post_processor = processors.TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A $B",
                                                           special_tokens=[(bos, bpe.token_to_id(bos))])
    return PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token=pad, bos_token=bos, eos_token=eos,
                                   extra_special_tokens=extra or None)


def _ids(tokenizer, **tokens) -> dict:
    return {k: tokenizer.convert_tokens_to_ids(v) for k, v in tokens.items()}


def _text(cls, tokenizer, **kw):
    """A one-layer decoder config of hidden size 16 for ``tokenizer``."""
    base = dict(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096, initializer_range=0.5,
                pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                eos_token_id=tokenizer.eos_token_id)
    return cls(**(base | kw))


def _save(folder: Path, model_cls, config, processor) -> Path:
    import torch

    torch.manual_seed(0)  # large init so that the output depends on the input
    model = model_cls(config)
    model.generation_config.repetition_penalty = 1.05  # a checkpoint's own setting that greedy must not apply
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return Path(folder)


# A chat template of the usual shape: roles, image placeholders where the image parts are, a generation prompt.
def _template(image: str, bos: bool = False, user: str = "<|user|>", assistant: str = "<|assistant|>") -> str:
    return (("{{ bos_token }}" if bos else "") + "{% for m in messages %}" + user +
            "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
            "{% if c['type'] == 'image' %}" + image + "{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
            "{% endfor %}{% if add_generation_prompt %}" + assistant + "{% endif %}")


@architecture("qwen2", vision=False)
def make_tiny_qwen2(folder: Path) -> Path:
    """Qwen2 causal LM: no BOS at all, ChatML template."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tok = _bpe(["<|im_start|>", "<|im_end|>"], bos=None, eos="<|im_end|>", pad="<|endoftext|>")
    tok.chat_template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                         "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    return _save(folder, Qwen2ForCausalLM, _text(Qwen2Config, tok), tok)


@architecture("llama", vision=False, bos_in_template=True)
def make_tiny_llama(folder: Path) -> Path:
    """Llama 3 style causal LM: the template writes BOS, the tokenizer would add another."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = _bpe(["<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"], bos="<|begin_of_text|>",
               eos="<|eot_id|>", pad="<|finetune_right_pad_id|>")
    tok.chat_template = ("{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>"
                         "\n\n{{ m['content'] }}<|eot_id|>{% endfor %}{% if add_generation_prompt %}"
                         "<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}")
    return _save(folder, LlamaForCausalLM, _text(LlamaConfig, tok), tok)


@architecture("llava_next")
def make_tiny_llava_next(folder: Path) -> Path:
    from transformers import (CLIPVisionConfig, LlamaConfig, LlavaNextConfig, LlavaNextForConditionalGeneration,
                              LlavaNextImageProcessor, LlavaNextProcessor)

    tok = _bpe(["<|user|>", "<|assistant|>", "<image>"])
    processor = LlavaNextProcessor(
        image_processor=LlavaNextImageProcessor(size={"shortest_edge": 16}, crop_size={"height": 16, "width": 16},
                                                image_grid_pinpoints=[[16, 16], [16, 32], [32, 16]]),
        tokenizer=tok, patch_size=8, vision_feature_select_strategy="default", chat_template=_template("<image>"),
        num_additional_image_tokens=1)
    config = LlavaNextConfig(
        vision_config=CLIPVisionConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                                       image_size=16, patch_size=8, projection_dim=16, initializer_range=0.5),
        text_config=_text(LlamaConfig, tok), image_token_index=tok.convert_tokens_to_ids("<image>"),
        image_grid_pinpoints=[[16, 16], [16, 32], [32, 16]], vision_feature_select_strategy="default",
        vision_feature_layer=-1, initializer_range=0.5)
    return _save(folder, LlavaNextForConditionalGeneration, config, processor)


@architecture("qwen2_vl")
def make_tiny_qwen2_vl(folder: Path) -> Path:
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLImageProcessor, Qwen2VLProcessor
    from transformers.models.qwen2_vl import Qwen2VLVideoProcessor

    return _qwen_vl(folder, Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLProcessor, Qwen2VLImageProcessor,
                    Qwen2VLVideoProcessor, vision=dict(embed_dim=16, hidden_size=16, num_heads=2))


def _qwen_vl(folder, config_cls, model_cls, processor_cls, image_cls, video_cls, vision: dict, text: dict = (),
             mrope=(1, 1, 2)) -> Path:
    """The Qwen-VL family: ChatML, <|vision_start|><|image_pad|><|vision_end|>, patch 4 merged 2x2, mrope."""
    specials = ["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
    tok = _bpe(specials, bos=None, eos="<|im_end|>", pad="<|endoftext|>")
    template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% for c in m['content'] %}"
                "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% else %}{{ c['text'] }}"
                "{% endif %}{% endfor %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
                "{% endif %}")
    size = {"shortest_edge": 8 * 8 * 4, "longest_edge": 8 * 8 * 9}
    kw = dict(patch_size=4, merge_size=2, temporal_patch_size=2, size=size)
    processor = processor_cls(image_processor=image_cls(**kw), tokenizer=tok, video_processor=video_cls(**kw),
                              chat_template=template)
    ids = _ids(tok, image_token_id="<|image_pad|>", video_token_id="<|video_pad|>",
               vision_start_token_id="<|vision_start|>", vision_end_token_id="<|vision_end|>")
    text_config = dict(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                       num_attention_heads=2, num_key_value_heads=1, initializer_range=0.5,
                       pad_token_id=tok.pad_token_id, bos_token_id=None, eos_token_id=tok.eos_token_id,
                       rope_parameters={"rope_type": "default", "mrope_section": list(mrope), "rope_theta": 10000.0})
    config = config_cls(text_config=text_config | dict(text), initializer_range=0.5,
                        vision_config=dict(depth=1, patch_size=4, spatial_merge_size=2, temporal_patch_size=2,
                                           initializer_range=0.5) | vision, **ids)
    return _save(folder, model_cls, config, processor)


@architecture("qwen2_5_vl")
def make_tiny_qwen2_5_vl(folder: Path) -> Path:
    from transformers import (Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2_5_VLProcessor,
                              Qwen2VLImageProcessor)
    from transformers.models.qwen2_vl import Qwen2VLVideoProcessor

    return _qwen_vl(folder, Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2_5_VLProcessor,
                    Qwen2VLImageProcessor, Qwen2VLVideoProcessor,
                    vision=dict(hidden_size=16, intermediate_size=32, out_hidden_size=16, num_heads=2,
                                window_size=16, fullatt_block_indexes=[0]))


@architecture("qwen3_vl")
def make_tiny_qwen3_vl(folder: Path) -> Path:
    from transformers import Qwen2VLImageProcessor, Qwen3VLConfig, Qwen3VLForConditionalGeneration, Qwen3VLProcessor
    from transformers.models.qwen3_vl import Qwen3VLVideoProcessor

    return _qwen_vl(folder, Qwen3VLConfig, Qwen3VLForConditionalGeneration, Qwen3VLProcessor, Qwen2VLImageProcessor,
                    Qwen3VLVideoProcessor, text=dict(head_dim=8),
                    vision=dict(hidden_size=16, intermediate_size=32, out_hidden_size=16, num_heads=2,
                                num_position_embeddings=16, deepstack_visual_indexes=[0]))


def _idefics3_like(folder, config_cls, model_cls, processor_cls, image_cls, video_cls=None) -> Path:
    """Idefics3 / SmolVLM: <image> tokens between fake tokens, image split into 2x2 tiles plus a global one,
    a Llama-3 style template that writes BOS."""
    from transformers import LlamaConfig

    tok = _bpe(["<fake_token_around_image>", "<image>", "<end_of_utterance>", "<global-img>", "<|user|>",
                "<|assistant|>"], bos="<|begin_of_text|>", eos="<end_of_utterance>")
    template = ("{{ bos_token }}{% for m in messages %}{{ m['role'] | capitalize }}:{% for c in m['content'] %}"
                "{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
                "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}")
    image = image_cls(size={"longest_edge": 32}, max_image_size={"longest_edge": 16}, do_image_splitting=True)
    extra = {"video_processor": video_cls(size={"longest_edge": 32}, max_image_size={"longest_edge": 16})} \
        if video_cls else {}
    processor = processor_cls(image_processor=image, tokenizer=tok, image_seq_len=1, chat_template=template, **extra)
    config = config_cls(vision_config=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                           num_attention_heads=2, image_size=16, patch_size=8, initializer_range=0.5),
                        text_config=_text(LlamaConfig, tok).to_dict(), scale_factor=2,
                        image_token_id=tok.convert_tokens_to_ids("<image>"), initializer_range=0.5,
                        pad_token_id=tok.pad_token_id)
    return _save(folder, model_cls, config, processor)


@architecture("idefics3", bos_in_template=True)
def make_tiny_idefics3(folder: Path) -> Path:
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration, Idefics3ImageProcessor, Idefics3Processor

    return _idefics3_like(folder, Idefics3Config, Idefics3ForConditionalGeneration, Idefics3Processor,
                          Idefics3ImageProcessor)


@architecture("smolvlm", bos_in_template=True)
def make_tiny_smolvlm(folder: Path) -> Path:
    from transformers import SmolVLMConfig, SmolVLMForConditionalGeneration, SmolVLMImageProcessor, SmolVLMProcessor
    from transformers.models.smolvlm import SmolVLMVideoProcessor

    return _idefics3_like(folder, SmolVLMConfig, SmolVLMForConditionalGeneration, SmolVLMProcessor,
                          SmolVLMImageProcessor, SmolVLMVideoProcessor)


@architecture("llava_onevision")
def make_tiny_llava_onevision(folder: Path) -> Path:
    from transformers import (LlavaOnevisionConfig, LlavaOnevisionForConditionalGeneration,
                              LlavaOnevisionImageProcessor, LlavaOnevisionProcessor, Qwen2Config)
    from transformers.models.llava_onevision import LlavaOnevisionVideoProcessor

    tok = _bpe(["<|im_start|>", "<|im_end|>", "<image>", "<video>"], bos=None, eos="<|im_end|>", pad="<|endoftext|>")
    template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% for c in m['content'] %}"
                "{% if c['type'] == 'image' %}<image>\n{% else %}{{ c['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
                "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    pinpoints = [[16, 16], [16, 32], [32, 16], [32, 32]]
    processor = LlavaOnevisionProcessor(
        image_processor=LlavaOnevisionImageProcessor(size={"height": 16, "width": 16}, image_grid_pinpoints=pinpoints),
        video_processor=LlavaOnevisionVideoProcessor(size={"height": 16, "width": 16}),
        tokenizer=tok, num_image_tokens=4, vision_feature_select_strategy="full", chat_template=template)
    config = LlavaOnevisionConfig(
        vision_config=dict(model_type="siglip_vision_model", hidden_size=16, intermediate_size=32,
                           num_hidden_layers=1, num_attention_heads=2, image_size=16, patch_size=8),
        text_config=_text(Qwen2Config, tok).to_dict(), image_token_index=tok.convert_tokens_to_ids("<image>"),
        video_token_index=tok.convert_tokens_to_ids("<video>"), image_grid_pinpoints=pinpoints,
        vision_feature_select_strategy="full", vision_feature_layer=-1, initializer_range=0.5)
    return _save(folder, LlavaOnevisionForConditionalGeneration, config, processor)


@architecture("internvl")
def make_tiny_internvl(folder: Path) -> Path:
    from transformers import (GotOcr2ImageProcessor, InternVLConfig, InternVLForConditionalGeneration,
                              InternVLProcessor, Qwen2Config)
    from transformers.models.internvl import InternVLVideoProcessor

    tok = _bpe(["<|im_start|>", "<|im_end|>"], bos=None, eos="<|im_end|>", pad="<|endoftext|>",
               start_image_token="<img>", end_image_token="</img>", context_image_token="<IMG_CONTEXT>",
               video_token="<video>")
    template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% for c in m['content'] %}"
                "{% if c['type'] == 'image' %}<IMG_CONTEXT>\n{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
                "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    image = GotOcr2ImageProcessor(size={"height": 16, "width": 16}, crop_to_patches=True, min_patches=1,
                                  max_patches=4)
    processor = InternVLProcessor(image_processor=image, tokenizer=tok,
                                  video_processor=InternVLVideoProcessor(size={"height": 16, "width": 16}),
                                  image_seq_length=1, chat_template=template)
    config = InternVLConfig(
        vision_config=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                           image_size=[16, 16], patch_size=[8, 8], initializer_range=0.5),
        text_config=_text(Qwen2Config, tok).to_dict(), image_token_id=tok.convert_tokens_to_ids("<IMG_CONTEXT>"),
        downsample_ratio=0.5, projector_hidden_act="gelu", vision_feature_layer=-1,
        vision_feature_select_strategy="default")
    return _save(folder, InternVLForConditionalGeneration, config, processor)


@architecture("gemma3", bos_in_template=True)
def make_tiny_gemma3(folder: Path) -> Path:
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3ImageProcessor, Gemma3Processor

    tok = _bpe(["<start_of_turn>", "<end_of_turn>"], bos="<bos>", eos="<eos>", boi_token="<start_of_image>",
               eoi_token="<end_of_image>", image_token="<image_soft_token>")
    template = ("{{ bos_token }}{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{% for c in m['content'] %}"
                "{% if c['type'] == 'image' %}<start_of_image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
                "<end_of_turn>\n{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")
    processor = Gemma3Processor(image_processor=Gemma3ImageProcessor(size={"height": 16, "width": 16}),
                                tokenizer=tok, image_seq_length=4, chat_template=template)
    config = Gemma3Config(
        vision_config=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                           image_size=16, patch_size=4),
        text_config=dict(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=8, initializer_range=0.5,
                         query_pre_attn_scalar=8, sliding_window=4096, layer_types=["full_attention"] * 2,
                         tie_word_embeddings=False, pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                         eos_token_id=tok.eos_token_id),
        mm_tokens_per_image=4, image_token_index=tok.image_token_id, boi_token_index=tok.boi_token_id,
        eoi_token_index=tok.convert_tokens_to_ids("<end_of_image>"), initializer_range=0.5, tie_word_embeddings=False)
    return _save(folder, Gemma3ForConditionalGeneration, config, processor)


@architecture("paligemma")
def make_tiny_paligemma(folder: Path) -> Path:
    """PaliGemma: no chat template at all; the processor lays out <image>... BOS prompt \\n itself."""
    from transformers import GemmaConfig, PaliGemmaConfig, PaliGemmaForConditionalGeneration, PaliGemmaProcessor, \
        SiglipImageProcessor

    tok = _bpe([], bos="<bos>", eos="<eos>", image_token="<image>")
    image = SiglipImageProcessor(size={"height": 16, "width": 16})
    image.image_seq_length = 4
    processor = PaliGemmaProcessor(image_processor=image, tokenizer=tok)
    config = PaliGemmaConfig(
        vision_config=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                           image_size=16, patch_size=8, projection_dim=16),
        text_config=_text(GemmaConfig, processor.tokenizer, head_dim=8).to_dict(), projection_dim=16,
        image_token_index=tok.image_token_id, initializer_range=0.5)
    return _save(folder, PaliGemmaForConditionalGeneration, config, processor)


@architecture("mllama", bos_in_template=True)
def make_tiny_mllama(folder: Path) -> Path:
    from transformers import MllamaConfig, MllamaForConditionalGeneration, MllamaImageProcessor, MllamaProcessor

    tok = _bpe(["<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|image|>", "<|python_tag|>"],
               bos="<|begin_of_text|>", eos="<|eot_id|>", pad="<|finetune_right_pad_id|>")
    template = ("{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n"
                "{% for c in m['content'] %}{% if c['type'] == 'image' %}<|image|>{% else %}{{ c['text'] }}{% endif %}"
                "{% endfor %}<|eot_id|>{% endfor %}{% if add_generation_prompt %}<|start_header_id|>assistant"
                "<|end_header_id|>\n\n{% endif %}")
    image = MllamaImageProcessor(size={"height": 16, "width": 16}, max_image_tiles=2)
    processor = MllamaProcessor(image_processor=image, tokenizer=tok, chat_template=template)
    config = MllamaConfig(
        vision_config=dict(hidden_size=16, intermediate_layers_indices=[0], num_hidden_layers=1,
                           num_global_layers=1, attention_heads=2, image_size=16, patch_size=8, max_num_tiles=2,
                           vision_output_dim=32, initializer_range=0.5,
                           supported_aspect_ratios=[[1, 1], [1, 2], [2, 1]]),
        text_config=dict(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, cross_attention_layers=[1],
                         initializer_range=0.5, pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                         eos_token_id=tok.eos_token_id),
        image_token_index=tok.convert_tokens_to_ids("<|image|>"))
    return _save(folder, MllamaForConditionalGeneration, config, processor)


@architecture("mistral3", bos_in_template=True)
def make_tiny_mistral3(folder: Path) -> Path:
    from transformers import (Mistral3Config, Mistral3ForConditionalGeneration, MistralConfig, PixtralImageProcessor,
                              PixtralProcessor)

    tok = _bpe(["[INST]", "[/INST]", "[IMG]", "[IMG_BREAK]", "[IMG_END]"], bos="<s>", eos="</s>", pad="<pad>")
    template = ("{{ bos_token }}{% for m in messages %}[INST]{% for c in m['content'] %}{% if c['type'] == 'image' %}"
                "[IMG]{% else %}{{ c['text'] }}{% endif %}{% endfor %}[/INST]{% endfor %}")
    processor = PixtralProcessor(image_processor=PixtralImageProcessor(size={"longest_edge": 16}, patch_size=4),
                                 tokenizer=tok, patch_size=4, spatial_merge_size=2, chat_template=template)
    config = Mistral3Config(
        vision_config=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                           head_dim=8, image_size=16, patch_size=4, initializer_range=0.5),
        text_config=_text(MistralConfig, tok, head_dim=8).to_dict(), spatial_merge_size=2,
        image_token_index=tok.convert_tokens_to_ids("[IMG]"), vision_feature_layer=-1)
    return _save(folder, Mistral3ForConditionalGeneration, config, processor)


@architecture("phi4_multimodal")
def make_tiny_phi4_multimodal(folder: Path) -> Path:
    """Phi-4-multimodal: a vision model whose class transformers maps as a causal LM. Its image processor counts
    256 + 1 + ... tokens per image (the 448 px / 14 px geometry), so the tiny vision tower keeps 32 x 32 patches
    per crop (32 px crops, 1 px patches)."""
    from transformers import (Phi4MultimodalConfig, Phi4MultimodalFeatureExtractor, Phi4MultimodalForCausalLM,
                              Phi4MultimodalImageProcessor, Phi4MultimodalProcessor)

    tok = _bpe(["<|user|>", "<|assistant|>", "<|end|>"], bos=None, eos="<|end|>", pad="<|endoftext|>",
               image_token="<|image|>", audio_token="<|audio|>")
    template = ("{% for m in messages %}<|{{ m['role'] }}|>{% for c in m['content'] %}{% if c['type'] == 'image' %}"
                "<|image|>{% else %}{{ c['text'] }}{% endif %}{% endfor %}<|end|>{% endfor %}"
                "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    image = Phi4MultimodalImageProcessor(size={"height": 32, "width": 32}, patch_size=1, dynamic_hd=2)
    processor = Phi4MultimodalProcessor(image_processor=image, audio_processor=Phi4MultimodalFeatureExtractor(),
                                        tokenizer=tok, chat_template=template)
    config = Phi4MultimodalConfig(
        vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, initializer_range=0.5, pad_token_id=tok.pad_token_id, bos_token_id=None,
        eos_token_id=tok.eos_token_id, max_position_embeddings=4096, original_max_position_embeddings=4096,
        vision_config=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                           image_size=32, patch_size=1, crop_size=32, feature_layer=-1,
                           image_token_id=tok.image_token_id),
        audio_config=dict(hidden_size=16, intermediate_size=32, num_blocks=1, num_attention_heads=2,
                          ext_pw_out_channel=16, depthwise_separable_out_channel=16, nemo_conv_channels=16,
                          audio_token_id=tok.audio_token_id))
    return _save(folder, Phi4MultimodalForCausalLM, config, processor)
