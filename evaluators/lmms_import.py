"""``hypergvl import-lmms-eval LOGDIR --dataset BUILD --out RUN``: an lmms-eval run of the HyperGVL tasks as a run folder.

lmms-eval (``--include_path evaluators/lmms_eval --log_samples --output_path LOGDIR``) writes, per run,
``<date>_results.json`` and one ``<date>_samples_<task>.jsonl`` per subtask. Each logged line names its document
(``doc_id``, the row number in the build, and ``target``, the row's answer) and the model's response
(``filtered_resps``). This command turns them into the ``samples.jsonl`` and ``results.json`` that ``hypergvl
evaluate`` writes (:func:`hypergvl.evaluators.run_folder.write_results`, with provenance), so ``hypergvl report``
and ``hypergvl score`` read it. Each response is graded again with the current rules
(:func:`hypergvl.tasks.score_response`), as HyperGVL sec. 3.1 has every response verified against its row; a
questions-only build gives unscored records.
lmms-eval logs each response stripped of surrounding white space, so ``response`` is the harness's response
stripped (graded alike: the grading rules ignore that white space). ``finish_reason`` is ``"length"`` when the
logged output token count reached the run's ``max_new_tokens``; ``latency_s`` is the run's generation time over its
samples (lmms-eval logs no per-sample time). The folder is claimed as ``hypergvl evaluate`` claims it
(``run.json``): a folder holding another model's or build's run is refused.

Refused with one line (exit status 2): a missing LOGDIR, one without logged samples or with several runs, samples
of a task that is not a HyperGVL subtask, and samples whose documents are not the rows of BUILD.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from hypergvl.build_folder import dataset_info, load_rows
from hypergvl.cli import UserError, command
from hypergvl.tasks import score_response
from hypergvl.vqa import TEXT_ONLY

from .adapters import ModelInfo
from .harness import _summary
from .harness_logs import logged_lines, logged_response, read_results, spread_latency
from .lmms_eval.utils import pair_of
from .run_folder import LOG, claim_folder, write_log, write_results
from .selection import selection_digest

SAMPLES = "_samples_"
RESULTS_SUFFIX = "_results.json"


def find_run(logdir: Path) -> tuple[dict, dict[str, Path]]:
    """(lmms-eval results, {task: samples file}) of the one run logged under ``logdir``."""
    if not logdir.is_dir():
        raise UserError(f"{logdir} is not a folder (give the --output_path of an lmms-eval run)")
    files = sorted(logdir.rglob(f"*{SAMPLES}*.jsonl"))
    if not files:
        raise UserError(f"{logdir} holds no lmms-eval samples (*{SAMPLES}<task>.jsonl): run lmms-eval with --log_samples")
    runs = {f.with_name(f.name.split(SAMPLES)[0]) for f in files}
    if len(runs) > 1:
        raise UserError(f"{logdir} holds {len(runs)} lmms-eval runs ({', '.join(sorted(r.name for r in runs))}); "
                        "point at the folder of one")
    prefix = runs.pop()
    results_path = prefix.with_name(prefix.name + RESULTS_SUFFIX)
    results = read_results(results_path, logdir, "lmms-eval")
    return results, {f.name.split(SAMPLES, 1)[1][:-len(".jsonl")]: f for f in files}


def import_run(logdir: Path, dataset: str, out: Path, *, model_type: str = "open") -> dict:
    """Write ``out/samples.jsonl`` and ``out/results.json`` from the lmms-eval run under ``logdir``."""
    results, files = find_run(logdir)
    pairs = {}
    for task in files:
        try:
            pairs[task] = pair_of(task)
        except ValueError as exc:
            raise UserError(f"{files[task]}: {exc}") from None
    info = dataset_info(dataset)
    columns = ["id", "task", "answer", "scale", "source"] + ["reference"] * (not info["questions_only"])
    rows = load_rows(dataset, info["build_sha256"]).select_columns(columns).to_list()
    elapsed, generated = (results.get("throughput") or {}).get("total_elapsed_time"), 0
    records: dict[str, dict] = {}
    for task, path in files.items():
        text_rep, visual_rep = pairs[task]
        limit = ((results["configs"].get(task) or {}).get("generation_kwargs") or {}).get("max_new_tokens")
        for n, doc_id, d in logged_lines(path, "lmms-eval", lambda d: int(d["doc_id"])):
            row = rows[doc_id] if 0 <= doc_id < len(rows) else None
            logged = d.get("accuracy") if isinstance(d.get("accuracy"), dict) else {}
            if row is None or d.get("target") != row["answer"] or logged.get("id", row["id"]) != row["id"]:
                raise UserError(f"{path}:{n}: document {doc_id} is not row {doc_id} of {dataset}: these samples "
                                "come from another build (give the --dataset lmms-eval ran on)")
            tokens = [c.get("output_tokens") for c in d.get("token_counts") or [] if isinstance(c, dict)]
            cut = bool(limit and tokens and isinstance(tokens[0], int) and tokens[0] >= limit)
            rec = {"id": f"{row['id']}/{text_rep}/{visual_rep}", "meta_id": row["id"], "task": row["task"],
                   "text_rep": text_rep, "visual_rep": visual_rep, "scale": row["scale"], "source": row["source"],
                   "response": logged_response(d), "finish_reason": "length" if cut else "stop", "latency_s": None}
            if "reference" in row:
                v = score_response(row["reference"], rec["response"])
                rec.update(parsed=v.parsed, correct=v.correct, unparsed=v.unparsed, reference=row["reference"])
            records[rec["id"]] = rec
            generated += 1
    spread_latency(records, elapsed, generated)  # lmms-eval logs the generation time of the whole run
    config = results["config"]
    reps = sorted({p[0] for p in pairs.values()}), sorted({p[1] for p in pairs.values()})
    selection = {"tasks": None, "text_reps": reps[0], "visual_reps": reps[1], "limit": config.get("limit"),
                 "routing": None, "shard": None, "num_samples": len(records), "digest": selection_digest(records)}
    first = results["configs"].get(sorted(files)[0]) or {}
    generation = dict(first.get("generation_kwargs") or {}, lmms_eval_model=config.get("model"),
                      lmms_eval_model_args=config.get("model_args"))
    model = ModelInfo(str(results.get("model_name") or config.get("model")), model_type).to_dict()
    claim_folder(out, f"lmms-eval:{config.get('model')}:{model['name']}", info["build_sha256"])
    write_log(out / LOG, records)
    return write_results(out, records, model=model, dataset=info, selection=selection,
                         text_only=reps[1] == [TEXT_ONLY], generation=generation,
                         config={"command": "import-lmms-eval", "logdir": str(logdir), "dataset": dataset,
                                 "harness": {"name": "lmms-eval", "version": results.get("lmms_eval_version")},
                                 "lmms_eval": {k: config.get(k) for k in ("model", "model_args", "limit", "gen_kwargs")},
                                 "lmms_eval_version": results.get("lmms_eval_version"),
                                 "task_versions": results.get("versions")})


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("logdir", type=Path, help="the --output_path of `lmms-eval ... --log_samples` (or its model folder)")
    p.add_argument("--dataset", required=True, help="the build lmms-eval read ($HYPERGVL_DATASET): a folder or Hub id")
    p.add_argument("--out", required=True, type=Path, help="the run folder to write (samples.jsonl, results.json)")
    p.add_argument("--model-type", choices=["open", "closed"], default="open",
                   help="open (weights available, the default) or closed (an API model)")


@command("import-lmms-eval", _args)
def _import(args: argparse.Namespace) -> int:
    """Turn an lmms-eval run of the HyperGVL tasks (--log_samples) into a run folder for report and score."""
    print(_summary(import_run(args.logdir, args.dataset, args.out, model_type=args.model_type), args.out))
    return 0
