"""HyperGVL as an lmms-eval task package: ``lmms-eval --include_path evaluators/lmms_eval --tasks hypergvl``.

The YAML files here are the tasks (one per representation pair, plus the groups); :mod:`.utils` holds their hooks.
See ``README.md`` in this folder.

The task and group files are generated from the registries (:data:`hypergvl.text.TEXT_REPS`,
:data:`hypergvl.vqa.VISUAL_REPS`) by :func:`task_files`: ``python -m hypergvl.evaluators.lmms_eval`` rewrites
them, and ``tests/test_lmms_eval.py`` checks that the shipped ones are current. Only ``_default_template.yaml`` (the
hooks and generation settings every subtask shares) is written by hand."""
from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent
_METRICS = ("accuracy", "avg_u", "avg_r", "unparsed_rate")


# imports inside functions: lmms-eval imports this package with :mod:`.utils` while indexing tasks, so the generator's
# imports (0.3 s) wait for the functions below, which only ``python -m hypergvl.evaluators.lmms_eval`` and a test call.
def task_files() -> dict[str, str]:
    """File name -> content of every generated task and group file."""
    from hypergvl.vqa import TEXT_ONLY, VISUAL_REPS
    from hypergvl.text import TEXT_REPS

    files, members = {}, {"hypergvl": [], "hypergvl_text_only": []}
    for text_rep in TEXT_REPS:
        for visual_rep in (*VISUAL_REPS, TEXT_ONLY):
            name = f"hypergvl_{text_rep}_{visual_rep}"
            files[f"{name}.yaml"] = (f"task: {name}\ninclude: _default_template.yaml\nlmms_eval_specific_kwargs:\n"
                                     f"  default:\n    text_rep: {text_rep}\n    visual_rep: {visual_rep}\n")
            members["hypergvl_text_only" if visual_rep == TEXT_ONLY else "hypergvl"].append(name)
    for group, tasks in members.items():
        files[f"{group}.yaml"] = (
            f"group: {group}\ntask:\n" + "".join(f"  - {t}\n" for t in tasks) + "aggregate_metric_list:\n"
            + "".join(f"  - metric: {m}\n    aggregation: mean\n    weight_by_size: true\n" for m in _METRICS)
            + "metadata:\n  version: !function hypergvl.evaluators.lmms_eval.utils.SCORER_VERSION\n")
    return files


def write_task_files(folder: Path = FOLDER) -> list[str]:
    """Write the generated files into ``folder`` and remove generated-looking ones no registry names any more;
    returns the names that changed."""
    from hypergvl.atomic import sync_files

    return sync_files(folder, task_files(), "hypergvl*.yaml")
