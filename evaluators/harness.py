"""``hypergvl evaluate``: run a model over a built HyperGVL dataset and write a leaderboard submission.

HyperGVL sec. 3.1: "For all LVLMs, the zero-shot setting is adopted for the evaluation. The LVLMs are required to
provide answers in predefined formats". Each expanded sample (a text representation, then the E.2 question, plus
one visual representation) goes to the model; the raw response is verified by the ``hypergvl_accuracy`` metric.

Output folder::

    samples.jsonl   one line per answered sample: id, meta_id, task, text_rep, visual_rep, scale, source, response,
                    parsed, correct, unparsed, latency_s (appended and fsync'ed batch by batch: a crash loses at
                    most the batch in flight, and a rerun skips every sample already answered)
    results.json    the leaderboard submission (written atomically at the end)
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
from pathlib import Path

from hypergvl_dataset.cli import UserError, command

SUBMISSION_FORMAT = 1


def load_rows(dataset: str):
    """Meta-problem rows of a local build folder or a Hub dataset id (split ``test``)."""
    from datasets import load_dataset

    try:
        return load_dataset(dataset, split="test")
    except FileNotFoundError as exc:
        raise UserError(f"dataset {dataset!r} not found: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - datasets raises many types for unreachable/bad repos
        raise UserError(f"cannot load dataset {dataset!r}: {type(exc).__name__}: {exc}") from None


def dataset_digests(dataset: str) -> dict[str, str]:
    """sha256 of each parquet shard: computed for a local folder, read from the card's table for a Hub id."""
    path = Path(dataset)
    if path.is_dir():
        return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(path.glob("data/*/*.parquet"))}
    try:
        from huggingface_hub import hf_hub_download

        card = Path(hf_hub_download(dataset, "README.md", repo_type="dataset")).read_text()
    except Exception:  # noqa: BLE001 - digests are informative; a missing card leaves them empty
        return {}
    import re

    return dict(re.findall(r"\| `(data/[^`]+)` \| `([0-9a-f]{64})` \|", card))


