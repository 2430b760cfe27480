"""Issue 12, Performance: the faster computations of HJRL, DPHGNN and HyperND equal their naive dense formulas
(values and gradients) on random small hypergraphs with isolated nodes and order-1 hyperedges."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from hnn_toys import dense_h, dense_hjrl_reconstruction, inv, random_hypergraph  # noqa: E402
from hypergvl.models.nn import build_model
from hypergvl.models.nn.sparse import Incidence


def sparse_features(n: int, f: int, seed: int) -> torch.Tensor:
    """Float64 features, about 40 % nonzero, some negative, one all-zero row (node 0)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, f, dtype=torch.float64, generator=g) * (torch.rand(n, f, generator=g) < 0.4)
    x[0] = 0.0
    return x

# -------------------------------------------------------------------------------------------------- HJRL


def naive_hjrl_inputs(x: torch.Tensor, hei: torch.Tensor, n: int, m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """HJRL's row-normalised node features and hyperedge indicators 1[sum_{v in e} x_v != 0], by a loop."""
    h = dense_h(hei, n, m)
    y = torch.stack([(x[h[:, j] > 0].sum(0) != 0).double() for j in range(m)])
    return x * inv(x.sum(1, keepdim=True)), y * inv(y.sum(1, keepdim=True))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hjrl_sparse_features_stay_sparse_and_equal_the_dense_inputs(seed):
    _, hei, n = random_hypergraph(seed, num_nodes=10, num_edges=7)
    m = int(hei[1].max()) + 1
    x = sparse_features(n, 5, seed)
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

# ----------------------------------------------------------------------------------------------- HyperND


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
    x = sparse_features(n, 8, seed).abs()
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

# ------------------------------------------------------------------------------------------------ DPHGNN


def dense_attention(taa, query, key, value):
    """``nn.MultiheadAttention``'s math with the full N x N softmax, per head."""
    n, dim, heads = query.size(0), taa.out_proj.in_features, taa.heads
    ws, bs = taa.in_proj_weight.chunk(3), taa.in_proj_bias.chunk(3)
    q, k, v = (F.linear(lin(t), w, b).view(n, heads, -1).transpose(0, 1)
               for lin, t, w, b in zip((taa.q, taa.k, taa.v), (query, key, value), ws, bs))
    att = torch.softmax(q @ k.transpose(1, 2) / (dim // heads) ** 0.5, dim=-1)
    return taa.out_proj((att @ v).transpose(0, 1).reshape(n, dim))


def naive_dphgnn(model, x, hei, n, m):
    """DPHGNN's forward as DHG-Bench writes it, on dense operators: the spectral input [L_hgnn X || (L_sym X +
    L_rw X)/2] formed first, each view smoothed on all its rows, dense attention."""
    from hypergvl.models.nn.dphgnn import _Structure, hypergcn_graph
    inc = Incidence(hei, n, m, x.dtype)
    s = _Structure(inc, model.star)
    a_hyp, l_hyp = (op.to_dense() for op in hypergcn_graph(inc, x, model.mediators, model.seed))

    def gcn(net, a, pad=0):
        h = x
        for j, (w, b) in enumerate(zip(net.weights, net.biases)):
            hw = h @ w
            if j == 0 and pad:
                hw = torch.cat([hw, hw.new_zeros(pad, hw.size(1))])
            h = a @ hw + b
            if j < len(net.weights) - 1:
                h = torch.relu(h)
        return h
    z_c, z_h = gcn(model.gcn_clique, s.a_cg.to_dense()), gcn(model.gcn_hypergcn, a_hyp)
    z_s = gcn(model.gcn_star, s.a_sg.to_dense(), pad=m)
    spatial = dense_attention(model.taa_spatial, z_h, z_c, z_s[:n])
    sm = [lap @ lin(z) for lin, lap, z in zip(model.smooth, (l_hyp, s.l_cg.to_dense(), s.l_sg.to_dense()),
                                              (z_h, z_c, z_s))]
    spectral_taa = dense_attention(model.taa_spectral, sm[0], sm[1], sm[2][:n])
    spec_in = torch.cat([s.l_hgnn.to_dense() @ x, 0.5 * (s.l_sym.to_dense() @ x + s.l_rw.to_dense() @ x)], dim=1)
    h = model.fc(torch.cat([spatial, spectral_taa, torch.relu(model.spectral(spec_in))], dim=1))
    for conv in model.dff:
        h = conv(h, z_s[n:], inc, 0.0)
    return s.hgconv.to_dense() @ model.out(h)


@pytest.mark.parametrize("seed,star,heads", [(0, "undirected", 1), (1, "directed", 2), (2, "undirected", 2)])
@pytest.mark.parametrize("shared", [False, True], ids=["one-matrix-each", "shared-matrices"])
def test_dphgnn_equals_the_dense_reference_forward_with_gradients(seed, star, heads, shared, monkeypatch):
    import hypergvl.models.nn.dphgnn as dp
    if shared:  # the Yelp-scale form: each graph's matrix stored once, operators as scalings of it
        monkeypatch.setattr(dp, "_FUSE_ENTRIES", 0)
    _, hei, n = random_hypergraph(seed, num_nodes=11, num_edges=7, max_order=5)
    m = int(hei[1].max()) + 1
    x = sparse_features(n, 6, seed)
    torch.manual_seed(seed)
    model = build_model("DPHGNN", in_channels=6, hidden_channels=5, out_channels=3, num_layers=2, dropout=0.0,
                        expansion_dim=8, expansion_hidden=7, attention_dim=4, heads=heads, spectral_dim=5, fc_dim=6,
                        expansion_dropout=0.0, star=star).double().train()
    expected = naive_dphgnn(model, x, hei, n, m)
    (g_expected,) = [torch.autograd.grad(expected.square().sum(), list(model.parameters()))]
    for inp in (x, x.to_sparse_csr()):
        out = model(inp, hei, m)
        torch.testing.assert_close(out, expected)
        for a, b in zip(torch.autograd.grad(out.square().sum(), list(model.parameters())), g_expected):
            torch.testing.assert_close(a, b)


@pytest.mark.parametrize("shared", [False, True])
def test_dphgnn_star_node_rows_and_their_row_sums(shared, monkeypatch):
    import hypergvl.models.nn.dphgnn as dp
    if shared:
        monkeypatch.setattr(dp, "_FUSE_ENTRIES", 0)
    _, hei, n = random_hypergraph(5, num_nodes=10, num_edges=6)
    m = int(hei[1].max()) + 1
    for star in ("undirected", "directed"):
        s = dp._Structure(Incidence(hei, n, m, torch.float64), star)
        assert isinstance(s.a_sg, dp._Scaled) == shared and isinstance(s.l_cg, dp._Scaled) == shared
        lap = s.l_sg.to_dense()
        torch.testing.assert_close(s.l_sg_nodes.to_dense(), lap[:n])
        torch.testing.assert_close(s.l_sg_nodes_sum, lap[:n].sum(1, keepdim=True))


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
def test_dphgnn_dff_layer_equals_the_per_incidence_formula_with_gradients(seed, monkeypatch):
    """DFF by sparse products (no nnz x h tensor) against the gather/scatter form DHG-Bench writes."""
    import hypergvl.models.nn.dphgnn as dp
    from torch_geometric.utils import scatter, softmax
    _, hei, n = random_hypergraph(seed, num_nodes=12, num_edges=8, max_order=5)
    m = int(hei[1].max()) + 2  # and a hyperedge without members
    inc = Incidence(hei, n, m, torch.float64)
    torch.manual_seed(seed)
    conv = dp.DPHGNNConv(5, 4, 3, 0.2).double()
    x = torch.randn(n, 5, dtype=torch.float64, requires_grad=True)
    s_star = torch.randn(m, 3, dtype=torch.float64, requires_grad=True)
    v, e = hei
    feat = conv.w_v(x)
    alpha = softmax(F.leaky_relu(conv.att(feat)[v].squeeze(-1), 0.2), e, num_nodes=m)
    y = conv.theta(torch.cat([F.elu(scatter(feat[v] * alpha.unsqueeze(-1), e, 0, dim_size=m, reduce="sum")),
                              s_star], 1))
    expected = F.elu(scatter(y[e], v, 0, dim_size=n, reduce="mean")) + conv.w_x(x)
    inputs = [x, s_star, *conv.parameters()]
    g_expected = torch.autograd.grad(expected.square().sum(), inputs)
    monkeypatch.setattr(dp, "_BLOCK_ELEMENTS", 9)  # blocks of two incidences in the attention gradient
    out = conv(x, s_star, inc, 0.0)
    torch.testing.assert_close(out, expected)
    for a, b in zip(torch.autograd.grad(out.square().sum(), inputs), g_expected):
        torch.testing.assert_close(a, b)


def test_dphgnn_shared_structure_operators_equal_the_one_matrix_ones(monkeypatch):
    import hypergvl.models.nn.dphgnn as dp
    _, hei, n = random_hypergraph(8, num_nodes=12, num_edges=8, max_order=5)
    m = int(hei[1].max()) + 1
    inc = Incidence(hei, n, m, torch.float64)
    fused = dp._Structure(inc, "undirected")
    hyp = dp.hypergcn_graph(inc, sparse_features(n, 4, 0), True, 0)
    monkeypatch.setattr(dp, "_FUSE_ENTRIES", 0)
    shared = dp._Structure(inc, "undirected")
    z = torch.randn(n, 3, dtype=torch.float64)
    for name in ("a_cg", "l_cg", "l_hgnn", "l_sym", "l_rw"):
        assert isinstance(getattr(shared, name), dp._Scaled)
        torch.testing.assert_close(getattr(shared, name).to_dense(), getattr(fused, name).to_dense())
        torch.testing.assert_close(getattr(shared, name) @ z, getattr(fused, name) @ z)
    for a, b in zip(dp.hypergcn_graph(inc, sparse_features(n, 4, 0), True, 0), hyp):
        torch.testing.assert_close(a.to_dense(), b.to_dense())


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


@pytest.mark.parametrize("seed", [0, 1])
def test_hypernd_training_with_dropout_equals_the_mlp_on_the_limit(seed, monkeypatch):
    """Dropout 0.5 in training (same seed: the same masks as ``dropout`` on the limit) and a loss over
    some nodes (the live-rows backward of the decoder): the same output and gradients as the MLP on the limit."""
    from hypergvl.models.nn import live_rows
    monkeypatch.setattr(live_rows, "LIVE_MIN_WEIGHTS", 1)  # the toy maps are narrow: the live-rows backward anyway
    _, hei, n = random_hypergraph(seed, num_nodes=12, num_edges=5, max_order=5)
    m = int(hei[1].max()) + 1
    x = sparse_features(n, 8, seed).abs()
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
