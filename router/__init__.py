"""WiseHyGR, HyperGVL's representation router (sec. 4): PRM dataset, training, inference, routing policies, studies.

Example::

    from router import WiseHyGR
    WiseHyGR.from_pretrained("DIR").route(hypergraph, question)   # -> ('n_set', 'enc_hy')
"""
__all__ = ["WiseHyGR", "COMBINATIONS", "LABELS", "combination_name"]


def __getattr__(name: str):
    """The package's names, imported when first used: importing them here would load ``router.prm`` before
    ``python -m router.prm`` runs it (runpy's RuntimeWarning on every such command)."""
    if name == "WiseHyGR":
        from .model import WiseHyGR

        return WiseHyGR
    if name in ("COMBINATIONS", "LABELS", "combination_name"):
        from . import prm

        return getattr(prm, name)
    raise AttributeError(f"module 'router' has no attribute {name!r}")
