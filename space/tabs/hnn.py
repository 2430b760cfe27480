"""The HNN tab: every shipped row of the DHG-Bench reproduction (ours beside the paper's, read from the shipped
per-seed points), the robustness axis (the paper's statements about it beside our measurement, and the panels of
Figures 2-4, from the shipped robustness points), then the tables and figures of the configured
``hypergvl.models.study`` result folders."""
from __future__ import annotations

import json
import statistics
import threading
import time
from pathlib import Path

import gradio as gr

from hypergvl.models.study import paper as P

from ..service import Service
from .base import OnLoad, Page, figures_dir, register_tab

_HNN_CACHE: dict = {}
_HNN_LOCK = threading.Lock()


HNN_SECTIONS = ("effectiveness", "fairness", "efficiency", "robustness")
ALL = "all"
#: in ``SpaceConfig.reproduction_dir`` (a checkout's ``benchmarks/results``, a deployed bundle's ``reproduction/``):
#: the shipped per-seed points of the trained reproduction rows (``benchmarks/reproduce_dhgbench.py --points``; the
#: fairness rows read the configured study folders' ``fairness/points``) and the fairness study's points of the rows
#: trained with DHG-Bench's code behaviour (the second table's fairness rows)
REPRODUCTION_POINTS, REPRODUCTION_BEHAVIOUR_FAIRNESS = "points", "fairness_dhgbench"
#: the claim table's columns (``robustness_claims`` of the report's ``report.json``)
CLAIM_COLUMNS = ["dataset", "section", "about", "the paper", "measured here", "verdict"]
#: the report's figures that have a panel of their own (an image as wide as the page), with the paper's figure each
#: reproduces; a figure the report adds beyond these goes to the "other figures" gallery
ROBUSTNESS_PANELS = {"robustness_structure.png": "Figure 2: structure robustness (hyperlinks removed / added)",
                     "robustness_feature.png": "Figure 3: feature robustness (noise / masking)",
                     "robustness_supervision.png": "Figure 4: supervision robustness (label noise / sparsity)"}
STUDY_PANELS = {"efficiency.png": "Figure 1: training time vs accuracy, marker area = peak memory",
                "fairness_ranks.png": "Figure 5: average ranks on Acc, ΔDP, ΔEO"}
_CLAIM_KEYS = ["dataset", "section", "about", "quote", "measured", "verdict"]
REPRODUCTION_COLUMNS = ["task", "dataset", "model", "options", "metric", "ours", "paper", "diff", "result", "flag",
                        "seeds", "commit"]
NOT_COUNTED = "not counted (a seed without a recorded commit)"
_METRIC = {"node": "accuracy", "hyperedge": "auroc", "graph": "accuracy", "fairness": "accuracy"}
_REPRO_CACHE: dict = {}
_REPRO_LOCK = threading.Lock()
#: how often (seconds) the tab looks again at the study and point files (some 1,500 of them: a walk and a ``stat``
#: each). Looking on every page load was 45% of the server's time under 50 visitors (py-spy, benchmarks/space_load.py);
#: the files are shipped with the Space and change only when an operator replaces them
RESCAN_S = 30.0


def _stamp(cache: dict, key: tuple, scan) -> tuple:
    """``(key, scan())``: what the files under ``key`` look like now, where ``scan`` walks them; the walk is done
    again only when ``key`` changes or :data:`RESCAN_S` seconds have passed since the last one (kept in ``cache``)."""
    now = time.monotonic()
    seen = cache.get("seen")
    if seen is None or seen[0] != key or now - seen[1] >= RESCAN_S:
        seen = (key, now, scan())
        cache["seen"] = seen
    return key, seen[2]


def _folder_task(folder: str) -> tuple[str, str]:
    """``("hyperedge (paper-logits)", "+dhgbench")`` from a points folder name as the reproduction script writes
    it (``<task>[-<protocol>][+dhgbench]``)."""
    name, plus, suffix = folder.partition("+")
    task, _, protocol = name.partition("-")
    return (f"{task} ({protocol})" if protocol else task), (plus + suffix)


