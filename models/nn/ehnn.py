"""EHNN-MLP: equivariant hypergraph network whose order-dependent weights come from small hypernetworks."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import HypergraphModel, Linear
from .checks import check_choice, check_common, check_int, check_probability
from .dropout import dropout as drop, relu_dropout
from .live_rows import live_mlp, live_rows_linear
from .mlp import MLP, NORMALIZATIONS
from .registry import register_model
from .sparse import BagOperator, Incidence, SparseOperator


def order_encoding(order: Tensor, dim: int, dtype: torch.dtype = torch.float32) -> Tensor:
    r"""The sinusoidal encoding of an order :math:`k` (EHNN's ``PositionalEncoding``, the transformer one):
    :math:`\mathrm{PE}(k)_{2i} = \sin(k / 10000^{2i/d})`, :math:`\mathrm{PE}(k)_{2i+1} = \cos(k / 10000^{2i/d})`.
    Computed for any order, so no table bounds the largest hyperedge (the reference sizes a table by the
    largest order of the dataset; the values are the same), in ``dtype``."""
    div = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32, device=order.device) * (-math.log(10000.0) / dim))
    angle = order.to(torch.float32).unsqueeze(-1) * div
    out = torch.zeros(*order.shape, dim, device=order.device, dtype=dtype)
    out[..., 0::2] = torch.sin(angle)
    out[..., 1::2] = torch.cos(angle)[..., : dim // 2]
    return out


class HyperMLP(nn.Module):
    r"""EHNN's inner ``MLP``: Linear, then (ReLU, dropout, Linear) per further layer; no normalisation (the
    reference creates LayerNorms here but never calls them, so they are left out).

    ``forward(x, extra, index)`` is the MLP of :math:`[\mathbf{x} \Vert \mathbf{e}]` with :math:`\mathbf{e}` the
    row ``index`` of ``extra`` (``index`` omitted: ``extra``'s one row for every row), the order encoding that
    conditions the hypernetwork. Its columns of the first weight act on the few distinct rows of ``extra``
    before they are gathered, :math:`[\mathbf{x} \Vert \mathbf{e}]\mathbf{W}^\top = \mathbf{x}\mathbf{W}_x^\top +
    \mathbf{e}\mathbf{W}_e^\top`, which is exact (nothing nonlinear precedes) and spares the concatenation."""

    def __init__(self, in_channels: int, out_channels: int, hidden: int, num_layers: int, dropout: float) -> None:
        super().__init__()
        dims = [in_channels] + [hidden] * (num_layers - 1) + [out_channels]
        self.lins = nn.ModuleList(Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.dropout = dropout

    def reset_parameters(self) -> None:
        for lin in self.lins:
            lin.reset_parameters()

    def forward(self, x: Tensor, extra: Tensor | None = None, index: Tensor | None = None,
                live: bool = False) -> Tensor:
        """``live``: the linear maps skip, in the backward, the rows whose gradient is zero
        (:func:`~hypergvl.models.nn.live_rows.live_rows_linear`; for the maps after the last aggregation)."""
        return self.tail(self.head(x, extra, index, live), live)

    def head(self, x: Tensor, extra: Tensor | None = None, index: Tensor | None = None,
             live: bool = False) -> Tensor:
        """The first Linear map (of ``[x || extra[index]]`` when ``extra`` is given). One row of ``extra`` for
        every row is folded into the bias; gathered rows are the ``addmm`` input (no separate sum)."""
        lin = self.lins[0]
        linear = live_rows_linear if live else F.linear
        if extra is None:
            return linear(x, lin.weight, lin.bias)
        d = x.size(-1)
        e = F.linear(extra, lin.weight[:, d:], lin.bias)  # [rows of extra, out], the bias included
        if index is None and e.size(0) == 1:
            return linear(x, lin.weight[:, :d], e.view(-1))
        if index is None:
            return linear(x, lin.weight[:, :d]) + e
        return torch.addmm(e.index_select(0, index), x, lin.weight[:, :d].t())

    def tail(self, h: Tensor, live: bool = False) -> Tensor:
        """(ReLU, dropout, Linear) per further layer (ReLU and dropout in one pass)."""
        linear = live_rows_linear if live else F.linear
        for lin in self.lins[1:]:
            h = linear(relu_dropout(h, self.dropout, self.training), lin.weight, lin.bias)
        return h


class OrderMLP(nn.Module):
    r"""The bias hypernetwork :math:`\mathbf{b}(k) = \mathrm{MLP}(\mathbf{W}\,\mathrm{PE}(k) + \mathbf{c})`
    (reference ``PositionalMLP``)."""

    def __init__(self, out_channels: int, pe_dim: int, hidden: int, num_layers: int, dropout: float) -> None:
        super().__init__()
        self.pe_dim = pe_dim
        self.input = Linear(pe_dim, hidden)
        self.mlp = HyperMLP(hidden, out_channels, hidden, num_layers, dropout)

    def reset_parameters(self) -> None:
        self.input.reset_parameters()
        self.mlp.reset_parameters()

    def forward(self, order: Tensor | None = None, encoding: Tensor | None = None) -> Tensor:
        """``encoding``: ``PE(order)`` if already at hand (the structure caches it; ``order`` is then unused)."""
        if encoding is None:
            encoding = order_encoding(order, self.pe_dim, self.input.weight.dtype)
        return self.mlp(self.input(encoding))

    def gathered(self, orders: Tensor, index: Tensor, encoding: Tensor | None = None) -> Tensor:
        """``forward(orders[index])`` with the maps before the first nonlinearity applied once per distinct
        order (exact); the dropout after it is still drawn per row, as in ``forward``."""
        if encoding is None:
            encoding = order_encoding(orders, self.pe_dim, self.input.weight.dtype)
        table = self.mlp.head(self.input(encoding))
        return self.mlp.tail(table.index_select(0, index))


class _Structure:
    """What EHNN needs of a hypergraph, without a dense incidence: the non-empty hyperedges renumbered
    ``0..M'-1`` (a hyperedge with no member is not part of the hypergraph), their orders :math:`|e|` (also as
    the distinct ``orders`` and each hyperedge's ``order_index`` into them),
    :math:`\\mathbf{D}_e^{-1}\\mathbf{H}^\\top` and :math:`\\mathbf{H}` as sparse operators, and :math:`d_v`."""

    def __init__(self, inc: Incidence) -> None:
        keep = inc.deg_e > 0
        new_id = torch.cumsum(keep.long(), 0) - 1
        edge = new_id[inc.edge]
        self.num_nodes, self.num_edges = inc.num_nodes, int(keep.sum())
        self.order = inc.deg_e[keep].long()
        self.orders, self.order_index = torch.unique(self.order, return_inverse=True)
        inv_order = 1.0 / inc.deg_e[keep]
        # embedding_bag products (BagOperator): no zero-filled CSR output copied, forward or backward
        self.mean_v2e = BagOperator.wrap(SparseOperator(edge, inc.node, inv_order[edge],
                                                        (self.num_edges, self.num_nodes)))
        self.sum_e2v = BagOperator.wrap(SparseOperator(inc.node, edge, torch.ones_like(inv_order[edge]),
                                                       (self.num_nodes, self.num_edges)))
        self.deg_v = inc.deg_v.unsqueeze(-1)
        self._encodings: dict = {}

    def encoding(self, which: str, dim: int, dtype: torch.dtype) -> Tensor:
        """The (cached) order encodings ``PE(0), PE(1)`` (``which="unit"``, ``[2, dim]``) or ``PE`` of the
        distinct orders (``"orders"``), constants of the structure."""
        key = (which, dim, dtype)
        if key not in self._encodings:  # a normal tensor even if first asked for under inference mode
            with torch.inference_mode(False), torch.no_grad():
                order = torch.arange(2, device=self.orders.device) if which == "unit" else self.orders.clone()
                self._encodings[key] = order_encoding(order, dim, dtype)
        return self._encodings[key]


class LinearV2E(nn.Module):
    r"""EHNN-MLP's node-to-(node, hyperedge) layer (reference ``LinearV2E``)::

        x   <- x + MLP1(LN1 x)
        x0  = mean_v x;  x1_v = x;  x1_e = H^T x / |e|
        x0  <- x0 + MLP2([LN2 x0, PE(0)]);  x1_* <- x1_* + MLP2([LN2 x1_*, PE(1)])
        x_v = x0 + x1_v;  x_e = x0 + x1_e
        x_v <- x_v + MLP3([LN3 x_v, PE(1)]) + b(1);  x_e <- x_e + MLP3([LN3 x_e, PE(|e|)]) + b(|e|)
    """

    def __init__(self, dim: int, pe_dim: int, hyper_dim: int, hyper_layers: int, hyper_dropout: float) -> None:
        super().__init__()
        self.dim = dim
        self.mlp1 = HyperMLP(dim, dim, hyper_dim, hyper_layers, hyper_dropout)
        self.mlp2 = HyperMLP(2 * dim, dim, hyper_dim, hyper_layers, hyper_dropout)
        self.mlp3 = HyperMLP(2 * dim, dim, hyper_dim, hyper_layers, hyper_dropout)
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(3))
        self.bias = OrderMLP(dim, pe_dim, hyper_dim, hyper_layers, hyper_dropout)

    def reset_parameters(self) -> None:
        for m in (self.mlp1, self.mlp2, self.mlp3, *self.norms, self.bias):
            m.reset_parameters()

    def forward(self, x: Tensor, s: _Structure) -> tuple[Tensor, Tensor]:
        zero, one = s.encoding("unit", self.dim, x.dtype).split(1)
        pe_orders = s.encoding("orders", self.dim, x.dtype)
        x = x + self.mlp1(self.norms[0](x))
        x0 = x.mean(dim=0, keepdim=True)
        x1_v, x1_e = x, s.mean_v2e @ x
        x0 = x0 + self.mlp2(self.norms[1](x0), zero)
        x1_v = x1_v + self.mlp2(self.norms[1](x1_v), one)
        x1_e = x1_e + self.mlp2(self.norms[1](x1_e), one)
        x_v, x_e = x0 + x1_v, x0 + x1_e
        x_v = x_v + self.mlp3(self.norms[2](x_v), one)
        x_e = x_e + self.mlp3(self.norms[2](x_e), pe_orders, s.order_index)
        pe_dim, dtype = self.bias.pe_dim, self.bias.input.weight.dtype
        unit = s.encoding("unit", pe_dim, dtype)
        return (x_v + self.bias(encoding=unit[1:]),
                x_e + self.bias.gathered(s.orders, s.order_index, s.encoding("orders", pe_dim, dtype)))


class LinearE2V(nn.Module):
    r"""EHNN-MLP's (node, hyperedge)-to-node layer (reference ``LinearE2V``)::

        x_v <- x_v + MLP1([LN1 x_v, PE(1)]);  x_e <- x_e + MLP1([LN1 x_e, PE(|e|)])
        x0  = mean over nodes and hyperedges;  x1 = (x_v + H x_e) / (1 + d_v)
        x0  <- x0 + MLP2([LN2 x0, PE(0)]);  x1 <- x1 + MLP2([LN2 x1, PE(1)])
        x   = x0 + x1;  x <- x + MLP3(LN3 x) + b
    """

    def __init__(self, dim: int, hyper_dim: int, hyper_layers: int, hyper_dropout: float) -> None:
        super().__init__()
        self.dim = dim
        self.mlp1 = HyperMLP(2 * dim, dim, hyper_dim, hyper_layers, hyper_dropout)
        self.mlp2 = HyperMLP(2 * dim, dim, hyper_dim, hyper_layers, hyper_dropout)
        self.mlp3 = HyperMLP(dim, dim, hyper_dim, hyper_layers, hyper_dropout)
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(3))
        self.bias = nn.Parameter(torch.empty(1, dim))

    def reset_parameters(self) -> None:
        for m in (self.mlp1, self.mlp2, self.mlp3, *self.norms):
            m.reset_parameters()
        bound = 1.0 / math.sqrt(self.dim)
        with torch.no_grad():
            self.bias.uniform_(-bound, bound)

    def forward(self, x_v: Tensor, x_e: Tensor, s: _Structure) -> Tensor:
        zero, one = s.encoding("unit", self.dim, x_v.dtype).split(1)
        x_v = x_v + self.mlp1(self.norms[0](x_v), one)
        x_e = x_e + self.mlp1(self.norms[0](x_e), s.encoding("orders", self.dim, x_e.dtype), s.order_index)
        x0 = (x_v.sum(0, keepdim=True) + x_e.sum(0, keepdim=True)) / (s.num_nodes + s.num_edges)
        x1 = (x_v + s.sum_e2v @ x_e) / (1 + s.deg_v)
        x0 = x0 + self.mlp2(self.norms[1](x0), zero)
        # row-wise from here to the output: maps of at least LIVE_MIN_WEIGHTS weights (not at the Cora width 64)
        # skip, in the backward, the rows outside the loss
        x1 = x1 + self.mlp2(self.norms[1](x1), one, live=True)
        x = x0 + x1
        return x + self.mlp3(self.norms[2](x), live=True) + self.bias


class EHNNConv(nn.Module):
    r"""One EHNN-MLP block (reference ``EHNNLinearConv``): input dropout, a linear map to the hidden width,
    :class:`LinearV2E`, ReLU and dropout on nodes and hyperedges, :class:`LinearE2V`."""

    def __init__(self, in_channels: int, hidden: int, dropout: float, input_dropout: float, pe_dim: int,
                 hyper_dim: int, hyper_layers: int, hyper_dropout: float) -> None:
        super().__init__()
        self.lin = Linear(in_channels, hidden)
        self.v2e = LinearV2E(hidden, pe_dim, hyper_dim, hyper_layers, hyper_dropout)
        self.e2v = LinearE2V(hidden, hyper_dim, hyper_layers, hyper_dropout)
        self.dropout, self.input_dropout = dropout, input_dropout

    def reset_parameters(self) -> None:
        for m in (self.lin, self.v2e, self.e2v):
            m.reset_parameters()

    def forward(self, x: Tensor | SparseOperator, s: _Structure) -> Tensor:
        x_v, x_e = self.v2e(self.lin(drop(x, self.input_dropout, self.training)), s)
        x_v = relu_dropout(x_v, self.dropout, self.training)
        x_e = relu_dropout(x_e, self.dropout, self.training)
        return self.e2v(x_v, x_e, s)


@register_model("EHNN")
class EHNN(HypergraphModel):
    r"""EHNN-MLP from `"Equivariant Hypergraph Neural Networks" <https://arxiv.org/abs/2208.10428>`_ (Kim et
    al., ECCV 2022), DHG-Bench appendix A.2 (tensor-based methods). A hypergraph is a sequence of tensors of
    orders :math:`k = 1, \dots, K`; EHNN's maximally expressive equivariant linear layer between them (paper
    sec. 3) shares its weights across orders through hypernetworks conditioned on the order (sec. 4), which
    gives a layer of constant size for any :math:`K`. Its MLP realisation (sec. 4.2, reference
    ``EHNNLinear``, the variant every DHG-Bench config uses) is, per block,

    .. math::
        \mathbf{x}_v,\ \mathbf{x}_e = \mathrm{V2E}(\mathbf{X}\mathbf{W}), \qquad
        \mathbf{x}'_v = \mathrm{E2V}\big(\sigma(\mathbf{x}_v), \sigma(\mathbf{x}_e)\big)

    where V2E mixes each node with the global mean :math:`\frac{1}{N}\sum_u \mathbf{x}_u` and each hyperedge
    with its mean :math:`\mathbf{x}_e = \frac{1}{|e|}\sum_{u \in e} \mathbf{x}_u` (:math:`\mathbf{D}_e^{-1}
    \mathbf{H}^\top \mathbf{X}`), E2V returns :math:`\frac{\mathbf{x}_v + \sum_{e \ni v}\mathbf{x}_e}{1 + d_v}`
    (:math:`\mathbf{H}` times the hyperedge features) plus the mean over nodes and hyperedges, and every map is
    an MLP applied to :math:`[\mathrm{LN}(\cdot) \Vert \mathrm{PE}(k)]` with :math:`\mathrm{PE}` the sinusoidal
    encoding of the order :math:`k` of the tensor it acts on (the order-conditioned hypernetwork); see
    :class:`LinearV2E`, :class:`LinearE2V`. :math:`\sigma` is ReLU then dropout; blocks are separated by
    dropout; an :class:`~hypergvl.models.nn.mlp.MLP` decoder follows. Sparse products replace the reference's dense
    :math:`N \times M` incidence and :math:`M \times M` overlap masks (which the MLP variant never uses).
    Hidden width = ``hidden_channels`` (the reference's ``ehnn_hidden_channel`` = ``ehnn_inner_channel``).
    The global means make a node's output depend on every node (transductive, as in the paper).
    Not defined for hypergraph classification (DHG-Bench appendix C.1).

    For :math:`\mathcal{V} = \{0, 1, 2, 3\}`, :math:`\mathcal{E} = \{\{0, 1, 2\}, \{1, 2, 3\}\}`::

        hyperedge_index = torch.tensor([[0, 1, 2, 1, 2, 3],
                                        [0, 0, 0, 1, 1, 1]])

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Width of node and hyperedge features inside the blocks.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of V2E/E2V blocks (DHG-Bench: 1). (default: :obj:`1`)
        dropout (float): Dropout after V2E, between blocks and in the decoder. (default: :obj:`0.5`)
        input_dropout (float): Dropout on each block's input. (default: :obj:`0.0`)
        pe_dim (int): Encoding width of the bias hypernetwork. (default: :obj:`64`)
        hyper_dim (int): Hidden width of the hypernetwork MLPs. (default: :obj:`64`)
        hyper_layers (int): Depth of the hypernetwork MLPs. (default: :obj:`2`)
        hyper_dropout (float): Dropout inside the hypernetwork MLPs. (default: :obj:`0.2`)
        decoder_hidden (int): Hidden width of the decoder MLP. (default: :obj:`64`)
        decoder_layers (int): Depth of the decoder MLP. (default: :obj:`2`)
        normalization (str): ``"ln"``, ``"bn"`` or ``"none"`` in the decoder. (default: :obj:`"ln"`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{nnz})`, optional number of hyperedges :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = ("Kim et al., Equivariant Hypergraph Neural Networks, ECCV 2022, https://arxiv.org/abs/2208.10428")
    unsupported_tasks = {"graph": "EHNN is a tensor-based method that DHG-Bench cannot apply to hypergraph "
                                  "classification (appendix C.1; the reference's set_task_args rejects it)"}

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 1,
                 dropout: float = 0.5, *, input_dropout: float = 0.0, pe_dim: int = 64, hyper_dim: int = 64,
                 hyper_layers: int = 2, hyper_dropout: float = 0.2, decoder_hidden: int = 64,
                 decoder_layers: int = 2, normalization: str = "ln") -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        check_probability("input_dropout", input_dropout)
        check_probability("hyper_dropout", hyper_dropout)
        for name, value in (("pe_dim", pe_dim), ("hyper_dim", hyper_dim), ("hyper_layers", hyper_layers),
                            ("decoder_hidden", decoder_hidden), ("decoder_layers", decoder_layers)):
            check_int(name, value)
        check_choice("normalization", normalization, NORMALIZATIONS)
        self.dropout = dropout
        self.convs = nn.ModuleList(
            EHNNConv(in_channels if i == 0 else hidden_channels, hidden_channels, dropout, input_dropout, pe_dim,
                     hyper_dim, hyper_layers, hyper_dropout) for i in range(num_layers))
        self.decoder = MLP(hidden_channels, decoder_hidden, out_channels, decoder_layers, dropout,
                           normalization=normalization)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for conv in self.convs:
            conv.reset_parameters()
        self.decoder.reset_parameters()

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        s = inc.memo("ehnn", lambda: _Structure(inc))
        h = self.features(x)
        h = BagOperator.wrap(h) if isinstance(h, SparseOperator) else h  # embedding_bag products (2.5x faster)
        for conv in self.convs[:-1]:
            h = drop(conv(h, s), self.dropout, self.training)
        return live_mlp(self.decoder, self.convs[-1](h, s))
