"""Server-side scoring: hostile uploads are refused with the line and field, nothing is stored for them, and the
scores equal an independent per-sample verification."""
from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from conftest import fresh, seeded_run, set_tasks, vision_samples
from hypergvl.space.scoring import Limits, SubmissionError, parse_samples, read_upload, score, summarise
from hypergvl.space.service import Submission


def lines(service, name="baseline-symbolic-vision", kind="public") -> list[dict]:
    return [json.loads(x) for x in (seeded_run(service, name, kind) / "samples.jsonl").read_text().splitlines()]


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def zip_folder(path: Path, files: dict[str, bytes], **links) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
        for name, target in links.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16)
            z.writestr(info, target)
    return path


# ------------------------------------------------------------------------------------------------ reading
@pytest.mark.parametrize("text, message", [
    (b'{"id": "a", "response": "x"}\nnot json\n', "line 2: not JSON"),
    (b'{"id": "a"}\n', "line 1: field 'response' is missing"),
    (b'{"id": 3, "response": "x"}\n', "line 1: field 'id' must be a string, got number"),
    (b'{"id": "a", "response": null}\n', "line 1: field 'response' must be a string, got null"),
    (b'[1, 2]\n', "line 1: expected a JSON object, got list"),
    (b'{"id": "a", "response": "x"}\n{"id": "a", "response": "y"}\n', "line 2: sample 'a' appears twice \\(first on line 1\\)"),
    (b'{"id": "a", "response": "\xff"}\n', "line 1: not UTF-8"),
    (b"\n\n", "holds no samples"),
])
def test_malformed_lines_name_line_and_field(text, message):
    with pytest.raises(SubmissionError, match=message):
        parse_samples(text)


def test_size_and_line_limits(tmp_path):
    limits = Limits(max_bytes=1000, max_lines=3, max_line_bytes=100, max_response_chars=20)
    big = write_jsonl(tmp_path / "big.jsonl", [{"id": str(i), "response": "x" * 10} for i in range(40)])
    with pytest.raises(SubmissionError, match="limit is 1,000"):
        read_upload(big, limits)
    with pytest.raises(SubmissionError, match="more than 3 lines"):
        parse_samples(b"".join(b'{"id": "%d", "response": ""}\n' % i for i in range(5)), limits)
    with pytest.raises(SubmissionError, match="line 1: longer than 100 bytes"):
        parse_samples(json.dumps({"id": "a", "response": "y" * 200}).encode(), limits)
    with pytest.raises(SubmissionError, match="line 1: field 'response' is longer than 20"):
        parse_samples(json.dumps({"id": "a", "response": "y" * 30}).encode(), Limits(max_response_chars=20))


GOOD = b'{"id": "a", "response": "x"}\n'


@pytest.mark.parametrize("files, links, message", [
    ({"../evil/samples.jsonl": GOOD}, {}, "points outside its folder"),
    ({"/abs/samples.jsonl": GOOD}, {}, "points outside its folder"),
    ({"run/samples.jsonl": GOOD}, {"run/results.json": "/etc/passwd"}, "symbolic link"),
    ({f"run/f{i}.txt": b"" for i in range(20)} | {"run/samples.jsonl": GOOD}, {}, "holds 21 entries"),
    ({"a/samples.jsonl": GOOD, "b/samples.jsonl": GOOD}, {}, "two files named 'samples.jsonl'"),
    ({"run/samples.rank0.jsonl": GOOD, "run/samples.jsonl": GOOD}, {}, "per-rank logs"),
    ({"run/results.json": b"{}"}, {}, "no samples.jsonl"),
    ({"a/b/c/samples.jsonl": GOOD}, {}, "nested too deep"),
    ({"run/samples.jsonl": GOOD, "run/results.json": b"[1]"}, {}, "not a JSON object"),
])
def test_hostile_zips_refused(tmp_path, files, links, message):
    with pytest.raises(SubmissionError, match=message):
        read_upload(zip_folder(tmp_path / "up.zip", files, **links))


def test_zip_bomb_refused_by_declared_and_real_size(tmp_path):
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("run/samples.jsonl", b" " * (3 * 2 ** 20))
    with pytest.raises(SubmissionError, match="unpacks to more than"):
        read_upload(bomb, Limits(max_unzipped_bytes=2 ** 20))
    assert bomb.stat().st_size < 20_000  # compressed small: only the unpacked size stops it


def test_damaged_zip(tmp_path):
    p = tmp_path / "bad.zip"
    p.write_bytes(b"PK\x03\x04" + os.urandom(200))
    with pytest.raises(SubmissionError, match="damaged"):
        read_upload(p)


