"""SheafHyperGNN: linear diffusion with a learned diagonal sheaf, by scatters over incidences (no Nd x Md maps)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._common import (HypergraphModel, Incidence, Linear, SparseOperator, _inv, check_bool, check_choice,
                      check_common, check_int, dense, dropout as drop)
from .registry import register_model

NORMALISATIONS = ("sym", "rw")


def sheaf_diffusion(inc: Incidence, z: Tensor, maps: Tensor, normalisation: str) -> Tensor:
    r"""One diagonal-sheaf diffusion :math:`\mathbf{P}\mathbf{Z}'` of ``z`` (``[N, d, f]``) with restriction maps
    ``maps`` (``[nnz, d]``, one diagonal :math:`\mathcal{F}_{v \trianglelefteq e}` per incidence), by scatters:

    .. math::
        \mathbf{m}_e = \frac{1}{|e|}\sum_{u \in e} \alpha_{u,e} \odot \mathbf{z}'_u, \quad
        (\mathbf{M}\mathbf{Z}')_v = c_v \sum_{e \ni v} \alpha_{v,e} \odot \mathbf{m}_e, \quad
        \mathbf{b}_v = c_v \sum_{e \ni v} \frac{\alpha_{v,e}^{2}}{|e|}, \quad
        (\mathbf{P}\mathbf{Z}')_v = \mathbf{z}'_v + (\mathbf{M}\mathbf{Z}')_v - 2\,\mathbf{b}_v \odot \mathbf{z}'_v

    i.e. :math:`\mathbf{P} = \mathbf{I} - 2\,\mathrm{blockdiag}(\mathbf{M}) + \mathbf{M}` with
    :math:`\mathbf{M} = \mathbf{C}\mathbf{H}_\mathcal{F}\mathbf{B}^{-1}\mathbf{H}_\mathcal{F}^\top`; ``"sym"``:
    :math:`c_v = d_v^{-1/2}`, :math:`\mathbf{z}'_v = d_v^{-1/2}\mathbf{z}_v`; ``"rw"``: :math:`c_v = d_v^{-1}`,
    :math:`\mathbf{z}'_v = \mathbf{z}_v` (0 for isolated nodes). Cost :math:`O(\mathrm{nnz}\cdot d \cdot f)`."""
    v, e = inc.node, inc.edge
    if normalisation == "sym":
        c = _inv(inc.deg_v, 0.5)
        z = z * c.view(-1, 1, 1)
    else:
        c = _inv(inc.deg_v)
    inv_size = _inv(inc.deg_e)
    m = z.new_zeros(inc.num_edges, *z.shape[1:]).index_add_(0, e, maps.unsqueeze(-1) * z[v])
    m = m * inv_size.view(-1, 1, 1)
    back = z.new_zeros(z.shape).index_add_(0, v, maps.unsqueeze(-1) * m[e])
    diag = maps.new_zeros(z.shape[:2]).index_add_(0, v, maps.square() * inv_size[e].unsqueeze(-1))
    c = c.view(-1, 1, 1)
    return z + c * back - 2.0 * (c * diag.unsqueeze(-1)) * z


class DiagSheafBuilder(nn.Module):
    r"""The restriction maps :math:`\alpha_{v,e} = \mathrm{sigmoid}(\mathbf{W}\,\mathrm{LN}([\bar{\mathbf{x}}_v \,\|\,
    \bar{\mathbf{e}}_e]) + \mathbf{c}) \in (0, 1)^d` of one layer, from the stalk means of the node and hyperedge
    features (the official code's ``MLP_var1``; LN only with ``norm``)."""

    def __init__(self, channels: int, stalk_dim: int, norm: bool = True) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(2 * channels) if norm else nn.Identity()
        self.lin = nn.Linear(2 * channels, stalk_dim)

    def reset_parameters(self) -> None:
        if isinstance(self.norm, nn.LayerNorm):
            self.norm.reset_parameters()
        self.lin.reset_parameters()

    def forward(self, inc: Incidence, x: Tensor, e: Tensor) -> Tensor:
        pair = torch.cat([x.mean(1)[inc.node], e.mean(1)[inc.edge]], dim=-1)
        return torch.sigmoid(self.lin(self.norm(pair)))


@register_model("SheafHyperGNN")
class SheafHyperGNN(HypergraphModel):
    r"""SheafHyperGNN from `"Sheaf Hypergraph Networks" <https://arxiv.org/abs/2309.17116>`_ (Duta et al.,
    NeurIPS 2023), DHG-Bench appendix A.2: every node carries a :math:`d`-dimensional stalk per channel, a
    learned diagonal restriction map :math:`\mathcal{F}_{v \trianglelefteq e}` per incidence, and each layer
    diffuses with the linear sheaf hypergraph Laplacian (section 3 of the paper; the diagonal-sheaf
    ``HyperDiffusionDiagSheafConv`` of the official code, which DHG-Bench ports).

    .. math::
        \mathbf{X}^{(0)} = \mathrm{reshape}_{N \times d \times f}(\mathbf{X}\mathbf{W}_0 + \mathbf{c}_0),
        \qquad \mathbf{X}^{(l+1)} = \sigma\left(\mathbf{P}_{\alpha^{(l)}}
        \big(\mathrm{LN}(\mathbf{X}^{(l)})\mathbf{\Theta}^{(l)} + \mathbf{c}^{(l)}\big) + \mathbf{b}^{(l)}\right),
        \qquad
        \mathbf{Y} = \mathrm{reshape}_{N \times df}(\mathbf{X}^{(L)})\,\mathbf{W}_{out}

    with :math:`\mathbf{P}_\alpha` the sheaf diffusion of :func:`sheaf_diffusion` (scatters over incidences, no
    :math:`Nd \times Md` matrix), :math:`\alpha^{(l)}` from :class:`DiagSheafBuilder` applied to
    :math:`\mathbf{X}^{(l)}` and to the hyperedge features :math:`\mathbf{E} = \mathrm{reshape}(\mathbf{D}_e^{-1}
    \mathbf{H}^\top\mathbf{X}\mathbf{W}_0 + \mathbf{c}_0)` (the mean of each hyperedge's members, the
    official ``init_hedge="avg"``), LN a LayerNorm over the :math:`f` channels (``input_norm``), and
    :math:`\sigma` ELU with dropout on hidden layers (identity on the last).
    ``restriction_grad=False`` is DHG-Bench's (and the official code's) behaviour: its sparse products
    (``torch_sparse.spspmm``) are not differentiable in the maps, so the sheaf builders never train and the maps
    are a fixed random function of the features; here they are detached, the forward is unchanged. DHG-Bench on
    Cora: 3 layers, :math:`f = 512`, :math:`d = 4`, ``"sym"``, ``input_norm``, lr 1e-3, 10 epochs.

    For :math:`\mathcal{V} = \{0, 1, 2, 3\}`, :math:`\mathcal{E} = \{\{0, 1, 2\}, \{1, 2, 3\}\}`::

        hyperedge_index = torch.tensor([[0, 1, 2, 1, 2, 3],
                                        [0, 0, 0, 1, 1, 1]])

    Args:
        in_channels (int): Size of each input feature vector.
        hidden_channels (int): Channels :math:`f` per stalk dimension.
        out_channels (int): Size of each output vector.
        num_layers (int): Number of sheaf diffusion layers. (default: :obj:`2`)
        dropout (float): Dropout after each hidden layer. (default: :obj:`0.5`)
        stalk_dim (int): Stalk dimension :math:`d`. (default: :obj:`2`)
        normalisation (str): ``"sym"`` (the paper's symmetric degree normalisation) or ``"rw"`` (left
            normalisation, the official ``degree_norm``). (default: :obj:`"sym"`)
        input_norm (bool): LayerNorm on each layer's input before :math:`\mathbf{\Theta}^{(l)}` and in the
            sheaf builders, the official ``AllSet_input_norm``. (default: :obj:`True`)
        restriction_grad (bool): Train the restriction maps (the paper); ``False`` detaches them as DHG-Bench's
            code effectively does. (default: :obj:`True`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (dense or torch sparse),
          hyperedge indices :math:`(2, \mathrm{nnz})`, optional number of hyperedges :math:`|\mathcal{E}|`
        - **output:** :math:`(|\mathcal{V}|, F_{out})`
    """

    paper = "Duta et al., Sheaf Hypergraph Networks, NeurIPS 2023, https://arxiv.org/abs/2309.17116"

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int, num_layers: int = 2,
                 dropout: float = 0.5, *, stalk_dim: int = 2, normalisation: str = "sym", input_norm: bool = True,
                 restriction_grad: bool = True) -> None:
        super().__init__()
        check_common(in_channels, hidden_channels, out_channels, num_layers, dropout)
        self.dropout, self.f = dropout, hidden_channels
        self.d = check_int("stalk_dim", stalk_dim)
        self.normalisation = check_choice("normalisation", normalisation, NORMALISATIONS)
        self.input_norm = check_bool("input_norm", input_norm)
        self.restriction_grad = check_bool("restriction_grad", restriction_grad)
        self.lin_in = Linear(in_channels, hidden_channels * self.d)
        self.norms = nn.ModuleList(nn.LayerNorm(hidden_channels) if input_norm else nn.Identity()
                                   for _ in range(num_layers))
        self.lins = nn.ModuleList(Linear(hidden_channels, hidden_channels) for _ in range(num_layers))
        self.biases = nn.ParameterList(nn.Parameter(torch.empty(hidden_channels)) for _ in range(num_layers))
        self.builders = nn.ModuleList(DiagSheafBuilder(hidden_channels, self.d, input_norm) for _ in range(num_layers))
        self.lin_out = Linear(hidden_channels * self.d, out_channels, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for module in [self.lin_in, *self.norms, *self.lins, *self.builders, self.lin_out]:
            if hasattr(module, "reset_parameters"):
                module.reset_parameters()
        for bias in self.biases:
            nn.init.zeros_(bias)

    def _embed(self, x: Tensor | SparseOperator) -> Tensor:
        return self.lin_in(x).view(-1, self.d, self.f)

    def forward(self, x: Tensor, hyperedge_index: Tensor, num_hyperedges: int | None = None) -> Tensor:
        inc = self.incidence(x, hyperedge_index, num_hyperedges)
        feats = self.features(x)

        def hyperedge_means() -> Tensor:
            ones = torch.ones(inc.nnz, dtype=inc.dtype, device=inc.node.device)
            ht = SparseOperator(inc.edge, inc.node, ones * _inv(inc.deg_e)[inc.edge], (inc.num_edges, inc.num_nodes))
            return ht @ dense(feats)
        if x.requires_grad:
            e_raw = hyperedge_means()
        else:
            e_raw = self._cache.get((x, hyperedge_index), ("sheaf-avg", inc.num_nodes, inc.num_edges, inc.dtype),
                                    hyperedge_means)
        h, e = self._embed(feats), self._embed(e_raw)
        last = len(self.lins) - 1
        for i, (norm, lin, bias, builder) in enumerate(zip(self.norms, self.lins, self.biases, self.builders)):
            maps = builder(inc, h, e)
            if not self.restriction_grad:
                maps = maps.detach()
            h = sheaf_diffusion(inc, lin(norm(h)), maps, self.normalisation) + bias
            if i < last:
                h = drop(F.elu(h), self.dropout, self.training)
        return self.lin_out(h.reshape(h.size(0), -1))
