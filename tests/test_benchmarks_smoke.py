"""Every script in ``benchmarks/`` runs end to end at its smallest size, as documented (``python
benchmarks/<script>.py ...`` from the checkout's root, in a subprocess of its own), prints its comparison (the
project's figure and the reference measured in the same run) and writes what it says it writes, into a temporary
folder, leaving the checkout as it was.

:data:`SMOKE` has one entry per script and :data:`HELPERS` one per helper module (no ``__main__``; imported by the
scripts); a file in ``benchmarks/`` that is in neither fails :func:`test_every_benchmark_file_has_a_smoke_entry`, so a
new script cannot go unexercised. An entry either runs here (``args``, its smallest size) or names the default-suite
test that already runs the script's ``main`` end to end (``covered_by``; checked to exist and not be marked slow), or
names what the test machine lacks (``needs``: the DHG-Bench wheel in ``benchmarks/.dhgbench``, AllSet's source, the
real data folder, a GPU, a package), a skip with that reason where it is missing. ``slow`` entries (over ~20 s even
at their smallest size on the shared 2-core machine) carry the ``slow`` marker, outside the default suite.

Substitutions in ``args``, ``writes`` and ``setup``: ``{tmp}`` (a fresh folder), ``{data}`` (the real data folder,
``$HYPERGVL_RAW_ROOT`` or ``../shared/data``), ``{dhgbench}`` (DHG-Bench's wheel folder), ``{allset}`` (AllSet's
``src/``, ``$HYPERGVL_ALLSET_SRC``)."""
from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from benchmark_scripts import BENCHMARKS, load_script

ROOT = BENCHMARKS.parent
SHARED_DATA = Path(os.environ.get("HYPERGVL_RAW_ROOT", ROOT.parent / "shared" / "data"))  # as conftest's
DHGBENCH = Path(os.environ.get("HYPERGVL_DHGBENCH", BENCHMARKS / ".dhgbench"))
ALLSET = os.environ.get("HYPERGVL_ALLSET_SRC")


@dataclass(frozen=True)
class Smoke:
    """How one script is smoke-run. ``expect``: regular expressions that must each match a line of its stdout (the
    figure and the reference), or of the file ``expect_file`` where it writes its table there; ``writes``: files or
    folders it must leave, non-empty; ``setup``: commands run first (``python`` is this interpreter)."""

    args: tuple[str, ...] = ()
    expect: tuple[str, ...] = ()
    expect_file: str | None = None
    writes: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    setup: tuple[tuple[str, ...], ...] = ()
    slow: bool = False
    covered_by: str | None = None


