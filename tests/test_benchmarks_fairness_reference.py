"""benchmarks/fairness_reference.py: the shipped table (DHG-Bench's own classes against ours on our Bail data) is
what its shipped per-seed results render to, and a run without DHG-Bench's wheel stops with a clear error."""
from pathlib import Path

import pytest

from benchmark_scripts import load_script

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
ORDER = ("HGNN", "HCHA", "HyperND", "HyperGT", "PhenomNN", "PhenomNN-seeds1-2", "PhenomNN-unit", "ED-HNN", "LEGCN",
         "LEGCN-isolated", "HNHN", "HyperGCN", "HyperGCN-seeds3-4", "HyperGCN-seeds5-9", "HyperGCN-unit", "TF-HNN",
         "UniGCNII", "MLP")


@pytest.fixture(scope="module")
def bench():
    return load_script("fairness_reference")


def test_the_shipped_table_is_rebuilt_from_its_results(bench, capsys):
    files = [str(RESULTS / "fairness_reference" / f"{m}.json") for m in ORDER]
    assert bench.main(["--render", *files]) == 0
    table = capsys.readouterr().out.strip()
    assert table.count("\n") > 20 and "| **HGNN** | mean ± std | **80.98 ± 0.67** | **81.08 ± 1.50** |" in table
    shipped = (RESULTS / "fairness_reference.md").read_text()
    assert table in shipped
    assert "{" + ",".join(ORDER) + "}.json" in shipped  # the command in the header renders exactly these files
    assert sorted(p.stem for p in (RESULTS / "fairness_reference").glob("*.json")) == sorted(ORDER)  # none left out


CREDIT = ("HyperND", "HyperND-seeds1-4", "HyperGT")  # the Credit comparison, under fairness_reference/credit


def test_the_shipped_credit_table_is_rebuilt_from_its_results(bench, capsys):
    files = [str(RESULTS / "fairness_reference" / "credit" / f"{m}.json") for m in CREDIT]
    assert bench.main(["--render", *files]) == 0
    table = capsys.readouterr().out.strip()
    assert "paper Table A8 credit acc" in table and "| HyperND | 1 | 79.33 | skipped |" in table
    assert table in (RESULTS / "fairness_reference.md").read_text()
    assert "credit/{" + ",".join(CREDIT) + "}.json" in (RESULTS / "fairness_reference.md").read_text()
    assert sorted(p.stem for p in (RESULTS / "fairness_reference" / "credit").glob("*.json")) == sorted(CREDIT)


def test_a_run_without_dhgbench_code_names_how_to_install_it(bench, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--models", "HGNN", "--seeds", "0", "--dhgbench", str(tmp_path / "none")])
    assert exit_info.value.code not in (0, None)
    assert "not installed" in capsys.readouterr().err + str(exit_info.value)


def test_unit_features_map_each_column_affinely_onto_0_1(bench):
    import torch

    x = torch.tensor([[-1.0, 0.0, 3.0], [1.0, 1.0, 3.0], [0.0, 0.5, 3.0]])
    unit = bench.rescale(x, "unit")
    assert torch.equal(unit[:, 0], (x[:, 0] + 1) / 2)  # a [-1, 1] column, as Bail's: (x + 1) / 2
    assert torch.equal(unit[:, 1], x[:, 1])  # already [0, 1]
    assert torch.equal(unit[:, 2], torch.zeros(3))  # constant: 0, no division by zero
    assert bench.rescale(x, "stored") is x


def test_rows_trained_on_rescaled_features_say_so(bench, tmp_path, capsys):
    import json

    seed = {"seed": 0, "reference": {"test": {"accuracy": 97.31, "delta_dp": 1.0, "delta_eo": 2.0}}}
    doc = {"dataset": "bail", "features": "unit",
           "results": [{"model": "PhenomNN", "paper": [91.71, 1.13], "seeds": [seed]},
                       {"model": "LEGCN", "set": ["model.expansion=isolated"], "paper": None, "seeds": [seed]}]}
    path = tmp_path / "unit.json"
    path.write_text(json.dumps(doc))
    assert bench.main(["--render", str(path)]) == 0
    out = capsys.readouterr().out
    assert "| PhenomNN (unit features) | 0 | 97.31 | skipped |" in out  # --skip-ours: no ours column to read
    assert "| **PhenomNN (unit features)** | mean ± std | **97.31** | **-** |" in out
    assert "| LEGCN (unit features, model.expansion=isolated) | 0 | 97.31 |" in out


def test_a_comparison_split_over_processes_renders_as_one_block(bench, tmp_path, capsys):
    import json

    def doc(seeds, features="stored"):
        rows = [{"seed": k, "reference": {"test": {"accuracy": 90.0 + k, "delta_dp": 0, "delta_eo": 0}}}
                for k in seeds]
        return {"dataset": "bail", "features": features,
                "results": [{"model": "HGNN", "paper": [91.02, 0.54], "seeds": rows}]}

    paths = []
    for i, d in enumerate([doc([2]), doc([0, 1]), doc([0], "unit")]):
        paths.append(tmp_path / f"{i}.json")
        paths[-1].write_text(json.dumps(d))
    assert bench.main(["--render", *map(str, paths)]) == 0
    lines = capsys.readouterr().out.splitlines()
    stored = [line.split(" | ")[1] for line in lines if line.startswith("| HGNN | ")]
    assert stored == ["0", "1", "2"]  # one block, seeds in order
    assert "| **HGNN** | mean ± std | **91.00 ± 0.82** |" in "\n".join(lines)
    assert sum(line.startswith("| **HGNN (unit features)** |") for line in lines) == 1
