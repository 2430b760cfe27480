"""Smoke test of benchmarks/graph_attention.py on a three-graph HIC text file: both models, both attention scopes,
HyperGT's two attention forms, DPHGNN's two ways to build its operators, one timed step each, and its flag
checks."""

import pytest

from benchmark_scripts import load_script

HIC_TEXT = "3\n4 2 7\n0 0 0 0\n0 1 2\n2 3\n3 3 5\n1 1 2\n0 1\n1 2\n0 2\n2 1 7\n0/1 3\n0 1\n"


@pytest.fixture(scope="module")
def bench():
    return load_script("graph_attention")


def test_graph_attention_times_both_scopes_of_both_models(bench, tmp_path, capsys):
    path = tmp_path / "HIC" / "data" / "hypergraph" / "RHG" / "RHG_3.txt"
    path.parent.mkdir(parents=True)
    path.write_text(HIC_TEXT)
    from hypergvl.models.nn import dphgnn
    from hypergvl.models.nn.sparse import SparseOperator
    before = dphgnn._operator, vars(SparseOperator)["from_sparse"]
    assert bench.main(["--dataset", "rhg-3", "--raw-root", str(tmp_path), "--batches", "1"]) == 0
    assert (dphgnn._operator, vars(SparseOperator)["from_sparse"]) == before  # the 'before' patches are undone
    rows = [line.split("|")[1:-1] for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [r[0].strip() for r in rows] == ["model", "DPHGNN", "HyperGT", "form", "HyperGT", "structure", "DPHGNN"]
    for _, graph, batch, ratio in rows[1:3] + rows[4:5] + rows[6:]:
        assert float(graph) > 0 and float(batch) > 0 and ratio.strip().endswith("x")


@pytest.mark.parametrize("flags", [["--batches", "0"], ["--threads", "0"]])
def test_graph_attention_rejects_bad_flags(bench, flags, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench.main(flags)
    assert exit_info.value.code == 2 and "at least 1" in capsys.readouterr().err
