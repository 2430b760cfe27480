"""Routing policies: which (text, visual) representation combination to show for a meta problem.

HyperGVL sec. 4: "Baselines include: (1) Rand, which randomly samples one of the 35 representation combinations,
simulating the unguided choice; and (2) Top, which uses the most effective textual and visual representations
according to Tab. 4 (i.e., N-Set and Enc-Hy)." The harness (``hypergvl evaluate --routing SPEC``) asks a policy for
one combination per meta problem and answers only that sample.

Specs (:func:`make_policy`), the baselines registered here:

- ``rand`` / ``rand:SEED`` -- uniform over the registered combinations (:func:`hypergvl.vqa.combinations`; the
  paper's 35 when nothing else is registered), drawn per problem from ``numpy`` seeded with
  (SEED, crc32 of the meta id): reproducible, and independent of the other rows and of their order. ``rand`` is
  ``rand:0``.
- ``top`` -- ``n_set`` + ``enc_hy`` for every problem (Table 4's best textual and visual representations).
- ``oracle:RUN_DIR`` -- the combination answered right most often for that meta problem in an exhaustive
  ``hypergvl evaluate`` run (first in :func:`hypergvl.vqa.combinations` order among ties): an upper bound the
  paper does not report, meaningful only on the problems of that run. With one run of a stochastic model it also
  knows the draw (any pair that happened to be right), so it overstates what any router can reach.
- ``profile`` / ``profile:FILE`` -- for the ``baseline:profile`` test bed: the combination with the highest
  probability in the profile (default: the shipped one) for the row's task and scale. The best any policy that sees
  only the problem can do in expectation: the test bed's real ceiling. It routes among the pairs the profile lists.

Layers above register more through the ``hypergvl.routing`` entry-point group (``pyproject.toml``): WiseHyGR's
``router:DIR`` (:mod:`hypergvl.router.policies`) is one, so this module names no layer above it.

A policy has ``name`` (the normalised spec) and ``choose(rows) -> [(text_rep, visual_rep), ...]``, one per row; a
row is a dict of the dataset's text columns (``id``, ``task``, ``question``, ``text_ho_neigh``, ..., ``hypergraph``,
``hypergraph2``). A policy that knows only some of the registered pairs (a profile, a trained router) has
``not_routed() -> [name, ...]``, the registered pairs it never chooses; :func:`not_routed_note` states them.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple, Protocol, Sequence

import numpy as np

from hypergvl.vqa import combinations
from hypergvl.registry import Registry
from hypergvl.runlog import damaged

from .baselines import load_profile
from .run_folder import LOG, samples

__all__ = ["RoutingPolicy", "POLICIES", "register_policy", "make_policy", "spec_forms", "policy_label", "oracle_choices",
           "not_routed_note", "TOP"]

TOP = ("n_set", "enc_hy")  # HyperGVL sec. 4: Table 4's best textual and visual representations (a paper constant)
ENTRY_POINT_GROUP = "hypergvl.routing"


class RoutingPolicy(Protocol):
    name: str

    def choose(self, rows: Sequence[dict]) -> list[tuple[str, str]]:
        """One (text_rep, visual_rep) per meta-problem row, in order."""


class PolicyKind(NamedTuple):
    factory: Callable[[str | None], RoutingPolicy]  # factory(arg) for the spec prefix (None) or prefix:ARG
    forms: str  # the spec forms it accepts, for help and errors: "rand, rand:SEED"
    label: str  # its name in tables and figures: "Rand"


POLICIES: Registry[PolicyKind] = Registry("routing policy")


def register_policy(prefix: str, forms: str, label: str):
    """Register ``factory(arg)`` for specs ``prefix`` (arg None) and ``prefix:ARG``; ``forms`` shows them, ``label``
    names the policy in tables and figures."""
    def deco(factory):
        POLICIES.register(prefix, PolicyKind(factory, forms, label))
        return factory
    return deco


def _load_entry_points() -> None:
    """Import the modules of the ``hypergvl.routing`` group that have not registered their prefix yet."""
    import importlib
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.name not in POLICIES:
            importlib.import_module(ep.value)
            if ep.name not in POLICIES:
                raise RuntimeError(f"entry point {ep.name} = {ep.value} did not register routing policy {ep.name!r}")


def spec_forms() -> str:
    """Every valid ``--routing`` form, for help texts and errors."""
    _load_entry_points()
    return ", ".join(kind.forms for kind in POLICIES.values())


def policy_label(prefix: str) -> str:
    """The label of a registered policy (``"router"`` -> ``"WiseHyGR"``); an unknown prefix as it is."""
    if prefix not in POLICIES:
        _load_entry_points()
    return POLICIES[prefix].label if prefix in POLICIES else prefix


def make_policy(spec: str) -> RoutingPolicy:
    """The policy of a ``--routing`` spec; ``ValueError`` listing the valid forms for a bad one."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"empty routing spec; valid forms: {spec_forms()}")
    prefix, colon, arg = spec.strip().partition(":")
    if prefix not in POLICIES:
        _load_entry_points()
    if prefix not in POLICIES:
        raise ValueError(f"unknown routing spec {spec!r}; valid forms: {spec_forms()}")
    return POLICIES[prefix].factory(arg if colon else None)


