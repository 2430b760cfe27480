"""One training epoch of every registered ``hypergvl.models.nn`` model at Yelp and Trivago scale, each model in its own
subprocess under a memory cap, printing epoch time and peak memory (or OOM with the cap).

Issue 12, Performance: "one training epoch (forward and backward) of every model at Yelp scale (50,758 nodes,
679,302 hyperedges plus self-loops, mean order 6.66, 1,862 features, 9 classes ...) and at Trivago scale
(172,738 nodes, 233,202 hyperedges, mean order 3.12, 300 features, 160 classes), each model in its own
subprocess under a 22 GiB memory cap". DHG-Bench (section 4.2, Figure 1, Table 1) reports 8 of its 17 HNNs out
of memory on Yelp with a 24 GB GPU.

The data are **synthetic**: Yelp and Trivago are not in ../shared/data, so the structure is a random hypergraph
with their published statistics (DHG-Bench Table A1; hyperedge sizes 2 + Poisson(mean order - 2), members
uniform, a singleton hyperedge added for every node as in node classification), features standard normal. Only
time and memory mean anything; accuracy does not.

Nothing is re-implemented here: the generator is ``hypergvl.models.study.common.synthetic_hypergraph`` (through
``load_node_dataset``) and the subprocess-under-cap runner is ``hypergvl.models.study.efficiency.run`` (``RLIMIT_AS`` of
the child; an allocation failure or a kill for memory is recorded as ``oom`` with the cap and the study goes
on). Each (model, scale) is one JSON point under ``--out``; a finished point (ok, or oom at the same cap) is
skipped on rerun. The child trains with the model's ``node.default`` config (``models/configs/<Model>.yaml``)
and ``epochs=1``: the time is that first training epoch (zero_grad, forward, loss, backward, step; any
structure cache a model builds lazily in its first forward is included), the memory the peak resident set size
(VmHWM) of the child during training and the final evaluation, which includes the interpreter, torch and the
data (``base`` is the RSS right after loading).

    .venv/bin/python benchmarks/scale.py --out out/scale                       # both scales, 22 GiB cap
    .venv/bin/python benchmarks/scale.py --datasets trivago --models HGNN MLP --memory-cap-gib 12 \\
        --lock /path/to/bigmem.lock --table benchmarks/results/scale.md --out out/scale
    .venv/bin/python benchmarks/scale.py --scale 0.001 --out /tmp/scale-smoke  # a tiny smoke run
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import fcntl
import sys
from pathlib import Path

from hypergvl.atomic import write_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

DATASETS = {"trivago": "synthetic-trivago", "yelp": "synthetic-yelp"}  # cheaper first

#: Why a model did not finish at full scale (N nodes, M hyperedges with the singletons, P incidences, F features,
#: h hidden width), from the measured runs: the memory or time term that rules it out.
NOTES: dict[str, str | dict[str, str]] = {
    "DPHGNN": {"trivago": "time, not memory: its two attention blocks (SDPA, no N x N matrix kept) cost 7 products "
                          "of 2 N^2 d flops each, 28 x 172,738^2 x 64 = 5.4e13 flops per epoch with backward at "
                          "d = 64: 1,300-2,500 s on one loaded core (rerun with --timeout-s 3600)"},
    "HJRL": {"trivago": "time: the exact reconstruction loss over all N M = 7.0e10 node-hyperedge pairs is three "
                        "products of 2 N M C flops (6.7e13 at C = 160), over 1,700 s on one core; memory stays "
                        "O((N + M) C). HJRL.yaml's trivago entry samples it (reconstruction_samples=1048576)"},
}


@contextlib.contextmanager
def _locked(path: Path | None):
    """Hold an exclusive ``flock`` on ``path`` (a lock shared with other memory-heavy jobs) while one model runs."""
    if path is None:
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run(models: list[str], datasets: list[str], out: Path, *, memory_cap_gib: float, scale: float, threads: int,
        timeout_s: float | None, lock: Path | None = None, table: Path | None = None, overrides: tuple = (),
        retry_errors: bool = False, progress: bool = True) -> list[dict]:
    """Every (dataset, model) point, dataset by dataset, one subprocess at a time; ``table`` is rewritten after
    each point so a long study can be committed as it goes. A finished point (ok, or oom at the same cap) is
    skipped, and so is a failed one (a timeout, say) unless ``retry_errors``."""
    from tqdm import tqdm

    from hypergvl.models.study.common import iter_points
    from hypergvl.models.study.efficiency import run as run_points

    failed = {} if retry_errors or not Path(out).exists() else {
        (p["dataset"], p["model"]): p for p in iter_points([out]) if p["status"] == "error"}
    points = []
    bar = tqdm([(d, m) for d in datasets for m in models], desc="scale", unit="model", disable=not progress,
               dynamic_ncols=True)
    for ds, model in bar:
        bar.set_postfix_str(f"{ds} {model}")
        if (DATASETS[ds], model) in failed:  # e.g. a timeout: kept, not rerun, unless --retry-errors
            points.append(failed[(DATASETS[ds], model)])
            continue
        with _locked(lock):  # run_points skips a finished point (ok, or oom at the same cap) without a child
            doc = run_points([model], out, datasets=[DATASETS[ds]], runs=1, overrides=["epochs=1", *overrides],
                             memory_cap_gib=memory_cap_gib, scale=scale, threads=threads, timeout_s=timeout_s,
                             progress=False)[-1]
        points.append(doc)
        if table is not None:
            write_table(points, table, memory_cap_gib=memory_cap_gib, scale=scale, threads=threads)
    return points


def _mean(value) -> float:
    """A point's figure: a float, or the mean of a ``{"mean", ...}`` summary."""
    return float(value["mean"]) if isinstance(value, dict) else float(value)


