"""Command line of :mod:`hypergvl.models.study` (see its docstring for the commands and the result schema)."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from hypergvl.cli import Parser
from hypergvl.models import names
from hypergvl.models.study import EFFICIENCY_DATASETS, FAIRNESS_DATASETS
from hypergvl.provenance import pin

# imports inside functions: the studies' modules, the trainer and ConfigError (torch, PyG: 5-8 s) load once the
# names are good. The parser and the name check read the models, perturbations and datasets from
# hypergvl.models.names (as ``hypergvl train`` does, tested to equal the registries), so a typo or ``--help`` costs
# none of it, and no progress bar starts before they are checked.


def _common(p: argparse.ArgumentParser, runs: int) -> None:
    p.add_argument("--models", nargs="+", default=None, help="registered model names (default: all of them)")
    p.add_argument("--runs", type=int, default=runs, help=f"seeds 0..runs-1 (default {runs})")
    p.add_argument("--out", type=Path, required=True, help="result folder (resumable)")
    p.add_argument("--set", dest="overrides", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                   help="trainer/task/model configuration overrides, as in hypergvl train")
    p.add_argument("--raw-root", default=None, help="raw data folder (default: $HYPERGVL_RAW_ROOT)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _seeds(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seeds", nargs="+", type=int, default=None, metavar="SEED",
                   help="train only these seeds of each cell (default 0..runs-1): one cell's seeds split over "
                        "processes or machines, each writing its points to the same --out")


def build_parser() -> argparse.ArgumentParser:
    kinds = list(names.PERTURBATIONS)
    p = Parser(prog="hypergvl study",
                                description="DHG-Bench robustness, fairness and efficiency studies, and their report")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("robustness", help="accuracy under perturbations (RQ3, Figures 2-4)")
    _common(r, 5)
    _seeds(r)
    r.add_argument("--datasets", nargs="+", required=True, help="node-classification datasets, e.g. cora")
    r.add_argument("--kinds", nargs="+", default=kinds, choices=kinds,
                   help="perturbation kinds (default: all six)")
    r.add_argument("--ratios", nargs="+", type=float, default=None,
                   help="ratios for every kind (default: each kind's grid of appendix B.4)")
    r.add_argument("--perturb-self-loops", action="store_true",
                   help="perturb the node-classification singletons too, as the reference does")
    r.add_argument("--mask-by", choices=("column", "entry"), default="column",
                   help="feature masking by whole columns (the reference) or by entries")
    f = sub.add_parser("fairness", help="accuracy, ΔDP, ΔEO on German, Bail, Credit (RQ4, Table A8, Figure 5)")
    _common(f, 5)
    _seeds(f)
    f.add_argument("--datasets", nargs="+", default=list(FAIRNESS_DATASETS))
    e = sub.add_parser("efficiency", help="time and memory per model in its own subprocess (RQ2, Figure 1)")
    _common(e, 1)
    e.add_argument("--datasets", nargs="+", default=list(EFFICIENCY_DATASETS))
    e.add_argument("--memory-cap-gib", type=float, default=8.0, help="memory cap per subprocess (default 8)")
    e.add_argument("--scale", type=float, default=1.0, help="size factor of the synthetic hypergraphs (0, 1]")
    e.add_argument("--timeout-s", type=float, default=None, help="give up on one model after this long")
    rep = sub.add_parser("report", help="tables and figures from result folders (no training)")
    rep.add_argument("--in", dest="inputs", nargs="+", type=Path, required=True, help="result folders")
    rep.add_argument("--out", type=Path, required=True, help="report folder")
    return p


def name_error(args: argparse.Namespace) -> str | None:
    """Why a ``--models`` or ``--datasets`` name, a ``--set`` key or the raw data cannot be studied (one line), or
    None."""
    for name in getattr(args, "models", None) or ():
        if name not in names.MODELS:
            return names.unknown_name("model", name, list(names.MODELS))
    seeds = getattr(args, "seeds", None)
    if seeds is not None and (len(set(seeds)) != len(seeds) or min(seeds) < 0):  # as the trainer says it
        return f"--seeds must be distinct integers >= 0; got {list(seeds)}"
    task = "node" if args.command in ("robustness", "fairness") else None
    models = getattr(args, "models", None) or list(names.MODELS)
    for item in args.overrides if task else ():  # a key of any of the models studied (the others refuse it per cell)
        errors = [names.set_key_error([item], model, task) for model in models]
        if all(errors):
            return errors[0] if len(models) == 1 else errors[0].split(" (model ")[0] + f" (any of {len(models)} " \
                "models, task node)"
    if args.command in ("robustness", "fairness"):
        for name in args.datasets:
            if error := names.dataset_error(name, args.raw_root, task):
                return error
    return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if (error := name_error(args)) is not None:
        print(f"error: {error}", file=sys.stderr)
        return 2
    pin()  # the commit and dirty flag of the code this run loads, whenever its points are written
    import torch  # lazy: torch, the config and the model zoo 2-5 s; only once the names are good

    from hypergvl.models.config import ConfigError

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("accelerate").setLevel(logging.ERROR)
    t0 = time.perf_counter()
    try:
        if args.command == "report":
            from .report import build

            written = build(args.inputs, args.out)
            for name in written.values():
                print(name)
            return 0
        if args.runs < 1:
            raise ConfigError(f"--runs must be >= 1; got {args.runs}")
        torch.set_num_threads(args.threads)
        progress = not args.no_progress
        if args.command == "robustness":
            from .robustness import run

            points = run(args.models, args.datasets, args.kinds, args.out, ratios=args.ratios, runs=args.runs,
                         overrides=args.overrides, raw_root=args.raw_root, perturb_self_loops=args.perturb_self_loops,
                         mask_by=args.mask_by, progress=progress, seeds=args.seeds)
        elif args.command == "fairness":
            from .fairness import run

            points = run(args.models, args.out, datasets=args.datasets, runs=args.runs, overrides=args.overrides,
                         raw_root=args.raw_root, progress=progress, seeds=args.seeds)
        else:
            from .efficiency import run

            points = run(args.models, args.out, datasets=args.datasets, runs=args.runs, overrides=args.overrides,
                         raw_root=args.raw_root, memory_cap_gib=args.memory_cap_gib, scale=args.scale,
                         threads=args.threads, timeout_s=args.timeout_s, progress=progress)
        from .report import build

        build([args.out / args.command], args.out / args.command / "report")
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    counts = {s: sum(p["status"] == s for p in points) for s in ("ok", "oom", "error")}
    print(f"{args.command}: {len(points)} points ({', '.join(f'{v} {k}' for k, v in counts.items())}) in "
          f"{time.perf_counter() - t0:.0f} s; report in {args.out / args.command / 'report'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
