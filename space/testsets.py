"""The test sets the Space serves: the public build and a hidden one whose answers never leave the server.

The public set is an ordinary ``hypergvl build`` from a published seed: anyone can rebuild it bit for bit
(``hypergvl build --per-task N --seed S`` gives the same ``build_sha256``) and browse its answers here. The hidden
set (beyond the paper's leaderboard; ``reference/leaderboard.md`` sec. 5, the GSM-Symbolic approach) is built with
the same builder from a secret seed and never served: its scores come only from runs the server's worker makes on
the private build (issue 43). Its questions-only version (``hypergvl strip``) is still built on the server, since its
digest (``served_sha256``) names the set's entries. Rotating it
(a new seed) retires the old set: its results stay, labelled with it, so a model tuned on an earlier release
cannot know the current answers.

Secret seeds: ``$HYPERGVL_HIDDEN_SEED`` (a Space secret) when set, else a random seed kept in
``<data>/private/hidden_seeds.json`` (mode 0600). Neither the registry (``<data>/testsets.json``) nor any page shows
a seed; a set is named after its digest (``public-<sha8>``, ``hidden-<sha8>``)."""
from __future__ import annotations

import json
import os
import secrets
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from hypergvl.atomic import write_json
from hypergvl.paper import PAPER_TASKS

from .config import SpaceConfig
from .scoring import SampleIndex

PUBLIC, HIDDEN = "public", "hidden"


@dataclass(frozen=True)
class TestSet:
    """``served_sha256`` is the ``build_sha256`` a user's ``results.json`` shows for this set: the full build's for
    the public set, the questions-only build's for a hidden one. ``build`` (with the references) is server-only for a
    hidden set; ``download`` is the folder users get of a public set (a hidden one's is never served)."""

    name: str
    kind: str
    build: str
    download: str
    build_sha256: str
    served_sha256: str
    per_task: int
    created: float
    current: bool
    tasks: tuple | list | None = None  # the tasks built (None: recorded before sets named them, the paper's twelve)

    @property
    def label(self) -> str:
        state = "" if self.current else ", retired"
        return f"{self.kind} ({self.name}{state})"


