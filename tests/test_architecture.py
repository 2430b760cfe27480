"""The import rule of the house (ARCHITECTURE.md), read from the code's own import statements.

Layers, bottom to top: ``hypergvl`` (the core, ``hypergvl_dataset/``), ``hypergvl.models``, ``hypergvl.evaluators``,
``hypergvl.router``, ``hypergvl.space``; ``benchmarks/`` sits on top of them all. A module imports only from its own
layer or below, whether at the top of the module or inside a function, and no modules import each other in a circle.
A lower layer reaches a higher one only through a hook it owns and the higher one registers into (the ``hypergvl``
command's and the routing policies' entry-point groups), never by naming it."""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"hypergvl_dataset": "hypergvl", "models": "hypergvl.models", "evaluators": "hypergvl.evaluators",
           "router": "hypergvl.router", "space": "hypergvl.space"}
LAYERS = ("hypergvl", "hypergvl.models", "hypergvl.evaluators", "hypergvl.router", "hypergvl.space", "benchmarks")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    names = FOLDERS.get(parts[0], parts[0]).split(".") + parts[1:]
    return ".".join(names[:-1] if names[-1] == "__init__" else names)


def sources() -> dict[str, Path]:
    """Every module of the five packages and of benchmarks/ (shipped results and caches left out)."""
    found = {}
    for folder in (*FOLDERS, "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            if not {"__pycache__", "results", ".dhgbench"} & set(path.relative_to(ROOT).parts):
                found[module_name(path)] = path
    return found


MODULES = sources()


def layer(module: str) -> int:
    return max((i for i, name in enumerate(LAYERS) if module == name or module.startswith(name + ".")), default=-1)


def owner(name: str) -> str | None:
    """The module of ours that ``name`` (a module or a name in one) is, or None for a third-party one."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str) -> list[tuple[str, int]]:
    """(module of ours imported, line) for every import statement of ``module``, inside functions too."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        found += [(target, node.lineno) for target in map(owner, names) if target and target != module]
    return found


GRAPH = {module: imports(module) for module in MODULES}


def test_the_reader_sees_the_layers():
    """The rule below is only as good as this reading: known imports of each kind are seen."""
    assert any(t == "hypergvl.cli" for t, _ in GRAPH["hypergvl.evaluators.harness"])  # absolute
    assert any(t == "hypergvl.evaluators.adapters" for t, _ in GRAPH["hypergvl.evaluators.harness"])  # relative
    assert any(t == "hypergvl.evaluators.harness" for t, _ in GRAPH["hypergvl.router.study"])  # inside a function
    assert layer("hypergvl.tasks") == 0 and layer("hypergvl.models.nn.hgnn") == 1 and layer("hypergvl.space") == 4
    assert len(MODULES) > 120


def test_no_module_imports_from_a_layer_above_its_own():
    upward = [f"{m}:{line} imports {t}" for m, targets in GRAPH.items() for t, line in targets if layer(t) > layer(m)]
    assert not upward, "\n".join(upward)


def strongly_connected(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module, iteratively."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter[0]; counter[0] += 1; stack.append(root); on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on_stack.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop(); on_stack.discard(w); component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_strongly_connected_finds_a_circle_and_only_circles():
    assert strongly_connected({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
    assert strongly_connected({"a": ["b"], "b": [], "c": ["b"]}) == []


def test_no_import_circles():
    graph = defaultdict(list, {m: [t for t, _ in targets] for m, targets in GRAPH.items()})
    circles = strongly_connected(graph)
    lines = [" <-> ".join(c) + ": " + "; ".join(f"{m}:{n} -> {t}" for m in c for t, n in GRAPH[m] if t in c)
             for c in circles]
    assert not circles, "\n".join(lines)


def test_the_worker_imports_no_ui():
    """The Space's worker (and what it imports of the Space) runs without Gradio."""
    seen, todo = set(), ["hypergvl.space.worker"]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo += [t for t, _ in GRAPH[m] if t.startswith("hypergvl.space")]
        assert "import gradio" not in MODULES[m].read_text() or m == "hypergvl.space.app", m
    assert "hypergvl.space.app" not in seen


COST = re.compile(r"\d(\.\d+)?( ?- ?\d+(\.\d+)?)? ?(s|ms)\b")  # a measured time: "0.3 s", "3-4 s", "2.5 s"


def deferred_imports_without_a_cost(path: Path) -> list[str]:
    """Imports of our modules (``hypergvl...`` or relative) inside a function of ``path`` whose reason names no
    measured start-up time: none on the import's line or the three above it, and no ``# imports inside functions:
    ...`` comment in the module."""
    text = path.read_text()
    lines = text.splitlines()
    if any(l.startswith("# imports inside functions:") and COST.search(l + lines[i + 1]) for i, l in
           enumerate(lines[:-1])):
        return []
    tree = ast.parse(text, str(path))
    exempt = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
              and any(k in ast.unparse(node.test) for k in ("TYPE_CHECKING", "__name__")) for n in ast.walk(node)}
    bad = []
    for node in ast.walk(tree):
        if id(node) in exempt or not isinstance(node, (ast.Import, ast.ImportFrom)) or node.col_offset == 0:
            continue
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if getattr(node, "level", 0) or any(n.split(".")[0] == "hypergvl" for n in names):
            context = lines[max(0, node.lineno - 4):node.end_lineno]
            if not any("#" in l and COST.search(l.split("#", 1)[1]) for l in context):
                where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
                bad.append(f"{where}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return bad


def test_imports_sit_at_the_top_unless_a_measured_cost_says_otherwise(tmp_path):
    """ARCHITECTURE.md: an import of our packages inside a function says, in a comment, the start-up time it saves
    (the check can fail: a bare deferred import is reported, one with its cost is not)."""
    bad = [b for path in MODULES.values() if path.parts[len(ROOT.parts)] != "benchmarks"
           for b in deferred_imports_without_a_cost(path)]
    assert not bad, "\n".join(bad)
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from hypergvl.tasks import TASKS\n\n\ndef g():\n    from .x import y\n\n\n"
                     "def h():\n    # the task registry (0.3 s): only here\n    from hypergvl.tasks import TASKS\n")
    assert [b.split(": ", 1)[0] for b in deferred_imports_without_a_cost(probe)] == ["probe.py:2", "probe.py:6"]


#: third-party packages whose import costs start-up time (``python -X importtime -c "import X"``, on the 2-core
#: machine at load 12-17: torch 9.6 s, torch_geometric 13.5, gradio 10.4, accelerate 7.3, sklearn.metrics 6.4,
#: scipy.stats 6.4, pandas 3.0, datasets 2.7, matplotlib.pyplot 2.1, transformers 1.5, networkx 1.5, gradio_client
#: 0.7, pyarrow 0.7, PIL.Image 0.25, huggingface_hub 0.23, httpx 0.21)
HEAVY = frozenset({"torch", "torch_geometric", "transformers", "datasets", "gradio", "gradio_client", "matplotlib",
                   "accelerate", "evaluate", "huggingface_hub", "networkx", "pandas", "scipy", "PIL", "sklearn",
                   "pyarrow", "httpx"})
LAZY = re.compile(r"#\s*lazy: .*" + COST.pattern)  # "# lazy: torch 5-10 s; 'hypergvl --help' must not pay it"


def lazy_heavy_imports_without_a_reason(path: Path) -> list[str]:
    """Imports of a :data:`HEAVY` package inside a function of ``path`` without a ``# lazy: <what> <cost>; <who does
    not pay it>`` comment on their lines or on the line above them (above the run of import lines they are in)."""
    text = path.read_text()
    lines = text.splitlines()
    bad = []
    for node in ast.walk(ast.parse(text, str(path))):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or node.col_offset == 0 or getattr(node, "level", 0):
            continue
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if not {n.split(".")[0] for n in names} & HEAVY:
            continue
        above = node.lineno - 2  # index of the line above; climb over the import lines right above this one
        while above >= 0 and re.match(r"\s*(import|from)\s", lines[above]) and "#" not in lines[above]:
            above -= 1
        context = lines[node.lineno - 1:node.end_lineno] + ([lines[above]] if above >= 0 else [])
        if not any(LAZY.search(line) for line in context):
            where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
            bad.append(f"{where}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return bad


def test_a_heavy_third_party_import_inside_a_function_says_what_it_saves(tmp_path):
    """Issue 60, item 5: a function-level import of a heavy third-party package (:data:`HEAVY`) names its measured
    cost and who does not pay it, in one format: ``# lazy: torch 5-10 s; 'hypergvl --help' must not pay it`` on
    its line or the line above (an import with nothing to save belongs at the top of its module). The check can
    fail: the probe's bare deferred imports are reported, the ones with a reason are not."""
    bad = [b for path in MODULES.values() if path.parts[len(ROOT.parts)] != "benchmarks"
           for b in lazy_heavy_imports_without_a_reason(path)]
    assert not bad, "\n".join(bad)
    probe = tmp_path / "probe.py"
    source = ("def f():\n    import torch\n\n\ndef g():\n    # lazy: torch 5-10 s; the listing must not pay it\n"
              "    import torch\n    import numpy\n    from datasets import Image\n\n\n"
              "def h():\n    import json\n    from sklearn.metrics import f1_score  # needs a reason, not this\n"
              "    from PIL import Image  # lazy: PIL 0.25 s; only the pictures need it\n")
    probe.write_text(source)
    assert [b.split(": ", 1)[0] for b in lazy_heavy_imports_without_a_reason(probe)] == ["probe.py:2", "probe.py:14"]
