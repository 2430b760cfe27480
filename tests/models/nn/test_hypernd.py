"""HyperND (issue 12): the diffusion against DHG-Bench's naive iteration, the label diffusion (``prepare`` with the
training labels) and its DHG-Bench feature-only option, and the faster evaluation (row-split products, column
blocks, the live-rows backward) against the MLP on the dense limit, values and gradients."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from hnn_toys import SEEDS, inv, make_task, mostly_zero_features, random_hypergraph
from hypergvl.models import tasks as T
from hypergvl.models.nn import build_model
from hypergvl.models.nn.sparse import Incidence


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/models/conftest.py


# ------------------------------------------------------------------------------------------------- exact computation

def naive_hypernd(x, hei, n, m, p, alpha, steps, tol, aggregate):
    """DHG-Bench's formulas with an explicit per-incidence nnz x F tensor (features non-negative)."""
    v, e = hei
    dv = torch.bincount(v, minlength=n).double()
    de = torch.bincount(e, minlength=m).double()

    def agg(values, index, size, counts):
        out = torch.zeros(size, values.size(1), dtype=torch.float64).index_add_(0, index, values)
        return out * inv(counts)[:, None] if aggregate == "mean" else out

    def v2e(z):
        s = agg((z[v] * inv(dv, 0.5)[v][:, None]) ** p, e, m, de)
        return (s * inv(de)[:, None]) ** (1.0 / p)

    def e2v(y):
        return agg(y[e], v, n, dv) * inv(dv, 0.5)[:, None]

    def phi(z):
        return 2.0 * v2e(z).pow(2).sum().sqrt()

    u = x / phi(x)
    f = u
    for _ in range(steps):
        g = (1 - alpha) * e2v(v2e(f)) + alpha * u
        last, f = f, g / phi(g)
        if torch.linalg.vector_norm(f - last) / torch.linalg.vector_norm(f) < tol:
            break
    return f


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("p,aggregate", [(1.0, "sum"), (2.0, "sum"), (3.0, "mean")])
def test_hypernd_diffusion_equals_the_naive_iteration(seed, p, aggregate):
    from hypergvl.models.nn.hypernd import hypernd_diffusion
    from hypergvl.models.nn.sparse import Incidence
    _, hei, n = random_hypergraph(seed)
    m = int(hei[1].max()) + 1
    x = torch.rand(n, 5, dtype=torch.float64)
    inc = Incidence(hei, n, m, torch.float64)
    for steps, tol in ((7, 0.0), (100, 1e-6)):
        ours, done = hypernd_diffusion(inc, x, p, 0.3, steps, tol, aggregate)
        assert torch.isfinite(ours).all()
        torch.testing.assert_close(ours, naive_hypernd(x, hei, n, m, p, 0.3, steps, tol, aggregate))
        assert done == steps if tol == 0.0 else done < steps
    ratio = ours[n - 1] / x[n - 1]  # the isolated node keeps its own (restart) features, rescaled
    torch.testing.assert_close(ratio, ratio[:1].expand_as(ratio))
    assert ratio[0] > 0


def test_hypernd_chunked_columns_equal_one_chunk(monkeypatch):
    import hypergvl.models.nn.hypernd as hnd
    from hypergvl.models.nn.sparse import Incidence
    _, hei, n = random_hypergraph(3)
    m = int(hei[1].max()) + 1
    x = torch.rand(n, 11, dtype=torch.float64)
    inc = Incidence(hei, n, m, torch.float64)
    whole, _ = hnd.hypernd_diffusion(inc, x, 2.0, 0.5, 20, 0.0, "sum")
    monkeypatch.setattr(hnd, "_CHUNK_ELEMENTS", 3 * n)  # 3 columns per chunk
    chunked, _ = hnd.hypernd_diffusion(inc, x, 2.0, 0.5, 20, 0.0, "sum")
    torch.testing.assert_close(chunked, whole)


def test_hypernd_is_finite_without_signal_and_computes_the_limit_once():
    _, hei, n = random_hypergraph(4)
    model = build_model("HyperND", in_channels=3, hidden_channels=4, out_channels=2).eval()
    with torch.no_grad():
        assert torch.isfinite(model(torch.zeros(n, 3), hei)).all()
        x = torch.rand(n, 3)
        first = model.diffuse(x, hei)
        assert model.diffuse(x, hei) is first  # cached per (x, structure)
    mean = build_model("HyperND", in_channels=3, hidden_channels=4, out_channels=2, aggregate="mean").eval()
    mean.load_state_dict(model.state_dict())
    with torch.no_grad():  # the option changes the diffusion only: same decoder on a different limit
        assert not torch.allclose(mean.diffuse(x, hei), first)
        torch.testing.assert_close(mean(x, hei), model.decoder(mean.diffuse(x, hei)))


