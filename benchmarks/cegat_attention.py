"""CEGAT in hypergraph classification: its attention-weighted sum as CSR products (today's
:class:`hypergvl.models.nn.cegat.GATLayer`) beside the gather-multiply-scatter form it replaced, on the same batches
with the same initial weights, timed in one process.

Why (issue 40, runs that fit): a CEGAT run on RHG-3 under the paper protocol took 620 s on one thread, over the
10-minute target, with 6 datasets x 5 seeds to run. The replaced form built an ``edges x heads x channels``
message tensor per layer (a batch of 256 RHG-3 graphs has about 160,000 clique pairs with self-loops: 4 heads x
64 channels = 41 million floats), and above 2^25 of them cut the edges into blocks under activation
checkpointing, recomputing each block in the backward. The CSR form never forms it (forward: one sparse product
per head; backward: the transposed product and one ``sampled_addmm`` per head). Both compute PyG's ``GATConv``
(``tests/models/nn/test_cegat.py``). Printed: median seconds of a training step (zero_grad, forward, loss,
backward, Adam step) over ``--batches`` batches after one warm-up step, the seconds of an epoch (the median times
the training batches per epoch), and the ratio.

    .venv/bin/python benchmarks/cegat_attention.py --dataset rhg-3 --raw-root ../shared/data
"""
from __future__ import annotations

import contextlib
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, Path(__file__).resolve().parent):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from graph_attention import load, parser, step_times  # noqa: E402

#: message elements above which the replaced form attended in blocks under checkpointing (its ``BLOCK_ELEMENTS``)
REPLACED_BLOCK_ELEMENTS = 1 << 25


def replaced_forward(self, x, source, target, pattern):
    """``GATLayer.forward`` before the CSR form: per-edge messages ``h[source] * alpha`` scattered into the targets,
    in blocks of whole target neighbourhoods under checkpointing above :data:`REPLACED_BLOCK_ELEMENTS`."""
    import torch
    import torch.nn.functional as F
    from torch.utils.checkpoint import checkpoint
    from torch_geometric.utils import scatter, softmax

    from hypergvl.models.nn.dropout import dropout as drop

    def attend(h, a_src, a_dst, source, target, lo, hi):
        local = target - lo
        score = a_src[source] + a_dst[target]
        alpha = softmax(F.leaky_relu(score, self.negative_slope), local, num_nodes=hi - lo)
        alpha = drop(alpha, self.attention_dropout, self.training)
        return scatter(h[source] * alpha.unsqueeze(-1), local, dim=0, dim_size=hi - lo, reduce="sum")

    order = torch.argsort(target, stable=True)  # the replaced form's edges came sorted by target
    source, target = source[order], target[order]
    h = self.lin(x).view(-1, self.heads, self.out_channels)
    n = h.size(0)
    a_src, a_dst = (h * self.att_src).sum(-1), (h * self.att_dst).sum(-1)
    max_edges = max(1, REPLACED_BLOCK_ELEMENTS // (self.heads * self.out_channels))
    if source.numel() <= max_edges:
        out = attend(h, a_src, a_dst, source, target, 0, n)
    else:
        ends = torch.cumsum(torch.bincount(target, minlength=n), 0)
        parts, lo, start = [], 0, 0
        while lo < n:
            hi = min(max(int(torch.searchsorted(ends, start + max_edges, right=True)), lo + 1), n)
            end = int(ends[hi - 1])
            parts.append(checkpoint(attend, h, a_src, a_dst, source[start:end], target[start:end], lo, hi,
                                    use_reentrant=False))
            lo, start = hi, end
        out = torch.cat(parts)
    out = out.reshape(n, -1) if self.concat else out.mean(dim=1)
    return out + self.bias


@contextlib.contextmanager
def replaced():
    from hypergvl.models.nn.cegat import GATLayer

    today = GATLayer.forward
    GATLayer.forward = replaced_forward
    try:
        yield
    finally:
        GATLayer.forward = today


def main(argv: list[str] | None = None) -> int:
    args, data = load(parser("benchmarks/cegat_attention.py", __doc__, "form"), argv)
    with replaced():
        before, per_epoch = step_times("CEGAT", args.dataset, data, [], args.batches)
    now, _ = step_times("CEGAT", args.dataset, data, [], args.batches)
    before, now = statistics.median(before), statistics.median(now)
    print(f"CEGAT on {args.dataset}, training step (s), median of {args.batches}, {args.threads} thread(s); "
          f"{per_epoch} training batches an epoch")
    print("| attention sum | step (s) | epoch (s) |")
    print("|---|---|---|")
    print(f"| gather-multiply-scatter (replaced) | {before:.3f} | {before * per_epoch:.2f} |")
    print(f"| CSR products (today) | {now:.3f} | {now * per_epoch:.2f} |")
    print(f"speed-up: {before / now:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
