"""Is our Bail accuracy gap (Table A8) in our model code? DHG-Bench's own model classes and ours, trained on our
Bail data with the same split, config, optimiser, epochs and selection rule, beside the paper's Table A8 accuracy.

Why (docs/studies.md, the paragraph starting "With the reference configs HGNN gets 80.08 on Bail"): 10 of 15 of our
Bail accuracies miss the paper (HGNN 80.08 against 91.02, HyperGCN 85.09 against 94.72, ...), while MLP and German
pass. Our Bail files are HyperGCL's features with HyperGCL's hypergraph rule (``benchmarks/fair_hypergraph.py``);
DHG-Bench reads its own ``data.zip``, which is not reachable offline. If the reference's own class, given our Bail
data, lands near our number, the gap is in the data or the pipeline behind the paper, not in our model code; if it
lands near the paper, the gap is ours.

What is the same on both sides, per model and seed:

* data: ``hypergvl.models.study.common.load_node_dataset(dataset, raw_root)``, exactly what the fairness study
  (``hypergvl.models.study.fairness``) trains on: HyperGCL's ``features.pickle`` as stored (no normalisation by
  either side; Bail's 18 columns lie in [-1, 1], the sensitive attribute is column 0 and stays in the features),
  ``labels.pickle``, ``hypergraph.pickle`` plus a singleton hyperedge for every node lacking one (DHG-Bench's
  ``Add_Self_Loops``, which ``set_task_args`` turns on for node classification). The reference receives that
  hypergraph through ``benchmarks/dhgbench_reference.py``'s ``build_dhgbench``, whose ``data_processing`` then finds
  every node already in a singleton and adds none (printed: its hyperedge count and whether its features equal
  ours);
* split: our task's split of the seed (``NodeClassification.make_split``: random 50/25/25), used for both;
* hyperparameters: our resolved config for (model, node, dataset) (``models/configs/<Model>.yaml``, which
  transcribes DHG-Bench's ``<dataset>`` entries): hidden, layers, dropout, lr, weight decay overlaid on the
  reference's args by ``build_dhgbench``; epochs from the same config for both. DHG-Bench's wheel (0.1.2) ships only
  ``default``/``cora`` yaml entries; its per-dataset entries came later (repository commit ``27624d0``, "update
  config yamls"). With ``--yamls DIR`` (a folder of ``config_<method>.yaml`` files from the repository, e.g.
  ``git archive 1776e93 dhgbench/lib_yamls/node_yamls``) the reference's args get that file's ``<dataset>`` entry
  over the wheel's cora entry, so its model-specific keys (HyperND's ``HyperND_ord``/``restart_alpha``, UniGCNII's
  ``lamda``, HCHA's ``HCHA_symdegnorm``, ...) are the dataset's; without it they are the cora entry's (printed).
  Then our general values are overlaid as above; the printed "yaml vs ours" line names any general key where the
  repository's entry and our config disagree;
* optimiser and selection: ``torch.optim.Adam(lr, weight_decay)`` of our config for the reference (its trainer,
  ``train_agent.semi_node_cls_training``, builds the same, except for UniGCNII: param groups with weight decay 0.01
  on the convolutions and 5e-4 elsewhere at lr 0.01, which our UniGCNII config approximates with lr 0.01 and weight
  decay 5e-4, used here for both); our trainer's Adam (``make_optimizer``, fused, the same update). Full-batch
  epochs, NLL of log-softmax on the training nodes, test accuracy of the eval-mode model at the last epoch: the
  fairness study's rule (node classification ``select: last``) and DHG-Bench's (``early_stop=False``, "the
  last-epoch model is evaluated", ../shared/reference/dhgbench-models.md, P3).

Ours is trained by ``hypergvl.models.trainer.run_experiment`` with the loaded data and ``seeds=[seed]``, the exact
call the fairness study makes (into a temporary folder), so its numbers are the study's for that seed.

What stands in: DHG-Bench's wheel imports ``torch_scatter``, ``torch_sparse`` and ``dask``, which have no build for
this torch; ``benchmarks/_dhgbench_shim.py`` puts torch's own scatter/sparse ops in their place (same values, see
its docstring). Known differences of function between a reference class and ours are those the copied-weights
check of ``benchmarks/epoch_time.py`` (``benchmarks/weight_copy.py``) reports (e.g. HyperND: ours diffuses the
training labels with the features, as the HyperND paper does; the reference diffuses the features only).
Randomness (initial weights, dropout draws, HyperGCN's projection) is drawn by each side from the seed, not shared.

    HYPERGVL_RAW_ROOT=$(realpath ../shared/data) HYPERGVL_DHGBENCH=/tmp/dhgbench_wheel \\
      .venv/bin/python benchmarks/fairness_reference.py --models HGNN HyperGCN --seeds 0 1 2 \\
      --yamls /tmp/dhgbench_yamls/dhgbench/lib_yamls/node_yamls --json /tmp/fairness_reference.json

Needs DHG-Bench's wheel (see ``benchmarks/dhgbench_reference.py``: ``--dhgbench`` or ``$HYPERGVL_DHGBENCH``).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dhgbench_reference as DR  # noqa: E402
import epoch_time as ET  # noqa: E402

DEFAULT_MODELS = ("HGNN", "HyperGCN", "HyperND", "HCHA", "UniGCNII")


#: ``--features``: what both sides receive as node features.
FEATURES = ("stored", "unit")


def rescale(x, features: str):
    """``x`` as ``--features`` says: ``stored`` unchanged; ``unit`` each column mapped affinely onto [0, 1] (a
    constant column to 0). Bail's stored columns are NIFTY's ``feature_norm`` output in [-1, 1] (the sensitive
    column raw 0/1), so ``unit`` is (x + 1) / 2 there: the features carry the same information on another scale,
    which isolates what the scale alone does to a model (dropout zeroes a feature: a value in the middle of a
    [-1, 1] column, the bottom of a [0, 1] one)."""
    if features == "stored":
        return x
    import torch

    x = x.to_dense() if x.layout != torch.strided else x
    low, high = x.min(0).values, x.max(0).values
    span = torch.where(high > low, high - low, torch.ones_like(high))
    return (x - low) / span


def reference_entry(yamls: Path | None, name: str, dataset: str) -> dict | None:
    """The ``dataset`` entry of DHG-Bench's ``config_<method>.yaml`` under ``yamls`` (None when absent)."""
    if yamls is None:
        return None
    import yaml

    path = Path(yamls) / f"config_{DR.DHGBENCH_METHOD[name].lower()}.yaml"
    if not path.is_file():
        return None
    return (yaml.safe_load(path.read_text()) or {}).get(dataset)


