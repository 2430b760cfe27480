"""Parsers for the upstream raw formats the DHG-Bench datasets are published in.

Each parser reads through a :class:`~hypergvl.models.datasets.sources.RawReader` (URL or local folder, one code path)
and returns the raw structure without DHG-Bench's self-loops. Formats:

- pickle triple (HyperGCN ``data/<cocitation|coauthorship>/<name>/``, HyperUFG ``datasets/<name>/``, HyperGCL
  ``data/fair_data/<name>/``): ``hypergraph.pickle`` a dict hyperedge-key -> node ids, ``labels.pickle`` a list
  or array of N labels, ``features.pickle`` a scipy sparse matrix or an ndarray with N rows;
- AllSet "LE" (``<name>/<name>.content``: whitespace rows ``id f_1 .. f_F label`` for every node and hyperedge
  id; ``<name>/<name>.edges``: rows ``node_id hyperedge_id``; hyperedge ids follow node ids) — NTU2012,
  ModelNet40;
- Cornell / AllSet (``<name>/node-labels-<name>.txt`` one label per line, ``<name>/hyperedges-<name>.txt``
  one comma-separated hyperedge per line; node ids 1-based as published, 0-based if a 0 occurs) — Walmart;
- AllSet Yelp (``yelp/yelp_restaurant_{latlong,locations,name,business_stars,incidence_H}.csv``);
- Kim et al. 2023 torch tensors (``<name>_X_vec.pt`` float [N, F], ``<name>_Y.pt`` long [N], ``<name>_E.pt``
  long [2, nnz] node/hyperedge rows) — Trivago, read with ``torch.load(weights_only=True)``;
- HIC text (first line the number of graphs; per graph a line ``nv ne label``, a line of nv vertex labels,
  then ne lines of vertex ids).

Pickles go through :mod:`hypergvl.models.datasets.safe_pickle`.
"""
from __future__ import annotations

import io
import pickle
import re
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import torch
from tqdm.auto import tqdm

from . import safe_pickle
from .data import HypergraphData, HypergraphGraphDataset
from .processing import features_to_torch, incidence_from_hyperedges, incidence_from_pairs, onehot
from .sources import RawReader

__all__ = ["read_pickle", "load_pickle_triple", "load_allset_le", "load_cornell", "load_yelp", "load_trivago",
           "load_hic"]


def read_pickle(reader: RawReader, relpath: str) -> Any:
    """Unpickle one raw file with the restricted unpickler; errors name the file."""
    data = reader.read_bytes(relpath)
    try:
        return safe_pickle.loads(data)
    except pickle.UnpicklingError as err:
        raise pickle.UnpicklingError(f"{reader.location(relpath)}: {err}") from None


def _labels(raw, where: str) -> np.ndarray:
    labels = np.asarray(raw)
    if labels.dtype == object:
        labels = labels.astype(np.float64)
    labels = labels.reshape(-1)
    if labels.size and not np.all(np.equal(np.mod(labels, 1), 0)):
        raise ValueError(f"{where}: labels must be integers")
    return labels.astype(np.int64)


def _check_nodes(index: torch.Tensor, num_nodes: int, where: str) -> None:
    if index.numel() and (int(index[0].min()) < 0 or int(index[0].max()) >= num_nodes):
        raise ValueError(f"{where}: node id {int(index[0].max())} out of range for {num_nodes} nodes")


def _features(raw, num_nodes: int, where: str) -> torch.Tensor:
    x = features_to_torch(raw)
    if x.shape[0] != num_nodes:
        raise ValueError(f"{where}: {x.shape[0]} feature rows for {num_nodes} labelled nodes")
    return x


def _no_features(num_nodes: int) -> torch.Tensor:
    return torch.zeros((num_nodes, 0), dtype=torch.float32)


def load_pickle_triple(reader: RawReader, folder: str, *, features: bool, name: str,
                       sensitive_column: int | None = None) -> HypergraphData:
    """The HyperGCN pickle layout (also HyperUFG's and HyperGCL's). ``N`` is the number of labels.

    Hyperedges keep the dict's order (AllSet ``load_citation_dataset``). With ``sensitive_column`` the
    feature column is also returned as the binary ``sensitive`` attribute and stays in ``x``
    (DHG-Bench ``self.sens = dataset.data.x[:, sens_idx]``); the feature file is then read even for a
    structure-only load.
    """
    labels = _labels(read_pickle(reader, f"{folder}/labels.pickle"), reader.location(f"{folder}/labels.pickle"))
    n = labels.size
    hypergraph = read_pickle(reader, f"{folder}/hypergraph.pickle")
    if not isinstance(hypergraph, dict):
        raise ValueError(f"{reader.location(f'{folder}/hypergraph.pickle')}: expected a dict hyperedge -> nodes, "
                         f"got {type(hypergraph).__name__}")
    index, m = incidence_from_hyperedges(hypergraph.values())
    _check_nodes(index, n, reader.location(f"{folder}/hypergraph.pickle"))
    x, sensitive = _no_features(n), None
    if features or sensitive_column is not None:
        rel = f"{folder}/features.pickle"
        x = _features(read_pickle(reader, rel), n, reader.location(rel))
        if sensitive_column is not None:
            column = x[:, sensitive_column]
            if not torch.all((column == 0) | (column == 1)):
                raise ValueError(f"{reader.location(rel)}: sensitive column {sensitive_column} is not binary")
            sensitive = column.long()
            if not features:
                x = _no_features(n)
    return HypergraphData(x=x, y=torch.from_numpy(labels), hyperedge_index=index, num_hyperedges=m,
                          num_nodes=n, sensitive=sensitive, name=name)


