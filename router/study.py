"""WiseHyGR's two studies (HyperGVL sec. 4, Figures 5 and 6): ``hypergvl router study in-domain|node-classification``.

**In-domain** (sec. 4 (1)): "We generate 1,000 problems per task to assess improvements by WiseHyGR in hypergraph
understanding and reasoning. As shown in Fig. 5, representations chosen by WiseHyGR consistently outperform the
baselines across all tasks". Fresh problems are built (``hypergvl build``) from ``--seed``, which must differ from
the seeds of the builds the router's PRM came from (read from its card; refused otherwise), and answered through the
harness with one sample per meta problem for each routing: the router, Rand, Top and, unless ``--no-oracle``, the
oracle of an exhaustive run over the same problems (35 samples per problem: an upper bound the paper does not
report). Output: ``in_domain.json`` (accuracy per task and policy) and ``in_domain.png`` (Figure 5-style bars).

**Out-of-domain** (sec. 4 (2), appendix G): zero-shot node classification on the HNN library's node datasets
(``hypergvl.router.nodeclf`` builds the prompts: a random walk of up to 40 nodes, the other nodes' known labels, the category
descriptions of ``hypergvl.router.categories``). The router picks the textual representation (and the visual one, rendered,
when the model takes images), as do Rand and Top; the model's answer is parsed with a tolerant category parser and
checked against the true label; 3 trials (fresh targets and walks each). Datasets whose files are absent are
skipped and listed. Output: ``samples.jsonl`` (resumable), ``node_classification.json`` and
``node_classification.png`` (Figure 6-style bars, mean and std over trials).
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import textwrap
from pathlib import Path
from typing import Sequence

import numpy as np

from hypergvl.atomic import atomic_path, write_json
from hypergvl.builder import BuildConfig, build
from hypergvl.cli import UserError
from hypergvl.evaluators import baselines  # noqa: F401 - registers baseline:*
from hypergvl.evaluators.adapters import Sample, make_adapter
from hypergvl.evaluators.harness import evaluate_model
from hypergvl.evaluators.routing import make_policy, policy_label
from hypergvl.evaluators.run_folder import samples
from hypergvl.provenance import provenance
from hypergvl.paper import PAPER_TASKS
from hypergvl.text import encode

from .categories import label_names
from .nodeclf import (NodeProblem, Structure, node_prompt, node_question, parse_category, problem_seed,
                      sample_problem)
from .prm import log_to_console

__all__ = ["in_domain", "node_classification", "main"]

logger = logging.getLogger(__name__)
NODE_DATASETS = ("cora-ca", "cora", "citeseer", "pubmed", "dblp-ca")


def router_seeds(router_dir: str) -> set[int]:
    """Build seeds of the datasets the router's PRM was made from (as far as its card records them)."""
    meta = Path(router_dir) / "wisehygr.json"
    if not meta.is_file():
        return set()
    runs = json.loads(meta.read_text()).get("prm", {}).get("runs", [])
    return {int(r["dataset_seed"]) for r in runs if r.get("dataset_seed") is not None}


def grouped_bars(path: Path, groups: Sequence[str], series: dict[str, Sequence[float]], title: str,
                 errors: dict[str, Sequence[float]] | None = None, ylabel: str = "Accuracy (%)") -> None:
    """A grouped bar chart (one group per task/dataset, one bar per policy), as Figures 5 and 6."""
    # lazy: matplotlib.pyplot 2.1 s; the Space imports this module: pyplot (Agg) only for a figure
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: pyplot 2.1 s; as matplotlib above

    n = len(series)
    width = 0.8 / max(n, 1)
    x = np.arange(len(groups))
    fig, ax = plt.subplots(figsize=(max(7.0, 0.9 * len(groups) + 2), 4.4), dpi=120)
    for i, (name, values) in enumerate(series.items()):
        err = (errors or {}).get(name)
        ax.bar(x + (i - (n - 1) / 2) * width, values, width, label=name, yerr=err, capsize=2 if err else 0)
    ax.set_xticks(x, groups, rotation=0 if len(groups) < 10 else 45)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 105)
    ax.set_title("\n".join(textwrap.wrap(title, 70)), fontsize=10)
    ax.legend(ncol=n, loc="upper center", bbox_to_anchor=(0.5, -0.12 if len(groups) < 10 else -0.22), frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)


