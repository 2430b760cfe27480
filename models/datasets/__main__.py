"""Command line: ``hypergvl datasets {list,build}``.

    hypergvl datasets list
    hypergvl datasets build cora --out out/dhgbench-cora --raw-root ../shared/data [--push ORG/NAME]

Errors a user can cause (unknown name, missing raw file, existing output, offline push) print one line and
exit with status 1; an existing output folder is never overwritten without ``--overwrite``.
"""
from __future__ import annotations

import argparse
import json
import logging
import pickle
import sys

from . import DATASETS, build, get_spec
from .hub import push

log = logging.getLogger("hypergvl.models.datasets")


def _parse_option(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--option takes KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        raise argparse.ArgumentTypeError(f"--option {key}: value must be a JSON number/string, got {value!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hypergvl datasets", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the registered datasets")
    b = sub.add_parser("build", help="write a Hub dataset repository (parquet + README card)")
    b.add_argument("name", help="registered dataset name (see 'list')")
    b.add_argument("--out", required=True, help="output folder of the repository")
    b.add_argument("--raw-root", default=None, help="local folder laid out like ../shared/data "
                                                    "(default: $HYPERGVL_RAW_ROOT, else upstream URLs)")
    b.add_argument("--features", choices=("raw", "none"), default="raw",
                   help="'none' builds a structure-only repository (for sets whose feature file is missing)")
    b.add_argument("--option", action="append", type=_parse_option, default=[], metavar="KEY=VALUE",
                   help="dataset-specific option, e.g. --option seed=1 for Walmart's feature noise")
    b.add_argument("--overwrite", action="store_true", help="replace a non-empty --out folder")
    b.add_argument("--push", metavar="ORG/NAME", default=None, help="upload the repository to the Hub")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    if args.command == "list":
        for name, spec in DATASETS.items():
            print(f"{name:16s} {spec.level:5s} {spec.source.name:22s} {', '.join(spec.tasks)}")
        return 0
    try:
        spec = get_spec(args.name)
        out = build(spec.name, args.out, args.raw_root, features=args.features, overwrite=args.overwrite,
                    **dict(args.option))
        log.info("wrote %s", out)
        if args.push:
            log.info("pushed %s", push(out, args.push))
    except KeyError as err:
        print(f"error: {err.args[0]}", file=sys.stderr)
        return 1
    except (ValueError, OSError, pickle.UnpicklingError) as err:  # FileNotFoundError, FileExistsError are OSError
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
