"""``hypergvl train``: train and evaluate a hypergraph neural network on one DHG-Bench task (the loop is
:mod:`hypergvl.models.trainer`).

Usage::

    hypergvl train --model HGNN --dataset cora --task node --runs 5 --out DIR \\
        [--config FILE] [--set key=value ...] [--raw-root DIR] [--resume]
    accelerate launch -m hypergvl.models.train ...            # the same, with accelerate choosing the device

The arguments are parsed and the model and task names checked before the trainer loads: importing it
loads torch, torch_geometric and the model zoo (5-6 s on the development machine), which a mistyped name should
not cost. The model and task names are read from their ``@register_model("NAME")`` / ``@register_task("NAME")``
decorators in the package's sources (a test checks that they are exactly the registries' names).
"""
from __future__ import annotations

import argparse
import difflib
import functools
import re
import sys
from pathlib import Path
from typing import Optional, Sequence

from hypergvl.cli import releases_process_group

HERE = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=None)
def registered_names(folder: Path, decorator: str) -> list[str]:
    """The names the modules of ``folder`` register with ``@<decorator>("NAME"...)``, read from their sources (once a
    process: the parser's help and the check both ask)."""
    pattern = re.compile(rf'^@{decorator}\("([^"]+)"[,)]', re.MULTILINE)
    return [name for path in sorted(folder.glob("*.py")) for name in pattern.findall(path.read_text("utf-8"))]


def unknown_name(kind: str, name: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6) or [
        c for c in choices if c.lower() == name.lower()]
    hint = f"did you mean {close[0]}? " if close else ""
    return f"unknown {kind} {name!r}; {hint}choose one of {', '.join(choices)}"


def name_error(args: argparse.Namespace) -> str | None:
    """Why the model or task name cannot be trained (one line), or None. (Dataset names are checked by the
    trainer: the dataset registry is filled by modules that load torch.)"""
    models = registered_names(HERE / "nn", "register_model")
    if args.model not in models:
        return unknown_name("model", args.model, models)
    tasks = registered_names(HERE / "tasks", "register_task")
    if args.task not in tasks:
        return unknown_name("task", args.task, tasks)
    return None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hypergvl train", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="a name in hypergvl.models.nn.MODELS, e.g. HGNN")
    p.add_argument("--dataset", required=True, help="a dataset of hypergvl datasets list, e.g. cora")
    p.add_argument("--task", required=True,
                   help=f"one of: {', '.join(sorted(registered_names(HERE / 'tasks', 'register_task')))}")
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