@contextlib.contextmanager
def dataset_config(name: str, dataset: str, entry: dict | None, overrides: list[str] = ()):
    """While open, ``DR.build_dhgbench`` overlays our ``dataset`` config (not Cora's) and, where ``entry`` is given,
    reads DHG-Bench's ``dataset`` yaml entry over the wheel's cora entry (``method_config`` is looked up in its
    module at every call of ``build_dhgbench``, ``our_config`` in ``dhgbench_reference``'s globals)."""
    import dhgbench.parameter_parser as pp
    from hypergvl.models.config import resolve_config

    saved = DR.our_config, pp.method_config
    wheel_method_config = pp.method_config

    def method_config(args):
        args = wheel_method_config(args)
        if entry:
            pp.update_from_dict(args, entry)
        return args

    DR.our_config = lambda model: resolve_config(model, "node", dataset, None, list(overrides))
    pp.method_config = method_config
    try:
        yield
    finally:
        DR.our_config, pp.method_config = saved


def accuracy_and_gaps(logits, y, sensitive, idx) -> dict:
    """Test accuracy, ΔDP and ΔEO in percent (``hypergvl.models.tasks.fairness.fairness_metrics``)."""
    from hypergvl.models.tasks.fairness import fairness_metrics

    pred = logits.argmax(-1).cpu().numpy()[idx]
    return fairness_metrics(pred, y.cpu().numpy()[idx], sensitive[idx])


