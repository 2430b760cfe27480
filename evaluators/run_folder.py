"""The run folder ``hypergvl evaluate --out`` writes, and the one place that reads and writes its files.

    samples.jsonl           one JSON line per answered sample (the schema is in :mod:`hypergvl.evaluators.harness`)
    samples.rank<R>.jsonl   a rank's lines while a distributed run is in flight (merged into samples.jsonl at its end)
    results.json            the leaderboard submission (:func:`write_results`; :func:`load_run` reads it back)
    run.json                which model and build the folder's answers come from (:func:`claim_folder`)

Readers: the harness (resume, merge, score), ``hypergvl report`` and ``submit``, the lmms-eval import, the oracle
routing policy, the router's PRM dataset and study. Lines are read through :func:`hypergvl.runlog.iter_log`: any
damaged line but the last is refused with its line number. A last line cut short by a crash is what ``evaluate``
repairs (its resume drops that line and answers the sample again); every reader of a finished run
(:func:`finished_records`: ``score``, ``merge``, ``report``, ``submit``, the oracle, the router's PRM and study)
refuses it, naming the line and the resume, and refuses a log whose sample count is not the one ``results.json``
reports, rather than reading a shorter run as if it were whole.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

from hypergvl.answers import SCORER_VERSION
from hypergvl.atomic import atomic_path, write_json
from hypergvl.cli import UserError
from hypergvl.provenance import provenance
from hypergvl.runlog import iter_log

from .accuracy import accuracy_scores

LOG = "samples.jsonl"
RESULTS = "results.json"
RUN = "run.json"
SUBMISSION_FORMAT = 2


def samples(folder: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """(line number, record) of a finished run's ``samples.jsonl``, checked as :func:`finished_records` checks it;
    ``ValueError`` when there is none."""
    log = Path(folder) / LOG
    if not log.is_file():
        raise ValueError(f"{folder} is not a hypergvl evaluate output folder: no {LOG}")
    results = read_results(folder) if (Path(folder) / RESULTS).is_file() else None
    lines = list(_checked_lines(Path(folder), results))
    return iter(lines)


def cut_last_line(path: Path) -> int | None:
    """The number of the last line of ``path`` when a crash cut it short (it has no newline), else None."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return None
        f.seek(0)
        return f.read().count(b"\n") + 1


def _checked_lines(folder: Path, results: dict | None) -> Iterator[tuple[int, dict]]:
    log = folder / LOG
    ranks = sorted(folder.glob("samples.rank*.jsonl"))
    if ranks:
        raise UserError(f"{folder} holds {ranks[0].name}: a distributed run that did not finish (its rank logs are "
                        "merged at its end); rerun its hypergvl evaluate command to finish it")
    if (n := cut_last_line(log)) is not None:
        raise UserError(f"{log}: line {n}, the last, was cut short (a crash while it was written), so the run did "
                        "not finish; rerun the same hypergvl evaluate command: it resumes, answers that sample again "
                        f"and rewrites {RESULTS}")
    lines = list(iter_log(log))
    if results is not None and isinstance(results.get("num_samples"), int):
        held = len({rec["id"] for _, rec in lines})
        if held != results["num_samples"]:
            raise UserError(f"{folder}: {RESULTS} counts {results['num_samples']} samples but {LOG} holds {held}: "
                            "the files are not one finished run (a crash after a resume began, or files of two "
                            "runs); rerun its hypergvl evaluate command to finish it, or evaluate into a new --out")
    return iter(lines)


def finished_records(folder: str | os.PathLike, results: dict | None = None) -> dict[str, dict]:
    """The records by sample id of a finished run folder (the first copy of an id wins), refusing with a
    :class:`UserError` a run that did not finish: a cut last line, rank logs left, or a sample count other than
    ``results``' (its ``results.json``, when given)."""
    done: dict[str, dict] = {}
    for _, rec in _checked_lines(Path(folder), results):
        done.setdefault(rec["id"], rec)
    return done


def read_results(path: str | os.PathLike) -> dict:
    """A run's ``results.json`` (``path`` is the file or its folder), as a dict; :class:`UserError` naming the
    file when it is missing or is not a results object."""
    path = Path(path)
    path = path / RESULTS if path.is_dir() else path
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"no {RESULTS} at {path}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{path} is not a hypergvl evaluate {RESULTS} ({exc})") from None
    if not isinstance(results, dict):
        raise UserError(f"{path} is not a hypergvl evaluate {RESULTS} (not a JSON object)")
    return results


def drop_partial_tail(path: Path) -> None:
    """Cut a last line left unfinished by a crash, so appending starts on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - 1))
        if f.read(1) == b"\n":
            return
        f.seek(0)
        data = f.read()
        f.truncate(data.rfind(b"\n") + 1)


def log_files(out: Path) -> list[Path]:
    """The merged log first, then every rank's (from any world size)."""
    return [p for p in [out / LOG] if p.exists()] + sorted(out.glob("samples.rank*.jsonl"))


def read_records(paths) -> dict[str, dict]:
    """Records by sample id over several logs (the first copy wins); a last line cut short by a crash is skipped,
    any other damaged line refused (:func:`hypergvl.runlog.iter_log`)."""
    done: dict[str, dict] = {}
    for path in paths:
        for _, rec in iter_log(path):
            done.setdefault(rec["id"], rec)
    return done


