"""`hypergvl build`: protocol counts, the independent checker on built rows, loading with `datasets`, `expand`,
byte-identical rebuilds and resume after kill -9, and bad input."""
import hashlib
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

import hypergvl_checker as checker
from hypergvl.builder import BuildConfig, plan
from hypergvl.vqa import combinations, expand
from hypergvl.cli import main

TASKS = ("VC", "HEC", "ISM", "HHM", "SHC")  # as the conftest's small_build
PER_TASK = 8  # 4 synthetic (small, medium, medium, large) + 4 real


@pytest.fixture()
def built(small_build):
    return small_build


def _hashes(out: Path) -> dict:
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.rglob("*.parquet"))}


def test_layout_card_and_protocol_counts(built):
    card = (built / "README.md").read_text()
    assert card.startswith("---\n") and "config_name: all" in card and "config_name: ism" in card
    for rel, digest in _hashes(built).items():
        assert f"`{rel}` | `{digest}`" in card
    from datasets import load_dataset

    ds = load_dataset(str(built), split="test")
    assert len(ds) == len(TASKS) * PER_TASK
    counts = Counter((r["task"], r["source"], r["scale"]) for r in ds.select_columns(["task", "source", "scale"]))
    for t in TASKS:
        assert counts[(t, "synthetic", "small")] == 1 and counts[(t, "synthetic", "medium")] == 2
        assert counts[(t, "real", "large")] == 1 and counts[(t, "real", "medium")] == 2
    ism = [r["answer"] for r in ds.select_columns(["task", "answer"]) if r["task"] == "ISM"]
    assert ism.count("Yes") == ism.count("No")
    assert len(set(ds["id"])) == len(ds)


def test_every_built_row_passes_the_independent_checker(built):
    from datasets import load_dataset

    ds = load_dataset(str(built), split="test").remove_columns(
        ["image_enc_hy", "image_bi_inc", "image_sh_inc", "image_st_inc", "image_cli_exp"])
    for row in ds:
        checker.check_row(row)
        checker.check_texts(row)
        if row["source"] == "real":
            assert row["origin"] in ("walmart-trips", "contacts-workplace")
    assert "license: cc-by" in (built / "README.md").read_text()


def test_load_by_name_from_the_parent_folder_and_one_config(built, monkeypatch):
    from datasets import load_dataset

    monkeypatch.chdir(built.parent)
    osp = load_dataset("hypergvl", "hhm", split="test")
    assert set(osp["task"]) == {"HHM"} and len(osp) == PER_TASK
    img = osp[0]["image_enc_hy"]
    assert img.size == (1400, 1100)


def test_expand_is_a_sample_per_registered_pair_and_lazy(built):
    from datasets import load_dataset

    ds = load_dataset(str(built), "ism", split="test")
    vqa = expand(ds)
    assert len(vqa) == len(combinations()) * len(ds)  # 35 over the paper's representations
    s = vqa[len(combinations()) + 1]  # the second row's second pair, in registration order (the paper's first)
    text_rep, visual_rep = combinations()[1]
    assert s["meta_id"] == ds[1]["id"] and (s["text_rep"], s["visual_rep"]) == (text_rep, visual_rep)
    assert s["prompt"] == ds[1][f"text_{text_rep}"] + " " + ds[1]["question"]
    assert s["prompt"].startswith("There are two hypergraphs: H and G.")
    assert s["image"].size == (1400, 1100) and s["reference"] == ds[1]["reference"]
    assert vqa.references()[len(combinations()) + 1] == s["reference"] and len(vqa.references()) == len(vqa)
    small = expand(ds, text_reps=["n_set"], visual_reps=["cli_exp", "enc_hy"])
    assert len(small) == 2 * len(ds)
    with pytest.raises(ValueError, match="n_set"):
        expand(ds, text_reps=["nope"])


def test_same_seed_same_bytes_and_resume_after_kill(built, tmp_path):
    tasks = ("VC", "ISM")  # a subset keeps the two extra builds short; shards of a task do not depend on others
    ref = {k: v for k, v in _hashes(built).items() if k.split("/")[1] in ("vc", "ism")}
    out = tmp_path / "hypergvl"
    cmd = [sys.executable, "-m", "hypergvl", "build", "--out", str(out), "--per-task", str(PER_TASK),
           "--tasks", *tasks, "--rows-per-shard", "4", "--workers", "1", "--no-progress"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not list(out.glob("data/*/*.parquet")):  # no time bound: a build that exits first fails below
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "README.md").exists(), "a killed build must not look finished"
    finished = len(list(out.glob("data/*/*.parquet")))
    assert 1 <= finished < len(ref)
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert _hashes(out) == ref
    assert not list(out.rglob("*.tmp-*"))


def test_bad_inputs(tmp_path, capsys):
    assert main(["build", "--out", str(tmp_path / "a"), "--tasks", "NOPE"]) == 2
    assert "unknown task 'NOPE'" in capsys.readouterr().err
    assert main(["build", "--out", str(tmp_path / "b"), "--per-task", "0"]) == 2
    assert "--per-task" in capsys.readouterr().err
    assert main(["build", "--out", str(tmp_path / "c"), "--sources", "nowhere"]) == 2
    assert "nowhere" in capsys.readouterr().err
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    assert main(["build", "--out", str(tmp_path / "mine"), "--per-task", "1", "--tasks", "VC"]) == 2
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    if os.geteuid() != 0:  # root ignores permission bits
        assert main(["build", "--out", str(ro / "x"), "--per-task", "1", "--tasks", "VC"]) == 2
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["build", "--out", str(blocker / "x"), "--per-task", "1", "--tasks", "VC"]) == 2
    assert "cannot write" in capsys.readouterr().err
    # a missing real source: the HyperGCN base points at an empty folder
    os.environ["HYPERGVL_HYPERGCN_ROOT"] = str(tmp_path / "empty")
    try:
        assert main(["build", "--out", str(tmp_path / "d"), "--sources", "coauthorship-cora"]) == 2
        assert "not available" in capsys.readouterr().err
        assert not (tmp_path / "d" / "README.md").exists()
    finally:
        del os.environ["HYPERGVL_HYPERGCN_ROOT"]


