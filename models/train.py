"""``hypergvl train``: train and evaluate a hypergraph neural network on one DHG-Bench task (the loop is
:mod:`hypergvl.models.trainer`).

Usage::

    hypergvl train --model HGNN --dataset cora --task node --runs 5 --out DIR \\
        [--config FILE] [--set key=value ...] [--raw-root DIR] [--resume]
    accelerate launch -m hypergvl.models.train ...            # the same, with accelerate choosing the device

The arguments are parsed and the model, task and dataset names, the ``--set`` keys and the raw data's place
checked before the trainer loads: importing it loads torch, torch_geometric and the model zoo (5-6 s on the
development machine, 15-60 s on a busy one), which a mistyped name should not cost. The names come from
:mod:`hypergvl.models.names`, a table written from the registries (a test checks it equals them).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

from hypergvl.cli import Parser, releases_process_group
from hypergvl.models import names


def name_error(args: argparse.Namespace) -> str | None:
    """Why the model, task, dataset, ``--set`` keys and value types or raw data cannot be trained (one line), or
    None. Value ranges and the config file are checked by the trainer's config."""
    if args.model not in names.MODELS:
        return names.unknown_name("model", args.model, list(names.MODELS))
    if args.task not in names.TASKS:
        return names.unknown_name("task", args.task, list(names.TASKS))
    return (names.set_key_error(args.overrides, args.model, args.task)
            or names.dataset_error(args.dataset, args.raw_root, args.task))


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="hypergvl train", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="a name in hypergvl.models.nn.MODELS, e.g. HGNN")
    p.add_argument("--dataset", required=True, help="a dataset of hypergvl datasets list, e.g. cora")
    p.add_argument("--task", required=True,
                   help=f"one of: {', '.join(sorted(names.TASKS))}")
    p.add_argument("--runs", type=int, default=None,
                   help="number of seeds, 0..runs-1 (default 5, or the runs of --set protocol=NAME)")
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument("--config", type=Path, default=None,
                   help="YAML config file (default: models/configs/<MODEL>.yaml when it exists)")
    p.add_argument("--set", dest="overrides", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                   help="override a configuration key (wins over the config file)")
    p.add_argument("--raw-root", default=None, help="local folder with the raw data, laid out like ../shared/data "
                                                    "(default: $HYPERGVL_RAW_ROOT, else the upstream URLs)")
    p.add_argument("--resume", action="store_true", help="continue the runs recorded in --out")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return p


@releases_process_group
def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if (error := name_error(args)) is not None:
        print(f"error: {error}", file=sys.stderr)
        return 2
    from hypergvl.models.trainer import run_cli  # torch, the model zoo (2-5 s): once the names are good

    return run_cli(args)


if __name__ == "__main__":
    sys.exit(main())
