"""Is a Table A6 miss in our code? DHG-Bench's own encoder class, head and training loop, and ours, on the same
hyperedge-prediction task: the same split, candidates, metric and seed, beside the paper's Table A6 AUROC.

Why (docs/reproduction.md, "What the misses say"): some A6 rows miss by more than 5 points under the paper protocol
(UniGCNII on Cora, HGNN on Cora-CA) with configs read equal to DHG-Bench's edge yamls. If the reference's own code,
given our task, lands near our number, the gap is not in our model, head or loop; if it lands near the paper, it is.

What is the same on both sides, per model and seed:

* the task: ``hypergvl.models.tasks.hyperedge.HyperedgePrediction`` under ``task.protocol=paper`` with the
  reproduction's overrides (``reproduce_dhgbench.PROTOCOLS`` and ``PAPER_MODEL_OVERRIDES``): the split of
  ``paper_split``, the encoder's hypergraph (every hyperedge, validation and test included, no singletons: the
  reference's ``set_task_args`` adds none in edge prediction except for HyperND), the training candidates, the
  validation candidates (training positives against validation negatives, as ``load_val`` read them) and the test
  candidates; both are scored by that task's ``_scores`` (``roc_average``: the mean of the four AUROCs);
* the reference side (wheel 0.1.2, which has the publication-time edge loop): the encoder is
  ``dhgbench_reference.build_dhgbench(..., task_type="edge_pred")`` (its edge yaml's cora entry, our general values
  overlaid, ``embedding_mode``), the head ``lib_utils.aggregator.EdgePredictor`` with ``MaxAggregator`` (its
  ``classify`` returns a sigmoid), batches from ``lib_dataset.edge_loaders.HEBatchGenerator`` (``edge_batch_size``
  positives and as many negatives, with wrap-around), and ``train_agent.semi_edge_pred_training``'s step:
  ``torch.sigmoid`` again, then ``binary_cross_entropy_with_logits`` on the positive and on the negative half,
  Adam(lr, wd), evaluation every ``eval_every`` epochs of our config (the repository's ``display_step``: 20 by
  default in ``parameter_parser.py`` from e8b340d on, 10 in T-HyperGNN's edge yaml; the 0.1.2 wheel's default
  says 10), the last model with validation ``>=`` the best kept; ``--loss logits`` drops the two extra sigmoids
  on both sides (``task.paper_loss=logits``);
* ours: ``hypergvl.models.trainer.run_experiment`` for the seed with the same overrides, the exact call
  ``benchmarks/reproduce_dhgbench.py`` makes for the shipped A6 points.

Randomness (initial weights, dropout draws, batch order) is drawn by each side from the seed, not shared.

``--splits DIR`` puts DHG-Bench's own split files (``DIR/split_<seed>.pt``, as ``generate_split_hyperedges`` wrote
them) in place of the task's candidates on both sides. Only Cora's seeds 0-2 were ever published, in the
repository's history (added in a384e2e, removed in 46155e9): ``git -C <DHG-Bench clone> archive a384e2e
dhgbench/lib_edge_splits/cora | tar -x -C /tmp/splits`` gives ``/tmp/splits/dhgbench/lib_edge_splits/cora``.
Training positives are ``train_only_pos + ground_train``, training negatives the first third of each sampler's
(``ns_method: mixed``), validation the training positives against every validation negative (``load_val``), test
``test_pos`` against every test negative; the encoder's hypergraph is unchanged (the five positive lists together
are the 1,579 hyperedges it already holds).

    HYPERGVL_RAW_ROOT=$(realpath ../shared/data) HYPERGVL_DHGBENCH=/tmp/dhgbench_wheel \\
      .venv/bin/python benchmarks/hyperedge_reference.py --models UniGCNII --dataset cora --seeds 0 1 2 3 4 \\
      --json /tmp/hyperedge_reference.json

Needs DHG-Bench's wheel (see ``benchmarks/dhgbench_reference.py``: ``--dhgbench`` or ``$HYPERGVL_DHGBENCH``).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dhgbench_reference as DR  # noqa: E402
import epoch_time as ET  # noqa: E402
import reproduce_dhgbench as RD  # noqa: E402

DEFAULT_MODELS = ("UniGCNII", "HGNN")
LOSSES = {"dhgbench": (), "logits": ("task.paper_loss=logits",)}


def overrides(name: str, loss: str, extra: list[str] = ()) -> list[str]:
    """The shipped A6 rows' overrides for ``name`` (the paper protocol), plus ``--loss``'s and ``--set``'s."""
    return [*RD.PROTOCOLS["hyperedge"]["paper"], *RD.PAPER_MODEL_OVERRIDES.get(("hyperedge", name), ()),
            *LOSSES[loss], *extra]


