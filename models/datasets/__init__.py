"""DHG-Bench hypergraph datasets: data objects, registry, loaders from the upstream raw formats, Hub layout.

>>> import hypergvl.models.datasets as md
>>> data = md.load("cora", raw_root="../shared/data")     # doctest: +SKIP
>>> data.num_nodes, data.num_hyperedges                      # doctest: +SKIP
(2708, 4287)

``hypergvl datasets list`` prints the registry; ``hypergvl datasets build NAME --out DIR``
writes a Hub dataset repository.
"""
from .api import build, load
from .data import HypergraphData, HypergraphGraphDataset, PyGHypergraph
from .processing import FEATURE_CHOICES, add_self_loops
from .registry import DATASETS, DatasetSpec, get_spec, register_dataset
from .splits import Split, random_graph_split, random_node_split, random_split

__all__ = ["load", "build", "DATASETS", "DatasetSpec", "get_spec", "register_dataset", "HypergraphData",
           "HypergraphGraphDataset", "PyGHypergraph", "FEATURE_CHOICES", "add_self_loops", "Split",
           "random_split", "random_node_split", "random_graph_split"]
