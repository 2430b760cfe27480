"""T-HyperGNN (tensor message passing, TMPHN): polynomial aggregation over the members of each hyperedge."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import HypergraphModel, dense
from .checks import check_choice, check_common, check_int
from .dropout import dropout as drop
from .registry import register_model
from .sparse import BagOperator, Incidence, SparseOperator

_CHUNK = 1 << 18  # rows x features elements of each coefficient tensor per chunk (cache-sized: 2.7x faster than 4M)


def adjacency_coefficient(c: int, m: int) -> float:
    r""":math:`a(c) = c / \sum_{i=0}^{c-1} (-1)^i \binom{c}{i} (c-i)^M`: the hyperedge size over the number of
    surjections from :math:`M` slots onto its :math:`c` members (Pena-Pena et al.'s adjacency tensor)."""
    return c / sum((-1) ** i * math.comb(c, i) * (c - i) ** m for i in range(c))


class TensorRows:
    r"""For every node :math:`v` and hyperedge :math:`e \ni v`, the member list ``[v, others...]`` that
    :func:`tensor_message` multiplies, grouped by length :math:`c = |e| \le M`, with the weight
    :math:`a(c)/d_v`.

    Duplicate incidences count once. A hyperedge with :math:`|e| > M` is cut, as the official code's
    ``NeighborFinder`` does, to the target plus :math:`M-1` uniformly random other members: here one random
    order of the members is drawn per hyperedge (``torch.Generator`` seeded with ``seed``); a target among the
    first :math:`M` keeps those :math:`M`, any other target joins the first :math:`M-1` (so each target sees
    :math:`M-1` uniformly chosen others, as in the reference, which draws per target with Python's
    ``random``). Built with vectorised sorts and gathers; the only Python loops run over sizes and positions.

    Attributes: ``groups`` (list of ``(rows [R, c], weight [R])``), ``has_edge`` (bool ``[N]``: :math:`d_v > 0`).
    """

    def __init__(self, inc: Incidence, m: int, seed: int) -> None:
        n = inc.num_nodes
        dev = inc.node.device
        key = torch.unique(inc.edge * max(n, 1) + inc.node)  # sorted by hyperedge, then node
        edge, node = key // max(n, 1), key % max(n, 1)
        size = torch.bincount(edge, minlength=inc.num_edges)
        degree = torch.bincount(node, minlength=n)
        self.has_edge = degree > 0
        g = torch.Generator(device="cpu").manual_seed(seed)
        rand = torch.rand(edge.numel(), generator=g).to(dev)
        order = torch.argsort(edge.double() * 2 + rand.double())  # a random member order within each hyperedge
        edge, node = edge[order], node[order]
        start = torch.cumsum(size, 0) - size
        rank = torch.arange(edge.numel(), device=dev) - start[edge]
        c_of = size[edge]
        self.groups: list[tuple[Tensor, Tensor]] = []
        for c in range(1, m + 1):
            # hyperedges of size c (all members), or the first m members of larger ones (c == m)
            sel = (c_of == c) | ((c == m) & (c_of > m) & (rank < m))
            members = node[sel].view(-1, c)  # grouped by hyperedge, ranks 0..c-1 in order
            parts = [members[:, [j] + [i for i in range(c) if i != j]] for j in range(c)]
            if c == m:  # targets past the first m of a large hyperedge: [v, first m-1 members]
                tail = (c_of > m) & (rank >= m)
                if bool(tail.any()):
                    head = members[c_of[sel][::c] > m]  # the first m members of each large hyperedge
                    big_edges = torch.unique_consecutive(edge[sel & (c_of > m)])
                    slot = torch.searchsorted(big_edges, edge[tail])
                    parts.append(torch.cat([node[tail].unsqueeze(1), head[slot, : m - 1]], dim=1))
            rows = torch.cat(parts) if parts else node.new_zeros(0, c)
            if rows.numel():
                weight = adjacency_coefficient(c, m) / degree[rows[:, 0]].to(inc.dtype)
                self.groups.append((rows, weight))


def _powers(x: Tensor, top: int) -> list:
    """Coefficients :math:`x^k / k!`, :math:`k = 0..top`, of :math:`e^{xt}` (the constant one as the number 1)."""
    out: list = [1.0]
    for k in range(1, top + 1):
        out.append(x if k == 1 else (out[-1] * x).div_(k))
    return out


def _row_coefficient(x: Tensor, r: Tensor, m: int) -> Tensor:
    r""":math:`[t^{M-1}]\, e^{x_{r_0} t} \prod_{i \ge 1} (e^{x_{r_i} t} - 1)` for each member list (row) of ``r``.

    The series are lists of ``[rows, F]`` coefficients; after :math:`i` factors without a constant term the
    coefficients below degree :math:`i` are zero and are skipped, and the last factor only forms degree
    :math:`M-1`."""
    c = r.size(1)
    poly = _powers(x[r[:, 0]], m - 1)  # poly[d] is read for d >= low, the lowest degree that can be nonzero
    low = 0
    for i in range(1, c):
        b = _powers(x[r[:, i]], m - 1 - low)
        new = [None] * m
        for d in (range(m - 1, m) if i == c - 1 else range(low + 1, m)):
            new[d] = b[1] * poly[d - 1]
            for j in range(2, d - low + 1):  # poly[0] is the number 1: only for j = d when low = 0
                new[d] = new[d].addcmul_(poly[d - j], b[j]) if j < d else new[d].add_(b[j], alpha=poly[0])
        poly, low = new, low + 1
    top = poly[m - 1]
    return top if isinstance(top, Tensor) else torch.full_like(x[r[:, 0]], float(top))


def tensor_message(x: Tensor, rows: TensorRows, m: int) -> Tensor:
    r"""T-HyperGNN's tensor message passing for all nodes at once (nodes in no hyperedge keep :math:`x_v`):

    .. math::
        \mathbf{m}_v = \sum_{e \ni v} \frac{a(|e|)}{d_v}\,(M-1)!\,[t^{M-1}]
        \Big(e^{\mathbf{x}_v t} \prod_{u \in e \setminus v} \big(e^{\mathbf{x}_u t} - 1\big)\Big)

    per feature. This generating function equals the reference's enumeration: the sum over the size-:math:`M`
    multisets of :math:`e` that contain every member, with one :math:`v` removed, of the number of distinct
    orderings times the product of member features.
    """
    out = torch.zeros_like(x)
    step = max(1, _CHUNK // max(1, x.size(1)))
    scale = math.factorial(m - 1)
    for rows_c, weight in rows.groups:
        for lo in range(0, rows_c.size(0), step):
            r = rows_c[lo:lo + step]
            out.index_add_(0, r[:, 0], _row_coefficient(x, r, m) * (scale * weight[lo:lo + step, None]))
    return torch.where(rows.has_edge.unsqueeze(1), out, x)


@register_model("T-HyperGNN")
class THyperGNN(HypergraphModel):
    r"""T-HyperGNN, tensor message-passing variant, from `"T-HyperGNNs: Hypergraph Neural Networks via Tensor
    Representations" <https://arxiv.org/abs/2306.02560>`_ (Wang et al., IEEE TNNLS 2024), DHG-Bench appendix
    A.2.3 (reference class ``TMPHN``). An :math:`M`-th order hypergraph is an :math:`M`-th order adjacency
    tensor (t-HGSP); its shift :math:`\mathcal{A}\,\mathbf{x}^{M-1}` is a polynomial of degree :math:`M-1` in the
    node features, computed sparsely by tensor message passing:

    .. math::
        \mathbf{h}_v = \mathrm{ReLU}\big([\mathbf{x}_v \Vert \mathbf{m}_v]\,\mathbf{W} + \mathbf{b}\big),
        \qquad \mathbf{y}_v = \mathbf{h}_v \mathbf{W}_o + \mathbf{b}_o

    with :math:`\mathbf{m}_v` from :func:`tensor_message`, :math:`a(c) = c / \#\{\text{surjections } M \to c\}`
    (:func:`adjacency_coefficient`) and :math:`d_v` the number of hyperedges of :math:`v`. A self-loop
    contributes :math:`\mathbf{x}_v^{M-1}/d_v`; a size-:math:`M` hyperedge :math:`\prod_{u \ne v}\mathbf{x}_u / d_v`.
    Hyperedges larger than :math:`M` are cut per target (:class:`TensorRows`), so results on those depend on
    ``seed``. ``combine="sum"`` uses :math:`\mathbf{x}_v + \mathbf{m}_v`. With more layers, each aggregates the
    previous layer's output (dropout between layers; the reference has no dropout, and one layer). The
    first layer's messages depend on the input features and the structure only, so they are computed once
    (vectorised per hyperedge size, no per-node loop). Not defined for hypergraph classification (DHG-Bench
    appendix C.1).

    For :math:`\mathcal{V} = \{0, 1, 2, 3\}`, :math:`\mathcal{E} = \{\{0, 1, 2\}, \{1, 2, 3\}\}`::

        hyperedge_index = torch.tensor([[0, 1, 2, 1, 2, 3],
                                        [0, 0, 0, 1, 1, 1]])

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Output size of each tensor layer (the reference's ``hid_dim``).
        out_channels (int): Size of each output vector.
        num_layers (int): Number of tensor layers. (default: :obj:`1`)
        dropout (float): Dropout between tensor layers. (default: :obj:`0.0`)
        max_cardinality (int): The order :math:`M` of the adjacency tensor. (default: :obj:`5`)
        combine (str): ``"concat"`` or ``"sum"`` of self features and messages. (default: :obj:`"concat"`)
        seed (int): Seed of the member order that cuts hyperedges larger than :math:`M`. (default: :obj:`0`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{nnz})`, optional number of hyperedges :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = ("Wang et al., T-HyperGNNs: Hypergraph Neural Networks via Tensor Representations, IEEE TNNLS 2024, "
             "https://arxiv.org/abs/2306.02560")
    unsupported_tasks = {"graph": "T-HyperGNN is a tensor-based method that DHG-Bench cannot apply to hypergraph "
                                  "classification (appendix C.1; the reference's set_task_args rejects it)"}

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 1,
                 dropout: float = 0.0, *, max_cardinality: int = 5, combine: str = "concat", seed: int = 0) -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        self.m = check_int("max_cardinality", max_cardinality)
        self.combine = check_choice("combine", combine, ("concat", "sum"))
        self.seed = check_int("seed", seed, 0)
        self.dropout = dropout
        factor = 2 if combine == "concat" else 1
        dims = [in_channels] + [hidden_channels] * num_layers
        self.weights = nn.ParameterList(nn.Parameter(torch.empty(factor * a, b)) for a, b in zip(dims, dims[1:]))
        self.biases = nn.ParameterList(nn.Parameter(torch.empty(b)) for b in dims[1:])
        # stored column-major (a transposed view): the weight gradient of h @ W is then computed as (grad^T h)^T,
        # a fast GEMM, where the h^T grad of a row-major W (an N-long reduction into a hidden x classes block) is
        # about 20x slower on CPU (measured on Cora: 2.5 ms against 0.12 ms)
        self.out_weight = nn.Parameter(torch.empty(out_channels, hidden_channels).t())
        self.out_bias = nn.Parameter(torch.empty(out_channels))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """The reference's init: weights and biases uniform in :math:`\\pm 1/\\sqrt{\\text{fan-out}}`."""
        with torch.no_grad():
            for w, b in [*zip(self.weights, self.biases), (self.out_weight, self.out_bias)]:
                bound = 1.0 / math.sqrt(w.size(1))
                w.uniform_(-bound, bound)
                b.uniform_(-bound, bound)

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        rows = inc.memo(("t-hypergnn", self.m, self.seed), lambda: TensorRows(inc, self.m, self.seed))
        def first_input() -> Tensor | SparseOperator:
            h0 = dense(self.features(x))
            return _constant_operand(self._combine(h0, tensor_message(h0, rows, self.m)))

        h = None if not x.requires_grad else dense(self.features(x))
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            if h is None:  # constant input of the first layer: computed once (features densified only then)
                z = self._cache.get((x, hyperedge_index), ("layer-0 input", self.m, self.seed, inc.num_edges,
                                                           self.combine), first_input)
                h = F.relu(z @ w + b)
            else:
                h = F.relu(self._combine(h, tensor_message(h, rows, self.m)) @ w + b)
            if i < len(self.weights) - 1:
                h = drop(h, self.dropout, self.training)
        return h @ self.out_weight + self.out_bias

    def _combine(self, h: Tensor, msg: Tensor) -> Tensor:
        return torch.cat([h, msg], dim=1) if self.combine == "concat" else h + msg


def _constant_operand(z: Tensor) -> Tensor | SparseOperator:
    """``z`` as a sparse :class:`BagOperator` when at most 10% of it is nonzero (bag-of-words features and their
    tensor messages: 1.3% and 1.7% on Cora), so ``z @ W`` and its weight gradient cost O(nnz) instead of O(N F)."""
    nonzero = z != 0
    if int(nonzero.sum()) > 0.1 * z.numel():
        return z
    row, col = nonzero.nonzero(as_tuple=True)
    return BagOperator(row, col, z[row, col], tuple(z.shape))
