"""Baseline "models" for the harness: ``baseline:random`` (the chance floor) and ``baseline:symbolic``.

``baseline:symbolic`` reads only the prompt, as a model would: it recognises the textual representation, parses it
back into whatever structure it states (:func:`hypergvl.text.parse`), recognises the task and its parameters
from the appendix E.2 question, and answers with the exact solvers. It is perfect on the lossless representations
(N-Set, HO-Neigh, HO-Inc, Inc-Mat); on the vertex-vertex ones (LO-Inc, N-Pair, Adj-Mat) it only sees the clique
expansion, so its failures show what those encodings lose (HyperGVL Observation 11). The header's list of hyperedge
names is deliberately not read (it would give HEC away; see the project notes). ``baseline:random`` gives a
format-valid random answer per task, seeded by the prompt, so it is deterministic. ``baseline:neighbors`` answers the
zero-shot node-classification prompts of ``hypergvl.router.nodeclf`` (HyperGVL appendix G) with the majority label among the
target's known neighbours, read back from the prompt's text representation: an offline reference point.

``baseline:profile[:FILE]`` is the routing test bed: a simulated model that answers a sample right with probability
p(task, scale, text representation, visual representation) read from a profile table (FILE, JSON; the shipped
default ``evaluators/profiles/default.json`` is derived from HyperGVL's Table 4 and Figure 4 by
:func:`hypergvl.router.testbed.default_profile`). It answers through the harness like any model (prompt and image in, text
out): it recognises the sample among the rows of the build it is told about (option ``dataset``: the prompt names
the meta problem and text representation, the PNG's bytes the visual one) and draws u ~ U(0, 1) from (option
``seed``, crc32 of the sample id); u < p gives the row's reference answer, otherwise a format-valid answer the
verifier rejects. So a run is reproducible per (profile, seed, sample id), and runs with other seeds are the
repeated runs of one stochastic model.

Profile format::

    {"format": 1, "name": "...", "p": {"<TASK>": {"small": {"<text_rep>+<visual_rep>": 0.7, ...},
                                                  "medium": {...}, "large": {...}}, ...}}

Every listed task needs all three scales, and every row the same pairs of registered representations (the shipped
default: the paper's 35), with values in [0, 1]. A text-only sample (no image) gets the mean over its text
representation's visual columns; a task or representation the profile does not list gets the mean over the listed
ones (:class:`Profile`), and the ``profile`` routing policy never picks a pair it does not list (not routed).
"""
from __future__ import annotations

import hashlib
import json
import random
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from hypergvl import Hypergraph, solvers, text
from hypergvl.build_folder import dataset_info, load_rows
from hypergvl.tasks import Instance, TASKS, score_response, task_codes
from hypergvl.text import TEXT_REPS
from hypergvl.vqa import VISUAL_REPS, combinations

from .adapters import ModelInfo, Sample, register_adapter

def read_prompt(prompt: str) -> tuple[str, dict, str, str]:
    """(task, params, representation text, representation name) of a HyperGVL prompt: the task is the one whose
    question pattern (:attr:`hypergvl.tasks.Task.pattern`) starts the question, the representation the one whose
    marker the text holds (:func:`hypergvl.text.recognise`)."""
    at = prompt.rfind(" Q: ")
    if at < 0:
        raise ValueError("not a HyperGVL prompt: no question")
    body, question = prompt[:at], prompt[at + 1:]
    for code, task in TASKS.items():
        m = task.pattern.match(question)
        if m:
            return code, {k: int(v) for k, v in m.groupdict().items()}, body, text.recognise(body)
    raise ValueError("not a HyperGVL prompt: unknown question")