def test_reads_a_zipped_evaluate_folder(space_service, tmp_path):
    run = seeded_run(space_service)
    z = zip_folder(tmp_path / "run.zip", {f"run/{n}": (run / n).read_bytes() for n in ("samples.jsonl", "results.json",
                                                                                        "run.json")})
    records, results, sha = read_upload(z)
    assert len(records) == vision_samples() and results["model"]["name"] == "baseline:symbolic" and len(sha) == 64
    assert set(records[0]) <= {"id", "response", "line", "reference_sha256"}  # submitted verdicts are not even kept


# ------------------------------------------------------------------------------------------------ scoring
def _independent_accuracy(service, records):
    """Verify each response with the task's own verifier against the build's reference (no metric, no cells)."""
    from hypergvl.tasks import score_response

    index = service.sets.index(service.sets.current("public").name)
    per_task: dict[str, list[bool]] = {}
    for r in records:
        meta = r["id"].split("/")[0]
        t, _, _, ref = index.meta[meta]
        per_task.setdefault(t, []).append(score_response(ref, r["response"]).correct)
    return {t: 100.0 * sum(v) / len(v) for t, v in per_task.items()}


def test_scores_equal_independent_verification_and_ignore_claims(space_service):
    records = lines(space_service)
    for r in records[::3]:
        r["response"] = "Ans: 12345"  # wrong answers
        r["correct"] = True  # a lie the server must ignore
    index = space_service.sets.index(space_service.sets.current("public").name)
    got = score(parse_samples("".join(json.dumps(r) + "\n" for r in records).encode()), index, "vision")
    want = _independent_accuracy(space_service, records)
    assert got.scores["per_task"] == pytest.approx(want)
    assert summarise(got.cells)["per_task"] == pytest.approx(want)


def test_cells_reproduce_every_metric_grouping(space_service):
    """Every grouping derived from the stored cells equals the metric's own, computed from the samples directly."""
    import evaluate

    from hypergvl.evaluators import metric_path
    from hypergvl.space.scoring import groupings

    raw = (seeded_run(space_service, "baseline-random-vision") / "samples.jsonl").read_bytes()
    index = space_service.sets.index(space_service.sets.current("public").name)
    s = score(parse_samples(raw), index, "vision")
    recs = [json.loads(x) for x in raw.splitlines()]
    want = evaluate.load(metric_path("hypergvl_accuracy")).compute(
        predictions=[r["response"] for r in recs], references=[r["reference"] for r in recs],
        text_reps=[r["text_rep"] for r in recs], visual_reps=[r["visual_rep"] for r in recs],
        scales=[r["scale"] for r in recs], sources=[r["source"] for r in recs])
    got = groupings(s.cells)
    for key in ("by_text_rep", "by_visual_rep", "by_scale", "by_source", "by_source_and_scale"):
        assert set(got[key]) == set(want[key]), key
        for value, group in want[key].items():
            mine = got[key][value]
            assert mine["per_task"] == pytest.approx(group["per_task"]), (key, value)
            assert (mine["avg_u"], mine["avg_r"], mine["accuracy"]) == pytest.approx(
                (group["avg_u"], group["avg_r"], group["accuracy"])), (key, value)
    assert s.scores["per_task"] == pytest.approx(want["per_task"]) and s.scores["avg_u"] == pytest.approx(want["avg_u"])


@pytest.mark.parametrize("mutate, message", [
    (lambda rs: rs.pop(), f"has {vision_samples():,} samples; the upload has {vision_samples() - 1:,}"),
    (lambda rs: rs.append({"id": "VC-99999/n_set/enc_hy", "response": "x"}), "unknown sample id 'VC-99999/n_set/enc_hy'"),
    (lambda rs: rs.__setitem__(0, {"id": rs[0]["id"].rsplit("/", 1)[0] + "/none", "response": "x"}),
     "not part of the vision track"),
    (lambda rs: rs.__setitem__(5, dict(rs[5], reference="{}")), "answered on another build"),
    (lambda rs: rs.__setitem__(2, {"id": "no-slashes", "response": "x"}), "unknown sample id 'no-slashes'"),
])
def test_selection_must_be_complete_and_exact(space_service, mutate, message):
    records = lines(space_service)
    mutate(records)
    index = space_service.sets.index(space_service.sets.current("public").name)
    with pytest.raises(SubmissionError, match=message):
        score(parse_samples("".join(json.dumps(r) + "\n" for r in records).encode()), index, "vision")


