"""Problem generation: one meta problem row (docs/design.md schema, minus the image columns) of a task, seed, scale
and source. Each row draws from its own random stream (:func:`problem_rng`); real rows sample the real sources in
turn until one yields an instance the task accepts."""
from __future__ import annotations

import json
import zlib

import numpy as np

from hypergvl import generators, text
from hypergvl.tasks.base import Instance, get_task

def problem_rng(seed: int, task: str, scale: str, source: str, index: int | None) -> np.random.Generator:
    """Independent stream per (seed, task, scale, source, index): a row never depends on the rows built before it.

    The seed keeps its full width: a seed of 2**32 or more appends its high 32-bit words to the key, so a 62-bit
    secret builds another set than its low 32 bits, while every seed below 2**32 keeps the five-word key (and so the
    bytes) that every published build was made with."""
    key = [int(seed), zlib.crc32(task.encode()), zlib.crc32(scale.encode()), zlib.crc32(source.encode()),
           -1 if index is None else int(index)]
    words = [k & 0xFFFFFFFF for k in key]
    high = int(seed) >> 32 if int(seed) > 0 else 0
    while high:
        words.append(high & 0xFFFFFFFF)
        high >>= 32
    return np.random.default_rng(np.random.SeedSequence(words))


REAL_TRIES = 60  # sub-hypergraphs drawn per real source before handing over to the next source


def make_instance(code: str, seed: int, scale: str, source: str = "synthetic", index: int | None = None,
                  real_source: str | None = None, variant: int | None = None,
                  real_sources: tuple[str, ...] | None = None) -> tuple[Instance, str]:
    """(instance with parameters, origin name) of one meta problem. ``index`` seeds the row's own random stream;
    ``variant`` (default ``index``) picks a balanced variant where a task has one (ISM: even = Yes). Real rows
    sample ``real_source`` first, then the other ``real_sources`` (default ``sources.DEFAULT_SOURCES``) in order
    (B.2: "we repeat the sampling until the sampled hypergraph meets the requirements")."""
    variant = index if variant is None else variant
    task = get_task(code)
    generators.check_scale(scale)
    rng = problem_rng(seed, code, scale, source, index)
    if source == "synthetic":
        inst = task.synthetic(scale, rng, variant)
        origin = {"3-CL": "planted-3cl", "SHC": "planted-shc", "HHM": "planted-hhm"}.get(code, "random")
    elif source == "real":
        from hypergvl import sources  # real sources (0.4 s): only for real hypergraphs

        order = list(real_sources or sources.DEFAULT_SOURCES)
        if real_source is not None:
            order = [real_source] + [o for o in order if o != real_source]
        inst = None
        for name in order:  # a source that cannot serve the task (e.g. too sparse for HHM) hands over to the next
            try:
                inst = sources.sample_instance(name, scale, rng, lambda h: task.from_real(h, rng, variant),
                                               max_tries=REAL_TRIES)
            except RuntimeError:
                continue
            origin = sources.get_source(name).origin
            break
        if inst is None:
            raise RuntimeError(f"no real source among {', '.join(order)} yields a {scale} {code} instance "
                               f"in {REAL_TRIES} samples each")
    else:
        raise ValueError(f"unknown source {source!r}; choose synthetic or real")
    params = task.sample_params(inst, rng)
    return Instance(inst.hypergraph, params, inst.hypergraph2, inst.hint), origin


def generate_problem(code: str, seed: int, scale: str = "small", source: str = "synthetic",
                     index: int | None = None, real_source: str | None = None, variant: int | None = None,
                     real_sources: tuple[str, ...] | None = None) -> dict:
    """One meta problem as a row of the docs/design.md schema, without the image columns."""
    task = get_task(code)
    inst, origin = make_instance(code, seed, scale, source, index, real_source, variant, real_sources)
    answer = task.solve(inst)
    h, h2 = inst.hypergraph, inst.hypergraph2
    reference = {"task": code, "hypergraph": json.loads(h.to_json()),
                 "hypergraph2": json.loads(h2.to_json()) if h2 is not None else None,
                 "params": inst.params, "answer": answer}
    return {
        "id": f"{code}-{(index if index is not None else seed) % 100000:05d}",
        "task": code,
        "level": task.level,
        "source": source,
        "origin": origin,
        "scale": scale,
        "num_vertices": h.num_vertices,
        "num_hyperedges": h.num_hyperedges,
        "hypergraph": h.to_json(),
        "hypergraph2": h2.to_json() if h2 is not None else "",
        "params": json.dumps(inst.params, sort_keys=True),
        "question": task.question(inst.params),
        "answer": answer,
        "reference": json.dumps(reference, sort_keys=True, separators=(",", ":")),
        **text.text_columns(h, h2),
    }



