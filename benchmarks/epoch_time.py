"""Per-epoch training time and peak memory of every ``models.nn`` model on Cora co-citation, beside a
reference HGNN built from PyG's ``HypergraphConv`` (dense features) measured in the same run.

Protocol (DHG-Bench node classification, section 3.1 and DESIGN.md protocol facts): Cora co-citation with a
singleton hyperedge for every node (2,708 nodes, 1,579 + 2,708 hyperedges, 1,433 bag-of-words features that
stay sparse for the project's models), random 50/25/25 split per seed, hidden 128, Adam lr 1e-3, no weight
decay, cross-entropy, 100 epochs, accuracy on the test split at the final epoch. Models run with their
default keyword arguments (not tuned per model, so accuracies other than HGNN's are indicative only).

Method: each model runs in its own subprocess (``torch.set_num_threads(--threads)``). It first trains alone for
``--seeds`` seeds (test accuracy; then the peak resident set size, ``resource.getrusage(RUSAGE_SELF).ru_maxrss``,
and ``+RSS``, that peak minus the RSS after loading the data: the model, its activations and cached operators).
Then the same process trains the model and the reference side by side, alternating epochs (order swapped every
epoch), so both see the same machine load; one epoch is ``zero_grad + forward + loss + backward + step`` timed
with ``time.perf_counter``, and each figure is the median over the epochs after ``--warmup``. The speed-up is
the reference's median over the model's.

Data: ``models.datasets.load("cora", raw_root=...)`` when that package is importable, else the HyperGCN
pickles under ``<raw-root>/HyperGCN/data/cocitation/cora/`` read with a restricted unpickler.

    .venv/bin/python benchmarks/epoch_time.py                         # every model, 3 seeds (minutes)
    .venv/bin/python benchmarks/epoch_time.py --models HGNN --seeds 5 --plot /tmp/epoch_time.png
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REFERENCE = "PyG-HGNN"
RAW_ENV = "HYPERGVL_RAW_ROOT"


# ------------------------------------------------------------------------------------------------ data

class _Unpickler(pickle.Unpickler):
    """Admits only builtins containers, numpy arrays/scalars/dtypes and scipy CSR matrices."""

    ALLOWED = {("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
               ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),
               ("numpy._core.multiarray", "scalar"), ("scipy.sparse._csr", "csr_matrix"),
               ("scipy.sparse.csr", "csr_matrix"), ("builtins", "set"), ("__builtin__", "set")}

    def find_class(self, module: str, name: str):
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"refused to unpickle {module}.{name}")
        if module.startswith("scipy.sparse"):
            import scipy.sparse
            return scipy.sparse.csr_matrix
        if module == "__builtin__":
            module = "builtins"
        return super().find_class(module.replace("numpy.core.", "numpy._core."), name)


def _read(path: Path):
    with open(path, "rb") as handle:
        return _Unpickler(handle).load()


def load_cora(raw_root: Path):
    """``(x sparse CSR float32, y long, hyperedge_index long [2, nnz], num_hyperedges)`` with a singleton
    hyperedge added for every node."""
    import torch

    try:
        import models.datasets as md
    except ImportError:
        md = None
    if md is not None:
        data = md.load("cora", raw_root=raw_root)
        x = data.x if data.x.layout != torch.strided else data.x.to_sparse_csr()
        return x, data.y, data.hyperedge_index, data.num_hyperedges
    folder = raw_root / "HyperGCN" / "data" / "cocitation" / "cora"
    features, hypergraph, labels = (_read(folder / f"{n}.pickle") for n in ("features", "hypergraph", "labels"))
    num_nodes = features.shape[0]
    members = [sorted(int(v) for v in nodes) for nodes in hypergraph.values()]
    members += [[v] for v in range(num_nodes)]
    index = torch.tensor([[v for e in members for v in e], [j for j, e in enumerate(members) for _ in e]])
    csr = features.tocsr().astype("float32")
    x = torch.sparse_csr_tensor(torch.from_numpy(csr.indptr).long(), torch.from_numpy(csr.indices).long(),
                                torch.from_numpy(csr.data), csr.shape, check_invariants=True)
    return x, torch.tensor(labels, dtype=torch.long), index, len(members)


def rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


# ---------------------------------------------------------------------------------------------- worker

def reference_hgnn(in_channels: int, hidden: int, out_channels: int, dropout: float):
    """DHG-Bench's HGNN as PyG layers: HypergraphConv -> ELU -> dropout -> HypergraphConv, dense input."""
    import torch
    import torch.nn.functional as F
    from torch_geometric.nn import HypergraphConv

    class Reference(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = HypergraphConv(in_channels, hidden)
            self.conv2 = HypergraphConv(hidden, out_channels)

        def forward(self, x, hyperedge_index, num_hyperedges=None):
            h = F.dropout(F.elu(self.conv1(x, hyperedge_index)), dropout, self.training)
            return self.conv2(h, hyperedge_index)
    return Reference()


def _build(name: str, in_channels: int, hidden: int, out_channels: int, seed: int):
    import torch

    torch.manual_seed(seed)
    if name == REFERENCE:
        return reference_hgnn(in_channels, hidden, out_channels, 0.5)
    from models.nn import build_model
    return build_model(name, in_channels=in_channels, hidden_channels=hidden, out_channels=out_channels)


def _epoch(model, optimizer, x, y, hyperedge_index, num_hyperedges, train) -> float:
    import torch.nn.functional as F

    start = time.perf_counter()
    model.train()
    optimizer.zero_grad()
    F.cross_entropy(model(x, hyperedge_index, num_hyperedges)[train], y[train]).backward()
    optimizer.step()
    return time.perf_counter() - start


def worker(args: argparse.Namespace) -> dict:
    """Accuracy and peak memory of ``args.worker`` trained alone, then its epoch time interleaved epoch by epoch
    with the reference's (so both see the same machine load)."""
    import torch

    torch.set_num_threads(args.threads)
    x, y, hyperedge_index, num_hyperedges = load_cora(args.raw_root)
    x_ref = x.to_dense() if args.worker == REFERENCE else x
    base_rss = rss_mib()
    num_nodes, num_classes = x.shape[0], int(y.max()) + 1
    accuracies = []
    for seed in range(args.seeds):
        model = _build(args.worker, x.shape[1], args.hidden, num_classes, seed)
        perm = torch.randperm(num_nodes, generator=torch.Generator().manual_seed(seed))
        train, test = perm[: num_nodes // 2], perm[(3 * num_nodes) // 4:]
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
        for _ in range(args.epochs):
            _epoch(model, optimizer, x_ref, y, hyperedge_index, num_hyperedges, train)
        model.eval()
        with torch.no_grad():
            prediction = model(x_ref, hyperedge_index, num_hyperedges).argmax(1)
        accuracies.append((prediction[test] == y[test]).float().mean().item())
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {"model": args.worker, "peak_rss_mib": peak_rss, "base_rss_mib": base_rss,
              "acc_mean": statistics.fmean(accuracies),
              "acc_std": statistics.stdev(accuracies) if len(accuracies) > 1 else 0.0}
    if args.worker == REFERENCE:
        return result
    x_dense = x.to_dense()
    runs = {name: (model := _build(name, x.shape[1], args.hidden, num_classes, 0),
                   torch.optim.Adam(model.parameters(), lr=args.lr), xin, [])
            for name, xin in ((args.worker, x), (REFERENCE, x_dense))}
    train = torch.randperm(num_nodes, generator=torch.Generator().manual_seed(0))[: num_nodes // 2]
    for epoch in range(args.epochs):
        order = list(runs) if epoch % 2 == 0 else list(runs)[::-1]
        for name in order:
            model, optimizer, xin, times = runs[name]
            elapsed = _epoch(model, optimizer, xin, y, hyperedge_index, num_hyperedges, train)
            if epoch >= args.warmup:
                times.append(elapsed)
    result["ms"] = 1e3 * statistics.median(runs[args.worker][3])
    result["ref_ms"] = 1e3 * statistics.median(runs[REFERENCE][3])
    return result


# ---------------------------------------------------------------------------------------------- driver

def run_one(name: str, args: argparse.Namespace) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--raw-root", str(args.raw_root),
               "--epochs", str(args.epochs), "--warmup", str(args.warmup), "--seeds", str(args.seeds),
               "--hidden", str(args.hidden), "--lr", str(args.lr), "--threads", str(args.threads)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        return {"model": name, "error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(results: list[dict]) -> str:
    lines = [f"{'model':<18} {'ms/epoch':>9} {REFERENCE + ' ms':>12} {'speed-up':>9} {'peak RSS MiB':>13} "
             f"{'+RSS MiB':>9} {'test acc %':>14}"]
    for r in results:
        if "error" in r:
            lines.append(f"{r['model']:<18} error: {r['error']}")
            continue
        timing = (f"{r['ms']:>9.2f} {r['ref_ms']:>12.2f} {r['ref_ms'] / r['ms']:>8.2f}x" if "ms" in r
                  else f"{'':>9} {'':>12} {'':>9}")
        lines.append(f"{r['model']:<18} {timing} {r['peak_rss_mib']:>13.0f} "
                     f"{r['peak_rss_mib'] - r['base_rss_mib']:>9.0f} "
                     f"{100 * r['acc_mean']:>7.2f} ± {100 * r['acc_std']:.2f}")
    return "\n".join(lines)


def plot(results: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    ok = [r for r in results if "ms" in r]
    ratios = [r["ref_ms"] / r["ms"] for r in ok]
    fig, ax = plt.subplots(figsize=(9, 0.35 * len(ok) + 1.8))
    ax.barh([r["model"] for r in ok], ratios, color=["tab:blue" if q >= 1 else "tab:orange" for q in ratios])
    for i, q in enumerate(ratios):
        ax.annotate(f"{q:.2f}x", (q, i), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.axvline(1.0, color="tab:gray", linestyle="--")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1, 2, 5)))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%gx"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.invert_yaxis()
    ax.set_xlabel(f"speed-up of one training epoch over {REFERENCE} (PyG HypergraphConv x2, dense x), "
                  "interleaved, log scale")
    ax.set_title("Cora co-citation node classification: per-epoch speed-up (right of the dashed line: faster)")
    fig.tight_layout()
    tmp = path.with_name(path.name + ".tmp.png")
    fig.savefig(tmp, dpi=120)
    plt.close(fig)
    os.replace(tmp, path)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    default_root = os.environ.get(RAW_ENV) or str(Path(__file__).resolve().parents[1] / ".." / "shared" / "data")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--raw-root", type=Path, default=Path(default_root),
                   help=f"folder laid out like ../shared/data (default ${RAW_ENV} or ../shared/data)")
    p.add_argument("--models", nargs="+", default=None, help="registered names (default: all)")
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5, help="epochs per seed left out of the timing")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--plot", type=Path, default=None, help="write a bar chart PNG here")
    p.add_argument("--json", type=Path, default=None, help="write the results as JSON here")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    for name in ("epochs", "seeds", "hidden", "threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1")
    if not 0 <= args.warmup < args.epochs:
        p.error("--warmup must be in [0, --epochs)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args)))
        return 0
    if not (args.raw_root / "HyperGCN" / "data" / "cocitation" / "cora").is_dir():
        print(f"error: no Cora co-citation files under {args.raw_root} (set --raw-root or ${RAW_ENV})",
              file=sys.stderr)
        return 2
    from tqdm import tqdm
    from models.nn import MODELS

    names = args.models or sorted(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"error: unknown model(s) {', '.join(unknown)}; valid: {', '.join(sorted(MODELS))}", file=sys.stderr)
        return 2
    results = [run_one(name, args) for name in tqdm([REFERENCE] + names, desc="models", unit="model")]
    print(f"Cora co-citation, {args.epochs} epochs x {args.seeds} seeds, hidden {args.hidden}, "
          f"{args.threads} threads; median ms per epoch after {args.warmup} warm-up epochs per seed")
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load > cores - args.threads + 0.5:
        print(f"note: the machine was busy (1-minute load {load:.1f} on {cores} cores); with more runnable "
              "threads than cores, every multi-threaded op can wait a scheduler slice, so absolute times are "
              "inflated and ratios noisy (the interleaving keeps them comparable)")
    print(table(results))
    if args.json:
        tmp = args.json.with_name(args.json.name + ".tmp")
        tmp.write_text(json.dumps(results, indent=2))
        os.replace(tmp, args.json)
    if args.plot:
        plot(results, args.plot)
    return 0 if not any("error" in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
