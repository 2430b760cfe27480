"""HJRL (issue 12): the embeddings against DHG-Bench's dense-incidence computation, the reconstruction loss (exact,
tiled, sampled) against dense BCE with its weighting in the training gradient, and the faster inputs (sparse features
kept sparse, full hyperedge rows as a vector, the fused bias-ReLU-dropout), values and gradients."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from hnn_toys import SEEDS, dense_h, dense_hjrl_reconstruction, inv, mostly_zero_features, random_hypergraph
from hypergvl.models.nn import build_model
from hypergvl.models.nn.sparse import Incidence


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/models/conftest.py


# ------------------------------------------------------------------------------------------------- exact computation

def naive_hjrl(model, x, hei, n, m):
    """DHG-Bench's HJRL with a dense N x M incidence H_ini and a Python loop for the hyperedge features."""
    h = dense_h(hei, n, m)
    dv, de = h.sum(1), h.sum(0)
    hht = torch.diag(inv(dv, 0.5)) @ h @ torch.diag(inv(de)) @ h.t() @ torch.diag(inv(dv, 0.5))
    hn = torch.diag(inv(dv, 0.5)) @ h @ torch.diag(inv(de))
    hth = torch.diag(inv(de, 0.5)) @ h.t() @ torch.diag(inv(dv)) @ h @ torch.diag(inv(de, 0.5))
    htn = torch.diag(inv(de, 0.5)) @ h.t() @ torch.diag(inv(dv))
    y = torch.stack([(x[h[:, j] > 0].sum(0) != 0).double() for j in range(m)])
    xx = x / x.sum(1, keepdim=True)
    y = y * inv(y.sum(1, keepdim=True))
    for i, (lin, b) in enumerate(zip(model.lins, model.biases)):
        w = lin.weight.double().t()
        act = torch.relu if i < len(model.lins) - 1 else (lambda t: F.leaky_relu(t, 0.01))
        xx, y = act(hht @ xx @ w + b) + act(hn @ y @ w + b), act(htn @ xx @ w + b) + act(hth @ y @ w + b)
    return xx, y


@pytest.mark.parametrize("seed", SEEDS)
def test_hjrl_equals_the_dense_incidence_computation(seed):
    _, hei, n = random_hypergraph(seed)
    m = int(hei[1].max()) + 1
    torch.manual_seed(seed)
    model = build_model("HJRL", in_channels=4, hidden_channels=6, out_channels=3, num_layers=3).double().eval()
    x = torch.rand(n, 4, dtype=torch.float64) * (torch.rand(n, 4) < 0.5)
    x[:, 0] = 1.0  # no zero row, so the row normalisation is defined
    with torch.no_grad():
        ours = model.embed(x, hei)
    for a, b in zip(ours, naive_hjrl(model, x, hei, n, m)):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("style", ["paper", "dhgbench"])
def test_hjrl_reconstruction_loss_equals_dense_bce(style, monkeypatch):
    import hypergvl.models.nn.hjrl as hj
    from hypergvl.models.nn.sparse import Incidence
    _, hei, n = random_hypergraph(7)
    m = int(hei[1].max()) + 1
    g = torch.Generator().manual_seed(0)
    xo = torch.randn(n, 3, dtype=torch.float64, generator=g, requires_grad=True)
    yo = torch.randn(m, 3, dtype=torch.float64, generator=g, requires_grad=True)
    h = dense_h(hei, n, m)
    expected = dense_hjrl_reconstruction(xo, yo, h, style)
    grads = torch.autograd.grad(expected, (xo, yo))
    monkeypatch.setattr(hj, "_CHUNK_ELEMENTS", 2 * m)  # two rows per chunk
    ours = hj.hjrl_reconstruction_loss(xo, yo, Incidence(hei, n, m, torch.float64), style)
    torch.testing.assert_close(ours, expected)
    for a, b in zip(torch.autograd.grad(ours, (xo, yo)), grads):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("style", ["paper", "dhgbench"])
