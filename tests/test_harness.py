"""`hypergvl evaluate` with the baselines on a real small build, resumability, `hypergvl report`, bad input."""
import json

import pytest

from hypergvl.cli import main
from hypergvl.text import TEXT_REPS

LOSSLESS = ("n_set", "ho_neigh", "ho_inc", "inc_mat")
LOSSY = ("n_pair", "adj_mat", "lo_inc")


@pytest.fixture(scope="module")
def runs(small_build, tmp_path_factory):
    out = tmp_path_factory.mktemp("eval")
    for model in ("symbolic", "random"):
        assert main(["evaluate", "--dataset", str(small_build), "--model", f"baseline:{model}",
                     "--out", str(out / model), "--visual-reps", "bi_inc", "--no-progress"]) == 0
    return out


def _results(path):
    return json.loads((path / "results.json").read_text())


def test_symbolic_baseline_is_perfect_on_lossless_text_and_loses_hec_on_vertex_pairs(runs):
    s = _results(runs / "symbolic")["scores"]
    for rep in LOSSLESS:
        assert s["by_text_rep"][rep]["accuracy"] == 100.0, rep
    for rep in LOSSY:
        assert s["by_text_rep"][rep]["per_task"]["HEC"] < 100.0, rep
        assert s["by_text_rep"][rep]["per_task"]["VC"] == 100.0


def test_random_baseline_is_at_chance(runs):
    s = _results(runs / "random")["scores"]
    assert 25.0 <= s["per_task"]["ISM"] <= 75.0
    assert s["per_task"]["HHM"] < 5.0 and s["unparsed_rate"] == 0.0


def test_submission_format_and_sample_log(runs, small_build):
    from hypergvl.answers import SCORER_VERSION
    from hypergvl.provenance import of

    r = _results(runs / "symbolic")
    assert r["scorer_version"] == SCORER_VERSION and r["generation"] is None
    assert r["finish_reasons"] == {"stop": r["num_samples"]} and r["truncated_share"] == 0.0
    prov = of(r)
    assert prov["config"]["model"] == "baseline:symbolic" and prov["config"]["batch_size"] == 8
    assert prov["versions"]["transformers"] and "created" in prov
    assert r["model"] == {"name": "baseline:symbolic", "type": "baseline", "revision": None, "num_parameters": 0}
    # the build's 40 problems in every registered text representation (the paper's 7 and any added), one picture
    assert r["num_samples"] == 5 * 8 * len(TEXT_REPS) and r["selection"]["visual_reps"] == ["bi_inc"]
    assert set(r["dataset"]["sha256"]) == {str(p.relative_to(small_build)) for p in small_build.glob("data/*/*.parquet")}
    lines = (runs / "symbolic" / "samples.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    assert {"id", "meta_id", "task", "text_rep", "visual_rep", "response", "parsed", "correct", "unparsed",
            "latency_s", "finish_reason"} <= set(rec)


def test_resume_skips_answered_samples(small_build, tmp_path):
    out = tmp_path / "e"
    args = ["evaluate", "--dataset", str(small_build), "--model", "baseline:symbolic", "--out", str(out),
            "--tasks", "VC", "--text-reps", "n_set", "--no-progress"]
    assert main(args + ["--limit", "3"]) == 0
    first = (out / "samples.jsonl").read_text()
    with open(out / "samples.jsonl", "a") as f:
        f.write('{"id": "VC-000')  # a line cut short by a crash
    assert main(args) == 0
    text = (out / "samples.jsonl").read_text()
    assert text.startswith(first)
    ids = [json.loads(x)["id"] for x in text.splitlines() if x.startswith('{"id": "VC-') and x.endswith("}")]
    assert len(ids) == len(set(ids)) == 8 * 5
    assert _results(out)["num_samples"] == 40


