"""Tolerant parsing of free-form model responses into canonical HyperGVL answers.

HyperGVL sec. 3.1: "The LVLMs are required to provide answers in predefined formats, but the factually accurate
answers with incorrect formats are also considered to be correct after manual review." We replace the manual review
by a tolerant parser: it reads the text after the last ``Ans:`` (falling back to the whole response), ignores
``<think>...</think>`` reasoning, and accepts the natural variants (``{v1, v2}``, ``[v1,v2]``, ``v1 and v2``,
``No neighbors``, ``Yes.``, ``Path: [e0, e1]``). A response from which no answer of the right type can be read is
*unparsed* (``None``), which the metric reports separately from a wrong answer.

Every function is linear in the response length (no nested quantifiers), so hostile inputs cost bounded time.
"""
from __future__ import annotations

import re

# The grading rules' version. Every score records it (``results.json``, Space entries, the dataset card); a stored
# score of another version is re-graded from its raw responses. Results written before it existed are version "1".
SCORER_VERSION = "2"

MAX_DIGITS = 12  # longer numbers are parsed as an (always wrong) overflow instead of a huge int

_THINK_END = "</think>"
_INT = re.compile(r"-?\d+")
_VERT = re.compile(r"\bv(\d+)\b", re.IGNORECASE)
_EDGE = re.compile(r"\be(\d+)\b", re.IGNORECASE)
_GROUP = re.compile(r"[\[{(]([^\[\]{}()]*)[\]})]")
_YESNO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_EMPTY = re.compile(r"\W*(no\b|none\b|empty\b|nothing\b|\{\s*\}|\[\s*\]|∅)", re.IGNORECASE)
_NO_PATH = re.compile(r"\W*no\s+path\b", re.IGNORECASE)
_COLOUR = re.compile(r"\bv(\d+)\s*[:=]\s*c?([0-9]+)\b", re.IGNORECASE)


def answer_region(response: object) -> tuple[str, bool]:
    """(text to read the answer from, whether it follows an explicit ``Ans:``)."""
    if not isinstance(response, str):
        return "", False
    text = response
    end = text.rfind(_THINK_END)
    if end >= 0:
        text = text[end + len(_THINK_END):]
    else:
        start = text.find("<think>")
        if start >= 0:
            text = text[:start]  # unfinished reasoning: only what precedes it can be an answer
    lower = text.lower()
    best = -1
    for marker in ("ans:", "answer:"):
        at = lower.rfind(marker)
        if at >= 0:
            best = max(best, at + len(marker))
    if best >= 0:
        return text[best:].strip(), True
    return text.strip(), False


def _to_int(token: str) -> int | str:
    digits = token.lstrip("-")
    if len(digits) > MAX_DIGITS:
        return "overflow"
    return int(token)


def parse_int(response: object, allow_no_path: bool = False) -> int | str | None:
    """First integer after ``Ans:`` (else the last one in the response); ``"No path"`` when allowed."""
    region, anchored = answer_region(response)
    if allow_no_path and _NO_PATH.match(region):
        return "No path"
    if anchored:
        m = _INT.search(region)
        return _to_int(m.group()) if m else None
    last = None
    for last in _INT.finditer(region):
        pass
    if allow_no_path and last is None and re.search(r"\bno\s+path\b", region, re.IGNORECASE):
        return "No path"
    return _to_int(last.group()) if last else None


def _ids(pattern: re.Pattern, text: str) -> list[int]:
    return [int(x) if len(x) <= MAX_DIGITS else -1 for x in pattern.findall(text)]


def parse_vertex_set(response: object) -> frozenset[int] | None:
    """A set of vertex ids: ``{v1,v2}``, ``[v1, v2]``, ``v1 and v2``; ``No neighbors`` is the empty set."""
    region, anchored = answer_region(response)
    if anchored:
        if _EMPTY.match(region):
            return frozenset()
        group = _GROUP.search(region)
        if group:
            return frozenset(_ids(_VERT, group.group(1)))
        first_line = region.split("\n", 1)[0]
        ids = _ids(_VERT, first_line)
        return frozenset(ids) if ids else None
    groups = [g for g in _GROUP.findall(region) if _VERT.search(g) or not g.strip()]
    if groups:
        return frozenset(_ids(_VERT, groups[-1]))
    if re.search(r"\bno (n-)?neighbou?rs\b", region, re.IGNORECASE):
        return frozenset()
    return None


def parse_yes_no(response: object) -> str | None:
    region, anchored = answer_region(response)
    found = _YESNO.search(region) if anchored else None
    if not anchored:
        for found in _YESNO.finditer(region):
            pass
    return found.group(1).capitalize() if found else None


def parse_coloring(response: object) -> dict[int, int] | list | None:
    """``Coloring:[v0:c0,v1:c1,...]`` → {vertex: colour}; a vertex given twice yields an invalid (list) answer."""
    region, anchored = answer_region(response)
    if not anchored:
        at = region.lower().rfind("coloring")
        if at < 0:
            return None
        region = region[at:]
    pairs = [(int(v) if len(v) <= MAX_DIGITS else -1, int(c) if len(c) <= MAX_DIGITS else -1)
             for v, c in _COLOUR.findall(region)]
    if not pairs:
        return None
    colouring = dict(pairs)
    return colouring if len(colouring) == len(pairs) else pairs


def parse_edge_sequence(response: object, marker: str) -> list[int] | None:
    """``Cycle:[e0,e3,e2]`` / ``Path:[e0,e1]`` → hyperedge ids in order."""
    region, anchored = answer_region(response)
    lower = region.lower()
    at = lower.rfind(marker.lower())
    if at >= 0:
        region = region[at + len(marker):]
    elif not anchored:
        return None
    group = _GROUP.search(region)
    ids = _ids(_EDGE, group.group(1) if group else region.split("\n", 1)[0])
    return ids or None
