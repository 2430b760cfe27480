"""The one registry helper (``hypergvl.registry``) and every registry built on it."""
from __future__ import annotations

import importlib

import pytest

from hypergvl.registry import Registry, UnknownName


# ============================================================================================ the helper
def test_registration_order_both_forms_and_mapping_behaviour():
    reg: Registry[object] = Registry("widget")

    @reg.register("b")
    def b():
        return "b"

    assert reg.register("a", 1) == 1
    reg.register("c", [3])
    assert list(reg) == ["b", "a", "c"] and list(reg.keys()) == ["b", "a", "c"]
    assert reg["b"] is b and reg["a"] == 1 and len(reg) == 3
    assert list(reg.items()) == [("b", b), ("a", 1), ("c", [3])] and list(reg.values()) == [b, 1, [3]]
    assert "a" in reg and "z" not in reg and 5 not in reg and [] not in reg
    assert reg.get("z") is None and reg.get("a") == 1
    assert reg.choices() == "b, a, c" and Registry("empty").choices() == "(none registered)"
    assert repr(reg) == "Registry('widget': b, a, c)"
    with pytest.raises(TypeError):
        reg["d"] = 4  # read-only: registration goes through register()


def test_duplicate_refused_and_first_registration_kept():
    reg: Registry[int] = Registry("widget")
    reg.register("a", 1)
    with pytest.raises(ValueError, match=r"^widget 'a' registered twice$"):
        reg.register("a", 2)
    with pytest.raises(ValueError, match="registered twice"):
        reg.register("a")(lambda: None)
    assert reg["a"] == 1 and len(reg) == 1


@pytest.mark.parametrize("name", ["nope", 5, None, ("a",)])
def test_unknown_name_is_keyerror_and_valueerror_with_a_plain_message_listing_the_choices(name):
    reg: Registry[int] = Registry("widget")
    reg.register("a", 1)
    reg.register("b", 2)
    with pytest.raises(UnknownName) as err:
        reg[name]
    assert isinstance(err.value, KeyError) and isinstance(err.value, ValueError)
    assert str(err.value) == f"unknown widget {name!r}; choose one of a, b"  # not quoted as a KeyError's would be
    assert err.value.__cause__ is None and err.value.__suppress_context__
    for catch in (KeyError, ValueError, LookupError):
        with pytest.raises(catch):
            reg[name]


def test_normalise_applies_to_lookup_registration_and_membership():
    reg: Registry[int] = Registry("code", normalise=str.upper)
    reg.register("vc", 1)
    assert list(reg) == ["VC"] and reg["vc"] == reg["Vc"] == 1 and "vC" in reg
    assert 5 not in reg  # a name normalise cannot handle is simply absent
    with pytest.raises(UnknownName, match="unknown code 5; choose one of VC"):
        reg[5]
    with pytest.raises(ValueError, match="code 'VC' registered twice"):
        reg.register("Vc", 2)
    with pytest.raises(UnknownName, match="unknown code 'hec'; choose one of VC"):
        reg["hec"]


def test_unregister_removes_and_returns_and_refuses_unknown_names():
    reg: Registry[int] = Registry("toy", normalise=str.lower)
    reg.register("a", 1)
    reg.register("B", 2)
    assert reg.unregister("b") == 2 and list(reg) == ["a"]
    with pytest.raises(UnknownName, match="unknown toy 'b'; choose one of a"):
        reg.unregister("b")
    reg.register("b", 3)  # free again after unregister
    assert list(reg.items()) == [("a", 1), ("b", 3)]


# ============================================================================================ every registry
def _h():
    from hypergvl.hypergraph import Hypergraph

    return Hypergraph(3, [[0, 1, 2]])


# (module, registry attribute, the public lookup path for an unknown name)
REGISTRIES = [
    ("hypergvl.tasks", "TASKS", lambda m: m.get_task("NOPE")),
    ("hypergvl.text", "TEXT_REPS", lambda m: m.encode("nope", _h())),
    ("hypergvl.text", "TEXT_REPS", lambda m: m.parse("nope", "")),
    ("hypergvl.render", "RENDERERS", lambda m: m.render("nope", _h())),
    ("hypergvl.sources", "SOURCES", lambda m: m.get_source("nope")),
    ("hypergvl.sources", "SOURCES", lambda m: m.load_source("nope")),
    ("hypergvl.evaluators.adapters", "ADAPTERS", lambda m: m.make_adapter("nope:model")),
    ("hypergvl.evaluators.routing", "POLICIES", lambda m: m.POLICIES["nope"]),
    ("hypergvl.models.nn", "MODELS", lambda m: m.build_model("nope", in_channels=1, hidden_channels=1,
                                                              out_channels=1)),
    ("hypergvl.models.nn.registry", "MODELS", lambda m: m.model_defaults("nope")),
    ("hypergvl.models.tasks", "TASKS", lambda m: m.get_task("nope")),
    ("hypergvl.models.tasks", "NEGATIVE_SAMPLERS", lambda m: m.NEGATIVE_SAMPLERS["nope"]),
    ("hypergvl.models.datasets", "DATASETS", lambda m: m.get_spec("nope")),
    ("hypergvl.models.perturb", "PERTURBATIONS", lambda m: m.get_perturbation("nope")),
]


@pytest.mark.parametrize("module, attr, lookup", REGISTRIES,
                         ids=[f"{m.rsplit('.', 1)[-1]}.{a}-{i}" for i, (m, a, _) in enumerate(REGISTRIES)])
def test_every_registry_is_a_registry_and_an_unknown_name_lists_the_choices(module, attr, lookup):
    mod = importlib.import_module(module)
    reg = getattr(mod, attr)
    assert isinstance(reg, Registry) and len(reg) > 0
    with pytest.raises(UnknownName) as err:
        lookup(mod)
    message = str(err.value)
    assert isinstance(err.value, KeyError) and isinstance(err.value, ValueError)
    assert message.startswith("unknown ") and "nope" in message.lower() and not message.startswith("'")
    for name in reg:
        assert name in message, f"{name!r} missing from {message!r}"


def test_registries_of_one_module_do_not_share_kind_strings():
    from hypergvl import tasks
    from hypergvl.models import tasks as hnn_tasks

    assert tasks.TASKS.kind == "task" and hnn_tasks.TASKS.kind == "HNN task"
    assert hnn_tasks.TASKS is not tasks.TASKS and not set(hnn_tasks.TASKS) & set(tasks.TASKS)