def _read_table(reader: RawReader, relpath: str, **kwargs) -> pd.DataFrame:
    try:
        return pd.read_csv(io.BytesIO(reader.read_bytes(relpath)), **kwargs)
    except (ValueError, pd.errors.ParserError) as err:
        raise ValueError(f"{reader.location(relpath)}: cannot parse ({err})") from None


def load_allset_le(reader: RawReader, dataset: str, *, features: bool, name: str) -> HypergraphData:
    """AllSet ``load_LE_dataset`` (NTU2012, ModelNet40; hyperedges are a node's nearest neighbours)."""
    content_rel, edges_rel = f"{dataset}/{dataset}.content", f"{dataset}/{dataset}.edges"
    content = _read_table(reader, content_rel, sep=r"\s+", header=None).to_numpy(dtype=np.float64)
    edges = _read_table(reader, edges_rel, sep=r"\s+", header=None).to_numpy(dtype=np.int64)
    if content.ndim != 2 or content.shape[1] < 3:
        raise ValueError(f"{reader.location(content_rel)}: rows must be 'id feature... label'")
    if edges.ndim != 2 or edges.shape[1] != 2:
        raise ValueError(f"{reader.location(edges_rel)}: rows must be 'node_id hyperedge_id'")
    position = {int(i): p for p, i in enumerate(content[:, 0])}
    try:
        mapped = np.vectorize(position.__getitem__, otypes=[np.int64])(edges) if edges.size else edges
    except KeyError as err:
        raise ValueError(f"{reader.location(edges_rel)}: id {err.args[0]} is not in {dataset}.content") from None
    node_ids, edge_ids = mapped[:, 0], mapped[:, 1]
    n = int(node_ids.max()) + 1
    if int(edge_ids.min()) != n:
        raise ValueError(f"{reader.location(edges_rel)}: hyperedge ids must follow node ids "
                         f"(max node {n - 1}, min hyperedge {int(edge_ids.min())})")
    index, m = incidence_from_pairs(node_ids, edge_ids)
    labels = _labels(content[:n, -1], reader.location(content_rel))
    x = features_to_torch(content[:n, 1:-1]) if features else _no_features(n)
    return HypergraphData(x=x, y=torch.from_numpy(labels), hyperedge_index=index, num_hyperedges=m,
                          num_nodes=n, name=name)


def load_cornell(reader: RawReader, dataset: str, *, features: bool, name: str, feature_dim: int,
                 feature_noise: float, seed: int) -> HypergraphData:
    """AllSet ``load_cornell_dataset`` for Walmart (``walmart-trips-100`` in DHG-Bench).

    DHG-Bench (appendix A.1): "each node feature is a 100-dimensional vector obtained by adding Gaussian
    noise N(0, sigma^2 I) with sigma = 0.6 to one-hot encodings of the labels". The noise is drawn from
    ``numpy.random.default_rng(seed)`` (AllSet used the unseeded global generator). Labels are shifted to
    start at 0 as DHG-Bench does.
    """
    labels_rel, edges_rel = f"{dataset}/node-labels-{dataset}.txt", f"{dataset}/hyperedges-{dataset}.txt"
    raw_labels = _read_table(reader, labels_rel, header=None).to_numpy().reshape(-1)
    labels = _labels(raw_labels, reader.location(labels_rel))
    n = labels.size
    lines = reader.read_bytes(edges_rel).decode().splitlines()
    try:
        hyperedges = [[int(v) for v in line.split(",")] for line in lines if line.strip()]
    except ValueError:
        raise ValueError(f"{reader.location(edges_rel)}: lines must be comma-separated node ids") from None
    if any(0 in e for e in hyperedges):
        one_based = False
    else:
        one_based = True
        hyperedges = [[v - 1 for v in e] for e in hyperedges]
    index, m = incidence_from_hyperedges(hyperedges)
    _check_nodes(index, n, reader.location(edges_rel) + (" (1-based ids)" if one_based else ""))
    y = labels - labels.min()
    if features:
        num_classes = int(y.max()) + 1
        if feature_dim < num_classes:
            raise ValueError(f"{name}: feature_dim={feature_dim} is smaller than the {num_classes} classes")
        mean = np.zeros((n, feature_dim))
        mean[np.arange(n), y] = 1.0
        x = torch.from_numpy(np.random.default_rng(seed).normal(mean, feature_noise).astype(np.float32))
    else:
        x = _no_features(n)
    return HypergraphData(x=x, y=torch.from_numpy(y), hyperedge_index=index, num_hyperedges=m, num_nodes=n,
                          name=name)


