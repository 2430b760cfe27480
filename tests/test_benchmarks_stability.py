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
