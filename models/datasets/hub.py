"""Hugging Face Hub layout of a DHG-Bench dataset: parquet rows plus a dataset card.

One row per hypergraph, as the Hub's graph datasets do (one row for a node-level set, one per graph for a
graph-level set)::

    out/README.md                              card: YAML front matter, statistics, source, licence, citation
    out/data/train-00000-of-00001.parquet      the rows

Columns: ``dataset`` (registry name), ``num_nodes``, ``num_hyperedges``, ``hyperedge_index`` ([2][nnz], row 0
nodes, row 1 hyperedges), ``y`` (node labels, or one graph label), ``num_features``, ``x`` (dense features
[N][F], null when sparse or absent), ``x_indices`` / ``x_values`` (sparse features as row-major COO, null when
dense or absent), ``sensitive`` (null unless a fairness set), ``feature_source`` (``raw`` or ``none``) and
``options`` (JSON of the dataset-specific build options, e.g. Walmart's noise seed).

The stored structure has no DHG-Bench self-loops and only raw (or no) features; ``hypergvl.models.datasets.load``
applies the same post-processing to these rows as to the raw files, so both routes give identical objects.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch

from hypergvl.atomic import replace_dir

from .data import HypergraphData, HypergraphGraphDataset
from .processing import csr_tensor
from .registry import DatasetSpec, get_spec

__all__ = ["SCHEMA", "write_built", "read_built", "push", "dataset_card", "PARQUET_PATH"]

PARQUET_PATH = "data/train-00000-of-00001.parquet"
SCHEMA = pa.schema([
    ("dataset", pa.string()),
    ("num_nodes", pa.int64()),
    ("num_hyperedges", pa.int64()),
    ("hyperedge_index", pa.list_(pa.list_(pa.int64()))),
    ("y", pa.list_(pa.int64())),
    ("num_features", pa.int64()),
    ("x", pa.list_(pa.list_(pa.float32()))),
    ("x_indices", pa.list_(pa.list_(pa.int64()))),
    ("x_values", pa.list_(pa.float32())),
    ("sensitive", pa.list_(pa.int64())),
    ("feature_source", pa.string()),
    ("options", pa.string()),
])
_MAX_OFFSET = 2**31 - 1


def _offsets(lengths: list[int]) -> np.ndarray:
    offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    if offsets[-1] > _MAX_OFFSET:
        raise ValueError(f"a column holds {offsets[-1]} values, more than one parquet list allows")
    return offsets.astype(np.int32)


def _list_column(rows: list[np.ndarray | None], value_type: pa.DataType) -> pa.Array:
    """1-D arrays (or None) -> ``list<value_type>``."""
    valid = [r is not None for r in rows]
    flat = np.concatenate([r for r in rows if r is not None]) if any(valid) else np.zeros(0)
    values = pa.array(flat.astype(value_type.to_pandas_dtype()), type=value_type)
    offsets = pa.array(_offsets([0 if r is None else r.size for r in rows]))
    return pa.ListArray.from_arrays(offsets, values, mask=pa.array([not v for v in valid]))


def _nested_column(rows: list[np.ndarray | None], value_type: pa.DataType) -> pa.Array:
    """2-D arrays (or None) -> ``list<list<value_type>>`` (a row is a list of its matrix rows)."""
    inner = [r for r in rows if r is not None]
    inner_lengths = [r.shape[1] for r in inner for _ in range(r.shape[0])]
    flat = np.concatenate([r.reshape(-1) for r in inner]) if inner else np.zeros(0)
    values = pa.array(flat.astype(value_type.to_pandas_dtype()), type=value_type)
    inner_array = pa.ListArray.from_arrays(pa.array(_offsets(inner_lengths)), values)
    outer = pa.array(_offsets([0 if r is None else r.shape[0] for r in rows]))
    return pa.ListArray.from_arrays(outer, inner_array, mask=pa.array([r is None for r in rows]))


def _row(g: HypergraphData, feature_source: str) -> dict[str, Any]:
    row: dict[str, Any] = {"num_nodes": g.num_nodes, "num_hyperedges": g.num_hyperedges,
                           "hyperedge_index": g.hyperedge_index.numpy(), "y": g.y.reshape(-1).numpy(),
                           "num_features": g.num_features if feature_source == "raw" else 0,
                           "x": None, "x_indices": None, "x_values": None,
                           "sensitive": None if g.sensitive is None else g.sensitive.numpy()}
    if feature_source == "raw":
        if g.x.layout == torch.sparse_csr:
            crow = g.x.crow_indices().numpy()
            rows = np.repeat(np.arange(g.num_nodes), np.diff(crow))
            row["x_indices"] = np.stack([rows, g.x.col_indices().numpy()])
            row["x_values"] = g.x.values().numpy()
        else:
            row["x"] = g.x.numpy()
    return row


def _table(graphs: list[HypergraphData], name: str, feature_source: str, options: dict) -> pa.Table:
    rows = [_row(g, feature_source) for g in graphs]
    n = len(rows)
    columns = {
        "dataset": pa.array([name] * n, pa.string()),
        "num_nodes": pa.array([r["num_nodes"] for r in rows], pa.int64()),
        "num_hyperedges": pa.array([r["num_hyperedges"] for r in rows], pa.int64()),
        "hyperedge_index": _nested_column([r["hyperedge_index"] for r in rows], pa.int64()),
        "y": _list_column([r["y"] for r in rows], pa.int64()),
        "num_features": pa.array([r["num_features"] for r in rows], pa.int64()),
        "x": _nested_column([r["x"] for r in rows], pa.float32()),
        "x_indices": _nested_column([r["x_indices"] for r in rows], pa.int64()),
        "x_values": _list_column([r["x_values"] for r in rows], pa.float32()),
        "sensitive": _list_column([r["sensitive"] for r in rows], pa.int64()),
        "feature_source": pa.array([feature_source] * n, pa.string()),
        "options": pa.array([json.dumps(options, sort_keys=True)] * n, pa.string()),
    }
    return pa.table(columns, schema=SCHEMA)


def _stats(obj: HypergraphData | HypergraphGraphDataset) -> dict[str, Any]:
    if isinstance(obj, HypergraphGraphDataset):
        # as the paper's Table A3 (computed with DHG, which merges repeated hyperedges): per-graph distinct
        # hyperedges, and the mean over graphs of each graph's mean distinct-hyperedge size
        distinct = [set(map(tuple, g.hyperedges())) for g in obj.graphs]
        return {"hypergraphs": len(obj), "avg_nodes": round(float(np.mean([g.num_nodes for g in obj.graphs])), 1),
                "avg_hyperedges": round(float(np.mean([len(d) for d in distinct])), 1),
                "avg_hyperedge_size": round(float(np.mean([np.mean([len(e) for e in d]) for d in distinct])), 1),
                "classes": obj.num_classes, "features": obj.num_features}
    sizes = torch.bincount(obj.hyperedge_index[1], minlength=obj.num_hyperedges).numpy()
    stats = {"nodes": obj.num_nodes, "hyperedges": obj.num_hyperedges, "features": obj.num_features,
             "avg_hyperedge_size": round(float(sizes.mean()), 2) if sizes.size else 0.0,
             "classes": len(torch.unique(obj.y))}
    if obj.sensitive is not None:
        stats["sensitive_positive"] = int(obj.sensitive.sum())
    return stats


def dataset_card(spec: DatasetSpec, obj: HypergraphData | HypergraphGraphDataset, feature_source: str,
                 options: dict) -> str:
    """The README.md of a built dataset repository."""
    built = _stats(obj)
    num_rows = len(obj) if isinstance(obj, HypergraphGraphDataset) else 1
    size = "n<1K" if num_rows < 1000 else "1K<n<10K"
    keys = list(dict.fromkeys([*spec.paper_stats, *built]))
    table = ["| statistic | DHG-Bench paper | this build |", "| --- | --- | --- |"]
    table += [f"| {k} | {spec.paper_stats.get(k, '')} | {built.get(k, '')} |" for k in keys]
    files = "\n".join(f"- `{f}`" for f in spec.files)
    node_level = spec.level == "node"
    features_text = {
        "raw": "the dataset's own node features" if node_level else
               "one-hot vertex degree over the dataset's degree vocabulary (DHG-Bench protocol)",
        "none": "no features (structure only; the upstream feature file was not available)",
    }[feature_source]
    stats_note = ('"this build" counts the stored structure, without the singleton hyperedges DHG-Bench adds for '
                  "node classification." if node_level else
                  '"this build" averages are computed as the paper\'s: a repeated hyperedge counted once (the rows '
                  "keep repeats, as DHG-Bench trains on them).")
    tag_lines = "\n".join(f"- {t.replace('_', '-')}" for t in spec.tasks)
    return f"""---