# --------------------------------------------------------------------------------------------------- label diffusion

def test_hypernd_label_diffusion_diffuses_the_one_hot_training_labels_with_the_features():
    from hypergvl.models.nn.hypernd import hypernd_diffusion

    edges, hei, n = random_hypergraph(2)
    x = torch.rand(n, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    labels = torch.tensor([0, -1, 2, 1, -1, 0, -1, 2, -1])
    torch.manual_seed(0)
    model = build_model("HyperND", in_channels=4, hidden_channels=5, out_channels=3).double()
    model.prepare(x, hei, labels=labels, num_classes=3)
    assert model.decoder.lins[0].in_features == 4 + 3
    y = torch.zeros(n, 3, dtype=torch.float64)
    for v, c in enumerate(labels.tolist()):
        if c >= 0:
            y[v, c] = 1.0
    inc = Incidence(hei, n, len(edges), torch.float64)
    want, _ = hypernd_diffusion(inc, torch.cat([x, y], 1), model.p, model.alpha, model.steps, model.tol,
                                model.aggregate)
    torch.testing.assert_close(model.diffuse(x, hei), want)
    assert model.eval()(x, hei).shape == (n, 3)
    # with no training label the label columns are zero and the feature columns are the feature-only limit
    model.prepare(x, hei, labels=torch.full((n,), -1), num_classes=3)
    alone, _ = hypernd_diffusion(inc, x, model.p, model.alpha, model.steps, model.tol, model.aggregate)
    got = model.diffuse(x, hei)
    torch.testing.assert_close(got[:, :4], alone)
    assert (got[:, 4:] == 0).all()


def test_hypernd_label_diffusion_false_is_dhgbench_feature_only():
    edges, hei, n = random_hypergraph(3)
    x = torch.rand(n, 4)
    labels = torch.arange(n) % 3
    models = []
    for prepare in (False, True):
        torch.manual_seed(0)
        model = build_model("HyperND", in_channels=4, hidden_channels=5, out_channels=3, label_diffusion=False)
        if prepare:
            model.prepare(x, hei, labels=labels, num_classes=3)
        models.append(model.eval())
    assert models[1].known_labels is None and models[1].decoder.lins[0].in_features == 4
    with torch.no_grad():
        torch.testing.assert_close(models[0](x, hei), models[1](x, hei))
    with pytest.raises(ValueError, match="one entry per node"):
        build_model("HyperND", in_channels=4, hidden_channels=5, out_channels=3).prepare(x, hei, labels=labels[:-1])


def test_hypernd_node_task_diffuses_training_labels_only():
    from accelerate import Accelerator

    from hypergvl.models.config import TrainerConfig

    from hypergvl.models.trainer import train_one_run

    task = make_task("node")
    encoder = build_model("HyperND", in_channels=task.in_channels, hidden_channels=6, out_channels=task.out_channels)
    module = T.TaskModule(encoder, task.build_head())
    record = train_one_run(task, module, Accelerator(cpu=True), TrainerConfig(epochs=2, lr=0.01), 0, None,
                           progress=False)
    assert record["epochs_run"] == 2
    known = encoder.known_labels
    train = task.split["train"]
    assert known.shape == (task.x.size(0), task.out_channels) and known.sum() == train.numel()
    assert torch.equal(known[train].argmax(1), task.y[train])
    assert encoder.decoder.lins[0].in_features == task.in_channels + task.out_channels


# ------------------------------------------------------------------------------------------------- faster evaluation

@pytest.mark.parametrize("layout", ["mixed", "all-dense", "all-sparse"])
def test_hypernd_row_split_product_equals_the_dense_product_with_gradients(layout):
    from hypergvl.models.nn.hypernd import DiffusedFeatures
    g = torch.Generator().manual_seed(3)
    f = torch.randn(12, 10, dtype=torch.float64, generator=g)
    if layout != "all-dense":
        rows = slice(None) if layout == "all-sparse" else slice(0, 12, 2)
        f[rows] *= torch.rand(f[rows].shape, generator=g) < 0.2  # at most 1/4 full: multiplied from CSR
        f[rows, 2] = 0.5
        f[rows, 5:] = 0.0
        f[3] = 0.0  # a row without signal
    feats = DiffusedFeatures(f)
    assert (feats.sparse is None) == (layout == "all-dense")
    w = torch.randn(10, 4, dtype=torch.float64, generator=g, requires_grad=True)
    up = torch.randn(12, 4, dtype=torch.float64, generator=g)
    up[[0, 1, 4, 7, 8]] = 0.0  # rows outside the loss: skipped in the weight gradient
    out = feats @ w
    torch.testing.assert_close(out, f @ w)
    (grad,) = torch.autograd.grad((out * up).sum(), w)
    torch.testing.assert_close(grad, f.t() @ up)
    for zero in ([0, 1, 4, 7, 8], [2, 3, 5, 9, 10, 11], [0, 1, 4, 7, 8]):  # the kept rows follow the loss's rows
        up = torch.randn(12, 4, dtype=torch.float64, generator=g)
        up[zero] = 0.0
        (grad,) = torch.autograd.grad(((feats @ w) * up).sum(), w)
        torch.testing.assert_close(grad, f.t() @ up)
    with torch.no_grad():
        torch.testing.assert_close(feats @ w, f @ w)
    torch.testing.assert_close(feats.to_dense(), f)


@pytest.mark.parametrize("seed", [0, 1])
def test_hypernd_forward_and_training_gradient_equal_the_mlp_on_the_limit(seed):
    _, hei, n = random_hypergraph(seed, num_nodes=12, num_edges=5, max_order=5)
    m = int(hei[1].max()) + 1
    x = mostly_zero_features(n, 8, seed).abs()
    torch.manual_seed(seed)
    model = build_model("HyperND", in_channels=8, hidden_channels=6, out_channels=3, dropout=0.0).double().train()
    train = torch.arange(n) % 3 == 0
    out = model(x, hei, m)
    F.cross_entropy(out[train], torch.arange(n)[train] % 3).backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    limit = model.diffuse(x, hei, m)
    expected = model.decoder(limit.clone())  # a plain dense tensor: F.linear
    torch.testing.assert_close(out, expected)
    F.cross_entropy(expected[train], torch.arange(n)[train] % 3).backward()
    for a, p in zip(grads, model.parameters()):
        torch.testing.assert_close(a, p.grad)


@pytest.mark.parametrize("p", [1.0, 2.0])
def test_hypernd_propagate_by_column_blocks_equals_the_two_maps(p, monkeypatch):
    import hypergvl.models.nn.hypernd as hnd
    _, hei, n = random_hypergraph(6, num_nodes=10, num_edges=7)
    m = int(hei[1].max()) + 1
    maps = hnd.HyperNDDiffusion(Incidence(hei, n, m, torch.float64), p, "sum")
    z = torch.rand(n, 7, dtype=torch.float64)
    y = maps.v2e(z)
    monkeypatch.setattr(hnd, "_CHUNK_ELEMENTS", 2 * n)  # blocks of 2 columns, the last one of 1
    t, square = maps.propagate(z)
    torch.testing.assert_close(t, maps.e2v(y))
    torch.testing.assert_close(square, y.square().sum())


@pytest.mark.parametrize("seed", [0, 1])
def test_hypernd_training_with_dropout_equals_the_mlp_on_the_limit(seed, monkeypatch):
    """Dropout 0.5 in training (same seed: the same masks as ``dropout`` on the limit) and a loss over
    some nodes (the live-rows backward of the decoder): the same output and gradients as the MLP on the limit."""
    from hypergvl.models.nn import live_rows
    monkeypatch.setattr(live_rows, "LIVE_MIN_WEIGHTS", 1)  # the toy maps are narrow: the live-rows backward anyway
    _, hei, n = random_hypergraph(seed, num_nodes=12, num_edges=5, max_order=5)
    m = int(hei[1].max()) + 1
    x = mostly_zero_features(n, 8, seed).abs()
    torch.manual_seed(seed)
    model = build_model("HyperND", in_channels=8, hidden_channels=6, out_channels=3, dropout=0.5,
                        num_layers=3).double().train()
    train = torch.arange(n) % 3 == 0
    torch.manual_seed(5)
    out = model(x, hei, m)
    F.cross_entropy(out[train], torch.arange(n)[train] % 3).backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    limit = model.diffuse(x, hei, m)
    torch.manual_seed(5)
    expected = model.decoder(limit.clone())  # MLP.forward: F.linear and dropout.dropout
    torch.testing.assert_close(out, expected)
    F.cross_entropy(expected[train], torch.arange(n)[train] % 3).backward()
    for a, p in zip(grads, model.parameters()):
        torch.testing.assert_close(a, p.grad)