def load_yelp(reader: RawReader, *, features: bool, name: str, vocabulary_size: int = 1000) -> HypergraphData:
    """AllSet ``load_yelp_dataset``: restaurants are nodes, a user's visited restaurants a hyperedge.

    Features (kept sparse): latitude/longitude, one-hot state, one-hot city, and a bag of words over the
    ``vocabulary_size`` most frequent restaurant-name tokens (scikit-learn ``CountVectorizer`` with English
    stop words and ASCII accent stripping, as AllSet). Incidence ids are 1-based. Labels (binned stars) are
    shifted to start at 0 as DHG-Bench does.
    """
    base = "yelp/yelp_restaurant_"
    stars = _read_table(reader, base + "business_stars.csv").to_numpy().reshape(-1)
    labels = _labels(stars, reader.location(base + "business_stars.csv"))
    n = labels.size
    incidence = _read_table(reader, base + "incidence_H.csv")
    missing = {"node", "he"} - set(incidence.columns)
    if missing:
        raise ValueError(f"{reader.location(base + 'incidence_H.csv')}: missing columns {sorted(missing)}")
    index, m = incidence_from_pairs(incidence["node"].to_numpy() - 1, incidence["he"].to_numpy() - 1)
    _check_nodes(index, n, reader.location(base + "incidence_H.csv") + " (1-based ids)")
    if features:
        # lazy: sklearn.feature_extraction 4 s; only Yelp's features need it
        from sklearn.feature_extraction.text import CountVectorizer

        latlong = _read_table(reader, base + "latlong.csv").to_numpy(dtype=np.float64)
        locations = _read_table(reader, base + "locations.csv")
        names = _read_table(reader, base + "name.csv").iloc[:, 0].fillna("").astype(str).tolist()
        blocks = [sp.csr_matrix(latlong)]
        for column in ("state_int", "city_int"):
            codes = locations[column].to_numpy(dtype=np.int64)
            blocks.append(sp.csr_matrix((np.ones(n), (np.arange(n), codes - 1)), shape=(n, int(codes.max()))))
        vectorizer = CountVectorizer(max_features=vocabulary_size, stop_words="english", strip_accents="ascii")
        blocks.append(vectorizer.fit_transform(names))
        if any(b.shape[0] != n for b in blocks):
            raise ValueError(f"{reader.location(base + 'latlong.csv')}: feature files disagree on the "
                             f"number of restaurants ({[b.shape[0] for b in blocks]} vs {n} labels)")
        x = features_to_torch(sp.hstack(blocks, format="csr"))
    else:
        x = _no_features(n)
    return HypergraphData(x=x, y=torch.from_numpy(labels - labels.min()), hyperedge_index=index,
                          num_hyperedges=m, num_nodes=n, name=name)


def _load_tensor(reader: RawReader, relpath: str) -> torch.Tensor:
    data = reader.read_bytes(relpath)
    try:
        value = torch.load(io.BytesIO(data), weights_only=True)
    except pickle.UnpicklingError as err:
        raise pickle.UnpicklingError(f"{reader.location(relpath)}: {err}") from None
    if not isinstance(value, torch.Tensor):
        raise ValueError(f"{reader.location(relpath)}: expected a tensor, got {type(value).__name__}")
    return value


def load_trivago(reader: RawReader, dataset: str, *, features: bool, name: str) -> HypergraphData:
    """Kim et al. 2023 tensors: ``<d>_X_vec.pt`` features, ``<d>_Y.pt`` labels, ``<d>_E.pt`` incidences."""
    prefix = f"{dataset}/{dataset}"
    labels = _load_tensor(reader, f"{prefix}_Y.pt").reshape(-1).long()
    n = labels.numel()
    edges = _load_tensor(reader, f"{prefix}_E.pt")
    if edges.dim() != 2 or edges.shape[0] != 2:
        raise ValueError(f"{reader.location(prefix + '_E.pt')}: expected shape [2, nnz], got {list(edges.shape)}")
    index, m = incidence_from_pairs(edges[0].numpy(), edges[1].numpy())
    _check_nodes(index, n, reader.location(f"{prefix}_E.pt"))
    x = _features(_load_tensor(reader, f"{prefix}_X_vec.pt").float().numpy(), n,
                  reader.location(f"{prefix}_X_vec.pt")) if features else _no_features(n)
    return HypergraphData(x=x, y=labels, hyperedge_index=index, num_hyperedges=m, num_nodes=n, name=name)


