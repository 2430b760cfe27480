"""`hypergvl sample` end to end, as a user runs it, checked by the independent re-derivation."""
import json
import subprocess
import sys

import pytest

import hypergvl_checker as checker
from hypergvl.cli import main
from hypergvl.paper import PAPER_TASKS
from hypergvl.render import RENDERERS
from hypergvl.text import TEXT_REPS

IMAGE_COLUMNS = {f"image_{r}" for r in RENDERERS}
SCHEMA = ["id", "task", "level", "source", "origin", "scale", "num_vertices", "num_hyperedges", "hypergraph",
          "hypergraph2", "params", "question", "answer", "reference", *(f"text_{r}" for r in TEXT_REPS)]


@pytest.mark.parametrize("code", PAPER_TASKS)  # the independent re-derivation knows the paper's tasks
def test_sample_json_has_the_schema_and_checks_out(code, capsys):
    for scale in ("small", "medium", "large"):
        for seed in (0, 5, 11):
            assert main(["sample", "--task", code, "--seed", str(seed), "--scale", scale, "--json"]) == 0
            row = json.loads(capsys.readouterr().out)
            assert sorted(row) == sorted(SCHEMA) and not IMAGE_COLUMNS & set(row)
            checker.check_row(row)


def test_console_script_readable_output():
    out = subprocess.run([sys.executable, "-m", "hypergvl", "sample", "--task", "OSP", "--seed", "2"],
                         capture_output=True, text=True, check=True).stdout
    assert "answer:" in out and "Ans:" in out


@pytest.mark.parametrize("argv, needle", [
    (["sample", "--task", "NOPE"], "invalid choice"), (["sample", "--task", "VC", "--bogus"], "unknown flag --bogus"),
    (["sample", "--tsak", "VC"], "unknown flag --tsak (did you mean --task"),  # not "required: --task"
    (["evaluate", "--modle", "baseline:random", "--dataset", "x", "--out", "o"],
     "unknown flag --modle (did you mean --model"),
    (["sample", "--task", "VC", "--scale", "huge"], "invalid choice"), (["sample"], "required"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_flags_fail_clearly(argv, needle):
    r = subprocess.run([sys.executable, "-m", "hypergvl", *argv], capture_output=True, text=True)
    assert r.returncode == 2 and needle in r.stderr, r.stderr


def test_subcommands_come_from_entry_points_and_the_core_names_no_upper_layer(capsys):
    """The core CLI registers the commands of the layers above through the ``hypergvl.commands`` entry points."""
    from importlib.metadata import entry_points
    from pathlib import Path

    import hypergvl.cli as cli

    import re

    source = Path(cli.__file__).read_text()
    assert not re.search(r"\b(evaluators|models|router|space)\b", source)
    names = {ep.name for ep in entry_points(group=cli.ENTRY_POINT_GROUP)}
    assert {"evaluate", "merge", "score", "report"} <= names
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = capsys.readouterr().out
    for name in ("sample", "build", "push", "strip", "evaluate", "merge", "score", "report", *names):
        assert re.search(rf"^    {re.escape(name)}(\s|$)", listed, re.M), name  # a long name sits alone on its line


def test_module_commands_start_without_library_warnings():
    """No FutureWarning from torch_geometric's import, no runpy RuntimeWarning for ``hypergvl router prm``."""
    import subprocess
    import sys

    for module in ("hypergvl.models.train", "hypergvl.router.prm", "hypergvl.router.train"):
        done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and "Warning" not in done.stderr, (module, done.stderr[-500:])


FRONT_DOOR = [("train",), ("study",), ("datasets",), ("demo",), ("router", "prm"), ("router", "train"),
              ("router", "study"), ("router", "testbed"), ("space", "serve"), ("space", "worker"),
              ("space", "rescore"), ("space", "testsets"), ("space", "deploy")]


@pytest.mark.parametrize("words", FRONT_DOOR, ids=" ".join)
def test_every_user_task_is_a_hypergvl_subcommand_with_its_own_help(words, capsys):
    """One front door: ``hypergvl WORDS --help`` is the module's own help, under the name the user typed."""
    with pytest.raises(SystemExit) as done:
        main([*words, "--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: hypergvl {' '.join(words)} ")


def test_the_front_door_lists_groups_and_refuses_unknown_members(capsys):
    import hypergvl.cli as cli

    cli._load_plugins()
    assert {n for n, c in cli.COMMANDS.items() if c.targets} >= {w[0] for w in FRONT_DOOR}
    assert main(["router"]) == 2 and "hypergvl router {prm,train,study,testbed}" in capsys.readouterr().err
    assert main(["space", "--help"]) == 0 and "hypergvl space rescore" in capsys.readouterr().out
    assert main(["router", "trian"]) == 2
    assert "unknown command 'trian' (choose from prm, train, study, testbed)" in capsys.readouterr().err
    with pytest.raises(ValueError, match="registered twice"):
        cli.delegate("router", "again", "hypergvl.router.prm")
