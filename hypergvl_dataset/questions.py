"""Questions-only test sets: a build without the columns that reveal answers (``hypergvl strip``).

A leaderboard with a hidden test set hands its users the prompts' inputs and keeps the answers: the text
representations, the question, the images, ids, task, level, scale, source and the hypergraphs stay; ``answer``,
``reference`` and ``params`` go (:data:`ANSWER_COLUMNS`). The stripped folder records the sha256 of the full build
it came from (:func:`build_digest`), so a run over it can later be scored against exactly that build
(``hypergvl score``). The build settings file (which holds the seed, and a seed regenerates every answer) is not
copied, and the card names no seed.

Layout written under ``--out``::

    README.md                     card: the same configs as the full build, "questions only", the full build's digest
    questions_only.json           {"format": 1, "full_build_sha256": ..., "files": {relpath: sha256}}
    data/<config>/test-*.parquet  the full build's shards minus the answer columns
"""
from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from .atomic import atomic_path, write_json, write_text
from .builder import _sha256
from .cli import UserError, command

ANSWER_COLUMNS = ("answer", "reference", "params")
MARKER = "questions_only.json"
FORMAT = 1


def shard_paths(folder: Path) -> list[Path]:
    return sorted(folder.glob("data/*/*.parquet"))


def file_digests(folder: Path) -> dict[str, str]:
    """sha256 of every parquet shard of a build folder, by path relative to it."""
    return {str(p.relative_to(folder)): _sha256(p) for p in shard_paths(folder)}


def build_digest(digests: dict[str, str]) -> str:
    """One sha256 for a whole build: over the sorted ``"<relpath> <sha256>"`` lines of its shards."""
    return hashlib.sha256("".join(f"{k} {digests[k]}\n" for k in sorted(digests)).encode()).hexdigest()


def questions_only_info(folder: Path) -> dict | None:
    """The ``questions_only.json`` of a stripped build folder, or None for a full build (or a Hub id)."""
    marker = Path(folder) / MARKER
    if not marker.is_file():
        return None
    try:
        info = json.loads(marker.read_text())
        info["full_build_sha256"]
    except (ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{marker} is damaged ({exc}); strip the full build again") from None
    return info


def strip_build(src: Path, out: Path) -> Path:
    """Write the questions-only version of the finished build ``src`` to ``out``; returns ``out``."""
    # lazy: pyarrow 0.7 s; 'hypergvl --help' imports this module, only writing a questions-only copy needs it
    import pyarrow.parquet as pq
    import yaml

    src, out = Path(src), Path(out)
    if not (src / "README.md").is_file() or not shard_paths(src):
        raise UserError(f"{src} is not a finished build (no README.md card or no data/*/*.parquet shards)")
    if questions_only_info(src) is not None:
        raise UserError(f"{src} is already questions-only")
    if out.resolve() == src.resolve():
        raise UserError("--out must differ from the build folder")
    if out.exists() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise UserError(f"{out} exists and is not a questions-only folder; choose an empty or new folder")
    digests = file_digests(src)
    for rel in sorted(digests):
        table = pq.read_table(src / rel)
        table = table.drop_columns([c for c in ANSWER_COLUMNS if c in table.column_names])
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as tmp:
            pq.write_table(table, tmp)
    files = file_digests(out)
    front = _front_matter(src)
    full = build_digest(digests)
    info = {"format": FORMAT, "full_build_sha256": full, "files": files}
    write_json(out / MARKER, info, sort_keys=True)
    card = ["---", yaml.safe_dump(front, sort_keys=False).strip(), "---", "",
            "# HyperGVL (questions only)", "",
            f"The prompts' inputs of a HyperGVL build: {', '.join(f'`{c}`' for c in ANSWER_COLUMNS)} are removed. "
            "Run `hypergvl evaluate` on this folder (or its Hub id): the raw responses are recorded, unscored, and "
            "the holder of the full build scores them (`hypergvl score RUN --dataset FULL_BUILD`).", "",
            f"Full build sha256 (over its shards' digests): `{full}`", "",
            "## Files", "", "| file | sha256 |", "| --- | --- |"]
    card += [f"| `{k}` | `{v}` |" for k, v in sorted(files.items())]
    write_text(out / "README.md", "\n".join(card) + "\n")
    return out


def _front_matter(src: Path) -> dict:
    import yaml

    text = (src / "README.md").read_text()
    try:
        _, head, _ = text.split("---", 2)
        front = yaml.safe_load(head)
    except ValueError:
        raise UserError(f"{src}/README.md has no YAML front matter") from None
    keep = ("license", "language", "task_categories", "tags", "size_categories", "configs")
    front = {k: front[k] for k in keep if k in front}
    front["pretty_name"] = "HyperGVL (questions only)"
    return front


def _strip_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("build", type=Path, help="a finished `hypergvl build` folder")
    p.add_argument("--out", required=True, type=Path, help="folder for the questions-only set")


@command("strip", _strip_args)
def _strip(args: argparse.Namespace) -> int:
    """Write the questions-only version of a build (no answer, reference or params columns)."""
    out = strip_build(args.build, args.out)
    print(f"wrote the questions-only set {out} (full build sha256 {questions_only_info(out)['full_build_sha256']})")
    return 0