def train_reference(name: str, dataset: str, data, split: dict, seed: int, entry: dict | None, cfg,
                    overrides: list[str] = ()) -> dict:
    """DHG-Bench's class for ``name`` on ``data`` for ``cfg.trainer.epochs`` epochs; the last epoch is scored."""
    import torch

    x = data.x.to_dense() if data.x.layout != torch.strided else data.x
    y = torch.as_tensor(data.y).long().view(-1)
    t0 = time.perf_counter()
    with dataset_config(name, dataset, entry, overrides):
        model, db, ref_args = DR.build_dhgbench(name, x, y, data.hyperedge_index, int(data.num_hyperedges), seed)
    prep_s = time.perf_counter() - t0
    pos_weight = None
    if ref_args.method == "HJRL":  # train_agent: (N^2 - nnz) / nnz
        h = db.H_ini
        pos_weight = float(h.shape[0] * h.shape[0] - h.sum()) / h.sum()
    train = split["train"]
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.trainer.lr, weight_decay=cfg.trainer.weight_decay)
    torch.manual_seed(seed)
    t0 = time.perf_counter()
    for _ in range(cfg.trainer.epochs):
        DR.dhgbench_epoch(model, optimizer, db, ref_args, train, pos_weight)
    train_s = time.perf_counter() - t0
    model.eval()
    with torch.no_grad():
        out = DR.dhgbench_logits(model, db, ref_args)
        out = out[0] if isinstance(out, tuple) else out
    sens = data.sensitive.view(-1).numpy()
    hyperedges = int(db.hyperedge_index[1].unique().numel())
    return {"test": accuracy_and_gaps(out, y, sens, split["test"].numpy()),
            "val": accuracy_and_gaps(out, y, sens, split["val"].numpy()),
            "prep_s": prep_s, "train_s": train_s,
            "inputs": {"nodes": int(db.x.shape[0]), "hyperedges": hyperedges,
                       "incidences": int(db.hyperedge_index.shape[1]),
                       "singletons_added": hyperedges - int(data.num_hyperedges),
                       "features_equal_ours": bool(torch.equal(db.x.float(), x.float())),
                       "normtype": getattr(ref_args, "normtype", None)},
            "args": {k: getattr(ref_args, k) for k in ("lr", "wd", "MLP_hidden", "All_num_layers", "MLP_num_layers",
                                                       "dropout", "epochs") if hasattr(ref_args, k)}}


def train_ours(name: str, dataset: str, data, seed: int, workdir: Path, overrides: list[str] = ()) -> dict:
    """The fairness study's own call for one seed (``run_experiment`` with the loaded data), with ``--set``'s
    ``overrides``."""
    from hypergvl.models.trainer import run_experiment

    t0 = time.perf_counter()
    summary = run_experiment(name, dataset, "node", out=workdir / f"{name}-{seed}", runs=1, seeds=[seed], data=data,
                             resume=False, progress=False, overrides=list(overrides))
    run = summary["runs"][0]
    return {"test": run["metrics"]["test"], "val": run["metrics"]["val"], "selected_epoch": run["selected_epoch"],
            "train_s": time.perf_counter() - t0}


def yaml_vs_ours(entry: dict | None, cfg) -> str:
    """The general keys where DHG-Bench's yaml entry and our resolved config disagree."""
    if not entry:
        return "no dataset entry given (--yamls): the reference's model-specific keys are its cora entry's"
    pairs = {"MLP_hidden": cfg.trainer.hidden, "dropout": cfg.trainer.dropout, "lr": cfg.trainer.lr,
             "wd": cfg.trainer.weight_decay, "epochs": cfg.trainer.epochs}
    layers = entry.get("All_num_layers", entry.get("MLP_num_layers"))
    diffs = [f"{k} {entry[k]} vs {v}" for k, v in pairs.items() if k in entry and not math.isclose(float(entry[k]),
                                                                                                     float(v))]
    if layers is not None and int(layers) != cfg.trainer.num_layers:
        diffs.append(f"layers {layers} vs {cfg.trainer.num_layers}")
    return "none" if not diffs else "; ".join(diffs)


