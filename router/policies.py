"""WiseHyGR as a routing policy: ``router:DIR`` (a saved router, folder or Hub id) reads each row's HO-Neigh
description (or, without it, the description of its hypergraph) and question, and picks one of the combinations it
was trained on (its ``id2label``; a registered combination outside them is not routed, :meth:`RouterPolicy.not_routed`).

Registered into :data:`hypergvl.evaluators.routing.POLICIES` through the ``hypergvl.routing`` entry-point group
(``pyproject.toml``), beside the baselines registered there (``rand``, ``top``, ``oracle``, ``profile``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from hypergvl.evaluators.routing import meta_id, register_policy, spec_forms

from .model import WiseHyGR, describe

__all__ = ["RouterPolicy"]


@dataclass
class RouterPolicy:
    source: str
    router: object
    name: str = field(init=False)
    batch_size: int = 32

    def __post_init__(self):
        self.name = f"router:{self.source}"

    def choose(self, rows: Sequence[dict]) -> list[tuple[str, str]]:
        descriptions, questions = [], []
        for row in rows:
            if "question" not in row:
                raise ValueError(f"routing row {meta_id(row)} has no 'question'")
            if row.get("text_ho_neigh"):
                descriptions.append(row["text_ho_neigh"])
            elif row.get("hypergraph"):
                descriptions.append(describe(row["hypergraph"], row.get("hypergraph2") or None))
            else:
                raise ValueError(f"routing row {meta_id(row)} has neither 'text_ho_neigh' nor 'hypergraph'")
            questions.append(row["question"])
        return self.router.route_texts(descriptions, questions, self.batch_size)

    def not_routed(self) -> list[str]:
        return self.router.not_routed()


@register_policy("router", "router:DIR", "WiseHyGR")
def _router(arg: str | None) -> RouterPolicy:
    if not arg:
        raise ValueError(f"router needs a saved WiseHyGR: router:DIR; valid forms: {spec_forms()}")
    return RouterPolicy(arg, WiseHyGR.from_pretrained(arg))
