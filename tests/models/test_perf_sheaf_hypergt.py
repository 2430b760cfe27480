"""Issue 12, exact and scalable computation of SheafHyperGNN and HyperGT: each rewrite (sparse-product sheaf
diffusion with sampled gradients, LayerNorm-folded restriction maps, hyperedge features from X W_0, batched
chunked Gumbel attention with folded value/output maps, last-layer node-token queries) equals a naive dense
formula in values and gradients, on random small hypergraphs with isolated nodes, order-1 hyperedges and
duplicate incidences."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import hypergvl.models.nn.hypergt as hg
from hypergvl.models.nn import build_model
from hypergvl.models.nn.dropout import dropout
from hypergvl.models.nn.sparse import Incidence
from hypergvl.models.nn.hypergt import orthogonal_features, weighted_kernel_attention
from hypergvl.models.nn.sheafhypergnn import DiagSheafBuilder, sheaf_diffusion
from hnn_toys import inv, random_hypergraph  # noqa: E402

SEEDS = [0, 1, 2]


def with_duplicate(hei: torch.Tensor) -> torch.Tensor:
    """The incidence list with its second incidence repeated (a node listed twice in one hyperedge)."""
    return torch.cat([hei, hei[:, 1:2]], 1)


def grads(loss: torch.Tensor, tensors) -> list[torch.Tensor]:
    return [torch.zeros_like(t) if g is None else g
            for t, g in zip(tensors, torch.autograd.grad(loss, tensors, allow_unused=True))]


# ------------------------------------------------------------------------------------------- SheafHyperGNN

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


# -------------------------------------------------------------------------------------------------- HyperGT

def dense_weighted_attention(qf, kf, v, w):
    """mean_k of the T x T attention a_k[h, i, j] = w_jk phi(q_i).phi(k_j) / sum_j (...), times v."""
    scores = torch.einsum("him,hjm->hij", qf, kf)
    out = 0.0
    for k in range(w.size(-1)):
        a = scores * w[:, None, :, k]
        out = out + torch.einsum("hij,hjd->hid", a / a.sum(-1, keepdim=True), v)
    return out / w.size(-1)


@pytest.mark.parametrize("threshold", [1 << 40, 50, 1])
def test_weighted_attention_values_and_gradients_equal_dense_attention(monkeypatch, threshold):
    """One token chunk, a few, and one token per chunk: the same values and gradients (qf, kf, v, w) as the
    dense T x T formula, for the first ``rows`` queries and with a linear value map."""
    monkeypatch.setattr(hg, "_CHECKPOINT_ELEMENTS", threshold)
    g = torch.Generator().manual_seed(2)
    heads, t, m, d, k = 2, 13, 4, 3, 5
    qf, kf = (torch.rand(heads, t, m, generator=g, dtype=torch.float64, requires_grad=True) for _ in range(2))
    v = torch.randn(heads, t, d, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.rand(heads, t, k, generator=g, dtype=torch.float64, requires_grad=True)
    mix = torch.randn(heads, d, 2, generator=g, dtype=torch.float64, requires_grad=True)
    tensors = [qf, kf, v, w, mix]
    for rows, value_map, dense_map in [(t, None, lambda a: a),
                                       (7, lambda u, a: torch.einsum("hkmd,hdo->hkmo", u, mix),
                                        lambda a: torch.einsum("htd,hdo->hto", a, mix))]:
        ours = weighted_kernel_attention(qf, kf, v, w, rows, value_map)
        want = dense_map(dense_weighted_attention(qf, kf, v, w))[:, :rows]
        torch.testing.assert_close(ours, want)
        weight = torch.randn(want.shape, generator=g, dtype=torch.float64)
        for a, b in zip(grads((ours * weight).sum(), tensors), grads((want * weight).sum(), tensors)):
            torch.testing.assert_close(a, b)


def naive_hypergt_training(model, x, edges, n):
    """HyperGT in training mode with dense T x T Gumbel attention, the layer's value and output maps applied
    to every token, dropout on every token, and the random draws in the model's order (per layer: feature
    matrix, Gumbel noise, dropout); returns the logits, the link term and the generator's next number."""
    h_inc = torch.zeros(n, len(edges), dtype=x.dtype)
    for j, e in enumerate(edges):
        h_inc[e, j] = 1.0
    h = x @ model.lin_in.weight.t() + model.lin_in.bias
    pe_e, pe_v, b_e, b_v = model.pe_e, model.pe_v, model.pe_bias_e, model.pe_bias_v
    z = torch.cat([h + h_inc @ pe_e + b_e, (h_inc.t() @ h) / h_inc.sum(0)[:, None] + h_inc.t() @ pe_v + b_v])
    z = dropout(F.elu(model.norms[0](z)), model.dropout, True)
    t = z.size(0)
    links = [(v, n + j) for j, e in enumerate(edges) for v in e] + [(i, i) for i in range(t)]
    indeg = torch.zeros(t, dtype=x.dtype)
    for _, tgt in links:
        indeg[tgt] += 1
    layers, link_terms = [z], []
    for conv, norm in zip(model.convs, model.norms[1:]):
        shape = (t, conv.heads, conv.hidden)
        proj = orthogonal_features(conv.random_features, conv.hidden).to(x)
        q = (z @ conv.q.weight.t() + conv.q.bias).view(shape).transpose(0, 1) / math.sqrt(model.tau)
        k = (z @ conv.k.weight.t() + conv.k.bias).view(shape).transpose(0, 1) / math.sqrt(model.tau)
        v = (z @ conv.v.weight.t() + conv.v.bias).view(shape).transpose(0, 1)
        qf, kf = hg.softmax_kernel(q, proj, True), hg.softmax_kernel(k, proj, False)
        noise = -torch.empty(conv.heads, t, model.gumbel_samples, dtype=x.dtype).exponential_().log() / model.tau
        att = dense_weighted_attention(qf, kf, v, noise.exp())
        a = torch.einsum("him,hjm->hij", qf, kf)
        a = a / a.sum(-1, keepdim=True)
        link_terms.append(torch.stack([torch.log(a[:, tgt, src]) / indeg[tgt] for src, tgt in links]).mean())
        out = att.transpose(0, 1).reshape(t, -1) @ conv.o.weight.t() + conv.o.bias
        out = norm(out + z if model.residual else out)
        z = dropout(F.elu(out) if model.activation else out, model.dropout, True)
        layers.append(z)
    z = torch.cat(layers, 1) if model.jumping_knowledge else z
    logits = z[:n] @ model.lin_out.weight.t() + model.lin_out.bias
    return logits, -model.link_loss_weight * torch.stack(link_terms).mean(), torch.rand(1)


