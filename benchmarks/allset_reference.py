"""Is HyperGCN's miss under ``--set protocol=allset`` in our model code? AllSet's own HyperGCN and ours, trained on
our data with the same split, seeds, optimiser, epochs and selection rule, beside the published number.

Why (benchmarks/results/allset/reproduce_allset.md): HyperGCN missed under the AllSet protocol (Cora 71.96 against
78.45, Cora-CA 73.28 against 79.48, 10 seeds, then trained with the node task's singleton hyperedges), while HGNN,
HCHA, HNHN and UniGCNII pass.

The reference is jianhao2016/AllSet at 6281a2f, ``src/models.py``'s ``HyperGCN`` class and ``src/utils.py`` (the
fast mediator ``Laplacian``, ``HyperGraphConvolution``), given with ``--allset-src`` (the ``src`` folder of a
checkout; not shipped, not reachable offline). They run unchanged but for three stand-ins: ``utils.py``'s unused
``import ipdb`` is skipped, each layer's ``device`` is the CPU (the code moves the Laplacian to ``cuda:<args.cuda>``),
and ``torch.sparse.FloatTensor`` is ``torch.sparse_coo_tensor`` where torch no longer has it.

What is the same on both sides, per seed: Cora or Cora-CA as ``hypergvl.models.trainer.load_dataset`` loads it;
AllSet's ``train.py:359-360`` gives HyperGCN no singleton hyperedges, so both sides get none (the protocol's
``task.self_loops=false``; ``--loops`` gives our side the node task's default, one per node); our
task's split of the seed (the protocol's random 50/25/25); one layer (``All_num_layers 1``: features to classes,
ReLU on the output, no dropout), mediators, the fast Laplacian built once from the input features; Adam lr 1e-3, no
weight decay, 500 full-batch epochs of NLL on log-softmax, the test accuracy at the first best validation epoch. The
Laplacians of the two codes on one random direction are compared first (``laplacian``).

    HYPERGVL_RAW_ROOT=$(realpath ../shared/data) .venv/bin/python benchmarks/allset_reference.py \\
        --allset-src /path/to/AllSet/src --datasets cora cora-ca --seeds 0 1 2 3 4 5 6 7 8 9 \\
        --json benchmarks/results/allset/hypergcn_reference.json
"""
from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from reproduce_allset import published  # noqa: E402

ALLSET_COMMIT = "6281a2f"


def load_reference(src: Path):
    """AllSet's ``utils`` module and its ``HyperGCN`` class, read from ``src``."""
    sys.modules.setdefault("ipdb", types.ModuleType("ipdb"))  # imported by utils.py, never called by HyperGCN
    if not hasattr(torch.sparse, "FloatTensor"):
        torch.sparse.FloatTensor = lambda i, v, s: torch.sparse_coo_tensor(i, v, s)
    spec = importlib.util.spec_from_file_location("allset_utils", src / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    text = (src / "models.py").read_text()
    start = text.index("class HyperGCN(nn.Module):")
    end = text.index("\nclass ", start + 1)
    namespace = {"utils": utils, "nn": torch.nn, "F": F, "torch": torch}
    exec(compile(text[start:end], str(src / "models.py"), "exec"), namespace)
    return utils, namespace["HyperGCN"]


@functools.lru_cache(maxsize=None)
def load(dataset: str, loops: bool):
    """The dataset as the trainer loads it, once per (dataset, loops) for every seed of both sides."""
    from hypergvl.models import trainer as T

    return T.load_dataset(dataset, os.environ.get("HYPERGVL_RAW_ROOT"), add_self_loops=loops)


def node_task(dataset: str, seed: int):
    """Our node task of ``seed`` under the protocol (no singletons for HyperGCN): its split, features, hyperedges."""
    from hypergvl.models import trainer as T

    cfg = T.resolve_config("HyperGCN", "node", dataset, None, ["protocol=allset"])
    return T.get_task("node")(load(dataset, False), cfg.task, seed, hidden=cfg.trainer.hidden, device="cpu")


def hyperedges(hyperedge_index: torch.Tensor) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for v, e in zip(hyperedge_index[0].tolist(), hyperedge_index[1].tolist()):
        out.setdefault(e, []).append(v)
    return out


def dense(x: torch.Tensor) -> torch.Tensor:
    return x.to_dense() if x.layout != torch.strided else x


def laplacian_difference(utils, dataset: str) -> dict:
    """AllSet's ``Laplacian`` against ours on one random direction (mediators, no loops): the entries non-zero in
    one and not the other, the members of the hyperedges holding them (whose degrees, so rows and columns, change
    with those entries), and the largest difference on the entries touching none of those members. A hyperedge whose members have
    equal features can differ: its extreme members tie, and the two codes break the tie differently."""
    from hypergvl.models.nn.hypergcn import hypergcn_laplacian
    from hypergvl.models.nn.sparse import Incidence

    t = node_task(dataset, 0)
    x, hi = dense(t.x), t.hyperedge_index
    n = x.size(0)
    direction = np.random.RandomState(0).rand(x.size(1))
    draw, np.random.rand = np.random.rand, lambda *shape: direction
    try:
        theirs = utils.Laplacian(n, hyperedges(hi), x.numpy(), True).to_dense().double()
    finally:
        np.random.rand = draw
    ours = hypergcn_laplacian(Incidence(hi, n, int(hi[1].max()) + 1, torch.float64),
                              x.double() @ torch.from_numpy(direction), True).matrix.to_dense()
    differing = (theirs != 0) != (ours != 0)
    # a tie broken otherwise changes the weights inside its hyperedge, so the degrees (and rows) of its members
    ends = torch.zeros(n, dtype=torch.bool)
    ends[differing.any(0) | differing.any(1)] = True
    edges = torch.unique(hi[1][ends[hi[0]]])
    touched = torch.zeros(n, dtype=torch.bool)
    touched[hi[0][torch.isin(hi[1], edges)]] = True
    rest = ~(touched[:, None] | touched[None, :])
    return {"nnz_reference": int((theirs != 0).sum()), "nnz_ours": int((ours != 0).sum()),
            "entries_differing": int(differing.sum()), "nodes_touched": int(touched.sum()),
            "max_difference_elsewhere": float(((theirs - ours) * rest).abs().max())}


def train_reference(HyperGCN, dataset: str, seed: int, epochs: int) -> dict:
    t = node_task(dataset, seed)
    x = dense(t.x)
    np.random.seed(seed)  # the Laplacian's random direction
    torch.manual_seed(seed)
    args = SimpleNamespace(cuda=0, dname=dataset, HyperGCN_fast=True, HyperGCN_mediators=True, dropout=0.5)
    model = HyperGCN(V=x.size(0), E=hyperedges(t.hyperedge_index), X=x.numpy(), num_features=x.size(1),
                     num_layers=1, num_classses=t.out_channels, args=args)
    for layer in model.layers:
        layer.device = torch.device("cpu")
    model.reset_parameters()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=0.0)
    graph = SimpleNamespace(x=x)
    train, val, test = t.split["train"], t.split["val"], t.split["test"]
    best = (-1.0, 0.0, 0)
    for epoch in range(1, epochs + 1):
        model.train()
        opt.zero_grad()
        F.nll_loss(F.log_softmax(model(graph), dim=1)[train], t.y[train]).backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            pred = model(graph).argmax(-1)
        v = 100.0 * float((pred[val] == t.y[val]).float().mean())
        if v > best[0]:  # the first of equal validation accuracies
            best = (v, 100.0 * float((pred[test] == t.y[test]).float().mean()), epoch)
    return {"test": best[1], "val": best[0], "epoch": best[2]}


