"""EHNN (issue 12): the sparse computation against the paper's MLP form with a dense incidence matrix, the order
encodings, and each faster evaluation (split hypernetwork inputs, order biases gathered after the linear maps, the
live-rows backward) against the naive concatenated formula or the previous forward, outputs and gradients, on random
small hypergraphs with an isolated node and an order-1 hyperedge (``hnn_toys.random_hypergraph``)."""
from __future__ import annotations

import math

import pytest
import torch

from hnn_toys import dense_incidence, param_grads, random_hypergraph, sparse_features
from hypergvl.models.nn import build_model
from hypergvl.models.nn.ehnn import HyperMLP, OrderMLP, order_encoding


# ------------------------------------------------------------------------------------------------- exact computation

def naive_ehnn(model, x, edges, num_nodes):
    """EHNN-MLP written from the paper's MLP form with a dense incidence matrix H (N x M)."""
    h = dense_incidence(edges, num_nodes)
    order = h.sum(0)
    deg = h.sum(1, keepdim=True)

    def pe(k, d):
        return order_encoding(torch.as_tensor(k).reshape(-1), d)

    def cat(t, p):
        return torch.cat([t, p.expand(t.size(0), -1)], dim=1)

    out = x
    for i, conv in enumerate(model.convs):
        d = conv.lin.out_features
        v2e, e2v = conv.v2e, conv.e2v
        z = conv.lin(out)
        z = z + v2e.mlp1(v2e.norms[0](z))
        x0, x1v, x1e = z.mean(0, keepdim=True), z, (h.t() @ z) / order[:, None]
        x0 = x0 + v2e.mlp2(cat(v2e.norms[1](x0), pe(0, d)))
        x1v = x1v + v2e.mlp2(cat(v2e.norms[1](x1v), pe(1, d)))
        x1e = x1e + v2e.mlp2(cat(v2e.norms[1](x1e), pe(1, d)))
        xv, xe = x0 + x1v, x0 + x1e
        xv = xv + v2e.mlp3(cat(v2e.norms[2](xv), pe(1, d)))
        xe = xe + v2e.mlp3(torch.cat([v2e.norms[2](xe), pe(order.long(), d)], 1))
        xv, xe = torch.relu(xv + v2e.bias(torch.tensor([1]))), torch.relu(xe + v2e.bias(order.long()))
        xv = xv + e2v.mlp1(cat(e2v.norms[0](xv), pe(1, d)))
        xe = xe + e2v.mlp1(torch.cat([e2v.norms[0](xe), pe(order.long(), d)], 1))
        x0 = torch.cat([xv, xe]).mean(0, keepdim=True)
        x1 = (xv + h @ xe) / (1 + deg)
        x0 = x0 + e2v.mlp2(cat(e2v.norms[1](x0), pe(0, d)))
        x1 = x1 + e2v.mlp2(cat(e2v.norms[1](x1), pe(1, d)))
        z = x0 + x1
        out = z + e2v.mlp3(e2v.norms[2](z)) + e2v.bias
    return model.decoder(out)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("num_layers", [1, 2])
def test_ehnn_sparse_equals_dense_incidence(seed, num_layers):
    edges, hei, n = random_hypergraph(seed)
    torch.manual_seed(seed)
    model = build_model("EHNN", in_channels=4, hidden_channels=6, out_channels=3, num_layers=num_layers).eval()
    x = torch.randn(n, 4)
    with torch.no_grad():
        torch.testing.assert_close(model(x, hei), naive_ehnn(model, x, edges, n), rtol=1e-5, atol=1e-5)


def test_ehnn_order_encoding_is_the_transformer_table():
    k, d = torch.arange(7), 6
    table = torch.zeros(7, d)
    div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
    table[:, 0::2], table[:, 1::2] = torch.sin(k[:, None] * div), torch.cos(k[:, None] * div)
    torch.testing.assert_close(order_encoding(k, d), table)


def test_ehnn_output_depends_on_the_hyperedge_orders():
    """The order encodings reach the output: a hypergraph with the same node-hyperedge pairs
    merged differently gives another result (a test that an order-blind model would fail)."""
    torch.manual_seed(0)
    model = build_model("EHNN", in_channels=3, hidden_channels=4, out_channels=2).eval()
    x = torch.randn(4, 3)
    a = model(x, torch.tensor([[0, 1, 2, 3], [0, 0, 1, 1]]))
    b = model(x, torch.tensor([[0, 1, 2, 3], [0, 0, 0, 1]]))
    assert not torch.allclose(a, b)


# ------------------------------------------------------------------------------------------------- faster evaluation