def write_log(path: Path, records: dict[str, dict]) -> None:
    """All records, sorted by id, written atomically."""
    with atomic_path(path, fsync=True) as tmp, open(tmp, "w", encoding="utf-8") as f:
        for key in sorted(records):
            f.write(json.dumps(records[key], ensure_ascii=False) + "\n")


def consolidate(out: Path) -> dict[str, dict]:
    """Merge the rank logs into ``samples.jsonl`` (atomically, then remove them); returns every record."""
    files = log_files(out)
    records = read_records(files)
    ranks = [p for p in files if p.name != LOG]
    if ranks:
        write_log(out / LOG, records)
        for p in ranks:
            p.unlink()
    return records


def claim_folder(out: Path, model: str, build: str | None, *, is_main: bool = True) -> None:
    """Record in ``out/run.json`` which model and build the folder's answers come from, or refuse a folder that
    holds another run's (resuming it would mix two models' answers in one submission)."""
    path = out / RUN
    mine = {"model": model, "build_sha256": build}
    if path.exists():
        try:
            theirs = json.loads(path.read_text())
        except ValueError:
            theirs = None
        if theirs != mine:
            held = theirs.get("model") if isinstance(theirs, dict) else "unknown"
            raise UserError(f"{out} holds a run of {held} on build {str((theirs or {}).get('build_sha256'))[:12]}; "
                            f"choose another --out for {model}")
        return
    if not is_main:
        return
    out.mkdir(parents=True, exist_ok=True)
    if log_files(out):
        raise UserError(f"{out} holds answers of an unknown run (no {RUN}); choose another --out")
    write_json(path, mine)


def score_records(records: list[dict]) -> dict:
    """The ``hypergvl_accuracy`` summary of scored records (per task, representation, scale, source)."""
    return accuracy_scores(predictions=[r["response"] for r in records], references=[r["reference"] for r in records],
                           text_reps=[r["text_rep"] for r in records], visual_reps=[r["visual_rep"] for r in records],
                           scales=[r["scale"] for r in records], sources=[r["source"] for r in records])


def finish_stats(records) -> dict:
    """``finish_reasons`` (count per reason) and ``truncated_share``: the share of samples cut at the token limit
    (``finish_reason == "length"``) among those that record a reason (logs written before it existed record none:
    the share is then None)."""
    from collections import Counter

    counts = Counter(r["finish_reason"] for r in records if isinstance(r.get("finish_reason"), str))
    known = sum(counts.values())
    return {"finish_reasons": dict(sorted(counts.items())),
            "truncated_share": counts.get("length", 0) / known if known else None}


def write_results(out: Path, records: dict[str, dict], *, model: dict, dataset: dict, selection: dict,
                  text_only: bool, generation: dict | None = None, device: str | None = None,
                  config: dict | None = None) -> dict:
    """Write ``results.json`` (format 2) atomically and return it.

    Keys: ``format``; ``model`` (name, type, revision, num_parameters); ``dataset`` (id, sha256 per shard,
    build_sha256, questions_only, full_build_sha256); ``selection`` (tasks, text_reps, visual_reps, limit, routing,
    shard, num_samples and digest of the whole selection before sharding); ``text_only``; ``scored``;
    ``scorer_version`` (the grading rules that made ``scores``; None unscored); ``num_samples`` (answered here);
    ``scores`` (the ``hypergvl_accuracy`` output, or None unscored); ``generation`` (the decoding settings the
    adapter used, None for the baselines); ``finish_reasons`` and ``truncated_share`` (:func:`finish_stats`);
    ``mean_latency_s``; ``provenance`` (:func:`hypergvl.provenance.provenance` of ``config``, device).
    Readers accept files written before ``scorer_version``, ``generation``, the finish statistics and
    ``provenance`` existed."""
    recs = [records[k] for k in sorted(records)]
    scored = bool(recs) and all("reference" in r for r in recs)
    results = {"format": SUBMISSION_FORMAT, "model": model, "dataset": dataset, "selection": selection,
               "text_only": text_only, "scored": scored, "scorer_version": SCORER_VERSION if scored else None,
               "num_samples": len(recs), "scores": score_records(recs) if scored else None,
               "generation": generation, **finish_stats(recs),
               "mean_latency_s": sum(r["latency_s"] for r in recs) / len(recs) if recs else None,
               "provenance": provenance(config, device=device)}
    write_json(out / RESULTS, results, sort_keys=True)
    return results


def load_run(folder: Path) -> tuple[dict, dict[str, dict]]:
    """A finished run's ``results.json`` and its records by sample id; :class:`UserError` when it has no results or
    they are not of this format."""
    path = folder / RESULTS
    try:
        res = json.loads(path.read_text())
        res["selection"]["digest"], res["model"]["name"], res["dataset"]["sha256"]
    except FileNotFoundError:
        raise UserError(f"{folder} has no {RESULTS}: finish that run first (rerun its evaluate command)") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{path} is not a hypergvl evaluate results file of format {SUBMISSION_FORMAT} ({exc})"
                        ) from None
    if not (folder / LOG).is_file():
        raise UserError(f"{folder} has no {LOG}: give the folder hypergvl evaluate --out wrote")
    return res, finished_records(folder, res)
