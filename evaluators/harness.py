"""``hypergvl evaluate``: run a model over a built HyperGVL dataset and write a leaderboard submission.

HyperGVL sec. 3.1: "For all LVLMs, the zero-shot setting is adopted for the evaluation. The LVLMs are required to
provide answers in predefined formats". Each expanded sample (a text representation, then the E.2 question, plus
one visual representation) goes to the model; the raw response is verified by the ``hypergvl_accuracy`` metric.
Sec. 3.3 compares LVLMs with their LLMs: ``--visual-reps none`` sends the text representation and question only.

A run is the set of sample ids its selection names (:mod:`hypergvl.evaluators.selection`: tasks, representations,
limit, routing); processes, shards and reruns only partition that set, so every partition merges to the same records:

* ``accelerate launch -m hypergvl evaluate ...``: each rank answers every world-size-th sample still to
  answer and appends to ``samples.rank<R>.jsonl``; the main process merges the rank files into ``samples.jsonl``
  and writes ``results.json``. A rerun after a crash, with any world size, reads every file and skips what is done.
* ``--shard I/N``: only the samples whose id hashes to shard I (:func:`hypergvl.evaluators.selection.shard_of`);
  ``hypergvl merge`` combines the N shard folders, refusing overlaps, gaps and shards of different runs.
* ``--routing SPEC`` (``router:DIR``, ``rand``, ``top``, ``oracle:RUN``): one sample per meta problem, the pair a
  routing policy (:mod:`hypergvl.evaluators.routing`) chooses (HyperGVL sec. 4); each record names the policy.

On a questions-only set (``hypergvl strip``) the raw responses are recorded unscored (no ``correct``) and
``results.json`` says ``"scored": false``; ``hypergvl score RUN --dataset FULL_BUILD`` scores them later. The same
command re-grades any run folder from its raw responses with the current grading rules: every ``results.json``
records the ``scorer_version`` (:data:`hypergvl.answers.SCORER_VERSION`; files without it are version
"1"), so a score made under older rules can be told apart and recomputed without asking the model again.

Output folder::

    samples.jsonl   one line per answered sample: id, meta_id, task, text_rep, visual_rep, scale, source, response,
                    finish_reason ("stop", or "length" when cut at the token limit), latency_s, and (scored)
                    parsed, correct, unparsed, reference; (routed) routing. Lines are
                    appended and flushed as answers arrive (fsync'ed at least every second): a crash loses at most
                    the requests in flight, and a rerun skips every sample already answered
    results.json    the leaderboard submission (written atomically at the end; schema in
                    :func:`hypergvl.evaluators.run_folder.write_results`)
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from hypergvl.build_folder import dataset_info, load_rows
from hypergvl.cli import UserError, command
from hypergvl.tasks import score_response

from .adapters import DEFAULT_MAX_NEW_TOKENS, AdapterError, Sample, finish_reason, make_adapter
from .pipeline import answers, prefetch, window_size
from .preflight import check_dataset, check_model
from .run_folder import (LOG, RESULTS, claim_folder, consolidate, drop_partial_tail, load_run, log_files, read_records,
                         write_log, write_results)
from .selection import Selection, parse_shard, plan, selection_digest, shard_of

FSYNC_EVERY_S = 1.0


# ================================================================================================ inputs
# ================================================================================================ evaluate
def _distributed():
    """accelerate's process state when launched with several processes (``accelerate launch --multi_gpu``,
    ``torchrun``), else None. Without CUDA the ranks talk over gloo on the CPU (accelerate's ``--cpu`` flag itself
    starts a single process unless MPI is set up)."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return None
    from datetime import timedelta

    # lazy: torch + accelerate 7-10 s; 'hypergvl --help' imports this module, only a distributed run needs them
    import torch
    from accelerate import PartialState

    state = PartialState(cpu=not torch.cuda.is_available(), timeout=timedelta(hours=12))  # ranks wait for the slowest
    return state if state.num_processes > 1 else None