@pytest.mark.parametrize("layers", [1, 2, 3])
def test_ehnn_hypernetwork_split_input_equals_the_concatenation_in_training(layers):
    """MLP([x || extra[index]]) with the extra columns applied before the gather: the same output, dropout
    masks included (same seed: drawn on tensors of the same shapes in the same order), and the same gradients."""
    torch.manual_seed(0)
    mlp = HyperMLP(10, 3, 4, layers, dropout=0.5).double().train()
    x, table = torch.randn(11, 5, dtype=torch.float64), torch.randn(3, 5, dtype=torch.float64)
    index = torch.tensor([2, 0, 0, 1, 2, 2, 1, 0, 0, 2, 1])
    for extra, rows in ((table, index), (table[1:2], None)):
        torch.manual_seed(1)
        fast = mlp(x, extra, rows)
        fast.square().sum().backward()
        g_fast = param_grads(mlp)
        mlp.zero_grad()
        torch.manual_seed(1)
        naive = mlp(torch.cat([x, extra[index] if rows is not None else extra.expand(11, -1)], dim=1))
        naive.square().sum().backward()
        torch.testing.assert_close(fast, naive)
        for k, g in param_grads(mlp).items():
            torch.testing.assert_close(g_fast[k], g, msg=k)
        mlp.zero_grad()


def test_ehnn_order_bias_gathered_after_the_linear_maps_keeps_per_row_dropout():
    """b(|e|) per hyperedge from the distinct orders: equal to the per-row MLP in training (same seed), and two
    hyperedges of the same order still get independent dropout masks (the reference's per-row hypernetwork)."""
    torch.manual_seed(0)
    bias = OrderMLP(4, 6, 8, 2, dropout=0.5).double().train()
    order = torch.tensor([1, 3, 3, 2, 3, 1, 1, 2])
    orders, index = torch.unique(order, return_inverse=True)
    torch.manual_seed(3)
    fast = bias.gathered(orders, index)
    torch.manual_seed(3)
    torch.testing.assert_close(fast, bias(order).double())
    assert not torch.allclose(fast[1], fast[2])  # same order 3, different masks
    bias.eval()
    torch.testing.assert_close(bias.gathered(orders, index)[1], bias.gathered(orders, index)[2])


def naive_ehnn_concatenated(model, x, edges, num_nodes):
    """EHNN-MLP from its formulas with a dense H and each hypernetwork MLP applied to the concatenation
    [LN(.) || PE(k)] (written with the model's own linear maps, norms and encodings)."""
    h = dense_incidence(edges, num_nodes, torch.float64)
    order, deg = h.sum(0), h.sum(1, keepdim=True)

    def mlp(m, t):
        for lin in m.lins[:-1]:
            t = torch.relu(t @ lin.weight.t() + lin.bias)
        return t @ m.lins[-1].weight.t() + m.lins[-1].bias

    def pe(k, d, rows=None):
        t = order_encoding(torch.as_tensor(k).reshape(-1), d).double()
        return t if rows is None else t.expand(rows, -1)

    def hyper(m, norm, t, k):
        return mlp(m, torch.cat([norm(t), pe(k, t.size(1), t.size(0))], dim=1))

    out = x
    for conv in model.convs:
        v2e, e2v = conv.v2e, conv.e2v
        z = conv.lin(out)
        z = z + mlp(v2e.mlp1, v2e.norms[0](z))
        x0, x1v, x1e = z.mean(0, keepdim=True), z, (h.t() @ z) / order[:, None]
        x0 = x0 + hyper(v2e.mlp2, v2e.norms[1], x0, 0)
        x1v = x1v + hyper(v2e.mlp2, v2e.norms[1], x1v, 1)
        x1e = x1e + hyper(v2e.mlp2, v2e.norms[1], x1e, 1)
        xv, xe = x0 + x1v, x0 + x1e
        xv = xv + hyper(v2e.mlp3, v2e.norms[2], xv, 1)
        xe = xe + mlp(v2e.mlp3, torch.cat([v2e.norms[2](xe), pe(order.long(), xe.size(1))], dim=1))

        def b(k):
            return mlp(v2e.bias.mlp, v2e.bias.input(pe(k, v2e.bias.pe_dim)))
        xv, xe = torch.relu(xv + b(torch.tensor([1]))), torch.relu(xe + b(order.long()))
        xv = xv + hyper(e2v.mlp1, e2v.norms[0], xv, 1)
        xe = xe + mlp(e2v.mlp1, torch.cat([e2v.norms[0](xe), pe(order.long(), xe.size(1))], dim=1))
        x0 = torch.cat([xv, xe]).mean(0, keepdim=True)
        x1 = (xv + h @ xe) / (1 + deg)
        x0 = x0 + hyper(e2v.mlp2, e2v.norms[1], x0, 0)
        x1 = x1 + hyper(e2v.mlp2, e2v.norms[1], x1, 1)
        z = x0 + x1
        out = z + mlp(e2v.mlp3, e2v.norms[2](z)) + e2v.bias
    return model.decoder(out)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("num_layers", [1, 2])
