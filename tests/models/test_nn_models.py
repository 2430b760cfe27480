"""Common checks run over every registered model of ``hypergvl.models.nn`` (scikit-learn style estimator checks)."""
from __future__ import annotations

import ast
import copy
import inspect
import io
import re

import pytest
import torch

from hypergvl.models.nn import MODELS, UnknownModelError, build_model, model_defaults, register_model

NAMES = sorted(MODELS)
IN, HID, OUT = 5, 8, 3

# 7 nodes (node 6 in no hyperedge), hyperedges of sizes 3, 3, 2, 1 and 4.
EDGES = [[0, 1, 2], [1, 2, 3], [3, 4], [4], [0, 2, 4, 5]]
NUM_NODES = 7


def incidence(edges=EDGES) -> torch.Tensor:
    return torch.tensor([[v for e in edges for v in e], [j for j, e in enumerate(edges) for _ in e]])


def features(seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(NUM_NODES, IN, generator=g)
    return x * (torch.rand(NUM_NODES, IN, generator=g) < 0.6)  # about 40% zeros, so sparse input is sparse


def make(name: str, seed: int = 0, **kwargs) -> torch.nn.Module:
    torch.manual_seed(seed)
    model = build_model(name, in_channels=IN, hidden_channels=HID, out_channels=OUT, **kwargs)
    if hasattr(model, "prepare"):  # structure-sized parameters, as the trainer's Task.prepare hook creates them
        model.prepare(features(), incidence())
    return model


def test_registry_holds_the_issue_models():
    expected = {"MLP", "CEGCN", "CEGAT", "HGNN", "HCHA", "HyperGCN", "HNHN", "UniGCNII", "UniGIN", "UniGAT",
                "UniGCN", "AllSetTransformer", "AllDeepSets", "ED-HNN", "TF-HNN"}
    assert expected <= set(MODELS)


@pytest.mark.parametrize("name", NAMES)
def test_forward_backward_dense_and_sparse(name):
    model = make(name)
    x, hei = features(), incidence()
    for layout in ("dense", "coo", "csr"):
        xin = {"dense": x, "coo": x.to_sparse(), "csr": x.to_sparse_csr()}[layout]
        model.zero_grad()
        out = model(xin, hei)
        assert out.shape == (NUM_NODES, OUT) and out.dtype == torch.float32
        assert torch.isfinite(out).all()
        out.square().sum().backward()
        missing = [n for n, p in model.named_parameters() if p.grad is None]
        assert not missing, f"{name}: parameters without gradient: {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_sparse_input_equals_dense_input(name):
    model = make(name).eval()
    x, hei = features(), incidence()
    with torch.no_grad():
        dense = model(x, hei)
        for xin in (x.to_sparse(), x.to_sparse_csr()):
            torch.testing.assert_close(model(xin, hei), dense, rtol=1e-5, atol=1e-5)


def _relabelled_outputs(model: torch.nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
    """The output on relabelled nodes and hyperedges with a shuffled incidence list, and the original output
    relabelled the same way."""
    x, hei = features(), incidence()
    g = torch.Generator().manual_seed(1)
    node_perm = torch.randperm(NUM_NODES, generator=g)          # new node i is old node node_perm[i]
    edge_perm = torch.randperm(len(EDGES), generator=g)
    node_new = torch.argsort(node_perm)                          # old id -> new id
    edge_new = torch.argsort(edge_perm)
    shuffled = torch.stack([node_new[hei[0]], edge_new[hei[1]]])[:, torch.randperm(hei.size(1), generator=g)]
    with torch.no_grad():
        return model(x[node_perm], shuffled), model(x, hei)[node_perm]


@pytest.mark.parametrize("name", NAMES)
def test_permutation_equivariance(name):
    """Relabel nodes and hyperedges and shuffle the incidence list: node outputs are relabelled the same way.
    A model whose paper indexes learned parameters by node or hyperedge id declares ``equivariant = False``: it
    must then change under relabelling (so the flag cannot go stale) and be equivariant when built with its
    ``equivariant_kwargs`` (those parameters switched off)."""
    cls = MODELS[name]
    got, want = _relabelled_outputs(make(name).eval())
    if not getattr(cls, "equivariant", True):
        assert not torch.allclose(got, want, rtol=1e-4, atol=1e-4)
        got, want = _relabelled_outputs(make(name, **cls.equivariant_kwargs).eval())
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


VARIANTS = [
    ("MLP", {"num_layers": 1, "input_norm": True, "normalization": "bn"}),
    ("MLP", {"num_layers": 3, "normalization": "none"}),
    ("CEGCN", {"use_bn": False, "num_layers": 3}),
    ("CEGAT", {"concat": False, "heads": 2, "output_heads": 2, "use_bn": False, "attention_dropout": 0.3}),
    ("HGNN", {"symmetric": True, "num_layers": 1}),
    ("HCHA", {"use_attention": True, "heads": 2}),
    ("HCHA", {"use_attention": True, "heads": 4, "attention_mode": "node", "symmetric": False}),
    ("HyperGCN", {"fast": False}),
    ("HyperGCN", {"mediators": False, "output_relu": False, "num_layers": 3}),
    ("HNHN", {"num_layers": 1, "alpha": 0.5, "beta": 1.0, "nonlinear_inbetween": False}),
    ("UniGCN", {"first_aggregate": "sum", "use_norm": True, "heads": 2}),
    ("UniGIN", {"num_layers": 1}),
    ("UniGAT", {"heads": 2, "num_layers": 3}),
    ("UniGCNII", {"num_layers": 4, "use_norm": True, "input_dropout": 0.1}),
    ("UniGCNII", {"activation": "prelu", "propagation": "sum"}),
    ("AllSetTransformer", {"gpr": True, "heads": 2, "mlp_num_layers": 1, "decoder_hidden": 6}),
    ("AllDeepSets", {"aggregate": "mean", "mlp_num_layers": 1, "input_norm": False, "normalization": "bn"}),
    ("AllDeepSets", {"gpr": True, "num_layers": 1}),
    ("ED-HNN", {"mlp1_layers": 0, "mlp2_layers": 0, "mlp3_layers": 0, "aggregate": "sum", "activation": "relu"}),
    ("ED-HNN", {"num_layers": 2, "dropout_order": "dhgbench"}),
    ("ED-HNN", {"mlp2_layers": 1, "classifier_layers": 2, "classifier_hidden": 6, "activation": "identity"}),
    ("TF-HNN", {"alpha": 1.0, "num_layers": 1, "mlp_num_layers": 1}),
    ("EHNN", {"num_layers": 2, "hyper_layers": 1, "input_dropout": 0.1, "normalization": "none"}),
    ("T-HyperGNN", {"num_layers": 2, "combine": "sum", "dropout": 0.2, "max_cardinality": 4}),
    ("DPHGNN", {"num_layers": 2, "star": "directed", "dropout_mode": "dhgbench", "heads": 2, "mediators": False,
                "clique_layers": 1, "expansion_dim": 6, "attention_dim": 4}),
]


@pytest.mark.parametrize("name,kwargs", VARIANTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(VARIANTS)])
def test_non_default_configurations(name, kwargs):
    """Forward/backward, sparse == dense input and permutation equivariance for other keyword settings
    (reseeding before each call: non-fast HyperGCN draws a new random direction on every forward)."""
    model = make(name, **kwargs)
    x, hei = features(), incidence()
    model(x.to_sparse_csr(), hei).square().sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.eval()
    perm = torch.randperm(NUM_NODES, generator=torch.Generator().manual_seed(2))
    relabel = torch.argsort(perm)

    def run(features_, index):
        torch.manual_seed(0)
        return model(features_, index)
    with torch.no_grad():
        out = run(x, hei)
        assert out.shape == (NUM_NODES, OUT) and torch.isfinite(out).all()
        torch.testing.assert_close(run(x.to_sparse(), hei), out, rtol=1e-5, atol=1e-5)
        permuted = torch.stack([relabel[hei[0]], hei[1]])
        torch.testing.assert_close(run(x[perm], permuted), out[perm], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_under_seed(name):
    x, hei = features(), incidence()
    outs = []
    for _ in range(2):
        model = make(name, seed=3).train()
        torch.manual_seed(7)
        outs.append(model(x, hei).detach())
    assert torch.equal(outs[0], outs[1])
    model = make(name, seed=4).train()
    torch.manual_seed(7)
    assert not torch.equal(model(x, hei).detach(), outs[0])


@pytest.mark.parametrize("name", NAMES)
def test_reset_parameters_reinitialises_every_parameter(name):
    model = make(name)
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(0.123)
    torch.manual_seed(11)
    model.reset_parameters()
    stale = [n for n, p in model.named_parameters() if torch.all(p == 0.123)]
    assert not stale, f"{name}.reset_parameters() left {stale} untouched"
    first = copy.deepcopy(model.state_dict())
    torch.manual_seed(11)
    model.reset_parameters()
    for key, value in model.state_dict().items():
        assert torch.equal(value, first[key]), key


@pytest.mark.parametrize("name", NAMES)
def test_trailing_empty_hyperedges_and_explicit_count(name):
    model = make(name).eval()
    x, hei = features(), incidence()
    with torch.no_grad():
        base = model(x, hei)
        torch.testing.assert_close(model(x, hei, len(EDGES)), base)
        torch.testing.assert_close(model(x, hei, len(EDGES) + 3), base, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_copy_and_pickle_round_trip(name):
    model = make(name).eval()
    x, hei = features(), incidence()
    with torch.no_grad():
        out = model(x, hei)  # fills the structure cache
        clone = make(name, seed=5).eval()
        clone.load_state_dict(model.state_dict())
        torch.testing.assert_close(clone(x, hei), out)
        torch.testing.assert_close(copy.deepcopy(model)(x, hei), out)
        buffer = io.BytesIO()
        torch.save(model, buffer)
        buffer.seek(0)
        torch.testing.assert_close(torch.load(buffer, weights_only=False)(x, hei), out)


@pytest.mark.parametrize("name", NAMES)
def test_training_after_inference_mode_evaluation(name):
    """Operators cached during an evaluation under ``torch.inference_mode`` must not poison training."""
    model = make(name)
    x, hei = features(), incidence()
    with torch.inference_mode():
        expected = model.eval()(x, hei)
    with torch.no_grad():
        torch.testing.assert_close(model(x, hei), expected.clone())
    out = model.train()(x, hei)
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters())


@pytest.mark.parametrize("name", NAMES)
def test_paper_citation_and_house_style_docstring(name):
    cls = MODELS[name]
    assert "http" in cls.paper
    for section in ("http", ".. math::", "Args:", "Shapes:"):
        assert section in (cls.__doc__ or ""), f"{name} docstring lacks {section!r}"


@pytest.mark.parametrize("name", NAMES)
def test_documented_defaults_match_the_signature(name):
    cls = MODELS[name]
    documented = {m.group(1): ast.literal_eval(m.group(2)) for m in re.finditer(
        r"^\s+(\w+) \([^)]*\):(?:(?!^\s+\w+ \().)*?\(default: :obj:`([^`]*)`\)", cls.__doc__, re.M | re.S)}
    params = inspect.signature(cls.__init__).parameters
    defaults = {k: p.default for k, p in params.items() if p.default is not p.empty}
    assert documented == defaults


@pytest.mark.parametrize("name", [n for n in NAMES if n != "MLP"])
def test_bad_hyperedge_index_is_rejected(name):
    model = make(name)
    x, hei = features(), incidence()
    bad = hei.clone()
    bad[0, 0] = NUM_NODES
    with pytest.raises(ValueError, match="node ids"):
        model(x, bad)
    with pytest.raises(ValueError, match="hyperedge ids"):
        model(x, hei, num_hyperedges=2)
    with pytest.raises(ValueError, match="shape"):
        model(x, hei[0])
    with pytest.raises(ValueError, match="dtype"):
        model(x, hei.int())


def test_cache_follows_in_place_edits():
    """The structure cache is keyed on tensor identity and version: editing hyperedge_index in place misses."""
    model = make("HGNN").eval()
    x, hei = features(), incidence()
    with torch.no_grad():
        model(x, hei)
        hei[0, 0] = 6  # node 0 leaves e0, node 6 joins it
        fresh = make("HGNN").eval()
        torch.testing.assert_close(model(x, hei), fresh(x, hei.clone()))


# --------------------------------------------------------------------------------------- constructor errors

@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kwargs", [{"in_channels": 0}, {"hidden_channels": -1}, {"out_channels": 2.5},
                                    {"num_layers": 0}, {"dropout": 1.0}, {"dropout": -0.1},
                                    {"hidden_channels": True}])