@pytest.mark.parametrize("kwargs", [{}, {"jumping_knowledge": True, "activation": True, "num_layers": 3},
                                    {"residual": False, "tau": 1.0, "gumbel_samples": 3}])
def test_hypergt_training_forward_equals_dense_gumbel_attention(monkeypatch, kwargs):
    """Gumbel attention, dropout and the link loss in training: the same logits, link term, parameter
    gradients and random stream afterwards as the dense formula, also with one token per chunk."""
    edges, hei, n = random_hypergraph(7)
    x = torch.randn(n, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    torch.manual_seed(4)
    model = build_model("HyperGT", in_channels=4, hidden_channels=6, out_channels=3, heads=2, random_features=5,
                        dropout=0.3, **{"gumbel_samples": 4, **kwargs}).double()
    model.prepare(x, hei)
    model.train()
    params = list(model.parameters())
    for threshold in (1 << 40, 1):
        monkeypatch.setattr(hg, "_CHECKPOINT_ELEMENTS", threshold)
        torch.manual_seed(21)
        ours, extra = model(x, hei), model.extra_loss()
        after = torch.rand(1)
        torch.manual_seed(21)
        want, want_extra, want_after = naive_hypergt_training(model, x, edges, n)
        torch.testing.assert_close(ours, want)
        torch.testing.assert_close(extra, want_extra)
        torch.testing.assert_close(after, want_after)
        weight = torch.randn_like(want)
        for a, b in zip(grads((ours * weight).sum() + extra, params),
                        grads((want * weight).sum() + want_extra, params)):
            torch.testing.assert_close(a, b)


@pytest.mark.parametrize("per_graph", [False, True])
@pytest.mark.parametrize("is_query", [True, False])
def test_kernel_features_recomputed_in_backward_equal_autograd_with_tied_maxima(is_query, per_graph):
    """The per-head kernel features (projection and exponentials recomputed in the backward pass) equal autograd
    through softmax_kernel, also where the stabiliser's maximum is tied (duplicate feature rows, duplicate
    tokens), whose gradient amax shares evenly; with ``graph`` (the keys' stabiliser per graph, tokens 1 and 3
    in one graph) too."""
    g = torch.Generator().manual_seed(5)
    t, d_in, heads, d, m = 7, 4, 3, 5, 6
    z = torch.randn(t, d_in, generator=g, dtype=torch.float64)
    z[3] = z[1]  # two tokens with the same features: the keys' global maximum can tie
    z.requires_grad_()
    weight = torch.randn(heads * d, d_in, generator=g, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(heads * d, generator=g, dtype=torch.float64, requires_grad=True)
    proj = orthogonal_features(m, d, g).double()
    proj[2] = proj[0]  # a duplicated random feature: every row maximum at feature 0 ties with feature 2
    tau = 0.25
    graph = torch.tensor([0, 1, 2, 1, 0, 2, 1]) if per_graph else None
    ours = hg._KernelFeatures.apply(z, weight, bias, proj, heads, tau, is_query, graph)
    data = F.linear(z, weight, bias).view(t, heads, d).transpose(0, 1) / math.sqrt(tau)
    want = hg.softmax_kernel(data, proj, is_query, graph=graph)
    torch.testing.assert_close(ours, want)
    if graph is not None:  # each graph's features are those of the graph alone
        for k in range(3):
            alone = hg.softmax_kernel(data[:, graph == k], proj, is_query)
            torch.testing.assert_close(want[:, graph == k], alone)
    dash = (data * d ** -0.25) @ proj.t()
    stab = dash.amax(-1, keepdim=True) if is_query else dash.amax((1, 2), keepdim=True)
    assert ((dash == stab).sum((1, 2)) > (t if is_query else 1)).any()  # ties do occur
    weight_out = torch.randn(want.shape, generator=g, dtype=torch.float64)
    tensors = [z, weight, bias]
    for a, b in zip(grads((ours * weight_out).sum(), tensors), grads((want * weight_out).sum(), tensors)):
        torch.testing.assert_close(a, b)
