"""Build the HyperGVL benchmark as a Hugging Face dataset repository (``hypergvl build``) and upload a build
(``hypergvl push``); its rows become vision-language QA samples through :func:`hypergvl.vqa.expand`.

HyperGVL sec. 2.4: "the 84,000 vision-language QA samples in HyperGVL are related to 2,400 meta problems (each task
200), where each meta problem p corresponds to 35 vision-language QA samples with varying hypergraph
representations." B.3: "The dataset consists of synthetic and real-world hypergraphs in a 1:1 ratio, with an
internal distribution of small:medium:large set at 1:2:1."

Layout written under ``--out`` (default ``hypergvl``)::

    README.md                       dataset card: YAML configs (one per task + default "all"), statistics, sha256s
    data/<config>/test-XXXXX-of-YYYYY.parquet
    .hypergvl-build.json            the build settings (a rerun with other settings is refused)

Shards are written to a temporary name and renamed, so a killed build leaves only complete shards; a rerun skips
them and ends with the same bytes. The card is written last: a folder without README.md is not a finished build.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from .cli import UserError, command
from .answers import SCORER_VERSION
from .atomic import atomic_path, write_json, write_text
from .hypergraph import Hypergraph
from .render import render
from .paper import PAPER_TASKS
from .render import visual_labels
from .tasks import TASKS, config_name, generate_problem, get_task, task_codes
from .text import TEXT_REPS, text_labels
from .vqa import VISUAL_REPS

# imports inside functions: the real sources (0.3 s) load when a build needs them, not at every hypergvl command's
# start (the command line imports this module to register `build`).

MANIFEST = ".hypergvl-build.json"
SCALE_PATTERN = ("small", "medium", "medium", "large")  # B.3: 1:2:1
BUILD_FORMAT = 1


def features():
    """The row schema of docs/design.md as ``datasets.Features``."""
    # lazy: datasets 2.7 s; 'hypergvl --help' imports this module
    from datasets import Features, Image, Value

    cols = {"id": Value("string"), "task": Value("string"), "level": Value("int32"), "source": Value("string"),
            "origin": Value("string"), "scale": Value("string"), "num_vertices": Value("int32"),
            "num_hyperedges": Value("int32"), "hypergraph": Value("string"), "hypergraph2": Value("string"),
            "params": Value("string"), "question": Value("string"), "answer": Value("string"),
            "reference": Value("string")}
    cols.update({f"text_{r}": Value("string") for r in TEXT_REPS})
    cols.update({f"image_{r}": Image() for r in VISUAL_REPS})
    return Features(cols)


def default_sources() -> tuple[str, ...]:
    from .sources import DEFAULT_SOURCES

    return tuple(DEFAULT_SOURCES[:1])


def default_fallback_sources() -> tuple[str, ...]:
    from .sources import DEFAULT_SOURCES

    return tuple(DEFAULT_SOURCES[1:])


@dataclass(frozen=True)
class BuildConfig:
    out: Path
    per_task: int = 200
    seed: int = 0
    sources: tuple[str, ...] = field(default_factory=default_sources)
    fallback_sources: tuple[str, ...] = field(default_factory=default_fallback_sources)
    tasks: tuple[str, ...] = PAPER_TASKS  # the paper's benchmark; `hypergvl build --tasks all`: task_codes()
    rows_per_shard: int = 50
    workers: int = 0  # 0: one per CPU core
    secret_seed: bool = False  # a hidden set's: never in the card or an error; the manifest is written mode 0600

    def __post_init__(self):
        if self.per_task < 1:
            raise ValueError(f"--per-task must be at least 1, got {self.per_task}")
        if self.rows_per_shard < 1:
            raise ValueError(f"rows per shard must be at least 1, got {self.rows_per_shard}")
        for t in self.tasks:
            get_task(t)
        if len(set(self.tasks)) != len(self.tasks):
            raise ValueError("a task is listed twice")
        from .sources import get_source

        if not self.sources:
            raise ValueError("at least one real source is needed (synthetic:real is 1:1)")
        for s in self.sources + self.fallback_sources:
            get_source(s)

    def settings(self) -> dict:
        """What determines the bytes of the build (not where, nor how many workers)."""
        d = asdict(self)
        d.pop("out"), d.pop("workers"), d.pop("secret_seed")
        d.update(sources=list(self.sources), fallback_sources=list(self.fallback_sources), tasks=list(self.tasks),
                 format=BUILD_FORMAT)
        return d


@dataclass(frozen=True)
class RowSpec:
    task: str
    index: int
    source: str
    scale: str
    variant: int
    real_source: str | None
    real_sources: tuple[str, ...]


def row_specs(cfg: BuildConfig, task: str) -> list[RowSpec]:
    """Rows of one task: first the synthetic half, then the real half; within each, scales cycle 1:2:1, ISM's
    Yes/No alternate within each scale, and real rows rotate over ``sources`` in blocks of one scale cycle; a
    source that cannot serve a row hands it to the next source, then to ``fallback_sources``."""
    n_syn = (cfg.per_task + 1) // 2
    chain = cfg.sources + tuple(f for f in cfg.fallback_sources if f not in cfg.sources)
    specs = []
    for i in range(cfg.per_task):
        real = i >= n_syn
        j = i - n_syn if real else i
        specs.append(RowSpec(task, i, "real" if real else "synthetic", SCALE_PATTERN[j % 4], (j % 4 + j // 4) % 2,
                             cfg.sources[(j // 4) % len(cfg.sources)] if real else None, chain))
    return specs


@dataclass(frozen=True)
class Shard:
    task: str
    number: int
    total: int
    rows: tuple[RowSpec, ...]

    @property
    def relpath(self) -> str:
        return f"data/{config_name(self.task)}/test-{self.number:05d}-of-{self.total:05d}.parquet"


def plan(cfg: BuildConfig) -> list[Shard]:
    shards = []
    for task in cfg.tasks:
        specs = row_specs(cfg, task)
        total = -(-len(specs) // cfg.rows_per_shard)
        for k in range(total):
            shards.append(Shard(task, k, total, tuple(specs[k * cfg.rows_per_shard:(k + 1) * cfg.rows_per_shard])))
    return shards


def build_row(seed: int, spec: RowSpec) -> dict:
    """One complete row: the meta problem, a text per registered text representation and an image (PNG bytes) per
    registered renderer."""
    row = generate_problem(spec.task, seed, spec.scale, spec.source, index=spec.index,
                           real_source=spec.real_source, variant=spec.variant, real_sources=spec.real_sources)
    h = Hypergraph.from_json(row["hypergraph"])
    h2 = Hypergraph.from_json(row["hypergraph2"]) if row["hypergraph2"] else None
    for rep in VISUAL_REPS:
        row[f"image_{rep}"] = {"bytes": render(rep, h, h2), "path": None}
    return row


def _write_shard(args: tuple[str, int, Shard]) -> tuple[str, int]:
    """Worker: build a shard's rows and write them to a temporary file, then rename it into place."""
    # lazy: pyarrow 0.7 s; 'hypergvl --help' imports this module, only writing a build needs it
    import pyarrow as pa
    import pyarrow.parquet as pq

    out, seed, shard = args
    final = Path(out) / shard.relpath
    final.parent.mkdir(parents=True, exist_ok=True)
    feats = features()
    rows = [build_row(seed, spec) for spec in shard.rows]
    table = pa.Table.from_pylist(rows, schema=feats.arrow_schema)
    with atomic_path(final) as tmp:
        pq.write_table(table, tmp, compression="zstd", row_group_size=len(rows))
    return shard.relpath, len(rows)


