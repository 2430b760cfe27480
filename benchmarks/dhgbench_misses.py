"""What each missed row of ``benchmarks/results/reproduction.md`` comes from, as measured.

One entry per miss, keyed as the table prints the row: ``(task, dataset, model)``, the task with its protocol
(``"hyperedge (paper)"``), and the reference-behaviour table's rows under :data:`BEHAVIOUR`. Each text names the
measurement that locates the miss (a switch that closes it, the reference's own code on the same task, or a
statistic); ``not located:`` says where none does. ``reproduce_dhgbench.py`` prints the text in the tables' last
column; ``tests/test_reproduce_tables.py`` checks that every miss more than :data:`BAR` points below the paper has a
located one and that no entry names a row that is not a miss. The measurements are in docs/reproduction.md ("What
the misses say", "What the node rows of the nine later models say") and docs/studies.md ("Bail accuracy, model by
model"), each with its command.
"""

from __future__ import annotations

#: a miss this many points or more below the paper must have a located cause
BAR = 5.0
NOT_LOCATED = "not located:"

_DOUBLE_SIGMOID = ("the paper protocol's double-sigmoid loss (DHG-Bench at publication) collapses it; with the loss on "
                   "the scores (`paper-logits` row) {}, a pass")
_ON_SCORES = ("this row's loss on the scores is not the reference's; the `paper` row (double sigmoid, the reference's "
              "loss) gives {}")
_DATA = ("the data: DHG-Bench's own class on our Bail files misses alike, reference / ours {} "
         "(fairness_reference.md); its own Bail files are not reachable offline")
_EDGELESS = ("the edgeless expansion leaves a map of each node's own features, which the double-sigmoid loss "
             "collapses; with the loss on the scores (these options, `paper-logits`, 5 seeds) {}")
_LOSS_WITH = "the loss: with these options and the loss on the scores (`paper-logits`, 5 seeds) {}"
_STEAM = ("not located: the paper's Steam-Player column sits at chance (our MLP 51.84, its 52.34); batch merging, "
          "features, config, head, loop and split measured or read equal; DHG-Bench's own data file is unverified "
          "offline")