def solve_symbolically(prompt: str) -> str:
    """The exact answer to what the prompt states: its text parsed back, its task's solver on that structure."""
    code, params, body, rep = read_prompt(prompt)
    task = TASKS[code]
    h, g = text.parse_ism(rep, body) if task.two_hypergraphs else (text.parse(rep, body), None)
    if task.min_order > 1:  # an order-1 hyperedge the text states for an isolated vertex is not part of the task
        h = Hypergraph(h.num_vertices, [e for e in h.hyperedges if len(e) >= task.min_order])
    return task.solve(Instance(h, params, g))


def random_answer(prompt: str) -> str:
    """A format-valid random answer to the prompt's task (:meth:`hypergvl.tasks.Task.guess`), seeded by the prompt."""
    code, params, body, rep = read_prompt(prompt)
    rng = random.Random(zlib.crc32(prompt.encode()))
    heads = re.findall(r"describes a hypergraph among vertices (.*?),? and (?:among )?hyperedges? (.*?)\.", body)
    n = len(re.findall(r"v\d+", heads[-1][0])) if heads else 10
    m = len(re.findall(r"e\d+", heads[-1][1])) if heads else 10
    return TASKS[code].guess(rng, n, m, params)


_NC_STRUCTURE = re.compile(r"Hypergraph Structure: (?P<text>.*?)\nKnown labels in the subgraph:\n(?P<known>.*?)\n"
                           r"Target Node Content:.*?\nCategories:\n(?P<cats>.*?)\n[^\n]*\Z", re.S)


def majority_neighbor_label(prompt: str) -> str:
    """``baseline:neighbors``: the majority label among v0's labelled neighbours in a node-classification prompt
    (``hypergvl.router.nodeclf``). It reads the prompt back as a model would: the text representation is parsed
    (:func:`hypergvl.text.parse`; every representation states at least the clique expansion, which fixes
    the neighbours), then the known labels and the category list. Ties go to the label more frequent among all
    known nodes, then to the category listed first; with no labelled neighbour the majority of all known labels."""
    m = _NC_STRUCTURE.search(prompt)
    if m is None:
        raise ValueError("not a node-classification prompt")
    body = m["text"]
    h = text.parse(text.recognise(body), body)
    known = {int(v): name.strip() for v, name in re.findall(r"^v(\d+): (.+)$", m["known"], re.M)}
    order = [line.split(": ", 1)[0] for line in m["cats"].splitlines() if ": " in line]
    if not order:
        raise ValueError("not a node-classification prompt: no categories")
    overall = {c: sum(n == c for n in known.values()) for c in order}
    near = {c: sum(known.get(u) == c for u in h.neighbors(0)) for c in order}
    votes = near if any(near.values()) else overall
    return min(order, key=lambda c: (-votes[c], -overall[c], order.index(c)))


PROFILE_FORMAT = 1
PROFILE_SCALES = ("small", "medium", "large")
DEFAULT_PROFILE = Path(__file__).resolve().parent / "profiles" / "default.json"