def _row(task: str, label: str, dataset: str, model: str, options: str, docs: list[dict]) -> dict:
    """One reproduction row from its seeds' points: mean ± population std of the task's metric beside the paper's
    cell, the pass rule (:func:`hypergvl.models.study.paper.within`), the degenerate flag and the commits."""
    metric = _METRIC[task]
    docs = sorted(docs, key=lambda d: d.get("seed", 0))
    tests = [d["metrics"]["test"] for d in docs]
    values = [t[metric] for t in tests]
    ours = (statistics.fmean(values), statistics.pstdev(values))
    if task == "fairness":
        ref, oom = P.paper_value(model, dataset, metric), P.paper_oom(model, dataset)
    else:
        ref = P.paper_table(task).get(dataset, {}).get(metric, {}).get(model)
        oom = False
    classes = None
    if task == "graph":
        from hypergvl.models.datasets.registry import get_spec  # the dataset package imports torch (5.4 s, loaded machine)
        classes = get_spec(dataset).paper_stats.get("classes")
    flag = P.degenerate_note(task, tests, metric, classes)
    if ref is None:
        result = "paper OOM" if oom else "no paper number"
    else:
        result = "pass" if P.within(ours[0], ref) else "miss"
        result = "degenerate" if result == "pass" and flag else result
    recs = [d.get("provenance") or {} for d in docs]
    missing = sum(not r.get("commit") for r in recs)
    if missing:
        flag = "; ".join(filter(None, [flag, f"no recorded commit for {missing} of {len(docs)} seeds"]))
    commits = list(dict.fromkeys(r["commit"][:12] + ("+dirty" if r.get("dirty") else "") for r in recs
                                 if r.get("commit")))
    return {"task": label, "dataset": dataset, "model": model, "options": options, "metric": metric,
            "ours": f"{ours[0]:.2f} ± {ours[1]:.2f}", "paper": "-" if ref is None else f"{ref[0]:.2f} ± {ref[1]:.2f}",
            "diff": "-" if ref is None else f"{ours[0] - ref[0]:+.2f}", "result": result, "flag": flag or "",
            "seeds": " ".join(f"{v:.2f}" for v in values), "commit": ", ".join(commits) or "none recorded",
            "uncommitted": bool(missing)}


def reproduction_rows(points: Path, study_dirs: list[Path], behaviour_dirs: tuple[Path, ...] = ()) -> list[dict]:
    """Every shipped reproduction row: the trained ones from ``points/<model>/<dataset>/<folder>/seed<k>.json``
    (Tables 1, A6, A7; a ``+dhgbench`` folder is the row with DHG-Bench's code behaviour) and the fairness ones
    (Table A8 accuracy) from each study folder's ``fairness/points/<dataset>/<model>/seed<k>.json`` (those of
    ``behaviour_dirs`` trained with DHG-Bench's code behaviour)."""
    rows = []
    for folder in sorted(points.glob("*/*/*")) if points.is_dir() else []:
        docs = [json.loads(p.read_text()) for p in folder.glob("seed*.json")]
        if not docs:
            continue
        label, suffix = _folder_task(folder.name)
        rows.append(_row(label.split(" ")[0], label, folder.parent.name, folder.parent.parent.name,
                         "DHG-Bench code" if suffix else "", docs))
    for root, options in [(d, "") for d in study_dirs] + [(d, "DHG-Bench code") for d in behaviour_dirs]:
        for cell in sorted((root / "fairness" / "points").glob("*/*")):
            docs = [json.loads(p.read_text()) for p in cell.glob("seed*.json")]
            docs = [d for d in docs if d.get("status") == "ok"]
            if docs:
                rows.append(_row("fairness", "fairness", cell.parent.name, cell.name, options, docs))
    return rows


def reproduction_table(service: Service, model: str = ALL, dataset: str = ALL, task: str = ALL
                       ) -> tuple[list[list[str]], str]:
    """The rows of :func:`reproduction_rows` that match the filters (``all``: any), as table rows, and a line
    counting them by result. Read once per set of point files (their newest modification time)."""
    dirs = [Path(d) for d in service.config.study_dirs if Path(d).is_dir()]
    results = Path(service.config.reproduction_dir or Path(__file__).resolve().parents[2] / "benchmarks" / "results")
    points = results / REPRODUCTION_POINTS
    extra = tuple(d for d in (results / REPRODUCTION_BEHAVIOUR_FAIRNESS,) if d.is_dir())

    def scan() -> tuple[int, int]:
        files = [p for root in [points, *dirs, *extra] if root.is_dir() for p in root.rglob("seed*.json")]
        return len(files), max((p.stat().st_mtime_ns for p in files), default=0)

    with _REPRO_LOCK:
        stamp = _stamp(_REPRO_CACHE, (str(points), tuple(map(str, dirs)), tuple(map(str, extra))), scan)
        if _REPRO_CACHE.get("stamp") != stamp:
            _REPRO_CACHE.update(stamp=stamp, rows=reproduction_rows(points, dirs, extra))
        rows = _REPRO_CACHE["rows"]
    keep = [r for r in rows if model in (ALL, r["model"]) and dataset in (ALL, r["dataset"])
            and task in (ALL, r["task"].split(" ")[0])]
    counts: dict[str, int] = {}
    for r in keep:  # a row with a seed that names no commit is shown but not counted (as the shipped tables)
        key = NOT_COUNTED if r["uncommitted"] else r["result"]
        counts[key] = counts.get(key, 0) + 1
    line = (f"{len(keep)} rows: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) +
            ". Pass: |ours - paper| <= max(2 paper std, 1.5); `degenerate`: within that but one class in every "
            "seed or collapsed seeds (flag column), not counted as a pass; a row with a seed that recorded no "
            "commit (flag column) is shown and not counted.") if keep else "No row matches."
    return [[r[c] for c in REPRODUCTION_COLUMNS] for r in keep], line