MISSES: dict[tuple[str, str, str], str] = {
    # Table 1, node classification
    ("node", "cora", "LEGCN"): "DHG-Bench's edgeless line expansion (`model.expansion=isolated`): 74.83, a pass",
    ("node", "cora", "DPHGNN"): ("unstable training at lr 1e-2 (loss spikes to 10^2-10^3; the last epoch is scored), "
                                 "as DHG-Bench's own class (training_stability.md); its code behaviour (second "
                                 "table) 77.49, a pass"),
    ("node", "cora-ca", "LEGCN"): "DHG-Bench's edgeless line expansion (`model.expansion=isolated`): 74.77, a pass",
    ("node", "cora-ca", "HJRL"): ("the reference's squashed reconstruction loss (`model.reconstruction=dhgbench`): "
                                  "83.55, a pass"),
    ("node", "cora-ca", "DPHGNN"): "unstable training as on Cora; DHG-Bench's code behaviour 81.62, a pass",
    ("node", "cora-ca", "HyperGT"): ("DHG-Bench's code (untrained random encodings, no link loss, tau 1, zero "
                                     "hyperedge features): 74.56, a pass"),
    ("node", "twitch-gamers", "HyperND"): ("label diffusion: the reference's features-only diffusion "
                                           "(`model.label_diffusion=false`) 51.92, a pass"),
    # Table A6, hyperedge prediction under the paper protocol
    ("hyperedge (paper)", "cora", "CEGAT"): "the loss: on the scores (`paper-logits` row) it passes",
    ("hyperedge (paper)", "cora", "HyperGCN"): ("the reference's own HyperGCN on its own Cora splits gives 67.54, on "
                                                "ours 69.21, on a mediator graph equal to ours to 1.2e-7: the paper's "
                                                "number is not its code's"),
    ("hyperedge (paper)", "cora", "HNHN"): ("the double-sigmoid loss with the reference's normalisation collapses: "
                                            "DHG-Bench's code run verbatim on our splits 46.76, all five seeds; "
                                            "the paper's text (loss on the scores, HNHN's normalisation) 70.41, a "
                                            "pass"),
    ("hyperedge (paper)", "cora", "UniGCNII"): ("DHG-Bench's own class, head and loop on our task give 66.78 "
                                                "(ours 65.76), 67.63 on its own published splits "
                                                "(hyperedge_reference.md)"),
    ("hyperedge (paper)", "cora", "LEGCN"): _DOUBLE_SIGMOID.format("67.66"),
    ("hyperedge (paper)", "cora", "HyperND"): _DOUBLE_SIGMOID.format("68.80"),
    ("hyperedge (paper)", "cora", "EHNN"): "not located: 2.41 below; the loss on the scores is 2.91 below",
    ("hyperedge (paper)", "cora", "T-HyperGNN"): "the loss: on the scores (`paper-logits` row) it passes",
    ("hyperedge (paper)", "cora-ca", "MLP"): "not located: 4.99 below; the loss on the scores is 13.13 below",
    ("hyperedge (paper)", "cora-ca", "HGNN"): ("DHG-Bench's own class, head and loop on our task give 83.20 (ours "
                                               "84.13; hyperedge_reference.md)"),
    ("hyperedge (paper)", "cora-ca", "HyperGCN"): ("selection on the training positives keeps an almost untrained "
                                                   "model (loss 1.4492 to 1.4482, best epoch 20), as in the "
                                                   "reference's code; no point of any training curve reaches 92.73 "
                                                   "(best 86-87)"),
    ("hyperedge (paper)", "cora-ca", "UniGCNII"): "not located: 3.31 below; the loss on the scores is 17.07 below",
    ("hyperedge (paper)", "cora-ca", "ED-HNN"): "not located: 2.75 above; the loss on the scores is 5.52 above",
    ("hyperedge (paper)", "cora-ca", "HyperND"): "not located: 4.02 below; the loss on the scores is 9.22 below",
    ("hyperedge (paper)", "cora-ca", "HJRL"): _DOUBLE_SIGMOID.format("82.31"),
    ("hyperedge (paper)", "cora-ca", "EHNN"): ("seed noise on the double sigmoid's plateau: DHG-Bench's own class "
                                               "over 10 seeds 75.61 ± 9.58, ours 69.81 ± 8.90 (paired 1.2 standard "
                                               "errors); on the scores 82.77, a pass"),
    ("hyperedge (paper)", "cora-ca", "T-HyperGNN"): "the loss: on the scores (`paper-logits` row) it passes",
    ("hyperedge (paper)", "cora-ca", "HyperGT"): "the loss: on the scores (`paper-logits` row) 65.40, a pass",
    # Table A6 under paper-logits: the paper protocol with the paper's text's loss instead of the reference's
    ("hyperedge (paper-logits)", "cora", "MLP"): _ON_SCORES.format("a pass"),
    ("hyperedge (paper-logits)", "cora", "CEGCN"): _ON_SCORES.format("a pass"),
    ("hyperedge (paper-logits)", "cora", "HyperGCN"): ("selection on the training positives: with "
                                                       "`task.paper_validation=val` as well, 75.88, a pass"),
    ("hyperedge (paper-logits)", "cora", "TF-HNN"): _ON_SCORES.format("a pass"),
    ("hyperedge (paper-logits)", "cora", "HNHN"): ("the reference's normalisation: with HNHN's own "
                                                   "(`model.normalisation=paper`) 70.41, a pass"),
    ("hyperedge (paper-logits)", "cora", "UniGCNII"): ("DHG-Bench's own class with the loss on the scores gives "
                                                       "67.79 (ours 68.11; hyperedge_reference.md)"),
    ("hyperedge (paper-logits)", "cora", "AllSetTransformer"): _ON_SCORES.format("a pass"),
    ("hyperedge (paper-logits)", "cora", "PhenomNN"): _ON_SCORES.format("a pass"),
    ("hyperedge (paper-logits)", "cora", "HJRL"): _ON_SCORES.format("a pass"),
    ("hyperedge (paper-logits)", "cora", "EHNN"): _ON_SCORES.format("76.58, also 2.41 below"),
    ("hyperedge (paper-logits)", "cora-ca", "MLP"): _ON_SCORES.format("66.16, 4.99 below"),
    ("hyperedge (paper-logits)", "cora-ca", "HGNN"): ("DHG-Bench's own class with the loss on the scores gives "
                                                      "81.75 (ours 81.33; hyperedge_reference.md)"),
    ("hyperedge (paper-logits)", "cora-ca", "HyperGCN"): ("no point of any training curve reaches 92.73 (best "
                                                          "86-87); with `task.paper_validation=val` 84.08"),
    ("hyperedge (paper-logits)", "cora-ca", "TF-HNN"): _ON_SCORES.format("a pass"),
    ("hyperedge (paper-logits)", "cora-ca", "UniGCNII"): _ON_SCORES.format("77.28, 3.31 below"),
    ("hyperedge (paper-logits)", "cora-ca", "ED-HNN"): _ON_SCORES.format("77.33, also above"),
    ("hyperedge (paper-logits)", "cora-ca", "LEGCN"): _ON_SCORES.format("a pass"),
    ("hyperedge (paper-logits)", "cora-ca", "HyperND"): _ON_SCORES.format("79.99, 4.02 below"),
    ("hyperedge (paper-logits)", "cora-ca", "PhenomNN"): _ON_SCORES.format("a pass"),
    # Table A8, accuracy
    ("fairness", "bail", "HGNN"): _DATA.format("80.98 / 81.08 (seeds 0-2)"),
    ("fairness", "bail", "HyperGCN"): _DATA.format("90.96 / 87.92 (seeds 0-9; ours collapsed to the majority class "
                                                   "on seed 0, 90.80 on the other nine)"),
    ("fairness", "bail", "HCHA"): _DATA.format("85.75 / 85.82 (seeds 0-2)"),
    ("fairness", "bail", "TF-HNN"): _DATA.format("91.10 / 91.16 (seed 0)"),
    ("fairness", "bail", "HNHN"): ("the normalisation: HNHN's paper's lies above the paper, the reference's "
                                   "(`model.normalisation=allset`, second table) 79.94 below it, as DHG-Bench's own "
                                   "class on our files (77.81 against ours 77.86, seed 0)"),
    ("fairness", "bail", "ED-HNN"): ("input dropout on the [-1, 1] features (the ED-HNN code's order); the "
                                     "reference's order (`model.dropout_order=dhgbench`, second table) gives 92.49, "
                                     "as DHG-Bench's own class (92.96, seed 0)"),
    ("fairness", "bail", "LEGCN"): ("the reference's edgeless expansion (`model.expansion=isolated`, second table): "
                                    "95.37, a pass"),
    ("fairness", "bail", "HyperND"): ("label diffusion: the reference's features-only diffusion "
                                      "(`model.label_diffusion=false`, second table) gives 87.75, a pass (DHG-Bench's "
                                      "own class on our files 80.17, seeds 0-2: it differs from ours there in more)"),
    ("fairness", "bail", "PhenomNN"): ("the data's scale: input dropout on these [-1, 1] features collapses "
                                       "DHG-Bench's class and ours alike (35.75 / 35.37, seeds 0-2); on the same "
                                       "features mapped onto [0, 1] 97.32 / 97.20"),
    ("fairness", "bail", "HyperGT"): _DATA.format("79.13 / 82.96 (seed 0)"),
    ("fairness", "credit", "HNHN"): ("the normalisation: the reference's (`model.normalisation=allset`, second "
                                     "table) gives 78.02, a pass"),
    ("fairness", "credit", "HyperND"): ("label diffusion: DHG-Bench's class (features only) gives 79.19 / 79.33 / "
                                        "79.32 on seeds 0, 1, 4, ours 78.69 / 73.67 / 73.11 (fairness_reference.md); "
                                        "ours features-only (`model.label_diffusion=false`, second table) 79.72, a "
                                        "pass"),
    ("fairness", "credit", "HyperGT"): ("DHG-Bench's code: its class gives 79.67 on seed 0 where ours gives 76.39 "
                                        "(fairness_reference.md); ours with its behaviour (random encodings, no link "
                                        "loss, tau 1, zero hyperedge features; second table) 78.69, a pass"),
    # Table A7, hypergraph classification
    ("graph (paper)", "rhg-10", "HyperGCN"): ("the paper's accuracy cell reads as a misprint: its macro-F1 95.42 "
                                              "needs an accuracy near 95 on this balanced set; ours 95.70 / 95.67, "
                                              "the macro-F1 passes"),
    ("graph (paper)", "rhg-10", "LEGCN"): "DHG-Bench's edgeless expansion (second table): 92.40, the paper's mean",
    ("graph (paper)", "imdb-dir-form", "HGNN"): ("sampling noise: 1.6 standard errors of the difference (188-graph "
                                                 "test sets, one split per seed); HCHA, the same class there, "
                                                 "passes"),
    ("graph (paper)", "steam-player", "CEGCN"): _STEAM,
    ("graph (paper)", "steam-player", "CEGAT"): _STEAM,
    ("graph (paper)", "steam-player", "HGNN"): _STEAM,
    ("graph (paper)", "steam-player", "HCHA"): _STEAM,
    ("graph (paper)", "steam-player", "HNHN"): _STEAM,
    ("graph (paper)", "steam-player", "LEGCN"): ("DHG-Bench's edgeless expansion (second table): 52.62, a pass, at "
                                                 "chance as the paper's column"),
    ("graph (paper)", "steam-player", "DPHGNN"): _STEAM + "; DHG-Bench's code behaviour lies above too (55.63)",
    ("graph (paper)", "steam-player", "HyperGT"): ("DHG-Bench's code (batch-wide attention, tau 1, no link loss, "
                                                   "zero hyperedge features; second table): 54.47, the paper's mean"),
    ("graph (paper)", "twitter-friend", "AllSetTransformer"): ("sampling noise: 1.9 standard errors of the "
                                                               "difference (131-graph test sets, a binomial std "
                                                               "of 4.3 a seed); its macro-F1 passes"),
}

