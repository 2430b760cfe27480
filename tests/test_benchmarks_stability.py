"""benchmarks/training_stability.py without DHG-Bench's wheel (not installed on a fresh machine): the per-trajectory
summary on hand-made losses, and its refusals (no reference class, no reference weights to copy, no wheel)."""

import pytest

from benchmark_scripts import load_script


@pytest.fixture(scope="module")
def bench():
    return load_script("training_stability")


def test_summary_finds_the_spike_and_the_epochs_above_the_untrained_loss(bench):
    losses = [1.9, 1.2, 0.8, 250.0, 3.1, 1.95, 0.4]  # diverges at epoch 4, above 1.9 at epochs 4, 5 and 6
    s = bench.trajectory_summary(losses, 71.5)
    assert s == {"test_acc": 71.5, "max_loss": 250.0, "max_loss_epoch": 4, "epochs_above_initial": 3,
                 "last_loss": 0.4}
    assert bench.trajectory_summary([2.0, 1.0, 0.5], 80.0)["epochs_above_initial"] == 0


def test_refusals(bench, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(["--model", "UniGCN"])  # no class in the wheel
    assert e.value.code == 2 and "no DHG-Bench class for 'UniGCN'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        bench.main(["--model", "T-HyperGNN"])
    assert e.value.code == 2 and "Python's random" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        bench.main(["--model", "DPHGNN", "--epochs", "0"])
    assert e.value.code == 2 and "--epochs must be >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        bench.main(["--model", "DPHGNN", "--dhgbench", str(tmp_path / "absent")])
    assert e.value.code == 2 and "pip install --no-deps --target" in capsys.readouterr().err


#: DHG-Bench's DPHGNN state (wheel 0.1.2, its Cora config: dff_num_layers 1, 1,433 features, 7 classes), key -> shape
_DPHGNN_REFERENCE_STATE = {
    **{f"taa_layer.{g}_layer.convs.{i}.{p}": s for g in ("cg", "hg", "sg")
       for i, (w, b) in enumerate((((1433, 64), (64,)), ((64, 256), (256,)))) for p, s in (("weight", w), ("bias", b))},
    **{f"taa_layer.taa_spatial_layer.{k}": s for k, s in (
        ("hyp_proj.weight", (64, 256)), ("hyp_proj.bias", (64,)), ("star_proj.weight", (64, 256)),
        ("star_proj.bias", (64,)), ("clique_proj.weight", (64, 256)), ("clique_proj.bias", (64,)),
        ("MHA.in_proj_weight", (192, 64)), ("MHA.in_proj_bias", (192,)), ("MHA.out_proj.weight", (64, 64)),
        ("MHA.out_proj.bias", (64,)))},
    **{f"taa_layer.spectral_net.W_{v}.{p}": s for v in ("hyp", "cg", "sg") for p, s in (("weight", (256, 256)),
                                                                                         ("bias", (256,)))},
    **{f"taa_layer.taa_spectral_layer.{k}": s for k, s in (
        ("hyp_proj.weight", (64, 256)), ("hyp_proj.bias", (64,)), ("star_proj.weight", (64, 256)),
        ("star_proj.bias", (64,)), ("clique_proj.weight", (64, 256)), ("clique_proj.bias", (64,)),
        ("MHA.in_proj_weight", (192, 64)), ("MHA.in_proj_bias", (192,)), ("MHA.out_proj.weight", (64, 64)),
        ("MHA.out_proj.bias", (64,)))},
    "spectral_layer.W.weight": (64, 2866), "spectral_layer.W.bias": (64,), "fc.weight": (64, 192), "fc.bias": (64,),
    "dff_layer.convs.0.W_x.weight": (64, 64), "dff_layer.convs.0.W_x.bias": (64,),
    "dff_layer.convs.0.W_vertex.weight": (64, 64), "dff_layer.convs.0.W_vertex.bias": (64,),
    "dff_layer.convs.0.atten_vertex.weight": (1, 64), "dff_layer.convs.0.theta_e2v.weight": (64, 320),
    "dff_layer.convs.0.theta_e2v.bias": (64,), "dff_layer.convs.1.W.weight": (7, 64), "dff_layer.convs.1.W.bias": (7,),
}


def test_dphgnn_weights_copy_by_name_onto_the_tensors_that_play_their_part():
    """The copied-weights start of ``training_stability`` and ``epoch_time``'s output check: every tensor of the
    reference's DPHGNN lands on ours (strict load), each where it acts, e.g. the TAA projection the reference calls
    ``star_proj``, which it applies to the clique view, on our key map ``k``. Matching by shape paired the three
    alike projections wrongly (an output difference of 0.28 on copied weights, taken for the HyperGCN projection)."""
    import torch

    dr, wc = load_script("dhgbench_reference"), load_script("weight_copy")
    source = {k: torch.randn(s) for k, s in _DPHGNN_REFERENCE_STATE.items()}

    class Reference(torch.nn.Module):
        def state_dict(self, *args, **kwargs):
            return dict(source)

    ours = dr.build_ours("DPHGNN", 1433, 7, 0)
    assert wc.copy_by_name(Reference(), ours, **wc.KEY_MAPS["DPHGNN"]) == (len(source), 0)
    state = ours.state_dict()
    for theirs, mine in (("taa_layer.taa_spatial_layer.star_proj.weight", "taa_spatial.k.weight"),
                         ("taa_layer.taa_spectral_layer.clique_proj.bias", "taa_spectral.v.bias"),
                         ("taa_layer.spectral_net.W_cg.weight", "smooth.1.weight"),
                         ("taa_layer.hg_layer.convs.1.bias", "gcn_hypergcn.biases.1"),
                         ("dff_layer.convs.1.W.weight", "out.weight")):
        assert torch.equal(state[mine], source[theirs]), mine