def test_ehnn_outputs_and_gradients_equal_the_dense_concatenated_formula(seed, num_layers):
    edges, hei, n = random_hypergraph(seed, num_nodes=10, num_edges=7, max_order=5)
    torch.manual_seed(seed)
    model = build_model("EHNN", in_channels=4, hidden_channels=6, out_channels=3, num_layers=num_layers,
                        pe_dim=8).double().eval()
    x = torch.randn(n, 4, dtype=torch.float64)
    out = model(x, hei)
    out.square().sum().backward()
    fast = param_grads(model)
    model.zero_grad()
    naive = naive_ehnn_concatenated(model, x, edges, n)
    naive.square().sum().backward()
    torch.testing.assert_close(out, naive)
    for k, g in param_grads(model).items():
        torch.testing.assert_close(fast[k], g, msg=k)


def _previous_head(self, x, extra=None, index=None, live=False):
    """HyperMLP.head before session 9: the extra columns' term added after the linear map."""
    lin = self.lins[0]
    if extra is None:
        return lin(x)
    d = x.size(-1)
    e = torch.nn.functional.linear(extra, lin.weight[:, d:])
    out = torch.nn.functional.linear(x, lin.weight[:, :d], lin.bias)
    return out + (e if index is None else e.index_select(0, index))


@pytest.mark.parametrize("seed, num_layers", [(0, 1), (1, 2), (2, 1)])
def test_ehnn_training_loss_on_some_nodes_equals_the_previous_maps(seed, num_layers, monkeypatch):
    """In training (dropout and hypernetwork dropout, same seed so the same masks) with a loss over some nodes (the
    live-rows backward after the last aggregation): outputs and gradients equal the previous maps' (ReLU then
    dropout, plain linear maps, the order term added after the map, CSR aggregations)."""
    import torch.nn.functional as F
    from hypergvl.models.nn import ehnn
    from hypergvl.models.nn.dropout import dropout
    from hypergvl.models.nn.sparse import SparseOperator
    edges, hei, n = random_hypergraph(seed, num_nodes=12, num_edges=8, max_order=5)
    torch.manual_seed(seed)
    model = build_model("EHNN", in_channels=5, hidden_channels=6, out_channels=3, num_layers=num_layers, pe_dim=8,
                        dropout=0.3, hyper_dropout=0.25, input_dropout=0.1).double().train()
    x = sparse_features(n, 5, 0.5, seed)
    rows = torch.arange(n) % 3 == 0

    def run():
        torch.manual_seed(7)
        model.zero_grad()
        model._cache.clear()
        out = model(x, hei)
        F.cross_entropy(out[rows], torch.arange(n)[rows] % 3).backward()
        return out.detach(), param_grads(model)
    new_out, new_grad = run()
    with monkeypatch.context() as patch:
        patch.setattr(ehnn, "relu_dropout", lambda t, p, training: dropout(F.relu(t), p, training))
        patch.setattr(ehnn, "live_rows_linear", F.linear)
        patch.setattr(ehnn, "live_mlp", lambda mlp, t: mlp(t))
        patch.setattr(ehnn.HyperMLP, "head", _previous_head)
        patch.setattr(ehnn, "BagOperator", type("CSR", (), {"wrap": staticmethod(lambda op: op)}))
        old_out, old_grad = run()
        s = model.incidence(x, hei, None).memo("ehnn", lambda: None)
        assert type(s.mean_v2e) is SparseOperator  # the CSR products of the previous code
    torch.testing.assert_close(new_out, old_out)
    for k, g in old_grad.items():
        torch.testing.assert_close(new_grad[k], g, msg=k)