license: {spec.license}
pretty_name: DHG-Bench {spec.display_name}
task_categories:
- graph-ml
tags:
- hypergraph
- dhg-bench
{tag_lines}
size_categories:
- {size}
configs:
- config_name: default
  data_files:
  - split: train
    path: data/train-*.parquet
---

# DHG-Bench: {spec.display_name}

{spec.description}

Used in DHG-Bench for: {', '.join(t.replace('_', ' ') for t in spec.tasks)}.

## Statistics

{chr(10).join(table)}

{stats_note} Features in this build: {features_text}. Build options: `{json.dumps(options, sort_keys=True)}`.

## Layout

One row per hypergraph ({num_rows} row{'s' if num_rows != 1 else ''}). Columns: `num_nodes`, `num_hyperedges`,
`hyperedge_index` (`[2][nnz]`: row 0 node ids, row 1 hyperedge ids, PyG `HypergraphConv` convention), `y`
({'node labels' if node_level else 'the graph label'}), `num_features`, `x` (dense features or null),
`x_indices` / `x_values` (sparse features as row-major COO or null), `sensitive` (binary sensitive attribute of
fairness sets, else null), `feature_source`, `options`, `dataset`.

## Usage

```python
from datasets import load_dataset
rows = load_dataset("<this repository>", split="train")

import hypergvl.models.datasets   # HyperGVL suite: DHG-Bench processing (singleton hyperedges, splits)
data = hypergvl.models.datasets.load("{spec.name}", hub_dir="<this repository>")
```