def fix_seed(seed: int) -> None:
    """``lib_utils.utils.fix_seed``: torch, numpy and random."""
    import torch

    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def load_split(folder: Path, seed: int) -> dict:
    """DHG-Bench's ``split_<seed>.pt`` under ``folder`` (lists of node-id lists; numpy scalars allowed, nothing else
    unpickled)."""
    import torch
    from numpy._core.multiarray import scalar

    with torch.serialization.safe_globals([(scalar, "numpy.core.multiarray.scalar"), np.dtype,
                                           type(np.dtype("int64"))]):
        return torch.load(folder / f"split_{seed}.pt", weights_only=True)


def use_split(task, split: dict) -> None:
    """``task``'s positives and candidates replaced by DHG-Bench's ``split`` (module docstring, ``--splits``)."""
    from hypergvl.models.tasks.hyperedge import _Candidates

    def edges(key):
        return [tuple(sorted(int(v) for v in h)) for h in split[key]]

    train = edges("train_only_pos") + edges("ground_train")
    third = len(split["train_sns"]) // 3
    negatives = {"train": [(kind, h) for kind, key in (("sized", "sns"), ("motif", "mns"), ("clique", "cns"))
                           for h in edges(f"train_{key}")[:third]]}
    for part, prefix in (("val", "valid"), ("test", "test")):
        negatives[part] = [(kind, h) for kind, key in (("sized", "sns"), ("motif", "mns"), ("clique", "cns"))
                           for h in edges(f"{prefix}_{key}")]
    task.positives = {"train": train, "val": edges("ground_valid") + edges("valid_only_pos"),
                      "test": edges("test_pos")}
    for part, pos in (("train", train), ("val", train), ("test", task.positives["test"])):
        neg = negatives[part]
        task.candidates[part] = _Candidates(pos + [h for _, h in neg], [1.0] * len(pos) + [0.0] * len(neg),
                                            ["positive"] * len(pos) + [k for k, _ in neg], task.device)


@contextlib.contextmanager
def split_files(folder: Path | None):
    """While open, every ``HyperedgePrediction`` built (ours inside ``run_experiment`` too) takes its seed's split
    from ``folder`` (nothing changes when ``folder`` is None)."""
    from hypergvl.models.tasks.hyperedge import HyperedgePrediction

    if folder is None:
        yield
        return
    init = HyperedgePrediction.__init__

    def patched(self, data, cfg, seed, **kwargs):
        init(self, data, cfg, seed, **kwargs)
        use_split(self, load_split(folder, seed))

    HyperedgePrediction.__init__ = patched
    try:
        yield
    finally:
        HyperedgePrediction.__init__ = init


def scores(model, data, task, part: str) -> dict:
    """``part``'s candidates scored by the reference's encoder and head (``EdgePredictor.aggregate``'s size groups,
    put back in candidate order), measured by our task's metric."""
    import torch
    from hypergvl.models.tasks.hyperedge import _scores

    cands = task.candidates[part]
    model.eval()
    with torch.no_grad():
        h, _ = model.encoding(data)
        score = np.empty(len(cands.hyperedges))
        groups: dict[int, list[int]] = {}
        for i, he in enumerate(cands.hyperedges):
            groups.setdefault(len(he), []).append(i)
        for ids in groups.values():
            feats = torch.stack([h[list(cands.hyperedges[i])] for i in ids])
            score[ids] = model.aggregator(feats, "group").view(-1).numpy()
    return _scores(cands.labels, score, cands.kinds, True)


