"""The paper's six reasoning tasks (Table 2; Avg.R averages them, :data:`hypergvl.paper.PAPER_REASONING`): OSP, OMF, ISM (Level-3, polynomial) and 3-CL, SHC, HHM (Level-4, NP-hard
planning), registered in that order. A planning answer is checked by a verifier that accepts every valid plan."""
from __future__ import annotations

import re

from hypergvl import answers, generators, solvers
from hypergvl.hypergraph import Hypergraph
from hypergvl.tasks.base import ANS, Instance, Task, register_task
from hypergvl.tasks.kinds import _Count, _pick_vertex, _two_vertices

# ============================================================================================ Level 3
@register_task
class OSP(Task):
    code, level, name = "OSP", 3, "Order-weighted Shortest Path"
    pattern = re.compile(r"Q: What is the shortest path length from vertex v(?P<source>\d+) to vertex v(?P<target>\d+)")

    def sample_params(self, inst, rng):
        s, t = _two_vertices(inst.hypergraph, rng)
        return {"source": s, "target": t}

    def question(self, params):
        return (f"Q: What is the shortest path length from vertex v{params['source']} to vertex v{params['target']} in "
                f"hypergraph G, where each hyperedge’s weight equals its order (number of vertices)? If no path "
                f"exists, answer “No path”. {ANS}.")

    def solve(self, inst):
        d = solvers.shortest_path_length(inst.hypergraph, inst.params["source"], inst.params["target"])
        return "No path" if d is None else str(d)

    def guess(self, rng, n, m, params):
        return str(rng.randint(0, max(n, m, 1) * 2))

    def parse(self, response):
        return answers.parse_int(response, allow_no_path=True)


@register_task
class OMF(_Count):
    code, level, name = "OMF", 3, "Order-weighted Maximum Flow"
    guess_range = 2
    pattern = re.compile(r"Q: What is the estimated maximum flow from vertex v(?P<source>\d+) to vertex v(?P<target>\d+)")

    def sample_params(self, inst, rng):
        s, t = _two_vertices(inst.hypergraph, rng)
        return {"source": s, "target": t}

    def question(self, params):
        return (f"Q: What is the estimated maximum flow from vertex v{params['source']} to vertex v{params['target']} "
                f"in hypergraph G, where each hyperedge’s capacity equals its order? If no flow exists, answer “0”. "
                f"{ANS}.")

    def solve(self, inst):
        return str(solvers.max_flow(inst.hypergraph, inst.params["source"], inst.params["target"]))

    def parse(self, response):
        return answers.parse_int(response, allow_no_flow=True)  # "If no flow exists, answer “0”"


@register_task
class ISM(Task):
    code, level, name = "ISM", 3, "Isomorphism Recognition"
    two_hypergraphs = True
    pattern = re.compile(r"Q: Are these two hypergraphs isomorphic")

    def _pair(self, h, rng, variant):
        # balanced Yes/No: the builder alternates `variant`; a lone sample flips a coin
        yes = (variant % 2 == 0) if variant is not None else bool(rng.random() < 0.5)
        h2 = (generators.isomorphic_copy(h, rng) if yes
              else generators.non_isomorphic_variant(h, rng, solvers.is_isomorphic))
        return Instance(h, {}, h2)

    def synthetic(self, scale, rng, variant):
        for _ in range(50):  # a hypergraph with no non-isomorphic variant (e.g. one hyperedge) is redrawn
            inst = self.from_real(generators.random_hypergraph(scale, rng), rng, variant)
            if inst is not None:
                return inst
        raise RuntimeError("could not generate an ISM pair")

    def from_real(self, h, rng, variant):
        try:
            return self._pair(h, rng, variant)
        except RuntimeError:
            return None

    def question(self, params):
        return ("Q: Are these two hypergraphs isomorphic? (Two hypergraphs are isomorphic if there exists a vertex "
                f"relabeling that transforms one into the other). {ANS} in the format [Yes/No].")

    def solve(self, inst):
        return "Yes" if solvers.is_isomorphic(inst.hypergraph, inst.hypergraph2) else "No"

    def guess(self, rng, n, m, params):
        return rng.choice(["Yes", "No"])

    def parse(self, response):
        return answers.parse_yes_no(response)


# ============================================================================================ Level 4
@register_task
class ThreeColoring(Task):
    code, level, name = "3-CL", 4, "Hypergraph 3-Coloring"
    pattern = re.compile(r"Q: Please provide a 3-coloring strategy")
    min_order = 2

    def synthetic(self, scale, rng, variant):
        h, colours = generators.planted_3cl(scale, rng)
        return Instance(h, {}, hint=colours)

    def from_real(self, h, rng, variant):
        # 3-CL instances have no order-1 hyperedge (docs/design.md): drop them; they constrain nothing
        h = Hypergraph(h.num_vertices, [e for e in h.hyperedges if len(e) >= 2])
        if not h.hyperedges or not h.is_connected():
            return None
        try:
            colours = solvers.find_3coloring(h)
        except solvers.SearchBudgetExceeded:
            return None
        return Instance(h, {}, hint=colours) if colours else None

    def question(self, params):
        return ("Q: Please provide a 3-coloring strategy such that each hyperedge contains nodes with at least 2 "
                "different colors (assign each vertex a color from {c0, c1, c2}). "
                f"{ANS} as “Coloring:[v0:c0,v1:c1,…]”.")

    def solve(self, inst):
        colours = inst.hint if inst.hint is not None else solvers.find_3coloring(inst.hypergraph)
        return self.canonical(dict(enumerate(colours))) if colours else "No coloring"

    def guess(self, rng, n, m, params):
        return "Coloring:[" + ",".join(f"v{v}:c{rng.randrange(3)}" for v in range(n)) + "]"

    def parse(self, response):
        return answers.parse_coloring(response)

    def canonical(self, parsed):
        if isinstance(parsed, list):  # a vertex coloured twice
            return "Coloring:[" + ",".join(f"v{v}:c{c}" for v, c in parsed) + "]"
        return "Coloring:[" + ",".join(f"v{v}:c{parsed[v]}" for v in sorted(parsed)) + "]"

    def check(self, parsed, ref):
        h = ref.hypergraph
        if isinstance(parsed, list) or set(parsed) != set(range(h.num_vertices)):
            return False
        return solvers.check_coloring(h, [parsed[v] for v in range(h.num_vertices)])


