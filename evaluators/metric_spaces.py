"""The four metrics as Hugging Face evaluate metric Spaces: ``hypergvl push-metrics ORG``.

``evaluate.load("ORG/hypergvl_accuracy")`` downloads a Space repository holding the metric script
(``hypergvl_accuracy.py``), imports it, and checks that every module the script imports is installed. The scripts
import this package (``hypergvl.tasks``, ``hypergvl.evaluators._inputs``), so each Space declares it in its
``requirements.txt`` (the Space installs it to run its widget; a user who loads the metric needs it installed, and
evaluate's import check names it when it is not). Each Space holds:

* ``<name>.py``: the metric script, as shipped in the package;
* ``README.md``: the metric card, its front matter completed with what a Gradio Space needs (``sdk``,
  ``sdk_version``, ``app_file``);
* ``app.py``: evaluate's standard widget (``launch_gradio_widget``) over the metric loaded from the Space itself;
* ``requirements.txt``: the package (``--requirement``; default ``hypergvl==<this version>``) and evaluate.

``--out DIR`` writes the four folders instead of pushing, to look at them first; ``evaluate.load(DIR/NAME)`` loads
one from there.
"""
from __future__ import annotations

import argparse
import sys
from importlib import metadata
from pathlib import Path

from hypergvl.atomic import write_bytes
from hypergvl.cli import UserError, command

from . import METRIC_NAMES, metric_path

APP = '''import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("{repo_id}")
launch_gradio_widget(module)
'''


def default_requirement() -> str:
    """The pip requirement of this package as installed (``hypergvl==VERSION``)."""
    try:
        return f"hypergvl=={metadata.version('hypergvl')}"
    except metadata.PackageNotFoundError:
        raise UserError("hypergvl is not installed as a package here: give --requirement (a pip requirement line "
                        "that installs it, e.g. git+https://github.com/ORG/hypergvl@COMMIT)") from None


def _card(name: str) -> str:
    """The metric card with a Gradio Space's front matter (sdk, sdk_version, app_file) added once."""
    text = (Path(metric_path(name)) / "README.md").read_text(encoding="utf-8")
    head, sep, body = text[4:].partition("\n---\n")
    if not text.startswith("---\n") or not sep:
        raise ValueError(f"{name}/README.md has no YAML front matter")
    keep = [line for line in head.splitlines() if line.split(":")[0] not in ("sdk", "sdk_version", "app_file")]
    space = ["sdk: gradio", f"sdk_version: {metadata.version('gradio')}", "app_file: app.py", "pinned: false"]
    return "---\n" + "\n".join(keep + space) + "\n---\n" + body


def space_files(name: str, repo_id: str, requirement: str) -> dict[str, bytes]:
    """Path -> content of the metric Space ``repo_id`` for metric ``name``."""
    script = Path(metric_path(name)) / f"{name}.py"
    return {f"{name}.py": script.read_bytes(), "README.md": _card(name).encode(),
            "app.py": APP.format(repo_id=repo_id).encode(),
            "requirements.txt": f"{requirement}\nevaluate>={metadata.version('evaluate')}\n".encode()}


def push_metrics(org: str, names=METRIC_NAMES, *, requirement: str | None = None, api=None,
                 private: bool = False) -> list[str]:
    """Create (or update) one Space per metric under ``org``; returns the repo ids. ``api``: an ``HfApi``."""
    from huggingface_hub import CommitOperationAdd, HfApi, constants

    if not org or "/" in org:
        raise UserError(f"give the Hub user or organisation the Spaces go to (ORG, no slash), got {org!r}")
    if api is None:
        if constants.HF_HUB_OFFLINE:
            raise UserError("the Hugging Face Hub is unreachable: HF_HUB_OFFLINE is set; unset it to push, or "
                            "write the Spaces with --out DIR")
        api = HfApi()
    requirement = requirement or default_requirement()
    pushed = []
    for name in names:
        repo_id = f"{org}/{name}"
        files = space_files(name, repo_id, requirement)
        try:
            api.create_repo(repo_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
            api.create_commit(repo_id, [CommitOperationAdd(path, data) for path, data in files.items()],
                              commit_message=f"HyperGVL metric {name} ({requirement})", repo_type="space")
        except Exception as exc:  # noqa: BLE001 - network and auth failures all mean the same to the user
            raise UserError(f"push to the Space {repo_id} failed: {type(exc).__name__}: {exc}") from None
        pushed.append(repo_id)
    return pushed


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("org", help="Hub user or organisation: the Spaces are ORG/<metric name>")
    p.add_argument("--names", nargs="+", choices=METRIC_NAMES, default=list(METRIC_NAMES), metavar="NAME",
                   help=f"metrics to publish (default: all four: {', '.join(METRIC_NAMES)})")
    p.add_argument("--requirement", help="pip requirement line that installs this package in the Space "
                                         "(default: hypergvl==<installed version>)")
    p.add_argument("--private", action="store_true")
    p.add_argument("--out", type=Path, help="write the Space folders to OUT/<name> instead of pushing")


@command("push-metrics", _args)
def _push_metrics(args: argparse.Namespace) -> int:
    """Publish the metrics as Hub evaluate metric Spaces (evaluate.load("ORG/hypergvl_accuracy"))."""
    requirement = args.requirement or default_requirement()
    if args.out:
        for name in args.names:
            (args.out / name).mkdir(parents=True, exist_ok=True)
            for path, data in space_files(name, f"{args.org}/{name}", requirement).items():
                write_bytes(args.out / name / path, data)
        print(f"wrote {len(args.names)} metric Space folders under {args.out} (evaluate.load('{args.out}/NAME'))")
        return 0
    for repo_id in push_metrics(args.org, args.names, requirement=requirement, private=args.private):
        print(f"pushed https://huggingface.co/spaces/{repo_id}  (evaluate.load('{repo_id}'))")
    return 0


if __name__ == "__main__":
    from hypergvl.cli import main

    sys.exit(main(["push-metrics", *sys.argv[1:]]))