def test_hjrl_training_gradient_includes_the_weighted_reconstruction_loss(style):
    from hypergvl.models.nn.hjrl import hjrl_reconstruction_loss
    _, hei, n = random_hypergraph(3)
    x = torch.rand(n, 4, dtype=torch.float64) + 0.1
    torch.manual_seed(0)
    model = build_model("HJRL", in_channels=4, hidden_channels=6, out_channels=3, dropout=0.0,
                        reconstruction_weight=0.7, reconstruction=style).double().train()
    out = model(x, hei)
    out.square().sum().backward()
    ours = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    h, y = model.embed(x, hei)
    torch.testing.assert_close(out, h)  # the forward value is unchanged
    inc = model.incidence(x, hei, None)
    (h.square().sum() + 0.7 * hjrl_reconstruction_loss(h, y, inc, style)).backward()
    for a, p in zip(ours, model.parameters()):
        torch.testing.assert_close(a, p.grad)
    model.zero_grad()
    model.eval()(x, hei).square().sum().backward()  # evaluation adds nothing
    assert not all(torch.allclose(a, p.grad) for a, p in zip(ours, model.parameters()))


# -------------------------------------------------------------------------------------------- sampled reconstruction

@pytest.mark.parametrize("style", ["paper", "dhgbench"])
def test_hjrl_sampled_reconstruction_with_every_pair_once_is_the_exact_loss(style):
    from hypergvl.models.nn.hjrl import hjrl_reconstruction_loss

    edges, hei, n = random_hypergraph(1)
    m = len(edges)
    g = torch.Generator().manual_seed(1)
    xo = torch.randn(n, 3, generator=g, dtype=torch.float64, requires_grad=True)
    yo = torch.randn(m, 3, generator=g, dtype=torch.float64, requires_grad=True)
    inc = Incidence(hei, n, m, torch.float64)
    exact = hjrl_reconstruction_loss(xo, yo, inc, style)
    rows, cols = torch.arange(n).repeat_interleave(m), torch.arange(m).repeat(n)
    order = torch.randperm(n * m, generator=g)
    sampled = hjrl_reconstruction_loss(xo, yo, inc, style, (rows[order], cols[order]))
    torch.testing.assert_close(sampled, exact)
    for a, b in zip(torch.autograd.grad(sampled, (xo, yo)), torch.autograd.grad(exact, (xo, yo))):
        torch.testing.assert_close(a, b)


def test_hjrl_sampled_reconstruction_is_unbiased():
    """The mean of many K-pair estimates lies within 4 standard errors of the exact loss."""
    from hypergvl.models.nn.hjrl import hjrl_reconstruction_loss

    edges, hei, n = random_hypergraph(2)
    m = len(edges)
    g = torch.Generator().manual_seed(2)
    xo, yo = torch.randn(n, 3, generator=g, dtype=torch.float64), torch.randn(m, 3, generator=g, dtype=torch.float64)
    inc = Incidence(hei, n, m, torch.float64)
    exact = float(hjrl_reconstruction_loss(xo, yo, inc))
    draws = torch.tensor([float(hjrl_reconstruction_loss(
        xo, yo, inc, pairs=(torch.randint(n, (8,), generator=g), torch.randint(m, (8,), generator=g))))
        for _ in range(3000)])
    assert abs(float(draws.mean()) - exact) < 4 * float(draws.std()) / math.sqrt(len(draws))
    assert float(draws.std()) > 0  # a real estimate, not the exact sum


def test_hjrl_reconstruction_samples_option_uses_that_many_random_pairs_per_step():
    from hypergvl.models.nn.hjrl import hjrl_reconstruction_loss

    edges, hei, n = random_hypergraph(3)
    x = torch.rand(n, 4, dtype=torch.float64) + 0.1
    torch.manual_seed(0)
    model = build_model("HJRL", in_channels=4, hidden_channels=6, out_channels=3, dropout=0.0,
                        reconstruction_weight=0.7, reconstruction_samples=32).double().train()
    torch.manual_seed(5)
    model(x, hei).square().sum().backward()
    ours = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    h, y = model.embed(x, hei)
    torch.manual_seed(5)  # with dropout 0 the forward draws the pairs and nothing else
    pairs = (torch.randint(n, (32,)), torch.randint(len(edges), (32,)))
    inc = model.incidence(x, hei, None)
    (h.square().sum() + 0.7 * hjrl_reconstruction_loss(h, y, inc, "paper", pairs)).backward()
    for a, p in zip(ours, model.parameters()):
        torch.testing.assert_close(a, p.grad)
    with pytest.raises(ValueError):
        build_model("HJRL", in_channels=4, hidden_channels=6, out_channels=3, reconstruction_samples=-1)


# ------------------------------------------------------------------------------------------------- faster evaluation