def evaluate_model(dataset: str, model: str, out: Path, *, tasks=None, text_reps=None, visual_reps=None,
                   limit: int | None = None, batch_size: int = 8, model_options: dict | None = None,
                   progress: bool = True, shard: tuple[int, int] | None = None, routing: str | None = None,
                   prefetch_workers: int = 2) -> dict | None:
    """Answer every selected sample not yet in ``out`` and write ``results.json``.

    Returns the results (None on the non-main ranks of a distributed run)."""
    from tqdm.auto import tqdm

    from . import baselines  # noqa: F401 - registers baseline:* (0.1-0.15 s that every other hypergvl command skips)

    if batch_size < 1:
        raise UserError("--batch-size must be at least 1")
    if not progress:
        # lazy: datasets 2.7 s; 'hypergvl --help' imports this module
        import datasets

        datasets.disable_progress_bars()
    selection = Selection(tuple(tasks) if tasks else None, tuple(text_reps) if text_reps else None,
                          tuple(visual_reps) if visual_reps else None, limit, routing, shard)
    state = _distributed()
    rank, world = (state.process_index, state.num_processes) if state else (0, 1)
    options = dict(model_options or {})
    if state is not None and model.startswith("hf:") and "device" not in options:
        options["device"] = str(state.device)  # this rank's GPU (or the CPU under --cpu)
    adapter = make_adapter(model, **options)  # fails before any file is touched: earlier answers stay
    if not selection.text_only and getattr(adapter, "takes_images", True) is False:
        raise UserError(f"{model} is a text-only model; evaluate it with --visual-reps none")
    data_info = dataset_info(dataset)
    rows = load_rows(dataset, data_info["build_sha256"])
    vqa, indices, policy_name, full_ids = plan(rows, selection)
    meta = rows.select_columns(["id", "scale", "source"])
    scale_of, source_of = dict(zip(meta["id"], meta["scale"])), dict(zip(meta["id"], meta["source"]))

    claim_folder(out, model, data_info["build_sha256"], is_main=rank == 0)
    done = read_records(log_files(out))
    if state is not None:
        state.wait_for_everyone()  # every rank has read the same files before any rank appends
    todo = [k for k in indices if vqa.sample_id(k) not in done][rank::world]
    log = out / (f"samples.rank{rank}.jsonl" if state is not None else LOG)
    drop_partial_tail(log)

    def load(ks: list[int]):
        items = [vqa[k] for k in ks]
        samples = [Sample(s["prompt"], s["image"]) for s in items]
        return items, (adapter.prepare(samples) if hasattr(adapter, "prepare") else samples)

    unit = 1 if window_size(adapter) > 1 else batch_size
    units = [todo[i:i + unit] for i in range(0, len(todo), unit)]
    stream = prefetch(load, units, workers=prefetch_workers, ahead=max(2 * window_size(adapter), 4))
    mine = len(indices) if state is None else len(todo)
    bar = tqdm(total=mine, initial=mine - len(todo), unit="sample", disable=None if progress and rank == 0 else True,
               desc=f"evaluate {model}" + (f" (rank 0 of {world})" if state else ""))
    last_sync = time.monotonic()
    with open(log, "a", encoding="utf-8") as f:
        try:
            for s, response, latency in answers(adapter, stream):
                rec = {"id": s["id"], "meta_id": s["meta_id"], "task": s["task"], "text_rep": s["text_rep"],
                       "visual_rep": s["visual_rep"], "scale": scale_of[s["meta_id"]],
                       "source": source_of[s["meta_id"]], "response": str(response),
                       "finish_reason": finish_reason(response), "latency_s": round(latency, 4)}
                if s["reference"] is not None:
                    verdict = score_response(s["reference"], rec["response"])
                    rec.update(parsed=verdict.parsed, correct=verdict.correct, unparsed=verdict.unparsed,
                               reference=s["reference"])
                if policy_name is not None:
                    rec["routing"] = policy_name
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                f.flush()
                if time.monotonic() - last_sync >= FSYNC_EVERY_S:
                    os.fsync(f.fileno())
                    last_sync = time.monotonic()
                bar.update(1)
        finally:
            f.flush()
            os.fsync(f.fileno())
            bar.close()
    info = _model_info(adapter, state, out)
    if state is not None:
        state.wait_for_everyone()
        if not state.is_main_process:
            return None
    records = consolidate(out)
    wanted = set(vqa.sample_id(k) for k in indices)
    records = {k: v for k, v in records.items() if k in wanted}
    sel = selection.to_dict() | {"routing": policy_name, "num_samples": len(full_ids),
                                 "digest": selection_digest(full_ids)}
    generation = adapter.generation_settings() if hasattr(adapter, "generation_settings") else None
    device = getattr(adapter, "device", None)
    config = {"command": "evaluate", "dataset": dataset, "model": model, "model_options": options,
              "selection": sel, "batch_size": batch_size, "world_size": world}
    return write_results(out, records, model=info, dataset=data_info, selection=sel, text_only=selection.text_only,
                         generation=generation, device=None if device is None else str(device), config=config)


