"""Tiny transformers checkpoints built from configs, saved like Hub checkpoints: nothing is downloaded.

``make_tiny_llava`` is an image-text-to-text model (CLIP vision tower + Llama); ``make_tiny_llm`` a text-only causal
LM (the same Llama, no vision tower) for the LVLM-versus-LLM runs of HyperGVL sec. 3.3; ``make_tiny_encoder`` a
DistilBERT encoder, an architecture the harness must refuse. Weights are randomly initialised with a large scale,
so that outputs depend on the input."""
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