DHG-Bench protocol: node classification adds a singleton hyperedge for every node not already alone in one
and uses random 50/25/25 splits per seed; hyperedge prediction splits hyperedges 60/20/20; hypergraph classification splits 80/10/10.

## Source

Built from {spec.source.name} ({spec.source.homepage}), files:

{files}

## Licence

`{spec.license}`: {spec.license_note}

## Citation

```bibtex
{spec.citation}
@misc{{dhgbench2025,
  title = {{DHG-Bench: A Comprehensive Benchmark for Deep Hypergraph Learning}},
  year = {{2025}},
  url = {{https://github.com/Coco-Hut/DHG-Bench}}
}}
```
"""


def write_built(spec: DatasetSpec, obj: HypergraphData | HypergraphGraphDataset, out_dir: str | os.PathLike,
                *, feature_source: str, options: dict, overwrite: bool = False) -> Path:
    """Write the repository for ``obj`` to ``out_dir`` via a temporary folder and a rename.

    An existing non-empty ``out_dir`` is kept (``FileExistsError``) unless ``overwrite``; even then it is
    replaced only after the new repository is complete.
    """
    out = Path(out_dir).resolve()
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not overwrite:
        raise FileExistsError(f"{out} exists and is not empty; choose another --out or pass --overwrite")
    out.parent.mkdir(parents=True, exist_ok=True)
    graphs = obj.graphs if isinstance(obj, HypergraphGraphDataset) else [obj]
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.tmp-"))
    tmp.chmod(0o755)  # mkdtemp creates 0700; the repository is an ordinary folder
    try:
        (tmp / PARQUET_PATH).parent.mkdir(parents=True)
        pq.write_table(_table(graphs, spec.name, feature_source, options), tmp / PARQUET_PATH)
        (tmp / "README.md").write_text(dataset_card(spec, obj, feature_source, options), encoding="utf-8")
        if out.exists() and not out.is_dir():
            out.unlink()
        replace_dir(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return out


def _column_1d(column: pa.ChunkedArray) -> list[np.ndarray | None]:
    arr = column.combine_chunks()
    valid = np.asarray(arr.is_valid())
    offsets = arr.offsets.to_numpy()
    flat = arr.values.to_numpy(zero_copy_only=False).copy()  # writable, owned memory for torch
    return [flat[offsets[i]:offsets[i + 1]] if valid[i] else None for i in range(len(arr))]


def _column_2d(column: pa.ChunkedArray) -> list[np.ndarray | None]:
    arr = column.combine_chunks()
    valid = np.asarray(arr.is_valid())
    outer = arr.offsets.to_numpy()
    inner = arr.values.offsets.to_numpy()
    flat = arr.values.values.to_numpy(zero_copy_only=False).copy()
    out: list[np.ndarray | None] = []
    for i in range(len(arr)):
        if not valid[i]:
            out.append(None)
            continue
        start, stop = outer[i], outer[i + 1]
        out.append(flat[inner[start]:inner[stop]].reshape(stop - start, -1))
    return out


def read_built(hub_dir: str | os.PathLike) -> tuple[HypergraphData | HypergraphGraphDataset, dict[str, Any]]:
    """Read a built repository (local folder or Hub id) with ``datasets.load_dataset``.

    Returns the stored object (no self-loops; raw or no features) and ``{"name", "feature_source", "options"}``.
    """
    # lazy: datasets 2.7 s; training imports this module and reads no built repository
    import datasets

    ds = datasets.load_dataset(str(hub_dir), split="train")
    table = ds.with_format("arrow")[:]
    missing = [c for c in SCHEMA.names if c not in table.column_names]
    if missing:
        raise ValueError(f"{hub_dir}: not a DHG-Bench dataset repository (missing columns {missing})")
    names = set(table.column("dataset").to_pylist())
    if len(names) != 1:
        raise ValueError(f"{hub_dir}: rows of several datasets {sorted(names)}")
    name = names.pop()
    feature_source = table.column("feature_source")[0].as_py()
    options = json.loads(table.column("options")[0].as_py())
    cols = {c: table.column(c) for c in ("hyperedge_index", "x", "x_indices")}
    ei, x_dense, x_idx = (_column_2d(cols[c]) for c in ("hyperedge_index", "x", "x_indices"))
    ys, x_vals, sens = (_column_1d(table.column(c)) for c in ("y", "x_values", "sensitive"))
    num_nodes = table.column("num_nodes").to_pylist()
    num_hyperedges = table.column("num_hyperedges").to_pylist()
    num_features = table.column("num_features").to_pylist()
    graphs = []
    for i in range(table.num_rows):
        n = int(num_nodes[i])
        if x_dense[i] is not None:
            x = torch.from_numpy(np.ascontiguousarray(x_dense[i], dtype=np.float32))
        elif x_idx[i] is not None:
            rows, cols_ = x_idx[i]
            crow = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int64)
            x = csr_tensor(crow, cols_, x_vals[i], (n, int(num_features[i])))
        else:
            x = torch.zeros((n, 0), dtype=torch.float32)
        graphs.append(HypergraphData(
            x=x, y=torch.from_numpy(ys[i].astype(np.int64)),
            hyperedge_index=torch.from_numpy(np.ascontiguousarray(ei[i], dtype=np.int64)),
            num_hyperedges=int(num_hyperedges[i]), num_nodes=n,
            sensitive=None if sens[i] is None else torch.from_numpy(sens[i].astype(np.int64)), name=name))
    meta = {"name": name, "feature_source": feature_source, "options": options}
    if get_spec(name).level == "node":
        if len(graphs) != 1:
            raise ValueError(f"{hub_dir}: node-level dataset {name!r} must have one row, found {len(graphs)}")
        return graphs[0], meta
    labels = torch.cat([g.y for g in graphs])
    return HypergraphGraphDataset(graphs, num_classes=int(torch.unique(labels).numel()),
                                  num_features=int(num_features[0]), name=name), meta


def push(out_dir: str | os.PathLike, repo_id: str) -> str:
    """Upload a built repository to the Hub as dataset ``repo_id``; ``OSError`` with the reason on failure."""
    # lazy: huggingface_hub 0.23 s; only 'hypergvl datasets push' needs it
    from huggingface_hub import HfApi, constants

    if constants.is_offline_mode():
        raise OSError(f"cannot push to {repo_id}: Hugging Face Hub offline mode is on (HF_HUB_OFFLINE=1)")
    try:
        api = HfApi()
        api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
        info = api.upload_folder(folder_path=str(out_dir), repo_id=repo_id, repo_type="dataset",
                                 commit_message="Add DHG-Bench dataset built by hypergvl.models.datasets")
    except Exception as err:  # network, auth and HTTP errors from huggingface_hub all end the push
        raise OSError(f"push to {repo_id} failed: {type(err).__name__}: {err}") from err
    return str(getattr(info, "commit_url", repo_id))
