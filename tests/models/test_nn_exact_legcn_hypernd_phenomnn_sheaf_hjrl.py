"""Exactness tests of LEGCN, HyperND, PhenomNN, SheafHyperGNN and HJRL (issue 12): each scalable rewrite equals
its naive dense formula on random small hypergraphs (with isolated nodes and order-1 hyperedges), and each
DHG-Bench compatibility option changes exactly what it names."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from hnn_toys import dense_h, dense_hjrl_reconstruction, inv
from hypergvl.models.nn import build_model

torch.set_default_dtype(torch.float32)


def random_hypergraph(seed: int, num_nodes: int = 9, num_edges: int = 6) -> tuple[torch.Tensor, int]:
    """Distinct incidences; hyperedge 0 has order 1; the last node is isolated; sizes 1..4."""
    g = torch.Generator().manual_seed(seed)
    edges = [[int(torch.randint(0, num_nodes - 1, (1,), generator=g))]]
    for _ in range(num_edges - 1):
        size = int(torch.randint(1, 5, (1,), generator=g))
        edges.append(sorted(torch.randperm(num_nodes - 1, generator=g)[:size].tolist()))
    hei = torch.tensor([[v for e in edges for v in e], [j for j, e in enumerate(edges) for _ in e]])
    return hei, num_nodes


SEEDS = [0, 1, 2]

# ------------------------------------------------------------------------------------------------- LEGCN


def naive_legcn(model, x, hei, n, line_graph=True):
    """A GCN on the explicitly built line graph (dense P x P), features copied to incidences, mean back."""
    v, e = hei
    p = v.numel()
    if line_graph:
        a = (model.vertex_weight * (v[:, None] == v[None, :]).double()
             + model.edge_weight * (e[:, None] == e[None, :]).double())
        a.fill_diagonal_(1.0)
    else:
        a = torch.eye(p, dtype=torch.float64)
    d = a.sum(1).pow(-0.5)
    a_hat = d[:, None] * a * d[None, :]
    z = x.double()[v]
    for i, (lin, bias) in enumerate(zip(model.lins, model.biases)):
        z = a_hat @ (z @ lin.weight.double().t()) + bias.double()
        if i < len(model.lins) - 1:
            z = torch.relu(z)
    out = torch.zeros(n, z.size(1), dtype=torch.float64).index_add_(0, v, z)
    return out * inv(torch.bincount(v, minlength=n).double())[:, None]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weights", [(1.0, 1.0), (0.3, 2.0)])
def test_legcn_equals_gcn_on_the_explicit_line_graph(seed, weights):
    hei, n = random_hypergraph(seed)
    torch.manual_seed(seed)
    model = build_model("LEGCN", in_channels=4, hidden_channels=6, out_channels=3, num_layers=3,
                        vertex_weight=weights[0], edge_weight=weights[1]).double().eval()
    x = torch.randn(n, 4, dtype=torch.float64)
    with torch.no_grad():
        out = model(x, hei)
    torch.testing.assert_close(out, naive_legcn(model, x, hei, n))
    assert torch.all(out[n - 1] == 0)  # the isolated node has no line node


def test_legcn_isolated_expansion_removes_exactly_the_line_graph_edges():
    hei, n = random_hypergraph(5)
    torch.manual_seed(0)
    line = build_model("LEGCN", in_channels=4, hidden_channels=6, out_channels=3).double().eval()
    iso = build_model("LEGCN", in_channels=4, hidden_channels=6, out_channels=3, expansion="isolated").double()
    iso.load_state_dict(line.state_dict())
    iso.eval()
    x = torch.randn(n, 4, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(iso(x, hei), naive_legcn(iso, x, hei, n, line_graph=False))
        assert not torch.allclose(iso(x, hei), line(x, hei))
    # with the broken expansion, a 1-layer LEGCN is a linear map of each node's own features
    one = build_model("LEGCN", in_channels=4, hidden_channels=6, out_channels=3, num_layers=1,
                      expansion="isolated").double().eval()
    with torch.no_grad():
        expected = x @ one.lins[0].weight.t() + one.biases[0]
        covered = torch.bincount(hei[0], minlength=n) > 0
        torch.testing.assert_close(one(x, hei)[covered], expected[covered])

# ----------------------------------------------------------------------------------------------- HyperND


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
    hei, n = random_hypergraph(seed)
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
    hei, n = random_hypergraph(3)
    m = int(hei[1].max()) + 1
    x = torch.rand(n, 11, dtype=torch.float64)
    inc = Incidence(hei, n, m, torch.float64)
    whole, _ = hnd.hypernd_diffusion(inc, x, 2.0, 0.5, 20, 0.0, "sum")
    monkeypatch.setattr(hnd, "_CHUNK_ELEMENTS", 3 * n)  # 3 columns per chunk
    chunked, _ = hnd.hypernd_diffusion(inc, x, 2.0, 0.5, 20, 0.0, "sum")
    torch.testing.assert_close(chunked, whole)


def test_hypernd_is_finite_without_signal_and_computes_the_limit_once():
    hei, n = random_hypergraph(4)
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

# ---------------------------------------------------------------------------------------------- PhenomNN


def naive_phenomnn(model, x, hei, n):
    """Dense A_beta, A_gamma, D_beta, D_gamma exactly as DHG-Bench's scipy preprocessing builds them."""
    m = int(hei[1].max()) + 1
    h = dense_h(hei, n, m)
    eye = torch.eye(n, dtype=torch.float64)
    c1 = h @ h.t() + eye
    b = torch.diag(inv(h.sum(0)))
    c2 = h @ b @ h.t() + eye
    a_beta = c1 / torch.outer(c1.sum(1).sqrt(), c1.sum(1).sqrt())
    a_gamma = c2 / torch.outer(c2.sum(1).sqrt(), c2.sum(1).sqrt())
    q = model.lambda0 * a_beta.sum(1) + model.lambda1 * a_gamma.sum(1) + 1.0
    y0 = torch.relu(model.encoder(x))
    y = y0
    for _ in range(model.steps):
        y = torch.relu((1 - model.alpha) * y + model.alpha * (model.lambda0 * a_beta @ y + model.lambda1 * a_gamma @ y
                                                                + y0) / q[:, None])
    return model.decoder(y)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kwargs", [{}, {"lambda0": 10.0, "lambda1": 0.5, "alpha": 0.3, "encoder_layers": 2,
                                         "decoder_layers": 2, "num_layers": 5}])
