"""The HyperGVL paper's own numbers, shipped as data (``paper_results.json`` beside this file), typed and validated here.

HyperGVL (arXiv 2604.15648) Table 3, "Model performance (Acc) on HyperGVL benchmark": 12 LVLMs (and the paper's
Average row) x 12 tasks + Avg.U / Avg.R, "with results averaged across all hypergraph representation combinations"
(sec. 3.2); Table 4, "Average performance (Acc) with different hypergraph representations": 7 textual and 5 visual
representations in three families, each with its family average row (sec. 3.4); sec. 3.3, the LVLM-vs-LLM
comparison, which the paper gives as a figure only (Fig. 3): the file records the pairs and the claim, no numbers.

The cells are the paper's as printed, never corrected. Where its averages do not recompute from its cells the file
says so (``recomputation``), and :func:`load` checks that record against the cells, so a mistyped cell is an error.
These numbers are shown beside this project's scores and never mixed with them: the Space's "Reported in the paper"
tab and ``hypergvl report RUN --paper`` both read them through :func:`load` and :func:`match`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hypergvl.paper import PAPER_REASONING, PAPER_TASKS, PAPER_UNDERSTANDING

PATH = Path(__file__).with_name("paper_results.json")
COLUMNS = (*PAPER_TASKS, "Avg.U", "Avg.R")  # Table 3's and Table 4's columns: the paper's, whatever is registered
#: a printed average "recomputes" when it is the mean of its cells rounded to the paper's two decimals
TOLERANCE = 0.005 + 1e-9
#: name parts a checkpoint or API id adds to the paper's model name ("-Instruct", "-it", "-hf", dates, versions)
_SUFFIX = re.compile(r"instruct|it|hf|chat|preview|latest|\d+")


@dataclass(frozen=True)
class Row:
    name: str  # the model or representation as the paper spells it
    kind: str  # Table 3: open-source LVLM, closed-source LVLM, average; Table 4: textual, visual, family average
    cells: dict  # COLUMNS -> accuracy (%)
    family: str | None = None  # Table 4: V-V, V-E or Set-Based


@dataclass(frozen=True)
class Table:
    number: int
    caption: str
    row_label: str
    setting: str
    rows: tuple[Row, ...]
    recomputation: dict

    def row(self, name: str) -> Row:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"Table {self.number} has no row {name!r}; rows: {', '.join(r.name for r in self.rows)}")


@dataclass(frozen=True)
class Paper:
    source: dict  # title, authors, arxiv_id, url, transcribed_from
    unit: str
    tables: dict  # number -> Table
    llm_comparison: dict  # section, figure, pairs [{lvlm, llm}], claim, numbers

    def citation(self) -> str:
        s = self.source
        return f"{s['title']} (arXiv {s['arxiv_id']}, {s['url']})"


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


def recomputed(table: Table) -> dict:
    """What the table's cells say about its averages: the rows whose Avg.U (Avg.R) is not the mean of their six
    understanding (reasoning) cells, and for each summary row the columns where it is not the mean of its rows."""
    out = {"avg_u_differs": [], "avg_r_differs": [], "summary_rows": []}
    for r in table.rows:
        for key, col, tasks in (("avg_u_differs", "Avg.U", PAPER_UNDERSTANDING),
                                 ("avg_r_differs", "Avg.R", PAPER_REASONING)):
            if abs(mean(r.cells[t] for t in tasks) - r.cells[col]) > TOLERANCE:
                out[key].append(r.name)
    for s in table.recomputation["summary_rows"]:
        members = [table.row(n) for n in s["mean_of"]]
        off = [c for c in COLUMNS if abs(mean(m.cells[c] for m in members) - table.row(s["row"]).cells[c]) > TOLERANCE]
        out["summary_rows"].append({"row": s["row"], "mean_of": list(s["mean_of"]), "columns_differ": off})
    return out


def _table(raw: dict) -> Table:
    rows = []
    for r in raw["rows"]:
        if set(r["cells"]) != set(COLUMNS):
            raise ValueError(f"Table {raw['table']} row {r['name']!r}: columns {sorted(r['cells'])}, "
                             f"expected {list(COLUMNS)}")
        bad = {c: v for c, v in r["cells"].items() if not isinstance(v, (int, float)) or not 0 <= v <= 100}
        if bad:
            raise ValueError(f"Table {raw['table']} row {r['name']!r}: not an accuracy in [0, 100]: {bad}")
        rows.append(Row(r["name"], r["kind"], {c: float(r["cells"][c]) for c in COLUMNS}, r.get("family")))
    table = Table(raw["table"], raw["caption"], raw["row_label"], raw["setting"], tuple(rows), raw["recomputation"])
    found = recomputed(table)
    recorded = {k: table.recomputation[k] for k in found}
    if found != recorded:
        raise ValueError(f"Table {table.number}: the recorded recomputation {recorded} does not match the cells, "
                         f"which give {found}")
    return table


@lru_cache(maxsize=None)
def load(path: Path = PATH) -> Paper:
    """The shipped paper rows, validated: every row has the 12 tasks + Avg.U + Avg.R as accuracies in [0, 100], and
    the recorded recomputation of the averages matches the cells (``ValueError`` naming the table otherwise)."""
    try:
        raw = json.loads(Path(path).read_text())
        tables = {t["table"]: _table(t) for t in raw["tables"]}
        paper = Paper(raw["source"], raw["unit"], tables, raw["llm_comparison"])
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a paper results file (missing or malformed {exc})") from None
    if sorted(tables) != [3, 4]:
        raise ValueError(f"{path}: expected Tables 3 and 4, got {sorted(tables)}")
    return paper


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def match(model: str) -> Row | None:
    """The Table 3 row of the paper's model that ``model`` names, or None: the run's name without its adapter prefix
    and organisation (``hf:Qwen/Qwen2.5-VL-7B-Instruct`` -> ``Qwen2.5-VL-7B-Instruct``), letters and digits only,
    equals the paper's name after dropping trailing parts a checkpoint adds (``-Instruct``, ``-it``, ``-hf``, a date),
    so ``google/gemma-3-12b-it`` is Gemma3-12B and ``gpt-4o-2024-08-06`` GPT-4o, but ``gpt-4o-mini`` is none."""
    base = model.split(":", 1)[-1].rsplit("/", 1)[-1]
    parts = [p for p in re.split(r"[^A-Za-z0-9.]+", base) if p]
    wanted = {_norm(r.name): r for r in load().tables[3].rows if r.kind != "average"}
    while parts:
        hit = wanted.get(_norm("".join(parts)))
        if hit is not None:
            return hit
        if not _SUFFIX.fullmatch(parts[-1].lower()):
            return None
        parts.pop()
    return None