@dataclass(frozen=True)
class Profile:
    """A validated profile table: ``p(task, scale, text_rep, visual_rep)`` in [0, 1].

    Every row lists the same pairs ``<text_rep>+<visual_rep>`` of registered representations (the shipped default:
    the paper's 35); a registered pair the profile does not list is not routed by the ``profile`` policy
    (:meth:`not_routed`), and a sample shown in it is answered with the mean p over the listed pairs that share its
    text (or visual) representation, over all of them when it shares neither: the profile's average model, as a
    text-only sample gets the mean over its text representation's visual columns. A registered task the profile does
    not list is answered with the mean over its listed tasks' rows at the same scale."""

    name: str
    table: dict  # task -> scale -> "text+visual" -> probability
    source: str = ""

    def __post_init__(self):
        where = self.source or self.name
        if not isinstance(self.table, dict) or not self.table:
            raise ValueError(f"profile {where}: 'p' must be a non-empty object task -> scale -> combination -> p")
        pairs = None
        for task, per in self.table.items():
            if task not in TASKS:
                raise ValueError(f"profile {where}: unknown task {task!r}; tasks are {', '.join(task_codes())}")
            if not isinstance(per, dict) or set(per) != set(PROFILE_SCALES):
                got = sorted(per) if isinstance(per, dict) else type(per).__name__
                raise ValueError(f"profile {where}: task {task} needs exactly the scales "
                                 f"{', '.join(PROFILE_SCALES)}, got {got}")
            for scale, row in per.items():
                if not isinstance(row, dict) or not row:
                    raise ValueError(f"profile {where}: {task}/{scale} must be a non-empty object "
                                     "'<text_rep>+<visual_rep>' -> p")
                unknown = sorted(k for k in row if _split_pair(k) is None)
                if unknown:
                    raise ValueError(f"profile {where}: {task}/{scale} names {unknown[:3]}, not pairs "
                                     "'<text_rep>+<visual_rep>' of registered representations (text: "
                                     f"{', '.join(TEXT_REPS)}; visual: {', '.join(VISUAL_REPS)})")
                if pairs is None:
                    pairs = set(row)
                elif set(row) != pairs:
                    raise ValueError(f"profile {where}: {task}/{scale} must list the same pairs as the other rows "
                                     f"(missing {sorted(pairs - set(row))[:3]}, extra {sorted(set(row) - pairs)[:3]})")
                for label, value in row.items():
                    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                        raise ValueError(f"profile {where}: {task}/{scale}/{label} must be a number in [0, 1], "
                                         f"got {value!r}")

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        """The (text, visual) pairs the profile lists, in :func:`hypergvl.vqa.combinations` order."""
        row = next(iter(next(iter(self.table.values())).values()))
        return tuple(c for c in combinations() if f"{c[0]}+{c[1]}" in row)

    def not_routed(self) -> list[str]:
        """The registered pairs the profile does not list (``text+visual``): the ``profile`` policy never picks them."""
        listed = set(self.pairs)
        return [f"{t}+{v}" for t, v in combinations() if (t, v) not in listed]

    def _row(self, task: str, scale: str) -> dict:
        if scale not in PROFILE_SCALES:
            raise ValueError(f"profile {self.source or self.name} has no scale {scale!r} (it covers "
                             f"{', '.join(PROFILE_SCALES)})")
        if task in self.table:
            return self.table[task][scale]
        rows = [per[scale] for per in self.table.values()]  # a task it does not list: its average task
        return {k: sum(r[k] for r in rows) / len(rows) for k in rows[0]}

    def p(self, task: str, scale: str, text_rep: str, visual_rep: str | None) -> float:
        """The probability of a right answer (``visual_rep`` None: text only, the mean over the visual columns;
        a representation or task the profile does not list: the class docstring's mean)."""
        row = self._row(task, scale)
        keys = [(k, _split_pair(k)) for k in row]
        if any(t == text_rep for _, (t, _) in keys):
            keys = [(k, c) for k, c in keys if c[0] == text_rep]
        if visual_rep is not None and any(v == visual_rep for _, (_, v) in keys):
            keys = [(k, c) for k, c in keys if c[1] == visual_rep]
        return float(sum(row[k] for k, _ in keys) / len(keys))

    def best(self, task: str, scale: str) -> tuple[str, str]:
        """The listed pair with the highest p (first in :func:`hypergvl.vqa.combinations` order among ties)."""
        row = self._row(task, scale)
        return max(self.pairs, key=lambda c: row[f"{c[0]}+{c[1]}"])

    def to_dict(self) -> dict:
        return {"format": PROFILE_FORMAT, "name": self.name, "p": self.table}


def _split_pair(label: str) -> tuple[str, str] | None:
    """``"n_set+enc_hy"`` -> ``("n_set", "enc_hy")`` when both are registered, else None."""
    t, plus, v = str(label).partition("+")
    return (t, v) if plus and t in TEXT_REPS and v in VISUAL_REPS else None


