"""WiseHyGR, HyperGVL's representation router (sec. 4): PRM dataset, training, inference, routing policies, studies.

Example::

    from hypergvl.router import WiseHyGR
    WiseHyGR.from_pretrained("DIR").route(hypergraph, question)   # -> ('n_set', 'enc_hy')
"""
from hypergvl.cli import delegate

__all__ = ["WiseHyGR", "combination_name"]

delegate("router", "WiseHyGR: build its PRM dataset, train it, run its studies, write the test-bed profile.",
         {"prm": "hypergvl.router.prm", "train": "hypergvl.router.train", "study": "hypergvl.router.study",
          "testbed": "hypergvl.router.testbed"})


# imports inside functions: the package's names load when first used (0.5 s, and runpy's warning for
# ``python -m hypergvl.router.prm`` if prm were imported here).
def __getattr__(name: str):
    """The package's names, imported when first used: importing them here would load ``hypergvl.router.prm`` before
    ``python -m hypergvl.router.prm`` runs it (runpy's RuntimeWarning on every such command)."""
    if name == "WiseHyGR":
        from .model import WiseHyGR

        return WiseHyGR
    if name == "combination_name":
        from . import prm

        return getattr(prm, name)
    raise AttributeError(f"module 'hypergvl.router' has no attribute {name!r}")
