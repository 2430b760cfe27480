"""Routing policies: which one of the 35 (text, visual) representation combinations to show for a meta problem.

HyperGVL sec. 4: "Baselines include: (1) Rand, which randomly samples one of the 35 representation combinations,
simulating the unguided choice; and (2) Top, which uses the most effective textual and visual representations
according to Tab. 4 (i.e., N-Set and Enc-Hy)." The harness (``hypergvl evaluate --routing SPEC``) asks a policy for
one combination per meta problem and answers only that sample.

Specs (:func:`make_policy`):

- ``router:DIR`` -- a saved WiseHyGR (folder or Hub id) reads each row's HO-Neigh description and question.
- ``rand`` / ``rand:SEED`` -- uniform over the 35 combinations, drawn per problem from ``numpy`` seeded with
  (SEED, crc32 of the meta id): reproducible, and independent of the other rows and of their order. ``rand`` is
  ``rand:0``.
- ``top`` -- ``n_set`` + ``enc_hy`` for every problem (Table 4's best textual and visual representations).
- ``oracle:RUN_DIR`` -- the combination answered right most often for that meta problem in an exhaustive
  ``hypergvl evaluate`` run (first in :data:`router.COMBINATIONS` order among ties): an upper bound the paper does
  not report, meaningful only on the problems of that run. With one run of a stochastic model it also knows the
  draw (any pair that happened to be right), so it overstates what any router can reach.
- ``profile`` / ``profile:FILE`` -- for the ``baseline:profile`` test bed: the combination with the highest
  probability in the profile (default: the shipped one) for the row's task and scale. The best any policy that sees
  only the problem can do in expectation: the test bed's real ceiling.

A policy has ``name`` (the normalised spec) and ``choose(rows) -> [(text_rep, visual_rep), ...]``, one per row; a
row is a dict of the dataset's text columns (``id``, ``task``, ``question``, ``text_ho_neigh``, ..., ``hypergraph``,
``hypergraph2``).
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol, Sequence

import numpy as np

from hypergvl_dataset.runlog import damaged, iter_log

from .prm import COMBINATIONS

__all__ = ["RoutingPolicy", "POLICIES", "register_policy", "make_policy", "TOP", "SPEC_FORMS"]

TOP = ("n_set", "enc_hy")
SPEC_FORMS = "router:DIR, rand, rand:SEED, top, oracle:RUN_DIR, profile, profile:FILE"


class RoutingPolicy(Protocol):
    name: str

    def choose(self, rows: Sequence[dict]) -> list[tuple[str, str]]:
        """One (text_rep, visual_rep) per meta-problem row, in order."""


PolicyFactory = Callable[[str | None], RoutingPolicy]
POLICIES: dict[str, PolicyFactory] = {}


def register_policy(prefix: str) -> Callable[[PolicyFactory], PolicyFactory]:
    """Register ``factory(arg)`` for specs ``prefix`` (arg None) and ``prefix:ARG``."""
    def deco(factory: PolicyFactory) -> PolicyFactory:
        if prefix in POLICIES:
            raise ValueError(f"routing policy {prefix!r} registered twice")
        POLICIES[prefix] = factory
        return factory
    return deco


def make_policy(spec: str) -> RoutingPolicy:
    """The policy of a ``--routing`` spec; ``ValueError`` listing the valid forms for a bad one."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"empty routing spec; valid forms: {SPEC_FORMS}")
    prefix, colon, arg = spec.strip().partition(":")
    if prefix not in POLICIES:
        raise ValueError(f"unknown routing spec {spec!r}; valid forms: {SPEC_FORMS}")
    return POLICIES[prefix](arg if colon else None)


def _meta_id(row: dict) -> str:
    try:
        return str(row["id"])
    except (KeyError, TypeError):
        raise ValueError("a routing row needs its meta problem 'id'") from None


@dataclass
class RandomPolicy:
    seed: int = 0
    name: str = field(init=False)

    def __post_init__(self):
        self.name = f"rand:{self.seed}"

    def choose(self, rows: Sequence[dict]) -> list[tuple[str, str]]:
        out = []
        for row in rows:
            rng = np.random.default_rng([self.seed, zlib.crc32(_meta_id(row).encode("utf-8"))])
            out.append(COMBINATIONS[int(rng.integers(len(COMBINATIONS)))])
        return out


