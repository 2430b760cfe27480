"""The HyperGVL paper's fixed sets, named once: its 12 tasks, 7 text and 5 visual representations and their 35 pairs.

The rule (ARCHITECTURE.md, "The paper's sets and the live registries"): these names are used only where the paper's
layout is meant: its published numbers (``hypergvl.evaluators.paper``, Tables 3 and 4), the test bed derived from
Table 4 (``hypergvl.router.testbed``), the definitions of Avg.U and Avg.R, and the default task list of
``hypergvl build`` (the paper's benchmark). Everything else (building the representations, evaluating, scoring,
reporting, the Space's filters and columns, the lmms-eval task files, the router's labels) works over whatever is
registered at the time it runs: ``hypergvl.tasks.task_codes()``, ``hypergvl.text.TEXT_REPS``,
``hypergvl.render.RENDERERS`` and :func:`hypergvl.vqa.combinations`. A task or representation registered beyond
these is built, evaluated, scored and shown in a column of its own; it never enters Avg.U or Avg.R.

Nothing here imports the registries: the names are data, and a test (``tests/test_paper_sets.py``) checks that the
package registers each of them.
"""
from __future__ import annotations

__all__ = ["PAPER_UNDERSTANDING", "PAPER_REASONING", "PAPER_TASKS", "PAPER_TEXT_REPS", "PAPER_VISUAL_REPS",
           "PAPER_COMBINATIONS", "AVERAGES", "AVERAGE_LABELS", "averages", "averaged_over", "is_paper_task"]

#: Table 2, Level-1 and Level-2: the tasks Avg.U averages ("understanding tasks", sec. 3.2, Table 3)
PAPER_UNDERSTANDING: tuple[str, ...] = ("VC", "HEC", "Ne", "DVC", "OEC", "ONe")
#: Table 2, Level-3 and Level-4: the tasks Avg.R averages ("reasoning tasks")
PAPER_REASONING: tuple[str, ...] = ("OSP", "OMF", "ISM", "3-CL", "SHC", "HHM")
#: the paper's twelve tasks in its column order (Table 3)
PAPER_TASKS: tuple[str, ...] = PAPER_UNDERSTANDING + PAPER_REASONING
#: appendix E.1, the textual representations in Table 4's row order
PAPER_TEXT_REPS: tuple[str, ...] = ("lo_inc", "n_pair", "adj_mat", "ho_neigh", "ho_inc", "n_set", "inc_mat")
#: appendix D, the visual representations in Table 4's row order
PAPER_VISUAL_REPS: tuple[str, ...] = ("enc_hy", "bi_inc", "sh_inc", "st_inc", "cli_exp")
#: sec. 2.4, "35 vision-language QA samples" per meta problem: every (text, visual) pair, text-major
PAPER_COMBINATIONS: tuple[tuple[str, str], ...] = tuple((t, v) for t in PAPER_TEXT_REPS for v in PAPER_VISUAL_REPS)

#: the averages a score reports besides per-task accuracy, and the tasks each is taken over: Avg.U and Avg.R are the
#: paper's (its six understanding and six reasoning tasks, whatever else is registered); Avg.Ext is the mean over the
#: tasks the paper lacks (None when a run has none of them). ``accuracy`` ("All") is over every sample of a run.
AVERAGES = {"avg_u": PAPER_UNDERSTANDING, "avg_r": PAPER_REASONING}
AVERAGE_LABELS = {"avg_u": "Avg.U", "avg_r": "Avg.R", "avg_ext": "Avg.Ext"}


def is_paper_task(code: str) -> bool:
    return code in PAPER_TASKS


def averaged_over(tasks) -> dict[str, list[str]]:
    """Which of ``tasks`` (the tasks a run has scores for) each average is taken over: ``avg_u``, ``avg_r`` (the
    paper's that are present), ``avg_ext`` (the rest) and ``accuracy`` (all of them), each in the given order."""
    tasks = list(tasks)
    return {"avg_u": [t for t in tasks if t in PAPER_UNDERSTANDING],
            "avg_r": [t for t in tasks if t in PAPER_REASONING],
            "avg_ext": [t for t in tasks if t not in PAPER_TASKS],
            "accuracy": tasks}


def averages(per_task: dict) -> dict[str, float | None]:
    """``avg_u``, ``avg_r`` and ``avg_ext`` of per-task accuracies (task -> value; a task without a value is left
    out): each the mean over the tasks of its set that have one, None when none has."""
    over = averaged_over([t for t, v in per_task.items() if v is not None])
    out = {}
    for key in ("avg_u", "avg_r", "avg_ext"):
        values = [float(per_task[t]) for t in over[key]]
        out[key] = sum(values) / len(values) if values else None
    return out