# ================================================================================================ in-domain
def _takes_seed(model: str) -> bool:
    return model.startswith("baseline:profile")


def _model_spec(model: str, data: Path, seed: int) -> tuple[str, dict]:
    """The harness spec and options of one repeat: the profile test bed is told its build and its seed."""
    if _takes_seed(model):
        return model, {"dataset": str(data), "seed": seed}
    return model, {}


def _profile_file(model: str) -> str | None:
    parts = [x for x in model.split(":")[2:] if x and "=" not in x]
    return parts[0] if parts else None


def router_choices(run_dir: Path) -> dict:
    """task -> scale -> {"text+visual": count} of a routed run's samples."""
    out: dict = {}
    for _, r in samples(run_dir):
        per = out.setdefault(r["task"], {}).setdefault(r["scale"], {})
        key = f"{r['text_rep']}+{r['visual_rep']}"
        per[key] = per.get(key, 0) + 1
    return out


def in_domain(model: str, router_dir: str, out: Path, *, per_task: int = 1000, seed: int = 1000,
              tasks: Sequence[str] | None = None, oracle: bool = True, rand_seed: int = 0, batch_size: int = 8,
              model_options: dict | None = None, workers: int = 0, model_seeds: Sequence[int] = (0,),
              progress: bool = True) -> dict:
    """Build fresh problems, answer them under each routing, write ``in_domain.json`` and ``in_domain.png``.

    ``model_seeds``: the repeats of a stochastic model (``baseline:profile``: its draw seed; Rand's seed moves with
    it, ``rand:(rand_seed + k)``); every accuracy is reported as mean and standard deviation over them. For the
    profile test bed the policy ``profile`` (its best pair per task and scale, the expected ceiling) is added; the
    oracle of an exhaustive run knows each repeat's draw and so lies above it."""
    if seed in router_seeds(router_dir):
        raise UserError(f"--seed {seed} is a seed the router's PRM was built from; pick a disjoint one")
    seeds = [int(k) for k in model_seeds]
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise UserError("--model-seeds must be distinct non-negative integers")
    if len(seeds) > 1 and not _takes_seed(model):
        raise UserError(f"{model} takes no seed: give one --model-seeds value (repeats need a stochastic model)")
    out.mkdir(parents=True, exist_ok=True)
    data = out / "data"
    cfg = BuildConfig(out=data, per_task=per_task, seed=seed, tasks=tuple(tasks or PAPER_TASKS), workers=workers)
    build(cfg, progress=progress)
    task_list = list(cfg.tasks)
    runs: dict[str, list[dict]] = {}
    choices = None
    for k, s in enumerate(seeds):
        spec, opts = _model_spec(model, data, s)
        kw = dict(batch_size=batch_size, model_options={**(model_options or {}), **opts}, progress=progress)
        specs = {"router": f"router:{router_dir}", "rand": f"rand:{rand_seed + k}", "top": "top"}
        if _takes_seed(model):
            prof = _profile_file(model)
            specs["profile"] = f"profile:{prof}" if prof else "profile"
        if oracle:
            evaluate_model(str(data), spec, out / f"exhaustive-s{s}", **kw)
            specs["oracle"] = f"oracle:{out / f'exhaustive-s{s}'}"
        for key, pspec in specs.items():
            res = evaluate_model(str(data), spec, out / f"routed-{key}-s{s}", routing=pspec, **kw)
            runs.setdefault(key, []).append({"seed": s, "routing": res["selection"]["routing"],
                                             "num_samples": res["num_samples"],
                                             "accuracy": res["scores"]["accuracy"],
                                             "per_task": res["scores"]["per_task"]})
            if key == "router" and choices is None:
                choices = router_choices(out / f"routed-router-s{s}")

    def stat(values):
        return {"mean": float(np.mean(values)), "std": float(np.std(values))}

    results = {key: {"routing": rs[0]["routing"], "runs": rs, "accuracy": stat([r["accuracy"] for r in rs]),
                     "per_task": {t: stat([r["per_task"].get(t, float("nan")) for r in rs]) for t in task_list}}
               for key, rs in runs.items()}
    summary = {"model": model, "router": router_dir, "seed": seed, "per_task": per_task, "tasks": task_list,
               "model_seeds": seeds, "policies": results, "router_choices": choices,
               "provenance": provenance({"model": model, "router": router_dir, "per_task": per_task, "seed": seed,
                                         "tasks": task_list, "oracle": oracle, "rand_seed": rand_seed,
                                         "model_seeds": seeds}, seeds=[seed, *seeds])}
    write_json(out / "in_domain.json", summary, sort_keys=True)
    groups = task_list + ["All"]
    series = {policy_label(k): [v["per_task"][t]["mean"] for t in task_list] + [v["accuracy"]["mean"]]
              for k, v in results.items()}
    errors = {policy_label(k): [v["per_task"][t]["std"] for t in task_list] + [v["accuracy"]["std"]]
              for k, v in results.items()} if len(seeds) > 1 else None
    grouped_bars(out / "in_domain.png", groups, series,
                 f"In-domain routing: {model}, {per_task} fresh problems per task (seed {seed})"
                 + (f", mean and std over {len(seeds)} model seeds" if len(seeds) > 1 else ""), errors=errors)
    return summary


