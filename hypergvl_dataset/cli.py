"""The ``hypergvl`` command line. Subcommands register themselves with :func:`command`."""
from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Any, Callable

COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {}


class UserError(Exception):
    """An error the user caused (bad flag value, bad file): printed as one line, exit status 2."""


def command(name: str, configure: Callable[[argparse.ArgumentParser], None]):
    def deco(run: Callable[[argparse.Namespace], int]):
        if name in COMMANDS:
            raise ValueError(f"command {name!r} registered twice")
        COMMANDS[name] = (configure, run)
        return run
    return deco


# ------------------------------------------------------------------------------------------------- sample
def _sample_args(p: argparse.ArgumentParser) -> None:
    from .generators import SCALES
    from .tasks import TASKS

    p.add_argument("--task", required=True, choices=list(TASKS), metavar="CODE",
                   help=f"task code: {', '.join(TASKS)}")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--scale", choices=list(SCALES), default="small")
    p.add_argument("--source", choices=["synthetic", "real"], default="synthetic")
    p.add_argument("--json", action="store_true", help="print the row as one JSON object")


@command("sample", _sample_args)
def _sample(args: argparse.Namespace) -> int:
    """Print one meta problem (all row columns except the images)."""
    from .tasks import generate_problem

    row = generate_problem(args.task, args.seed, args.scale, args.source)
    if args.json:
        print(json.dumps(row, ensure_ascii=False))
        return 0
    width = max(map(len, row))
    for key, value in row.items():
        if key.startswith("text_") or key in ("reference",):
            continue
        print(f"{key:>{width}}: {value}")
    print("\nPrompt (N-Set):\n" + row["text_n_set"] + " " + row["question"])
    return 0


ENTRY_POINT_GROUP = "hypergvl.commands"
CORE_COMMANDS = ("hypergvl_dataset.builder", "hypergvl_dataset.questions")  # this layer's own


def _load_plugins() -> None:
    """Import the modules that register subcommands: this package's own, then every module named in the
    ``hypergvl.commands`` entry-point group (``pyproject.toml``), so the layers above register themselves and this
    package names none of them. An entry point's name is its command; a module that fails to register it is an
    error."""
    import importlib
    from importlib.metadata import entry_points

    for mod in CORE_COMMANDS:
        importlib.import_module(mod)
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.name in COMMANDS:
            continue
        try:
            importlib.import_module(ep.value)
        except ModuleNotFoundError as exc:  # a package of the distribution that is not installed here
            if not ep.value.startswith(exc.name or "\0"):
                raise
            continue
        if ep.name not in COMMANDS:
            raise RuntimeError(f"entry point {ep.name} = {ep.value} did not register a command {ep.name!r}")


def release_process_group() -> None:
    """Destroy torch.distributed's default process group if this process set one up (a rank of ``accelerate
    launch`` or ``torchrun``). Every entry point calls it before it returns: a process that leaves the group to
    interpreter exit can be aborted by gloo's threads after its work is done ("terminate called without an active
    exception", pytorch/pytorch#190489), and the launcher then fails the whole run."""
    dist = sys.modules.get("torch.distributed")  # never imports torch for a command that did not
    if dist is not None and dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def releases_process_group(entry: Callable[..., int]) -> Callable[..., int]:
    """Decorate an entry point so that it calls :func:`release_process_group` however it returns or exits."""
    @functools.wraps(entry)
    def wrapper(*args: Any, **kwargs: Any) -> int:
        try:
            return entry(*args, **kwargs)
        finally:
            release_process_group()
    return wrapper


@releases_process_group
def main(argv: list[str] | None = None) -> int:
    _load_plugins()
    parser = argparse.ArgumentParser(prog="hypergvl", description="HyperGVL benchmark tools")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (configure, run) in COMMANDS.items():
        p = sub.add_parser(name, help=(run.__doc__ or "").strip().splitlines()[0])
        configure(p)
        p.set_defaults(_run=run)
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except (UserError, ValueError, FileNotFoundError, PermissionError) as exc:
        print(f"hypergvl {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"hypergvl {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # run the importable module, so plugins register into the same COMMANDS
    from hypergvl_dataset.cli import main as _main

    sys.exit(_main())
