"""hypergvl datasets: list the DHG-Bench datasets, or build one as a Hub dataset repository.

    hypergvl datasets list
    hypergvl datasets build cora --out out/dhgbench-cora --raw-root ../shared/data [--push ORG/NAME]

(This module lives beside the dataset package, not in it: importing anything inside the package imports torch.)
Errors a user can cause (unknown name, missing raw file, existing output, offline push) print one line and
exit with status 2; an existing output folder is never overwritten without ``--overwrite``. ``list``, ``--help``
and a name refusal read :mod:`hypergvl.models.names` and import no torch.
"""
from __future__ import annotations

import argparse
import json
import logging
import pickle
import sys

from hypergvl.cli import Parser
from hypergvl.models import names

# imports inside functions: the dataset package (torch and PyG, 5-30 s) loads only for ``build``, once the name is good
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
    parser = Parser(prog="hypergvl datasets", description=__doc__.split("\n\n(This")[0])
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
    if args.command == "list":
        for name, spec in names.DATASETS.items():
            print(f"{name:16s} {spec['level']:5s} {spec['source']:22s} {', '.join(spec['tasks'])}")
        return 0
    if args.name.lower() not in names.DATASETS:
        print(f"error: {names.unknown_name('dataset', args.name, list(names.DATASETS))}", file=sys.stderr)
        return 2
    if error := (names.option_error(args.name, [k for k, _ in args.option])
                 or names.dataset_error(args.name, args.raw_root)):
        print(f"error: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, format="%(message)s")  # libraries' INFO lines stay out
    logging.getLogger("hypergvl").setLevel(logging.INFO)
    from hypergvl.models.datasets import build, get_spec
    from hypergvl.models.datasets.hub import push

    try:
        spec = get_spec(args.name)
        out = build(spec.name, args.out, args.raw_root, features=args.features, overwrite=args.overwrite,
                    **dict(args.option))
        log.info("wrote %s", out)
    except KeyError as err:
        print(f"error: {err.args[0]}", file=sys.stderr)
        return 2
    except (ValueError, OSError, pickle.UnpicklingError) as err:  # FileNotFoundError, FileExistsError are OSError
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.push:  # the build is kept whatever happens here; a failed upload is not a usage error: status 1
        try:
            log.info("pushed %s", push(out, args.push))
        except (ValueError, OSError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