def train_ours(dataset: str, seed: int, loops: bool, epochs: int) -> dict:
    from hypergvl.models import trainer as T

    data = load(dataset, loops)
    with tempfile.TemporaryDirectory() as out:
        s = T.run_experiment("HyperGCN", dataset, "node", out=out, seeds=[seed], data=data,
                             overrides=["protocol=allset", f"trainer.epochs={epochs}", f"task.self_loops={loops}"],
                             progress=False)
    r = s["runs"][0]
    return {"test": r["metrics"]["test"]["accuracy"], "val": r["metrics"]["val"]["accuracy"],
            "epoch": r["selected_epoch"]}


def summary(values: list[float]) -> str:
    sd = statistics.pstdev(values)  # population std, as the reproduction tables
    return f"{statistics.mean(values):.2f} ± {sd:.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--allset-src", type=Path, required=True, help=f"src/ of jianhao2016/AllSet at {ALLSET_COMMIT}")
    ap.add_argument("--datasets", nargs="+", default=["cora", "cora-ca"],
                    help="cora, cora-ca, or a folder of your own (a path with '/', benchmarks/own_data.py)")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--epochs", type=int, default=500)
    ap.add_argument("--loops", action="store_true", help="our side keeps the node task's singleton hyperedges")
    ap.add_argument("--json", type=Path, default=None, help="write the comparison here")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    from hypergvl.provenance import provenance

    started = provenance(seeds=a.seeds)
    utils, HyperGCN = load_reference(a.allset_src)
    results = {}
    for dataset in a.datasets:
        rows = {"laplacian": laplacian_difference(utils, dataset), "reference": {}, "ours": {}}
        for seed in a.seeds:
            t0 = time.perf_counter()
            rows["reference"][seed] = train_reference(HyperGCN, dataset, seed, a.epochs)
            rows["ours"][seed] = train_ours(dataset, seed, a.loops, a.epochs)
            print(json.dumps({"dataset": dataset, "seed": seed, "reference": rows["reference"][seed],
                              "ours": rows["ours"][seed], "wall_s": round(time.perf_counter() - t0, 1)}), flush=True)
        results[dataset] = rows
    print(f"\n| dataset | AllSet's HyperGCN | ours ({'with' if a.loops else 'no'} singletons) | published | "
          "Laplacian non-zeros (AllSet / ours) | entries in one only (nodes) | max difference elsewhere |\n"
          "| --- | --- | --- | --- | --- | --- | --- |")
    for dataset, rows in results.items():
        paper, lap = published("HyperGCN", dataset), rows["laplacian"]
        print(f"| {dataset} | {summary([r['test'] for r in rows['reference'].values()])} | "
              f"{summary([r['test'] for r in rows['ours'].values()])} | "
              f"{f'{paper[0]:.2f} ± {paper[1]:.2f}' if paper else 'none published'} | "
              f"{lap['nnz_reference']} / {lap['nnz_ours']} | {lap['entries_differing']} ({lap['nodes_touched']}) | "
              f"{lap['max_difference_elsewhere']:.1e} |")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"reference": f"jianhao2016/AllSet@{ALLSET_COMMIT}", "seeds": a.seeds,
                                      "epochs": a.epochs, "our_singletons": a.loops, "results": results,
                                      "provenance": started}, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