def naive_hjrl_inputs(x: torch.Tensor, hei: torch.Tensor, n: int, m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """HJRL's row-normalised node features and hyperedge indicators 1[sum_{v in e} x_v != 0], by a loop."""
    h = dense_h(hei, n, m)
    y = torch.stack([(x[h[:, j] > 0].sum(0) != 0).double() for j in range(m)])
    return x * inv(x.sum(1, keepdim=True)), y * inv(y.sum(1, keepdim=True))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hjrl_sparse_features_stay_sparse_and_equal_the_dense_inputs(seed):
    _, hei, n = random_hypergraph(seed, num_nodes=10, num_edges=7)
    m = int(hei[1].max()) + 1
    x = mostly_zero_features(n, 5, seed)
    members = hei[0][hei[1] == 1]
    if members.numel() >= 2:  # a hyperedge whose members' features cancel: its indicator is 0 there
        x[members[0], 4], x[members[1], 4] = 1.5, -1.5
        x[members[2:], 4] = 0.0
    torch.manual_seed(seed)
    model = build_model("HJRL", in_channels=5, hidden_channels=6, out_channels=3, num_layers=2).double()
    inc = model.incidence(x, hei, m)
    xs, ys = model._inputs(inc, x.to_sparse_csr())
    xd, yd = naive_hjrl_inputs(x, hei, n, m)
    torch.testing.assert_close(xs.to_dense(), xd)
    torch.testing.assert_close(ys.to_dense(), yd)
    assert ys.nnz == int((yd != 0).sum())  # only the pattern is stored
    model.train()
    outs, grads = [], []
    for inp in (x, x.to_sparse_csr(), x.to_sparse()):
        model.zero_grad()
        torch.manual_seed(5)  # the same dropout masks
        out = model(inp, hei, m)
        out.square().sum().backward()
        outs.append(out.detach())
        grads.append([p.grad.clone() for p in model.parameters()])
    for out, grad in zip(outs[1:], grads[1:]):
        torch.testing.assert_close(out, outs[0])
        for a, b in zip(grad, grads[0]):
            torch.testing.assert_close(a, b)


@pytest.mark.parametrize("style", ["paper", "dhgbench"])
@pytest.mark.parametrize("tiles", [(1 << 20, 4096), (6, 3), (1, 1)])
def test_hjrl_tiled_reconstruction_equals_dense_bce_with_gradients(style, tiles, monkeypatch):
    import hypergvl.models.nn.hjrl as hj
    _, hei, n = random_hypergraph(4, num_nodes=11, num_edges=8)
    m = int(hei[1].max()) + 1
    g = torch.Generator().manual_seed(1)
    xo = torch.randn(n, 3, dtype=torch.float64, generator=g, requires_grad=True)
    yo = torch.randn(m, 3, dtype=torch.float64, generator=g, requires_grad=True)
    h = dense_h(hei, n, m)
    expected = dense_hjrl_reconstruction(xo, yo, h, style)
    grads = torch.autograd.grad(expected, (xo, yo))
    monkeypatch.setattr(hj, "_CHUNK_ELEMENTS", tiles[0])
    monkeypatch.setattr(hj, "_COLUMN_BLOCK", tiles[1])  # (6, 3): 3 x 2 tiles of a 11 x 8 grid, uneven edges
    ours = hj.hjrl_reconstruction_loss(xo, yo, Incidence(hei, n, m, torch.float64), style)
    torch.testing.assert_close(ours, expected)
    for a, b in zip(torch.autograd.grad(ours, (xo, yo)), grads):
        torch.testing.assert_close(a, b)
    with torch.no_grad():  # without gradients the same value
        torch.testing.assert_close(hj.hjrl_reconstruction_loss(xo, yo, Incidence(hei, n, m, torch.float64), style),
                                   expected)


def test_hjrl_all_pairs_sum_is_not_the_positives_only():
    """The tiled sum covers every pair once: dropping one tile changes it (the test above could not tell a
    sum over a wrong grid from the right one if every score were equal)."""
    from hypergvl.models.nn.hjrl import _AllPairsSoftplus
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(7, 2, dtype=torch.float64, generator=g), torch.randn(5, 2, dtype=torch.float64, generator=g)
    total = _AllPairsSoftplus.apply(a, b, False)
    torch.testing.assert_close(total, F.softplus(a @ b.t()).sum())
    assert not torch.allclose(total, F.softplus(a[:-1] @ b.t()).sum())


@pytest.mark.parametrize("row_normalize", [True, False])
def test_hjrl_dense_features_with_full_hyperedge_support_need_no_m_by_f_input(row_normalize, monkeypatch):
    import hypergvl.models.nn.hjrl as hj
    """Dense real-valued features: every hyperedge indicator is all ones (or all zeros for an empty hyperedge),
    so Y = u 1^T / F is kept as a vector; the outputs and gradients equal the dense-H computation."""
    from hypergvl.models.nn.hjrl import _FullRows
    _, hei, n = random_hypergraph(2, num_nodes=10, num_edges=6)
    m = int(hei[1].max()) + 2  # one hyperedge without members
    x = torch.randn(n, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0)).abs() + 0.1
    torch.manual_seed(0)
    model = build_model("HJRL", in_channels=5, hidden_channels=6, out_channels=3, dropout=0.0,
                        row_normalize=row_normalize).double()
    inc = model.incidence(x, hei, m)
    xs, ys = model._inputs(inc, x)
    assert isinstance(ys, _FullRows)
    xd, yd = naive_hjrl_inputs(x, hei, n, m)
    if not row_normalize:
        xd, yd = x, (yd != 0).double()
    torch.testing.assert_close(ys.to_dense(), yd)
    w = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    torch.testing.assert_close(ys @ w, yd @ w)
    torch.testing.assert_close(torch.autograd.grad((ys @ w).square().sum(), w)[0],
                               torch.autograd.grad((yd @ w).square().sum(), w)[0])
    x_mixed = x.clone()
    x_mixed[hei[0][hei[1] == 2], 1] = 0.0  # a hyperedge without feature 1: a sparse row beside the full ones
    x_mixed[0, 3], x_mixed[1, 3] = 1.0, -1.0  # and an exact cancellation wherever nodes 0 and 1 meet
    mixed = model._inputs(model.incidence(x_mixed, hei, m), x_mixed)[1]
    assert isinstance(mixed, _FullRows) and mixed.rest is not None
    yd_mixed = naive_hjrl_inputs(x_mixed, hei, n, m)[1]
    if not row_normalize:
        yd_mixed = (yd_mixed != 0).double()
    torch.testing.assert_close(mixed.to_dense(), yd_mixed)
    torch.testing.assert_close(mixed @ w, yd_mixed @ w)
    monkeypatch.setattr(hj, "_PARTIAL_ELEMENTS", 0)  # too many partial rows: the dense indicator
    assert isinstance(model._inputs(model.incidence(x_mixed, hei, m), x_mixed)[1], torch.Tensor)
    model.train()
    out = model(x, hei, m)
    h_ref, y_ref = xd, yd  # the same layers on the dense inputs
    for i, (lin, b) in enumerate(zip(model.lins, model.biases)):
        ops = model.incidence(x, hei, m).memo("hjrl", None)
        hw, yw = lin(h_ref), lin(y_ref)
        terms = [ops.vv @ hw, ops.ve @ yw, ops.ev @ hw, ops.ee @ yw]
        act = F.relu if i < len(model.lins) - 1 else (lambda t: F.leaky_relu(t, 0.01))
        terms = [act(t + b) for t in terms]
        h_ref, y_ref = terms[0] + terms[1], terms[2] + terms[3]
    torch.testing.assert_close(out, h_ref)


@pytest.mark.parametrize("p", [0.0, 0.5])
def test_hjrl_fused_bias_relu_dropout_equals_the_three_ops_with_gradients(p):
    from hypergvl.models.nn.dropout import dropout
    from hypergvl.models.nn.hjrl import _BiasReluDropout
    g = torch.Generator().manual_seed(2)
    t = torch.randn(9, 6, dtype=torch.float64, generator=g, requires_grad=True)
    b = torch.randn(6, dtype=torch.float64, generator=g, requires_grad=True)
    up = torch.randn(9, 6, dtype=torch.float64, generator=g)
    torch.manual_seed(4)
    expected = dropout(F.relu(t + b), p, True)
    g_expected = torch.autograd.grad((expected * up).sum(), (t, b))
    torch.manual_seed(4)  # the same mask
    out = _BiasReluDropout.apply(t, b, p)
    torch.testing.assert_close(out, expected)
    for a, c in zip(torch.autograd.grad((out * up).sum(), (t, b)), g_expected):
        torch.testing.assert_close(a, c)
    if p:
        assert (out == 0).sum() > (F.relu(t + b) == 0).sum()  # the mask dropped entries
