"""Our model holding the weights of DHG-Bench's class for the same model, and the two outputs compared: the
copied-weights check of ``benchmarks/epoch_time.py`` and the copied start of ``benchmarks/training_stability.py``.

A fresh reference (``benchmarks/dhgbench_reference.py``) has its weights copied into a fresh model of ours, built with
:data:`SAME_FUNCTION_OPTIONS` where one of our options is needed to compute the reference's function: tensors
matched by shape in registration order (:func:`copy_weights`, under the mapping whose outputs agree best), or by
name where shapes cannot tell them apart (:data:`KEY_MAPS`, :func:`copy_by_name`: EHNN, DPHGNN); a structure the
reference draws at random is handed over too (:data:`REFERENCE_STRUCTURES`). :func:`output_difference` gives the
max abs difference of the eval-mode outputs, or why the two are not compared (:data:`NOT_SAME_FUNCTION`).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dhgbench_reference import build_ours, dhgbench_logits  # noqa: E402


#: Options that make our model compute the wheel's function, for the copied-weights output check only (the timing
#: uses our config as is).
SAME_FUNCTION_OPTIONS = {"LEGCN": {"expansion": "isolated"}, "SheafHyperGNN": {"restriction_grad": False},
                         "DPHGNN": {"star": "directed", "dropout_mode": "dhgbench", "hgconv_degree": "dhgbench"},
                         "HNHN": {"normalisation": "allset"},
                         "UniGIN": {"first_aggregate": "sum", "use_norm": True}}
#: Why outputs on copied weights are not compared for a model (random choices each implementation draws itself).
NOT_SAME_FUNCTION = {
    "HyperGT": "the reference's positional encodings are random projections it never trains; ours are trained "
               "tables (HyperGT paper)",
    "T-HyperGNN": "reference cuts hyperedges larger than M with Python's random per target; ours one random order "
                  "per hyperedge",
}
#: Why a model's outputs on copied weights differ (printed after the difference when it is over 1e-4).
KNOWN_DIFFERENCES = {
    "CEGCN": "reference's clique graph is binary (the nonzero pattern of H H^T, GCNConv); ours weights each pair "
             "by the hyperedges it shares",
    "HyperGCN": "fast HyperGCN picks each hyperedge's pair by a random projection of the features, drawn by each "
                "implementation's own generator",
}


def _role(key: str) -> tuple[bool, bool, bool]:
    """What a state entry is, from its name: in a normalisation layer, a bias, inside a linear map."""
    parts = key.lower().split(".")
    return (any("norm" in p or p.startswith("bn") or p.startswith("ln") for p in parts[:-1]),
            parts[-1].startswith("bias"), any("lin" in p or p == "w" for p in parts[:-1]))


MAPPINGS = ("order", "name", "position")
#: Models whose tensors are copied by name instead (the reference's key -> ours by these regex substitutions, in
#: order; a key matching a ``drop`` pattern is a tensor the reference builds but never uses in its forward). EHNN:
#: its many 64 x 64 maps are indistinguishable by shape, and the role heuristic pairs them wrongly ("lin" is in
#: the reference's ``lin_proj`` and in both decoders' ``lins``, not in its hypernetworks' ``layers``); ``norms`` of
#: its MLP_inner are created and never called, ``pe`` are its sinusoidal tables (buffers; ours computes them).
KEY_MAPS = {"EHNN": {"rules": [(r"\.lin_proj\.", ".lin."), (r"\.v2e_layer\.", ".v2e."), (r"\.e2v_layer\.", ".e2v."),
                               (r"\.norm([123])\.", lambda m: f".norms.{int(m.group(1)) - 1}."),
                               (r"\.b\.b\.(input|mlp)\.", r".bias.\1."), (r"\.e2v\.b\.b$", ".e2v.bias"),
                               (r"\.layers\.", ".lins."), (r"^decoder\.normalizations\.", "decoder.norms.")],
                     "drop": [r"\.pe$", r"mlp\d\.norms\.\d+\.", r"\.b\.b\.mlp\.norms\."]},
            # DPHGNN: its three TAA projections of each attention and its GCNs are alike by shape; the TAA calls
            # name their inputs (hyp, star, clique) in another order than they pass them: Q is the HyperGCN view
            # through hyp_proj, K the clique view through star_proj, V the star view through clique_proj
            "DPHGNN": {"rules": [(r"^taa_layer\.(cg|hg|sg)_layer\.convs\.(\d+)\.(weight|bias)$",
                                  lambda m: f"gcn_{_DPHGNN_VIEWS[m.group(1)]}.{_PLURAL[m.group(3)]}.{m.group(2)}"),
                                 (r"^taa_layer\.spectral_net\.W_(hyp|cg|sg)\.",
                                  lambda m: f"smooth.{('hyp', 'cg', 'sg').index(m.group(1))}."),
                                 (r"^taa_layer\.taa_(spatial|spectral)_layer\.", r"taa_\1."), (r"\.hyp_proj\.", ".q."),
                                 (r"\.star_proj\.", ".k."), (r"\.clique_proj\.", ".v."), (r"\.MHA\.", "."),
                                 (r"^spectral_layer\.W\.", "spectral."), (r"^dff_layer\.convs\.\d+\.W\.", "out."),
                                 (r"^dff_layer\.convs\.", "dff."), (r"\.W_x\.", ".w_x."), (r"\.W_vertex\.", ".w_v."),
                                 (r"\.atten_vertex\.", ".att."), (r"\.theta_e2v\.", ".theta.")],
                       "drop": []}}
_PLURAL = {"weight": "weights", "bias": "biases"}
_DPHGNN_VIEWS = {"hg": "hypergcn", "cg": "clique", "sg": "star"}  # the reference's GCN of each view -> ours


def copy_by_name(source, target, rules: list, drop: list[str]) -> tuple[int, int]:
    """Copy ``source``'s state into ``target`` under the key renaming ``rules`` (regex, replacement), skipping
    the source keys that match a ``drop`` pattern; every target tensor must receive one (strict load)."""
    import re

    state = {}
    for key, value in source.state_dict().items():
        if any(re.search(pattern, key) for pattern in drop):
            continue
        for pattern, replacement in rules:
            key = re.sub(pattern, replacement, key)
        state[key] = value
    target.load_state_dict(state, strict=True)
    return len(state), 0


def copy_weights(source, target, mapping: str = "order") -> tuple[int, int]:
    """Copy ``source``'s state into ``target`` by shape: each target tensor, in registration order, takes an unused
    source tensor of the same shape (or of the transposed shape, transposed), preferring one of the same role (a
    normalisation's, a bias, a linear map's), then by ``mapping``: the first in order (``order``), the most similar
    name (``name``, difflib) or the closest relative position in the state (``position``). Source tensors left
    over (layers the reference builds but does not use, e.g. AllSet's batch norms with one layer) stay unused; a
    target tensor with no counterpart keeps its initial value (e.g. a bias the reference does not have: ours
    start at zero).
    Returns (copied, kept at init). Only the output check that follows validates the mapping."""
    import difflib

    import torch

    src = [(k, v) for k, v in source.state_dict().items() if v.is_floating_point()]
    used, kept = set(), 0
    tgt = [(k, v) for k, v in target.state_dict().items() if v.is_floating_point()]
    for j, (key, value) in enumerate(tgt):
        role = _role(key)

        def tie(i: int) -> float:
            if mapping == "name":
                return difflib.SequenceMatcher(None, src[i][0], key).ratio()
            if mapping == "position":
                return -abs(i / len(src) - j / len(tgt))
            return 0.0

        def best(shape):
            hits = [i for i, (_, v) in enumerate(src) if i not in used and v.shape == shape]
            return max(hits, key=lambda i: (sum(a == b for a, b in zip(_role(src[i][0]), role)), tie(i), -i),
                       default=None)

        hit, flip = best(value.shape), False
        if hit is None and value.dim() == 2:
            hit, flip = best(value.t().shape), True
        if hit is None:
            kept += 1
            continue
        used.add(hit)
        with torch.no_grad():
            value.copy_(src[hit][1].t() if flip else src[hit][1])
    return len(used), kept


def copied_model(name: str, reference, data, args, x, hyperedge_index, num_hyperedges, num_classes, seed: int = 0):
    """Our model (built with :data:`SAME_FUNCTION_OPTIONS`) holding ``reference``'s weights, copied under the
    mapping whose eval-mode outputs agree best with the reference's (a wrong mapping cannot make them agree), and
    the structure the reference drew at random where :data:`REFERENCE_STRUCTURES` names how to hand it over.
    Returns ``(model, max abs output difference, our tensors kept at init, the reference's outputs)``; raises
    ``ValueError`` when the output shapes differ."""
    import torch

    reference.eval()
    with torch.no_grad():
        theirs = dhgbench_logits(reference, data, args)
        theirs = theirs[0] if isinstance(theirs, tuple) else theirs
    best = None
    for mapping in ("by name",) if name in KEY_MAPS else MAPPINGS:
        ours = build_ours(name, x.shape[1], num_classes, seed, (x, hyperedge_index, num_hyperedges),
                          **SAME_FUNCTION_OPTIONS.get(name, {}))
        ours.eval()
        _, kept = (copy_by_name(reference, ours, **KEY_MAPS[name]) if name in KEY_MAPS
                   else copy_weights(reference, ours, mapping))
        if name in REFERENCE_STRUCTURES:
            REFERENCE_STRUCTURES[name](ours, data, x, hyperedge_index, num_hyperedges)
        with torch.no_grad():
            mine = ours(x, hyperedge_index, num_hyperedges)
        if theirs.shape != mine.shape:
            raise ValueError(f"output shapes differ: {tuple(theirs.shape)} vs {tuple(mine.shape)}")
        diff = (theirs - mine).abs().max().item()
        if best is None or diff < best[1]:
            best = (ours, diff, kept, theirs)
    return best


def use_reference_graph(model, data, x, hyperedge_index, num_hyperedges) -> None:
    """Make our DPHGNN use the reference's HyperGCN graph (``data.A_hyp``, ``data.L_hyp``: the pair of each hyperedge
    its own unseeded projection picked) for ``(x, hyperedge_index)`` instead of the graph of our seeded projection
    (:func:`hypergvl.models.nn.dphgnn.hypergcn_graph`), the one part of the function the two draw separately."""
    from hypergvl.models.nn.sparse import SparseOperator

    inc = model.incidence(x, hyperedge_index, num_hyperedges)
    graph = (SparseOperator.from_sparse(data.A_hyp.float()), SparseOperator.from_sparse(data.L_hyp.float()))
    model._cache.get((x, hyperedge_index), model.hypergcn_key(inc), lambda: graph)


#: How our model takes over a structure the reference draws at random (so the copied-weights check compares one
#: function): model name -> ``f(model, reference data, x, hyperedge_index, num_hyperedges)``.
REFERENCE_STRUCTURES = {"DPHGNN": use_reference_graph}


def output_difference(name: str, reference, data, args, x, hyperedge_index, num_hyperedges, num_classes) -> str:
    """Max abs difference of eval-mode outputs after copying the reference's weights into our model (built with
    :data:`SAME_FUNCTION_OPTIONS`), or why there is none."""
    if name in NOT_SAME_FUNCTION:
        return f"not compared: {NOT_SAME_FUNCTION[name]}"
    try:
        _, diff, kept, theirs = copied_model(name, reference, data, args, x, hyperedge_index, num_hyperedges,
                                             num_classes)
    except ValueError as e:
        return str(e)
    options = SAME_FUNCTION_OPTIONS.get(name)
    tag = f" (ours with {', '.join(f'{k}={v}' for k, v in options.items())})" if options else ""
    why = f"; {KNOWN_DIFFERENCES[name]}" if diff > 1e-4 and name in KNOWN_DIFFERENCES else ""
    init = f" ({kept} of our tensors without a counterpart kept at init)" if kept else ""
    return f"{diff:.2e} (outputs up to {theirs.abs().max().item():.2g}){tag}{init}{why}"
