"""The front page and the docs stay true: every relative link resolves, every command block marked runnable runs.

A fenced ```bash block preceded by the line ``<!-- runnable -->`` is executed with ``bash -e`` in a fresh temporary
folder (``<!-- runnable: checkout -->``: in the repository root, for read-only commands that need the checkout's
files), with this interpreter's ``bin`` folder first on ``PATH`` and the Hub offline; it must exit 0. Keep such
blocks to quick offline commands: all of them together run in well under a minute on 2 cores."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKERS = {"<!-- runnable -->": "tmp", "<!-- runnable: checkout -->": "checkout"}
README_MAX_LINES = 160

_FENCE = re.compile(r"^\s*(```|~~~)")
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_CODE_SPAN = re.compile(r"`+[^`]*`+")


def prose_lines(text: str):
    """(line number, line) outside fenced code blocks, inline code spans removed."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, _CODE_SPAN.sub("", line)


def relative_links(text: str) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link or image to a local path (web, mail and same-page anchors left out;
    a link's own anchor is dropped)."""
    found = []
    for number, line in prose_lines(text):
        for target in _LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("#"):
                continue
            found.append((number, target.split("#", 1)[0]))
    return found


def broken_links(doc: Path, text: str | None = None) -> list[str]:
    text = doc.read_text(encoding="utf-8") if text is None else text
    return [f"{doc.relative_to(ROOT)}:{n}: {t}" for n, t in relative_links(text) if not (doc.parent / t).exists()]


def runnable_blocks(text: str) -> list[tuple[int, str, str]]:
    """(line of the fence, mode, code) of every ```bash block right after a runnable marker."""
    lines, blocks = text.splitlines(), []
    for i, line in enumerate(lines[:-1]):
        mode = MARKERS.get(line.strip())
        if mode is None:
            continue
        if lines[i + 1].strip() != "```bash":
            raise ValueError(f"line {i + 1}: a runnable marker must be followed by a ```bash fence")
        end = next(j for j in range(i + 2, len(lines)) if lines[j].strip() == "```")
        blocks.append((i + 2, mode, "\n".join(lines[i + 2:end]) + "\n"))
    return blocks


def run_block(code: str, cwd: Path, tmp: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               HF_HOME=str(tmp / ".hf"), TMPDIR=str(tmp), MPLBACKEND="Agg")
    return subprocess.run(["bash", "-e"], input=code, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


ALL_BLOCKS = [(doc, *block) for doc in DOCS for block in runnable_blocks(doc.read_text(encoding="utf-8"))]


# ------------------------------------------------------------------------------------------ the checkers themselves
def test_link_checker_finds_a_broken_link_and_ignores_code(tmp_path):
    doc = ROOT / "docs" / "example.md"  # resolved against docs/, never written
    text = ("[ok](design.md) [anchor](../ARCHITECTURE.md#layers) [web](https://example.org/x) [here](#top)\n"
            "[gone](no-such-file.md) `[in code](also-missing.md)`\n```bash\n[fenced](missing-too.md)\n```\n")
    assert relative_links(text) == [(1, "design.md"), (1, "../ARCHITECTURE.md"), (2, "no-such-file.md")]
    assert broken_links(doc, text) == ["docs/example.md:2: no-such-file.md"]


def test_runnable_blocks_are_found_and_a_failing_command_fails(tmp_path):
    text = ("```bash\nnot marked\n```\n<!-- runnable -->\n```bash\necho one\nfalse\necho two\n```\n"
            "<!-- runnable: checkout -->\n```bash\ntest -f README.md\n```\n")
    blocks = runnable_blocks(text)
    assert [(n, mode) for n, mode, _ in blocks] == [(5, "tmp"), (11, "checkout")]
    failed = run_block(blocks[0][2], tmp_path, tmp_path)
    assert failed.returncode != 0 and "two" not in failed.stdout  # bash -e stops at the first failure
    assert run_block(blocks[1][2], ROOT, tmp_path).returncode == 0
    assert run_block(blocks[1][2], tmp_path, tmp_path).returncode != 0
    with pytest.raises(ValueError, match="followed by a ```bash fence"):
        runnable_blocks("<!-- runnable -->\n```python\nprint(1)\n```\n")


# ------------------------------------------------------------------------------------------------------ the docs
def test_the_docs_exist_and_have_runnable_commands():
    names = {p.name for p in DOCS}
    assert {"benchmark.md", "evaluation.md", "router.md", "hnn.md", "studies.md", "space.md", "reproduction.md",
            "extending.md", "design.md"} <= names
    assert len(ALL_BLOCKS) >= 6, [(d.name, n) for d, n, _, _ in ALL_BLOCKS]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc):
    assert broken_links(doc) == []


def test_readme_is_a_front_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail to docs/"
    text = "\n".join(lines)
    assert "make demo" in text and "make test" in text


def test_no_citation_of_a_design_document_outside_the_repository():
    """The design facts live in docs/design.md; nothing cites the shared design file a clone does not have."""
    stale = "DESIGN" + ".md"
    sources = [*DOCS, *(p for folder in ("hypergvl_dataset", "evaluators", "models", "router", "space", "benchmarks",
                                          "tests") for p in (ROOT / folder).rglob("*.py"))]
    hits = [str(p.relative_to(ROOT)) for p in sources
            if "__pycache__" not in p.parts and stale in p.read_text(encoding="utf-8", errors="replace")]
    assert hits == []


# a command that writes a folder named hypergvl, which in a development checkout's root shadows the package (README)
_SHADOWING_OUT = re.compile(r"--out[ =](\./)?hypergvl/?(?=[\s`'\"]|$)")
SHIPPED_DOCS = sorted(p for p in ROOT.rglob("*.md") if not {".venv", "build", "node_modules", ".git"} & set(p.parts))


def shadowing_commands(text: str) -> list[int]:
    """The lines of ``text`` whose command writes its output to a folder named ``hypergvl``."""
    return [number for number, line in enumerate(text.splitlines(), 1) if _SHADOWING_OUT.search(line)]


def test_no_shipped_doc_builds_into_a_folder_named_hypergvl():
    """The README warns that a folder hypergvl/ in a checkout's root is taken for the package, so no doc's command
    writes one (the docs use bench/); the check can fail: it finds the command the old tour held."""
    assert shadowing_commands("hypergvl build --out hypergvl --per-task 1\n`hypergvl build --out hypergvl`\n"
                              "hypergvl build --out bench\nhypergvl strip bench --out hypergvl-questions\n"
                              "hypergvl build --out ./hypergvl/\n") == [1, 2, 5]
    assert {ROOT / "docs" / "benchmark.md", ROOT / "evaluators" / "lm_eval" / "README.md"} <= set(SHIPPED_DOCS)
    hits = [f"{p.relative_to(ROOT)}:{n}" for p in SHIPPED_DOCS
            for n in shadowing_commands(p.read_text(encoding="utf-8", errors="replace"))]
    assert hits == []


@pytest.mark.parametrize("doc, line, mode, code", ALL_BLOCKS,
                         ids=[f"{d.relative_to(ROOT)}:{n}" for d, n, _, _ in ALL_BLOCKS])
def test_runnable_block(doc, line, mode, code, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    done = run_block(code, ROOT if mode == "checkout" else work, tmp_path)
    assert done.returncode == 0, (f"{doc.relative_to(ROOT)}:{line} failed (exit {done.returncode}):\n{code}\n"
                                  f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")