def _cell(doc: dict | None) -> tuple[str, str]:
    if doc is None:
        return "", ""
    if doc["status"] == "ok":
        eff = doc["efficiency"]
        return f"{_mean(eff['epoch_time_s']):.2f}", f"{_mean(eff['peak_memory_mib']) / 1024:.2f}"
    if doc["status"] == "oom":
        return f"OOM (cap {doc['memory_cap_gib']:g} GiB)", ""
    return "error", ""


def render(points: list[dict], *, memory_cap_gib: float, scale: float, threads: int) -> str:
    """A Markdown table: one row per model, epoch seconds and peak RSS GiB per scale, notes for OOM and errors."""
    by = {(p["dataset"], p["model"]): p for p in points if p is not None}
    models = sorted({m for _, m in by})
    names = [d for d in DATASETS if any(k[0] == DATASETS[d] for k in by)]
    sizes = {d: next((p["dataset_info"] for (ds, _), p in by.items() if ds == DATASETS[d] and p.get("dataset_info")),
                     None) for d in names}
    lines = [f"Synthetic hypergraphs with the published statistics (not the real sets), scale {scale:g}; memory "
             f"cap {memory_cap_gib:g} GiB (RLIMIT_AS) per model subprocess, {threads} torch thread(s); one "
             "training epoch (the first, lazily built structure caches included); peak RSS of the subprocess "
             "(interpreter, torch and data included). Written "
             f"{dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}.", ""]
    for d in names:
        s = sizes[d]
        if s:
            m, p = s["hyperedges"] - s["nodes"], s["incidences"] - s["nodes"]  # one singleton per node
            lines.append(f"- {d}: {s['nodes']:,} nodes, {s['hyperedges']:,} hyperedges ({m:,} plus a singleton per "
                         f"node), {s['incidences']:,} incidences, mean order {p / max(m, 1):.2f} without the "
                         f"singletons ({s['mean_order']:.2f} with them), {s['features']:,} features, "
                         f"{s['classes']} classes")
    lines.append("")
    head = "| model | " + " | ".join(f"{d} s/epoch | {d} peak GiB" for d in names) + " | notes |"
    lines += [head, "|" + " --- |" * (1 + 2 * len(names) + 1)]
    for m in models:
        cells, notes = [], []
        for d in names:
            doc = by.get((DATASETS[d], m))
            cells += _cell(doc)
            note = NOTES.get(m)
            note = note.get(d) if isinstance(note, dict) else note
            if doc is None and note:
                notes.append(f"{d}: not measured; {note}")
            extra = [o for o in (doc or {}).get("overrides", []) if o != "epochs=1"]
            if doc is not None and doc["status"] == "ok" and extra:
                notes.append(f"{d}: with {' '.join(extra)}")
            if doc is not None and doc["status"] == "oom":
                notes.append(f"{d}: {note or 'out of memory; no formula recorded'}")
            elif doc is not None and doc["status"] == "error":
                error = (doc.get("error") or "").strip().splitlines()
                notes.append(f"{d}: {error[-1][:160] if error else 'failed'}" + (f" ({note})" if note else ""))
        lines.append(f"| {m} | " + " | ".join(cells) + f" | {'; '.join(notes)} |")
    return "\n".join(lines) + "\n"


