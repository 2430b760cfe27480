"""The name table the CLI reads without torch (hypergvl.models.names) equals the live registries, and the
commands that read it (datasets list and --help, every name refusal of train, study and datasets) answer without
importing torch or PyG, exit 2, and name the nearest valid names and the fix."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hypergvl.models import names

# runs the whole CLI (the entry points' modules load as for a user) and reports what it imported
_PROBE = ("import json, sys\nfrom hypergvl.cli import main\ntry:\n    rc = main(sys.argv[1:])\n"
          "except SystemExit as e:\n    rc = e.code\n"
          "heavy = sorted(m for m in ('torch', 'torch_geometric', 'transformers') if m in sys.modules)\n"
          "print(json.dumps({'rc': rc, 'heavy': heavy}), file=sys.stderr)\nsys.exit(0)")


def cli(*argv: str, env: dict | None = None, cwd=None) -> tuple[int, str, str, list[str]]:
    """(exit status, stdout, stderr without the probe's line, heavy modules imported) of ``hypergvl ARGV``."""
    import os

    proc = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})}, cwd=cwd)
    *err, last = proc.stderr.strip().splitlines() or [""]
    probe = json.loads(last)
    return probe["rc"], proc.stdout, "\n".join(err), probe["heavy"]


def test_the_table_equals_the_live_registries():
    """Every model (with its --set keys), HNN task (with its keys and dataset level), trainer key, perturbation and
    dataset (with what datasets list prints and the raw files it reads), as the registries hold them now. A name
    added to a registry without regenerating the table fails here: ``python -m hypergvl.models.names``."""
    from hypergvl.models.datasets import DATASETS
    from hypergvl.models.nn import MODELS
    from hypergvl.models.perturb import PERTURBATIONS
    from hypergvl.models.tasks import TASKS

    live = names.live_table()
    assert names.current_table() == live, "regenerate the table: python -m hypergvl.models.names"
    # and the live table is the registries' (not, say, empty on both sides)
    assert list(names.MODELS) == list(MODELS) and list(names.TASKS) == list(TASKS)
    assert list(names.PERTURBATIONS) == list(PERTURBATIONS) and list(names.DATASETS) == list(DATASETS)
    assert names.DATASETS["cora"]["source"] == DATASETS["cora"].source.name
    assert "symmetric" in names.MODELS["HGNN"] and "lr" in names.TRAINER_KEYS


def test_the_table_follows_a_change_of_a_registry(tmp_path, monkeypatch):
    """The check above can fail: a model registered after the table was written makes the tables differ, and
    write_table writes one that holds it."""
    from torch import nn

    from hypergvl.models.nn import MODELS, register_model

    @register_model("ToyForNames")
    class Toy(nn.Module):
        paper = "none"

        def __init__(self, in_channels, hidden_channels, out_channels, num_layers=2, dropout=0.5, *, knob: int = 1):
            super().__init__()
    try:
        assert names.current_table() != names.live_table()
        written = names.write_table(tmp_path / "table.py")
        scope: dict = {}
        exec(written.read_text(), scope)
        assert scope["MODELS"]["ToyForNames"] == ("knob",)
    finally:
        MODELS.unregister("ToyForNames")


def test_datasets_list_and_help_import_no_torch():
    rc, out, err, heavy = cli("datasets", "list")
    assert rc == 0 and heavy == [], (err, heavy)
    rows = [line.split()[0] for line in out.splitlines()]
    assert rows == list(names.DATASETS)
    rc, out, err, heavy = cli("datasets", "--help")
    assert rc == 0 and heavy == []
    assert "list the DHG-Bench datasets" in out and "``" not in out  # the help reads as text, not a raw docstring
    assert "hypergvl datasets build cora --out" in out  # the usage lines keep their line breaks


@pytest.mark.parametrize("argv, message", [
    (["train", "--model", "HGNN", "--task", "node", "--dataset", "coraa"],
     "unknown dataset 'coraa'; did you mean cora"),
    (["train", "--model", "HGNN", "--task", "node", "--dataset", "cora", "--set", "lrr=0.1"],
     "--set: unknown key 'lrr'; did you mean lr?"),
    (["train", "--model", "HGNN", "--task", "node", "--dataset", "cora", "--set", "model.symetric=1"],
     "unknown model key 'symetric'; did you mean symmetric?"),
    (["train", "--model", "HGNN", "--task", "graph", "--dataset", "cora"],
     "--task graph needs a collection of hypergraphs (graph level): choose one of rhg-10"),
    (["train", "--modle", "HGNN", "--task", "node", "--dataset", "cora"], "unknown flag --modle (did you mean --model?)"),
    (["study", "robustness", "--datasets", "coraa"], "unknown dataset 'coraa'; did you mean cora"),
    (["study", "robustness", "--models", "HGNN", "--datasets", "cora", "--set", "lrr=1"], "unknown key 'lrr'"),
    (["train", "--model", "HGNN", "--task", "node", "--dataset", "cora", "--set", "lr=abc"],
     "--set: lr: expected float, got 'abc' (model HGNN, task node)"),
    (["train", "--model", "HGNN", "--task", "node", "--dataset", "cora", "--set", "model.symmetric=maybe"],
     "--set: model.symmetric: expected bool, got 'maybe'"),
    (["study", "robustness", "--models", "HGNN", "--datasets", "cora", "--set", "select=best"],
     "--set: select: expected one of auto, last, best_val, best_val_first, got 'best'"),
    (["datasets", "build", "coraa"], "unknown dataset 'coraa'; did you mean cora"),
    (["datasets", "build", "walmart", "--option", "sigma=1"], "accepted options: feature_noise, feature_dim, seed"),
])
def test_every_name_refusal_exits_2_naming_the_nearest_names_without_torch(tmp_path, argv, message):
    out = tmp_path / "out"
    rc, _, err, heavy = cli(*argv, "--out", str(out), env={"HYPERGVL_RAW_ROOT": ""}, cwd=tmp_path)
    assert rc == 2 and message in err, err
    assert heavy == [] and "Traceback" not in err
    assert not out.exists()