def _model_info(adapter, state, out: Path) -> dict:
    """The model's info as recorded in ``results.json``. A server's revision is learned from its answers, so it is
    taken from whichever rank answered, else from the folder's earlier results (a rerun that answered nothing)."""
    infos = [adapter.info().to_dict()]
    if state is not None:
        # lazy: accelerate 7.3 s; 'hypergvl --help' imports this module, only a distributed run needs it
        from accelerate.utils import gather_object

        infos = gather_object(infos)
    with_revision = [i for i in infos if i.get("revision") is not None]
    if with_revision:
        return with_revision[0]
    try:
        earlier = json.loads((out / RESULTS).read_text())["model"]
    except (OSError, ValueError, KeyError, TypeError):
        return infos[0]
    return earlier if earlier.get("name") == infos[0]["name"] else infos[0]


# ================================================================================================ merge, score
def merge_runs(folders: list[Path], out: Path) -> dict:
    """Combine the shard folders of one run into ``out``: the same records and results as an unsharded run.

    Refused with a message naming the folders: results of different datasets, models or selections, a shard
    missing or given twice, a sample in two folders, a sample in the wrong shard, or samples missing."""
    runs = [(f, *load_run(f)) for f in folders]
    first, res0, _ = runs[0]
    key = lambda r: {k: v for k, v in r["selection"].items() if k != "shard"}  # noqa: E731
    count = None
    seen_shards: dict[int, Path] = {}
    merged: dict[str, dict] = {}
    owner: dict[str, Path] = {}
    for folder, res, recs in runs:
        for what, a, b in (("dataset", res0["dataset"]["sha256"], res["dataset"]["sha256"]),
                           ("model", res0["model"], res["model"]), ("selection", key(res0), key(res))):
            if a != b:
                raise UserError(f"{folder} and {first} are not shards of one run: their {what} differs")
        shard = res["selection"].get("shard")
        if shard is None:
            raise UserError(f"{folder} is not a shard (it was run without --shard)")
        i, n = shard
        if count is not None and n != count:
            raise UserError(f"{folder} is shard {i}/{n} but {first} has {count} shards")
        count = n
        if i in seen_shards:
            raise UserError(f"shard {i}/{n} given twice: {seen_shards[i]} and {folder}")
        seen_shards[i] = folder
        for sid, rec in recs.items():
            if shard_of(sid, n) != i:
                raise UserError(f"{folder}: sample {sid} belongs to shard {shard_of(sid, n)}, not {i}")
            if sid in owner:
                raise UserError(f"sample {sid} is in both {owner[sid]} and {folder}")
            owner[sid] = folder
            merged[sid] = rec
    missing = sorted(set(range(count)) - set(seen_shards))
    if missing:
        raise UserError(f"missing shard(s) {', '.join(f'{i}/{count}' for i in missing)}")
    want = res0["selection"]["num_samples"]
    if len(merged) != want or selection_digest(merged) != res0["selection"]["digest"]:
        raise UserError(f"the shards hold {len(merged)} of the run's {want} samples (or other samples): "
                        "rerun the incomplete shards before merging")
    out.mkdir(parents=True, exist_ok=True)
    write_log(out / LOG, merged)
    sel = dict(res0["selection"], shard=None)
    config = {"command": "merge", "shards": [str(f) for f in folders]}
    return write_results(out, merged, model=res0["model"], dataset=res0["dataset"], selection=sel,
                         text_only=res0["text_only"], generation=res0.get("generation"), config=config)


