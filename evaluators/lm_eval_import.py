"""``hypergvl import-lm-eval LOGDIR --dataset BUILD --out RUN``: an lm-evaluation-harness run of the HyperGVL
text-only tasks (evaluators/lm_eval/) as a run folder.

``lm_eval ... --include_path evaluators/lm_eval --log_samples --output_path LOGDIR`` writes, per run,
``<model>/results_<date>.json`` and one ``<model>/samples_<task>_<date>.jsonl`` per task. Each logged line holds its
document (``doc``: the sample id ``<meta id>/<text rep>/none``, its prompt and reference) and the model's response
(``filtered_resps``). This command checks every document against the rows of BUILD (the same reference, and the
prompt :func:`hypergvl.vqa.expand` makes from the row, which ``hypergvl evaluate --visual-reps none`` sends), grades
each response again with the current rules (:func:`hypergvl.tasks.score_response`) and writes the ``samples.jsonl``
and ``results.json`` that ``hypergvl evaluate`` writes (:func:`hypergvl.evaluators.run_folder.write_results`), with
provenance naming lm-eval and its version, so ``hypergvl report``, ``score`` and ``submit`` take it.

lm-eval logs no token counts and no per-sample time: ``finish_reason`` is None (unknown) and ``latency_s`` the run's
evaluation time over its samples. The folder is claimed as ``hypergvl evaluate`` claims it (``run.json``).

Refused with one line (exit status 2): a missing LOGDIR, one without logged samples or with several runs, samples of
a task that is not a HyperGVL text-only task, and documents that are not those of BUILD's rows.
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from hypergvl.build_folder import dataset_info, load_rows
from hypergvl.cli import UserError, command
from hypergvl.tasks import TASKS, score_response
from hypergvl.text import TEXT_REPS
from hypergvl.vqa import TEXT_ONLY, expand

from .adapters import ModelInfo
from .harness import _summary
from .harness_logs import logged_lines, logged_response, read_results, spread_latency
from .lm_eval import code_of
from .run_folder import LOG, claim_folder, write_log, write_results
from .selection import selection_digest

HARNESS = "lm-eval"
# lm-eval's file names: samples_<task>_<date>.jsonl and results_<date>.json (the date holds no underscore)
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>[^_]+)\.jsonl$")
_RESULTS = "results_{date}.json"


def find_run(logdir: Path) -> tuple[dict, dict[str, Path]]:
    """(lm-eval results, {task: samples file}) of the one run logged under ``logdir``."""
    if not logdir.is_dir():
        raise UserError(f"{logdir} is not a folder (give the --output_path of an lm_eval run)")
    found = [(f, _SAMPLES.match(f.name)) for f in sorted(logdir.rglob("samples_*.jsonl"))]
    found = [(f, m) for f, m in found if m]
    if not found:
        raise UserError(f"{logdir} holds no lm-eval samples (samples_<task>_<date>.jsonl): run lm_eval with "
                        "--log_samples")
    runs = {(f.parent, m["date"]) for f, m in found}
    if len(runs) > 1:
        raise UserError(f"{logdir} holds {len(runs)} lm-eval runs ({', '.join(sorted(d for _, d in runs))}); point "
                        "at a folder holding one")
    folder, date = runs.pop()
    path = folder / _RESULTS.format(date=date)
    results = read_results(path, logdir, HARNESS)
    return results, {m["task"]: f for f, m in found}


def import_run(logdir: Path, dataset: str, out: Path, *, model_type: str = "open") -> dict:
    """Write ``out/samples.jsonl`` and ``out/results.json`` from the lm-eval run under ``logdir``."""
    results, files = find_run(logdir)
    codes = {}
    for task, path in files.items():
        try:
            codes[task] = code_of(task)
        except ValueError as exc:
            raise UserError(f"{path}: {exc}") from None
    info = dataset_info(dataset)
    if info["questions_only"]:
        raise UserError(f"{dataset} is a questions-only set: the lm-eval tasks grade against the answers, so their "
                        "samples come from a full build; give that build")
    lines = {task: list(logged_lines(path, HARNESS, lambda d: d["doc"])) for task, path in files.items()}
    reps = [r for r in TEXT_REPS if any(isinstance(doc, dict) and doc.get("text_rep") == r
                                        for logged in lines.values() for _, doc, _ in logged)]
    rows = load_rows(dataset, info["build_sha256"])
    missing = [r for r in reps if f"text_{r}" not in rows.column_names]
    if missing or not reps:
        raise UserError(f"{dataset} has no text_{missing[0]} column: these samples come from another build"
                        if missing else f"{logdir}: no logged document names a registered text representation")
    samples = expand(rows, tuple(reps), (TEXT_ONLY,))
    row_of = {meta: i for i, meta in enumerate(samples.meta_ids)}
    meta = rows.select_columns(["scale", "source"]).to_list()
    try:
        seconds = float(results.get("total_evaluation_time_seconds"))
    except (TypeError, ValueError):
        seconds = None
    records: dict[str, dict] = {}
    for task, path in files.items():
        for n, doc, d in lines[task]:
            row = row_of.get(doc.get("meta_id")) if isinstance(doc, dict) else None
            rep = doc.get("text_rep") if isinstance(doc, dict) else None
            sample = samples[samples.index(row, rep, TEXT_ONLY)] if row is not None and rep in reps else None
            if sample is None or sample["id"] != doc.get("id") or sample["reference"] != doc.get("reference") \
                    or sample["task"] != codes[task]:
                raise UserError(f"{path}:{n}: document {doc.get('id') if isinstance(doc, dict) else doc!r} is not a "
                                f"{codes[task]} problem of {dataset}: these samples come from another build (give the "
                                "--dataset lm_eval read, $HYPERGVL_DATASET)")
            if sample["prompt"] != doc.get("prompt"):
                raise UserError(f"{path}:{n}: document {sample['id']} was asked another prompt than `hypergvl "
                                "evaluate` asks (tasks of another version?): rerun lm_eval with these task files")
            rec = {"id": sample["id"], "meta_id": doc["meta_id"], "task": sample["task"], "text_rep": rep,
                   "visual_rep": TEXT_ONLY, "scale": meta[row]["scale"], "source": meta[row]["source"],
                   "response": logged_response(d), "finish_reason": None, "latency_s": None}
            v = score_response(sample["reference"], rec["response"])
            rec.update(parsed=v.parsed, correct=v.correct, unparsed=v.unparsed, reference=sample["reference"])
            records[rec["id"]] = rec
    spread_latency(records, seconds, len(records))
    config = results["config"]
    tasks = sorted({r["task"] for r in records.values()}, key=list(TASKS).index)
    # None, as `hypergvl evaluate` records it, when the run covers every task the build holds
    selection = {"tasks": None if set(tasks) == set(rows["task"]) else tasks,
                 "text_reps": [r for r in TEXT_REPS if any(x["text_rep"] == r for x in records.values())],
                 "visual_reps": [TEXT_ONLY], "limit": config.get("limit"), "routing": None, "shard": None,
                 "num_samples": len(records), "digest": selection_digest(records)}
    first = results["configs"].get(sorted(files)[0]) or {}
    kwargs = first.get("generation_kwargs") or {}
    generation = {"max_new_tokens": kwargs.get("max_gen_toks"), "do_sample": kwargs.get("do_sample"),
                  "temperature": kwargs.get("temperature"), "until": kwargs.get("until"),
                  "lm_eval_model": config.get("model"), "lm_eval_model_args": config.get("model_args"),
                  "chat_template_applied": results.get("chat_template") is not None,
                  "chat_template_sha": results.get("chat_template_sha"),
                  "system_instruction": results.get("system_instruction")}
    name = str(results.get("model_name") or config.get("model"))
    params = config.get("model_num_parameters")
    model = ModelInfo(name, model_type, config.get("model_sha") or None,
                      params if isinstance(params, int) and params > 0 else None).to_dict()
    claim_folder(out, f"{HARNESS}:{config.get('model')}:{name}", info["build_sha256"])
    write_log(out / LOG, records)
    version = results.get("lm_eval_version")
    return write_results(out, records, model=model, dataset=info, selection=selection, text_only=True,
                         generation=generation, device=config.get("device"),
                         config={"command": "import-lm-eval", "harness": {"name": HARNESS, "version": version},
                                 "logdir": str(logdir), "dataset": dataset, "lm_eval_version": version,
                                 "lm_eval": {k: config.get(k) for k in ("model", "model_args", "limit", "gen_kwargs")},
                                 "task_versions": results.get("versions")})


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("logdir", type=Path, help="the --output_path of `lm_eval ... --log_samples` (or its model folder)")
    p.add_argument("--dataset", required=True, help="the build lm_eval read ($HYPERGVL_DATASET): a folder or Hub id")
    p.add_argument("--out", required=True, type=Path, help="the run folder to write (samples.jsonl, results.json)")
    p.add_argument("--model-type", choices=["open", "closed"], default="open",
                   help="open (weights available, the default) or closed (an API model)")


@command("import-lm-eval", _args)
def _import(args: argparse.Namespace) -> int:
    """Turn an lm-eval run of the HyperGVL text-only tasks (--log_samples) into a run folder for report and submit."""
    print(_summary(import_run(args.logdir, args.dataset, args.out, model_type=args.model_type), args.out))
    return 0