def test_bad_common_arguments(name, kwargs):
    args = {"in_channels": IN, "hidden_channels": HID, "out_channels": OUT, **kwargs}
    with pytest.raises(ValueError):
        build_model(name, **args)


@pytest.mark.parametrize("name,kwargs", [
    ("MLP", {"normalization": "layer"}), ("MLP", {"input_norm": 1}),
    ("CEGCN", {"use_bn": "no"}),
    ("CEGAT", {"heads": 0}), ("CEGAT", {"output_heads": -2}), ("CEGAT", {"attention_dropout": 1.5}),
    ("HGNN", {"symmetric": "yes"}),
    ("HCHA", {"attention_mode": "hyperedge"}), ("HCHA", {"use_attention": True, "heads": 3}),
    ("HyperGCN", {"seed": -1}), ("HyperGCN", {"mediators": None}),
    ("HNHN", {"alpha": "a"}), ("HNHN", {"beta": float("nan")}),
    ("UniGCN", {"first_aggregate": "max"}), ("UniGIN", {"input_dropout": 1.0}), ("UniGAT", {"heads": 0}),
    ("UniGCNII", {"alpha": 1.5}), ("UniGCNII", {"lamda": 0.0}), ("UniGCNII", {"activation": "tanh"}),
    ("UniGCNII", {"propagation": "max"}),
    ("AllSetTransformer", {"heads": 3}), ("AllSetTransformer", {"mlp_num_layers": 0}),
    ("AllDeepSets", {"aggregate": "max"}), ("AllDeepSets", {"decoder_hidden": 0}),
    ("AllDeepSets", {"mlp_num_layers": 0}),
    ("ED-HNN", {"mlp1_layers": -1}), ("ED-HNN", {"activation": "gelu"}), ("ED-HNN", {"alpha": 2.0}),
    ("ED-HNN", {"dropout_order": "allset"}),
    ("TF-HNN", {"alpha": -0.1}), ("TF-HNN", {"mlp_num_layers": 0}),
    ("EHNN", {"hyper_layers": 0}), ("EHNN", {"hyper_dropout": 1.0}), ("EHNN", {"normalization": "gn"}),
    ("T-HyperGNN", {"max_cardinality": 0}), ("T-HyperGNN", {"combine": "mean"}), ("T-HyperGNN", {"seed": -1}),
    ("DPHGNN", {"star": "clique"}), ("DPHGNN", {"dropout_mode": "paper"}), ("DPHGNN", {"heads": 3}),
    ("DPHGNN", {"expansion_dropout": 1.0}), ("DPHGNN", {"mediators": 1}),
])
def test_bad_model_specific_arguments(name, kwargs):
    with pytest.raises(ValueError):
        build_model(name, in_channels=IN, hidden_channels=HID, out_channels=OUT, **kwargs)


