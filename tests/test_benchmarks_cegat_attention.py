"""benchmarks/cegat_attention.py: the replaced gather-multiply-scatter form it times computes today's layer
(values and gradients, in one pass and in checkpointed blocks), and a smoke run on a three-graph HIC file."""
import pytest
import torch

from benchmark_scripts import load_script
from hnn_toys import random_hypergraph
from hypergvl.models.nn import build_model, cegat
from test_benchmarks_graph_attention import HIC_TEXT


@pytest.fixture(scope="module")
def bench():
    return load_script("cegat_attention")


def _outputs(model, x, hei):
    z = x.clone().requires_grad_(True)
    out = model(z, hei)
    (out * torch.arange(out.numel(), dtype=out.dtype).view_as(out).sin()).sum().backward()
    grads = [z.grad, *[p.grad.clone() for p in model.parameters()]]
    model.zero_grad()
    return [out.detach(), *grads]


@pytest.mark.parametrize("blocks", [False, True])
def test_the_replaced_form_computes_todays_layer(bench, monkeypatch, blocks):
    _, hei, n = random_hypergraph(4, num_nodes=14, num_edges=10, max_order=5)
    torch.manual_seed(0)
    model = build_model("CEGAT", in_channels=5, hidden_channels=4, out_channels=3, num_layers=2, heads=3,
                        use_bn=False, dropout=0.0)
    x = torch.randn(n, 5)
    today = _outputs(model, x, hei)
    if blocks:  # a few edges per block at 3 heads x 4 channels
        monkeypatch.setattr(bench, "REPLACED_BLOCK_ELEMENTS", 24)
    with bench.replaced():
        assert cegat.GATLayer.forward is bench.replaced_forward
        before = _outputs(model, x, hei)
    assert cegat.GATLayer.forward is not bench.replaced_forward  # restored
    for got, want in zip(before, today):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_cegat_attention_times_both_forms(bench, tmp_path, capsys):
    path = tmp_path / "HIC" / "data" / "hypergraph" / "RHG" / "RHG_3.txt"
    path.parent.mkdir(parents=True)
    path.write_text(HIC_TEXT)
    assert bench.main(["--dataset", "rhg-3", "--raw-root", str(tmp_path), "--batches", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| ") and "step" not in line]
    assert [r[0].strip().split(" ")[0] for r in rows] == ["gather-multiply-scatter", "CSR"]
    assert all(float(step) >= 0 and float(epoch) >= 0 for _, step, epoch in rows) and "speed-up:" in out  # 3 tiny graphs: may print 0.000


@pytest.mark.parametrize("flags", [["--batches", "0"], ["--threads", "0"]])
def test_cegat_attention_rejects_bad_flags(bench, flags, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench.main(flags)
    assert exit_info.value.code == 2 and "at least 1" in capsys.readouterr().err