def reproduction_choices(service: Service) -> dict[str, list[str]]:
    """The filter choices: every model, dataset and task of the shipped rows (datasets: and of the claim table),
    ``all`` first; ``verdict``: the claim table's verdicts."""
    reproduction_table(service)
    rows = _REPRO_CACHE.get("rows") or []
    choices = {k: [ALL] + sorted({(r[k].split(" ")[0] if k == "task" else r[k]) for r in rows})
               for k in ("model", "dataset", "task")}
    hnn_report(service)
    claims = _HNN_CACHE.get("claims") or []
    choices["dataset"] = [ALL] + sorted(set(choices["dataset"][1:]) | {c["dataset"] for c in claims})
    choices["verdict"] = [ALL] + sorted({c["verdict"] for c in claims})
    return choices


def claim_table(service: Service, dataset: str = ALL, verdict: str = ALL) -> tuple[list[list[str]], str]:
    """The claim table of the robustness study (DHG-Bench section 4.3's statements, our measurement from the
    shipped robustness points and the verdict: :mod:`hypergvl.models.study.robustness_claims`, as the report
    writes it in ``report.json``), the rows matching the filters (``all``: any), and a line counting them."""
    hnn_report(service)
    claims = _HNN_CACHE.get("claims") or []
    keep = [c for c in claims if dataset in (ALL, c["dataset"]) and verdict in (ALL, c["verdict"])]
    if not claims:
        return [], "No robustness points are shipped in the configured study folders, so there is no claim table."
    if not keep:
        return [], "No statement matches (the robustness study was run on " + \
            ", ".join(sorted({c["dataset"] for c in claims})) + ")."
    counts: dict[str, int] = {}
    for c in keep:
        counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
    line = (f"{len(keep)} statements: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) +
            ". Rules (\"most\" = more than half of the models measured, shapes from three shared ratios, ...) in "
            "`models/study/robustness_claims.py`; the cells they use are in the Robustness section below.")
    return [[c[k] for k in _CLAIM_KEYS] for c in keep], line