def train_reference(name: str, task, cfg, seed: int, loss: str) -> dict:
    """DHG-Bench's encoder, ``EdgePredictor`` + ``MaxAggregator`` and ``semi_edge_pred_training`` on ``task``."""
    import torch
    import torch.nn.functional as F
    from dhgbench.lib_dataset.edge_loaders import HEBatchGenerator
    from dhgbench.lib_utils.aggregator import EdgePredictor, MaxAggregator

    x = task.x.to_dense() if task.x.layout != torch.strided else task.x
    y = torch.zeros(x.shape[0], dtype=torch.long)  # edge prediction uses no labels; parse_model reads the count
    t0 = time.perf_counter()
    fix_seed(seed)
    encoder, db, args = DR.build_dhgbench(name, x, y, task.hyperedge_index, task.num_hyperedges, seed,
                                          task_type="edge_pred", cfg=cfg)
    tc = cfg.task
    args.e_embed_hidden, args.e_embed_layer, args.e_embed_dropout = tc.scorer_hidden, tc.scorer_layers, \
        tc.scorer_dropout
    args.e_embed_norm, args.edge_aggr = "ln", "group"
    model = EdgePredictor(encoder, MaxAggregator(args), args)
    model.reset_parameters()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.wd)
    train = task.candidates["train"]
    pos = [list(h) for h, lab in zip(train.hyperedges, train.labels) if lab == 1]
    neg = [list(h) for h, lab in zip(train.hyperedges, train.labels) if lab == 0]
    pos_loader = HEBatchGenerator(pos, [1] * len(pos), tc.batch_size, "cpu")
    neg_loader = HEBatchGenerator(neg, [0] * len(neg), tc.batch_size, "cpu")
    best, selected, curve = -1.0, None, []
    for epoch in range(cfg.trainer.epochs):
        model.train()
        while True:
            optimizer.zero_grad()
            h, _ = model.encoding(db)
            pos_hedges, pos_labels, _ = pos_loader.next()
            neg_hedges, neg_labels, is_last = neg_loader.next()
            p, n = model.aggregate(h, pos_hedges), model.aggregate(h, neg_hedges)
            if loss == "logits":  # the scores before MaxAggregator.classify's sigmoid
                p, n = torch.logit(p, eps=1e-7), torch.logit(n, eps=1e-7)
            else:
                p, n = torch.sigmoid(p), torch.sigmoid(n)
            step_loss = (F.binary_cross_entropy_with_logits(p, pos_labels)
                         + F.binary_cross_entropy_with_logits(n, neg_labels))
            step_loss.backward()
            optimizer.step()
            if is_last:
                break
        if (epoch + 1) % cfg.trainer.eval_every == 0:
            val, test = scores(model, db, task, "val"), scores(model, db, task, "test")
            curve.append([epoch + 1, round(float(step_loss), 5), round(val["auroc"], 2), round(test["auroc"], 2)])
            if val["auroc"] >= best:
                best, selected = val["auroc"], {"epoch": epoch + 1, "val": val, "test": test}
    return {**selected, "curve": curve, "train_s": time.perf_counter() - t0,
            "inputs": {"nodes": int(db.x.shape[0]), "hyperedges": int(db.hyperedge_index[1].unique().numel()),
                       "ours_hyperedges": int(task.num_hyperedges), "add_self_loop": bool(args.add_self_loop)},
            "args": {k: getattr(args, k) for k in ("lr", "wd", "MLP_hidden", "All_num_layers", "dropout", "epochs",
                                                   "embedding_hidden", "input_drop", "activation", "restart_alpha",
                                                   "lamda", "HCHA_symdegnorm") if hasattr(args, k)}}


def train_ours(name: str, dataset: str, data, seed: int, workdir: Path, sets: list[str]) -> dict:
    """The reproduction's own call for one seed (``run_experiment``)."""
    from hypergvl.models.trainer import run_experiment

    t0 = time.perf_counter()
    summary = run_experiment(name, dataset, "hyperedge", out=workdir / f"{name}-{seed}", runs=1, seeds=[seed],
                             data=data, resume=False, progress=False, overrides=sets)
    run = summary["runs"][0]
    return {"test": run["metrics"]["test"], "val": run["metrics"]["val"], "epoch": run["selected_epoch"],
            "train_s": time.perf_counter() - t0}