def _check_out(cfg: BuildConfig) -> None:
    out = cfg.out
    manifest = out / MANIFEST
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not manifest.exists():
            raise UserError(f"--out {out} is a non-empty folder that is not a HyperGVL build; choose another")
        previous = json.loads(manifest.read_text())
        if previous != cfg.settings():
            shown = "" if cfg.secret_seed else f" ({previous})"
            raise UserError(f"--out {out} holds a build with other settings{shown}; use another folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_json(manifest, cfg.settings(), sort_keys=True, mode=0o600 if cfg.secret_seed else None)
    except OSError as exc:
        raise UserError(f"cannot write to {out}: {exc.strerror or exc}") from None
    for stale in out.glob("data/*/.*.tmp-*"):
        stale.unlink()


def _preflight_sources(cfg: BuildConfig) -> None:
    from .sources import load_source

    for name in cfg.sources + cfg.fallback_sources:
        try:
            load_source(name)
        except Exception as exc:  # noqa: BLE001 - any failure to read a source is the user's to fix
            raise UserError(f"real source {name!r} is not available: {exc}") from None


def build(cfg: BuildConfig, progress: bool = True) -> Path:
    """Build (or finish building) the benchmark under ``cfg.out``; returns the card's path."""
    from tqdm.auto import tqdm

    _check_out(cfg)
    _preflight_sources(cfg)
    shards = plan(cfg)
    todo = [s for s in shards if not (cfg.out / s.relpath).exists()]
    done_rows = sum(len(s.rows) for s in shards) - sum(len(s.rows) for s in todo)
    # slow tasks first so the pool drains evenly
    todo.sort(key=lambda s: (s.task not in ("ISM", "HHM", "SHC", "3-CL"), s.task, s.number))
    workers = cfg.workers or os.cpu_count() or 1
    bar = tqdm(total=sum(len(s.rows) for s in shards), initial=done_rows, unit="row", desc="hypergvl build",
               disable=None if progress else True)
    jobs = [(str(cfg.out), cfg.seed, s) for s in todo]
    try:
        if workers == 1 or len(jobs) <= 1:
            for job in jobs:
                bar.update(_write_shard(job)[1])
        else:
            import multiprocessing as mp

            ctx = mp.get_context("fork" if sys.platform == "linux" else "spawn")
            with ctx.Pool(min(workers, len(jobs))) as pool:
                for _, n in pool.imap_unordered(_write_shard, jobs):
                    bar.update(n)
    except RuntimeError as exc:  # e.g. no real source can serve a task at a scale
        raise UserError(f"{exc} (finished shards are kept; rerun with other --sources to continue)") from None
    finally:
        bar.close()
    card = cfg.out / "README.md"
    write_text(card, dataset_card(cfg, shards))
    return card


# --------------------------------------------------------------------------------------------------- card
def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def statistics(out: Path, shards: Sequence[Shard]) -> list[dict]:
    # lazy: pyarrow 0.7 s; 'hypergvl --help' imports this module, only writing a build needs it
    import pyarrow.parquet as pq

    counts: dict[tuple, int] = {}
    for s in shards:
        t = pq.read_table(out / s.relpath, columns=["task", "source", "scale", "origin"]).to_pylist()
        for r in t:
            key = (r["task"], r["source"], r["scale"], r["origin"])
            counts[key] = counts.get(key, 0) + 1
    return [dict(zip(("task", "source", "scale", "origin"), k), rows=v) for k, v in sorted(counts.items())]


def dataset_card(cfg: BuildConfig, shards: Sequence[Shard]) -> str:
    from .sources import get_source

    configs = [{"config_name": "all", "default": True,
                "data_files": [{"split": "test", "path": "data/*/test-*.parquet"}]}]
    configs += [{"config_name": config_name(t), "data_files": [{"split": "test", "path": f"data/{config_name(t)}/test-*.parquet"}]}
                for t in cfg.tasks]
    import yaml

    from .sources import SOURCES

    n_rows = sum(len(s.rows) for s in shards)
    per_row = len(TEXT_REPS) * len(VISUAL_REPS)
    extra = [t for t in cfg.tasks if t not in PAPER_TASKS]
    stats = statistics(cfg.out, shards)
    used = {r["origin"] for r in stats} & set(SOURCES)
    share_alike = sorted(o for o in used if "NC-SA" in get_source(o).licence)
    licence = "cc-by-nc-sa-4.0" if share_alike else "cc-by-4.0"
    front = {"license": licence, "language": ["en"], "pretty_name": "HyperGVL",
             "task_categories": ["visual-question-answering"], "tags": ["hypergraph", "benchmark", "graph-reasoning"],
             "size_categories": ["1K<n<10K" if n_rows >= 1000 else "n<1K"], "configs": configs}
    by = {}
    for r in stats:
        key = (r["task"], r["source"])
        by.setdefault(key, {"small": 0, "medium": 0, "large": 0})[r["scale"]] += r["rows"]
    origins = {}
    for r in stats:
        origins[r["origin"]] = origins.get(r["origin"], 0) + r["rows"]
    lines = ["---", yaml.safe_dump(front, sort_keys=False).strip(), "---", "",
             "# HyperGVL: hypergraph understanding and reasoning for vision-language models", "",
             f"{n_rows} meta problems over {len(cfg.tasks)} tasks; each has {len(TEXT_REPS)} textual and "
             f"{len(VISUAL_REPS)} visual representations, i.e. {per_row * n_rows} vision-language QA samples (`hypergvl.expand`). Built by `hypergvl build` "
             + ("with a secret seed" if cfg.secret_seed else f"with seed {cfg.seed}") + f", {cfg.per_task} problems per task, real sources {', '.join(cfg.sources)}"
             + (f" (falling back to {', '.join(cfg.fallback_sources)})" if cfg.fallback_sources else "") + ".", "",
             "## Loading", "", "```python", "from datasets import load_dataset",
             'ds = load_dataset("hypergvl", split="test")             # all tasks (from this folder\'s parent, or a Hub id)',
             'osp = load_dataset("hypergvl", "osp", split="test")     # one task: ' + ", ".join(config_name(t) for t in cfg.tasks),
             "from hypergvl import expand",
             f"vqa = expand(ds)                                         # {per_row} QA samples per row, lazily", "```", "",
             "## Row schema", "",
             "| column | meaning |", "| --- | --- |",
             "| `id` | `<TASK>-<5 digits>`, unique |", "| `task`, `level` | paper code (VC HEC Ne DVC OEC ONe OSP OMF ISM 3-CL SHC HHM) and level 1-4 |" if not extra else
             f"| `task`, `level` | paper code (VC HEC Ne DVC OEC ONe OSP OMF ISM 3-CL SHC HHM) or a task beyond the paper "
             f"({' '.join(extra)}); level 1-4 |",
             "| `source`, `origin` | `synthetic`/`real`; generator or real source name |",
             "| `scale` | small (5-10 vertices), medium (11-15), large (16-20) |",
             "| `hypergraph`, `hypergraph2` | JSON `{\"num_vertices\": n, \"hyperedges\": [[...], ...]}`; `hypergraph2` is ISM's G, else empty |",
             "| `params` | task parameters (Ne `vertex`; DVC `degree`; OEC `order`; ONe `vertex`, `min_order`; OSP/OMF/HHM `source`, `target`) |",
             "| `question`, `answer` | appendix E.2 question; canonical answer (one valid plan for 3-CL/SHC/HHM) |",
             "| `reference` | JSON the `hypergvl_accuracy` metric needs to verify any answer |",
             f"| `text_*` | {', '.join(text_labels().values())} (appendix E.1 wording) |",
             f"| `image_*` | {', '.join(visual_labels().values())} (appendix D.1), 1400x1100 PNG at 150 DPI; ISM shows H and G side by side |",
             "", "## Task definitions made exact", "",
             "- **OSP**: a path is a sequence of hyperedges, consecutive ones sharing a vertex, the first containing the source and the last the target; its length is the sum of the orders of its hyperedges; \"No path\" when none exists.",
             "- **OMF**: the bipartite incidence network of appendix C.2, capacity |e| on every vertex-hyperedge arc, both ways.",
             "- **SHC**: as the question (appendix E.2) and appendix C define it: k >= 2 distinct hyperedges, consecutive ones and the last with the first sharing exactly one vertex; nothing else is required (the generators still plant longer cycles).",
             "- **HHM**: as the question defines it (a path visiting all vertices exactly once, listed as hyperedges): n-1 hyperedges e1..e(n-1) for which an ordering v1=s..vn=t of all vertices exists with {vi, vi+1} in ei; a hyperedge may serve two steps.",
             "- **3-CL**: every vertex gets one of c0, c1, c2 and every hyperedge sees at least two colours; instances have no order-1 hyperedge.",
             "- **ISM**: balanced Yes/No; No-instances keep the vertex count, hyperedge count and order multiset of H.",
             "- **ONe**: appendix E.2 prints the threshold garbled; the question reads `order >= k`, k drawn from the orders >= 2 at the vertex.",
             "- **DVC / OEC**: the degree (order) is that of a uniformly drawn vertex (hyperedge), i.e. drawn from the existing distribution.",
             "- **Scales**: the paper's overlapping ranges (5-10, 10-15, 15-20) are made disjoint: 5-10, 11-15, 16-20.",
             "- **Synthetic density**: |E| in [0.2|V|, 1.5|V|]; HHM draws |E| >= |V|-1 (its planted path uses |V|-1 distinct hyperedges).",
             f"- **Grading**: `hypergvl_accuracy` scorer version {SCORER_VERSION}: an answer is correct exactly when a careful human grader would say it answers the question as the model read it (the rules are in the metric card).",
             "", "## Construction", "",
             "Synthetic rows (appendix B.1): random connected hypergraphs built hyperedge by hyperedge; planted constructors for "
             "3-CL (pre-assigned colour classes), SHC (an explicit strict hypercycle) and HHM (a vertex permutation backbone). "
             "Real rows (B.2): a random walk over incident hyperedges from a seed vertex keeps visited vertices up to the target "
             "size; the induced sub-hypergraph (order-0 and duplicate hyperedges removed) is re-indexed canonically; sampling "
             "repeats until the task's requirement holds (a solution exists for 3-CL/SHC/HHM). Every row is a pure function of "
             "(seed, task, row index).", "",
             "Real sources used here:", ""]
    for name in dict.fromkeys(cfg.sources + cfg.fallback_sources):
        spec = get_source(name)
        lines.append(f"- `{spec.origin}` ({spec.domain}): {spec.description} Licence: {spec.licence}. {spec.citation}")
    lines += ["", "The paper's sources are PubMed co-authorship and M-CSA catalytic sites. M-CSA has no public flat file "
              "reachable offline and is left out; co-authorship comes from HyperGCN's Cora/DBLP files when available.", "",
              "## Statistics", "", "| task | source | small | medium | large | total |", "| --- | --- | --- | --- | --- | --- |"]
    for (task, source), c in sorted(by.items(), key=lambda kv: (list(TASKS).index(kv[0][0]), kv[0][1])):
        lines.append(f"| {task} | {source} | {c['small']} | {c['medium']} | {c['large']} | {sum(c.values())} |")
    lines += ["", "| origin | rows |", "| --- | --- |"] + [f"| {o} | {n} |" for o, n in sorted(origins.items())]
    lines += ["", "## Files", "", "| file | sha256 |", "| --- | --- |"]
    lines += [f"| `{s.relpath}` | `{_sha256(cfg.out / s.relpath)}` |" for s in shards]
    lines += ["", "## Licence", "",
              f"The generated problems, texts and images are released under {licence.upper().replace('-4.0', ' 4.0')}. "
              "Rows with `source = real` are derived from the public hypergraphs listed above, under their own licences"
              + (f"; rows from {', '.join(share_alike)} (non-commercial, share-alike) make the whole dataset "
                 "CC BY-NC-SA 4.0." if share_alike else "."), "",
              "## Citation", "", "```bibtex", "@article{wei2026hypergvl,",
              "  title   = {HyperGVL: Benchmarking and Improving Large Vision-Language Models in Hypergraph Understanding and Reasoning},",
              "  author  = {Wei, Yanbin and Kang, Chun and Li, Siwei and Che, Haoxuan and Chen, Yang and Liu, Hua and Liu, Jian and Liu, Zhuang and Ouyang, Can and Xing, Fei and Sha, Lei and Liu, Rui and Zhang, Yu and Kwok, James},",
              "  journal = {arXiv preprint arXiv:2604.15648},", "  year    = {2026}", "}", "```", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ commands
def _build_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=Path("hypergvl"), help="output folder (default: hypergvl)")
    p.add_argument("--per-task", type=int, default=200, help="meta problems per task (default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=0, help="worker processes (default: one per core)")
    p.add_argument("--sources", nargs="+", default=None, metavar="NAME",
                   help="real sources the real rows rotate over (default: walmart-trips)")
    p.add_argument("--fallback-sources", nargs="*", default=None, metavar="NAME",
                   help="sources for real rows the main ones cannot serve (default: contacts-workplace)")
    p.add_argument("--tasks", nargs="+", default=None, metavar="CODE",
                   help="task codes, or `all` for every registered task (default: the paper's twelve)")
    p.add_argument("--rows-per-shard", type=int, default=50)
    p.add_argument("--no-progress", action="store_true")


@command("build", _build_args)
def _build(args: argparse.Namespace) -> int:
    """Build the benchmark as a Hugging Face dataset folder."""
    kwargs = {}
    if args.sources:
        kwargs["sources"] = tuple(args.sources)
    if args.fallback_sources is not None:
        kwargs["fallback_sources"] = tuple(args.fallback_sources)
    if args.tasks:
        kwargs["tasks"] = task_codes() if args.tasks == ["all"] else tuple(args.tasks)
    cfg = BuildConfig(out=args.out, per_task=args.per_task, seed=args.seed, workers=args.workers,
                      rows_per_shard=args.rows_per_shard, **kwargs)
    card = build(cfg, progress=not args.no_progress)
    print(f"built {len(cfg.tasks) * cfg.per_task} meta problems into {cfg.out} ({card.name} written last)")
    print(f'load it from {cfg.out.resolve().parent}: load_dataset("{cfg.out.name}", split="test")')
    return 0


def _push_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("folder", type=Path, help="a finished build folder")
    p.add_argument("--repo-id", required=True, help="ORG/NAME on the Hub")
    p.add_argument("--private", action="store_true")


@command("push", _push_args)
def _push(args: argparse.Namespace) -> int:
    """Upload a finished build folder to a Hub dataset repository."""
    push_folder(args.folder, args.repo_id, private=args.private, kind="dataset")
    return 0


def push_folder(folder: Path, repo_id: str, *, private: bool = False, kind: str = "dataset") -> str:
    """Upload ``folder`` with huggingface_hub (token from HF_TOKEN or the saved login); clear errors offline."""
    # lazy: huggingface_hub 0.23 s; 'hypergvl --help' imports this module, only a push needs it
    import huggingface_hub
    from huggingface_hub import constants

    if not (folder / "README.md").is_file():
        raise UserError(f"{folder} is not a finished build (no README.md card); run `hypergvl build` first")
    if "/" not in repo_id or repo_id.count("/") != 1:
        raise UserError(f"--repo-id must look like ORG/NAME, got {repo_id!r}")
    if constants.HF_HUB_OFFLINE:
        raise UserError("the Hugging Face Hub is unreachable: HF_HUB_OFFLINE is set; unset it to push")
    api = huggingface_hub.HfApi()
    try:
        api.create_repo(repo_id, repo_type=kind, private=private, exist_ok=True)
        info = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type=kind,
                                 commit_message="Upload HyperGVL build")
    except Exception as exc:  # noqa: BLE001 - network/auth failures all mean the same to the user
        raise UserError(f"upload to {repo_id} failed: {type(exc).__name__}: {exc}") from None
    print(f"pushed {folder} to {info}")
    return str(info)
