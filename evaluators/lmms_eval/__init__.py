"""HyperGVL as an lmms-eval task package: ``lmms-eval --include_path evaluators/lmms_eval --tasks hypergvl``.

The YAML files here are the tasks (one per representation pair, plus the groups); :mod:`.utils` holds their hooks.
See ``README.md`` in this folder."""
