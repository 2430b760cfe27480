"""DHG-Bench's three non-effectiveness studies over every registered model: robustness, fairness, efficiency.

    python -m models.study robustness --datasets cora --kinds remove_incidence feature_noise [--models ...]
        [--ratios 0 0.3 0.6] --runs 5 --out DIR
    python -m models.study fairness [--models ...] [--datasets german bail credit] --runs 5 --out DIR
    python -m models.study efficiency [--models ...] [--datasets cora dblp-ca synthetic-yelp synthetic-trivago]
        [--memory-cap-gib 8] [--scale 1.0] --out DIR
    python -m models.study report --in DIR [DIR ...] --out REPORT_DIR

Sections of DHG-Bench (Li et al., 2025): 3.3 (RQ2-RQ4), 4.2 efficiency (Figure 1), 4.3 robustness (Figures 2-4,
appendix B.4), 4.4 fairness (Figure 5, appendix B.5, Table A8). No study names a model: the default is every
model in :data:`models.nn.MODELS`. ``--set key=value`` overrides reach :mod:`models.train`'s configuration (for
example ``--set epochs=5`` for a quick look); each model's ``models/configs/<MODEL>.yaml`` applies otherwise.

Result folder (``--out DIR``; every study is resumable: a finished point is skipped on rerun)::

    DIR/<study>/points/...json      one point per result (below)
    DIR/<study>/train/...           the trainer's folders behind the points (config.json, runs/, summary.json)

    robustness:  points/<dataset>/<kind>/<model>/r<ratio:.2f>.json
    fairness:    points/<dataset>/<model>.json
    efficiency:  points/<dataset>/<model>.json

Point schema (``schema: "hypergvl.hnn-study.point"``, ``schema_version: 1``; JSON, NaN written as null):

``schema``, ``schema_version``
    the name and version above; a reader refuses another version.
``study``
    ``robustness`` | ``fairness`` | ``efficiency``.
``model``, ``dataset``, ``task``
    registry names; ``task`` is ``node``.
``status``
    ``ok`` | ``oom`` | ``error``. Only ``ok`` points carry ``metrics`` and ``efficiency``; ``oom`` carries ``oom``
    (a sentence) and ``memory_cap_gib``; ``error`` carries ``error`` (the exception, one line).
``runs``, ``seeds``
    number of runs and their seeds (run ``i`` has seed ``i``: split, perturbation, initialisation, dropout).
``metrics``
    ``{"test": {name: {"mean", "std", "values"}}, "val": {...}}`` in percent, std over runs with ddof 0; names
    ``accuracy`` and, on fairness sets, ``delta_dp`` and ``delta_eo``. The model is the one the task selects
    (``select``: the last epoch for node classification, as the reference).
``efficiency``
    ``train_time_to_best_val_s`` and ``epoch_time_s`` (``{"mean", "std", "values"}``, seconds of training steps,
    evaluation excluded), ``time_to_best_val_with_eval_s``, ``best_val_epoch`` and ``epochs_run`` (per run),
    ``peak_memory_mib`` (``{"mean", "std", "values"}``), ``memory_method``, ``time_method``, ``device``; efficiency
    points add ``baseline_rss_mib`` (the subprocess's RSS after loading the data).
``perturbation`` (robustness)
    ``kind``, ``ratio``, ``level`` (structure | feature | supervision), ``unit``, ``options`` (e.g. ``{"by":
    "column"}``), ``perturb_self_loops``, and per run ``changed`` (units changed), ``train_nodes`` and
    ``incidences`` (of the perturbed hypergraph, singletons included).
``memory_cap_gib``, ``memory_cap_method``, ``scale`` (efficiency)
    the cap the subprocess ran under and how it was enforced; the size factor of synthetic hypergraphs.
``dataset_info``
    ``nodes``, ``hyperedges``, ``incidences``, ``mean_order``, ``features``, ``classes``, ``synthetic``,
    ``features_source`` (``raw`` or what replaced absent features) and, for synthetic sets, ``published`` (the
    statistics imitated) and ``note``.
``config``, ``overrides``, ``select``, ``train_dir``
    the trainer's resolved configuration, the ``--set`` overrides, its selection rule and the trainer folder
    (relative to ``DIR/<study>``).
``environment``, ``created``
    torch/python versions, threads, CUDA availability; the UTC time the point was written.

``report`` writes ``report.json`` (``schema: "hypergvl.hnn-study.report"``, same version) with every number of
its tables: the rounded cell as printed and the unrounded mean and std.
"""

from .common import SCHEMA, SCHEMA_VERSION, STUDIES

__all__ = ["SCHEMA", "SCHEMA_VERSION", "STUDIES"]
