"""SheafHyperGNN (issue 12): the sheaf diffusion by scatters and sparse products against DHG-Bench's sparse matrix
form and a dense Nd x Nd matrix (values and gradients), the LayerNorm-folded restriction maps against LN of the
explicit pairs, hyperedge features as member means, ``restriction_grad=False``, and the whole model in training
against the naive model, on random small hypergraphs with isolated nodes, order-1 hyperedges and duplicate
incidences."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from hnn_toys import SEEDS, dense_h, grads, inv, random_hypergraph
from hypergvl.models.nn import build_model
from hypergvl.models.nn.dropout import dropout
from hypergvl.models.nn.sparse import Incidence
from hypergvl.models.nn.sheafhypergnn import DiagSheafBuilder, sheaf_diffusion


# ------------------------------------------------------------------------------------------------- exact computation

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
    _, hei, n = random_hypergraph(seed)
    m = int(hei[1].max()) + 1
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(n, 3, 4, dtype=torch.float64, generator=g)
    maps = torch.rand(hei.size(1), 3, dtype=torch.float64, generator=g)
    ours = sheaf_diffusion(Incidence(hei, n, m, torch.float64), z, maps, normalisation)
    torch.testing.assert_close(ours, naive_sheaf(z, maps, hei, n, m, normalisation))


def test_sheaf_restriction_grad_false_only_stops_the_maps_gradient():
    _, hei, n = random_hypergraph(2)
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
    _, hei, n = random_hypergraph(1)
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


# ------------------------------------------------------------------------------------------------- faster evaluation

def with_duplicate(hei: torch.Tensor) -> torch.Tensor:
    """The incidence list with its second incidence repeated (a node listed twice in one hyperedge)."""
    return torch.cat([hei, hei[:, 1:2]], 1)


def dense_sheaf(z, maps, hei, n, m, normalisation):
    """The diffusion as one dense Nd x Nd matrix P applied to the flattened stalks, with the per-incidence
    block diagonal sum_p alpha_p^2 / |e| (DHG-Bench's construction, dense; duplicates kept separate)."""
    d, f = z.shape[1], z.shape[2]
    v, e = hei
    dv = torch.bincount(v, minlength=n).to(z.dtype)
    de = torch.bincount(e, minlength=m).to(z.dtype)
    c = inv(dv, 0.5) if normalisation == "sym" else inv(dv)
    mm = z.new_zeros(n * d, n * d)
    diag = z.new_zeros(n * d)
    for p in range(v.numel()):  # M = C H_F B^-1 H_F^T, one incidence pair at a time
        for q in range(v.numel()):
            if e[p] == e[q]:
                for i in range(d):
                    mm[v[p] * d + i, v[q] * d + i] = mm[v[p] * d + i, v[q] * d + i] + \
                        c[v[p]] * maps[p, i] * maps[q, i] / de[e[p]]
        for i in range(d):
            diag[v[p] * d + i] = diag[v[p] * d + i] + c[v[p]] * maps[p, i] ** 2 / de[e[p]]
    p_mat = torch.eye(n * d, dtype=z.dtype) - 2 * torch.diag(diag) + mm
    zf = z.reshape(n * d, f)
    if normalisation == "sym":
        zf = zf * inv(dv, 0.5).repeat_interleave(d)[:, None]
    return (p_mat @ zf).reshape(n, d, f)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("normalisation", ["sym", "rw"])
def test_sheaf_diffusion_values_and_gradients_equal_the_dense_matrix(seed, normalisation):
    _, hei, n = random_hypergraph(seed)
    hei = with_duplicate(hei)
    m = int(hei[1].max()) + 2  # and a trailing hyperedge without members
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(n, 3, 4, dtype=torch.float64, generator=g, requires_grad=True)
    maps = torch.rand(hei.size(1), 3, dtype=torch.float64, generator=g, requires_grad=True)
    weight = torch.randn(n, 3, 4, dtype=torch.float64, generator=g)
    ours = sheaf_diffusion(Incidence(hei, n, m, torch.float64), z, maps, normalisation)
    want = dense_sheaf(z, maps, hei, n, m, normalisation)
    torch.testing.assert_close(ours, want)
    # the isolated node: P acts as the identity on z' (0 under "sym", where z' = d^-1/2 z has inf -> 0)
    torch.testing.assert_close(ours[n - 1], z[n - 1] * (normalisation == "rw"))
    for a, b in zip(grads((ours * weight).sum(), [z, maps]), grads((want * weight).sum(), [z, maps])):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("norm", [True, False])
def test_sheaf_builder_equals_layer_norm_of_the_concatenated_pairs(norm):
    """The folded LayerNorm (per-node and per-hyperedge terms, Chan's variance of the two halves) equals
    sigmoid(W LN([x_v || e_e]) + c) on the explicitly built pairs, values and all gradients; the means sit far
    from 0 so that a one-pass variance would lose digits."""
    _, hei, n = random_hypergraph(4)
    hei = with_duplicate(hei)
    m = int(hei[1].max()) + 1
    torch.manual_seed(0)
    builder = DiagSheafBuilder(5, 3, norm).double()
    if norm:
        with torch.no_grad():
            builder.norm.weight.normal_()
            builder.norm.bias.normal_()
    x = (torch.randn(n, 2, 5, dtype=torch.float64) + 30.0).requires_grad_()
    e = (torch.randn(m, 2, 5, dtype=torch.float64) - 20.0).requires_grad_()
    ours = builder(Incidence(hei, n, m, torch.float64), x, e)
    pair = torch.cat([x.mean(1)[hei[0]], e.mean(1)[hei[1]]], -1)
    want = torch.sigmoid(builder.lin(builder.norm(pair)))
    torch.testing.assert_close(ours, want)
    torch.testing.assert_close(builder(Incidence(hei, n, m, torch.float64), x.mean(1), e.mean(1)), want)
    weight = torch.randn_like(want)
    tensors = [x, e, *builder.parameters()]
    for a, b in zip(grads((ours * weight).sum(), tensors), grads((want * weight).sum(), tensors)):
        torch.testing.assert_close(a, b)


def naive_sheaf_model(model, x, hei, n, m):
    """SheafHyperGNN as first written: E = Linear(D_e^-1 H^T X) (member means of the raw features), maps from
    explicit LN'd pairs, the dense diffusion matrix, the same dropout calls."""
    h_inc = torch.zeros(n, m, dtype=x.dtype)
    h_inc.index_put_((hei[0], hei[1]), torch.ones(hei.size(1), dtype=x.dtype), accumulate=True)
    e_raw = inv(h_inc.sum(0))[:, None] * (h_inc.t() @ x)
    h = model.lin_in(x).view(n, model.d, model.f)
    e = model.lin_in(e_raw).view(m, model.d, model.f)
    for i, (norm, lin, bias, builder) in enumerate(zip(model.norms, model.lins, model.biases, model.builders)):
        pair = torch.cat([h.mean(1)[hei[0]], e.mean(1)[hei[1]]], -1)
        maps = torch.sigmoid(builder.lin(builder.norm(pair)))
        if not model.restriction_grad:
            maps = maps.detach()
        h = dense_sheaf(lin(norm(h)), maps, hei, n, m, model.normalisation) + bias
        if i < len(model.lins) - 1:
            h = dropout(F.elu(h), model.dropout, model.training)
    return model.lin_out(h.reshape(n, -1))


@pytest.mark.parametrize("kwargs", [{}, {"normalisation": "rw", "input_norm": False, "num_layers": 3},
                                    {"restriction_grad": False, "stalk_dim": 3}])
def test_sheaf_model_equals_the_naive_model_in_training(kwargs):
    _, hei, n = random_hypergraph(6)
    hei = with_duplicate(hei)
    m = int(hei[1].max()) + 1
    torch.manual_seed(3)
    model = build_model("SheafHyperGNN", in_channels=4, hidden_channels=5, out_channels=3, dropout=0.3,
                        **kwargs).double().train()
    x = torch.randn(n, 4, dtype=torch.float64)
    params = list(model.parameters())
    for inputs in (x, x.to_sparse()):
        torch.manual_seed(11)
        ours = model(inputs, hei, m)
        torch.manual_seed(11)
        want = naive_sheaf_model(model, x, hei, n, m)
        torch.testing.assert_close(ours, want)
        weight = torch.randn_like(want)
        for a, b in zip(grads((ours * weight).sum(), params), grads((want * weight).sum(), params)):
            torch.testing.assert_close(a, b)
