"""DPHGNN (issue 12): the structure operators, the HyperGCN graph and the attention against the reference's dense
formulas, the compatibility options (star direction, HGConv degree, dropout mode) changing only what they name, and
the faster forward (shared structure matrices, DFF by sparse products) against the dense reference forward, values and
gradients, on random small hypergraphs with isolated nodes and order-1 hyperedges. Graph-scoped attention:
``test_attention_scope.py``."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from hnn_toys import dense_incidence, mostly_zero_features, random_hypergraph, small_dphgnn
from hypergvl.models.nn import build_model
from hypergvl.models.nn.sparse import Incidence


# ------------------------------------------------------------------------------------------------- exact computation

def _dense(op):
    return op.to_dense()


def _rownorm(a):
    s = a.sum(1, keepdim=True)
    return torch.where(s > 0, a / s.clamp_min(1e-30), torch.zeros_like(a))


@pytest.mark.parametrize("seed", range(3))
def test_dphgnn_structure_operators_equal_the_dense_reference_formulas(seed):
    from hypergvl.models.nn.sparse import Incidence
    from hypergvl.models.nn.dphgnn import _Structure
    edges, hei, n = random_hypergraph(seed)
    h = dense_incidence(edges, n)
    m = h.size(1)
    inc = Incidence(hei, n, m, torch.float32)
    s = _Structure(inc, "undirected")
    eye = torch.eye(n)
    clique = (h @ h.t() > 0).float()  # the reference's binary clique graph, diagonal included
    torch.testing.assert_close(_dense(s.a_cg), _rownorm(clique) + eye)
    torch.testing.assert_close(_dense(s.l_cg), torch.diag(clique.sum(1)) - clique)
    a_beta = h @ torch.diag(1 / h.sum(0)) @ h.t() + eye
    d = a_beta.sum(1)
    l_hgnn = torch.diag(d ** -0.5) @ a_beta @ torch.diag(d ** -0.5)
    torch.testing.assert_close(_dense(s.l_hgnn), l_hgnn)
    torch.testing.assert_close(_dense(s.l_sym), eye - l_hgnn)
    torch.testing.assert_close(_dense(s.l_rw), eye - torch.diag(1 / d) @ a_beta)
    dv = h.sum(1)
    de = torch.stack([dv[h[:, j] > 0].mean() for j in range(m)])
    hg = torch.diag(torch.where(dv > 0, dv ** -0.5, torch.zeros_like(dv))) @ h @ torch.diag(de ** -0.5 / h.sum(0)) @ h.t()
    torch.testing.assert_close(s.hgconv.to_dense(), hg)
    star = torch.zeros(n + m, n + m)
    star[:n, n:] = h  # node -> hyperedge, the reference's directed star graph
    for kind, a in (("directed", star), ("undirected", star + star.t())):
        st = _Structure(inc, kind)
        torch.testing.assert_close(_dense(st.a_sg), _rownorm(a) + torch.eye(n + m))
        torch.testing.assert_close(_dense(st.l_sg), torch.diag(a.sum(1)) - a)


def test_dphgnn_operator_with_a_diagonal_needs_its_base_to_store_the_diagonal():
    """Its operators reuse the base's pattern (no sort per batch), so a base missing a diagonal entry is refused,
    and one storing an explicit zero there gives D^-1 A + I."""
    from hypergvl.models.nn.dphgnn import _rownorm_plus_eye
    from hypergvl.models.nn.sparse import SparseOperator
    missing = SparseOperator(torch.tensor([0, 1]), torch.tensor([1, 0]), torch.tensor([2.0, 3.0]), (3, 3))
    with pytest.raises(ValueError, match="diagonal"):
        _rownorm_plus_eye(missing)
    stored = SparseOperator(torch.tensor([0, 1, 0, 1, 2]), torch.tensor([1, 0, 0, 1, 2]),
                            torch.tensor([2.0, 3.0, 0.0, 0.0, 0.0]), (3, 3))
    torch.testing.assert_close(_dense(_rownorm_plus_eye(stored)),
                               torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))


def naive_hypergcn(edges, x, r, n, mediators):
    """The reference's hypergcn_expansion (dict of weights, + I), then D^-1/2 A D^-1/2 and D - A."""
    proj = (x @ r).squeeze(1)
    weights = {}
    for edge in edges:
        p = proj[edge]
        se, ie = edge[int(torch.argmax(p))], edge[int(torch.argmin(p))]
        c = max(2 * len(edge) - 3, 1) if mediators else len(edge)
        pairs = [(se, ie), (ie, se)]
        if mediators:
            pairs += [pair for u in edge if u not in (se, ie) for pair in ((se, u), (ie, u), (u, se), (u, ie))]
        for pair in pairs:
            weights[pair] = weights.get(pair, 0.0) + 1.0 / c
    a = torch.eye(n)
    for (i, j), w in weights.items():
        a[i, j] += w
    d = a.sum(1)
    return torch.diag(d ** -0.5) @ a @ torch.diag(d ** -0.5), torch.diag(d) - a


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mediators", [True, False])
def test_dphgnn_hypergcn_graph_equals_the_reference_loop(seed, mediators):
    from hypergvl.models.nn.sparse import Incidence
    from hypergvl.models.nn.dphgnn import hypergcn_graph
    edges, hei, n = random_hypergraph(seed, max_order=5)
    x = torch.randn(n, 4)
    inc = Incidence(hei, n, len(edges), torch.float32)
    a, lap = hypergcn_graph(inc, x, mediators, seed=3)
    r = torch.rand(4, 1, generator=torch.Generator().manual_seed(3))
    a_ref, lap_ref = naive_hypergcn(edges, x, r, n, mediators)
    torch.testing.assert_close(_dense(a), a_ref)
    torch.testing.assert_close(_dense(lap), lap_ref)


