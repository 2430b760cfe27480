"""HyperGVL: hypergraph understanding and reasoning tasks for vision-language models.

``Hypergraph`` -> task instance (params, answer) -> representations (text, image) -> rows -> responses ->
verification. Each stage is a pure function of the previous one plus a seed.
"""
from .hypergraph import Hypergraph
from .tasks import TASKS, generate_problem, get_task, score_response

__all__ = ["Hypergraph", "TASKS", "generate_problem", "get_task", "score_response"]
__version__ = "0.1.0"


def expand(dataset, text_reps=None, visual_reps=None, *, decode_images=True):
    """Meta-problem rows -> 35 vision-language QA samples each (see :func:`hypergvl_dataset.builder.expand`)."""
    from .builder import expand as _expand

    return _expand(dataset, text_reps, visual_reps, decode_images=decode_images)


__all__.append("expand")