#: the reference-behaviour table's misses, keyed likewise
BEHAVIOUR: dict[tuple[str, str, str], str] = {
    ("fairness", "bail", "ED-HNN"): _DATA.format("92.96 / 93.13 with this option (seed 0)"),
    ("fairness", "bail", "HNHN"): _DATA.format("77.81 / 77.86 with this option (seed 0)"),
    ("fairness", "bail", "HyperGT"): _DATA.format("79.13 / 88.15 with these options (seed 0; ours trained on the "
                                                  "GPU)"),
    ("graph (paper)", "steam-player", "DPHGNN"): _STEAM,
    # the edgeless expansion leaves LEGCN a map of each node's own features (MLP: 66.73 / 66.16): with the loss on
    # the scores (the same options under `--hyperedge-protocol paper-logits`, 5 seeds) 64.14 / 67.24, MLP's level
    ("hyperedge (paper)", "cora", "LEGCN"): _EDGELESS.format("64.14, a pass"),
    ("hyperedge (paper)", "cora-ca", "LEGCN"): _EDGELESS.format("67.24, 7.05 below") + (
        "; our line expansion gives the paper's 74.29 (73.51, the first table), so its Cora-CA number is not the "
        "edgeless code's"),
    ("hyperedge (paper)", "cora-ca", "SheafHyperGNN"): _LOSS_WITH.format("78.89, a pass"),
    ("hyperedge (paper)", "cora-ca", "HyperGT"): _LOSS_WITH.format("64.76, a pass"),
}


def cause(task: str, dataset: str, model: str, behaviour: bool = False) -> str:
    """The entry for a printed row (``task`` with its protocol, as the table prints it), or ``""``."""
    return (BEHAVIOUR if behaviour else MISSES).get((task, dataset, model), "")