def score_run(run: Path, dataset: str, out: Path) -> dict:
    """Grade the raw responses of any run folder with the current rules and write ``out/results.json`` with the
    current ``scorer_version``: a run over a questions-only set against the full build it was stripped from, or a
    run scored under older grading rules (its earlier verdicts are replaced; its responses are never asked again).
    Logs and results written before ``finish_reason``, ``scorer_version`` or ``provenance`` existed are read."""
    res, recs = load_run(run)
    full = dataset_info(dataset)
    expected = res["dataset"].get("full_build_sha256") or res["dataset"].get("build_sha256")
    if expected != full["build_sha256"]:
        raise UserError(f"{run} was answered on a set derived from build {expected}, not from {dataset} "
                        f"({full['build_sha256']})")
    rows = load_rows(dataset, full["build_sha256"]).select_columns(["id", "reference"])
    reference = dict(zip(rows["id"], rows["reference"]))
    scored = {}
    for sid, rec in recs.items():
        ref = reference.get(rec["meta_id"])
        if ref is None:
            raise UserError(f"{run}: sample {sid} has no meta problem {rec['meta_id']} in {dataset}")
        v = score_response(ref, rec["response"])
        scored[sid] = dict(rec, parsed=v.parsed, correct=v.correct, unparsed=v.unparsed, reference=ref)
    out.mkdir(parents=True, exist_ok=True)
    write_log(out / LOG, scored)
    config = {"command": "score", "run": str(run), "dataset": dataset,
              "previous_scorer_version": res.get("scorer_version", "1") if res.get("scored") else None}
    return write_results(out, scored, model=res["model"], dataset=dict(res["dataset"], scored_against=full),
                         selection=res["selection"], text_only=res["text_only"], generation=res.get("generation"),
                         config=config)


# ================================================================================================ commands
def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset", required=True, help="a build folder (hypergvl build --out) or a Hub dataset id")
    p.add_argument("--model", required=True, help="hf:<id-or-path>, openai:<model>, baseline:random, baseline:symbolic")
    p.add_argument("--out", required=True, type=Path, help="output folder (resumable)")
    p.add_argument("--tasks", nargs="+", metavar="CODE")
    p.add_argument("--text-reps", nargs="+", metavar="REP")
    p.add_argument("--visual-reps", nargs="+", metavar="REP", help="'none' for text only (an LLM, sec. 3.3)")
    p.add_argument("--limit", type=int, help="evaluate only the first N samples")
    p.add_argument("--batch-size", type=int, default=8,
                   help="samples per model call: for hf: the real forward batch (default 8)")
    p.add_argument("--shard", type=parse_shard, metavar="I/N", help="answer only shard I of N (merge with hypergvl merge)")
    p.add_argument("--routing", metavar="SPEC",
                   help="one sample per meta problem, chosen by router:DIR, rand[:SEED], top or oracle:RUN_DIR")
    p.add_argument("--prefetch-workers", type=int, default=2, help="threads preparing samples ahead of the model")
    p.add_argument("--max-new-tokens", type=int,
                   help=f"token limit of each answer, for hf: and openai: (max_tokens) alike (default "
                        f"{DEFAULT_MAX_NEW_TOKENS}: room for a reasoning model's thinking; results.json gives the "
                        "share of answers cut at the limit)")
    hf = p.add_argument_group("hf: models")
    hf.add_argument("--device")
    hf.add_argument("--dtype", choices=["auto", "float32", "bfloat16", "float16"])
    hf.add_argument("--generation-config", choices=["greedy", "checkpoint"],
                    help="greedy (default): sampling and every penalty off, whatever the checkpoint's "
                         "generation_config says; checkpoint: the checkpoint's own generation_config")
    api = p.add_argument_group("openai: models")
    api.add_argument("--base-url")
    api.add_argument("--concurrency", type=int, help="requests kept in flight (a sliding window; default 4)")
    api.add_argument("--timeout", type=float)
    api.add_argument("--max-retries", type=int)
    p.add_argument("--no-progress", action="store_true")


