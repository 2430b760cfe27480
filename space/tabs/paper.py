"""The "Reported in the paper" tab: HyperGVL Tables 3 and 4 and its sec. 3.3 as printed, with their source; a tab
of its own, never mixed into or ranked with the re-scored leaderboard."""
from __future__ import annotations

import gradio as gr
import pandas as pd

from hypergvl.evaluators.paper import COLUMNS, load

from .base import Page, register_tab


def paper_frame(number: int) -> pd.DataFrame:
    """HyperGVL Table ``number`` as the paper prints it (:mod:`hypergvl.evaluators.paper`), rows in the paper's order, no rank."""
    table = load().tables[number]
    first = ["Model", "Kind"] if number == 3 else ["Family", "Representation", "Kind"]
    rows = [{**dict(zip(first, ([r.name, r.kind] if number == 3 else [r.family, r.name, r.kind]))), **r.cells}
            for r in table.rows]
    return pd.DataFrame(rows, columns=first + list(COLUMNS))


@register_tab("paper", title="Reported in the paper", order=20)
def build(page: Page) -> None:
    p = load()
    gr.Markdown(f"These are the numbers printed in {p.citation()}, **not re-scored by this Space**: they are not "
                "on the Leaderboard tab and are not ranked with it. Rows in the paper's order; "
                f"{p.unit}, as printed.", elem_id="paper-source")
    for number in (3, 4):
        table = p.tables[number]
        frame = paper_frame(number)
        gr.Markdown(f"**Table {number}** (caption as extracted from the paper): \u201c{table.caption}\u201d  \n"
                    f"Setting: {table.setting}.  \nAverages: {table.recomputation['note']}")
        gr.Dataframe(value=frame.style.format(precision=2, subset=list(COLUMNS)), interactive=False,
                     datatype=["str"] * (len(frame.columns) - len(COLUMNS)) + ["number"] * len(COLUMNS),
                     elem_id=f"paper-t{number}", pinned_columns=1, max_height=700,
                     label=f"HyperGVL Table {number}, as printed in the paper")
    llm = p.llm_comparison
    pairs = ", ".join(f"{x['lvlm']} with {x['llm']}" for x in llm["pairs"])
    gr.Markdown(f"**Sec. {llm['section']}, LVLMs and their LLMs**: the paper compares {pairs} in {llm['figure']} "
                f"(\u201c{llm['claim']}\u201d); numbers: {llm['numbers']}.", elem_id="paper-llm")