def test_phenomnn_equals_dense_operators(seed, kwargs):
    hei, n = random_hypergraph(seed)
    torch.manual_seed(seed)
    model = build_model("PhenomNN", in_channels=4, hidden_channels=6, out_channels=3, **kwargs).double().eval()
    x = torch.randn(n, 4, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(model(x, hei), naive_phenomnn(model, x, hei, n))


def test_phenomnn_large_hyperedges_use_the_factored_operator():
    """Hyperedges of 40 nodes: the operators stay as H and H^T (no clique expansion) and agree with dense."""
    n = 45
    hei = torch.stack([torch.cat([torch.arange(40), torch.arange(5, 45)]), torch.repeat_interleave(torch.arange(2), 40)])
    torch.manual_seed(0)
    model = build_model("PhenomNN", in_channels=3, hidden_channels=4, out_channels=2, num_layers=3).double().eval()
    x = torch.randn(n, 3, dtype=torch.float64)
    with torch.no_grad():
        out = model(x, hei)
        assert len(model.incidence(x, hei, None).memo("phenomnn", lambda: None).a_beta.factors) == 2
        torch.testing.assert_close(out, naive_phenomnn(model, x, hei, n))

# ----------------------------------------------------------------------------------------- SheafHyperGNN


def naive_sheaf(z, maps, hei, n, m, normalisation):
    """DHG-Bench's construction: H_F (Nd x Md) as a sparse matrix, M = C H_F B^-1 H_F^T by sparse products,
    P = I - 2 blockdiag(M) + M on the flattened stalks."""
    d, f = z.shape[1], z.shape[2]
    v, e = hei
    rows = (v[:, None] * d + torch.arange(d)).reshape(-1)
    cols = (e[:, None] * d + torch.arange(d)).reshape(-1)
    hf = torch.sparse_coo_tensor(torch.stack([rows, cols]), maps.reshape(-1), (n * d, m * d)).coalesce()
    dv = torch.bincount(v, minlength=n).double().repeat_interleave(d)
    de = torch.bincount(e, minlength=m).double().repeat_interleave(d)
    c = inv(dv, 0.5) if normalisation == "sym" else inv(dv)
    mm = torch.sparse.mm(torch.sparse.mm(hf, torch.diag(inv(de)).to_sparse()), hf.t().coalesce()).to_dense()
    mm = c[:, None] * mm
    node_of = torch.arange(n * d) // d
    block = mm * (node_of[:, None] == node_of[None, :])
    p = torch.eye(n * d, dtype=torch.float64) - 2 * block + mm
    zf = z.reshape(n * d, f)
    if normalisation == "sym":
        zf = zf * inv(dv, 0.5)[:, None]
    return (p @ zf).reshape(n, d, f)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("normalisation", ["sym", "rw"])
def test_sheaf_diffusion_by_scatters_equals_the_sparse_matrix_form(seed, normalisation):
    from hypergvl.models.nn.sparse import Incidence
    from hypergvl.models.nn.sheafhypergnn import sheaf_diffusion
    hei, n = random_hypergraph(seed)
    m = int(hei[1].max()) + 1
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(n, 3, 4, dtype=torch.float64, generator=g)
    maps = torch.rand(hei.size(1), 3, dtype=torch.float64, generator=g)
    ours = sheaf_diffusion(Incidence(hei, n, m, torch.float64), z, maps, normalisation)
    torch.testing.assert_close(ours, naive_sheaf(z, maps, hei, n, m, normalisation))


def test_sheaf_restriction_grad_false_only_stops_the_maps_gradient():
    hei, n = random_hypergraph(2)
    torch.manual_seed(0)
    learned = build_model("SheafHyperGNN", in_channels=4, hidden_channels=5, out_channels=3, stalk_dim=3)
    fixed = build_model("SheafHyperGNN", in_channels=4, hidden_channels=5, out_channels=3, stalk_dim=3,
                        restriction_grad=False)
    fixed.load_state_dict(learned.state_dict())
    x = torch.randn(n, 4)
    learned.eval(), fixed.eval()
    out_l, out_f = learned(x, hei), fixed(x, hei)
    torch.testing.assert_close(out_f, out_l)  # same forward
    out_l.square().sum().backward()
    out_f.square().sum().backward()
    for (name, p_l), (_, p_f) in zip(learned.named_parameters(), fixed.named_parameters()):
        if name.startswith("builders."):
            assert p_f.grad is None and p_l.grad is not None and p_l.grad.abs().sum() > 0, name
        elif name.startswith(("norms.0", "lins.0", "lin_in")):  # upstream of a builder
            assert p_f.grad is not None and not torch.allclose(p_f.grad, p_l.grad), name
        else:
            assert p_f.grad is not None, name


def test_sheaf_hyperedge_features_are_member_means():
    hei, n = random_hypergraph(1)
    torch.manual_seed(0)
    model = build_model("SheafHyperGNN", in_channels=4, hidden_channels=5, out_channels=3, num_layers=1,
                        input_norm=False).double().eval()
    x = torch.randn(n, 4, dtype=torch.float64)
    m = int(hei[1].max()) + 1
    h = dense_h(hei, n, m)
    e_raw = (h.t() @ x) / h.sum(0)[:, None]
    hx = model.lin_in(x).view(n, 2, 5)
    he = model.lin_in(e_raw).view(m, 2, 5)
    from hypergvl.models.nn.sparse import Incidence
    from hypergvl.models.nn.sheafhypergnn import sheaf_diffusion
    inc = Incidence(hei, n, m, torch.float64)
    maps = model.builders[0](inc, hx, he)
    expected = sheaf_diffusion(inc, model.lins[0](model.norms[0](hx)), maps, "sym") + model.biases[0]
    with torch.no_grad():
        torch.testing.assert_close(model(x, hei), model.lin_out(expected.reshape(n, -1)))

# -------------------------------------------------------------------------------------------------- HJRL


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
    hei, n = random_hypergraph(seed)
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
    hei, n = random_hypergraph(7)
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
    hei, n = random_hypergraph(3)
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

# ------------------------------------------------------------------------ other settings and bad arguments

VARIANTS = [
    ("LEGCN", {"expansion": "isolated", "num_layers": 3}),
    ("LEGCN", {"vertex_weight": 0.0, "edge_weight": 2.5}),
    ("HyperND", {"p": 1.0, "alpha": 0.0, "aggregate": "mean", "num_layers": 1}),
    ("HyperND", {"p": 3.0, "steps": 3, "tol": 0.0, "normalization": "none"}),
    ("PhenomNN", {"lambda0": 0.0, "lambda1": 5.0, "alpha": 0.5, "num_layers": 2, "encoder_layers": 2}),
    ("SheafHyperGNN", {"normalisation": "rw", "stalk_dim": 3, "input_norm": False, "num_layers": 3}),
    ("SheafHyperGNN", {"restriction_grad": False, "num_layers": 1}),
    ("HJRL", {"reconstruction": "dhgbench", "num_layers": 1, "row_normalize": False}),
    ("HJRL", {"reconstruction_weight": 0.0, "num_layers": 3}),
]


@pytest.mark.parametrize("name,kwargs", VARIANTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(VARIANTS)])
def test_other_settings_forward_backward_sparse_and_permutation(name, kwargs):
    hei, n = random_hypergraph(11)
    torch.manual_seed(0)
    model = build_model(name, in_channels=4, hidden_channels=6, out_channels=3, **kwargs)
    x = torch.rand(n, 4) * (torch.rand(n, 4) < 0.7)
    x[:, 0] = 1.0
    out = model(x.to_sparse_csr(), hei)
    assert out.shape == (n, 3) and torch.isfinite(out).all()
    out.square().sum().backward()
    frozen = {k for k, p in model.named_parameters() if p.grad is None}
    assert all(k.startswith("builders.") for k in frozen) and bool(frozen) == (kwargs.get("restriction_grad") is False)
    model.eval()
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(2))
    relabel = torch.argsort(perm)
    with torch.no_grad():
        base = model(x, hei)
        torch.testing.assert_close(model(x.to_sparse(), hei), base, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(model(x[perm], torch.stack([relabel[hei[0]], hei[1]])), base[perm],
                                   rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,kwargs", [
    ("LEGCN", {"expansion": "clique"}), ("LEGCN", {"vertex_weight": -1.0}),
    ("HyperND", {"p": 0.0}), ("HyperND", {"alpha": 1.5}), ("HyperND", {"steps": 0}), ("HyperND", {"aggregate": "max"}),
    ("PhenomNN", {"lambda0": -1.0}), ("PhenomNN", {"decoder_hidden": 0}), ("PhenomNN", {"alpha": 2.0}),
    ("SheafHyperGNN", {"stalk_dim": 0}), ("SheafHyperGNN", {"normalisation": "none"}),
    ("SheafHyperGNN", {"restriction_grad": 0}),
    ("HJRL", {"reconstruction": "bce"}), ("HJRL", {"reconstruction_weight": -0.1}),
])
def test_bad_model_specific_arguments(name, kwargs):
    with pytest.raises(ValueError):
        build_model(name, in_channels=4, hidden_channels=6, out_channels=3, **kwargs)