SMOKE: dict[str, Smoke] = {
    "allset_reference": Smoke(
        ("--allset-src", "{allset}", "--datasets", "cora", "--seeds", "0", "--epochs", "2", "--json", "{tmp}/a.json"),
        expect=(r"^\| cora \| .+ \| .+ \| .+ \|",), writes=("{tmp}/a.json",), needs=("allset", "data"), slow=True),
    "build": Smoke(
        ("--sizes", "1", "2", "--tasks", "ISM", "--workers", "1", "--keep", "{tmp}/keep"),
        expect=(r"^--per-task +1 .+ wall +[\d.]+ s, .+ peak RSS +\d+ MiB",
                r"^2x the problems: [\d.]+x the time, [\d.]+x the peak memory"),
        writes=("{tmp}/keep",)),
    "cegat_attention": Smoke(covered_by="tests/test_benchmarks_cegat_attention.py::"
                                        "test_cegat_attention_times_both_forms"),
    "cli_errors": Smoke(
        ("--cases", "train --modle", "--repeat", "1"),
        expect=(r"^\| train --modle \| 2 \| 2 \| [\d.]+ \| [\d.]+ \| [\d.]+x \|",)),  # one refusal, both sides
    "epoch_time": Smoke(
        ("--raw-root", "{data}", "--models", "MLP", "--epochs", "2", "--warmup", "1", "--seeds", "1", "--hidden", "8",
         "--threads", "1", "--no-dhgbench", "--json", "{tmp}/epoch.json", "--plot", "{tmp}/epoch.png"),
        expect=(r"^PyG-HGNN +\d+", r"^MLP +[\d.]+ +[\d.]+ +[\d.]+x "), writes=("{tmp}/epoch.json", "{tmp}/epoch.png"),
        needs=("data",)),
    "fair_hypergraph": Smoke(
        ("--raw-root", "{data}", "--datasets", "german"),
        expect=(r"^german: [\d,]+ of 1,000 hyperedges identical to the rule \(1,000 in the file",), needs=("data",)),
    "fairness_reference": Smoke(
        ("--models", "HGNN", "--dataset", "german", "--seeds", "0", "--raw-root", "{data}", "--dhgbench", "{dhgbench}",
         "--json", "{tmp}/f.json"),
        expect=(r"^\| \*\*HGNN\*\* \| mean ± std \| ",), writes=("{tmp}/f.json",), needs=("dhgbench", "data"),
        slow=True),
    "generate": Smoke(
        ("--per-task", "1"),
        expect=(r"^12 meta problems in [\d.]+ s: \d+ problems/s",
                r"^reference: .+ took [\d.]+ s; ratio generate\+solve / check = [\d.]+$")),
    "gpu_smoke": Smoke(covered_by="tests/test_benchmarks_gpu_smoke.py::"
                                  "test_every_section_runs_on_the_cpu_without_the_missing_packages"),
    "grading_worst_case": Smoke(
        ("--size", "500", "--repeat", "1", "--cap-s", "0.05", "--tasks", "ISM"),
        expect=(r"^\| ISM \| `.+` \| [\d.]+ \| (>|[\d.,]+ ms)", r"^worst of all tasks today: [\d.]+ ms")),
    "graph_attention": Smoke(covered_by="tests/test_benchmarks_graph_attention.py::"
                                        "test_graph_attention_times_both_scopes_of_both_models"),
    "harness": Smoke(
        ("--delay", "0.01", "--concurrency", "2", "--rounds", "1", "--per-task", "1"),
        expect=(r"^ +2 +2 +[\d.]+ +[\d.]+ +[\d.]+ .+ [\d.]+x +[\d.]+s$",
                (r"naive loop: main-thread CPU [\d.]+ ms/sample, .+ \(ratio naive/harness: CPU [\d.]+x, "
                 r"wall [\d.]+x\)"))),
    "hnn_epoch_speed": Smoke(
        ("--raw-root", "{data}", "--models", "HGNN", "--epochs", "1", "--warmup", "0", "--seeds", "1", "--profile",
         "--out", "{tmp}/speed.md"),
        expect=(r"^HGNN +[\d.]+ +[\d.]+ +100 +[\d.]+ +[\d.]+$", r"^ +[\d.]+% +[\d.]+ s  \S", r"^total +[\d.]+$"),
        writes=("{tmp}/speed.md",), needs=("data",)),
    "hyperedge_reference": Smoke(
        ("--models", "HGNN", "--seeds", "0", "--raw-root", "{data}", "--dhgbench", "{dhgbench}",
         "--json", "{tmp}/h.json"),
        expect=(r"^\| \*\*HGNN\*\* \| .+ \| mean ± std \| ",), writes=("{tmp}/h.json",), needs=("dhgbench", "data"),
        slow=True),
    "own_data": Smoke(
        ("--train", "--models", "MLP", "--runs", "1", "--out", "{tmp}/runs", "--results", "{tmp}/own.json",
         "--table", "{tmp}/own.md"),
        expect=(r"^\| MLP \| [\d.]+ ± [\d.]+ \| [\d.]+ ± [\d.]+ \| 1 / 1 \|",  # the two protocols
                r"^\| 5-NN classifier \| [\d.]+ ± [\d.]+ \|"),  # the reference on the same split
        expect_file="{tmp}/own.md", writes=("{tmp}/own.json", "{tmp}/own.md"),
        slow=True),  # the MLP for 200 + 500 epochs: ~13 s of CPU, a minute on the loaded machine
    "render": Smoke(
        ("--count", "1", "--reference-count", "1", "--repeat", "1"),
        expect=(r"^all five representations: [\d.]+x the naive reference's images/s per core, [\d.]+ vs [\d.]+ KiB",)),
    "reproduce_allset": Smoke(  # the table from the shipped points (--train is 500 epochs a seed)
        ("--points", "benchmarks/results/allset/points", "--models", "ED-HNN", "--datasets", "cora",
         "--table", "{tmp}/allset.md"),
        writes=("{tmp}/allset.md",)),
    "reproduce_dhgbench": Smoke(  # the table from the shipped points; training is covered by the trainer's tests
        ("--models", "MLP", "--datasets", "cora", "--tasks", "node", "--points", "benchmarks/results/points",
         "--out", "{tmp}/repro"),
        expect=((r"^\| node \| cora \| MLP \| accuracy \| [\d.]+ ± [\d.]+ \| \d+ \| 75\.33 ± 0\.88 \| "
                 r"[+-][\d.]+ \| (pass|miss) \|"),),
        writes=("{tmp}/repro/table.md", "{tmp}/repro/table.json", "{tmp}/repro/ours_vs_paper.png")),
    "router_defaults": Smoke(
        ("--src", "{tmp}/src", "--fresh", "{tmp}/fresh", "--repeats", "1", "--work", "{tmp}/work",
         "--set", "epochs=1", "--set", "max_steps=2", "--set", "min_steps=none", "--out", "{tmp}/router.json"),
        setup=(("python", "-m", "hypergvl", "build", "--out", "{tmp}/src", "--per-task", "2", "--tasks", "VC", "ISM",
                "--seed", "101", "--no-progress"),
               ("python", "-m", "hypergvl", "build", "--out", "{tmp}/fresh", "--per-task", "1", "--tasks", "VC", "ISM",
                "--seed", "202", "--no-progress")),
        expect=(r'^ "router_minus_top": -?[\d.]+',), writes=("{tmp}/router.json",), slow=True),
    "scale": Smoke(covered_by="tests/test_benchmarks_scale.py::test_scale_ok_oom_and_resume"),
    "score": Smoke(
        ("--problems", "12", "--reps", "2", "--repeat", "1"),
        expect=(r"^hypergvl_accuracy, scorer version \d+ +[\d.]+ s",
                r"^the same metric, scorer version 1 parser +[\d.]+ s .+ ratio v\d+/v1 = [\d.]+x",
                r"^version \d+: same verdicts as the per-sample loops: True$")),
    "space": Smoke(
        ("--problems", "12", "--entries", "5", "--attack-mib", "1", "--skip-largest"),
        expect=(r"^  ratio before / project = \d+x memory",
                r"^  ratio naive / project = [\d.]+x; same per-task accuracy: True$",
                r"^  ratio naive / project = [\d.]+x first render")),
    "speed_since": Smoke(covered_by="tests/test_benchmarks_speed_since.py::test_two_commits_in_one_run"),
    "summation_order": Smoke(covered_by="tests/test_summation_order.py::"
                                        "test_the_stable_control_rebuilds_and_is_equal_at_one_and_two_threads"),
    "training_stability": Smoke(
        ("--model", "HGNN", "--seeds", "0", "--epochs", "2", "--raw-root", "{data}", "--dhgbench", "{dhgbench}",
         "--json", "{tmp}/s.json"),
        expect=(r"^max \|output difference\| at the copied initial weights",), writes=("{tmp}/s.json",),
        needs=("dhgbench", "data"), slow=True),
    "space_load": Smoke(("--smoke", "--data-dir", "{tmp}/space", "--out", "{tmp}/load.md"),
                        expect=(r"^ +2 visitors: \d+ events, errors [\d.]+%, p50 [\d.]+ s",),
                        writes=("{tmp}/load.md",), needs=("locust",), slow=True),  # the Space's first start: a minute
}

