"""DHG-Bench's three non-effectiveness studies over every registered model: robustness, fairness, efficiency.

    hypergvl study robustness --datasets cora --kinds remove_incidence feature_noise [--models ...]
        [--ratios 0 0.3 0.6] --runs 5 [--seeds K ...] --out DIR
    hypergvl study fairness [--models ...] [--datasets german bail credit] --runs 5 [--seeds K ...] --out DIR
    hypergvl study efficiency [--models ...] [--datasets cora dblp-ca synthetic-yelp synthetic-trivago]
        [--memory-cap-gib 8] [--scale 1.0] --out DIR
    hypergvl study report --in DIR [DIR ...] --out REPORT_DIR

Sections of DHG-Bench (Li et al., 2025): 3.3 (RQ2-RQ4), 4.2 efficiency (Figure 1), 4.3 robustness (Figures 2-4,
appendix B.4), 4.4 fairness (Figure 5, appendix B.5, Table A8). No study names a model: the default is every
model in :data:`hypergvl.models.nn.MODELS`. ``--set key=value`` overrides reach :mod:`hypergvl.models.trainer`'s configuration (for
example ``--set epochs=5`` for a quick look); each model's ``models/configs/<MODEL>.yaml`` applies otherwise.

Result folder (``--out DIR``; every study is resumable per seed: a seed with a finished point is skipped on rerun,
so a killed study recomputes only the seeds it had not finished; ``--seeds`` trains only the named seeds of each
cell, to split a cell over processes or machines writing to one folder)::

    DIR/<study>/points/...json      one point per (study, model, dataset, setting, seed) (below)
    DIR/<study>/train/...           the trainer's folders behind the points (config.json, runs/, summary.json)

    robustness:  points/<dataset>/<kind>/<model>/r<ratio:.2f>/seed<k>.json
    fairness:    points/<dataset>/<model>/seed<k>.json
    efficiency:  points/<dataset>/<model>/seed<k>.json      (each seed in its own subprocess)

Point schema (``schema: "hypergvl.hnn-study.point"``, ``schema_version: 2``; JSON, NaN written as null). A reader
groups the files of a cell (same study, model, dataset and, for robustness, ``perturbation.kind`` and ``ratio``)
and aggregates over their seeds (:func:`hypergvl.models.study.common.aggregate`: mean and population std, ddof 0):

``schema``, ``schema_version``
    the name and version above; a reader refuses versions other than 1 and 2.
``study``
    ``robustness`` | ``fairness`` | ``efficiency``.
``model``, ``dataset``, ``task``
    registry names; ``task`` is ``node``.
``seed``
    the run's seed (split, perturbation, initialisation, dropout); seeds of a cell are ``0..runs-1``.
``status``
    ``ok`` | ``oom`` | ``error``. Only ``ok`` points carry ``metrics`` and ``efficiency``; ``oom`` carries ``oom``
    (a sentence) and ``memory_cap_gib``; ``error`` carries ``error`` (the exception, one line). A cell stops at
    its first seed that is not ``ok``; the cell then takes that status.
``metrics``
    ``{"test": {name: value}, "val": {...}}`` in percent; names ``accuracy`` and, on fairness sets, ``delta_dp``
    and ``delta_eo``. The model is the one the task selects (``select``: the last epoch for node classification,
    as the reference).
``efficiency``
    ``train_time_to_best_val_s`` and ``epoch_time_s`` (seconds of training steps, evaluation excluded),
    ``time_to_best_val_with_eval_s``, ``best_val_epoch``, ``epochs_run``, ``peak_memory_mib``, ``memory_method``,
    ``time_method``, ``device``; efficiency points add ``baseline_rss_mib`` (the subprocess's RSS after loading
    the data).
``perturbation`` (robustness)
    ``kind``, ``ratio``, ``level`` (structure | feature | supervision), ``unit``, ``options`` (e.g. ``{"by":
    "column"}``), ``perturb_self_loops``, and ``changed`` (units changed), ``train_nodes`` and ``incidences`` (of
    the perturbed hypergraph, singletons included).
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
``provenance``
    :func:`hypergvl.provenance.provenance` of the process that trained the seed's run (commit, dirty
    flag, package versions, resolved config, command line, seeds, device). Points written before it existed lack
    it (readers use :func:`hypergvl.provenance.of`, ``{}`` for them); the shipped ones in
    ``space/seed_studies`` carry a backfilled record with ``commit: null`` and ``pre_provenance: true``.

Version 1 (still read, no longer written) kept one file per cell, ``points/<dataset>/<model>.json`` (robustness:
``.../<model>/r<ratio:.2f>.json``), with ``runs`` and ``seeds`` instead of ``seed``, every metric and timing as
``{"mean", "std", "values"}`` over the seeds and the per-seed perturbation fields as lists: the layout
:func:`~hypergvl.models.study.common.aggregate` produces. A version-1 cell counts as finished when it has at least
``--runs`` runs; version-2 seed files of the same cell take precedence over it.

``report`` writes ``report.json`` (``schema: "hypergvl.hnn-study.report"``, same version) with every number of
its tables: the rounded cell as printed and the unrounded mean and std.
"""

# Read by the command line before it loads torch (``hypergvl study --help``, the defaults of ``--datasets``), so
# this module imports nothing: importing the studies' modules loads torch, PyG and the dataset catalogue (4-9 s).
STUDIES = ("robustness", "fairness", "efficiency")
FAIRNESS_DATASETS = ("german", "bail", "credit")
EFFICIENCY_DATASETS = ("cora", "dblp-ca", "synthetic-yelp", "synthetic-trivago")

__all__ = ["STUDIES", "FAIRNESS_DATASETS", "EFFICIENCY_DATASETS"]