def _drop_partial_tail(path: Path) -> None:
    """Cut a last line left unfinished by a crash, so appending starts on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as f:
        data = f.read()
        if not data.endswith(b"\n"):
            f.truncate(data.rfind(b"\n") + 1)


def _read_done(path: Path) -> dict[str, dict]:
    _drop_partial_tail(path)
    done = {}
    if path.exists():
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                    done[rec["id"]] = rec
                except (json.JSONDecodeError, KeyError):
                    continue  # a line cut short by a crash: that sample is asked again
    return done


def evaluate_model(dataset: str, model: str, out: Path, *, tasks=None, text_reps=None, visual_reps=None,
                   limit: int | None = None, batch_size: int = 8, model_options: dict | None = None,
                   progress: bool = True) -> dict:
    """Answer every selected sample (skipping those already in ``out/samples.jsonl``) and write ``results.json``."""
    import evaluate
    from tqdm.auto import tqdm

    from hypergvl_dataset.builder import expand
    from hypergvl_dataset.tasks import TASKS, score_response

    from . import baselines  # noqa: F401 - registers baseline:*
    from .adapters import Sample, make_adapter
    from . import metric_path

    for t in tasks or ():
        if t not in TASKS:
            raise UserError(f"unknown task {t!r}; choose from {', '.join(TASKS)}")
    if limit is not None and limit < 1:
        raise UserError("--limit must be at least 1")
    adapter = make_adapter(model, **(model_options or {}))
    rows = load_rows(dataset)
    if tasks:
        wanted = set(tasks)
        rows = rows.filter(lambda t: t in wanted, input_columns=["task"])
    vqa = expand(rows, text_reps, visual_reps)
    n = len(vqa) if limit is None else min(limit, len(vqa))
    meta = rows.select_columns(["id", "scale", "source"])
    scale_of = dict(zip(meta["id"], meta["scale"]))
    source_of = dict(zip(meta["id"], meta["source"]))

    out.mkdir(parents=True, exist_ok=True)
    log = out / "samples.jsonl"
    done = _read_done(log)
    todo = [k for k in range(n) if vqa.sample_id(k) not in done]
    bar = tqdm(total=n, initial=n - len(todo), unit="sample", desc=f"evaluate {model}", disable=not progress)
    with open(log, "a", encoding="utf-8") as f:
        for start in range(0, len(todo), batch_size):
            items = [vqa[k] for k in todo[start:start + batch_size]]
            t0 = time.perf_counter()
            responses = adapter.generate([Sample(s["prompt"], s["image"]) for s in items])
            latency = (time.perf_counter() - t0) / len(items)
            lines = []
            for s, resp in zip(items, responses):
                verdict = score_response(s["reference"], resp)
                rec = {"id": s["id"], "meta_id": s["meta_id"], "task": s["task"], "text_rep": s["text_rep"],
                       "visual_rep": s["visual_rep"], "scale": scale_of[s["meta_id"]],
                       "source": source_of[s["meta_id"]], "response": resp, "parsed": verdict.parsed,
                       "correct": verdict.correct, "unparsed": verdict.unparsed, "latency_s": round(latency, 4),
                       "reference": s["reference"]}
                done[rec["id"]] = rec
                lines.append(json.dumps(rec, ensure_ascii=False) + "\n")
            f.write("".join(lines))
            f.flush()
            os.fsync(f.fileno())
            bar.update(len(items))
    bar.close()

    records = [done[k] for k in sorted(done)]
    metric = evaluate.load(metric_path("hypergvl_accuracy"))
    scores = metric.compute(predictions=[r["response"] for r in records], references=[r["reference"] for r in records],
                            text_reps=[r["text_rep"] for r in records], visual_reps=[r["visual_rep"] for r in records],
                            scales=[r["scale"] for r in records], sources=[r["source"] for r in records])
    info = adapter.info()
    results = {"format": SUBMISSION_FORMAT, "model": info.to_dict(), "dataset": {
        "id": dataset, "sha256": dataset_digests(dataset)},
        "selection": {"tasks": list(tasks) if tasks else None, "text_reps": list(vqa.text_reps),
                      "visual_reps": list(vqa.visual_reps), "limit": limit},
        "num_samples": len(records), "scores": scores,
        "mean_latency_s": sum(r["latency_s"] for r in records) / len(records)}
    tmp = out / ".results.json.tmp"
    tmp.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, out / "results.json")
    return results


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset", required=True, help="a build folder (hypergvl build --out) or a Hub dataset id")
    p.add_argument("--model", required=True, help="hf:<id-or-path>, openai:<model>, baseline:random, baseline:symbolic")
    p.add_argument("--out", required=True, type=Path, help="output folder (resumable)")
    p.add_argument("--tasks", nargs="+", metavar="CODE")
    p.add_argument("--text-reps", nargs="+", metavar="REP")
    p.add_argument("--visual-reps", nargs="+", metavar="REP")
    p.add_argument("--limit", type=int, help="evaluate only the first N samples")
    p.add_argument("--batch-size", type=int, default=8)
    hf = p.add_argument_group("hf: models")
    hf.add_argument("--device")
    hf.add_argument("--dtype", choices=["auto", "float32", "bfloat16", "float16"])
    hf.add_argument("--max-new-tokens", type=int)
    api = p.add_argument_group("openai: models")
    api.add_argument("--base-url")
    api.add_argument("--concurrency", type=int)
    api.add_argument("--timeout", type=float)
    api.add_argument("--max-retries", type=int)
    p.add_argument("--no-progress", action="store_true")


@command("evaluate", _args)
def _evaluate(args: argparse.Namespace) -> int:
    """Run a model over a built dataset and write a leaderboard submission."""
    prefix = args.model.partition(":")[0]
    names = {"hf": ["device", "dtype", "max_new_tokens"],
             "openai": ["base_url", "concurrency", "timeout", "max_retries"]}
    options = {}
    for group, keys in names.items():
        for k in keys:
            value = getattr(args, k)
            if value is not None:
                if group != prefix:
                    raise UserError(f"--{k.replace('_', '-')} applies to {group}: models only")
                options[k] = value
    if prefix == "openai":
        options["concurrency"] = options.get("concurrency", 4)
    from .adapters import AdapterError

    try:
        res = evaluate_model(args.dataset, args.model, args.out, tasks=args.tasks, text_reps=args.text_reps,
                             visual_reps=args.visual_reps, limit=args.limit, batch_size=args.batch_size,
                             model_options=options, progress=not args.no_progress)
    except AdapterError as exc:
        raise UserError(f"the model failed: {exc} (answers so far are kept in {args.out / 'samples.jsonl'})") from None
    s = res["scores"]
    print(f"{res['model']['name']}: accuracy {s['accuracy']:.2f}% over {res['num_samples']} samples "
          f"(Avg.U {s['avg_u'] if s['avg_u'] is not None else float('nan'):.2f}, "
          f"Avg.R {s['avg_r'] if s['avg_r'] is not None else float('nan'):.2f}); wrote {args.out / 'results.json'}")
    return 0
