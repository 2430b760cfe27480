"""The four metrics as Hugging Face evaluate metric Spaces: ``hypergvl push-metrics ORG``.

``evaluate.load("ORG/hypergvl_accuracy")`` downloads a Space repository holding the metric script
(``hypergvl_accuracy.py``), imports it, and checks that every module the script imports is installed. The scripts
import this package (``hypergvl.tasks``, ``hypergvl.evaluators._inputs``), so each Space declares it in its
``requirements.txt`` (the Space installs it to run its widget; a user who loads the metric needs it installed, and
evaluate's import check names it when it is not). Each Space holds:

* ``<name>.py``: the metric script, as shipped in the package;
* ``README.md``: the metric card, its front matter completed with what a Gradio Space needs (``sdk``,
  ``sdk_version``: the Gradio installed here, ``app_file``);
* ``app.py``: a Gradio app of our own (evaluate's ``launch_gradio_widget`` uses ``gr.inputs``, gone since Gradio 4):
  one JSON box per input column of the metric and one for its other keyword arguments, answering ``compute`` in the
  page and at the API endpoint ``/compute`` (``gradio_client.Client(URL).predict(..., api_name="/compute")``); it
  loads the metric from the script beside it, so it runs wherever the Space's files lie;
* ``requirements.txt``: the package and evaluate. No package index serves ``hypergvl``, so by default the package
  travels with the Space: its wheel (built from this checkout, as ``hypergvl space deploy`` does) is uploaded beside
  the app and named by its relative path (``./hypergvl-0.1.0-py3-none-any.whl``), which pip resolves from the
  Space's folder. ``--wheel FILE`` ships a wheel built elsewhere; ``--requirement LINE`` names another source
  instead (a VCS line, ``hypergvl @ git+https://github.com/ORG/hypergvl@COMMIT``, or a version once an index serves
  one) and ships no wheel.

``--out DIR`` writes the four folders instead of pushing, to look at them first; ``evaluate.load(DIR/NAME)`` loads
one from there and ``python app.py`` in it starts its Space.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from hypergvl.atomic import write_bytes
from hypergvl.cli import UserError, command
from hypergvl.wheel import build_wheel

from . import METRIC_NAMES, metric_path

APP = '''"""The HyperGVL metric {name} as a Gradio Space (written by ``hypergvl push-metrics``): one JSON box per input
column of the metric and one for its other keyword arguments; the API endpoint is ``/compute``."""
import json
from pathlib import Path

import evaluate
import gradio as gr

module = evaluate.load(str(Path(__file__).resolve().parent / "{name}.py"))
COLUMNS = list(module.features)


def _json(label, text, kind):
    try:
        value = json.loads(text) if text and text.strip() else kind()
    except json.JSONDecodeError as exc:
        raise gr.Error(f"{{label}} is not JSON: {{exc}}") from None
    if not isinstance(value, kind):
        raise gr.Error(f"{{label}} must be a JSON {{kind.__name__}}, got {{type(value).__name__}}")
    return value


def compute(*boxes):
    kwargs = _json("keyword arguments", boxes[-1], dict)
    kwargs.update({{c: _json(c, text, list) for c, text in zip(COLUMNS, boxes[:-1])}})
    try:
        return module.compute(**kwargs)
    except (ValueError, TypeError) as exc:
        raise gr.Error(f"{{type(exc).__name__}}: {{exc}}") from None


demo = gr.Interface(
    compute,
    inputs=[gr.Textbox(label=f"{{c}} (JSON list)", lines=2) for c in COLUMNS]
    + [gr.Textbox(label="other keyword arguments (JSON object)", value="{{}}")],
    outputs=gr.JSON(label="scores"),
    title="{title}",
    description=module.description,
    article=module.inputs_description,
    flagging_mode="never",
    api_name="compute",
)

if __name__ == "__main__":
    demo.launch()
'''


def _title(card: str) -> str:
    """The ``title:`` of a card's front matter."""
    for line in card.split("\n---\n")[0].splitlines():
        if line.startswith("title:"):
            return line.partition(":")[2].strip()
    raise ValueError("the metric card's front matter has no title")


def _card(name: str) -> str:
    """The metric card with a Gradio Space's front matter (sdk, sdk_version, app_file) added once."""
    text = (Path(metric_path(name)) / "README.md").read_text(encoding="utf-8")
    head, sep, body = text[4:].partition("\n---\n")
    if not text.startswith("---\n") or not sep:
        raise ValueError(f"{name}/README.md has no YAML front matter")
    keep = [line for line in head.splitlines() if line.split(":")[0] not in ("sdk", "sdk_version", "app_file")]
    space = ["sdk: gradio", f"sdk_version: {metadata.version('gradio')}", "app_file: app.py", "pinned: false"]
    return "---\n" + "\n".join(keep + space) + "\n---\n" + body