@pytest.mark.parametrize("heads", [1, 2])
def test_dphgnn_attention_equals_dense_multihead_attention(heads):
    """SDPA attention against torch's MultiheadAttention (which forms the N x N weights) on the same weights."""
    from hypergvl.models.nn.dphgnn import TopologyAwareAttention
    torch.manual_seed(heads)
    taa = TopologyAwareAttention(5, 4, heads)
    taa.reset_parameters()
    mha = torch.nn.MultiheadAttention(4, heads)
    with torch.no_grad():
        mha.in_proj_weight.copy_(taa.in_proj_weight)
        mha.in_proj_bias.copy_(taa.in_proj_bias)
        mha.out_proj.weight.copy_(taa.out_proj.weight)
        mha.out_proj.bias.copy_(taa.out_proj.bias)
    q, k, v = torch.randn(3, 11, 5).unbind(0)
    expected, weights = mha(taa.q(q), taa.k(k), taa.v(v))
    assert weights.shape == (11, 11)
    torch.testing.assert_close(taa(q, k, v), expected, rtol=1e-5, atol=1e-6)


def test_dphgnn_directed_star_makes_every_hyperedge_token_the_same():
    edges, hei, n = random_hypergraph(1)
    x = torch.randn(n, 4)
    tokens = {}
    for star in ("directed", "undirected"):
        model = small_dphgnn(star=star).eval()
        inc = model.incidence(x, hei, None)
        from hypergvl.models.nn.dphgnn import _Structure
        z = model.gcn_star(x, _Structure(inc, star).a_sg, pad=len(edges))
        tokens[star] = z
    assert torch.allclose(tokens["directed"][n:], tokens["directed"][n].expand(len(edges), -1))
    assert not torch.allclose(tokens["undirected"][n:], tokens["undirected"][n].expand(len(edges), -1))


def test_dphgnn_hgconv_degree_changes_only_the_final_convolution():
    """``hgconv_degree="dhgbench"`` is the reference's ``scatter_reduce(..., reduce="mean")`` into zeros (run here as
    the reference runs it); every other operator, and every parameter, stays as it is."""
    from hypergvl.models.nn.sparse import Incidence
    from hypergvl.models.nn.dphgnn import _Structure
    edges, hei, n = random_hypergraph(4)
    h = dense_incidence(edges, n)
    m = h.size(1)
    inc = Incidence(hei, n, m, torch.float32)
    plain, reference = _Structure(inc, "directed"), _Structure(inc, "directed", "dhgbench")
    v, e = hei
    dv = h.sum(1)
    de = torch.zeros(m).scatter_reduce(0, e, dv[v], reduce="mean").pow(-0.5)  # the reference's HypergraphConv
    de[de.isinf()] = 1
    expected = torch.diag(torch.where(dv > 0, dv ** -0.5, torch.zeros_like(dv))) @ h @ torch.diag(de / h.sum(0)) @ h.t()
    torch.testing.assert_close(reference.hgconv.to_dense(), expected)
    assert not torch.allclose(plain.hgconv.to_dense(), expected)
    for name in ("a_cg", "l_cg", "l_hgnn", "l_sym", "l_rw", "a_sg", "l_sg", "l_sg_nodes"):
        assert torch.equal(_dense(getattr(plain, name)), _dense(getattr(reference, name))), name
    a, b = small_dphgnn(), small_dphgnn(hgconv_degree="dhgbench")
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    x = torch.randn(n, 4)
    with torch.no_grad():
        assert not torch.allclose(a.eval()(x, hei), b.eval()(x, hei))
    with pytest.raises(ValueError, match="hgconv_degree"):
        small_dphgnn(hgconv_degree="include_self")


def test_dphgnn_dropout_mode_changes_only_the_dropout_rates():
    edges, hei, n = random_hypergraph(2)
    x = torch.randn(n, 4)
    plain, reference = small_dphgnn(dropout=0.0, expansion_dropout=0.0), small_dphgnn(dropout=0.0, expansion_dropout=0.0,
                                                                           dropout_mode="dhgbench")
    assert plain._dropouts() == (0.0, 0.0) and reference._dropouts() == (0.3, 0.5)
    assert small_dphgnn(dropout=0.2)._dropouts() == (0.2, 0.2)
    with torch.no_grad():
        evaluated = plain.eval()(x, hei)
        torch.testing.assert_close(reference.eval()(x, hei), evaluated)  # same function without dropout
        torch.testing.assert_close(plain.train()(x, hei), evaluated)  # dropout 0: training = evaluation
        assert not torch.allclose(reference.train()(x, hei), evaluated)  # the hard-coded rates act


# ------------------------------------------------------------------------------------------------- faster evaluation

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
    x = mostly_zero_features(n, 6, seed)
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
    hyp = dp.hypergcn_graph(inc, mostly_zero_features(n, 4, 0), True, 0)
    monkeypatch.setattr(dp, "_FUSE_ENTRIES", 0)
    shared = dp._Structure(inc, "undirected")
    z = torch.randn(n, 3, dtype=torch.float64)
    for name in ("a_cg", "l_cg", "l_hgnn", "l_sym", "l_rw"):
        assert isinstance(getattr(shared, name), dp._Scaled)
        torch.testing.assert_close(getattr(shared, name).to_dense(), getattr(fused, name).to_dense())
        torch.testing.assert_close(getattr(shared, name) @ z, getattr(fused, name) @ z)
    for a, b in zip(dp.hypergcn_graph(inc, mostly_zero_features(n, 4, 0), True, 0), hyp):
        torch.testing.assert_close(a.to_dense(), b.to_dense())