def write_table(points: list[dict], path: Path, **kw) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, render(points, **kw))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", type=Path, required=True, help="result folder (one JSON per model and scale; resumable)")
    p.add_argument("--datasets", nargs="+", choices=list(DATASETS), default=list(DATASETS),
                   help="which scales, in this order (default: trivago then yelp)")
    p.add_argument("--models", nargs="+", default=None, help="registered names (default: all)")
    p.add_argument("--memory-cap-gib", type=float, default=22.0, help="address-space cap per model (default 22)")
    p.add_argument("--scale", type=float, default=1.0, help="size factor of the synthetic hypergraphs, (0, 1]")
    p.add_argument("--threads", type=int, default=1, help="torch threads in each subprocess (default 1)")
    p.add_argument("--timeout-s", type=float, default=3600.0, help="give up on one model after this long")
    p.add_argument("--lock", type=Path, default=None,
                   help="flock this file around each model's subprocess (one memory-heavy job at a time)")
    p.add_argument("--table", type=Path, default=None, help="rewrite this Markdown table after every point")
    p.add_argument("--set", dest="overrides", nargs="+", default=[], metavar="KEY=VALUE",
                   help="config overrides for every model, as hypergvl train --set (epochs is always 1)")
    p.add_argument("--retry-errors", action="store_true", help="rerun points that failed (default: keep them)")
    p.add_argument("--render-only", action="store_true",
                   help="print (and with --table write) the table of the points already under --out; run nothing")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if args.memory_cap_gib <= 0:
        p.error("--memory-cap-gib must be > 0")
    if not 0 < args.scale <= 1:
        p.error("--scale must be in (0, 1]")
    if args.threads < 1:
        p.error("--threads must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from hypergvl.models.nn import MODELS

    names = args.models or sorted(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"error: unknown model(s) {', '.join(unknown)}; valid: {', '.join(sorted(MODELS))}", file=sys.stderr)
        return 2
    out = args.out / f"scale-{args.scale:g}"  # points of different scales never mix
    if args.render_only:
        from hypergvl.models.study.common import iter_points

        wanted = {(DATASETS[d], m) for d in args.datasets for m in names}
        points = [p for p in iter_points([out]) if (p["dataset"], p["model"]) in wanted] if out.exists() else []
        text = render(points, memory_cap_gib=args.memory_cap_gib, scale=args.scale, threads=args.threads)
        if args.table is not None:
            write_table(points, args.table, memory_cap_gib=args.memory_cap_gib, scale=args.scale,
                        threads=args.threads)
        print(text, end="")
        return 0
    points = run(names, args.datasets, out, memory_cap_gib=args.memory_cap_gib, scale=args.scale,
                 threads=args.threads, timeout_s=args.timeout_s, lock=args.lock, table=args.table,
                 overrides=tuple(args.overrides), retry_errors=args.retry_errors, progress=not args.no_progress)
    print(render(points, memory_cap_gib=args.memory_cap_gib, scale=args.scale, threads=args.threads), end="")
    return 0 if all(p is not None and p["status"] != "error" for p in points) else 1


if __name__ == "__main__":
    sys.exit(main())
