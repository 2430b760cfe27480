"""Per-epoch training time and peak memory of every ``hypergvl.models.nn`` model on Cora co-citation, beside a
reference HGNN built from PyG's ``HypergraphConv`` (dense features) and beside DHG-Bench's own class for the same
model, all measured in the same run.

Protocol (DHG-Bench node classification, section 3.1 and docs/design.md protocol facts): Cora co-citation with a
singleton hyperedge for every node (2,708 nodes, 1,579 + 2,708 hyperedges, 1,433 bag-of-words features that
stay sparse for the project's models), random 50/25/25 split per seed, cross-entropy, accuracy on the test split
at the final epoch. Our models run with their Cora config (``models/configs/<Model>.yaml``, ``node.cora`` over
``node.default``: hidden width, layers, dropout, lr, weight decay, model keywords), ``--epochs`` epochs. The PyG
reference is HypergraphConv x2 with ``--hidden``, ``--lr``.

DHG-Bench's column (issue 12, Performance): its code is the PyPI wheel ``dhg-bench`` (0.1.2 when this was
written), installed outside the project's environment::

    .venv/bin/python -m pip download --no-deps dhg-bench -d /tmp/dhgwheel
    .venv/bin/python -m pip install --no-deps --target benchmarks/.dhgbench /tmp/dhgwheel/dhg_bench-*.whl

(or any ``--target`` folder given by ``--dhgbench`` / ``$HYPERGVL_DHGBENCH``; ``--no-dhgbench`` skips the column).
The wheel imports torch_scatter, torch_sparse and dask, which have no build for this torch: the stand-ins of
``benchmarks/_dhgbench_shim.py`` (torch's own scatter and sparse ops; torch_sparse's spmm algorithm as is) are
put in ``sys.modules`` by this script only. Each model is built through DHG-Bench's own pipeline
(``benchmarks/dhgbench_reference.py``: ``method_config`` with its cora yaml, our config's
hidden/layers/dropout/lr/weight decay overlaid, keys its yaml lacks taken from ours; ``data_processing``,
``algo_preprocessing``, ``parse_model``) on the same Cora hypergraph, and one epoch is its trainer's
(``train_agent.semi_node_cls_training``: forward, NLL of log-softmax, HJRL's reconstruction term, backward, Adam
step; ``torch.optim.Adam`` as in its code, while ours steps the trainer's fused Adam,
``hypergvl.models.trainer.make_optimizer``). Its preprocessing is outside the timing, as in DHG-Bench; work a class
does lazily in its first forward falls in the warm-up epochs. After the timing, both classes' test accuracy (same
split, same epochs) is printed, and the weights of a fresh reference are copied into a fresh model of ours
(``benchmarks/weight_copy.py``: tensors matched by shape in registration order, or by name for EHNN and DPHGNN) to
print the max abs difference of the eval-mode outputs where the two compute the same function (with the option
named when one of ours is needed), or why not.

Method: each model runs in its own subprocess (``torch.set_num_threads(--threads)``). It first trains alone for
``--seeds`` seeds (test accuracy; then the peak resident set size, ``resource.getrusage(RUSAGE_SELF).ru_maxrss``,
and ``+RSS``, that peak minus the RSS after loading the data: the model, its activations and cached operators).
Then the same process trains the model and the references side by side, alternating epochs (order reversed every
epoch), so all see the same machine load; one epoch is ``zero_grad + forward + loss + backward + step`` timed
with ``time.perf_counter`` (``--clock cpu``: ``time.process_time``, the worker's CPU time, which other jobs'
load does not inflate; with ``--threads 1`` it equals the wall time on an idle machine), and each figure is the
median over the epochs after ``--warmup`` (the interleaved loop stops early, after at least ``--warmup`` + 3
epochs, once ``--budget-s`` seconds of epochs are spent). The speed-up is the reference's median over the
model's. Whether a model's training is as (un)stable in the reference's class: ``benchmarks/training_stability.py``.

Data: ``hypergvl.models.datasets.load("cora", raw_root=...)``.

    .venv/bin/python benchmarks/epoch_time.py                         # every model, 3 seeds (minutes)
    .venv/bin/python benchmarks/epoch_time.py --models HGNN --seeds 5 --plot /tmp/epoch_time.png
    .venv/bin/python benchmarks/epoch_time.py --seeds 1 --epochs 30 --json /tmp/epoch_time.json   # quicker
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from hypergvl.atomic import atomic_path, write_json

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dhgbench_reference import (DHGBENCH_ENV, DHGBENCH_INSTALL, DHGBENCH_METHOD, build_dhgbench,  # noqa: E402
                                build_ours, default_dhgbench, dhgbench_epoch, dhgbench_logits, import_dhgbench,
                                our_config)
from weight_copy import output_difference  # noqa: E402

REFERENCE = "PyG-HGNN"
#: ``--clock``: what one epoch's time is measured with (``CLOCK[0]``, set in the worker).
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
CLOCK = [time.perf_counter]
DHGBENCH = "DHG-Bench"
RAW_ENV = "HYPERGVL_RAW_ROOT"


# ------------------------------------------------------------------------------------------------ data

def load_node_set(raw_root: Path, name: str = "cora"):
    """``(x sparse CSR float32, y long, hyperedge_index long [2, nnz], num_hyperedges)`` of ``name`` (a registered
    node-level set or a folder of your own) with a singleton hyperedge added for every node
    (:func:`hypergvl.models.datasets.load`, the data every model trains on)."""
    import torch

    import hypergvl.models.datasets as md

    data = md.load(name, raw_root=raw_root)
    x = data.x if data.x.layout != torch.strided else data.x.to_sparse_csr()
    return x, data.y, data.hyperedge_index, data.num_hyperedges


def split(num_nodes: int, seed: int):
    """The protocol's random split of seed ``seed``: the first half of a permutation trains, the last quarter tests."""
    import torch

    perm = torch.randperm(num_nodes, generator=torch.Generator().manual_seed(seed))
    return perm[: num_nodes // 2], perm[(3 * num_nodes) // 4:]


def default_raw_root() -> Path:
    """``$HYPERGVL_RAW_ROOT``, else ``../shared/data`` beside the checkout."""
    return Path(os.environ.get(RAW_ENV) or str(Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))


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


def _build(name: str, in_channels: int, hidden: int, out_channels: int, seed: int, structure: tuple):
    """The PyG reference (``hidden``, dropout 0.5) or our model with its Cora config (hidden ignored)."""
    import torch

    torch.manual_seed(seed)
    if name == REFERENCE:
        return reference_hgnn(in_channels, hidden, out_channels, 0.5)
    return build_ours(name, in_channels, out_channels, seed, structure)


def _optimizer(name: str, model, args: argparse.Namespace):
    import torch

    if name == REFERENCE:
        return torch.optim.Adam(model.parameters(), lr=args.lr)
    from hypergvl.models.trainer import make_optimizer

    return make_optimizer(model.parameters(), our_config(name).trainer)  # the trainer's own optimiser


def _epoch(model, optimizer, x, y, hyperedge_index, num_hyperedges, train) -> float:
    import torch.nn.functional as F

    start = CLOCK[0]()
    model.train()
    optimizer.zero_grad()
    F.cross_entropy(model(x, hyperedge_index, num_hyperedges)[train], y[train]).backward()
    optimizer.step()
    return CLOCK[0]() - start


def _accuracy(logits, y, test) -> float:
    return (logits.argmax(1)[test] == y[test]).float().mean().item()


def worker(args: argparse.Namespace) -> dict:
    """Accuracy and peak memory of ``args.worker`` trained alone, then its epoch time interleaved epoch by epoch
    with the PyG reference's and DHG-Bench's class's (so all see the same machine load), then both classes' test
    accuracy after that training and the output difference on copied weights."""
    import torch

    torch.set_num_threads(args.threads)
    CLOCK[0] = CLOCKS[args.clock]
    x, y, hyperedge_index, num_hyperedges = load_node_set(args.raw_root)
    num_classes = int(y.max()) + 1
    if args.check_only:  # the copied-weights output check alone, no training
        if args.worker not in DHGBENCH_METHOD:
            return {"model": args.worker, "dhgbench_diff": "no class in the wheel"}
        fresh, data, ref_args = build_dhgbench(args.worker, x.to_dense(), y, hyperedge_index, num_hyperedges, 1)
        return {"model": args.worker, "dhgbench_diff": output_difference(
            args.worker, fresh, data, ref_args, x, hyperedge_index, num_hyperedges, num_classes)}
    x_ref = x.to_dense() if args.worker == REFERENCE else x
    base_rss = rss_mib()
    num_nodes = x.shape[0]
    accuracies = []
    for seed in range(args.seeds):
        model = _build(args.worker, x.shape[1], args.hidden, num_classes, seed, (x, hyperedge_index, num_hyperedges))
        train, test = split(num_nodes, seed)
        optimizer = _optimizer(args.worker, model, args)
        for _ in range(args.epochs):
            _epoch(model, optimizer, x_ref, y, hyperedge_index, num_hyperedges, train)
        model.eval()
        with torch.no_grad():
            accuracies.append(_accuracy(model(x_ref, hyperedge_index, num_hyperedges), y, test))
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {"model": args.worker, "peak_rss_mib": peak_rss, "base_rss_mib": base_rss,
              "acc_mean": statistics.fmean(accuracies),
              "acc_std": statistics.stdev(accuracies) if len(accuracies) > 1 else 0.0}
    if args.worker == REFERENCE:
        return result
    x_dense = x.to_dense()
    train, test = split(num_nodes, 0)
    structure = (x, hyperedge_index, num_hyperedges)
    runs = {name: (model := _build(name, x.shape[1], args.hidden, num_classes, 0, structure),
                   _optimizer(name, model, args), xin, [])
            for name, xin in ((args.worker, x), (REFERENCE, x_dense))}
    ref = None
    if args.dhgbench is not None and args.worker in DHGBENCH_METHOD:
        t0 = time.perf_counter()
        model, data, ref_args = build_dhgbench(args.worker, x_dense, y, hyperedge_index, num_hyperedges, 0)
        result["dhgbench_prep_s"] = time.perf_counter() - t0
        pos_weight = None
        if ref_args.method == "HJRL":  # train_agent: (N^2 - nnz) / nnz, or pos_weight_thresh if infinite
            h = data.H_ini
            pos_weight = float(h.shape[0] * h.shape[0] - h.sum()) / h.sum()
        ref = (model, torch.optim.Adam(model.parameters(), lr=ref_args.lr, weight_decay=ref_args.wd), data,
               ref_args, pos_weight, [])
    order = list(runs) + ([DHGBENCH] if ref else [])
    spent, epochs_run = 0.0, 0
    for epoch in range(args.epochs):
        for name in (order if epoch % 2 == 0 else order[::-1]):
            if name == DHGBENCH:
                model, optimizer, data, ref_args, pos_weight, times = ref
                elapsed = dhgbench_epoch(model, optimizer, data, ref_args, train, pos_weight, CLOCK[0])
            else:
                model, optimizer, xin, times = runs[name]
                elapsed = _epoch(model, optimizer, xin, y, hyperedge_index, num_hyperedges, train)
            spent += elapsed
            times.append(elapsed)  # every epoch; the medians skip the first --warmup
        epochs_run = epoch + 1
        if spent > args.budget_s and epochs_run >= args.warmup + 3:
            break  # enough timed epochs of a slow pair
    result["ms"] = 1e3 * statistics.median(runs[args.worker][3][args.warmup:])
    result["first_ms"] = 1e3 * runs[args.worker][3][0]  # lazily built caches included
    result["ref_ms"] = 1e3 * statistics.median(runs[REFERENCE][3][args.warmup:])
    result["timed_epochs"] = epochs_run - args.warmup
    model = runs[args.worker][0]
    model.eval()
    with torch.no_grad():
        result["acc_interleaved"] = _accuracy(model(x, hyperedge_index, num_hyperedges), y, test)
    if ref:
        model, _, data, ref_args, _, times = ref
        result["dhgbench_ms"] = 1e3 * statistics.median(times[args.warmup:])
        result["dhgbench_first_ms"] = 1e3 * times[0]
        model.eval()
        with torch.no_grad():
            out = dhgbench_logits(model, data, ref_args)
        result["dhgbench_acc"] = _accuracy(out[0] if isinstance(out, tuple) else out, y, test)
        fresh, data, ref_args = build_dhgbench(args.worker, x_dense, y, hyperedge_index, num_hyperedges, 1)
        result["dhgbench_diff"] = output_difference(args.worker, fresh, data, ref_args, x, hyperedge_index,
                                                    num_hyperedges, num_classes)
    return result


# ---------------------------------------------------------------------------------------------- driver

def run_one(name: str, args: argparse.Namespace) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--raw-root", str(args.raw_root),
               "--epochs", str(args.epochs), "--warmup", str(args.warmup), "--seeds", str(args.seeds),
               "--hidden", str(args.hidden), "--lr", str(args.lr), "--threads", str(args.threads),
               "--budget-s", str(args.budget_s), "--clock", args.clock]
    command += ["--dhgbench", str(args.dhgbench)] if args.dhgbench is not None else ["--no-dhgbench"]
    command += ["--check-only"] if args.check_only else []
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


