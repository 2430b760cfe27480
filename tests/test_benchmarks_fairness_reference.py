"""benchmarks/fairness_reference.py: the shipped table (DHG-Bench's own classes against ours on our Bail data) is
what its shipped per-seed results render to, and a run without DHG-Bench's wheel stops with a clear error."""
from pathlib import Path

import pytest

from benchmark_scripts import load_script

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
ORDER = ("HGNN", "HCHA", "HyperND", "HyperGCN", "UniGCNII", "MLP")


@pytest.fixture(scope="module")
def bench():
    return load_script("fairness_reference")


def test_the_shipped_table_is_rebuilt_from_its_results(bench, capsys):
    files = [str(RESULTS / "fairness_reference" / f"{m}.json") for m in ORDER]
    assert bench.main(["--render", *files]) == 0
    table = capsys.readouterr().out.strip()
    assert table.count("\n") > 20 and "| **HGNN** | mean ± std | **80.98 ± 0.67** | **81.08 ± 1.50** |" in table
    assert table in (RESULTS / "fairness_reference.md").read_text()


def test_a_run_without_dhgbench_code_names_how_to_install_it(bench, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--models", "HGNN", "--seeds", "0", "--dhgbench", str(tmp_path / "none")])
    assert exit_info.value.code not in (0, None)
    assert "not installed" in capsys.readouterr().err + str(exit_info.value)
