"""The ``hypergvl`` command line. Subcommands register themselves with :func:`command`."""
from __future__ import annotations

import argparse
import difflib
import functools
import json
import sys
from typing import Any, Callable, NamedTuple

from .registry import Registry


class Command(NamedTuple):
    """A subcommand: parsed here (``configure`` adds its flags, ``run`` gets the parsed arguments), or delegated to
    modules that parse their own (``targets``: sub-name, or "" for none, to module; see :func:`delegate`)."""

    summary: str
    configure: Callable[[argparse.ArgumentParser], None] | None = None
    run: Callable[[argparse.Namespace], int] | None = None
    targets: dict[str, str] | None = None


# imports inside functions: every layer imports this module for its registry (hypergvl train's fast refusals too),
# so the task registry and generators (networkx, 0.4 s) load with the command that uses them.
COMMANDS: Registry[Command] = Registry("command")


class UserError(Exception):
    """An error the user caused (bad flag value, bad file): printed as one line, exit status 2."""


def did_you_mean(name: str, choices, n: int = 3) -> str:
    """`` (did you mean X or Y?)`` for the nearest of ``choices`` to ``name`` by :mod:`difflib`, or ``""``."""
    close = difflib.get_close_matches(name, list(choices), n=n, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


class Parser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose errors name a mistyped flag first, with the nearest flags
    (``--modle``: "unknown flag --modle (did you mean --model?)", where argparse says only "required: --model"),
    and whose help keeps the description's line breaks (a docstring reads as written). Errors exit with status 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)
        self._seen: list[str] = []

    def parse_known_args(self, args=None, namespace=None):
        self._seen = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def _flags(self) -> list[str]:
        """This parser's long flags and those of its subcommands' parsers."""
        flags = [f for f in self._option_string_actions if f.startswith("--")]
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    flags += [f for f in sub._option_string_actions if f.startswith("--")]
        return sorted(set(flags))

    def error(self, message: str):
        flags = self._flags()
        for token in self._seen:
            if token == "--":
                break
            flag = token.split("=", 1)[0]
            if flag.startswith("--") and flag not in flags and not any(f.startswith(flag) for f in flags):
                message = f"unknown flag {flag}{did_you_mean(flag, flags)}"
                break
        super().error(message)


def command(name: str, configure: Callable[[argparse.ArgumentParser], None]):
    def deco(run: Callable[[argparse.Namespace], int]):
        COMMANDS.register(name, Command((run.__doc__ or "").strip().splitlines()[0], configure, run))
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


# ------------------------------------------------------------------------------------ delegated commands


def delegate(name: str, summary: str, target: str | dict[str, str]) -> None:
    """Register ``hypergvl NAME [ARGS...]`` as the ``main(argv)`` of the module ``target``, or ``hypergvl NAME
    SUB [ARGS...]`` of ``target[SUB]`` for a group of commands. The module is imported only when
    the command runs and parses its own flags, so ``hypergvl NAME --help`` is its help; ``python -m MODULE`` stays
    an alias."""
    COMMANDS.register(name, Command(summary, targets={"": target} if isinstance(target, str) else dict(target)))


def _run_delegated(name: str, argv: list[str]) -> int:
    import importlib

    summary, targets = COMMANDS[name].summary, COMMANDS[name].targets
    if "" in targets:
        module, rest = targets[""], argv
    else:
        usage = f"usage: hypergvl {name} {{{','.join(targets)}}} [ARGS ...]"
        if not argv or argv[0] in ("-h", "--help"):
            print(f"{usage}\n\n{summary}\n\n" + "\n".join(
                f"  hypergvl {name} {sub:<9} python -m {mod}" for sub, mod in targets.items())
                + f"\n\nEach command's own flags: hypergvl {name} SUB --help", file=sys.stdout if argv else sys.stderr)
            return 0 if argv else 2
        if argv[0] not in targets:
            print(f"{usage}\nhypergvl {name}: error: unknown command {argv[0]!r} (choose from {', '.join(targets)})",
                  file=sys.stderr)
            return 2
        module, rest = targets[argv[0]], argv[1:]
    return int(importlib.import_module(module).main(list(rest)) or 0)


delegate("demo", "Build a small benchmark, score the two baselines on it, print the report (make demo).",
         "hypergvl.demo")

ENTRY_POINT_GROUP = "hypergvl.commands"
CORE_COMMANDS = ("hypergvl.builder", "hypergvl.questions")  # this layer's own


def _load_plugins(name: str | None = None) -> None:
    """Import the modules that register subcommands: this package's own, then every module named in the
    ``hypergvl.commands`` entry-point group (``pyproject.toml``), so the layers above register themselves and this
    package names none of them. An entry point's name is its command; a module that fails to register it is an
    error. With ``name`` an entry point's, only its module: running one command (or refusing its arguments) needs
    none of the others (0.3-1 s of imports: the task generators, the adapters, ...)."""
    import importlib
    from importlib.metadata import entry_points

    eps = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
    if name is not None and name not in COMMANDS and (own := [ep for ep in eps if ep.name == name]):
        eps = own
    else:
        for mod in CORE_COMMANDS:
            importlib.import_module(mod)
    for ep in eps:
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
    argv = list(sys.argv[1:] if argv is None else argv)
    _load_plugins(argv[0] if argv else None)
    if argv and argv[0] in COMMANDS and COMMANDS[argv[0]].targets:
        return _run_delegated(argv[0], argv[1:])
    if argv and argv[0] not in COMMANDS:
        _load_plugins()  # a mistyped command: argparse lists every command
    parser = Parser(prog="hypergvl", description="HyperGVL benchmark tools")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, cmd in COMMANDS.items():
        p = sub.add_parser(name, help=cmd.summary, add_help=cmd.targets is None)
        if cmd.targets is None:
            cmd.configure(p)
            p.set_defaults(_run=cmd.run)
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
    from hypergvl.cli import main as _main

    sys.exit(_main())