@register_task
class SHC(Task):
    code, level, name = "SHC", 4, "Strict Hypercycle"
    pattern = re.compile(r"Q: Please identify a strict hypercycle")

    def synthetic(self, scale, rng, variant):
        h, cycle = generators.planted_shc(scale, rng)
        return Instance(h, {}, hint=cycle)

    def from_real(self, h, rng, variant):
        try:
            cycle = solvers.find_strict_hypercycle(h)
        except solvers.SearchBudgetExceeded:
            return None
        return Instance(h, {}, hint=cycle) if cycle else None

    def question(self, params):
        return ("Q: Please identify a strict hypercycle in the hypergraph G (A strict hypercycle is a sequence of "
                "hyperedges e1,e2,...,ek where adjacent hyperedges share exactly one vertex, i.e., |ei ∩ ei+1|=1, and "
                "|ek ∩ e1|=1, forming a closed loop). List the hypercycle after “Ans:” as “Cycle:[e0,e1,…]”.")

    def solve(self, inst):
        cycle = inst.hint if inst.hint is not None else solvers.find_strict_hypercycle(inst.hypergraph)
        return self.canonical(cycle) if cycle else "No cycle"

    def guess(self, rng, n, m, params):
        k = rng.randint(3, max(3, min(m, 6)))
        return self.canonical(rng.sample(range(max(m, k)), k))

    def parse(self, response):
        cycle = answers.parse_edge_sequence(response, "cycle:")
        if cycle and len(cycle) >= 2 and cycle[-1] == cycle[0]:
            cycle = cycle[:-1]  # "e0 -> e3 -> e2 -> e0" writes the closed loop, not a fourth hyperedge
        return cycle

    def canonical(self, parsed):
        return "Cycle:[" + ",".join(f"e{i}" for i in parsed) + "]"

    def check(self, parsed, ref):
        return solvers.check_strict_hypercycle(ref.hypergraph, parsed)


@register_task
class HHM(Task):
    code, level, name = "HHM", 4, "Hypergraph Hamiltonian Path"
    pattern = re.compile(r"Q: Please provide a valid Hamiltonian path from v(?P<source>\d+) to v(?P<target>\d+)")

    def synthetic(self, scale, rng, variant):
        h, s, t, path = generators.planted_hhm(scale, rng)
        return Instance(h, {"source": s, "target": t}, hint=path)

    def from_real(self, h, rng, variant):
        s = _pick_vertex(h, rng)
        try:
            found = solvers.find_hamiltonian_path(h, s)
        except solvers.SearchBudgetExceeded:
            return None
        if not found:
            return None
        path, t = found
        return Instance(h, {"source": s, "target": t}, hint=path)

    def question(self, params):
        return (f"Q: Please provide a valid Hamiltonian path from v{params['source']} to v{params['target']}. "
                f"(Hamiltonian path = path visiting all vertices exactly once). {ANS} as “Path:[e0,e1,…]”.")

    def solve(self, inst):
        path = inst.hint
        if path is None:
            found = solvers.find_hamiltonian_path(inst.hypergraph, inst.params["source"], inst.params["target"])
            path = found[0] if found else None
        return self.canonical(path) if path else "No path"

    def guess(self, rng, n, m, params):
        return self.canonical(rng.sample(range(max(m, n - 1)), n - 1))

    def parse(self, response):
        path = answers.parse_edge_sequence(response, "path:")
        if path is None:  # a factually right answer in another format: the path as its vertices
            order = answers.parse_edge_sequence(response, "path:", vertices=True)
            return VertexOrder(order) if order else None
        return path

    def canonical(self, parsed):
        prefix = "v" if isinstance(parsed, VertexOrder) else "e"
        return "Path:[" + ",".join(f"{prefix}{i}" for i in parsed) + "]"

    def check(self, parsed, ref):
        s, t = ref.params["source"], ref.params["target"]
        if isinstance(parsed, VertexOrder):
            return solvers.check_hamiltonian_order(ref.hypergraph, s, t, parsed)
        return solvers.check_hamiltonian_path(ref.hypergraph, s, t, parsed)


class VertexOrder(tuple):
    """An HHM answer given as the path's vertices (``Path: v0 -> v3 -> v2``) instead of its hyperedges."""