def load_profile(path: str | Path | None = None) -> Profile:
    """A profile JSON file (None: the shipped default), validated; ``ValueError`` naming the problem."""
    path = Path(path) if path else DEFAULT_PROFILE
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read profile {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"profile {path} is not JSON: {exc}") from None
    if not isinstance(obj, dict) or "p" not in obj:
        raise ValueError(f"profile {path} must be an object with 'format' {PROFILE_FORMAT} and a 'p' table")
    if obj.get("format") != PROFILE_FORMAT:
        raise ValueError(f"profile {path} has format {obj.get('format')!r}; this version reads {PROFILE_FORMAT}")
    return Profile(str(obj.get("name") or path.stem), obj["p"], str(path))


def _wrong_answer(prompt: str, reference: str) -> str:
    """A format-valid answer that the verifier rejects (random answers of the task until one is wrong)."""
    for k in range(50):
        try:
            ans = f"Ans: {random_answer(prompt if k == 0 else f'{prompt}#{k}')}"
        except ValueError:
            break
        if not score_response(reference, ans).correct:
            return ans
    ans = json.loads(reference)["answer"]
    for cand in ("No", "Yes", str(int(ans) + 1) if ans.isdigit() else "No path"):
        if not score_response(reference, f"Ans: {cand}").correct:
            return f"Ans: {cand}"
    return "Ans: none"


@dataclass
class ProfileAdapter:
    """``baseline:profile[:FILE]``: right with the profile's probability for the sample (see the module docstring).

    Args:
        profile: the validated table.
        dataset: the build folder (or Hub id) whose samples it is asked: the rows it recognises prompts from.
        seed: the draw's seed (another seed: another run of the same simulated model).
    """

    profile: Profile
    dataset: str
    seed: int = 0
    _by_prompt: dict = field(default_factory=dict, repr=False)
    _by_image: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        try:
            rows = load_rows(self.dataset, dataset_info(self.dataset)["build_sha256"])
        except Exception as exc:  # noqa: BLE001 - UserError and the datasets errors alike
            raise ValueError(f"baseline:profile cannot read dataset {self.dataset!r}: {exc}") from None
        if "reference" not in rows.column_names:
            raise ValueError(f"baseline:profile needs the references: {self.dataset} is a questions-only set")
        text = rows.select_columns([c for c in rows.column_names if not c.startswith("image_")])
        built = [t for t in TEXT_REPS if f"text_{t}" in text.column_names]  # a build lacks those registered after it
        for r in text:
            info = (r["id"], r["task"], r["scale"], r["reference"])
            for t in built:
                self._by_prompt.setdefault(f"{r[f'text_{t}']} {r['question']}", []).append((t, info))
        # lazy: datasets 2.7 s; 'hypergvl router testbed' imports this module for the profiles only
        from datasets import Image

        for v in VISUAL_REPS:
            col = f"image_{v}"
            if col not in rows.column_names:
                continue
            for i, img in enumerate(rows.select_columns([col]).cast_column(col, Image(decode=False))[col]):
                self._by_image.setdefault(hashlib.sha256(img["bytes"]).hexdigest(), []).append((text[i]["id"], v))

    def _locate(self, s: Sample) -> tuple[str, str, str | None, tuple]:
        hits = self._by_prompt.get(s.prompt)
        if not hits:
            raise ValueError("baseline:profile: this prompt is not one of the dataset's samples")
        if s.image is None:
            t, info = hits[0]
            return f"{info[0]}/{t}/none", t, None, info
        data = s.image.get("bytes") if isinstance(s.image, dict) else s.image
        if not isinstance(data, (bytes, bytearray)):
            raise ValueError("baseline:profile reads the image's encoded bytes (PNG), got a decoded image")
        metas = dict(self._by_image.get(hashlib.sha256(data).hexdigest(), []))
        for t, info in hits:
            if info[0] in metas:
                return f"{info[0]}/{t}/{metas[info[0]]}", t, metas[info[0]], info
        raise ValueError("baseline:profile: this image is not one of the dataset's pictures of that problem")

    def answer(self, s: Sample) -> str:
        import numpy as np

        sid, t, v, (meta, task, scale, reference) = self._locate(s)
        u = np.random.default_rng([self.seed, zlib.crc32(sid.encode("utf-8"))]).random()
        if u < self.profile.p(task, scale, t, v):
            return f"Ans: {json.loads(reference)['answer']}"
        return _wrong_answer(s.prompt, reference)

    def generate(self, batch: list[Sample]) -> list[str]:
        return [self.answer(s) for s in batch]

    def info(self) -> ModelInfo:
        return ModelInfo(name=f"baseline:profile:{self.profile.name}@seed{self.seed}", type="baseline",
                         revision=hashlib.sha256(json.dumps(self.profile.table, sort_keys=True).encode()
                                                 ).hexdigest()[:16], num_parameters=0)


