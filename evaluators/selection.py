"""Which samples a run answers: :class:`Selection` (tasks, representations, limit, routing, shard) and
:func:`plan`, which expands a build's rows into the samples a run or shard answers.

A run is the set of sample ids its selection names; processes, shards and reruns only partition that set
(:func:`shard_of` hashes a sample id), so every partition merges to the same records. With ``routing``, one sample
per meta problem: the pair a routing policy (:mod:`hypergvl.evaluators.routing`) chooses (HyperGVL sec. 4).
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys
from dataclasses import dataclass

from hypergvl.cli import UserError, did_you_mean
from hypergvl.render.base import visual_labels
from hypergvl.tasks import TASKS, config_name
from hypergvl.text import text_labels
from hypergvl.vqa import TEXT_ONLY, expand

__all__ = ["Selection", "parse_shard", "shard_of", "selection_digest", "plan"]


@dataclass(frozen=True)
class Selection:
    """Which samples a run answers. Every field is recorded in ``results.json``; shards of one run differ only in
    ``shard``."""

    tasks: tuple[str, ...] | None = None
    text_reps: tuple[str, ...] | None = None
    visual_reps: tuple[str, ...] | None = None
    limit: int | None = None
    routing: str | None = None
    shard: tuple[int, int] | None = None  # (index, count)

    def __post_init__(self):
        # a code in any case, or its dataset config name (osp, 3cl), as load_dataset(..., "osp") spells it
        spelled = {**{c.lower(): c for c in TASKS}, **{config_name(c): c for c in TASKS}}
        for t in self.tasks or ():
            if str(t).lower() not in spelled:
                raise UserError(f"unknown task {t!r}; choose from {', '.join(TASKS)} (any case, or the config name: "
                                f"{', '.join(config_name(c) for c in TASKS)})")
        if self.tasks:
            object.__setattr__(self, "tasks", tuple(spelled[str(t).lower()] for t in self.tasks))
        for field, flag, labels in (("text_reps", "--text-reps", text_labels()),
                                    ("visual_reps", "--visual-reps", {**visual_labels(), TEXT_ONLY: TEXT_ONLY})):
            if getattr(self, field):
                object.__setattr__(self, field, tuple(_representation(r, flag, labels) for r in getattr(self, field)))
        if self.limit is not None and self.limit < 1:
            raise UserError("--limit must be at least 1")
        if self.shard is not None:
            i, n = self.shard
            if not (n >= 1 and 0 <= i < n):
                raise UserError(f"--shard must be I/N with 0 <= I < N, got {i}/{n}")
        if self.routing is not None and (self.text_reps or self.visual_reps):
            raise UserError("--routing chooses the representations itself; drop --text-reps/--visual-reps")

    @property
    def text_only(self) -> bool:
        return self.visual_reps == (TEXT_ONLY,)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}


def _representation(name: str, flag: str, labels: dict[str, str]) -> str:
    """The registered name of representation ``name``: the name itself or its label as reports print it (``N-Set``),
    in any case, with ``-`` and ``_`` alike; else a :class:`UserError` with the nearest names."""
    def key(text: str) -> str:
        return str(text).lower().replace("-", "_")

    spelled = {**{key(label): code for code, label in labels.items()}, **{key(code): code for code in labels}}
    if key(name) in spelled:
        return spelled[key(name)]
    choices = [f"{code} ({label})" if label != code else code for code, label in labels.items()]
    hint = did_you_mean(key(name), list(spelled))
    if hint:
        near = [spelled[c] for c in hint[len(" (did you mean "):-2].split(" or ")]
        hint = f" (did you mean {' or '.join(dict.fromkeys(near))}?)"
    raise UserError(f"{flag}: unknown representation {name!r}{hint}; choose from {', '.join(choices)} (codes or "
                    "labels, any case)")


def parse_shard(text: str) -> tuple[int, int]:
    i, sep, n = text.partition("/")
    if not sep or not i.isdigit() or not n.isdigit():
        raise argparse.ArgumentTypeError(f"expected I/N such as 0/4, got {text!r}")
    return int(i), int(n)


def shard_of(sample_id: str, count: int) -> int:
    """The shard of a sample: a hash of its id, so shards are fixed whatever the order or the other samples."""
    return int.from_bytes(hashlib.blake2b(sample_id.encode(), digest_size=8).digest(), "big") % count


def selection_digest(ids) -> str:
    return hashlib.sha256("".join(f"{i}\n" for i in sorted(ids)).encode()).hexdigest()


def plan(rows, selection: Selection):
    """``(vqa, indices, routing_name, full_ids)``: the expanded samples, the numbers of those this run (or shard)
    answers, the routing policy's name, and the ids of the whole selection before sharding."""
    if selection.tasks:
        wanted = set(selection.tasks)
        rows = rows.filter(lambda t: t in wanted, input_columns=["task"])
    vqa = expand(rows, selection.text_reps, selection.visual_reps, decode_images=False)
    policy_name = None
    if selection.routing is None:
        indices = list(range(len(vqa)))
    else:
        from .routing import make_policy, not_routed_note  # here: the baselines it loads cost 0.2 s that unrouted runs never need

        try:
            policy = make_policy(selection.routing)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        text_cols = [c for c in rows.column_names if not c.startswith("image_")]
        choices = policy.choose(rows.select_columns(text_cols).to_list())
        if len(choices) != len(rows):
            raise UserError(f"routing {policy.name} chose {len(choices)} pairs for {len(rows)} meta problems")
        try:
            indices = [vqa.index(r, t, v) for r, (t, v) in enumerate(choices)]
        except ValueError as exc:
            raise UserError(f"routing {policy.name} chose an unknown representation: {exc}") from None
        policy_name = policy.name
        note = not_routed_note(policy)
        if note:
            print(note, file=sys.stderr)
    if selection.limit is not None:
        indices = indices[:selection.limit]
    full_ids = [vqa.sample_id(k) for k in indices]
    if selection.shard is not None:
        i, n = selection.shard
        indices = [k for k, sid in zip(indices, full_ids) if shard_of(sid, n) == i]
    return vqa, indices, policy_name, full_ids