class TestSets:
    """The registry of test sets in ``data_dir`` (builds them on first use; safe across threads)."""

    def __init__(self, data_dir: Path, *, public_seed: int = 0, per_task: int = 4, hidden_seed: int | None = None,
                 workers: int = 1, tasks: tuple[str, ...] | None = None):
        """``tasks``: the tasks a new set is built over (None: ``hypergvl build``'s default, the paper's twelve);
        a set already built keeps its own."""
        self.dir = Path(data_dir)
        self.public_seed, self.per_task, self.workers = public_seed, per_task, workers
        self.tasks = tuple(tasks) if tasks else None
        self._env_seed = hidden_seed
        self._lock = threading.Lock()
        self._indexes: dict[str, object] = {}

    # ------------------------------------------------------------------------------------------ registry
    @property
    def _registry(self) -> Path:
        return self.dir / "testsets.json"

    def all(self) -> list[TestSet]:
        try:
            docs = json.loads(self._registry.read_text())
        except FileNotFoundError:
            return []
        return [TestSet(**d) for d in docs]

    def _save(self, sets: list[TestSet]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        write_json(self._registry, [asdict(s) for s in sets])

    def get(self, name: str) -> TestSet:
        for s in self.all():
            if s.name == name:
                return s
        raise KeyError(f"unknown test set {name!r}")

    def current(self, kind: str) -> TestSet:
        for s in self.all():
            if s.kind == kind and s.current:
                return s
        raise KeyError(f"no current {kind} test set")

    # ------------------------------------------------------------------------------------------ building
    def ensure(self) -> list[TestSet]:
        """Build the public set and the current hidden set when absent (idempotent)."""
        with self._lock:
            sets = self.all()
            if not any(s.kind == PUBLIC for s in sets):
                sets.append(self._make(PUBLIC, self.public_seed))
                self._save(sets)
            seed = self._hidden_seed()
            if not any(s.kind == HIDDEN and s.current for s in sets) or self._env_seed is not None:
                candidate = self._make(HIDDEN, seed)
                if not any(s.name == candidate.name for s in sets):  # a new secret seed: the old set retires
                    sets = [_retired(s) if s.kind == HIDDEN else s for s in sets] + [candidate]
                    self._save(sets)
            return sets

    def rotate_hidden(self, seed: int | None = None) -> TestSet:
        """Retire the current hidden set and build a new one from a new secret seed."""
        if self._env_seed is not None and seed is None:
            raise ValueError("the hidden seed comes from $HYPERGVL_HIDDEN_SEED: change that secret to rotate")
        with self._lock:
            seed = secrets.randbelow(2 ** 62) if seed is None else seed
            self._remember_seed(seed)
            new = self._make(HIDDEN, seed)
            sets = [_retired(s) if s.kind == HIDDEN else s for s in self.all() if s.name != new.name] + [new]
            self._save(sets)
            return new

    def _seeds_file(self) -> Path:
        return self.dir / "private" / "hidden_seeds.json"

    def _hidden_seed(self) -> int:
        if self._env_seed is not None:
            return self._env_seed
        try:
            return json.loads(self._seeds_file().read_text())[-1]
        except FileNotFoundError:
            seed = secrets.randbelow(2 ** 62)
            self._remember_seed(seed)
            return seed

    def _remember_seed(self, seed: int) -> None:
        path = self._seeds_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
        seeds = json.loads(path.read_text()) if path.exists() else []
        write_json(path, seeds + [seed], indent=None, mode=0o600)

    def _make(self, kind: str, seed: int) -> TestSet:
        # the builder (0.25 s, matplotlib for the renderers): only when a test set is made
        from hypergvl.build_folder import dataset_info
        from hypergvl.builder import BuildConfig, build
        from hypergvl.questions import strip_build

        work = self.dir / "builds" / f".{kind}-{os.getpid()}-{time.time_ns()}"
        extra = {"tasks": self.tasks} if self.tasks else {}
        cfg = BuildConfig(out=work / "full", per_task=self.per_task, seed=seed, workers=self.workers,
                          secret_seed=kind == HIDDEN, **extra)
        build(cfg, progress=False)
        sha = dataset_info(str(work / "full"))["build_sha256"]
        final = self.dir / "builds" / f"{kind}-{sha[:8]}"
        if final.exists():  # the same seed again: the build is the same
            import shutil

            shutil.rmtree(work)
        else:
            if kind == HIDDEN:
                strip_build(work / "full", work / "questions")
                (work / "full" / ".hypergvl-build.json").unlink(missing_ok=True)  # it holds the secret seed
            os.replace(work, final)
        served = sha if kind == PUBLIC else dataset_info(str(final / "questions"))["build_sha256"]
        download = final / ("full" if kind == PUBLIC else "questions")
        return TestSet(name=f"{kind}-{sha[:8]}", kind=kind, build=str(final / "full"), download=str(download),
                       build_sha256=sha, served_sha256=served, per_task=self.per_task, created=time.time(),
                       current=True, tasks=list(cfg.tasks))

    # ------------------------------------------------------------------------------------------ references
    def index(self, name: str):
        """The :class:`hypergvl.space.scoring.SampleIndex` of a set (cached)."""
        with self._lock:
            if name not in self._indexes:
                s = self.get(name)
                self._indexes[name] = SampleIndex.from_build(s.build, s.build_sha256, public=s.kind == PUBLIC)
            return self._indexes[name]


def _retired(s: TestSet) -> TestSet:
    from dataclasses import replace

    return replace(s, current=False)


def main(argv=None) -> int:
    """``hypergvl space testsets list|rotate``: the operator's view of the test sets (rotate: a new hidden set
    from a new secret seed; the current one is retired, its results kept)."""
    import argparse

    p = argparse.ArgumentParser(prog="hypergvl space testsets", description=main.__doc__.split(":")[0])
    p.add_argument("action", choices=["list", "rotate"])
    args = p.parse_args(argv)
    cfg = SpaceConfig.from_env()
    sets = TestSets(cfg.data_dir, public_seed=cfg.public_seed, per_task=cfg.per_task, hidden_seed=cfg.hidden_seed)
    sets.ensure()
    if args.action == "rotate":
        try:
            new = sets.rotate_hidden()
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"new hidden set {new.name}; the previous one is retired")
    for s in sets.all():
        print(f"{s.label:40s} {s.per_task * len(s.tasks or PAPER_TASKS):6d} problems  served sha256 {s.served_sha256}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