def test_routed_track_one_pair_per_problem(space_service):
    records = lines(space_service, "baseline-symbolic-routed-top")
    index = space_service.sets.index(space_service.sets.current("public").name)
    assert score(parse_samples("".join(json.dumps(r) + "\n" for r in records).encode()), index, "routed").num_samples == len(set_tasks())
    twice = records + [dict(records[0], id=records[0]["id"].rsplit("/", 2)[0] + "/n_pair/enc_hy")]
    with pytest.raises(SubmissionError, match="answered twice"):
        score(parse_samples("".join(json.dumps(r) + "\n" for r in twice[1:] + twice[:1]).encode()), index, "routed")


# ------------------------------------------------------------------------------------------------ the service
def test_rejected_uploads_store_nothing(space_service, tmp_path):
    svc = fresh(space_service, tmp_path)
    public = svc.sets.current("public").name
    records = lines(space_service)
    bad = write_jsonl(tmp_path / "bad.jsonl", records[:-1])
    with pytest.raises(SubmissionError):
        svc.submit_upload(bad, Submission(model="m", testset=public), "ip:1")
    uploads = svc.config.data_dir / "uploads"
    assert svc.store.entries() == [] and not any(uploads.glob("*") if uploads.exists() else [])
    good = write_jsonl(tmp_path / "good.jsonl", records)
    e = svc.submit_upload(good, Submission(model="m", testset=public), "ip:1")
    assert (svc.config.data_dir / "uploads" / e.upload_sha256).read_bytes() == good.read_bytes()
    with pytest.raises(SubmissionError, match="already on the leaderboard"):
        svc.submit_upload(write_jsonl(tmp_path / "again.jsonl", records[::-1]), Submission(model="m", testset=public),
                          "ip:2")
    with pytest.raises(SubmissionError, match="same sha256"):
        svc.submit_upload(good, Submission(model="other name", testset=public), "ip:3")
    assert len(svc.store.entries()) == 1


@pytest.mark.parametrize("field, value, message", [
    ("model", " ", "name is empty"), ("model", "x\x00y", "printable"), ("model_type", "baseline", "model type"),
    ("link", "javascript:alert(1)", "Hub id"), ("revision", "../../etc", "revision"), ("track", "audio", "track"),
    ("num_parameters", float("nan"), "parameters"), ("testset", "nope", "unknown test set"),
])
def test_metadata_validated(space_service, tmp_path, field, value, message):
    svc = fresh(space_service, tmp_path)
    sub = Submission(model="m", testset=svc.sets.current("public").name)
    setattr(sub, field, value)
    good = write_jsonl(tmp_path / "good.jsonl", lines(space_service))
    with pytest.raises(SubmissionError, match=message):
        svc.submit_upload(good, sub, "ip:1")
    assert svc.store.entries() == []


def test_rate_limit_per_submitter(space_service, tmp_path):
    svc = fresh(space_service, tmp_path, rate_limit=2)
    public = svc.sets.current("public").name
    records = lines(space_service)
    def upload(i):  # the same answers in another order: another file
        return write_jsonl(tmp_path / f"{i}.jsonl", records[i:] + records[:i])

    for i in range(2):
        svc.submit_upload(upload(i), Submission(model=f"m{i}", testset=public), "ip:9")
    with pytest.raises(SubmissionError, match="rate limit: at most 2"):
        svc.submit_upload(upload(3), Submission(model="m3", testset=public), "ip:9")
    svc.submit_upload(upload(4), Submission(model="m3", testset=public), "ip:other")


def test_a_run_on_the_hidden_questions_scores_nowhere(space_service, tmp_path):
    """A run answered on the hidden set's questions-only build (kept on the server, never served) is refused on
    the hidden set, which takes server-made runs only, and on the public set, whose build it is not."""
    from hypergvl.evaluators.harness import evaluate_model
    from hypergvl.space.service import HIDDEN_BY_REQUEST

    hidden = space_service.sets.current("hidden")
    out = tmp_path / "run"
    assert evaluate_model(hidden.download, "baseline:symbolic", out, progress=False)["scored"] is False
    z = zip_folder(tmp_path / "run.zip", {f"run/{n}": (out / n).read_bytes() for n in ("samples.jsonl", "results.json")})
    svc = fresh(space_service, tmp_path)
    with pytest.raises(SubmissionError) as refused:
        svc.submit_upload(z, Submission(model="me", testset=hidden.name), "ip:1")
    assert str(refused.value) == HIDDEN_BY_REQUEST
    with pytest.raises(SubmissionError, match="not on this test set"):
        svc.submit_upload(z, Submission(model="me", testset=space_service.sets.current("public").name), "ip:1")
    assert svc.store.entries() == []