def choices_table(choices: dict) -> list[str]:
    """Markdown: the router's most frequent pair per task and scale, with its share."""
    lines = ["| task | scale | router's pair (share) |", "| --- | --- | --- |"]
    for task, per in choices.items():
        for scale in ("small", "medium", "large"):
            if scale in per:
                c = per[scale]
                top = sorted(c.items(), key=lambda kv: -kv[1])
                n = sum(c.values())
                lines.append(f"| {task} | {scale} | " + ", ".join(f"{k} ({100 * v / n:.0f}%)" for k, v in top[:2])
                             + " |")
    return lines


# ================================================================================================ node classification
def node_classification(model: str, router_dir: str, out: Path, *, datasets: Sequence[str] = NODE_DATASETS,
                        num_nodes: int = 1000, walk_nodes: int = 40, trials: int = 3, seed: int = 0,
                        raw_root: str | None = None, images: bool | None = None, rand_seed: int = 0,
                        batch_size: int = 8, model_options: dict | None = None, progress: bool = True) -> dict:
    """Zero-shot node classification under each routing (appendix G); writes JSON, PNG and the sample log."""
    from tqdm.auto import tqdm

    import hypergvl.models.datasets as md  # PyG and matplotlib (about 5 s): this study only
    from hypergvl.render import render

    if num_nodes < 1 or walk_nodes < 2 or trials < 1:
        raise UserError("need --num-nodes >= 1, --walk-nodes >= 2 and --trials >= 1")
    adapter = make_adapter(model, **(model_options or {}))
    if images is None:  # the baselines read only the prompt; other models take the rendered picture
        images = not model.startswith("baseline:") and getattr(adapter, "takes_images", True) is not False
    policies = {"router": make_policy(f"router:{router_dir}"), "rand": make_policy(f"rand:{rand_seed}"),
                "top": make_policy("top")}
    out.mkdir(parents=True, exist_ok=True)
    log = out / "samples.jsonl"
    done = {}
    if log.is_file():
        for line in log.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
                done[rec["id"]] = rec
            except (json.JSONDecodeError, KeyError):
                continue  # a line cut short by a crash is asked again
    skipped = {}
    acc: dict[str, dict[str, list[float]]] = {}
    with open(log, "a", encoding="utf-8") as f:
        for name in datasets:
            try:
                data = md.load(name, raw_root=raw_root, features="none", add_self_loops=False)
            except (OSError, ValueError, RuntimeError) as exc:
                skipped[name] = f"{type(exc).__name__}: {exc}"
                logger.warning("skipping %s: %s", name, skipped[name])
                continue
            structure = Structure.from_data(data)
            cats = label_names(name, data.y.tolist())
            names = [c.name for c in cats]
            eligible = structure.eligible()
            for trial in range(trials):
                rng = np.random.default_rng(problem_seed(seed, name, trial))
                targets = rng.choice(eligible, size=min(num_nodes, len(eligible)), replace=False)
                problems: list[NodeProblem] = [
                    sample_problem(structure, name, cats, int(t), walk_nodes, rng, f"{name}/{trial}/{i:05d}")
                    for i, t in enumerate(targets)]
                rows = [{"id": p.id, "task": "NC", "question": node_question(),
                         "text_ho_neigh": encode("ho_neigh", p.hypergraph), "hypergraph": p.hypergraph.to_json()}
                        for p in problems]
                for key, policy in policies.items():
                    choices = policy.choose(rows)
                    todo = [(p, c) for p, c in zip(problems, choices) if f"{p.id}/{key}" not in done]
                    bar = tqdm(total=len(problems), initial=len(problems) - len(todo), unit="node",
                               desc=f"{name} trial {trial} {key}", disable=None if progress else True)
                    for s in range(0, len(todo), batch_size):
                        chunk = todo[s:s + batch_size]
                        samples = [Sample(node_prompt(p, t), render(v, p.hypergraph) if images else None)
                                   for p, (t, v) in chunk]
                        for (p, (t, v)), resp in zip(chunk, adapter.generate(samples)):
                            parsed = parse_category(resp, names)
                            rec = {"id": f"{p.id}/{key}", "dataset": name, "trial": trial, "policy": policy.name,
                                   "text_rep": t, "visual_rep": v if images else None, "target": p.target,
                                   "num_nodes": p.hypergraph.num_vertices, "label": p.label, "response": resp,
                                   "parsed": parsed, "correct": parsed == p.label}
                            done[rec["id"]] = rec
                            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                        f.flush()
                        bar.update(len(chunk))
                    bar.close()
                    recs = [done[f"{p.id}/{key}"] for p in problems]
                    acc.setdefault(name, {}).setdefault(key, []).append(100.0 * np.mean([r["correct"] for r in recs]))
    if not acc:
        raise UserError(f"no node dataset could be loaded ({'; '.join(f'{k}: {v}' for k, v in skipped.items())})")
    summary = {"model": adapter.info().name, "router": router_dir, "num_nodes": num_nodes, "walk_nodes": walk_nodes,
               "trials": trials, "seed": seed, "images": images, "skipped": skipped,
               "node_content": "not available (the datasets ship bag-of-words features, no text); the prompt says so",
               "accuracy": {d: {k: {"mean": float(np.mean(v)), "std": float(np.std(v)), "trials": v}
                                for k, v in per.items()} for d, per in acc.items()}}
    write_json(out / "node_classification.json", summary, sort_keys=True)
    groups = list(acc)
    keys = list(policies)
    grouped_bars(out / "node_classification.png", groups,
                 {policy_label(k): [summary["accuracy"][d][k]["mean"] for d in groups] for k in keys},
                 f"Zero-shot node classification: {adapter.info().name} ({trials} trials x {num_nodes} nodes)",
                 errors={policy_label(k): [summary["accuracy"][d][k]["std"] for d in groups] for k in keys})
    return summary