#: modules without a ``__main__``: what each is, and the names the scripts import from it (checked to exist)
HELPERS: dict[str, tuple[str, ...]] = {
    "_dhgbench_shim": ("install",),  # stand-ins for torch_scatter/torch_sparse/dask (tests/test_benchmarks_scale.py)
    "checkout_import": ("import_hypergvl_from",),  # gpu_smoke.py and speed_since.py (their tests run it)
    "dhgbench_misses": ("cause", "located", "BAR"),  # reproduce_dhgbench.py's last column
    "dhgbench_reference": ("DHGBENCH_METHOD", "import_dhgbench", "build_ours", "default_dhgbench"),
    "weight_copy": ("copy_weights", "output_difference"),  # epoch_time.py, training_stability.py
}

_NEEDS = {
    "data": (lambda: SHARED_DATA.is_dir(), f"the real data folder {SHARED_DATA} (set $HYPERGVL_RAW_ROOT)"),
    "dhgbench": (lambda: DHGBENCH.is_dir(), (f"DHG-Bench's wheel in {DHGBENCH.name} or $HYPERGVL_DHGBENCH "
                                              "(benchmarks/dhgbench_reference.py says how to install it; network)")),
    "allset": (lambda: bool(ALLSET) and Path(ALLSET).is_dir(),
               "AllSet's src/ (jianhao2016/AllSet, network) named by $HYPERGVL_ALLSET_SRC"),
    "locust": (lambda: importlib.util.find_spec("locust") is not None, "the locust package (the bench extra)"),
    "gpu": (lambda: _cuda(), "a CUDA GPU"),
}


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def _files() -> set[str]:
    return {p.stem for p in BENCHMARKS.glob("*.py")}