@dataclass
class BaselineAdapter:
    kind: str

    def generate(self, batch: list[Sample]) -> list[str]:
        if self.kind == "neighbors":
            out = []
            for s in batch:
                try:
                    out.append(majority_neighbor_label(s.prompt))
                except ValueError as exc:
                    out.append(f"I cannot answer: {exc}")
            return out
        fn = solve_symbolically if self.kind == "symbolic" else random_answer
        out = []
        for s in batch:
            try:
                out.append(f"Ans: {fn(s.prompt)}")
            except (ValueError, solvers.SearchBudgetExceeded) as exc:
                out.append(f"I cannot answer: {exc}")
        return out

    def info(self) -> ModelInfo:
        return ModelInfo(name=f"baseline:{self.kind}", type="baseline", revision=None, num_parameters=0)


BASELINES = ("random", "symbolic", "neighbors", "profile")


def _profile_adapter(arg: str, options: dict) -> ProfileAdapter:
    """``baseline:profile[:FILE][:dataset=DIR][:seed=N]``; ``dataset`` and ``seed`` may also come as adapter options
    (``--model-options`` of the studies, ``model_options=`` of ``evaluate_model``)."""
    unknown = sorted(set(options) - {"dataset", "seed"})
    if unknown:
        raise ValueError(f"baseline:profile takes the options dataset and seed, got {', '.join(unknown)}")
    opts, files = dict(options), []
    for part in filter(None, arg.split(":")):
        key, eq, value = part.partition("=")
        if eq and key in ("dataset", "seed"):
            opts[key] = value
        elif eq:
            raise ValueError(f"baseline:profile: unknown setting {key!r} (dataset=DIR, seed=N)")
        else:
            files.append(part)
    if len(files) > 1:
        raise ValueError(f"baseline:profile takes one profile file, got {', '.join(files)}")
    if not opts.get("dataset"):
        raise ValueError("baseline:profile needs the build it answers: baseline:profile[:FILE]:dataset=DIR")
    try:
        seed = int(opts.get("seed", 0))
        if isinstance(opts.get("seed"), bool) or seed < 0:
            raise ValueError
    except (TypeError, ValueError):
        raise ValueError(f"baseline:profile's seed must be a non-negative integer, got {opts.get('seed')!r}") from None
    return ProfileAdapter(load_profile(files[0] if files else None), str(opts["dataset"]), seed)


@register_adapter("baseline")
def _baseline(rest: str, **options) -> BaselineAdapter | ProfileAdapter:
    kind, _, arg = rest.partition(":")
    if kind == "profile":
        return _profile_adapter(arg, options)
    if rest not in BASELINES:
        raise ValueError(f"unknown baseline {rest!r}; choose "
                         f"{', '.join(f'baseline:{b}' for b in BASELINES)} (profile: baseline:profile[:FILE])")
    if options:
        raise ValueError(f"baselines take no options, got {', '.join(sorted(options))}")
    return BaselineAdapter(rest)