# ================================================================================================ CLI
def _model_options(text: str | None) -> dict:
    if not text:
        return {}
    try:
        opts = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"--model-options must be a JSON object: {exc}") from None
    if not isinstance(opts, dict):
        raise UserError("--model-options must be a JSON object such as '{\"device\": \"cuda\"}'")
    return opts


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="hypergvl router study", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="study", required=True)
    for name in ("in-domain", "node-classification"):
        s = sub.add_parser(name)
        s.add_argument("--model", required=True, help="a harness model spec: hf:..., openai:..., baseline:...")
        s.add_argument("--router", required=True, help="a saved WiseHyGR folder")
        s.add_argument("--out", type=Path, default=Path(f"runs/study-{name}"), help="output folder (resumable)")
        s.add_argument("--batch-size", type=int, default=8)
        s.add_argument("--rand-seed", type=int, default=0, help="seed of the Rand policy (rand:SEED)")
        s.add_argument("--model-options", help="adapter options as JSON, e.g. '{\"device\": \"cuda\"}'")
        s.add_argument("--no-progress", action="store_true")
    s = sub.choices["in-domain"]
    s.add_argument("--per-task", type=int, default=1000, help="fresh problems per task (the paper: 1,000)")
    s.add_argument("--seed", type=int, default=1000, help="build seed, disjoint from the benchmark's (default 1000)")
    s.add_argument("--tasks", nargs="+", metavar="CODE")
    s.add_argument("--workers", type=int, default=0, help="build worker processes (default: one per core)")
    s.add_argument("--no-oracle", action="store_true", help="skip the exhaustive run the oracle needs (35x the cost)")
    s.add_argument("--model-seeds", nargs="+", type=int, default=[0], metavar="SEED",
                   help="repeats of a stochastic model (baseline:profile's draw seed; default 0); accuracies are "
                        "reported as mean ± std over them")
    s = sub.choices["node-classification"]
    s.add_argument("--datasets", nargs="+", default=list(NODE_DATASETS), metavar="NAME")
    s.add_argument("--num-nodes", type=int, default=1000, help="target nodes per dataset and trial (the paper: 1K)")
    s.add_argument("--walk-nodes", type=int, default=40, help="nodes collected by the random walk (the paper: 40)")
    s.add_argument("--trials", type=int, default=3)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--raw-root", help="node data folder (default $HYPERGVL_RAW_ROOT, else the upstream URLs), "
                                      "e.g. ../shared/data")
    s.add_argument("--images", choices=["auto", "yes", "no"], default="auto",
                   help="send the rendered visual representation (auto: yes unless the model is a baseline)")
    args = p.parse_args(argv)
    log_to_console()
    try:
        opts = _model_options(args.model_options)
        if args.study == "in-domain":
            s = in_domain(args.model, args.router, args.out, per_task=args.per_task, seed=args.seed, tasks=args.tasks,
                          oracle=not args.no_oracle, rand_seed=args.rand_seed, batch_size=args.batch_size,
                          model_options=opts, workers=args.workers, model_seeds=args.model_seeds,
                          progress=not args.no_progress)
            for k, v in s["policies"].items():
                print(f"{policy_label(k):>12}: {v['accuracy']['mean']:.2f} ± {v['accuracy']['std']:.2f}%  "
                      f"({v['routing']})")
            print("\n".join(choices_table(s["router_choices"])))
        else:
            images = {"auto": None, "yes": True, "no": False}[args.images]
            s = node_classification(args.model, args.router, args.out, datasets=args.datasets,
                                    num_nodes=args.num_nodes, walk_nodes=args.walk_nodes, trials=args.trials,
                                    seed=args.seed, raw_root=args.raw_root, images=images, rand_seed=args.rand_seed,
                                    batch_size=args.batch_size, model_options=opts, progress=not args.no_progress)
            for d, per in s["accuracy"].items():
                print(d + ": " + ", ".join(f"{policy_label(k)} {v['mean']:.2f} ± {v['std']:.2f}"
                                            for k, v in per.items()))
            for d, why in s["skipped"].items():
                print(f"skipped {d}: {why}")
        print(f"wrote {args.out}")
    except (UserError, ValueError) as exc:
        print(f"hypergvl router study: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
