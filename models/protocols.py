"""Published training protocols that ``--set protocol=<name>`` applies in :mod:`hypergvl.models.trainer`.

``allset``: the protocol of AllSet (Chien et al., ICLR 2022, arXiv 2106.13264, section 5 and Table 3) that ED-HNN
(Wang et al., ICLR 2023, arXiv 2207.06680, section 6 and Table 2) and most later hypergraph papers compare under:
"We randomly split the data into training/validation/test samples using 50%/25%/25% splitting percentage by
following Chien et al. (2022). We run each model for ten times with different training/validation splits" (ED-HNN,
section 6.1), the test accuracy read at the epoch of the best validation accuracy, with per-dataset hyperparameters.

Every value below names where it was read: a file and line of ``jianhao2016/AllSet`` at commit ``6281a2f`` or of
``Graph-COM/ED-HNN`` at commit ``fea3b8f``. What is transcribed and what is inferred:

* Transcribed per dataset (a ``tuned`` setting): AllSetTransformer on Cora and Cora-CA from
  ``src/run_AllSetTransformer.sh`` (the only per-dataset choices AllSet's repository holds), ED-HNN on Cora and
  Cora-CA from the ED-HNN README's reproduction commands.
* Transcribed for every dataset (the ``general`` setting, which a model without a tuned setting falls back to):
  ``src/run_one_model.sh`` fixes lr 1e-3, weight decay 0, 500 epochs, 10 runs and each model's architecture flags
  (``All_num_layers 1``, ``MLP_num_layers 2``, ``Classifier_num_layers 1``, the HGNN/HCHA normalisations); the
  dropout 0.5 and the every-epoch evaluation with best-validation selection are ``src/train.py``'s.
* Inferred (the mapping, recorded in the comment of each value): what ``All_num_layers 1`` means for each AllSet
  model class, in this project's ``num_layers`` (AllSet's HCHA and CEGCN classes build first and last layer
  whatever it says, so 1 is two convolutions here; its MLP and HyperGCN build one layer; its HNHN, UniGCNII and
  SetGNN one block).
* Not published: the hidden sizes. ``src/run_all_experiments.sh`` searches MLP_hidden in {64, 128, 256, 512} and
  Classifier_hidden in {64, 128, 256} (lines 27 and 29) and attention heads in {1, 4, 8} (``run_one_model.sh``
  lines 58, 98, 217) and keeps the best by validation, but the chosen values of the models other than
  AllSetTransformer are in no file of the repository (AllSet's appendix does not list them either); those keys
  keep the model's own ``models/configs/<MODEL>.yaml`` value, which the resolved config's ``sources`` names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ALLSET = "jianhao2016/AllSet@6281a2f"
EDHNN = "Graph-COM/ED-HNN@fea3b8f"
_ONE = f"{ALLSET} src/run_one_model.sh"
_AST = f"{ALLSET} src/run_AllSetTransformer.sh"
_TRAIN = f"{ALLSET} src/train.py"
_MODELS = f"{ALLSET} src/models.py"
_ED = f"{EDHNN} README.md"
_EDTRAIN = f"{EDHNN} train.py"

#: (key, value, source) as :func:`hypergvl.models.trainer.resolve_config` applies them
Setting = tuple[str, Any, str]


@dataclass(frozen=True)
class Protocol:
    """A training protocol: settings for every model (``general``), per model (``per_model``, the general run
    script's flags for that model) and per model and dataset (``tuned``), and the number of runs."""

    name: str
    description: str
    tasks: tuple[str, ...]
    runs: tuple[int, str]
    general: tuple[Setting, ...]
    per_model: dict[str, tuple[Setting, ...]] = field(default_factory=dict)
    tuned: dict[tuple[str, str], tuple[Setting, ...]] = field(default_factory=dict)
    tuned_runs: dict[str, tuple[int, str]] = field(default_factory=dict)


def _ast_command(line: int, heads: int, hidden: int, classifier_hidden: int) -> tuple[Setting, ...]:
    """The settings of one ``python train.py --method AllSetTransformer`` command of ``run_AllSetTransformer.sh``
    whose ``--All_num_layers`` flag is on ``line`` (its flags follow one a line, in this order)."""
    return (("trainer.num_layers", 1, f"{_AST}:{line} (All_num_layers 1)"),
            ("model.mlp_num_layers", 2, f"{_AST}:{line + 1} (MLP_num_layers 2)"),
            ("model.heads", heads, f"{_AST}:{line + 3} (heads {heads})"),
            ("model.decoder_num_layers", 1, f"{_AST}:{line + 4} (Classifier_num_layers 1)"),
            ("trainer.hidden", hidden, f"{_AST}:{line + 5} (MLP_hidden {hidden})"),
            ("model.decoder_hidden", classifier_hidden, f"{_AST}:{line + 6} (Classifier_hidden {classifier_hidden})"),
            ("trainer.weight_decay", 0.0, f"{_AST}:{line + 7} (wd 0.0)"),
            ("trainer.epochs", 500, f"{_AST}:17 (epochs=500)"),
            ("trainer.lr", 1e-3, f"{_AST}:12 (lr=0.001)"))


def _edhnn_command(line: int, classifier_layers: int, hidden: int, classifier_hidden: int) -> tuple[Setting, ...]:
    """The settings of one ED-HNN README command that starts on ``line`` (three lines of flags; the ones it does
    not give are ``train.py``'s defaults)."""
    return (("trainer.num_layers", 1, f"{_ED}:{line} (--All_num_layers 1)"),
            ("model.mlp1_layers", 0, f"{_ED}:{line} (--MLP_num_layers 0)"),
            ("model.mlp2_layers", 0, f"{_ED}:{line} (--MLP2_num_layers 0)"),
            ("model.mlp3_layers", 1, f"{_ED}:{line + 1} (--MLP3_num_layers 1)"),
            ("model.classifier_layers", classifier_layers,
             f"{_ED}:{line + 1} (--Classifier_num_layers {classifier_layers})"),
            ("trainer.hidden", hidden, f"{_ED}:{line + 1} (--MLP_hidden {hidden})"),
            ("model.classifier_hidden", classifier_hidden,
             f"{_ED}:{line + 1} (--Classifier_hidden {classifier_hidden})"),
            ("model.aggregate", "mean", f"{_ED}:{line + 1} (--aggregate mean)"),
            ("model.alpha", 0.0, f"{_ED}:{line + 2} (--restart_alpha 0.0)"),
            ("trainer.lr", 1e-3, f"{_ED}:{line + 2} (--lr 0.001)"),
            ("trainer.weight_decay", 0.0, f"{_ED}:{line + 2} (--wd 0)"),
            ("trainer.epochs", 500, f"{_ED}:{line + 2} (--epochs 500)"),
            ("trainer.dropout", 0.5, f"{_EDTRAIN}:173 (dropout default 0.5; the command does not set it)"))


_SETGNN = (  # AllSet's SetGNN flags common to AllSetTransformer and AllDeepSets
    ("model.mlp_num_layers", 2, f"{_ONE}:46,66 (MLP_num_layers 2)"),
    ("model.decoder_num_layers", 1, f"{_ONE}:47,69 (Classifier_num_layers 1)"),
    ("model.normalization", "ln", f"{_TRAIN}:250 (normalization default 'ln')"),
    ("model.gpr", False, f"{_TRAIN}:282 (set_defaults GPR=False)"),
    ("trainer.num_layers", 1, f"{_ONE}:45,65 (All_num_layers 1: one V->E->V block, {_MODELS}:347-388)"),
)

_NO_SELF_LOOPS = (f"{_TRAIN}:354-360 (CEGCN, CEGAT and HyperGCN get no singleton hyperedges: no Add_Self_Loops, "
                  "which lines 347, 378, 386 and 393 call for the other methods)")

ALLSET_PROTOCOL = Protocol(
    name="allset",
    description="AllSet / ED-HNN: 50/25/25 random splits, best validation epoch (the first on ties), per-dataset "
                "hyperparameters (AllSet Table 3, ED-HNN Table 2)",
    tasks=("node",),
    runs=(10, f"{_ONE}:18 (runs=10)"),
    general=(
        ("trainer.lr", 1e-3, f"{_ONE}:11 (lr=0.001)"),
        ("trainer.weight_decay", 0.0, f"{_ONE}:12 (wd=0)"),
        ("trainer.epochs", 500, f"{_ONE}:19 (epochs=500)"),
        ("trainer.dropout", 0.5, f"{_TRAIN}:231 (dropout default 0.5; the scripts do not set it)"),
        ("trainer.eval_every", 1, f"{_TRAIN}:486 (evaluate after every epoch)"),
        ("trainer.patience", 0, f"{_TRAIN}:474 (all epochs run; no early stopping)"),
        ("trainer.select", "best_val_first",
         f"{_TRAIN}:134-135 (test at r[:, 1].argmax(): the best validation epoch, the first of equal ones)"),
    ),
    per_model={
        "MLP": (("trainer.num_layers", 1, f"{_ONE}:27 (All_num_layers 1; {_MODELS}:495,505: one linear layer)"),
                ("model.normalization", "ln", f"{_TRAIN}:250 (normalization default 'ln')"),
                ("model.input_norm", False, f"{_MODELS}:490 (MLP_model InputNorm=False)")),
        "HGNN": (("trainer.num_layers", 2, (f"{_ONE}:165 (All_num_layers 1; {_MODELS}:267-274 builds the first "
                                            "and the last convolution: two)")),
                 ("model.symmetric", True, f"{_ONE}:170 (HGNN runs with --HCHA_symdegnorm)")),
        "HCHA": (("trainer.num_layers", 2, f"{_ONE}:202 (All_num_layers 1; {_MODELS}:267-274: two convolutions)"),
                 ("model.symmetric", False, f"{_ONE}:199-212 (no --HCHA_symdegnorm; {_TRAIN}:286 default False)"),
                 ("model.use_attention", False, f"{_MODELS}:267 (HypergraphConv without attention)")),
        "HNHN": (("trainer.num_layers", 1, f"{_ONE}:184 (All_num_layers 1; {_MODELS}:219-220: one HNHN layer)"),
                 ("model.alpha", -1.5, f"{_TRAIN}:269 (HNHN_alpha -1.5)"),
                 ("model.beta", -0.5, f"{_TRAIN}:270 (HNHN_beta -0.5)"),
                 ("model.nonlinear_inbetween", True, f"{_TRAIN}:271 (HNHN_nonlinear_inbetween True)"),
                 ("model.normalisation", "paper",
                  (f"{ALLSET} src/preprocessing.py:314-327 (generate_norm_HNHN divides by the sums of the powered "
                   "degrees, the HNHN paper's normalisers; ED-HNN's models/hnhn.py:135,139 sums unpowered ones)"))),
        "HyperGCN": (("trainer.num_layers", 1, (f"{_ONE}:125 (All_num_layers 1; {_MODELS}:40-46: h = [d, c], "
                                                "one layer)")),
                     ("model.mediators", True, f"{_ONE}:130 (--HyperGCN_mediators)"),
                     ("model.fast", True, f"{_ONE}:131 (--HyperGCN_fast)"),
                     ("task.self_loops", False, _NO_SELF_LOOPS)),
        "CEGCN": (("trainer.num_layers", 2, (f"{_ONE}:85 (All_num_layers 1; {_MODELS}:94-108 builds the first "
                                             "and the last GCN layer: two)")),
                  ("model.use_bn", False, f"{_TRAIN}:250 (normalization 'ln', and CEGCN normalises only for 'bn')"),
                  ("task.self_loops", False, _NO_SELF_LOOPS)),
        "CEGAT": (("trainer.num_layers", 2, f"{_ONE}:105 (All_num_layers 1; {_MODELS}:155-163: two GAT layers)"),
                  ("model.use_bn", False, f"{_TRAIN}:250 (normalization 'ln', and CEGAT normalises only for 'bn')"),
                  ("model.concat", True, f"{_MODELS}:147 (GATConv(in, hid, heads): heads concatenated)"),
                  ("model.output_heads", 1, f"{_TRAIN}:267 (output_heads 1)"),
                  ("task.self_loops", False, _NO_SELF_LOOPS)),
        "UniGCNII": (("trainer.num_layers", 1, f"{_ONE}:222 (All_num_layers 1; {_MODELS}:973-974: one convolution)"),
                     ("trainer.lr", 0.01, f"{_TRAIN}:464-467 (UniGCNII's own Adam, lr=0.01, whatever --lr says)"),
                     ("trainer.weight_decay", 5e-4,
                      (f"{_TRAIN}:465-466 (5e-4 on the input and output maps, 0.01 on the convolutions; the "
                       "trainer has one weight decay: approximated by 5e-4)")),
                     ("trainer.dropout", 0.2, f"{_MODELS}:978,987,991 (nn.Dropout(0.2) before every map)"),
                     ("model.input_dropout", 0.2,
                      f"{_MODELS}:987 (the input is dropped by the same 0.2; input_drop 0.6 is never used)"),
                     ("model.alpha", 0.1, f"{_MODELS}:986 (alpha = 0.1)"),
                     ("model.lamda", 0.5, f"{_MODELS}:986 (lamda = 0.5)"),
                     ("model.activation", "relu", f"{_MODELS}:967 (relu)"),
                     ("model.propagation", "unignn", f"{_TRAIN}:405-412 (degV^-1/2 and mean-member degE^-1/2)")),
        "AllDeepSets": _SETGNN + (("model.input_norm", True, f"{_TRAIN}:251 (deepset_input_norm True)"),
                                  ("model.aggregate", "sum", f"{_TRAIN}:38 (AllDeepSets: aggregate 'add')"),
                                  ("trainer.hidden", 256,
                                   (f"{ALLSET} src/run_all_experiments.sh:27 (MLP_hidden searched in 64..512; "
                                    "inferred: 256, the Cora MLP_hidden of the same SetGNN in "
                                    f"{_AST}:32; at the config's 64 AllSet's own SetGNN also collapses on Cora "
                                    "under dropout 0.5)"))),
        "AllSetTransformer": _SETGNN,
        "ED-HNN": (("model.normalization", "ln", f"{_EDTRAIN}:189 (normalization default 'ln')"),
                   ("model.input_norm", True, f"{_EDTRAIN}:199 (AllSet_input_norm True)"),
                   ("model.activation", "relu", f"{_EDTRAIN}:190 (activation default 'relu')"),
                   ("model.dropout_order", "paper", (f"{EDHNN} models/edgnn.py:192-199 (dropout on the input, "
                                                     "before each step and before the classifier)"))),
    },
    tuned={("AllSetTransformer", "cora"): _ast_command(27, heads=4, hidden=256, classifier_hidden=128),
           ("AllSetTransformer", "cora-ca"): _ast_command(84, heads=8, hidden=128, classifier_hidden=128),
           ("ED-HNN", "cora"): _edhnn_command(66, classifier_layers=1, hidden=256, classifier_hidden=256),
           ("ED-HNN", "cora-ca"): _edhnn_command(107, classifier_layers=2, hidden=128, classifier_hidden=96)},
    tuned_runs={"AllSetTransformer": (20, f"{_AST}:16 (runs=20)"),
                "ED-HNN": (10, f"{_ED}:68,109 (--runs 10)")},
)

PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (ALLSET_PROTOCOL,)}


