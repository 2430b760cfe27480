"""HyperGT (issue 12): the linear-time kernel attention over node and hyperedge tokens against dense T x T attention
on a dense incidence matrix (evaluation, and training with Gumbel noise, dropout and the link loss), the kernels
and link likelihood against their formulas, the checkpointed and chunked forms, each compatibility option changing
only what it names, and training through the trainer on every task, values and gradients."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import hypergvl.models.nn.hypergt as hg
from hnn_toys import dense_incidence, grads, make_task, random_hypergraph
from hypergvl.models import tasks as T
from hypergvl.models.nn import build_model
from hypergvl.models.nn.dropout import dropout
from hypergvl.models.nn.hypergt import (gumbel_kernel_attention, kernel_attention, link_log_likelihood, orthogonal_features,
                                        softmax_kernel, weighted_kernel_attention)
from hypergvl.models.nn.sparse import Incidence


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/models/conftest.py


# ------------------------------------------------------------------------------------------------- exact computation

def naive_kernel(data, proj, is_query, eps=1e-6):
    """The softmax-kernel random features written per head, straight from the formula (``data``: [H, T, d])."""
    heads, t, d = data.shape
    out = torch.empty(heads, t, proj.size(0), dtype=data.dtype)
    for h in range(heads):
        u = data[h] * d ** -0.25
        dash = u @ proj.t()
        c = dash.max(dim=1, keepdim=True).values if is_query else dash.max()
        out[h] = (torch.exp(dash - (u * u).sum(1, keepdim=True) / 2 - c) + eps) / math.sqrt(proj.size(0))
    return out


def dense_attention(qf, kf, key_weight=None):
    """The T x T attention matrices, one per head: a[h, i, j] = w_j phi(q_i).phi(k_j) / sum_j (...)."""
    a = torch.einsum("him,hjm->hij", qf, kf)
    if key_weight is not None:
        a = a * key_weight[:, None, :]
    return a / a.sum(-1, keepdim=True)


def naive_hypergt(model, x, edges, n, projections):
    """HyperGT with a dense incidence matrix, dense T x T attention and its link loss (dropout 0, no Gumbel)."""
    h_inc = dense_incidence(edges, n, x.dtype)
    deg_e = h_inc.sum(0)
    h = x @ model.lin_in.weight.t() + model.lin_in.bias
    node_pe = edge_pe = 0.0
    if model.positional_encoding != "none":
        inc = Incidence(incidence_of(edges), n, len(edges), x.dtype)
        pe_e, pe_v, b_e, b_v = model.pe_tables(inc, h)
        node_pe, edge_pe = h_inc @ pe_e + b_e, h_inc.t() @ pe_v + b_v
    edge_in = (h_inc.t() @ h) / deg_e[:, None] if model.hyperedge_features == "mean" else \
        model.lin_in.bias.expand(len(edges), -1)
    z = torch.cat([h + node_pe, edge_in + edge_pe])
    z = F.elu(model.norms[0](z) if model.layer_norm else z)
    t = z.size(0)
    # links: member node -> hyperedge token, and a self-loop on every token, weighted by 1 / in-degree
    links = [(v, n + j) for j, e in enumerate(edges) for v in e] + [(i, i) for i in range(t)]
    indeg = torch.zeros(t, dtype=x.dtype)
    for _, tgt in links:
        indeg[tgt] += 1
    layers, link_terms = [z], []
    for conv, norm, proj in zip(model.convs, model.norms[1:], projections):
        shape = (t, conv.heads, conv.hidden)
        q = (z @ conv.q.weight.t() + conv.q.bias).view(shape).transpose(0, 1) / math.sqrt(model.tau)
        k = (z @ conv.k.weight.t() + conv.k.bias).view(shape).transpose(0, 1) / math.sqrt(model.tau)
        v = (z @ conv.v.weight.t() + conv.v.bias).view(shape).transpose(0, 1)
        a = dense_attention(naive_kernel(q, proj, True), naive_kernel(k, proj, False))
        att = torch.einsum("hij,hjd->ihd", a, v)  # back to tokens first, heads concatenated per token
        link_terms.append(torch.stack([torch.log(a[:, tgt, src]) / indeg[tgt] for src, tgt in links]).mean())
        out = att.flatten(1) @ conv.o.weight.t() + conv.o.bias
        out = out + z if model.residual else out
        out = norm(out) if model.layer_norm else out
        z = F.elu(out) if model.activation else out
        layers.append(z)
    z = torch.cat(layers, 1) if model.jumping_knowledge else z
    out = z[:n] @ model.lin_out.weight.t() + model.lin_out.bias
    return out, -model.link_loss_weight * torch.stack(link_terms).mean()


def incidence_of(edges):
    return torch.tensor([[v for e in edges for v in e], [j for j, e in enumerate(edges) for _ in e]])


def make_hypergt(init_seed=0, in_channels=4, **kwargs):
    torch.manual_seed(init_seed)
    kwargs = {"hidden_channels": 6, "heads": 2, "random_features": 5, **kwargs}
    return build_model("HyperGT", in_channels=in_channels, out_channels=3, **kwargs).double()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kwargs", [
    {},
    {"positional_encoding": "random", "hyperedge_features": "zero", "tau": 1.0, "jumping_knowledge": True},
    {"positional_encoding": "none", "activation": True, "residual": False, "layer_norm": False, "num_layers": 3},
])
def test_hypergt_equals_dense_attention_on_a_dense_incidence(seed, kwargs):
    """Evaluation: the linear-time kernel attention over node and hyperedge tokens equals dense T x T attention
    built from a dense incidence matrix (isolated node, order-1 hyperedges)."""
    edges, hei, n = random_hypergraph(seed)
    x = torch.randn(n, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    model = make_hypergt(seed, **kwargs)
    model.prepare(x, hei)
    model.eval()
    with torch.no_grad():
        want, _ = naive_hypergt(model, x, edges, n, [c.projection for c in model.convs])
        torch.testing.assert_close(model(x, hei), want)
        torch.testing.assert_close(model(x.to_sparse(), hei), want)


def test_hypergt_training_link_loss_equals_the_dense_attention_log_likelihood():
    """Training (dropout 0, no Gumbel): the same output with freshly drawn random features, and extra_loss is
    -lambda times the mean over layers of the degree-weighted log attention on the member -> hyperedge links."""
    edges, hei, n = random_hypergraph(5)
    x = torch.randn(n, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    model = make_hypergt(5, dropout=0.0, gumbel=False, link_loss_weight=0.7)
    model.prepare(x, hei)
    model.train()
    torch.manual_seed(9)
    out = model(x, hei)
    extra = model.extra_loss()
    torch.manual_seed(9)  # the forward draws one feature matrix per layer and nothing else
    projections = [orthogonal_features(c.random_features, c.hidden).double() for c in model.convs]
    want, want_extra = naive_hypergt(model, x, edges, n, projections)
    torch.testing.assert_close(out, want)
    torch.testing.assert_close(extra, want_extra)
    assert model.extra_loss() is None  # handed out once
    (out.sum() + extra).backward()
    assert model.pe_e.grad.abs().sum() > 0 and model.pe_v.grad.abs().sum() > 0


def test_kernel_and_gumbel_attention_equal_the_dense_formulas():
    g = torch.Generator().manual_seed(0)
    t, heads, d, m, k = 11, 3, 4, 6, 5
    q, key, v = (torch.randn(heads, t, d, generator=g, dtype=torch.float64) for _ in range(3))
    proj = orthogonal_features(m, d, g).double()
    qf, kf = softmax_kernel(q, proj, True), softmax_kernel(key, proj, False)
    torch.testing.assert_close(qf, naive_kernel(q, proj, True))
    torch.testing.assert_close(kf, naive_kernel(key, proj, False))
    torch.testing.assert_close(kernel_attention(qf, kf, v), torch.einsum("hij,hjd->hid", dense_attention(qf, kf), v))
    noise = 4.0 * torch.randn(heads, t, k, generator=g, dtype=torch.float64)  # large: exp would lose precision
    want = torch.stack([torch.einsum("hij,hjd->hid", dense_attention(qf, kf, noise[..., s].exp()), v)
                        for s in range(k)]).mean(0)
    torch.testing.assert_close(gumbel_kernel_attention(qf, kf, v, noise), want)
    start, end = torch.tensor([0, 1, 2, 5, 7]), torch.tensor([3, 3, 4, 4, 4])
    weight = torch.tensor([0.5, 0.5, 1 / 3, 1 / 3, 1 / 3], dtype=torch.float64)
    a = dense_attention(qf, kf)
    want = torch.stack([a[:, e, s].log() * w for s, e, w in zip(start, end, weight)]).mean()
    torch.testing.assert_close(link_log_likelihood(qf, kf, start, end, weight), want)


def test_link_likelihood_per_graph_normalises_over_the_target_graph_only():
    """With ``graph``, a link's attention is normalised over the keys of its target's graph: the dense attention
    with a block-diagonal mask."""
    g = torch.Generator().manual_seed(3)
    qf, kf = (torch.rand(2, 9, 4, generator=g, dtype=torch.float64) for _ in range(2))
    graph = torch.tensor([0, 0, 1, 0, 1, 1, 2, 2, 0])
    start, end = torch.tensor([0, 1, 2, 6, 8]), torch.tensor([3, 3, 4, 7, 1])
    weight = torch.tensor([0.5, 0.5, 1.0, 1.0, 0.25], dtype=torch.float64)
    a = torch.einsum("him,hjm->hij", qf, kf) * (graph[:, None] == graph[None, :])
    a = a / a.sum(-1, keepdim=True)
    want = torch.stack([a[:, e, s].log() * w for s, e, w in zip(start, end, weight)]).mean()
    torch.testing.assert_close(link_log_likelihood(qf, kf, start, end, weight, graph), want)


def test_checkpointed_gumbel_samples_and_link_chunks_give_the_same_values_and_gradients(monkeypatch):
    import hypergvl.models.nn.hypergt as hg

    g = torch.Generator().manual_seed(1)
    qf, kf = (torch.rand(2, 9, 4, generator=g, dtype=torch.float64, requires_grad=True) for _ in range(2))
    v = torch.randn(2, 9, 3, generator=g, dtype=torch.float64, requires_grad=True)
    noise = torch.randn(2, 9, 4, generator=g, dtype=torch.float64)
    results = []
    start, end = torch.tensor([0, 1, 2, 5, 7, 3, 8]), torch.tensor([3, 3, 4, 4, 4, 3, 8])
    weight = torch.rand(7, generator=g, dtype=torch.float64)
    for threshold in (1 << 40, 5):  # kept, then recomputed in the backward pass (links: chunks of 5 // 8 = 1)
        monkeypatch.setattr(hg, "_CHECKPOINT_ELEMENTS", threshold)
        out = hg.gumbel_kernel_attention(qf, kf, v, noise)
        link = hg.link_log_likelihood(qf, kf, start, end, weight)
        results.append((torch.cat([out.flatten(), link.view(1)]),
                        torch.autograd.grad(out.square().sum() + link, (qf, kf, v))))
    torch.testing.assert_close(results[0][0], results[1][0])
    for a, b in zip(results[0][1], results[1][1]):
        torch.testing.assert_close(a, b)


# ----------------------------------------------------------------------------------- options, arguments and training

def test_hypergt_positional_encoding_options_change_only_the_encodings():
    """'random' (DHG-Bench) is the trained model with its tables frozen at a seeded draw: no parameters, fixed by
    (seed, sizes); 'none' drops them. Everything else is the same model."""
    edges, hei, n = random_hypergraph(3)
    x = torch.randn(n, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    trained, random_pe, none = (make_hypergt(1, positional_encoding=p).eval() for p in ("trained", "random", "none"))
    trained.prepare(x, hei)
    extra = {"pe_e", "pe_v", "pe_bias_e", "pe_bias_v"}
    names = {k for k, _ in trained.named_parameters()}
    assert names - {k for k, _ in random_pe.named_parameters()} == extra
    assert {k for k, _ in random_pe.named_parameters()} == {k for k, _ in none.named_parameters()}
    for name, p in random_pe.named_parameters():  # the same draw of everything else
        torch.testing.assert_close(p, dict(trained.named_parameters())[name])
    inc = random_pe.incidence(x, hei, None)
    tables = random_pe.pe_tables(inc, x)
    with torch.no_grad():
        for p, t in zip((trained.pe_e, trained.pe_v, trained.pe_bias_e, trained.pe_bias_v), tables):
            p.copy_(t)
        torch.testing.assert_close(trained(x, hei), random_pe(x, hei))
        assert not torch.allclose(none(x, hei), random_pe(x, hei))
    again = make_hypergt(7, positional_encoding="random")  # the tables depend on seed and sizes only
    torch.testing.assert_close(again.pe_tables(again.incidence(x, hei, None), x)[0], tables[0])
    other = make_hypergt(1, positional_encoding="random", seed=1)
    assert not torch.allclose(other.pe_tables(other.incidence(x, hei, None), x)[0], tables[0])
    assert random_pe.pe_tables(random_pe.incidence(x[:-1], hei, None), x)[0].shape == tables[0].shape
    bigger = random_pe.pe_tables(random_pe.incidence(x, hei, 8), x)[0]
    assert bigger.shape[0] == 8  # another size, another draw (as the reference redraws per batch)


def test_hypergt_link_loss_weight_and_gumbel_change_only_what_they_name():
    edges, hei, n = random_hypergraph(4)
    x = torch.randn(n, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    outs = {}
    for key, kwargs in {"paper": {}, "no-link": {"link_loss_weight": 0.0}, "no-gumbel": {"gumbel": False}}.items():
        model = make_hypergt(2, num_layers=1, **kwargs)  # one layer: the same inputs to its link loss
        model.prepare(x, hei)
        torch.manual_seed(3)
        train_out = model.train()(x, hei)
        outs[key] = (train_out, model.extra_loss(), model.eval()(x, hei))
    torch.testing.assert_close(outs["paper"][0], outs["no-link"][0])  # the same forward ...
    assert outs["no-link"][1] is None and outs["paper"][1].requires_grad  # ... without the regulariser
    torch.testing.assert_close(outs["paper"][2], outs["no-gumbel"][2])  # Gumbel noise only in training
    assert not torch.allclose(outs["paper"][0], outs["no-gumbel"][0])
    torch.testing.assert_close(outs["paper"][1], outs["no-gumbel"][1])  # the link loss has no Gumbel noise


def test_hypergt_trained_encodings_need_prepare_and_the_prepared_sizes():
    edges, hei, n = random_hypergraph(0)
    x = torch.randn(n, 4)
    model = build_model("HyperGT", in_channels=4, hidden_channels=6, out_channels=3)
    with pytest.raises(ValueError, match="call model.prepare"):
        model(x, hei)
    model.prepare(x, hei)
    assert model.pe_e.shape == (len(edges), 6) and model.pe_v.shape == (n, 6)
    with pytest.raises(ValueError, match="prepared for 9 nodes"):
        model(torch.randn(n + 1, 4), hei)
    model.prepare(torch.randn(n + 1, 4), hei)  # another structure: new tables
    assert model.pe_v.shape == (n + 1, 6)


@pytest.mark.parametrize("kwargs", [
    {"positional_encoding": "none", "jumping_knowledge": True, "activation": True, "heads": 1},
    {"positional_encoding": "none", "gumbel": False, "hyperedge_features": "zero", "num_layers": 1},
    {"positional_encoding": "none", "residual": False, "layer_norm": False, "tau": 2.0, "gumbel_samples": 2},
])
def test_hypergt_other_settings_forward_backward_sparse_and_permutation(kwargs):
    edges, hei, n = random_hypergraph(6)
    x = torch.randn(n, 4, generator=torch.Generator().manual_seed(6))
    torch.manual_seed(0)
    model = build_model("HyperGT", in_channels=4, hidden_channels=6, out_channels=3, **kwargs)
    model(x.to_sparse_csr(), hei).square().sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.eval()
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        out = model(x, hei)
        torch.testing.assert_close(model(x.to_sparse(), hei), out, rtol=1e-5, atol=1e-5)
        permuted = torch.stack([torch.argsort(perm)[hei[0]], hei[1]])
        torch.testing.assert_close(model(x[perm], permuted), out[perm], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kwargs", [{"heads": 0}, {"random_features": 0}, {"gumbel_samples": 0}, {"tau": 0.0},
                                    {"positional_encoding": "learned"}, {"link_loss_weight": -1.0},
                                    {"hyperedge_features": "rand"}, {"jumping_knowledge": 1}, {"seed": -1}])
def test_hypergt_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        build_model("HyperGT", in_channels=4, hidden_channels=6, out_channels=3, **kwargs)


@pytest.mark.parametrize("kind", ["node", "hyperedge", "graph"])
def test_hypergt_trains_on_every_task(kind, tmp_path):
    """Through the trainer: the trained encodings are in the optimiser (they move), the link loss is in the
    recorded loss; hypergraph classification runs with the shipped config's random encodings."""
    from accelerate import Accelerator

    from hypergvl.models.config import TrainerConfig, resolve_config

    from hypergvl.models.trainer import train_one_run

    task = make_task(kind)
    cfg = resolve_config("HyperGT", kind, "synthetic", overrides=["hidden=6", "heads=2", "random_features=4"])
    torch.manual_seed(0)
    encoder = build_model("HyperGT", in_channels=task.in_channels, hidden_channels=6, out_channels=task.out_channels,
                          num_layers=1, **cfg.model)
    module = T.TaskModule(encoder, task.build_head())
    task.prepare(module)  # as train_one_run does first; it keeps tables that already have the structure's sizes
    initial = None if encoder.pe_e is None else encoder.pe_e.detach().clone()
    record = train_one_run(task, module, Accelerator(cpu=True), TrainerConfig(epochs=2, hidden=6, lr=0.05), 0,
                           None, progress=False)
    assert record["epochs_run"] == 2 and np.isfinite(record["history"][-1]["loss"])
    if kind == "graph":  # no single structure: the shipped config's random encodings, nothing prepared
        assert encoder.positional_encoding == "random" and initial is None
    else:
        assert encoder.pe_e.shape[0] == task.num_hyperedges
        assert not torch.allclose(initial, encoder.pe_e)  # the optimiser trained the tables prepare created