def hnn_report(service: Service) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The ``hypergvl.models.study report`` of the configured study folders: Markdown per section (its image links
    dropped: the figures are shown as images of their own) and (path, caption) figures. Built once per set of input
    files (their newest modification time), not on every page load."""
    from hypergvl.models.config import ConfigError  # torch (2-3 s), as the report: not at start
    from hypergvl.models.study.report import build  # torch and the HNN library (2-3 s): not at the Space's start

    dirs = [Path(d) for d in service.config.study_dirs if Path(d).is_dir()]
    if not dirs:
        _HNN_CACHE.update(stamp=None, claims=[])
        return {"effectiveness": "No HNN study results are configured (`HYPERGVL_SPACE_STUDIES`)."}, []
    with _HNN_LOCK:
        stamp = _stamp(_HNN_CACHE, tuple(map(str, dirs)),
                       lambda: max((p.stat().st_mtime_ns for d in dirs for p in d.rglob("*.json")), default=0))
        if _HNN_CACHE.get("stamp") != stamp:
            out = figures_dir(service) / "hnn_report"
            try:
                written = build(dirs, out)
            except ConfigError as e:  # folders without a study point or trainer summary: say so, show the rest
                _HNN_CACHE.update(stamp=stamp, value=({"effectiveness": f"No HNN study results: {e}."}, []), claims=[])
                return _HNN_CACHE["value"]
            text = {k: "\n".join(line for line in Path(written[k]).read_text().splitlines()
                                 if not line.startswith("!["))
                    for k in HNN_SECTIONS if k in written}
            figures = [(str(p), k.split("/", 1)[1]) for k, p in written.items() if k.startswith("figures/")]
            claims = json.loads(Path(written["report.json"]).read_text()).get("robustness_claims", [])
            _HNN_CACHE.update(stamp=stamp, value=(text, figures), claims=claims)
        return _HNN_CACHE["value"]


@register_tab("hnn", title="HNN", order=50)
def build(page: Page) -> OnLoad:
    gr.Markdown("DHG-Bench reproduced: every shipped row (ours beside the paper's, its seeds and the commit they "
                "were trained at), read from the shipped per-seed points; the robustness axis (the paper's "
                "statements beside our measurement, and the panels of Figures 2-4); then the studies of the "
                "hypergraph neural networks from `hypergvl.models.study` result folders (`hypergvl study report`): "
                "effectiveness, fairness (Table A8, Figure 5), efficiency (Figure 1) and robustness (Figures 2-4).")
    # the rows read some 1,500 point files and the dataset registry (slow on a busy machine): read them now, not
    # on the first page load
    threading.Thread(target=reproduction_table, args=(page.service,), daemon=True).start()
    with gr.Accordion("Reproduction of DHG-Bench (Tables 1, A6, A7, A8)", open=True, elem_id="hnn-reproduction"):
        with gr.Row():
            filters = {k: gr.Dropdown([ALL], value=ALL, label=k.capitalize(), elem_id=f"hnn-repro-{k}",
                                      allow_custom_value=False) for k in ("model", "dataset", "task")}
        repro_count = gr.Markdown(elem_id="hnn-repro-count")
        repro = gr.Dataframe(headers=REPRODUCTION_COLUMNS, interactive=False, wrap=True, elem_id="hnn-repro",
                             max_height=600)
    with gr.Accordion("Robustness (DHG-Bench RQ3, section 4.3, Figures 2-4): the paper's statements, measured",
                      open=True, elem_id="hnn-claims-section"):
        gr.Markdown("Each statement section 4.3 makes about a dataset measured here or about all datasets, our "
                    "measurement from the shipped robustness points and whether it holds. The Dataset filter above "
                    "applies here too.")
        verdict = gr.Dropdown([ALL], value=ALL, label="Verdict", elem_id="hnn-claims-verdict",
                              allow_custom_value=False)
        claims_count = gr.Markdown(elem_id="hnn-claims-count")
        claims = gr.Dataframe(headers=CLAIM_COLUMNS, interactive=False, wrap=True, elem_id="hnn-claims",
                              max_height=700, column_widths=["7%", "7%", "8%", "33%", "35%", "10%"])
        # one figure a row, as wide as the page: a panel per perturbation, a line per model (accuracy vs ratio)
        with gr.Column(elem_id="hnn-robustness-figures"):
            panels = {name: gr.Image(label=label, interactive=False, show_label=True, height=560,
                                     elem_id=f"hnn-fig-{name[:-4]}")
                      for name, label in ROBUSTNESS_PANELS.items()}

    def on_filter(model, dataset, task):
        rows, line = reproduction_table(page.service, model or ALL, dataset or ALL, task or ALL)
        return rows, line

    def on_claims(dataset, verdict):
        return claim_table(page.service, dataset or ALL, verdict or ALL)

    for dd in filters.values():
        dd.change(on_filter, list(filters.values()), [repro, repro_count])
    for dd in (filters["dataset"], verdict):
        dd.change(on_claims, [filters["dataset"], verdict], [claims, claims_count])
    hnn_md = {}
    for k in HNN_SECTIONS:
        with gr.Accordion(k.capitalize(), open=k == "effectiveness", elem_id=f"hnn-{k}"):
            hnn_md[k] = gr.Markdown(elem_id=f"hnn-{k}-text")
    with gr.Column(elem_id="hnn-figures"):
        panels |= {name: gr.Image(label=label, interactive=False, show_label=True, elem_id=f"hnn-fig-{name[:-4]}")
                   for name, label in STUDY_PANELS.items()}
        others = gr.Gallery(label="Other figures (click to enlarge)", elem_id="hnn-other-figures", columns=2,
                            object_fit="contain", height="auto", visible=False)

    def on_load():
        text, figures = hnn_report(page.service)
        rows, line = reproduction_table(page.service)
        choices = reproduction_choices(page.service)
        claim_rows_, claim_line = claim_table(page.service)
        drawn = {caption: path for path, caption in figures}
        return (*[text.get(k, "") for k in HNN_SECTIONS], rows, line,
                *[gr.Dropdown(choices=choices[k], value=ALL) for k in ("model", "dataset", "task")],
                gr.Dropdown(choices=choices["verdict"], value=ALL), claim_rows_, claim_line,
                *[gr.Image(value=drawn.get(name), visible=name in drawn) for name in panels],
                gr.Gallery(value=[f for f in figures if f[1] not in panels], visible=any(f[1] not in panels
                                                                                       for f in figures)))

    return OnLoad(on_load, [*hnn_md.values(), repro, repro_count, *filters.values(), verdict, claims, claims_count,
                            *panels.values(), others])