def test_report_tables_and_heatmap(runs, tmp_path, capsys):
    assert main(["report", str(runs / "symbolic"), str(runs / "random" / "results.json"), "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "| Model | VC | HEC | Ne | DVC | OEC | ONe | OSP | OMF | ISM | 3-CL | SHC | HHM | Avg.U | Avg.R |" in text
    assert "| baseline:symbolic | 100.0 |" in text and "| N-Set | 100.0 |" in text
    from hypergvl.answers import SCORER_VERSION

    assert "| Model | Samples | Cut at limit | Max new tokens | Scorer version |" in text
    # a baseline's answers are never cut
    assert f"| baseline:random | {5 * 8 * len(TEXT_REPS)} | 0.0% | - | {SCORER_VERSION} |" in text
    png = tmp_path / "heatmap_baseline_symbolic.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_input(small_build, tmp_path, capsys, monkeypatch):
    assert main(["evaluate", "--dataset", str(small_build), "--model", "nope:x", "--out", str(tmp_path / "a")]) == 2
    assert "prefix must be one of" in capsys.readouterr().err
    assert main(["evaluate", "--dataset", str(tmp_path / "missing"), "--model", "baseline:random",
                 "--out", str(tmp_path / "b")]) == 2
    assert main(["evaluate", "--dataset", str(small_build), "--model", "baseline:random", "--out", str(tmp_path / "c"),
                 "--device", "cpu"]) == 2
    assert "hf: models only" in capsys.readouterr().err
    assert main(["evaluate", "--dataset", str(small_build), "--model", "baseline:random", "--out", str(tmp_path / "c"),
                 "--max-new-tokens", "64"]) == 2
    assert "applies to hf: and openai: models only" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "nothing")]) == 2
    out = tmp_path / "d"
    assert main(["evaluate", "--dataset", str(small_build), "--model", "baseline:random", "--out", str(out),
                 "--tasks", "VC", "--text-reps", "n_set", "--limit", "2", "--no-progress"]) == 0
    before = (out / "samples.jsonl").read_text()
    # another model's answers are never mixed into this folder's run
    api = ["--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--tasks", "VC", "--max-retries", "1",
           "--timeout", "2", "--no-progress"]
    assert main(["evaluate", "--dataset", str(small_build), *api, "--out", str(out)]) == 2
    assert "nothing listens at 127.0.0.1:9" in capsys.readouterr().err  # the preflight, before anything else
    from hypergvl.evaluators import preflight

    monkeypatch.setattr(preflight, "check_server", lambda *a: None)  # the checks behind it, as if it had answered
    assert main(["evaluate", "--dataset", str(small_build), *api, "--out", str(out)]) == 2
    assert "holds a run of baseline:random" in capsys.readouterr().err
    assert (out / "samples.jsonl").read_text() == before
    # an unreachable OpenAI-compatible server: no retries, clear error, nothing answered, nothing lost
    assert main(["evaluate", "--dataset", str(small_build), *api, "--out", str(tmp_path / "e")]) == 2
    err = capsys.readouterr().err
    assert "model failed" in err and "no server there" in err
    assert (tmp_path / "e" / "samples.jsonl").read_text() == ""


def test_task_codes_in_any_case_or_as_config_names():
    """``--tasks osp 3cl`` selects what ``load_dataset(..., "osp")`` calls its configs; an unknown code lists both."""
    from hypergvl.evaluators.selection import Selection
    from hypergvl.cli import UserError

    assert Selection(tasks=("osp", "3cl", "Ne", "one", "3-cl")).tasks == ("OSP", "3-CL", "Ne", "ONe", "3-CL")
    with pytest.raises(UserError, match="osp, omf"):
        Selection(tasks=("nope",))


def test_a_selection_without_understanding_tasks_prints_no_nan(small_build, tmp_path, capsys):
    from hypergvl.cli import main

    assert main(["evaluate", "--dataset", str(small_build), "--model", "baseline:symbolic", "--tasks", "hhm",
                 "--text-reps", "n_set", "--visual-reps", "none", "--out", str(tmp_path / "r"), "--no-progress"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert "nan" not in line and "Avg.U - (no understanding task answered)" in line, line


def test_two_runs_of_one_model_get_their_own_labels_and_heatmaps(runs, tmp_path, capsys):
    import shutil

    for name in ("first", "second"):
        shutil.copytree(runs / "symbolic", tmp_path / "runs" / name)
    shutil.copytree(runs / "symbolic", tmp_path / "again" / "first")
    folders = [tmp_path / "runs" / "first", tmp_path / "runs" / "second", tmp_path / "again" / "first"]
    assert main(["report", *map(str, folders), "--out", str(tmp_path / "report")]) == 0
    text = capsys.readouterr().out
    for shown in ("| baseline:symbolic [first] |", "| baseline:symbolic [second] |",
                  "| baseline:symbolic [first] #2 |"):
        assert shown in text, shown
    assert len(list((tmp_path / "report").glob("heatmap_*.png"))) == 3