def test_build_model_errors_name_the_choices():
    with pytest.raises(KeyError, match="choose one of .*HGNN"):
        build_model("GCN", in_channels=IN, hidden_channels=HID, out_channels=OUT)
    with pytest.raises(ValueError, match="unknown model"):
        build_model("hgnn", in_channels=IN, hidden_channels=HID, out_channels=OUT)
    assert isinstance(UnknownModelError("x"), KeyError)
    with pytest.raises(TypeError, match="unexpected argument.*heads.*accepted: .*symmetric"):
        build_model("HGNN", in_channels=IN, hidden_channels=HID, out_channels=OUT, heads=2)
    with pytest.raises(TypeError, match="missing required argument.*out_channels"):
        build_model("HGNN", in_channels=IN, hidden_channels=HID)
    assert model_defaults("HNHN") == {"alpha": -1.5, "beta": -0.5, "nonlinear_inbetween": True,
                                      "normalisation": "paper"}
    with pytest.raises(ValueError, match="normalisation must be one of 'paper', 'allset'"):
        build_model("HNHN", in_channels=IN, hidden_channels=HID, out_channels=OUT, normalisation="dhg")


def test_register_model_rejects_duplicates_and_bad_classes():
    with pytest.raises(ValueError, match="registered twice"):
        register_model("HGNN")(MODELS["HGNN"])

    class NoPaper(torch.nn.Module):
        def __init__(self, in_channels, hidden_channels, out_channels, num_layers=2, dropout=0.5):
            super().__init__()

    class BadHead(torch.nn.Module):
        paper = "x http://example.org"

        def __init__(self, in_channels, out_channels):
            super().__init__()

    for cls in (NoPaper, BadHead):
        with pytest.raises(TypeError):
            register_model("__test_only__")(cls)
    assert "__test_only__" not in MODELS
