"""Hypergraph classification with global attention: DPHGNN and HyperGT attending within each hypergraph of a batch
(``attention_scope=graph``, the default) beside DHG-Bench's attention over every node of the batch
(``attention_scope=batch``), on the same batches with the same initial weights, timed in one process.

DHG-Bench section 3.1 batches graphs block-diagonally (batch size 256); its DPHGNN and HyperGT apply their
global attention to the whole batch (``../shared/reference/dhgbench-models.md``, DPHGNN bug (f), HyperGT
"attention mixes graphs within a batch"). Within each graph, DPHGNN's softmax attention costs sum_g n_g^2
instead of N^2 (:class:`hypergvl.models.nn.sparse.GraphGroups`); HyperGT's kernelised attention is linear in either
case, so its figure is the price of the per-graph computation. Printed: median seconds of a training step
(zero_grad, forward, loss, backward, Adam step) over ``--batches`` batches after one warm-up step, per model and
scope, and the ratio batch / graph; then HyperGT's step within each graph with its attention in the T x T form
where that takes fewer flops (the model's rule, :func:`hypergvl.models.nn.hypergt.pairwise_is_cheaper`) beside
the linear form everywhere (the code before), and the ratio; then DPHGNN's step with the operators it builds for
every batch on their base's sparsity pattern (today) beside each re-sorted as a new matrix (the code before).

    .venv/bin/python benchmarks/graph_attention.py --dataset rhg-3 --raw-root ../shared/data
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SCOPES = ("graph", "batch")


def step_times(model: str, dataset: str, data, overrides: list[str], batches: int,
               seed: int = 0) -> tuple[list[float], int]:
    """Seconds of ``batches`` training steps (after one warm-up step) of ``model`` under the paper protocol with
    ``overrides`` (``--set`` keys), on the first training batches of ``seed``'s split, and the number of training
    batches in an epoch."""
    import numpy as np
    import torch

    from hypergvl.models.tasks import TaskModule, get_task
    from hypergvl.models.config import model_class, resolve_config
    from hypergvl.models.trainer import make_optimizer

    cfg = resolve_config(model, "graph", dataset, overrides=["task.protocol=paper", *overrides])
    task = get_task("graph")(data, cfg.task, seed, hidden=cfg.trainer.hidden)
    torch.manual_seed(seed)
    encoder = model_class(model)(in_channels=task.in_channels, hidden_channels=cfg.trainer.hidden,
                                 out_channels=task.out_channels, num_layers=cfg.trainer.num_layers,
                                 dropout=cfg.trainer.dropout, **dict(cfg.model))
    module = TaskModule(encoder, task.build_head()).train()
    optimizer = make_optimizer(module.parameters(), cfg.trainer)
    order = list(task.train_batches(np.random.default_rng(seed)))
    times = []
    for i in range(batches + 1):
        batch = order[i % len(order)]
        start = time.perf_counter()
        optimizer.zero_grad()
        task.loss(module, batch).backward()
        optimizer.step()
        if i:  # the first step is the warm-up
            times.append(time.perf_counter() - start)
    return times, len(order)


def parser(prog: str, doc: str, what: str) -> argparse.ArgumentParser:
    """The flags of a training-step benchmark on a hypergraph-classification dataset (``what`` is timed)."""
    p = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    p.add_argument("--dataset", default="rhg-3", help="a hypergraph-classification dataset (default rhg-3)")
    p.add_argument("--batches", type=int, default=5, help=f"timed training steps per {what} (default 5)")
    p.add_argument("--raw-root", default=None, help="raw data folder (default: $HYPERGVL_RAW_ROOT)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    return p


def load(p: argparse.ArgumentParser, argv: list[str] | None):
    """Parse ``argv`` (bad counts are a usage error), set the torch threads and load the dataset: (args, data)."""
    args = p.parse_args(argv)
    if args.batches < 1 or args.threads < 1:
        p.error("--batches and --threads must be at least 1")
    import os

    import torch

    from hypergvl.models.tasks import get_task
    from hypergvl.models.trainer import load_dataset

    torch.set_num_threads(args.threads)
    return args, load_dataset(args.dataset, args.raw_root or os.environ.get("HYPERGVL_RAW_ROOT"),
                              **get_task("graph").load_kwargs)


def main(argv: list[str] | None = None) -> int:
    p = parser("benchmarks/graph_attention.py", __doc__, "model and scope")
    p.add_argument("--models", nargs="+", default=["DPHGNN", "HyperGT"])
    args, data = load(p, argv)
    print(f"{args.dataset}, training step (s), median of {args.batches}, {args.threads} thread(s)")
    print("| model | within each graph | whole batch (DHG-Bench) | batch / graph |")
    print("|---|---|---|---|")
    for model in args.models:
        median = {s: statistics.median(step_times(model, args.dataset, data, [f"model.attention_scope={s}"],
                                                  args.batches)[0]) for s in SCOPES}
        print(f"| {model} | {median['graph']:.3f} | {median['batch']:.3f} | {median['batch'] / median['graph']:.2f}x |")
    if "HyperGT" in args.models:
        print(f"\nHyperGT within each graph, training step (s), median of {args.batches}")
        print("| form | T x T where cheaper (today) | linear only (before) | before / today |")
        print("|---|---|---|---|")
        median = {form: statistics.median(hypergt_form_times(form, args.dataset, data, args.batches))
                  for form in ("pairwise", "linear")}
        print(f"| HyperGT | {median['pairwise']:.3f} | {median['linear']:.3f} | "
              f"{median['linear'] / median['pairwise']:.2f}x |")
    if "DPHGNN" in args.models:
        print(f"\nDPHGNN's per-batch structure, training step (s), median of {args.batches}")
        print("| structure | operators on their base's pattern (today) | each operator re-sorted (before) | "
              "before / today |")
        print("|---|---|---|---|")
        median = {way: statistics.median(dphgnn_structure_times(way, args.dataset, data, args.batches))
                  for way in ("shared", "rebuilt")}
        print(f"| DPHGNN | {median['shared']:.3f} | {median['rebuilt']:.3f} | "
              f"{median['rebuilt'] / median['shared']:.2f}x |")
    return 0


def _rebuilt(operator):
    """``operator`` (DPHGNN's ``_operator``) whose fused matrices are built again as new matrices, sorted and
    coalesced, as the code before did: the same values, the old cost."""
    from hypergvl.models.nn.sparse import SparseOperator

    def rebuilt(*args):
        op = operator(*args)
        if not isinstance(op, SparseOperator):
            return op
        return SparseOperator(op.row_indices(), op.matrix.col_indices(), op.values, op.shape)
    return rebuilt


def _resorted_from_sparse(t):
    """``SparseOperator.from_sparse`` as the code before had it for DPHGNN's A_beta: the product's entries sorted
    and coalesced again (today's keeps the product's coalesced order)."""
    from hypergvl.models.nn.sparse import SparseOperator

    coo = t.to_sparse_coo()
    return SparseOperator(coo.indices()[0], coo.indices()[1], coo.values(), tuple(t.shape))


def dphgnn_structure_times(way: str, dataset: str, data, batches: int) -> list[float]:
    """:func:`step_times` of DPHGNN with its per-batch operators on their base's pattern and A_beta kept in its
    sparse product's order (``"shared"``, the model) or each, A_beta included, built as a new sorted matrix
    (``"rebuilt"``, the code before 8c46e7f)."""
    from hypergvl.models.nn import dphgnn

    operator, from_sparse = dphgnn._operator, vars(dphgnn.SparseOperator)["from_sparse"]  # the classmethod itself
    if way == "rebuilt":
        dphgnn._operator = _rebuilt(operator)
        dphgnn.SparseOperator.from_sparse = staticmethod(_resorted_from_sparse)
    try:
        return step_times("DPHGNN", dataset, data, [], batches)[0]
    finally:
        dphgnn._operator = operator
        dphgnn.SparseOperator.from_sparse = from_sparse


def hypergt_form_times(form: str, dataset: str, data, batches: int) -> list[float]:
    """:func:`step_times` of HyperGT within each graph with its per-graph attention in the T x T form where that
    takes fewer flops (``"pairwise"``, the model's rule) or in the linear form everywhere (``"linear"``, the code
    before the T x T form existed)."""
    import hypergvl.models.nn.hypergt as hypergt

    rule = hypergt.pairwise_is_cheaper
    if form == "linear":
        hypergt.pairwise_is_cheaper = lambda *args: False
    try:
        return step_times("HyperGT", dataset, data, ["model.attention_scope=graph"], batches)[0]
    finally:
        hypergt.pairwise_is_cheaper = rule


if __name__ == "__main__":
    sys.exit(main())
