"""A build's meta-problem rows as vision-language QA samples: one per (text, visual) representation pair.

HyperGVL sec. 2.4: "each meta problem p corresponds to 35 vision-language QA samples with varying hypergraph
representations" (7 text x 5 visual; :data:`hypergvl.paper.PAPER_COMBINATIONS`). Here a row gives one sample per
pair of the representations registered now and present in its build (:func:`combinations`), the paper's 35 when
nothing else is registered. Sec. 3.3 asks the LLMs the text alone: :data:`TEXT_ONLY`. The harness, the lmms-eval
tasks, the Space's browser and :func:`hypergvl.expand` all read samples through :func:`expand`.
"""
from __future__ import annotations

from typing import Iterator, Sequence

from .render import RENDERERS
from .text import TEXT_REPS

__all__ = ["VISUAL_REPS", "TEXT_ONLY", "combinations", "built_reps", "ExpandedDataset", "expand"]

#: the registered visual representations (the live registry, as :data:`TEXT_REPS` is for the text ones); each
#: carries its label (:func:`hypergvl.render.visual_labels`); listing them imports no drawing library
VISUAL_REPS = RENDERERS
TEXT_ONLY = "none"  # the visual "representation" of a text-only sample (an LLM's prompt, HyperGVL sec. 3.3)


def combinations() -> tuple[tuple[str, str], ...]:
    """Every (text_rep, visual_rep) pair registered now, text-major in registration order: the order of the routing
    policies' ties and of a PRM's labels (the paper's 35 first when a representation is added after them)."""
    return tuple((t, v) for t in TEXT_REPS for v in VISUAL_REPS)