_VERTEX_LABEL = re.compile(r"-?\d+(/-?\d+)*")


def _parse_hic(text: str, where: str) -> list[tuple[int, list[list[int]], int]]:
    lines = text.splitlines()
    pos = 0

    def next_fields(what: str) -> list[int]:
        nonlocal pos
        if pos >= len(lines):
            raise ValueError(f"{where}: unexpected end of file, expected {what} at line {pos + 1}")
        line = lines[pos]
        pos += 1
        try:
            return list(map(int, line.split()))
        except ValueError:
            raise ValueError(f"{where} line {pos}: expected {what}, got {line!r}") from None

    header = next_fields("the number of graphs")
    if len(header) != 1 or header[0] < 0:
        raise ValueError(f"{where} line 1: expected the number of graphs, got {lines[0]!r}")
    graphs = []
    # shown only on a terminal and only for a parse that takes over a second (not in logs, captures or quick runs)
    for g in tqdm(range(header[0]), desc=f"parse {where.rsplit('/', 1)[-1]}", leave=False, mininterval=1.0,
                  delay=1.0, disable=None):
        row = next_fields("'num_vertices num_hyperedges label'")
        if len(row) < 3 or row[0] < 1 or row[1] < 0:
            raise ValueError(f"{where} line {pos}: graph {g}: expected 'num_vertices num_hyperedges label', "
                             f"got {lines[pos - 1]!r}")
        nv, ne, label = row[0], row[1], row[2]
        if pos >= len(lines):
            raise ValueError(f"{where}: unexpected end of file, expected vertex labels at line {pos + 1}")
        vertex_labels = lines[pos].split()  # discarded (DHG-Bench uses degrees); HIC allows "a/b" labels
        pos += 1
        if len(vertex_labels) != nv or not all(_VERTEX_LABEL.fullmatch(v) for v in vertex_labels):
            raise ValueError(f"{where} line {pos}: graph {g}: expected {nv} vertex labels, got {lines[pos - 1]!r}")
        edges = []
        for _ in range(ne):
            members = next_fields("a hyperedge (vertex ids)")
            if not members or min(members) < 0 or max(members) >= nv:
                raise ValueError(f"{where} line {pos}: graph {g}: hyperedge {members} must list vertex ids "
                                 f"in [0, {nv})")
            edges.append(members)
        graphs.append((nv, edges, label))
    if any(line.strip() for line in lines[pos:]):
        raise ValueError(f"{where} line {pos + 1}: unexpected content after {header[0]} graphs")
    return graphs


def load_hic(reader: RawReader, relpath: str, *, name: str) -> HypergraphGraphDataset:
    """HIC text graph-level set, processed as DHG-Bench ``load_multi_data``.

    Vertex features are one-hot vertex degree over the sorted set of degrees occurring in the whole
    dataset (the file's vertex labels are discarded); graph labels are mapped to ``0..C-1`` in sorted
    order. Repeated hyperedges are kept, as upstream.
    """
    where = reader.location(relpath)
    try:
        text = reader.read_bytes(relpath).decode()
    except UnicodeDecodeError:
        raise ValueError(f"{where}: not a text file") from None
    parsed = _parse_hic(text, where)
    structures = []
    for g, (nv, edges, label) in enumerate(parsed):
        if any(len(set(e)) != len(e) for e in edges):
            raise ValueError(f"{where}: graph {g}: a hyperedge lists a vertex twice")
        nodes = np.fromiter((v for e in edges for v in e), dtype=np.int64)
        hedges = np.repeat(np.arange(len(edges)), [len(e) for e in edges])
        degrees = np.bincount(nodes, minlength=nv)
        structures.append((nv, torch.from_numpy(np.stack([nodes, hedges])), len(edges), degrees, label))
    degree_vocab = np.unique(np.concatenate([s[3] for s in structures])) if structures else np.zeros(0, np.int64)
    class_vocab = sorted({s[4] for s in structures})
    class_of = {c: i for i, c in enumerate(class_vocab)}
    graphs = []
    for nv, index, ne, degrees, label in structures:
        x = onehot(np.searchsorted(degree_vocab, degrees), degree_vocab.size, sparse=False)
        graphs.append(HypergraphData(x=x, y=torch.tensor([class_of[label]]), hyperedge_index=index,
                                     num_hyperedges=ne, num_nodes=nv, name=name))
    return HypergraphGraphDataset(graphs, num_classes=len(class_vocab), num_features=int(degree_vocab.size),
                                  name=name)
