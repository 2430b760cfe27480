"""The paper's six understanding tasks (Table 2; Avg.U averages them, :data:`hypergvl.paper.PAPER_UNDERSTANDING`):
VC, HEC, Ne (Level-1) and DVC, OEC, ONe (Level-2), registered in that order."""
from __future__ import annotations

import re

from hypergvl.tasks.base import ANS, register_task
from hypergvl.tasks.kinds import _HYPEREDGES, _VERTICES, _Count, _VertexSet, _pick_vertex

# ============================================================================================ Level 1
@register_task
class VC(_Count):
    code, level, name = "VC", 1, "Vertex Counting"
    pattern = re.compile(r"Q: How many vertices are in the hypergraph")
    other_unit = _HYPEREDGES

    def question(self, params):
        return f"Q: How many vertices are in the hypergraph G? {ANS}."

    def solve(self, inst):
        return str(inst.hypergraph.num_vertices)


@register_task
class HEC(_Count):
    code, level, name = "HEC", 1, "Hyperedge Counting"
    pattern = re.compile(r"Q: How many hyperedges are in the hypergraph")
    other_unit = _VERTICES

    def question(self, params):
        return f"Q: How many hyperedges are in the hypergraph G? {ANS}."

    def solve(self, inst):
        return str(inst.hypergraph.num_hyperedges)


@register_task
class Ne(_VertexSet):
    code, level, name = "Ne", 1, "Neighbors"
    pattern = re.compile(r"Q: What are the direct neighbors of vertex v(?P<vertex>\d+)")

    def sample_params(self, inst, rng):
        return {"vertex": _pick_vertex(inst.hypergraph, rng)}

    def question(self, params):
        v = params["vertex"]
        return (f"Q: What are the direct neighbors of vertex v{v} in hypergraph G? (Neighbors = vertices sharing at "
                f"least one hyperedge with v{v}). {ANS} in the format {{v1,v2,...}} or “No neighbors”.")

    def solve(self, inst):
        return self.canonical(inst.hypergraph.neighbors(inst.params["vertex"]))


# ============================================================================================ Level 2
@register_task
class DVC(_Count):
    code, level, name = "DVC", 2, "Degree-specified Vertex Counting"
    pattern = re.compile(r"Q: How many vertices have degree (?P<degree>\d+)")
    other_unit = _HYPEREDGES

    def sample_params(self, inst, rng):
        # C.1: "The target degree is randomly selected from the hypergraph's existing degree distribution"
        return {"degree": inst.hypergraph.degree(_pick_vertex(inst.hypergraph, rng))}

    def question(self, params):
        return (f"Q: How many vertices have degree {params['degree']} in hypergraph G? (Degree = number of "
                f"hyperedges the vertex belongs to). {ANS}.")

    def solve(self, inst):
        return str(sum(d == inst.params["degree"] for d in inst.hypergraph.degrees))


@register_task
class OEC(_Count):
    code, level, name = "OEC", 2, "Order-specified Hyperedge Counting"
    pattern = re.compile(r"Q: How many hyperedges have order (?P<order>\d+)")
    other_unit = _VERTICES

    def sample_params(self, inst, rng):
        h = inst.hypergraph
        return {"order": h.order(int(rng.integers(h.num_hyperedges)))}

    def question(self, params):
        return (f"Q: How many hyperedges have order {params['order']} in hypergraph G? (Order = number of vertices "
                f"in the hyperedge). {ANS}.")

    def solve(self, inst):
        return str(sum(len(e) == inst.params["order"] for e in inst.hypergraph.hyperedges))


@register_task
class ONe(_VertexSet):
    code, level, name = "ONe", 2, "Order-filtered Neighbors"
    pattern = re.compile((r"Q: What are the neighbors of vertex v(?P<vertex>\d+) when only considering hyperedges with "
                       r"order >= (?P<min_order>\d+)"))

    def sample_params(self, inst, rng):
        h = inst.hypergraph
        v = _pick_vertex(h, rng)
        orders = sorted({len(h.hyperedges[i]) for i in h.incident[v]} | {2})
        return {"vertex": v, "min_order": int(rng.choice([k for k in orders if k >= 2]))}

    def question(self, params):
        # E.2.2 prints the threshold garbled ("order $Eq2$"); we write ">= k" and the E.2.1 empty-set wording.
        return (f"Q: What are the neighbors of vertex v{params['vertex']} when only considering hyperedges with order "
                f">= {params['min_order']} in hypergraph G? {ANS} in the format {{v1,v2,...}} or “No neighbors”.")

    def solve(self, inst):
        return self.canonical(inst.hypergraph.neighbors(inst.params["vertex"], inst.params["min_order"]))
