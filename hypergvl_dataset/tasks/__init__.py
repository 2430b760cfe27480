"""The HyperGVL tasks: the paper's 12 (sec. 2.3, appendix C), each with parameter sampling, the exact E.2 question, an exact
solver producing the canonical answer, a tolerant parser and a verifier.

Table 2: VC, HEC, Ne (Level-1); DVC, OEC, ONe (Level-2); OSP, OMF, ISM (Level-3, polynomial); 3-CL, SHC, HHM
(Level-4, NP-hard planning). A task is registered by its paper code with ``@register_task``.

A *meta problem* row (docs/design.md schema, minus text/image columns) is made by :func:`generate_problem`; its
``reference`` column is everything :func:`score_response` needs to verify any response, planning answers included
(the verifier accepts every valid plan, not only the generated one).

The package, one concept a module: :mod:`~hypergvl.tasks.base` (the :class:`Task` abstraction, the values it passes
around and the ``TASKS`` registry with ``@register_task``), :mod:`~hypergvl.tasks.kinds` (the answer kinds and
parameter pickers the tasks share), :mod:`~hypergvl.tasks.understanding` (VC ... ONe),
:mod:`~hypergvl.tasks.reasoning` (OSP ... HHM), :mod:`~hypergvl.tasks.generation` (the meta problem
rows) and :mod:`~hypergvl.tasks.scoring` (reading a reference back and grading a response). Importing this package
registers the twelve tasks in the paper's order; a new task is a ``Task`` subclass decorated ``@register_task`` in
:mod:`~hypergvl.tasks.understanding` or :mod:`~hypergvl.tasks.reasoning`, or in a module of one's own that imports
this package (docs/extending.md). :func:`task_codes` lists every registered task at the time it is called; the
paper's twelve, its understanding and reasoning sets, are named in :mod:`hypergvl.paper`.
"""
from __future__ import annotations

from hypergvl.tasks.base import (ANS, TASKS, Instance, Reference, Task, Verdict, config_name, get_task, register_task,
                                 task_codes)
# the registrations, in the order the registry lists them: importing a module registers its six tasks
from hypergvl.tasks.understanding import DVC, HEC, OEC, VC, Ne, ONe
from hypergvl.tasks.reasoning import HHM, ISM, OMF, OSP, SHC, ThreeColoring, VertexOrder
from hypergvl.tasks.generation import REAL_TRIES, generate_problem, make_instance, problem_rng
from hypergvl.tasks.scoring import parse_reference, score_response

__all__ = ["TASKS", "task_codes", "Task", "Verdict", "register_task",
           "get_task", "generate_problem", "score_response", "parse_reference", "config_name",
           # also imported from here (by the repository or by earlier code against the single module)
           "ANS", "Instance", "Reference", "VertexOrder", "problem_rng", "REAL_TRIES", "make_instance",
           "VC", "HEC", "Ne", "DVC", "OEC", "ONe", "OSP", "OMF", "ISM", "ThreeColoring", "SHC", "HHM"]
