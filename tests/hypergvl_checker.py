"""An independent re-derivation of every HyperGVL answer, written without the project's solvers.

It works from a row's JSON only (hypergraph, params, answer) and uses networkx and brute force, so a bug in
``hypergvl.solvers`` cannot hide behind the same bug here. Used by the core tests and the builder tests.
"""
from __future__ import annotations

import json
import re

import networkx as nx
from networkx.algorithms import isomorphism
from networkx.algorithms.flow import preflow_push


def _h(text):
    obj = json.loads(text) if isinstance(text, str) else text
    return obj["num_vertices"], [set(e) for e in obj["hyperedges"]]


def _star(n, edges):
    g = nx.Graph()
    g.add_nodes_from((("v", v) for v in range(n)), kind="v")
    g.add_nodes_from((("e", i) for i in range(len(edges))), kind="e")
    g.add_edges_from((("v", v), ("e", i)) for i, e in enumerate(edges) for v in e)
    return g


def _vset(s):
    return "{" + ",".join(f"v{v}" for v in sorted(s)) + "}" if s else "No neighbors"


def osp(n, edges, s, t):
    g = nx.DiGraph()
    for i, e in enumerate(edges):
        for v in e:
            g.add_edge(("v", v), ("e", i), weight=len(e))
            g.add_edge(("e", i), ("v", v), weight=0)
    try:
        return str(nx.dijkstra_path_length(g, ("v", s), ("v", t)))
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return "No path"


def omf(n, edges, s, t):
    g = nx.DiGraph()
    for i, e in enumerate(edges):
        for v in e:
            g.add_edge(("v", v), ("e", i), capacity=len(e))
            g.add_edge(("e", i), ("v", v), capacity=len(e))
    if ("v", s) not in g or ("v", t) not in g:
        return "0"
    return str(nx.maximum_flow_value(g, ("v", s), ("v", t), flow_func=preflow_push))


def ism(a, b):
    (na, ea), (nb, eb) = a, b
    gm = isomorphism.GraphMatcher(_star(na, ea), _star(nb, eb), node_match=lambda x, y: x["kind"] == y["kind"])
    return "Yes" if na == nb and gm.is_isomorphic() else "No"


def valid_coloring(n, edges, answer):
    pairs = re.findall(r"v(\d+):c(\d+)", answer)
    col = {int(v): int(c) for v, c in pairs}
    return (len(pairs) == n and set(col) == set(range(n)) and set(col.values()) <= {0, 1, 2}
            and all(len({col[v] for v in e}) >= 2 for e in edges))


def valid_cycle(edges, answer):
    cyc = [int(x) for x in re.findall(r"e(\d+)", answer)]
    if len(cyc) < 3 or len(set(cyc)) != len(cyc) or max(cyc) >= len(edges):
        return False
    shared = []
    for i in range(len(cyc)):
        common = edges[cyc[i]] & edges[cyc[(i + 1) % len(cyc)]]
        if len(common) != 1:
            return False
        shared += list(common)
    return len(set(shared)) == len(cyc)


def valid_ham_path(n, edges, s, t, answer):
    """Brute force over vertex orders position by position (no matching theory)."""
    path = [int(x) for x in re.findall(r"e(\d+)", answer)]
    if len(path) != n - 1 or len(set(path)) != n - 1 or max(path, default=0) >= len(edges):
        return False

    def extend(order):
        if len(order) == n:
            return order[-1] == t
        e = edges[path[len(order) - 1]]
        if order[-1] not in e:
            return False
        return any(extend(order + [w]) for w in e if w not in order and (w != t or len(order) == n - 1))

    return extend([s])


def check_row(row: dict) -> None:
    """Raise AssertionError unless the row's answer matches an independent re-derivation."""
    n, edges = _h(row["hypergraph"])
    p = json.loads(row["params"])
    task, ans = row["task"], row["answer"]
    assert row["num_vertices"] == n and row["num_hyperedges"] == len(edges), "counts columns"
    if task == "VC":
        assert ans == str(n)
    elif task == "HEC":
        assert ans == str(len(edges))
    elif task in ("Ne", "ONe"):
        k = p.get("min_order", 1)
        u = p["vertex"]
        assert ans == _vset({v for e in edges if u in e and len(e) >= k for v in e} - {u}), (ans, p)
    elif task == "DVC":
        degs = [sum(v in e for e in edges) for v in range(n)]
        assert p["degree"] in degs and ans == str(degs.count(p["degree"]))
    elif task == "OEC":
        orders = [len(e) for e in edges]
        assert p["order"] in orders and ans == str(orders.count(p["order"]))
    elif task == "OSP":
        assert ans == osp(n, edges, p["source"], p["target"]), (ans, p)
    elif task == "OMF":
        assert ans == omf(n, edges, p["source"], p["target"]), (ans, p)
    elif task == "ISM":
        assert ans == ism((n, edges), _h(row["hypergraph2"]))
    elif task == "3-CL":
        assert all(len(e) >= 2 for e in edges) and valid_coloring(n, edges, ans), ans
    elif task == "SHC":
        assert valid_cycle(edges, ans), ans
    elif task == "HHM":
        assert valid_ham_path(n, edges, p["source"], p["target"], ans), ans
    else:
        raise AssertionError(f"unknown task {task}")
    lo, hi = {"small": (5, 10), "medium": (11, 15), "large": (16, 20)}[row["scale"]]
    assert lo <= n <= hi, f"{n} vertices outside scale {row['scale']}"
    if row["source"] == "synthetic":
        import math
        assert math.ceil(0.2 * n) <= len(edges) <= 1.5 * n, "B.3 density window"
    # connected (every real and synthetic instance is)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for e in edges:
        e = sorted(e)
        g.add_edges_from(zip(e, e[1:]))
    assert nx.is_connected(g), "instance not connected"


def check_texts(row: dict) -> None:
    """N-Set and Inc-Mat texts, read back with plain regexes, state exactly the row's hypergraph(s)."""
    graphs = [row["hypergraph"]] + ([row["hypergraph2"]] if row["hypergraph2"] else [])
    nset, incm = row["text_n_set"], row["text_inc_mat"]
    if row["hypergraph2"]:
        nset_parts = nset.split(" The description of G is: ")
        inc_parts = incm.split(" The description of G is: ")
    else:
        nset_parts, inc_parts = [nset], [incm]
    for hg, ns, im in zip(graphs, nset_parts, inc_parts):
        n, edges = _h(hg)
        body = ns.split(" are: ", 1)[1]
        stated = [set(int(v) for v in re.findall(r"v(\d+)", g)) for g in re.findall(r"\(([^)]*)\)", body)]
        assert stated == edges, "N-Set text"
        rows = re.findall(r"\[([01,]+)\]", im.split("hypergraph is", 1)[1])
        matrix = [[int(x) for x in r.strip(",").split(",")] for r in rows]
        assert len(matrix) == n and all(len(r) == len(edges) for r in matrix), "Inc-Mat shape"
        assert all(matrix[v][i] == (v in e) for i, e in enumerate(edges) for v in range(n)), "Inc-Mat text"
