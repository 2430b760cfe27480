"""Verification: a row's ``reference`` column read back (:func:`parse_reference`) and one raw model response graded
against it (:func:`score_response`, any valid plan counts)."""
from __future__ import annotations

import json
from functools import lru_cache

from hypergvl.hypergraph import Hypergraph
from hypergvl.tasks.base import TASKS, Reference, Verdict

def parse_reference(reference: str | dict) -> Reference:
    """A row's ``reference`` (JSON text or dict) as a :class:`Reference`; ``ValueError`` if it is not one."""
    obj = reference
    if isinstance(reference, str):
        try:
            obj = json.loads(reference)
        except json.JSONDecodeError as exc:
            raise ValueError(f"reference is not JSON: {exc}") from None
    if not isinstance(obj, dict) or not {"task", "hypergraph", "params", "answer"} <= set(obj):
        raise ValueError("reference must be a HyperGVL row reference with task, hypergraph, params and answer")
    task = obj["task"]
    if task not in TASKS:
        raise ValueError(f"reference names unknown task {task!r}; choose one of {', '.join(TASKS)}")
    h2 = obj.get("hypergraph2")
    params = obj["params"]
    if not isinstance(params, dict) or not isinstance(obj["answer"], str):
        raise ValueError("reference params must be an object and answer a string")
    return Reference(task, Hypergraph.from_json(obj["hypergraph"]),
                     Hypergraph.from_json(h2) if h2 else None, params, obj["answer"])


@lru_cache(maxsize=65536)
def _cached_reference(reference: str) -> Reference:
    return parse_reference(reference)


def score_response(reference: str | dict, response: object) -> Verdict:
    """Verify one raw model response against a row reference (any valid plan counts for 3-CL, SHC, HHM)."""
    ref = _cached_reference(reference) if isinstance(reference, str) else parse_reference(reference)
    if not isinstance(response, str):
        return Verdict(False, True, None)
    return TASKS[ref.task].verify(ref, response)