# ------------------------------------------------------------------------------------------------- faster evaluation

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


def test_pairwise_attention_values_and_gradients_equal_dense_attention():
    """The T x T form HyperGT uses within small hypergraphs: the dense formula's values and gradients (qf, kf, v,
    w), and the linear form's."""
    g = torch.Generator().manual_seed(4)
    heads, t, m, d, k = 3, 9, 4, 3, 5
    qf, kf = (torch.rand(heads, t, m, generator=g, dtype=torch.float64, requires_grad=True) for _ in range(2))
    v = torch.randn(heads, t, d, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.rand(heads, t, k, generator=g, dtype=torch.float64, requires_grad=True)
    tensors = [qf, kf, v, w]
    weight = torch.randn(heads, t, d, generator=g, dtype=torch.float64)
    for want in (dense_weighted_attention(qf, kf, v, w), weighted_kernel_attention(qf, kf, v, w)):
        ours = hg.pairwise_weighted_attention(qf, kf, v, w)
        torch.testing.assert_close(ours, want)
        for a, b in zip(grads((ours * weight).sum(), tensors), grads((want * weight).sum(), tensors)):
            torch.testing.assert_close(a, b)


def test_pairwise_form_is_chosen_by_flops():
    """DHG-Bench's graph config (m 30, K 10, width 64): the T x T form below 169 tokens, the linear one above;
    in evaluation (K = 1) only below 20."""
    assert hg.pairwise_is_cheaper(168, 30, 10, 64) and not hg.pairwise_is_cheaper(169, 30, 10, 64)
    assert hg.pairwise_is_cheaper(19, 30, 1, 64) and not hg.pairwise_is_cheaper(20, 30, 1, 64)


def test_hypergt_graph_scope_gives_the_same_training_step_with_either_form(monkeypatch):
    """A batch of three hypergraphs in training (Gumbel samples, link term): the T x T form everywhere and the
    linear form everywhere give the same logits, link term and gradients."""
    graphs = [random_hypergraph(s, num_nodes=n) for s, n in ((0, 7), (1, 9), (2, 7))]
    n_off = torch.tensor([0] + [n for _, _, n in graphs]).cumsum(0)
    e_off = torch.tensor([0] + [len(e) for e, _, _ in graphs]).cumsum(0)
    hei = torch.cat([h + torch.stack([n_off[i], e_off[i]])[:, None] for i, (_, h, _) in enumerate(graphs)], 1)
    batch = torch.repeat_interleave(torch.arange(3), torch.tensor([n for _, _, n in graphs]))
    x = torch.randn(int(n_off[-1]), 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    results = []
    for pairwise in (True, False):
        monkeypatch.setattr(hg, "pairwise_is_cheaper", lambda *args, p=pairwise: p)
        model = make_hypergt(0, dropout=0.0, positional_encoding="none").train()
        torch.manual_seed(3)
        out = model(x, hei, int(e_off[-1]), batch=batch)
        loss = out.square().sum() + model.extra_loss()
        results.append((out, loss, grads(loss, list(model.parameters()))))
    torch.testing.assert_close(results[0][:2], results[1][:2])
    for a, b in zip(results[0][2], results[1][2]):
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