def _summary(res: dict, out: Path) -> str:
    if not res["scored"]:
        return f"{res['model']['name']}: {res['num_samples']} raw responses, unscored (questions-only set); wrote {out / RESULTS}"
    s = res["scores"]
    cut = res.get("truncated_share")
    cut = f", {100 * cut:.1f}% cut at the token limit" if cut else ""

    def avg(key: str, kind: str) -> str:  # "-" when the selection holds no task of that kind (--limit, --tasks)
        return f"{s[key]:.2f}" if s[key] is not None else f"- (no {kind} task answered)"

    ext = f", Avg.Ext {s['avg_ext']:.2f}" if s.get("avg_ext") is not None else ""  # tasks beyond the paper's
    return (f"{res['model']['name']}: accuracy {s['accuracy']:.2f}% over {res['num_samples']} samples "
            f"(Avg.U {avg('avg_u', 'understanding')}, Avg.R {avg('avg_r', 'reasoning')}{ext}{cut}); "
            f"wrote {out / RESULTS}")


@command("evaluate", _args)
def _evaluate(args: argparse.Namespace) -> int:
    """Run a model over a built dataset and write a leaderboard submission."""
    prefix = args.model.partition(":")[0]
    names = {"hf": ["device", "dtype", "generation_config"],
             "openai": ["base_url", "concurrency", "timeout", "max_retries"]}
    options = {}
    if args.max_new_tokens is not None:
        if prefix not in names:
            raise UserError("--max-new-tokens applies to hf: and openai: models only")
        options["max_new_tokens" if prefix == "hf" else "max_tokens"] = args.max_new_tokens
    for group, keys in names.items():
        for k in keys:
            value = getattr(args, k)
            if value is not None:
                if group != prefix:
                    raise UserError(f"--{k.replace('_', '-')} applies to {group}: models only")
                options[k] = value
    if prefix == "openai":
        options["concurrency"] = options.get("concurrency", 4)
    if args.prefetch_workers < 1:
        raise UserError("--prefetch-workers must be at least 1")
    Selection(*(tuple(v) if v else None for v in (args.tasks, args.text_reps, args.visual_reps)), args.limit,
              args.routing, args.shard)  # its names and numbers checked first: evaluate_model makes it again
    check_dataset(args.dataset)  # a mistake answered in a second, before a retrying download or a model load
    check_model(args.model, options)
    try:
        res = evaluate_model(args.dataset, args.model, args.out, tasks=args.tasks, text_reps=args.text_reps,
                             visual_reps=args.visual_reps, limit=args.limit, batch_size=args.batch_size,
                             model_options=options, progress=not args.no_progress, shard=args.shard,
                             routing=args.routing, prefetch_workers=args.prefetch_workers)
    except AdapterError as exc:
        raise UserError(f"the model failed: {exc} (answers so far are kept in {args.out})") from None
    if res is not None:
        print(_summary(res, args.out))
    return 0


def _merge_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("shards", nargs="+", type=Path, help="the output folders of `hypergvl evaluate --shard I/N`")
    p.add_argument("--out", required=True, type=Path)


@command("merge", _merge_args)
def _merge(args: argparse.Namespace) -> int:
    """Combine the shard folders of one run into one submission."""
    print(_summary(merge_runs(args.shards, args.out), args.out))
    return 0


def _score_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", type=Path, help="an evaluate output folder: over a questions-only set, or graded under "
                                          "older rules")
    p.add_argument("--dataset", required=True, help="the full build the run's set is (or was stripped from)")
    p.add_argument("--out", required=True, type=Path)


@command("score", _score_args)
def _score(args: argparse.Namespace) -> int:
    """Grade a run's raw responses with the current rules against the full build (questions-only sets, old runs)."""
    check_dataset(args.dataset)
    print(_summary(score_run(args.run, args.dataset, args.out), args.out))
    return 0
