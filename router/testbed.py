"""The routing test bed's default profile: a model whose accuracy depends on (task, scale, text, visual).

``baseline:profile[:FILE]`` (:mod:`hypergvl.evaluators.baselines`) answers a sample right with the probability its profile
gives for the sample's task, scale and representation pair. The shipped default
(``evaluators/profiles/default.json``) is written by :func:`default_profile` (``hypergvl router testbed``) from
HyperGVL's Table 4 and the size trend of its Figure 4, as follows (all in logit space, ``σ`` the logistic function):

    p(task, s, t, v) = σ( L_task + γ (a_task,t - mean_t a_task) + γ (b_task,v - mean_v b_task)
                          + size_kind(task)[s] + size_text[t][s] + size_visual[v][s] )

- ``a_task,t = logit(Table 4 accuracy of text representation t on task)`` and ``b_task,v`` the same for visual
  representation v (Table 4: "The results for each textual representation are averaged over all LVLMs and visual
  representations, while the results for each visual representation are averaged over all LVLMs and textual
  representations"); ``L_task`` the logit of the task's mean over the seven text rows.
- ``γ = 2.5`` sharpens those averages: Table 4 averages 12 LVLMs and, per row, all partner representations, which
  flattens the preferences of any one model; a single model's gaps are larger (Observation 10: "Textual encodings
  yield a much wider performance range").
- ``size_kind``: Figure 4 / Observation 14: "As the hypergraph size increases, the performance on synthetic
  hypergraphs always deteriorates. This trend is more pronounced for understanding tasks." Understanding tasks
  (Level 1-2) get +0.6 / 0 / -0.6 logits at small / medium / large, reasoning tasks +0.3 / 0 / -0.3. Figure 4's bar
  heights are not in the paper's text, so these magnitudes are this project's reading of the trend, not copied
  numbers.
- ``size_text`` and ``size_visual`` (this project's assumption; the paper reports no representation x size table):
  the matrix encodings lose 0.5 logits per size step (Observation 13: "the sparsity and indexing burdens of matrix
  representations hinder reliable extraction", a burden that grows with n x m); Enc-Hy's enclosures overlap more as
  the hypergraph grows (appendix D: "Layouts are optimized for small-to-medium hypergraphs (5-20 vertices) to
  maintain visual clarity"): +0.4 at small, -0.4 at large, while Bi-Inc's separated layers gain +0.2 per step;
  HO-Inc, which names the hyperedge of every vertex pair, gains 0.2 per step (Observation 12).

So the best pair changes with the task (Table 4's per-task winners differ: Adj-Mat on VC, HO-Neigh on HEC and DVC,
LO-Inc on ONe, Cli-Exp visually on Ne, DVC, OSP, ISM) and with the scale (Enc-Hy and the matrices fall behind on
large hypergraphs), while Top (N-Set + Enc-Hy, Table 4's best text and visual columns on average) is good almost
everywhere and best in few cells. :func:`summarise` prints how often.

The profile is the paper's: its tasks and pairs are Table 4's (:data:`hypergvl.paper.PAPER_TASKS`, the paper's 7 x 5
representations), whatever else is registered. A task or representation registered beyond them has no row or
column in it: ``baseline:profile`` answers such a sample as the profile's average model would (the mean p over the
row's listed pairs, :meth:`hypergvl.evaluators.baselines.Profile.p`) and the ``profile`` routing policy never
chooses it (it is "not routed").
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Sequence

__all__ = ["TABLE4_TEXT", "TABLE4_VISUAL", "GAMMA", "default_profile", "shuffled_profile", "summarise", "main"]

from hypergvl.atomic import write_json
from hypergvl.evaluators.baselines import PROFILE_FORMAT, PROFILE_SCALES as SCALES, load_profile
from hypergvl.paper import PAPER_TASKS as TASKS, PAPER_UNDERSTANDING as UNDERSTANDING

#: HyperGVL Table 4, the textual representation rows (accuracy %, in the paper's task order, :data:`TASKS`)
TABLE4_TEXT = {
    "lo_inc": (75.02, 23.45, 40.53, 17.19, 16.94, 50.12, 13.86, 11.71, 50.34, 24.11, 10.96, 0.79),
    "n_pair": (75.00, 14.90, 32.92, 18.52, 17.27, 33.64, 17.15, 13.43, 50.54, 19.12, 15.26, 0.80),
    "adj_mat": (76.28, 21.79, 25.81, 18.87, 18.38, 18.94, 13.74, 10.18, 50.53, 24.80, 10.11, 0.78),
    "ho_neigh": (73.28, 67.03, 44.20, 48.65, 53.19, 30.43, 30.45, 23.84, 51.72, 37.29, 21.48, 2.03),
    "ho_inc": (73.82, 61.37, 46.16, 38.53, 40.36, 40.06, 27.44, 21.68, 51.05, 39.95, 22.59, 2.51),
    "inc_mat": (63.80, 40.42, 27.78, 36.59, 26.64, 10.05, 19.80, 17.15, 50.05, 30.29, 16.65, 1.58),
    "n_set": (70.89, 64.74, 46.55, 35.40, 54.02, 33.09, 32.70, 24.72, 49.67, 39.65, 21.92, 1.85),
}
#: HyperGVL Table 4, the visual representation rows
TABLE4_VISUAL = {
    "enc_hy": (73.11, 45.23, 37.92, 31.07, 33.48, 31.29, 22.26, 17.76, 55.72, 31.26, 19.61, 1.53),
    "bi_inc": (70.25, 40.95, 38.08, 30.21, 32.56, 31.02, 21.67, 17.49, 47.36, 30.43, 16.58, 1.51),
    "sh_inc": (74.43, 41.57, 37.20, 29.73, 31.63, 30.74, 21.88, 17.28, 47.58, 29.77, 16.30, 1.39),
    "st_inc": (74.72, 42.00, 37.32, 30.36, 32.04, 30.45, 22.03, 17.37, 46.96, 30.69, 16.43, 1.41),
    "cli_exp": (70.39, 40.04, 38.00, 31.31, 32.29, 31.02, 22.98, 17.76, 56.17, 31.15, 18.06, 1.55),
}
GAMMA = 2.5
SIZE_KIND = {"understanding": (0.6, 0.0, -0.6), "reasoning": (0.3, 0.0, -0.3)}
SIZE_TEXT = {"adj_mat": (0.0, -0.5, -1.0), "inc_mat": (0.0, -0.5, -1.0), "ho_inc": (0.0, 0.2, 0.4)}
SIZE_VISUAL = {"enc_hy": (0.4, 0.0, -0.4), "bi_inc": (0.0, 0.2, 0.4)}


def _logit(pct: float) -> float:
    p = pct / 100.0
    return math.log(p / (1 - p))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def default_profile() -> dict:
    """The default profile table (the JSON shipped as ``evaluators/profiles/default.json``)."""
    table = {}
    for k, task in enumerate(TASKS):
        a = {t: _logit(v[k]) for t, v in TABLE4_TEXT.items()}
        b = {v: _logit(x[k]) for v, x in TABLE4_VISUAL.items()}
        base = _logit(sum(v[k] for v in TABLE4_TEXT.values()) / len(TABLE4_TEXT))
        ma, mb = sum(a.values()) / len(a), sum(b.values()) / len(b)
        kind = SIZE_KIND["understanding" if task in UNDERSTANDING else "reasoning"]
        table[task] = {}
        for i, s in enumerate(SCALES):
            table[task][s] = {
                f"{t}+{v}": round(_sigmoid(base + GAMMA * (a[t] - ma) + GAMMA * (b[v] - mb) + kind[i]
                                           + SIZE_TEXT.get(t, (0.0,) * 3)[i] + SIZE_VISUAL.get(v, (0.0,) * 3)[i]), 4)
                for t in TABLE4_TEXT for v in TABLE4_VISUAL}
    return {"format": PROFILE_FORMAT, "name": "default",
            "description": "HyperGVL Table 4 (text and visual rows per task) sharpened by gamma=2.5 in logit space, "
                           "Figure 4's size trend, and this project's representation x size assumptions "
                           "(router/testbed.py states them)",
            "p": table}


def shuffled_profile(seed: int = 0) -> dict:
    """A profile whose preferences differ from the default one's and depend on the task and the scale: to check
    that a router learns a model it has never seen (not the default table's pattern, nor Top).

    Per task, one best pair for small and medium hypergraphs and another for large ones, drawn with ``seed``
    among the pairs that are neither Top (N-Set + Enc-Hy) nor the default profile's best for that cell: p = 0.9.
    Top is at 0.5 everywhere (a fair favourite, best nowhere); every other pair draws p in [0.1, 0.4)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    pairs = [f"{t}+{v}" for t in TABLE4_TEXT for v in TABLE4_VISUAL]
    top = "n_set+enc_hy"
    default = default_profile()["p"]
    table = {}
    for task in TASKS:
        avoid = {top} | {max(row, key=row.get) for row in default[task].values()}
        small, large = rng.choice(sorted(set(pairs) - avoid), size=2, replace=False)
        table[task] = {}
        for s in SCALES:
            row = {pair: round(float(x), 4) for pair, x in zip(pairs, rng.uniform(0.1, 0.4, len(pairs)))}
            row[top] = 0.5
            row[str(large if s == "large" else small)] = 0.9
            table[task][s] = row
    return {"format": PROFILE_FORMAT, "name": f"shuffled{seed}",
            "description": f"router/testbed.py shuffled_profile(seed={seed}): per task a best pair at 0.9 for small "
                           "and medium hypergraphs and another for large ones, neither Top nor the default "
                           "profile's best; Top at 0.5; the rest uniform in [0.1, 0.4)",
            "p": table}


def summarise(profile: dict) -> list[str]:
    """Per (task, scale): the best pair, its p, Top's p (N-Set + Enc-Hy), the mean p (Rand)."""
    lines = ["| task | scale | best pair | p best | p Top | p Rand |", "| --- | --- | --- | --- | --- | --- |"]
    for task, per in profile["p"].items():
        for s, row in per.items():
            best = max(row, key=row.get)
            lines.append(f"| {task} | {s} | {best} | {row[best]:.3f} | {row['n_set+enc_hy']:.3f} | "
                         f"{sum(row.values()) / len(row):.3f} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="hypergvl router testbed", description="write or summarise the default "
                                "profile of baseline:profile (HyperGVL Table 4 + Figure 4, see the module docstring)")
    p.add_argument("--out", type=Path, help="write the profile here (JSON)")
    p.add_argument("--shuffled", type=int, metavar="SEED",
                   help="write (and summarise) a shuffled profile instead of the default one: per task a best pair "
                        "for small/medium and another for large hypergraphs, neither Top nor the default's best")
    p.add_argument("--summary", help="print best / Top / Rand per task and scale of this profile (default: the "
                                     "default profile)", nargs="?", const="")
    args = p.parse_args(argv)
    prof = default_profile() if args.shuffled is None else shuffled_profile(args.shuffled)
    if args.out:
        write_json(args.out, prof, indent=1, sort_keys=True)
        print(f"wrote {args.out}")
    if args.summary is not None:
        if args.summary:
            prof = load_profile(args.summary).to_dict()
        print("\n".join(summarise(prof)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