def space_files(name: str, *, requirement: str | None = None, wheel: Path | None = None) -> dict[str, bytes]:
    """Path -> content of the metric Space for metric ``name``. The package comes from ``wheel`` (uploaded beside
    the app, named by its relative path in ``requirements.txt``) or, instead, from the pip line ``requirement``."""
    if (requirement is None) == (wheel is None):
        raise ValueError("give the package's source in the Space: a wheel or a requirement line, not both")
    script = Path(metric_path(name)) / f"{name}.py"
    card = _card(name)
    files = {f"{name}.py": script.read_bytes(), "README.md": card.encode(),
             "app.py": APP.format(name=name, title=_title(card).replace('"', "'")).encode()}
    if wheel is not None:
        wheel = wheel_file(wheel)
        files[wheel.name] = wheel.read_bytes()
        requirement = f"./{wheel.name}"
    files["requirements.txt"] = f"{requirement}\nevaluate>={metadata.version('evaluate')}\n".encode()
    return files


def wheel_file(wheel: Path) -> Path:
    """``wheel`` if it is a hypergvl wheel file, else UserError."""
    wheel = Path(wheel)
    if not (wheel.is_file() and wheel.name.startswith("hypergvl-") and wheel.suffix == ".whl"):
        raise UserError(f"--wheel {wheel}: not a hypergvl wheel file (hypergvl-VERSION-py3-none-any.whl)")
    return wheel


def package_source(requirement: str | None, wheel: Path | None, tmp: Path) -> dict:
    """The keyword arguments of :func:`space_files` that put the package in the Space: the requirement or wheel
    given, else a wheel built from this checkout into ``tmp``. ``hypergvl space worker --hf-job`` ships the package
    to its job the same way."""
    if requirement and wheel:
        raise UserError("give --requirement or --wheel, not both")
    if requirement:
        return {"requirement": requirement}
    return {"wheel": wheel_file(wheel) if wheel else build_wheel(tmp)}


def push_metrics(org: str, names=METRIC_NAMES, *, requirement: str | None = None, wheel: Path | None = None,
                 api=None, private: bool = False) -> list[str]:
    """Create (or update) one Space per metric under ``org``; returns the repo ids. ``api``: an ``HfApi``. The
    package travels as ``wheel`` (default: built from this checkout) unless ``requirement`` names another source."""
    # lazy: huggingface_hub 0.23 s; 'hypergvl --help' imports this module, only a push needs it
    from huggingface_hub import CommitOperationAdd, HfApi, constants

    if not org or "/" in org:
        raise UserError(f"give the Hub user or organisation the Spaces go to (ORG, no slash), got {org!r}")
    if api is None:
        if constants.HF_HUB_OFFLINE:
            raise UserError("the Hugging Face Hub is unreachable: HF_HUB_OFFLINE is set; unset it to push, or "
                            "write the Spaces with --out DIR")
        api = HfApi()
    pushed = []
    with tempfile.TemporaryDirectory() as tmp:
        source = package_source(requirement, wheel, Path(tmp))
        what = source.get("requirement") or source["wheel"].name
        for name in names:
            repo_id = f"{org}/{name}"
            files = space_files(name, **source)
            try:
                api.create_repo(repo_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
                api.create_commit(repo_id, [CommitOperationAdd(path, data) for path, data in files.items()],
                                  commit_message=f"HyperGVL metric {name} ({what})", repo_type="space")
            except Exception as exc:  # noqa: BLE001 - network and auth failures all mean the same to the user
                raise UserError(f"push to the Space {repo_id} failed: {type(exc).__name__}: {exc}") from None
            pushed.append(repo_id)
    return pushed


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("org", help="Hub user or organisation: the Spaces are ORG/<metric name>")
    p.add_argument("--names", nargs="+", choices=METRIC_NAMES, default=list(METRIC_NAMES), metavar="NAME",
                   help=f"metrics to publish (default: all four: {', '.join(METRIC_NAMES)})")
    p.add_argument("--wheel", type=Path, help="the hypergvl wheel to upload beside each app (default: one built "
                                              "from this checkout, as `hypergvl space deploy` does)")
    p.add_argument("--requirement", help="instead of a wheel, the pip requirement line that installs this package "
                                         "in the Space (e.g. hypergvl @ git+https://github.com/ORG/hypergvl@COMMIT)")
    p.add_argument("--private", action="store_true")
    p.add_argument("--out", type=Path, help="write the Space folders to OUT/<name> instead of pushing")


@command("push-metrics", _args)
def _push_metrics(args: argparse.Namespace) -> int:
    """Publish the metrics as Hub evaluate metric Spaces (evaluate.load("ORG/hypergvl_accuracy"))."""
    if args.out:
        with tempfile.TemporaryDirectory() as tmp:
            source = package_source(args.requirement, args.wheel, Path(tmp))
            for name in args.names:
                (args.out / name).mkdir(parents=True, exist_ok=True)
                for path, data in space_files(name, **source).items():
                    write_bytes(args.out / name / path, data)
        print(f"wrote {len(args.names)} metric Space folders under {args.out} (evaluate.load('{args.out}/NAME'); "
              "python app.py in one starts its Space)")
        return 0
    for repo_id in push_metrics(args.org, args.names, requirement=args.requirement, wheel=args.wheel,
                                private=args.private):
        print(f"pushed https://huggingface.co/spaces/{repo_id}  (evaluate.load('{repo_id}'))")
    return 0


if __name__ == "__main__":
    from hypergvl.cli import main

    sys.exit(main(["push-metrics", *sys.argv[1:]]))