def not_routed_note(policy) -> str | None:
    """A line naming the registered pairs ``policy`` never chooses (``not_routed()``), or None when it may choose
    any: a representation registered after a profile was written or a router trained is evaluated, not routed."""
    missing = policy.not_routed() if hasattr(policy, "not_routed") else []
    if not missing:
        return None
    return (f"routing {policy.name}: not routed: {', '.join(missing)} ({len(missing)} registered pair(s) it has no "
            "entry for: it never chooses them)")


def meta_id(row: dict) -> str:
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
        out, pairs = [], combinations()
        for row in rows:
            rng = np.random.default_rng([self.seed, zlib.crc32(meta_id(row).encode("utf-8"))])
            out.append(pairs[int(rng.integers(len(pairs)))])
        return out


@register_policy("rand", "rand, rand:SEED", "Rand")
def _rand(arg: str | None) -> RandomPolicy:
    if arg is None:
        return RandomPolicy(0)
    try:
        seed = int(arg)
        if seed < 0:
            raise ValueError
    except ValueError:
        raise ValueError(f"rand:SEED needs a non-negative integer seed, got {arg!r}; "
                         f"valid forms: {spec_forms()}") from None
    return RandomPolicy(seed)


@dataclass
class FixedPolicy:
    combination: tuple[str, str]
    name: str

    def choose(self, rows: Sequence[dict]) -> list[tuple[str, str]]:
        return [self.combination for _ in rows]


@register_policy("top", "top", "Top")
def _top(arg: str | None) -> FixedPolicy:
    if arg is not None:
        raise ValueError(f"top takes no argument, got top:{arg}; valid forms: {spec_forms()}")
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
            meta = meta_id(row)
            if meta not in self.best:
                raise ValueError(f"oracle run {self.run_dir} has no samples of meta problem {meta}")
            out.append(self.best[meta])
        return out


def oracle_choices(run_dir: str | Path) -> dict[str, tuple[str, str]]:
    """meta id -> the combination answered right most often in the run (ties: first in combinations() order)."""
    log = Path(run_dir) / LOG
    if not log.is_file():
        raise ValueError(f"oracle:{run_dir}: no {LOG} there (give a hypergvl evaluate output folder)")
    records = samples(run_dir)
    score: dict[str, dict[tuple[str, str], list[int]]] = {}
    for n, rec in records:
        try:
            combo = (rec["text_rep"], rec["visual_rep"])
            ok = int(bool(rec["correct"]))
            meta = rec["meta_id"]
        except (KeyError, TypeError) as exc:
            raise damaged(log, n, f"not a scored sample record (no {exc})") from None
        score.setdefault(meta, {}).setdefault(combo, []).append(ok)
    order = {c: i for i, c in enumerate(combinations())}
    return {meta: min(combos, key=lambda c: (-np.mean(combos[c]), order.get(c, len(order)), c))
            for meta, combos in score.items()}


@register_policy("oracle", "oracle:RUN_DIR", "Oracle")
def _oracle(arg: str | None) -> OraclePolicy:
    if not arg:
        raise ValueError(f"oracle needs an exhaustive run folder: oracle:RUN_DIR; valid forms: {spec_forms()}")
    return OraclePolicy(arg, oracle_choices(arg))


@dataclass
class ProfilePolicy:
    profile: object  # hypergvl.evaluators.baselines.Profile
    name: str

    def choose(self, rows: Sequence[dict]) -> list[tuple[str, str]]:
        out = []
        for row in rows:
            if "task" not in row or "scale" not in row:
                raise ValueError(f"routing row {meta_id(row)} needs 'task' and 'scale' for the profile policy")
            out.append(self.profile.best(row["task"], row["scale"]))
        return out

    def not_routed(self) -> list[str]:
        return self.profile.not_routed()


@register_policy("profile", "profile, profile:FILE", "Profile best")
def _profile(arg: str | None) -> ProfilePolicy:
    return ProfilePolicy(load_profile(arg or None), f"profile:{arg}" if arg else "profile")
