"""What the readers of an external harness's ``--log_samples`` output share (``hypergvl import-lm-eval``,
``hypergvl import-lmms-eval``): the results file, the logged sample lines, the logged response and the per-sample
time. Each reader keeps what differs (its file names, how a line names its document, what it checks)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

from hypergvl.cli import UserError

__all__ = ["read_results", "logged_lines", "logged_response", "spread_latency"]


def read_results(path: Path, logdir: Path, harness: str) -> dict:
    """The harness's results JSON at ``path`` (it must hold ``config`` and ``configs``), or one-line refusals."""
    try:
        results = json.loads(path.read_text())
        results["config"], results["configs"]
    except FileNotFoundError:
        raise UserError(f"{logdir}: no {path.name} beside the samples (an unfinished {harness} run?)") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{path} is not an {harness} results file ({exc})") from None
    return results


def logged_lines(path: Path, harness: str, document: Callable[[dict], Any]) -> Iterator[tuple[int, Any, dict]]:
    """``(line number, document(line), line)`` for each logged sample line of ``path``; a line that is not JSON or
    has no document is refused, naming the file and line."""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                d = json.loads(line)
                yield n, document(d), d
            except (ValueError, KeyError, TypeError) as exc:
                raise UserError(f"{path}:{n} is not an {harness} sample line ({exc})") from None


def logged_response(d: dict) -> str:
    """The model's text response of a logged line (``filtered_resps``, else ``resps``, unwrapped from its lists)."""
    resp = d.get("filtered_resps", d.get("resps"))
    while isinstance(resp, list) and resp:
        resp = resp[0]
    if not isinstance(resp, str):
        raise UserError(f"sample {d.get('doc_id')} has no text response ({str(resp)[:60]})")
    return resp


def spread_latency(records: dict[str, dict], seconds: Any, count: int) -> None:
    """Set each record's ``latency_s`` to the run's time over ``count`` samples (the harnesses log the time of the
    whole run, not of each sample); 0.0 where the run logged no time."""
    for rec in records.values():
        rec["latency_s"] = round(seconds / count, 4) if isinstance(seconds, (int, float)) and count else 0.0
