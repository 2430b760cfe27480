"""DHG-Bench's own model classes, built and driven here as its code does: the reference that
``benchmarks/epoch_time.py`` times ours against, ``benchmarks/training_stability.py`` trains beside ours and
``benchmarks/fairness_reference.py`` trains on our Bail data.

Its code is the PyPI wheel ``dhg-bench`` (0.1.2 when this was written), installed outside the project's
environment::

    .venv/bin/python -m pip download --no-deps dhg-bench -d /tmp/dhgwheel
    .venv/bin/python -m pip install --no-deps --target benchmarks/.dhgbench /tmp/dhgwheel/dhg_bench-*.whl

(or any ``--target`` folder, given to a script by ``--dhgbench`` / ``$HYPERGVL_DHGBENCH``). The wheel imports
torch_scatter, torch_sparse and dask, which have no build for this torch: :func:`import_dhgbench` puts the
stand-ins of ``benchmarks/_dhgbench_shim.py`` (torch's own scatter and sparse ops; torch_sparse's spmm algorithm as
is) in ``sys.modules``, in the calling process only. :func:`build_dhgbench` builds a model through DHG-Bench's own
pipeline (``method_config`` with its cora yaml, our config's hidden/layers/dropout/lr/weight decay overlaid, keys
its yaml lacks taken from ours; ``data_processing``, ``algo_preprocessing``, ``parse_model``) on a given
hypergraph; :func:`dhgbench_epoch` is one epoch of its trainer (``train_agent.semi_node_cls_training``: forward,
NLL of log-softmax, HJRL's reconstruction term, backward, Adam step). :func:`build_ours` is our model under our
config for the same name, the other side of every comparison.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path


#: Our registered name -> DHG-Bench's ``--method`` (``parse_model`` in ``lib_utils/exp_agent.py``); UniGCN and
#: UniGAT have no class in the wheel (its UniGNN registers UniGIN only).
DHGBENCH_METHOD = {"AllDeepSets": "AllDeepSets", "AllSetTransformer": "AllSetformer", "CEGAT": "CEGAT",
                   "CEGCN": "CEGCN", "DPHGNN": "DPHGNN", "ED-HNN": "EDHNN", "EHNN": "EHNN", "HCHA": "HCHA",
                   "HGNN": "HGNN", "HJRL": "HJRL", "HNHN": "HNHN", "HyperGCN": "HyperGCN", "HyperGT": "HyperGT",
                   "HyperND": "HyperND",
                   "LEGCN": "LEGCN", "MLP": "MLP", "PhenomNN": "PhenomNN", "SheafHyperGNN": "SheafHyperGNN",
                   "T-HyperGNN": "TMPHN", "TF-HNN": "TFHNN", "UniGCNII": "UniGCNII", "UniGIN": "UniGIN"}
#: Our trainer keys -> DHG-Bench's argparse keys, overlaid on its cora yaml so both sides get our config's values.
_GENERAL_KEYS = {"hidden": "MLP_hidden", "num_layers": "All_num_layers", "dropout": "dropout", "lr": "lr",
                 "weight_decay": "wd"}
#: Keys the wheel's yamls lack for these models (the wheel ships no node config for CEGCN/CEGAT and no
#: LearnMask for AllDeepSets): our model keyword -> DHG-Bench key (a constant where ours has no keyword).
_MISSING_KEYS = {"CEGCN": {"use_bn": "use_bn"}, "CEGAT": {"use_bn": "use_bn", "heads": "heads", "concat": "concat"},
                 "AllDeepSets": {"LearnMask": False}}
#: Classes whose width is another key than ``MLP_hidden`` (HyperGT's reads ``hidden_channels`` and ignores
#: ``MLP_hidden``; the wheel's cora entry says 32, our config 128): set from our ``hidden`` as well.
_WIDTH_KEYS = {"HyperGT": "hidden_channels"}
#: Where the wheel is installed: ``$HYPERGVL_DHGBENCH``, else this folder's ``.dhgbench``; how to install it.
DHGBENCH_ENV = "HYPERGVL_DHGBENCH"
DHGBENCH_DEFAULT = Path(__file__).resolve().parent / ".dhgbench"
DHGBENCH_INSTALL = (".venv/bin/python -m pip download --no-deps dhg-bench -d /tmp/dhgwheel && "
                    ".venv/bin/python -m pip install --no-deps --target benchmarks/.dhgbench "
                    "/tmp/dhgwheel/dhg_bench-*.whl")


def default_dhgbench() -> Path:
    """``$HYPERGVL_DHGBENCH``, else ``benchmarks/.dhgbench``."""
    return Path(os.environ.get(DHGBENCH_ENV) or str(DHGBENCH_DEFAULT))


def check_methods(parser, models: list[str]) -> None:
    """Stop ``parser`` with a usage error naming the ``--models`` that have no DHG-Bench class."""
    bad = [m for m in models if m not in DHGBENCH_METHOD]
    if bad:
        parser.error(f"--models: no DHG-Bench class for {', '.join(bad)}; one of: {', '.join(sorted(DHGBENCH_METHOD))}")


def import_dhgbench(path: Path) -> list[str]:
    """Put the wheel's folder on ``sys.path`` (this process only) and the stand-ins of
    ``benchmarks/_dhgbench_shim.py`` in place of the packages it imports that are absent; returns their names."""
    if not (path / "dhgbench" / "__init__.py").is_file():
        print(f"error: DHG-Bench's code is not installed under {path}; install it with: {DHGBENCH_INSTALL} "
              f"(or point --dhgbench / ${DHGBENCH_ENV} at a --target folder holding dhgbench/; --no-dhgbench skips "
              "the column)", file=sys.stderr)
        raise SystemExit(2)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _dhgbench_shim

    shimmed = _dhgbench_shim.install()
    sys.path.insert(0, str(path))
    return shimmed


def mean_std(values: list[float]) -> str:
    """``mean ± population std`` of per-seed percentages for the reference tables (one value as is, none ``-``)."""
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.fmean(values):.2f} ± {statistics.pstdev(values):.2f}"


#: the dataset whose node-classification config :func:`our_config` resolves (a script comparing on another set may
#: set it, as ``training_stability.py --own-config`` does)
CONFIG_DATASET = "cora"


def our_config(name: str):
    """Our resolved node-classification config for :data:`CONFIG_DATASET` (``models/configs/<Model>.yaml``)."""
    from hypergvl.models.config import resolve_config

    return resolve_config(name, "node", CONFIG_DATASET)


def build_ours(name: str, in_channels: int, out_channels: int, seed: int, structure: tuple | None = None, **extra):
    """Our model with its Cora config; ``structure`` ``(x, hyperedge_index, num_hyperedges)`` is handed to a
    model's ``prepare`` hook (tables sized by the structure, e.g. HyperGT's trained encodings), as the trainer does
    before building the optimiser."""
    import torch
    from hypergvl.models.nn import build_model

    cfg = our_config(name)
    torch.manual_seed(seed)
    model = build_model(name, in_channels=in_channels, hidden_channels=cfg.trainer.hidden, out_channels=out_channels,
                        num_layers=cfg.trainer.num_layers, dropout=cfg.trainer.dropout, **{**cfg.model, **extra})
    if structure is not None and hasattr(model, "prepare"):
        model.prepare(*structure)
    return model


def build_dhgbench(name: str, x_dense, y, hyperedge_index, num_hyperedges: int, seed: int,
                   task_type: str = "node_cls", cfg=None):
    """DHG-Bench's class for ``name`` through its own pipeline: its cora yaml for ``task_type`` (``method_config``;
    ``node_cls`` or ``edge_pred``), our config's general values overlaid (``cfg``, default :func:`our_config`),
    ``set_task_args`` (singleton hyperedges for node classification, none for most models in edge prediction),
    ``data_processing`` (V2E extraction, those singletons: Cora's already has one per node, so none is added),
    ``algo_preprocessing`` and ``parse_model`` (in edge prediction with ``embedding_mode``, the encoder's width
    ``embedding_hidden``, from ``cfg.task.embed_dim``). Returns ``(model, data, args)``."""
    import torch
    from torch_geometric.data import Data
    from dhgbench.lib_dataset.data_base import HyperDataset
    from dhgbench.lib_dataset.preprocessing import data_processing
    from dhgbench.lib_models.HNN.preprocessing import algo_preprocessing
    from dhgbench.lib_utils.exp_agent import parse_model
    from dhgbench.parameter_parser import method_config, parameter_parser, set_task_args

    method = DHGBENCH_METHOD[name]
    argv = sys.argv
    sys.argv = ["dhgbench", "--method", method, "--dname", "cora", "--task_type", task_type, "--device", "cpu"]
    try:
        args = parameter_parser()
    finally:
        sys.argv = argv
    import contextlib
    import io
    import tempfile

    with contextlib.redirect_stdout(io.StringIO()):  # it prints which yaml it loaded (or failed to)
        args = method_config(args)
        if not hasattr(args, "MLP_hidden"):  # no cora entry in the wheel's yaml: its default entry, if any
            args.is_default = True
            args = method_config(args)
    args = set_task_args(args)
    cfg = our_config(name) if cfg is None else cfg
    if task_type == "edge_pred":  # exp_agent.edge_pred_train_eval: the encoder outputs embeddings
        args.embedding_mode, args.embedding_hidden = True, cfg.task.embed_dim or cfg.trainer.hidden
    for ours, theirs in _GENERAL_KEYS.items():
        setattr(args, theirs, getattr(cfg.trainer, ours))
    for ours, theirs in _MISSING_KEYS.get(name, {}).items():
        if isinstance(theirs, str):
            setattr(args, theirs, cfg.model[ours])
        else:
            setattr(args, ours, theirs)
    if name in _WIDTH_KEYS:
        setattr(args, _WIDTH_KEYS[name], cfg.trainer.hidden)
    n = x_dense.shape[0]
    v2e = torch.stack([hyperedge_index[0], hyperedge_index[1] + n])
    pyg = Data(x=x_dense, edge_index=torch.cat([v2e, v2e.flip(0)], 1), y=y, n_x=torch.tensor([n]),
               num_hyperedges=torch.tensor([num_hyperedges]))
    db = HyperDataset.__new__(HyperDataset)  # its __init__ reads its own raw files; the same fields, set here
    db.device, db.args, db.name, db.method, db.sens, db.norm = "cpu", args, "cora", method, None, None
    db.data, db.x, db.hyperedge_index, db.y = pyg, pyg.x, pyg.edge_index, y
    # EHNN's preprocessing caches its masks under ./lib_ehnn_cache/ and reloads them on a later run: a
    # temporary working directory keeps that out of the checkout and never reuses another hypergraph's cache
    with contextlib.redirect_stdout(io.StringIO()), tempfile.TemporaryDirectory() as scratch, \
            contextlib.chdir(scratch):
        db = data_processing(args, db)
        db._initialization_()
        db = algo_preprocessing(db, args)
        torch.manual_seed(seed)
        model = parse_model(args, db)
        model.reset_parameters()  # as its trainer does first (HJRL's weights are uninitialised until then)
    return model, db, args


def dhgbench_logits(model, data, args, train=None):
    """The reference's forward as its trainer calls it (``train_agent.semi_node_cls_training``): T-HyperGNN
    (TMPHN) embeds only ``data.target_idx`` (the training nodes while training), HJRL returns node and hyperedge
    embeddings."""
    import numpy as np

    if args.method == "TMPHN":
        data.target_idx = train.numpy() if train is not None else np.arange(data.x.shape[0])
    out = model(data)
    return out if args.method == "HJRL" else out[0]


def dhgbench_epoch(model, optimizer, data, args, train, pos_weight, clock=time.perf_counter) -> float:
    """One epoch of ``train_agent.semi_node_cls_training``: zero_grad, forward, NLL of log-softmax (HJRL: plus
    gamma times its reconstruction loss), backward, step; returns its duration by ``clock``."""
    import torch
    import torch.nn.functional as F

    start = clock()
    model.train()
    optimizer.zero_grad()
    out = dhgbench_logits(model, data, args, train)
    if args.method == "HJRL":
        node, edge = out
        node = F.log_softmax(node, dim=1)
        loss = F.nll_loss(node[train], data.y[train])
        if args.gamma:
            recovered = torch.sigmoid(node @ edge.t())
            loss = loss + args.gamma * F.binary_cross_entropy_with_logits(recovered, data.H_ini, pos_weight=pos_weight)
    elif args.method == "TMPHN":
        loss = F.nll_loss(F.log_softmax(out, dim=1), data.y[train])
    else:
        loss = F.nll_loss(F.log_softmax(out, dim=1)[train], data.y[train])
    loss.backward()
    optimizer.step()
    return clock() - start