@register_policy("rand")
def _rand(arg: str | None) -> RandomPolicy:
    if arg is None:
        return RandomPolicy(0)
    try:
        seed = int(arg)
        if seed < 0:
            raise ValueError
    except ValueError:
        raise ValueError(f"rand:SEED needs a non-negative integer seed, got {arg!r}; "
                         f"valid forms: {SPEC_FORMS}") from None
    return RandomPolicy(seed)


@dataclass
class FixedPolicy:
    combination: tuple[str, str]
    name: str

    def choose(self, rows: Sequence[dict]) -> list[tuple[str, str]]:
        return [self.combination for _ in rows]


@register_policy("top")
def _top(arg: str | None) -> FixedPolicy:
    if arg is not None:
        raise ValueError(f"top takes no argument, got top:{arg}; valid forms: {SPEC_FORMS}")
    return FixedPolicy(TOP, "top")


@dataclass
class OraclePolicy:
    run_dir: str
    best: dict[str, tuple[str, str]]
    name: str = field(init=False)

    def __post_init__(self):
        self.name = f"oracle:{self.run_dir}"

    def choose(self, rows: Sequence[dict]) -> list[tuple[str, str]]:
        out = []
        for row in rows:
            meta = _meta_id(row)
            if meta not in self.best:
                raise ValueError(f"oracle run {self.run_dir} has no samples of meta problem {meta}")
            out.append(self.best[meta])
        return out


def oracle_choices(run_dir: str | Path) -> dict[str, tuple[str, str]]:
    """meta id -> the combination answered right most often in the run (ties: first in COMBINATIONS order)."""
    log = Path(run_dir) / "samples.jsonl"
    if not log.is_file():
        raise ValueError(f"oracle:{run_dir}: no samples.jsonl there (give a hypergvl evaluate output folder)")
    score: dict[str, dict[tuple[str, str], list[int]]] = {}
    for n, rec in iter_log(log):
        try:
            combo = (rec["text_rep"], rec["visual_rep"])
            ok = int(bool(rec["correct"]))
            meta = rec["meta_id"]
        except (KeyError, TypeError) as exc:
            raise damaged(log, n, f"not a scored sample record (no {exc})") from None
        score.setdefault(meta, {}).setdefault(combo, []).append(ok)
    order = {c: i for i, c in enumerate(COMBINATIONS)}
    return {meta: min(combos, key=lambda c: (-np.mean(combos[c]), order.get(c, len(order)), c))
            for meta, combos in score.items()}


@register_policy("oracle")
def _oracle(arg: str | None) -> OraclePolicy:
    if not arg:
        raise ValueError(f"oracle needs an exhaustive run folder: oracle:RUN_DIR; valid forms: {SPEC_FORMS}")
    return OraclePolicy(arg, oracle_choices(arg))


@dataclass
class ProfilePolicy:
    profile: object  # evaluators.baselines.Profile
    name: str

    def choose(self, rows: Sequence[dict]) -> list[tuple[str, str]]:
        out = []
        for row in rows:
            if "task" not in row or "scale" not in row:
                raise ValueError(f"routing row {_meta_id(row)} needs 'task' and 'scale' for the profile policy")
            out.append(self.profile.best(row["task"], row["scale"]))
        return out


@register_policy("profile")
def _profile(arg: str | None) -> ProfilePolicy:
    from evaluators.baselines import load_profile

    return ProfilePolicy(load_profile(arg or None), f"profile:{arg}" if arg else "profile")


@dataclass
class RouterPolicy:
    source: str
    router: object
    name: str = field(init=False)
    batch_size: int = 32

    def __post_init__(self):
        self.name = f"router:{self.source}"

    def choose(self, rows: Sequence[dict]) -> list[tuple[str, str]]:
        from .model import describe

        descriptions, questions = [], []
        for row in rows:
            if "question" not in row:
                raise ValueError(f"routing row {_meta_id(row)} has no 'question'")
            if row.get("text_ho_neigh"):
                descriptions.append(row["text_ho_neigh"])
            elif row.get("hypergraph"):
                descriptions.append(describe(row["hypergraph"], row.get("hypergraph2") or None))
            else:
                raise ValueError(f"routing row {_meta_id(row)} has neither 'text_ho_neigh' nor 'hypergraph'")
            questions.append(row["question"])
        return self.router.route_texts(descriptions, questions, self.batch_size)


@register_policy("router")
def _router(arg: str | None) -> RouterPolicy:
    if not arg:
        raise ValueError(f"router needs a saved WiseHyGR: router:DIR; valid forms: {SPEC_FORMS}")
    from .model import WiseHyGR

    return RouterPolicy(arg, WiseHyGR.from_pretrained(arg))