def render(dataset: str, results: list[dict]) -> str:
    lines = [f"| model | loss | split | seed | reference AUROC (epoch) | ours AUROC (epoch) | paper Table A6 {dataset} |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        paper = f"{r['paper'][0]:.2f} ± {r['paper'][1]:.2f}" if r["paper"] else "-"
        extra = r.get("extra_set", [])
        model = f"{r['model']} ({', '.join(extra)})" if extra else r["model"]
        for s in r["seeds"]:
            ref, ours = s["reference"], s.get("ours", {})
            ra = f"{ref['test']['auroc']:.2f} ({ref['epoch']})" if "test" in ref else f"error: {ref['error']}"
            oa = f"{ours['test']['auroc']:.2f} ({ours['epoch']})" if "test" in ours else ours.get("error", "skipped")
            lines.append(f"| {model} | {r['loss']} | {r.get('splits', 'ours')} | {s['seed']} | {ra} | {oa} | |")
        ref = [s["reference"]["test"]["auroc"] for s in r["seeds"] if "test" in s["reference"]]
        ours = [s["ours"]["test"]["auroc"] for s in r["seeds"] if "test" in s.get("ours", {})]
        lines.append(f"| **{model}** | {r['loss']} | {r.get('splits', 'ours')} | mean ± std | **{DR.mean_std(ref)}** | "
                     f"**{DR.mean_std(ours)}** | {paper} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS))
    p.add_argument("--dataset", default="cora", choices=["cora", "cora-ca"])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--loss", choices=sorted(LOSSES), default="dhgbench",
                   help="dhgbench: the publication-time double sigmoid on both sides (the shipped A6 rows); "
                        "logits: the loss on the scores on both sides (the paper-logits rows)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--raw-root", type=Path, default=ET.default_raw_root())
    p.add_argument("--dhgbench", type=Path, default=DR.default_dhgbench())
    p.add_argument("--skip-ours", action="store_true", help="train the reference only")
    p.add_argument("--set", nargs="+", default=[], metavar="KEY=VALUE",
                   help="config overrides for both sides, as `hypergvl train --set` takes them (trainer keys reach the "
                        "reference's args and loop, e.g. trainer.eval_every=10; model keys ours only)")
    p.add_argument("--splits", type=Path, default=None,
                   help="a folder of DHG-Bench's own split_<seed>.pt files, used by both sides (module docstring)")
    p.add_argument("--json", type=Path, default=None, help="write the results here")
    p.add_argument("--render", type=Path, nargs="+", default=None, metavar="JSON",
                   help="print the Markdown table of earlier --json outputs and exit")
    args = p.parse_args(argv)
    if args.render:
        docs = [json.loads(path.read_text()) for path in args.render]
        print(render(docs[0]["dataset"], [r for d in docs for r in d["results"]]))
        return 0
    DR.check_methods(p, args.models)
    shimmed = DR.import_dhgbench(args.dhgbench)  # exits with the install command when absent
    from hypergvl.provenance import provenance

    started = provenance(seeds=args.seeds)
    import torch
    from hypergvl.models.config import resolve_config
    from hypergvl.models.tasks.hyperedge import HyperedgePrediction

    torch.set_num_threads(args.threads)
    data = RD.TR.load_dataset(args.dataset, str(args.raw_root), **HyperedgePrediction.load_kwargs)
    print(f"{args.dataset}: stand-ins {', '.join(shimmed) or 'none'} (benchmarks/_dhgbench_shim.py)",
          file=sys.stderr, flush=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            sets = overrides(name, args.loss, args.set)
            cfg = resolve_config(name, "hyperedge", args.dataset, None, sets)
            result = {"model": name, "loss": args.loss, "set": sets, "splits": "dhgbench" if args.splits else "ours",
                      "extra_set": args.set, "method": DR.DHGBENCH_METHOD[name],
                      "paper": RD.PAPER[("hyperedge", args.dataset)]["auroc"].get(name), "seeds": []}
            for seed in args.seeds:
                row = {"seed": seed}
                with split_files(args.splits):
                    task = HyperedgePrediction(data, cfg.task, seed, hidden=cfg.trainer.hidden)
                    try:
                        row["reference"] = train_reference(name, task, cfg, seed, args.loss)
                    except Exception as e:  # noqa: BLE001 (reported in the table)
                        row["reference"] = {"error": f"{type(e).__name__}: {e}"}
                    if not args.skip_ours:
                        try:
                            row["ours"] = train_ours(name, args.dataset, data, seed, Path(tmp), sets)
                        except Exception as e:  # noqa: BLE001
                            row["ours"] = {"error": f"{type(e).__name__}: {e}"}
                ref, ours = row["reference"], row.get("ours", {})
                print(f"  {name} seed {seed}: reference "
                      + (f"{ref['test']['auroc']:.2f} at epoch {ref['epoch']} ({ref['train_s']:.0f} s; inputs "
                         f"{ref['inputs']}; args {ref['args']}; curve {ref['curve']})" if "test" in ref
                         else ref["error"])
                      + "; ours " + (f"{ours['test']['auroc']:.2f} at epoch {ours['epoch']} ({ours['train_s']:.0f} s)"
                                     if "test" in ours else ours.get("error", "skipped")), file=sys.stderr, flush=True)
                result["seeds"].append(row)
            results.append(result)
    print(render(args.dataset, results))
    if args.json:
        args.json.write_text(json.dumps({"dataset": args.dataset, "seeds": args.seeds, "results": results,
                                         "provenance": started}, default=str, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