def render(dataset: str, results: list[dict]) -> str:
    header = ("| model | seed | reference class acc | ours acc | reference ΔDP / ΔEO | ours ΔDP / ΔEO | "
              f"paper Table A8 {dataset} acc |")
    lines = [header, "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        paper = r["paper"]
        features = [] if r.get("features", "stored") == "stored" else [f"{r['features']} features"]
        notes = features + list(r.get("set", []))
        model = f"{r['model']} ({', '.join(notes)})" if notes else r["model"]
        paper_s = f"{paper[0]:.2f} ± {paper[1]:.2f}" if paper else "-"
        if "error" in r:
            lines.append(f"| {model} | - | error: {r['error']} | - | - | - | {paper_s} |")
            continue
        for s in r["seeds"]:
            ref, ours = s.get("reference"), s.get("ours")
            ra = f"{ref['test']['accuracy']:.2f}" if ref and "test" in ref else f"error: {ref.get('error')}"
            oa = (f"{ours['test']['accuracy']:.2f}" if ours and "test" in ours
                  else f"error: {ours.get('error')}" if ours else "skipped")
            rg = (f"{ref['test']['delta_dp']:.2f} / {ref['test']['delta_eo']:.2f}" if ref and "test" in ref else "-")
            og = (f"{ours['test']['delta_dp']:.2f} / {ours['test']['delta_eo']:.2f}" if ours and "test" in ours
                  else "-")
            lines.append(f"| {model} | {s['seed']} | {ra} | {oa} | {rg} | {og} | |")
        ref_acc = [s["reference"]["test"]["accuracy"] for s in r["seeds"] if "test" in s.get("reference", {})]
        our_acc = [s["ours"]["test"]["accuracy"] for s in r["seeds"] if "test" in s.get("ours", {})]
        lines.append(f"| **{model}** | mean ± std | **{DR.mean_std(ref_acc)}** | **{DR.mean_std(our_acc)}** | | | "
                     f"{paper_s} |")
    return "\n".join(lines)


def merged(docs: list[dict]) -> list[dict]:
    """The results of several ``--json`` outputs, one per (model, features, ``--set``), their seeds in order: runs
    of one comparison split over processes read as one table block."""
    rows: dict[tuple, dict] = {}
    for doc in docs:
        for r in doc["results"]:
            r = dict(r, features=doc.get("features", "stored"))
            key = (r["model"], r["features"], tuple(r.get("set", [])))
            if key in rows:
                rows[key]["seeds"] = sorted(rows[key]["seeds"] + r["seeds"], key=lambda s: s["seed"])
            else:
                rows[key] = r
    return list(rows.values())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS))
    p.add_argument("--dataset", default="bail", choices=["german", "bail", "credit"])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--raw-root", type=Path, default=ET.default_raw_root())
    p.add_argument("--dhgbench", type=Path, default=DR.default_dhgbench())
    p.add_argument("--yamls", type=Path, default=None,
                   help="folder of DHG-Bench's node config_<method>.yaml files holding a <dataset> entry "
                        "(the repository's dhgbench/lib_yamls/node_yamls; the wheel has none)")
    p.add_argument("--skip-ours", action="store_true", help="train the reference class only")
    p.add_argument("--features", choices=FEATURES, default="stored",
                   help="stored: the features as the files hold them; unit: each column mapped affinely onto [0, 1] "
                        "(min to 0, max to 1: the same information, another scale), given to both sides")
    p.add_argument("--set", nargs="+", default=[], metavar="KEY=VALUE",
                   help="config overrides, as `hypergvl train --set` takes them: trainer and task keys reach both "
                        "sides, model keys ours only (e.g. the reference-behaviour switch model.expansion=isolated, "
                        "under which our LEGCN computes the wheel's function)")
    p.add_argument("--json", type=Path, default=None, help="write the results here")
    p.add_argument("--render", type=Path, nargs="+", default=None, metavar="JSON",
                   help="print the Markdown table of earlier --json outputs (concatenated) and exit")
    args = p.parse_args(argv)
    if args.render:
        docs = [json.loads(path.read_text()) for path in args.render]
        print(render(docs[0]["dataset"], merged(docs)))
        return 0
    DR.check_methods(p, args.models)
    shimmed = DR.import_dhgbench(args.dhgbench)  # exits with the install command when absent
    from hypergvl.provenance import provenance

    started = provenance(seeds=args.seeds)  # the code that runs: HEAD may move during a long comparison
    import torch
    from hypergvl.models.study.common import load_node_dataset
    from hypergvl.models.study.paper import paper_value
    from hypergvl.models.tasks.node import NodeClassification
    from hypergvl.models.config import resolve_config

    torch.set_num_threads(args.threads)
    data, info = load_node_dataset(args.dataset, str(args.raw_root))
    data.x = x = rescale(data.x, args.features)
    print(f"{args.dataset}: {info['nodes']} nodes, {info['hyperedges']} hyperedges after the singleton hyperedges "
          f"(self loops) the protocol adds ({info['incidences']} incidences), {info['features']} features "
          f"({x.dtype}, range [{float(x.min()):g}, {float(x.max()):g}], features {args.features}: no other "
          "normalisation on either side), "
          f"sensitive attribute kept in the features; stand-ins: {', '.join(shimmed) or 'none'} "
          "(benchmarks/_dhgbench_shim.py)", file=sys.stderr, flush=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            cfg = resolve_config(name, "node", args.dataset, None, args.set)
            entry = reference_entry(args.yamls, name, args.dataset)
            result = {"model": name, "features": args.features, "set": args.set, "method": DR.DHGBENCH_METHOD[name],
                      "paper": paper_value(name, args.dataset, "accuracy"),
                      "config": {"hidden": cfg.trainer.hidden, "num_layers": cfg.trainer.num_layers,
                                 "dropout": cfg.trainer.dropout, "lr": cfg.trainer.lr,
                                 "weight_decay": cfg.trainer.weight_decay, "epochs": cfg.trainer.epochs,
                                 "select": cfg.trainer.select, "model": dict(cfg.model)},
                      "reference_yaml_entry": entry, "yaml_vs_ours": yaml_vs_ours(entry, cfg), "seeds": []}
            print(f"{name}: config {result['config']}; yaml vs ours: {result['yaml_vs_ours']}", file=sys.stderr,
                  flush=True)
            for seed in args.seeds:
                split = NodeClassification.make_split(int(data.num_nodes), cfg.task, seed)
                row = {"seed": seed}
                try:
                    row["reference"] = train_reference(name, args.dataset, data, split, seed, entry, cfg, args.set)
                except Exception as e:  # noqa: BLE001 (reported in the table)
                    row["reference"] = {"error": f"{type(e).__name__}: {e}"}
                if not args.skip_ours:
                    try:
                        row["ours"] = train_ours(name, args.dataset, data, seed, Path(tmp), args.set)
                    except Exception as e:  # noqa: BLE001
                        row["ours"] = {"error": f"{type(e).__name__}: {e}"}
                ref, ours = row["reference"], row.get("ours", {})
                print(f"  seed {seed}: reference "
                      + (f"{ref['test']['accuracy']:.2f} ({ref['train_s']:.0f} s; inputs {ref['inputs']}; "
                         f"args {ref['args']})" if "test" in ref else ref["error"])
                      + "; ours " + (f"{ours['test']['accuracy']:.2f} ({ours['train_s']:.0f} s)" if "test" in ours
                                     else ours.get("error", "skipped")), file=sys.stderr, flush=True)
                result["seeds"].append(row)
            results.append(result)
    print(f"{args.dataset}, seeds {' '.join(map(str, args.seeds))}: DHG-Bench's class (wheel, through "
          "dhgbench_reference.build_dhgbench) and ours (run_experiment), same data, split, config, Adam, epochs; "
          "last epoch scored; accuracy, ΔDP, ΔEO in % on the test split\n")
    print(render(args.dataset, results))
    if args.json:
        args.json.write_text(json.dumps({"dataset": args.dataset, "features": args.features, "seeds": args.seeds,
                                         "results": results, "provenance": started},
                                        default=str, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