class ExpandedDataset:
    """Vision-language QA samples of meta-problem rows, one per (text, visual) representation pair, made on access.

    ``len`` is rows x text_reps x visual_reps; item ``k`` holds ``id``, ``meta_id``, ``task``, ``text_rep``,
    ``visual_rep``, ``prompt`` (text representation, then the question), ``image`` and ``reference``. Nothing is
    copied: each item reads its row's one image column from the underlying dataset.

    ``visual_reps=("none",)`` (:data:`TEXT_ONLY`) gives text-only samples (``image`` None) for LLMs (HyperGVL sec.
    3.3). With ``decode_images=False`` an image is its encoded PNG bytes (for a server that takes the PNG as is, or
    a loader that decodes in a worker). A questions-only build (:mod:`hypergvl.questions`) has no
    ``reference`` column: its samples carry ``reference`` None."""

    def __init__(self, dataset, text_reps: Sequence[str], visual_reps: Sequence[str], decode_images: bool = True):

        for r in text_reps:
            if r not in TEXT_REPS:
                raise ValueError(f"unknown text representation {r!r}; choose from {', '.join(TEXT_REPS)}")
        for r in visual_reps:
            if r not in (*VISUAL_REPS, TEXT_ONLY):
                raise ValueError(f"unknown visual representation {r!r}; choose from {', '.join(VISUAL_REPS)} "
                                 f"or {TEXT_ONLY} (text only)")
        if TEXT_ONLY in visual_reps and len(visual_reps) > 1:
            raise ValueError(f"visual representation {TEXT_ONLY!r} (text only) cannot be combined with images")
        if not text_reps or not visual_reps:
            raise ValueError("need at least one text and one visual representation")
        self.dataset, self.text_reps, self.visual_reps = dataset, tuple(text_reps), tuple(visual_reps)
        self._per_row = len(self.text_reps) * len(self.visual_reps)
        columns = getattr(dataset, "column_names", None) or (list(dataset[0]) if len(dataset) else [])
        if columns:
            missing = [c for c in [f"text_{r}" for r in self.text_reps]
                       + [f"image_{r}" for r in self.visual_reps if r != TEXT_ONLY] if c not in columns]
            if missing:
                raise ValueError(f"the build has no column {', '.join(missing)} (built before that representation "
                                 "was registered?); rebuild it, or choose among the representations it has")
        self.has_references = "reference" in columns
        base = ["id", "task", "question"] + ["reference"] * self.has_references + [f"text_{r}" for r in self.text_reps]
        select = hasattr(dataset, "select_columns")
        self._text_view = dataset.select_columns(base) if select else dataset
        self._image_views = {}
        for r in self.visual_reps:
            if r == TEXT_ONLY:
                continue
            view = dataset.select_columns([f"image_{r}"]) if select else dataset
            if not decode_images and select:
                # lazy: datasets 2.7 s; 'hypergvl --help' imports this module
                from datasets import Image

                view = view.cast_column(f"image_{r}", Image(decode=False))
            self._image_views[r] = view
        self._decode = decode_images
        self._last_row: tuple[int, dict | None] = (-1, None)

    def __len__(self) -> int:
        return len(self.dataset) * self._per_row

    @property
    def meta_ids(self) -> list[str]:
        if not hasattr(self, "_ids"):
            self._ids = self._text_view["id"]
        return self._ids

    def sample_id(self, k: int) -> str:
        """``<meta id>/<text rep>/<visual rep>`` of sample ``k`` without reading the row."""
        row, t, v = self.locate(k)
        return f"{self.meta_ids[row]}/{t}/{v}"

    def index(self, row: int, text_rep: str, visual_rep: str) -> int:
        """The sample number of row ``row`` shown as (``text_rep``, ``visual_rep``): the inverse of :meth:`locate`."""
        return (row * len(self.text_reps) + self.text_reps.index(text_rep)) * len(self.visual_reps) \
            + self.visual_reps.index(visual_rep)

    def locate(self, k: int) -> tuple[int, str, str]:
        if not -len(self) <= k < len(self):
            raise IndexError(k)
        k %= len(self)
        row, rest = divmod(k, self._per_row)
        t, v = divmod(rest, len(self.visual_reps))
        return row, self.text_reps[t], self.visual_reps[v]

    def __getitem__(self, k: int) -> dict:
        row_idx, t, v = self.locate(k)
        cached = self._last_row  # a row's samples are consecutive: read its text columns once
        if cached[0] == row_idx:
            row = cached[1]
        else:
            row = self._text_view[row_idx]
            self._last_row = (row_idx, row)  # one tuple assignment: safe for the prefetch threads
        image = None
        if v != TEXT_ONLY:
            image = self._image_views[v][row_idx][f"image_{v}"]
            if not self._decode and isinstance(image, dict):
                image = image["bytes"]
        return {"id": f"{row['id']}/{t}/{v}", "meta_id": row["id"], "task": row["task"], "text_rep": t,
                "visual_rep": v, "prompt": f"{row[f'text_{t}']} {row['question']}",
                "image": image, "reference": row.get("reference")}

    def __iter__(self) -> Iterator[dict]:
        for k in range(len(self)):
            yield self[k]

    def references(self) -> list[str]:
        """The ``reference`` of every sample, in order, without decoding any image (for the metric)."""
        if not self.has_references:
            raise ValueError("a questions-only build has no references")
        refs = self._text_view["reference"]
        return [r for r in refs for _ in range(self._per_row)]

    def to_iterable_dataset(self):
        """The samples as a ``datasets.IterableDataset`` (streams; nothing materialised)."""
        # lazy: datasets 2.7 s; 'hypergvl --help' imports this module
        import datasets

        return datasets.IterableDataset.from_generator(self.__iter__)


def _columns(dataset) -> list[str] | None:
    names = getattr(dataset, "column_names", None)
    if names is None and hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__"):
        names = list(dataset[0]) if len(dataset) else None
    return None if names is None else list(names)


def built_reps(dataset) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The registered text and visual representations a build's rows have columns for (``text_<rep>``,
    ``image_<rep>``), in registration order: a build made before a representation was registered lacks it."""
    names = _columns(dataset)
    if names is None:
        return tuple(TEXT_REPS), tuple(VISUAL_REPS)
    cols = set(names)
    return (tuple(r for r in TEXT_REPS if f"text_{r}" in cols), tuple(r for r in VISUAL_REPS if f"image_{r}" in cols))


def expand(dataset, text_reps: Sequence[str] | None = None, visual_reps: Sequence[str] | None = None, *,
           decode_images: bool = True) -> ExpandedDataset:
    """Turn meta-problem rows into VQA samples: by default one per pair of the registered representations the build
    has (the paper's 35: 7 text x 5 visual representations, when nothing else is registered).

    ``visual_reps=["none"]`` gives the text-only samples an LLM is asked (HyperGVL sec. 3.3)."""
    if not text_reps or not visual_reps:
        built_text, built_visual = built_reps(dataset)
        text_reps, visual_reps = text_reps or built_text, visual_reps or built_visual
    return ExpandedDataset(dataset, text_reps, visual_reps, decode_images=decode_images)