def test_rotation_retires_the_hidden_set(space_service, tmp_path):
    from hypergvl.space.testsets import TestSets

    sets = TestSets(tmp_path / "data", per_task=1)
    sets.ensure()
    old = sets.current("hidden")
    new = sets.rotate_hidden()
    assert new.name != old.name and sets.current("hidden") == new
    assert [s.current for s in sets.all() if s.name == old.name] == [False]
    assert "retired" in sets.get(old.name).label
    assert json.loads((tmp_path / "data" / "testsets.json").read_text())  # the registry names no seed
    assert "seed" not in (tmp_path / "data" / "testsets.json").read_text()
    assert oct((tmp_path / "data" / "private" / "hidden_seeds.json").stat().st_mode & 0o777) == "0o600"


def test_rotate_command(space_service, tmp_path, monkeypatch, capsys):
    import shutil

    from hypergvl.space.testsets import TestSets, main

    data = tmp_path / "data"
    shutil.copytree(space_service.sets.dir, data, ignore=shutil.ignore_patterns("leaderboard.sqlite*", "runs"))
    monkeypatch.setenv("HYPERGVL_SPACE_DATA", str(data))
    monkeypatch.setenv("HYPERGVL_PER_TASK", "1")
    monkeypatch.delenv("HYPERGVL_HIDDEN_SEED", raising=False)
    old = space_service.sets.current("hidden").name
    assert main(["rotate"]) == 0
    assert "new hidden set hidden-" in capsys.readouterr().out
    sets = TestSets(data)
    assert sets.current("hidden").name != old and not sets.get(old).current
    monkeypatch.setenv("HYPERGVL_HIDDEN_SEED", "5")
    assert main(["rotate"]) == 2  # the seed is a secret of the deployment: rotate by changing it
    assert "change that secret" in capsys.readouterr().err


def test_cells_are_read_by_name_so_entries_of_other_benchmark_versions_sit_side_by_side():
    """An entry's cells index the axes it was scored under (``Entry.axes``; one stored before axes were recorded
    indexes the paper's): read into the axes registered now, a task or representation it was not scored on has no
    value (never 0), and one not registered now is left out of the views."""
    import numpy as np

    from hypergvl.paper import PAPER_TASKS
    from hypergvl.space.scoring import axes
    from hypergvl.space.store import PAPER_AXES, Entry, encode_cells

    now = axes()
    later = {k: list(v) for k, v in now.items()}  # a later version: a task among the paper's, a representation more
    later["task"] = later["task"][:6] + ["NEW"] + later["task"][6:]
    later["text_rep"] = later["text_rep"] + ["new_rep"]
    cells = np.array([[later["task"].index("OSP"), later["text_rep"].index("n_set"), 0, 0, 0, 4, 3, 0],
                      [later["task"].index("NEW"), 0, 0, 0, 0, 5, 5, 0],
                      [0, later["text_rep"].index("new_rep"), 0, 0, 0, 2, 1, 0],
                      [0, 0, 0, 0, 0, 2, 1, 0]])
    s = summarise(cells, later)
    assert s["per_task"] == {"VC": 50.0, "OSP": 75.0} and s["num_samples"] == 6
    assert s["avg_u"] == 50.0 and s["avg_r"] == 75.0 and s["avg_ext"] is None
    assert s["averaged_over"] == {"avg_u": ["VC"], "avg_r": ["OSP"], "avg_ext": [], "accuracy": ["VC", "OSP"]}
    assert summarise(cells, later, text_rep="n_set")["per_task"] == {"OSP": 75.0}
    old = Entry(model="m", revision="r", testset="t", track="vision", model_type="open", num_parameters=None,
                link="", scores={}, cells=np.zeros((0, 8)), num_samples=1, dataset_sha256="-",
                origin="upload").to_doc()
    old.pop("axes")
    old["cells"] = encode_cells(np.array([[PAPER_AXES["task"].index("HHM"), 0, 0, 0, 0, 10, 1, 0]]))
    entry = Entry.from_doc(old)
    assert entry.axes == PAPER_AXES and list(PAPER_AXES["task"]) == list(PAPER_TASKS)
    got = summarise(entry.cells, entry.axes)
    assert got["per_task"] == {"HHM": 10.0} and got["avg_r"] == 10.0 and got["avg_u"] is None  # VC ... unscored
    assert Entry.from_doc(Entry.from_doc(old).to_doc()).axes == PAPER_AXES  # kept as stored