def _has_main(name: str) -> bool:
    tree = ast.parse((BENCHMARKS / f"{name}.py").read_text())
    return any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in tree.body)


def test_every_benchmark_file_has_a_smoke_entry():
    files = _files()
    unlisted = sorted(files - set(SMOKE) - set(HELPERS))
    assert not unlisted, (f"benchmarks/{', '.join(unlisted)}.py: no entry in tests/test_benchmarks_smoke.py "
                          "(SMOKE for a script: its smallest size, expected lines and files; HELPERS for a module)")
    stale = sorted(n for n, s in SMOKE.items() if n not in files) + sorted(set(HELPERS) - files)
    assert not stale, f"entries for files that are not in benchmarks/: {stale}"
    assert not set(SMOKE) & set(HELPERS)
    assert [n for n in HELPERS if _has_main(n)] == [], "a helper with a __main__ is a script: give it a SMOKE entry"
    assert [n for n in SMOKE if n in files and not _has_main(n)] == [], "a script without __main__ is a helper"


def test_a_file_without_an_entry_is_named(tmp_path, monkeypatch):
    """The listing check fails for a script added without an entry (the check must be able to fail)."""
    (tmp_path / "new_benchmark.py").write_text('if __name__ == "__main__":\n    pass\n')
    for name in [*SMOKE, *HELPERS]:
        (tmp_path / f"{name}.py").write_text("" if name in HELPERS else 'if __name__ == "__main__":\n    pass\n')
    monkeypatch.setattr(sys.modules[__name__], "BENCHMARKS", tmp_path)
    with pytest.raises(AssertionError, match="new_benchmark"):
        test_every_benchmark_file_has_a_smoke_entry()


@pytest.mark.parametrize("name", sorted(HELPERS))
def test_helper_modules_import_and_name_what_the_scripts_use(name):
    module = load_script(name)
    assert [a for a in HELPERS[name] if not hasattr(module, a)] == []
    users = [p.name for p in BENCHMARKS.glob("*.py") if p.stem != name and re.search(rf"\b{name}\b", p.read_text())]
    assert users, f"benchmarks/{name}.py is used by no script: a script or dead code?"


def _sub(text: str, tmp: Path) -> str:
    return text.format(tmp=tmp, data=SHARED_DATA, dhgbench=DHGBENCH, allset=ALLSET or "")