def test_a_set_value_is_checked_before_torch_as_the_trainer_s_config_checks_it():
    """The table's key types (hypergvl.models.values.type_spec) give every value the answer the config's own
    annotations give, for every key of every model, task and the trainer; a good value passes the check before torch,
    and a bad one gets the config's own refusal."""
    from hypergvl.models.config import ConfigError, TrainerConfig, _dataclass_types, model_kwarg_types, resolve_config
    from hypergvl.models.nn import MODELS
    from hypergvl.models.tasks import TASKS
    from hypergvl.models.values import annotation, coerce

    live = [(_dataclass_types(TrainerConfig), names.KEY_TYPES["trainer"])]
    live += [(_dataclass_types(cls.Config), names.KEY_TYPES["task"][name]) for name, cls in TASKS.items()]
    live += [(model_kwarg_types(cls), names.KEY_TYPES["model"][name]) for name, cls in MODELS.items()]

    def answer(value, ann):
        try:
            return "ok", coerce("k", value, ann)
        except ConfigError as e:
            return "refused", str(e)

    checked = 0
    for anns, specs in live:
        assert set(anns) == set(specs)
        for key, ann in anns.items():
            for value in ("abc", "1", "2.5", "-1", "true", "null", "auto", "best_val", "sum", ""):
                assert answer(value, annotation(specs[key])) == answer(value, ann), (key, ann, value)
                checked += 1
    assert checked > 1000
    assert names.set_key_error(["lr=0.01", "symmetric=false", "trainer.select=last", "epochs=5"], "HGNN", "node") \
        is None
    with pytest.raises(ConfigError) as refused:
        resolve_config("HGNN", "node", "cora", overrides=["lr=abc"])
    assert names.set_key_error(["lr=abc"], "HGNN", "node") == f"{refused.value} (model HGNN, task node)"


def test_raw_data_refusals_name_the_folder_and_the_fix(tmp_path, monkeypatch):
    """A --raw-root that is not there, or lacks the dataset's files, and no raw root while offline with nothing
    cached: refused before torch, naming the folder or the file and what to pass."""
    train = ["train", "--model", "HGNN", "--task", "node", "--dataset", "cora", "--out", str(tmp_path / "o")]
    rc, _, err, heavy = cli(*train, "--raw-root", str(tmp_path / "nope"))
    assert (rc, heavy) == (2, []) and f"--raw-root {tmp_path / 'nope'}: no such folder" in err
    rc, _, err, heavy = cli(*train, "--raw-root", str(tmp_path))
    assert (rc, heavy) == (2, []) and f"lacks Cora's raw file {tmp_path}/HyperGCN/data/cocitation/cora/" in err
    offline = {"HF_HUB_OFFLINE": "1", "HYPERGVL_RAW_ROOT": "", "HYPERGVL_CACHE": str(tmp_path / "cache")}
    rc, _, err, heavy = cli(*train, env=offline)
    assert (rc, heavy) == (2, []) and "offline (HF_HUB_OFFLINE)" in err and "--raw-root DIR" in err
    for key, value in offline.items():
        monkeypatch.setenv(key, value)
    assert "offline" in names.dataset_error("cora", None, "node")
    # the same files in the download cache: nothing to refuse (the trainer reads them from there)
    for f in names.DATASETS["cora"]["files"]:
        cached = names.cache_path(names.DATASETS["cora"]["url"].rstrip("/") + "/" + f)
        assert cached.is_relative_to(tmp_path / "cache")
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_bytes(b"")
    assert names.dataset_error("cora", None, "node") is None


def test_the_folder_rule_is_the_dataset_package_s():
    from hypergvl.models.datasets.folder import is_folder_name

    for name in ("cora", "./mine", "a/b", "Cora-CA", "../x"):
        assert names.is_folder_name(name) == is_folder_name(name)
