"""Does ``hypergvl router train --prm prm --out router`` (no other flag) learn a model it has never seen?

HyperGVL sec. 4: "Treating as a classification task, we use the PRM dataset to train a DeBERTaV3-base ... router
named WiseHyGR, with the training and validating split in a ratio of 8:2 ... the label being the optimal
representation combination." The paper gives no training settings, so the defaults are this project's; this
script measures them on the routing test bed (``baseline:profile``, docs/router.md): exhaustive runs of a
simulated model on ``--src`` (``--repeats`` seeds of one stochastic model), the PRM from them, the router trained
with the defaults (plus ``--set key=value`` overrides of ``TrainConfig``), then routed runs on ``--fresh``
problems of another seed: the router, Top (N-Set + Enc-Hy), Rand (``rand:0``) and the profile's best pair per
task and scale (the ceiling of any policy that sees only the problem). Accuracies are the simulated model's
answers on the fresh problems at ``--model-seed``. Resumable step by step (every run folder resumes, training
resumes from its checkpoint); the results JSON carries its provenance.

    hypergvl build --out src --per-task 30 --seed 101 && hypergvl build --out fresh --per-task 20 --seed 202
    .venv/bin/python benchmarks/router_defaults.py --src src --fresh fresh --profile shuffled:1 --work rd-s1 \\
        --out benchmarks/results/router_defaults/shuffled1.json

``--profile`` is ``default`` (the shipped table), ``shuffled:SEED`` (``router.testbed.shuffled_profile``) or a
profile JSON file.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path


def profile_file(spec: str, work: Path) -> Path:
    """The profile JSON that ``spec`` names (written into ``work`` for default and shuffled:SEED)."""
    from hypergvl.atomic import write_json
    from hypergvl.router.testbed import default_profile, shuffled_profile

    if spec == "default":
        table = default_profile()
    elif spec.startswith("shuffled:"):
        table = shuffled_profile(int(spec.split(":", 1)[1]))
    else:
        return Path(spec)
    path = work / "profile.json"
    write_json(path, table, indent=1, sort_keys=True)
    return path


def parse_sets(items) -> dict:
    """``key=value`` overrides of ``TrainConfig`` fields, typed by the field's annotation (``none`` for an optional
    one)."""
    import typing

    from hypergvl.router.train import TrainConfig

    hints = typing.get_type_hints(TrainConfig)
    out = {}
    for item in items:
        key, _, value = item.partition("=")
        if key not in hints or key in ("prm", "out"):
            raise SystemExit(f"--set {item}: not a TrainConfig setting (one of {', '.join(sorted(hints))})")
        kinds = [t for t in typing.get_args(hints[key]) or (hints[key],) if t is not type(None)]
        if value.lower() == "none" and len(kinds) < len(typing.get_args(hints[key]) or (hints[key],)):
            out[key] = None
        elif kinds[0] is bool:
            out[key] = value.lower() in ("1", "true", "yes")
        else:
            out[key] = kinds[0](value)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--src", required=True, type=Path, help="build whose exhaustive runs make the PRM")
    p.add_argument("--fresh", required=True, type=Path, help="build of held-out problems (another seed)")
    p.add_argument("--profile", default="default", help="default | shuffled:SEED | FILE")
    p.add_argument("--repeats", type=int, default=3, help="exhaustive runs (model seeds 0..N-1) averaged in the PRM")
    p.add_argument("--model-seed", type=int, default=7, help="the simulated model's seed on the fresh problems")
    p.add_argument("--work", required=True, type=Path, help="folder for the runs, PRM and router (resumable)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a TrainConfig default")
    p.add_argument("--out", type=Path, help="write the results JSON here")
    args = p.parse_args(argv)

    from hypergvl.atomic import write_json
    from hypergvl.evaluators.harness import evaluate_model
    from hypergvl.provenance import provenance
    from hypergvl.router.prm import PRMConfig, build_prm
    from hypergvl.router.train import TrainConfig, train

    overrides = parse_sets(args.set)
    args.work.mkdir(parents=True, exist_ok=True)
    prof = profile_file(args.profile, args.work)
    runs = []
    for s in range(args.repeats):
        runs.append(args.work / f"ex{s}")
        evaluate_model(str(args.src), f"baseline:profile:{prof}:dataset={args.src}:seed={s}", runs[-1],
                       batch_size=256, progress=False)
    if not (args.work / "prm" / "prm.json").is_file():
        build_prm(PRMConfig(tuple(map(str, runs)), str(args.work / "prm")), progress=False)
    cfg = TrainConfig(prm=str(args.work / "prm"), out=str(args.work / "router"), **overrides)
    t0 = time.perf_counter()
    state = train(cfg, progress=False)
    train_s = time.perf_counter() - t0
    policies = {"router": f"router:{args.work / 'router'}", "top": "top", "rand": "rand:0",
                "profile best": f"profile:{prof}"}
    acc, chosen = {}, {}
    for key, spec in policies.items():
        folder = args.work / f"routed-{key.replace(' ', '-')}"
        res = evaluate_model(str(args.fresh), f"baseline:profile:{prof}:dataset={args.fresh}:seed={args.model_seed}",
                             folder, routing=spec, batch_size=256, progress=False)
        acc[key] = res["scores"]["accuracy"]
        pairs = [f"{r['text_rep']}+{r['visual_rep']}" for r in map(json.loads, (folder / "samples.jsonl").open())]
        chosen[key] = len(set(pairs))
    result = {"profile": args.profile, "accuracy": acc, "distinct_pairs": chosen,
              "router_minus_top": acc["router"] - acc["top"], "train_config": dataclasses.asdict(cfg),
              "train_seconds": round(train_s, 1), "best_epoch": state["best"],
              "provenance": provenance(dataclasses.asdict(cfg))}
    print(json.dumps({k: result[k] for k in ("profile", "accuracy", "distinct_pairs", "router_minus_top",
                                            "train_seconds")}, indent=1))
    if args.out:
        write_json(args.out, result, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