def _snapshot() -> dict[str, int]:
    """Modification times of the files a script could write by default: ``benchmarks/`` and ``out/``."""
    return {str(p): p.stat().st_mtime_ns for folder in (BENCHMARKS, ROOT / "out") if folder.is_dir()
            for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def _params():
    for name in sorted(SMOKE):
        marks = [pytest.mark.slow] if SMOKE[name].slow else []
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", list(_params()))
def test_benchmark_runs_at_its_smallest_size(name, tmp_path):
    entry = SMOKE[name]
    if entry.covered_by:
        path, _, test = entry.covered_by.partition("::")
        tree = ast.parse((ROOT / path).read_text())
        fn = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == test]
        assert fn, f"{entry.covered_by} is gone: give {name} its own smoke args"
        assert "slow" not in " ".join(ast.unparse(d) for d in fn[0].decorator_list), f"{entry.covered_by} is slow"
        assert name in (ROOT / path).read_text()
        return
    missing = [_NEEDS[need][1] for need in entry.needs if not _NEEDS[need][0]()]
    if missing:
        pytest.skip("needs " + "; ".join(missing))
    before = _snapshot()
    env = {**os.environ, "MPLBACKEND": "Agg"}
    for cmd in entry.setup:
        cmd = [sys.executable if c == "python" else _sub(c, tmp_path) for c in cmd]
        subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True)
    proc = subprocess.run([sys.executable, f"benchmarks/{name}.py", *(_sub(a, tmp_path) for a in entry.args)],
                          check=False, cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"benchmarks/{name}.py exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    text = Path(_sub(entry.expect_file, tmp_path)).read_text() if entry.expect_file else proc.stdout
    unmatched = [p for p in entry.expect if not any(re.search(p, line) for line in text.splitlines())]
    assert not unmatched, f"benchmarks/{name}.py printed no line matching {unmatched}:\n{text[-3000:]}"
    for out in entry.writes:
        path = Path(_sub(out, tmp_path))
        assert path.exists() and (any(path.iterdir()) if path.is_dir() else path.stat().st_size > 0), \
            f"benchmarks/{name}.py did not write {out}"
    changed = sorted(set(_snapshot().items()) ^ set(before.items()))
    assert not changed, f"benchmarks/{name}.py wrote into the checkout (give it a tmp path): {changed[:5]}"


# ------------------------------------------------------------------ figures the docs quote from the benchmarks
#: a speed or memory figure as the docs quote one: a ratio (``2.4x``), a time per unit, a rate
FIGURE = re.compile(r"\d(?:\.\d+)?x\b|\d[\d.,]* ?(?:ms|s)\b ?(?:a|per|/) ?(?:epoch|step|sample|request)"
                    r"|(?:images|problems|samples|steps)/s\b")
SCRIPT = re.compile(r"benchmarks/([A-Za-z_]\w*)\.py")
COMMIT = re.compile(r"(?<![\w/.-])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-])")
RESULTS = re.compile(r"benchmarks/results/[\w/.-]+\.(?:md|json)")
QUOTING = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
           *sorted((ROOT / "evaluators").glob("*/README.md"))]


def unsourced(text: str) -> list[str]:
    """Paragraphs (table rows left out) that quote a figure beside a ``benchmarks/`` script but name neither the
    commit it was measured at nor a ``benchmarks/results/`` file (which carries its commits)."""
    out = []
    for para in re.split(r"\n\s*\n", text):
        prose = "\n".join(line for line in para.splitlines() if not line.lstrip().startswith("|"))
        if FIGURE.search(prose) and SCRIPT.search(prose) and not (COMMIT.search(prose) or RESULTS.search(prose)):
            out.append(prose.strip()[:160])
    return out


def test_the_figure_check_finds_a_figure_without_its_commit():
    assert unsourced("Scoring: `python benchmarks/score.py` gives 1.2x the time of version 1.") != []
    assert unsourced("Scoring: `python benchmarks/score.py` at 6736700 gives 1.2x the time of version 1.") == []
    assert unsourced("Scoring (`benchmarks/score.py`, [results](../benchmarks/results/score.md)): 1.2x.") == []
    assert unsourced("`python benchmarks/score.py` prints the ratio beside version 1.") == []  # no figure quoted


@pytest.mark.parametrize("doc", QUOTING, ids=lambda p: str(p.relative_to(ROOT)))
def test_quoted_benchmark_figures_name_their_script_and_commit(doc):
    text = doc.read_text()
    missing = sorted({s for s in SCRIPT.findall(text) if not (BENCHMARKS / f"{s}.py").exists()})
    assert not missing, f"{doc.name} names benchmarks/{missing}.py, which is not in benchmarks/"
    assert unsourced(text) == [], f"{doc.name}: a quoted figure without the commit it was measured at"
