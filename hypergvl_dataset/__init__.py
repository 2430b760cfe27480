"""HyperGVL: hypergraph understanding and reasoning tasks for vision-language models.

``Hypergraph`` -> task instance (params, answer) -> representations (text, image) -> rows -> responses ->
verification. Each stage is a pure function of the previous one plus a seed.

This package (the repository's ``hypergvl_dataset/``) is the namespace of the whole suite: the layers above it are
its subpackages ``hypergvl.models`` (``models/``), ``hypergvl.evaluators``, ``hypergvl.router`` and
``hypergvl.space``. Its names are imported when first used, so that ``import hypergvl.models`` does not pay for
the task generators (networkx) it never needs.
"""
__all__ = ["Hypergraph", "TASKS", "generate_problem", "get_task", "score_response", "expand"]
# imports inside functions: every layer imports this package; the task generators (networkx, 0.4 s) wait for a use
__version__ = "0.1.0"


def __getattr__(name: str):
    if name == "Hypergraph":
        from .hypergraph import Hypergraph

        return Hypergraph
    if name in ("TASKS", "generate_problem", "get_task", "score_response"):
        from . import tasks

        return getattr(tasks, name)
    raise AttributeError(f"module 'hypergvl' has no attribute {name!r}")


def expand(dataset, text_reps=None, visual_reps=None, *, decode_images=True):
    """Meta-problem rows -> a vision-language QA sample per registered representation pair each (35 over the paper's
    representations; see :func:`hypergvl.vqa.expand`)."""
    from .vqa import expand as _expand

    return _expand(dataset, text_reps, visual_reps, decode_images=decode_images)