def dhgbench_table(results: list[dict]) -> str:
    """Ours beside DHG-Bench's class: median ms per epoch (interleaved), theirs / ours, test accuracy of both after
    the same interleaved epochs (seed 0 split), and the output difference on copied weights."""
    lines = [f"{'model':<18} {'ours ms':>9} {DHGBENCH + ' ms':>13} {'speed-up':>9} {'1st epoch s ours/theirs':>24} "
             f"{'epochs':>6} {'acc ours/theirs %':>18}  max |out diff| on copied weights"]
    for r in results:
        if "error" in r or "ms" not in r:
            continue
        if "dhgbench_ms" not in r:
            lines.append(f"{r['model']:<18} {r['ms']:>9.2f} {'':>13} {'':>9} {'':>24} {r['timed_epochs']:>6}  "
                         "no class in the wheel")
            continue
        acc = f"{100 * r['acc_interleaved']:.1f} / {100 * r['dhgbench_acc']:.1f}"
        first = f"{r['first_ms'] / 1e3:.2f} / {r['dhgbench_first_ms'] / 1e3:.2f}"
        lines.append(f"{r['model']:<18} {r['ms']:>9.2f} {r['dhgbench_ms']:>13.2f} "
                     f"{r['dhgbench_ms'] / r['ms']:>8.2f}x {first:>24} {r['timed_epochs']:>6} {acc:>18}  "
                     f"{r['dhgbench_diff']}")
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
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--raw-root", type=Path, default=default_raw_root(),
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
    p.add_argument("--budget-s", type=float, default=60.0,
                   help="stop the interleaved timing of a model after this many seconds of epochs (at least "
                        "--warmup + 3 epochs; default 60)")
    p.add_argument("--dhgbench", type=Path, default=default_dhgbench(),
                   help=f"folder holding DHG-Bench's package dhgbench/ (default ${DHGBENCH_ENV} or "
                        f"benchmarks/.dhgbench); install it with:\n  {DHGBENCH_INSTALL}")
    p.add_argument("--no-dhgbench", dest="dhgbench", action="store_const", const=None,
                   help="skip the DHG-Bench column")
    p.add_argument("--check-only", action="store_true",
                   help="only the output difference on copied weights per model (no training, no timing)")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                   help="wall: time.perf_counter (default); cpu: time.process_time of the worker, robust to the "
                        "load of other jobs on a shared machine")
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
    if args.dhgbench is not None:
        shimmed = import_dhgbench(args.dhgbench)  # exits with the install command when absent
    if args.worker:
        print(json.dumps(worker(args)))
        return 0
    if not (args.raw_root / "HyperGCN" / "data" / "cocitation" / "cora").is_dir():
        print(f"error: no Cora co-citation files under {args.raw_root} (set --raw-root or ${RAW_ENV})",
              file=sys.stderr)
        return 2
    from tqdm import tqdm
    from hypergvl.models.nn import MODELS

    names = args.models or sorted(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"error: unknown model(s) {', '.join(unknown)}; valid: {', '.join(sorted(MODELS))}", file=sys.stderr)
        return 2
    if args.check_only:
        if args.dhgbench is None:
            print("error: --check-only compares with DHG-Bench's classes; drop --no-dhgbench", file=sys.stderr)
            return 2
        results = [run_one(name, args) for name in tqdm(names, desc="models", unit="model")]
        print(f"{'model':<18}  max |out diff| on copied weights (eval mode, Cora)")
        for r in results:
            print(f"{r['model']:<18}  {r.get('dhgbench_diff') or 'error: ' + r.get('error', '')}")
        return 0 if not any("error" in r for r in results) else 1
    results = [run_one(name, args) for name in tqdm([REFERENCE] + names, desc="models", unit="model")]
    print(f"Cora co-citation, {args.epochs} epochs x {args.seeds} seeds, hidden {args.hidden}, "
          f"{args.threads} threads; median ms per epoch after {args.warmup} warm-up epochs per seed"
          + (" (CPU time of the worker process, --clock cpu)" if args.clock == "cpu" else ""))
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load > cores - args.threads + 0.5 and args.clock == "wall":
        print(f"note: the machine was busy (1-minute load {load:.1f} on {cores} cores); with more runnable "
              "threads than cores, every multi-threaded op can wait a scheduler slice, so absolute times are "
              "inflated and ratios noisy (the interleaving keeps them comparable)")
    print(table(results))
    if args.dhgbench is not None:
        where = Path(args.dhgbench).resolve()
        try:  # name the wheel's folder relative to the checkout, never by this machine's absolute path
            where = where.relative_to(Path(__file__).resolve().parents[1])
        except ValueError:
            where = "$HYPERGVL_DHGBENCH" if os.environ.get("HYPERGVL_DHGBENCH") else where.name
        print(f"\n{DHGBENCH}'s own classes (wheel dhg-bench under {where}"
              + (f"; stand-ins from benchmarks/_dhgbench_shim.py for {', '.join(shimmed)}" if shimmed else "")
              + "), same data and our Cora config's values, interleaved in the same process; speed-up = theirs / ours")
        print(dhgbench_table(results))
    if args.json:
        write_json(args.json, results)
    if args.plot:
        plot(results, args.plot)
    return 0 if not any("error" in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
