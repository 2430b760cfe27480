"""benchmarks/hyperedge_reference.py: the shipped table (DHG-Bench's own encoder, head and loop against ours on our
Table A6 task) is what its shipped per-seed results render to, a run without DHG-Bench's wheel stops with a clear
error, and the overrides are the shipped A6 rows' own."""
from pathlib import Path

import pytest

from benchmark_scripts import load_script

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
SHIPPED = RESULTS / "hyperedge_reference"


@pytest.fixture(scope="module")
def bench():
    return load_script("hyperedge_reference")


def test_the_shipped_table_is_rebuilt_from_its_results(bench, capsys):
    shipped = (RESULTS / "hyperedge_reference.md").read_text()
    files = sorted(SHIPPED.glob("*.json"))
    assert files
    for path in files:  # one table per shipped result file, named in the report
        assert f"hyperedge_reference/{path.name}" in shipped
        assert bench.main(["--render", str(path)]) == 0
        table = capsys.readouterr().out.strip()
        assert table.count("\n") >= 3 and table in shipped


def test_a_run_without_dhgbench_code_names_how_to_install_it(bench, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--models", "HGNN", "--seeds", "0", "--dhgbench", str(tmp_path / "none")])
    assert exit_info.value.code not in (0, None)
    assert "not installed" in capsys.readouterr().err + str(exit_info.value)


def test_a_model_without_a_dhgbench_class_is_a_usage_error(bench, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--models", "HGNN", "UniGIN2", "--seeds", "0"])
    assert exit_info.value.code == 2 and "no DHG-Bench class for UniGIN2; one of: " in capsys.readouterr().err


def test_both_sides_train_under_the_shipped_a6_rows_overrides(bench):
    rd = load_script("reproduce_dhgbench")
    assert bench.overrides("HGNN", "dhgbench") == list(rd.PROTOCOLS["hyperedge"]["paper"])
    assert bench.overrides("HNHN", "dhgbench") == [*rd.PROTOCOLS["hyperedge"]["paper"], "model.normalisation=allset"]
    assert bench.overrides("HGNN", "logits") == list(rd.PROTOCOLS["hyperedge"]["paper-logits"])


def test_a_rendered_row_gives_each_side_its_selected_epoch(bench, tmp_path, capsys):
    import json

    def side(auroc, epoch):
        return {"test": {"auroc": auroc}, "epoch": epoch}

    doc = {"dataset": "cora", "results": [{"model": "UniGCNII", "loss": "dhgbench", "paper": [73.51, 0.87], "seeds": [
        {"seed": 0, "reference": side(66.0, 20), "ours": side(64.0, 40)},
        {"seed": 1, "reference": {"error": "RuntimeError: x"}, "ours": side(66.0, 20)}]},
        {"model": "UniGCNII", "loss": "logits", "splits": "dhgbench", "extra_set": ["trainer.eval_every=10"],
         "paper": [73.51, 0.87], "seeds": [{"seed": 2, "reference": side(70.0, 10), "ours": side(69.0, 30)}]}]}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    assert bench.main(["--render", str(path)]) == 0
    out = capsys.readouterr().out
    assert "| UniGCNII | dhgbench | ours | 0 | 66.00 (20) | 64.00 (40) | |" in out
    assert "| UniGCNII | dhgbench | ours | 1 | error: RuntimeError: x | 66.00 (20) | |" in out
    assert "| **UniGCNII** | dhgbench | ours | mean ± std | **66.00** | **65.00 ± 1.00** | 73.51 ± 0.87 |" in out
    assert "| UniGCNII (trainer.eval_every=10) | logits | dhgbench | 2 | 70.00 (10) | 69.00 (30) | |" in out


def test_dhgbench_split_files_become_the_tasks_candidates(bench):
    from types import SimpleNamespace

    split = {"ground_train": [[3, 1]], "train_only_pos": [[0, 2, 4]], "ground_valid": [[5, 6]],
             "valid_only_pos": [], "test_pos": [[7, 8], [1, 9]],
             **{f"train_{k}": [[0, i], [1, i], [2, i]] for k, i in (("sns", 5), ("mns", 6), ("cns", 7))},
             **{f"valid_{k}": [[9, i]] for k, i in (("sns", 1), ("mns", 2), ("cns", 3))},
             **{f"test_{k}": [[8, i], [7, i]] for k, i in (("sns", 1), ("mns", 2), ("cns", 3))}}
    task = SimpleNamespace(candidates={}, device="cpu")
    bench.use_split(task, split)
    train = [(0, 2, 4), (1, 3)]  # train_only_pos + ground_train, sorted
    assert task.positives == {"train": train, "val": [(5, 6)], "test": [(7, 8), (1, 9)]}
    tr = task.candidates["train"]
    assert list(tr.hyperedges) == train + [(0, 5), (0, 6), (0, 7)]  # the first third of each sampler's (mixed)
    assert list(tr.kinds) == ["positive", "positive", "sized", "motif", "clique"]
    va = task.candidates["val"]  # load_val: the training positives against every validation negative
    assert list(va.hyperedges)[:2] == train and len(va) == 5 and list(va.labels) == [1, 1, 0, 0, 0]
    te = task.candidates["test"]
    assert len(te) == 8 and list(te.labels).count(1) == 2
