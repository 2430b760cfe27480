"""Reading a built benchmark: its rows and what identifies it, from a local build folder or a Hub dataset id.

The builder (:mod:`hypergvl.builder`) writes the folder and :mod:`hypergvl.questions` its questions-only copy; the
harness, the baselines, the lmms-eval task, the routing policies and the Space read it through these functions.
"""
from __future__ import annotations

import re
from pathlib import Path

from .cli import UserError


def build_cache_dir(build_sha256: str) -> str:
    """Where ``datasets`` caches a local build: keyed by the build's sha256 (see :func:`load_rows`)."""
    # lazy: datasets 2.7 s; 'hypergvl --help' imports this module
    from datasets import config

    return str(Path(config.HF_DATASETS_CACHE) / "hypergvl-builds" / build_sha256[:16])


def load_rows(dataset: str, build_sha256: str | None = None):
    """Meta-problem rows of a local build folder or a Hub dataset id (split ``test``).

    ``datasets`` keys its cache of a local folder by the card's file patterns, not by the files' contents, so a
    folder rebuilt with other problems (or another folder of the same name) would be read from the first build's
    cache. A local build is therefore cached under its own ``build_sha256``."""
    # lazy: datasets 2.7 s; 'hypergvl --help' imports this module
    from datasets import load_dataset

    options = {}
    if build_sha256 and Path(dataset).is_dir():
        options["cache_dir"] = build_cache_dir(build_sha256)
    try:
        return load_dataset(dataset, split="test", **options)
    except FileNotFoundError as exc:
        raise UserError(f"dataset {dataset!r} not found: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - datasets raises many types for unreachable/bad repos
        raise UserError(f"cannot load dataset {dataset!r}: {type(exc).__name__}: {exc}") from None


def dataset_info(dataset: str) -> dict:
    """What a results file records about the data: id, sha256 of every shard, of the whole build, and whether it is
    a questions-only set (with the digest of the full build it came from)."""
    # imported here: the builder behind it costs 0.25 s, and every ``hypergvl`` command imports this module's callers
    from .questions import MARKER, build_digest, file_digests, questions_only_info

    path = Path(dataset)
    if path.is_dir():
        digests, q = file_digests(path), questions_only_info(path)
    else:  # a Hub id: the card's table of shard digests and the marker file, when they can be fetched
        card = _hub_file(dataset, "README.md")
        digests = dict(re.findall(r"\| `(data/[^`]+)` \| `([0-9a-f]{64})` \|", card.read_text() if card else ""))
        marker = _hub_file(dataset, MARKER)
        q = questions_only_info(marker.parent) if marker is not None else None
    return {"id": dataset, "sha256": digests, "build_sha256": build_digest(digests) if digests else None,
            "questions_only": q is not None, "full_build_sha256": q["full_build_sha256"] if q else None}


def _hub_file(dataset: str, name: str) -> Path | None:
    """The local copy of a file of a Hub dataset repository; None when it cannot be fetched (offline, no such
    repository or file: the digests are informative)."""
    try:
        # lazy: huggingface_hub 0.23 s; 'hypergvl --help' imports this module
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(dataset, name, repo_type="dataset"))
    except Exception:  # noqa: BLE001
        return None
