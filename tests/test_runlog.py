"""A damaged run folder (a line cut short or replaced by garbage in the middle of samples.jsonl) is refused the same
way by every reader (score, merge, resume, the router's PRM and oracle): the file, the line and what to do; a resumed
run never appends beside a damaged line; a last line cut by a crash is still answered again on resume."""
from __future__ import annotations

import json
import shutil

import pytest

from hypergvl.cli import main
from hypergvl.runlog import DamagedRun, iter_log


@pytest.fixture(scope="module")
def run(small_build, tmp_path_factory):
    out = tmp_path_factory.mktemp("runlog") / "run"
    assert main(["evaluate", "--dataset", str(small_build), "--model", "baseline:symbolic", "--out", str(out),
                 "--text-reps", "n_pair", "--visual-reps", "enc_hy", "--no-progress"]) == 0
    return out


def _damage(run, tmp_path, how: str):
    folder = tmp_path / how
    shutil.copytree(run, folder)
    log = folder / "samples.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    assert len(lines) >= 30
    if how == "truncated":
        lines[9] = lines[9][: len(lines[9]) // 2] + "\n"
    elif how == "garbage":
        lines[9] = "garbage\n"
    elif how == "not-a-record":
        lines[9] = "[1, 2]\n"
    log.write_text("".join(lines))
    return folder, log


@pytest.mark.parametrize("how, what", [("truncated", "not JSON"), ("garbage", "not JSON"),
                                       ("not-a-record", "not a sample record")])
def test_every_reader_refuses_a_damaged_line_naming_it(run, small_build, tmp_path, capsys, how, what):
    folder, log = _damage(run, tmp_path, how)
    with pytest.raises(DamagedRun, match=f"line 10: {what}.*Delete that line"):
        list(iter_log(log))
    before = log.read_bytes()
    assert main(["score", str(folder), "--dataset", str(small_build), "--out", str(tmp_path / "scored")]) == 2
    assert f"{log}: line 10: {what}" in capsys.readouterr().err and not (tmp_path / "scored").exists()
    assert main(["evaluate", "--dataset", str(small_build), "--model", "baseline:symbolic", "--out", str(folder),
                 "--text-reps", "n_pair", "--visual-reps", "enc_hy", "--no-progress"]) == 2
    assert f"{log}: line 10: {what}" in capsys.readouterr().err
    assert log.read_bytes() == before  # resume appended nothing beside the damaged line
    assert main(["merge", str(folder), "--out", str(tmp_path / "merged")]) == 2
    assert f"line 10: {what}" in capsys.readouterr().err
    assert main(["report", str(folder), "--out", str(tmp_path / "report")]) == 2  # report reads the log too
    assert f"line 10: {what}" in capsys.readouterr().err and not (tmp_path / "report").exists()
    from hypergvl.evaluators.routing import oracle_choices
    from hypergvl.router.prm import read_run

    for reader in (read_run, oracle_choices):
        with pytest.raises(DamagedRun, match="line 10"):
            reader(folder)


def test_a_last_line_cut_by_a_crash_is_answered_again(run, small_build, tmp_path):
    folder = tmp_path / "crashed"
    shutil.copytree(run, folder)
    log = folder / "samples.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-1]) + lines[-1][:20])  # cut while writing the last record
    assert len(dict(iter_log(log))) == len(lines) - 1
    assert main(["evaluate", "--dataset", str(small_build), "--model", "baseline:symbolic", "--out", str(folder),
                 "--text-reps", "n_pair", "--visual-reps", "enc_hy", "--no-progress"]) == 0
    # the same records, the cut one answered again (its latency is measured anew)
    assert _records(log.read_text()) == _records("".join(lines))


SUBMIT = ["--space", "http://127.0.0.1:9", "--model", "m", "--type", "open", "--params", "1"]


def test_every_reader_of_a_finished_run_refuses_a_cut_last_line_and_resume_repairs_it(run, small_build, tmp_path,
                                                                                      capsys):
    """A last line cut by a crash: score, merge, report, submit, the oracle and the router's PRM name the line and
    the resume (they scored the shorter run with exit 0 before, and report showed the old complete numbers);
    evaluate's resume repairs it, and then every reader reads it."""
    from hypergvl.evaluators.routing import oracle_choices
    from hypergvl.router.prm import read_run

    folder = tmp_path / "crashed"
    shutil.copytree(run, folder)
    log = folder / "samples.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-1]) + lines[-1][:20])
    said = f"{log}: line {len(lines)}, the last, was cut short"
    for argv in (["score", str(folder), "--dataset", str(small_build), "--out", str(tmp_path / "scored")],
                 ["merge", str(folder), "--out", str(tmp_path / "merged")],
                 ["report", str(folder), "--out", str(tmp_path / "report")],
                 ["submit", str(folder), *SUBMIT]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert said in err and "rerun the same hypergvl evaluate command" in err, err
    assert not any((tmp_path / name).exists() for name in ("scored", "merged", "report"))
    for reader in (read_run, oracle_choices):
        with pytest.raises(Exception, match="the last, was cut short"):
            reader(folder)
    assert main(["evaluate", "--dataset", str(small_build), "--model", "baseline:symbolic", "--out", str(folder),
                 "--text-reps", "n_pair", "--visual-reps", "enc_hy", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["report", str(folder), "--out", str(tmp_path / "report")]) == 0
    assert main(["score", str(folder), "--dataset", str(small_build), "--out", str(tmp_path / "scored")]) == 0
    assert len(read_run(folder).correct) > 0


def test_report_refuses_a_log_that_is_not_the_results_run(run, tmp_path, capsys):
    """samples.jsonl checked against results.json: a whole line missing (no cut to see) is a count mismatch."""
    folder = tmp_path / "short"
    shutil.copytree(run, folder)
    log = folder / "samples.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-1]))
    assert main(["report", str(folder), "--out", str(tmp_path / "report")]) == 2
    err = capsys.readouterr().err
    assert f"results.json counts {len(lines)} samples but samples.jsonl holds {len(lines) - 1}" in err
    assert main(["report", str(folder / "results.json"), "--out", str(tmp_path / "report")]) == 2  # the file too
    assert not (tmp_path / "report").exists()


def _records(text: str) -> list[str]:
    return sorted(json.dumps({k: v for k, v in json.loads(line).items() if k != "latency_s"}, sort_keys=True)
                  for line in text.splitlines())
