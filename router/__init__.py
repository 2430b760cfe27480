"""WiseHyGR, HyperGVL's representation router (sec. 4): PRM dataset, training, inference, routing policies, studies.

Example::

    from router import WiseHyGR
    WiseHyGR.from_pretrained("DIR").route(hypergraph, question)   # -> ('n_set', 'enc_hy')
"""
from .model import WiseHyGR
from .prm import COMBINATIONS, LABELS, combination_name

__all__ = ["WiseHyGR", "COMBINATIONS", "LABELS", "combination_name"]