def previous_ehnn(model, x, edges, num_nodes):
    """EHNN's forward before session 9 (the order term added after the map, ReLU then dropout, plain linear maps,
    no cached encodings) with a dense H: in training, the same random draws in the same order as the model's (its
    own modules, ``dropout.dropout``)."""
    import torch.nn.functional as F
    from hypergvl.models.nn.dropout import dropout
    h = dense_incidence(edges, num_nodes, torch.float64)
    order, deg = h.sum(0), h.sum(1, keepdim=True)
    orders, index = torch.unique(order.long(), return_inverse=True)

    def mlp(m, t, extra=None, rows=None):
        lin = m.lins[0]
        if extra is None:
            z = F.linear(t, lin.weight, lin.bias)
        else:
            d = t.size(1)
            e = F.linear(extra, lin.weight[:, d:])
            z = F.linear(t, lin.weight[:, :d], lin.bias) + (e if rows is None else e.index_select(0, rows))
        for layer in m.lins[1:]:
            z = F.linear(dropout(F.relu(z), m.dropout, m.training), layer.weight, layer.bias)
        return z

    def pe(k, d):
        return order_encoding(torch.as_tensor(k).reshape(-1), d).double()

    out = model.features(x)
    for i, conv in enumerate(model.convs):
        if i:
            out = dropout(out, model.dropout, model.training)
        v2e, e2v, dim = conv.v2e, conv.e2v, conv.v2e.dim
        z = conv.lin(dropout(out, conv.input_dropout, conv.training))
        z = z + mlp(v2e.mlp1, v2e.norms[0](z))
        x0, x1v, x1e = z.mean(0, keepdim=True), z, (h.t() @ z) / order[:, None]
        x0 = x0 + mlp(v2e.mlp2, v2e.norms[1](x0), pe(0, dim))
        x1v = x1v + mlp(v2e.mlp2, v2e.norms[1](x1v), pe(1, dim))
        x1e = x1e + mlp(v2e.mlp2, v2e.norms[1](x1e), pe(1, dim))
        xv, xe = x0 + x1v, x0 + x1e
        xv = xv + mlp(v2e.mlp3, v2e.norms[2](xv), pe(1, dim))
        xe = xe + mlp(v2e.mlp3, v2e.norms[2](xe), pe(orders, dim), index)
        b = v2e.bias
        xv = xv + mlp(b.mlp, b.input(pe(1, b.pe_dim)))
        head = b.mlp.lins[0](b.input(pe(orders, b.pe_dim))).index_select(0, index)
        for layer in b.mlp.lins[1:]:
            head = layer(dropout(F.relu(head), b.mlp.dropout, b.mlp.training))
        xe = xe + head
        xv, xe = dropout(F.relu(xv), conv.dropout, conv.training), dropout(F.relu(xe), conv.dropout, conv.training)
        xv = xv + mlp(e2v.mlp1, e2v.norms[0](xv), pe(1, dim))
        xe = xe + mlp(e2v.mlp1, e2v.norms[0](xe), pe(orders, dim), index)
        x0 = torch.cat([xv, xe]).mean(0, keepdim=True)
        x1 = (xv + h @ xe) / (1 + deg)
        x0 = x0 + mlp(e2v.mlp2, e2v.norms[1](x0), pe(0, dim))
        x1 = x1 + mlp(e2v.mlp2, e2v.norms[1](x1), pe(1, dim))
        z = x0 + x1
        out = z + mlp(e2v.mlp3, e2v.norms[2](z)) + e2v.bias
    return model.decoder(out)


@pytest.mark.parametrize("seed, num_layers, hidden", [(0, 1, 6), (1, 2, 8), (2, 1, 5)])
def test_ehnn_training_loss_on_some_nodes_equals_the_previous_forward(seed, num_layers, hidden):
    """In training (dropout, input and hypernetwork dropout, same seed) with a loss over some nodes (the live-rows
    backward after the last aggregation): outputs and gradients equal the previous forward's, written with a dense
    H; and in evaluation."""
    import torch.nn.functional as F
    edges, hei, n = random_hypergraph(seed, num_nodes=12, num_edges=8, max_order=5)
    torch.manual_seed(seed)
    model = build_model("EHNN", in_channels=5, hidden_channels=hidden, out_channels=3, num_layers=num_layers,
                        pe_dim=8, dropout=0.3, hyper_dropout=0.25, input_dropout=0.1).double().train()
    x = sparse_features(n, 5, 0.5, seed)
    rows = torch.arange(n) % 3 == 0

    def run(forward):
        torch.manual_seed(7)
        model.zero_grad()
        out = forward()
        F.cross_entropy(out[rows], torch.arange(n)[rows] % 3).backward()
        return out.detach(), param_grads(model)
    new_out, new_grad = run(lambda: model(x, hei))
    old_out, old_grad = run(lambda: previous_ehnn(model, x, edges, n))
    torch.testing.assert_close(new_out, old_out)
    for k, g in old_grad.items():
        torch.testing.assert_close(new_grad[k], g, msg=k)
    model.eval()
    with torch.no_grad():
        torch.testing.assert_close(model(x, hei), previous_ehnn(model, x, edges, n))