def get_protocol(name: str) -> Protocol:
    """The protocol called ``name``; ``ValueError`` naming the valid ones otherwise."""
    if name not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; valid protocols: {', '.join(sorted(PROTOCOLS))} "
                         "(or none: DHG-Bench's protocol, the default)")
    return PROTOCOLS[name]


def _dataset_key(protocol: Protocol, model: str, dataset: str) -> tuple[str, str] | None:
    return next((k for k in protocol.tuned if k[0] == model and k[1] == dataset.lower()), None)


def protocol_settings(name: str, model: str, task: str, dataset: str) -> tuple[list[Setting], dict[str, Any]]:
    """The settings protocol ``name`` applies to ``model`` on ``task``/``dataset``, in order (general, then the
    model's, then the tuned ones for the dataset: a later one wins), and the record the resolved config keeps:
    the protocol, whether the values are the tuned ones or the general fallback, the runs and their source."""
    protocol = get_protocol(name)
    if task not in protocol.tasks:
        raise ValueError(f"protocol {name!r} is defined for task(s) {', '.join(protocol.tasks)}, not {task!r}")
    key = _dataset_key(protocol, model, dataset)
    items = list(protocol.general) + list(protocol.per_model.get(model, ())) + list(protocol.tuned.get(key, ()))
    runs, runs_source = protocol.tuned_runs.get(model, protocol.runs) if key else protocol.runs
    if key:
        setting = "tuned"
        note = f"{model} on {dataset}: the per-dataset values its authors published"
    else:
        setting = "fallback"
        note = (f"no per-dataset values were published for {model} on {dataset}: the general setting "
                f"({_ONE}{' and its ' + model + ' flags' if model in protocol.per_model else ''}); keys it does "
                "not fix keep the model config's values")
    return items, {"name": name, "setting": setting, "note": note, "runs": runs, "runs_source": runs_source}