def test_rebuild_with_other_settings_is_refused(built, capsys):
    assert main(["build", "--out", str(built), "--per-task", "2", "--tasks", "VC"]) == 2
    assert "other settings" in capsys.readouterr().err


def test_push_offline_fails_at_once(built, capsys, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert main(["push", str(built), "--repo-id", "org/hypergvl"]) == 2
    assert "HF_HUB_OFFLINE" in capsys.readouterr().err
    assert main(["push", str(built.parent), "--repo-id", "org/x"]) == 2


def test_plan_is_the_paper_protocol_at_full_size(tmp_path):
    cfg = BuildConfig(out=tmp_path, per_task=200)
    shards = plan(cfg)
    rows = [r for s in shards for r in s.rows]
    assert len(rows) == 2400
    c = Counter((r.task, r.source, r.scale) for r in rows)
    assert all(c[(t, "synthetic", "medium")] == 50 and c[(t, "real", "small")] == 25 for t in cfg.tasks)
    ism = [r.variant for r in rows if r.task == "ISM"]
    assert ism.count(0) == ism.count(1) == 100


# ------------------------------------------------------------------------------------------------ seed width
def _old_problem_rng(seed, task, scale, source, index):
    """``problem_rng`` as every published build was made with (a634353): every key word masked to 32 bits."""
    import zlib

    import numpy as np

    key = [int(seed), zlib.crc32(task.encode()), zlib.crc32(scale.encode()), zlib.crc32(source.encode()),
           -1 if index is None else int(index)]
    return np.random.default_rng(np.random.SeedSequence([k & 0xFFFFFFFF for k in key]))


def _tiny_build(out: Path, seed: int, **kw) -> dict:
    from hypergvl.builder import build

    build(BuildConfig(out=out, per_task=2, seed=seed, tasks=("VC", "ISM"), workers=1, **kw), progress=False)
    return _hashes(out)


@pytest.mark.parametrize("seed", [0, 12345, 2 ** 32 - 1])
def test_seeds_below_2_to_the_32_build_the_bytes_they_always_built(tmp_path, monkeypatch, seed):
    import numpy as np

    from hypergvl import tasks

    for args in [("VC", "small", "synthetic", 0), ("ISM", "large", "real", 7), ("OSP", "medium", "synthetic", None)]:
        assert np.array_equal(tasks.problem_rng(seed, *args).integers(0, 2 ** 62, 16),
                              _old_problem_rng(seed, *args).integers(0, 2 ** 62, 16))
    if seed != 12345:
        return
    now = _tiny_build(tmp_path / "now", seed)
    monkeypatch.setattr(tasks.generation, "problem_rng", _old_problem_rng)
    assert _tiny_build(tmp_path / "old", seed) == now


def test_a_seed_of_2_to_the_32_or_more_builds_another_set_than_its_low_32_bits(tmp_path, monkeypatch):
    from hypergvl import tasks

    low = 987654321
    wide = (0x2B5F_19C3 << 32) | low  # a 62-bit secret and its low word
    assert _tiny_build(tmp_path / "wide", wide) != _tiny_build(tmp_path / "low", low)
    assert tasks.problem_rng(wide, "VC", "small", "synthetic", 0).integers(0, 2 ** 62) != \
        tasks.problem_rng(wide + (1 << 40), "VC", "small", "synthetic", 0).integers(0, 2 ** 62)  # every high bit counts
    monkeypatch.setattr(tasks.generation, "problem_rng", _old_problem_rng)  # the masked key the attack used: one set for both
    assert _tiny_build(tmp_path / "old-wide", wide) == _tiny_build(tmp_path / "old-low", low)


def test_a_secret_seed_is_in_no_card_nor_error_and_its_manifest_is_private(tmp_path):
    from hypergvl.builder import MANIFEST, UserError, build

    seed = 4_611_686_018_427_387_847  # 62 bits: its digits appear nowhere by chance
    out = tmp_path / "hidden"
    _tiny_build(out, seed, secret_seed=True)
    assert str(seed) not in (out / "README.md").read_text() and "secret seed" in (out / "README.md").read_text()
    assert (out / MANIFEST).stat().st_mode & 0o777 == 0o600
    leaking = [p for p in out.rglob("*") if p.is_file() and str(seed).encode() in p.read_bytes()]
    assert leaking == [out / MANIFEST]
    with pytest.raises(UserError) as err:  # resuming with other settings names none of them
        build(BuildConfig(out=out, per_task=3, seed=seed, tasks=("VC", "ISM"), workers=1, secret_seed=True),
              progress=False)
    assert str(seed) not in str(err.value)
    public = tmp_path / "public"
    _tiny_build(public, 77)
    assert "with seed 77" in (public / "README.md").read_text()  # a public build still says how to rebuild it
