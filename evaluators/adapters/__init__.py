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

The package, one concept a module: :mod:`~hypergvl.evaluators.adapters.base` (the types, the :class:`Adapter`
protocol, the ``ADAPTERS`` registry with :func:`register_adapter` / :func:`make_adapter`, and the checks and image
helpers the adapters share; standard library only), :mod:`~hypergvl.evaluators.adapters.hf` (``hf:``; torch and
transformers are imported by the first model, not here) and :mod:`~hypergvl.evaluators.adapters.openai`
(``openai:``). Importing this package registers both prefixes. A new adapter is one module here with a factory
decorated ``@register_adapter("<prefix>")``, imported below; a baseline goes in :mod:`hypergvl.evaluators.baselines`.
"""
from __future__ import annotations

from . import base
from .base import (ADAPTERS, DEFAULT_MAX_NEW_TOKENS, Adapter, AdapterError, Generation, ModelInfo, Sample,
                   finish_reason, make_adapter, register_adapter)
# the registrations, in the order the registry lists them: importing a module registers its prefix
from .hf import HFAdapter, HFConfig
from .openai import OpenAIAdapter, OpenAIConfig

_pil_image = base._pil_image  # evaluators/lmms_eval/utils.py and benchmarks/harness.py import it from here

__all__ = ["Sample", "ModelInfo", "Generation", "finish_reason", "Adapter", "AdapterError", "ADAPTERS",
           "register_adapter", "make_adapter", "HFConfig", "HFAdapter", "OpenAIConfig", "OpenAIAdapter",
           "DEFAULT_MAX_NEW_TOKENS"]
