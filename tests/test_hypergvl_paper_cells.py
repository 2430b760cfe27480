"""The HyperGVL paper's own rows (``evaluators/paper_results.json``) read back from the paper's text.

Tables 3 and 4 are parsed from the seed text (``../shared/seeds/000_*.txt``: Markdown rows, a name cell then 14
numbers in the column order of the table's own header line), and every shipped cell is compared with them; twenty
cells typed here from the paper are checked against both, the averages relation recorded in the file is recomputed
from the parsed text, and the sec. 3.2 / 3.3 prose is checked against the shipped rows."""
import json
import re
from pathlib import Path

import pytest

from hypergvl.evaluators import paper

SEED = Path(__file__).resolve().parent.parent.parent / "shared" / "seeds" / "000_36546eb241ed204c.txt"
NUMBER = re.compile(r"^\d+\.\d\d$")


@pytest.fixture(scope="module")
def seed() -> str:
    if not SEED.exists():
        pytest.fail(f"the HyperGVL seed text is missing: {SEED} (../shared/seeds beside the checkout)")
    return SEED.read_text()


def seed_table(text: str, number: int) -> dict[str, dict[str, float]]:
    """Row name -> column -> value of the seed's Table ``number``, read up to the first line that is not a table row."""
    lines = text[text.index(f"\nTable {number}:"):].splitlines()[2:]
    header = None
    rows = {}
    for line in lines:
        if not line.startswith("|"):
            if header is not None:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "VC":
            header = [c for c in cells if c]
            continue
        numbers = [c for c in cells if NUMBER.match(c)]
        if header is None or len(numbers) != 14:
            continue
        name = [c for c in cells if c and not NUMBER.match(c)][-1]  # Table 4's first column may name the family
        rows[name] = dict(zip(header, map(float, numbers)))
    return rows


# (table, row, column, value) as printed in the paper, typed by hand
TYPED = [(3, "LLaVA-1.5-7B", "VC", 14.10), (3, "LLaVA-Next-7B", "OMF", 3.84), (3, "Molmo-7B-D-0924", "ISM", 45.90),
         (3, "InternVL2.5-8B", "ONe", 22.00), (3, "GLM-4V-9B", "Avg.R", 18.90), (3, "InternVL3-8B", "3-CL", 38.04),
         (3, "Qwen2.5-VL-7B", "Avg.U", 42.39), (3, "Qwen3-VL-8B", "SHC", 46.57), (3, "Gemma3-12B", "Ne", 73.34),
         (3, "Deepseek-VL2-27B", "HHM", 0.03), (3, "GPT-4o", "Avg.U", 66.91), (3, "Gemini-3 Flash", "OSP", 82.09),
         (3, "Average", "Ne", 37.71), (4, "LO-Inc", "ONe", 50.12), (4, "Cli-Exp", "ISM", 56.17),
         (4, "HO-Neigh", "HEC", 67.03), (4, "Inc-Mat", "ONe", 10.05), (4, "St-Inc", "Avg.R", 22.30),
         (4, "V-E Avg.", "VC", 71.72), (4, "N-Set", "Avg.R", 28.44), (4, "Set-Based Avg.", "OEC", 43.75)]


def test_the_parser_reads_whole_tables(seed):
    t3, t4 = seed_table(seed, 3), seed_table(seed, 4)
    assert len(t3) == 13 and list(t3)[0] == "LLaVA-1.5-7B" and list(t3)[-1] == "Average"
    assert len(t4) == 15 and list(t4)[:5] == ["LO-Inc", "N-Pair", "Adj-Mat", "Cli-Exp", "V-V Avg."]
    assert list(t3["GPT-4o"]) == ["VC", "HEC", "Ne", "DVC", "OEC", "ONe", "Avg.U", "OSP", "OMF", "ISM", "3-CL", "SHC",
                                  "HHM", "Avg.R"]


@pytest.mark.parametrize("number,name,column,value", TYPED)
def test_typed_cells(seed, number, name, column, value):
    assert seed_table(seed, number)[name][column] == value
    assert paper.load().tables[number].row(name).cells[column] == value


def test_every_shipped_cell_equals_the_paper(seed):
    """All 13 x 14 cells of Table 3 and 15 x 14 of Table 4, in the paper's row order."""
    for number in (3, 4):
        table, text = paper.load().tables[number], seed_table(seed, number)
        assert [r.name for r in table.rows] == list(text)
        for r in table.rows:
            assert r.cells == text[r.name], (number, r.name)


def test_sources_and_kinds_are_named():
    p = paper.load()
    assert p.source["arxiv_id"] == "2604.15648" and p.source["title"].startswith("HyperGVL:")
    assert p.tables[3].caption.startswith("Model performance (Acc) on HyperGVL benchmark")
    assert p.tables[4].caption.startswith("Average performance (Acc) with different hypergraph representations")
    kinds = {r.name: r.kind for r in p.tables[3].rows}
    assert [n for n, k in kinds.items() if k == "closed-source LVLM"] == ["GPT-4o", "Gemini-3 Flash"]
    t4 = p.tables[4].rows
    assert [r.name for r in t4 if r.kind == "textual"] == ["LO-Inc", "N-Pair", "Adj-Mat", "HO-Neigh", "HO-Inc",
                                                           "Inc-Mat", "N-Set"]
    assert sorted(r.name for r in t4 if r.kind == "visual") == ["Bi-Inc", "Cli-Exp", "Enc-Hy", "Sh-Inc", "St-Inc"]


def test_recorded_averages_relation_recomputes_from_the_seed(seed):
    """Which printed averages are the mean of their cells, computed here from the seed's own numbers."""
    def mean(xs):
        xs = list(xs)
        return sum(xs) / len(xs)

    und, rea = ("VC", "HEC", "Ne", "DVC", "OEC", "ONe"), ("OSP", "OMF", "ISM", "3-CL", "SHC", "HHM")
    for number in (3, 4):
        text, rec = seed_table(seed, number), paper.load().tables[number].recomputation
        assert rec["avg_u_differs"] == [n for n, c in text.items() if abs(mean(c[t] for t in und) - c["Avg.U"]) > 0.00501]
        assert rec["avg_r_differs"] == [n for n, c in text.items() if abs(mean(c[t] for t in rea) - c["Avg.R"]) > 0.00501]
        for s in rec["summary_rows"]:
            got = text[s["row"]]
            assert s["columns_differ"] == [k for k in got if abs(mean(text[m][k] for m in s["mean_of"]) - got[k]) > 0.00501]
    t3 = paper.load().tables[3].recomputation
    assert t3["avg_u_differs"] == ["GPT-4o", "Average"] and t3["avg_r_differs"] == []
    assert t3["summary_rows"][0]["columns_differ"] == ["Ne", "ONe"] and len(t3["summary_rows"][0]["mean_of"]) == 12


def test_a_mistyped_cell_fails_the_load(tmp_path):
    raw = json.loads(paper.PATH.read_text())
    raw["tables"][0]["rows"][4]["cells"]["VC"] = 91.43  # GLM-4V-9B's 91.34, two digits swapped
    bad = tmp_path / "paper.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match="Table 3: the recorded recomputation"):
        paper.load(bad)
    raw["tables"][0]["rows"][4]["cells"].pop("VC")
    bad.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match="row 'GLM-4V-9B': columns"):
        paper.load(bad)


def test_the_prose_agrees_with_the_rows(seed):
    """Sec. 3.2 quotes six Table 3 averages; sec. 3.3 gives no number (Fig. 3 only), which the file records."""
    t3 = paper.load().tables[3]
    for name, column, quoted in (("Average", "Avg.R", "Avg.R across models (23.28%)"),
                                 ("Average", "Avg.U", "than Avg.U (40.31%)"),
                                 ("Gemini-3 Flash", "Avg.R", "Gemini-3 Flash, achieves only 62.04%"),
                                 ("Gemini-3 Flash", "Avg.U", "highest Avg.U reaching 89.72%"),
                                 ("Gemma3-12B", "Avg.U", "compared to 63.53%"), ("Qwen3-VL-8B", "Avg.R", "vs. 34.43%")):
        assert quoted in seed and f"{t3.row(name).cells[column]:.2f}" in quoted
    section = seed[seed.index("### 3.3 "):seed.index("### 3.4 ")]
    assert not re.search(r"\d+\.\d+", section.split("\n", 1)[1])  # no numbers at all
    llm = paper.load().llm_comparison
    assert llm["claim"] in section and llm["figure"] in section and llm["numbers"].startswith("none")
    for pair in llm["pairs"]:
        assert t3.row(pair["lvlm"]).kind == "open-source LVLM"
        assert pair["lvlm"].rsplit("-", 1)[0] in section and pair["llm"] in section


@pytest.mark.parametrize("run,row", [("hf:Qwen/Qwen2.5-VL-7B-Instruct", "Qwen2.5-VL-7B"),
                                     ("google/gemma-3-12b-it", "Gemma3-12B"), ("gpt-4o-2024-08-06", "GPT-4o"),
                                     ("llava-hf/llava-1.5-7b-hf", "LLaVA-1.5-7B"), ("OpenGVLab/InternVL3-8B",
                                                                                     "InternVL3-8B"),
                                     ("gpt-4o-mini", None), ("baseline:symbolic", None), ("Average", None),
                                     ("Qwen/Qwen2.5-VL-72B-Instruct", None)])
def test_match_names_a_paper_model_only_when_it_is_one(run, row):
    hit = paper.match(run)
    assert (hit and hit.name) == row


@pytest.fixture(scope="module")
def runs(small_build, tmp_path_factory):
    """The symbolic baseline on two tasks (with images, and text only), and a copy named as one of the paper's models."""
    import shutil

    from hypergvl.cli import main

    out = tmp_path_factory.mktemp("paper-runs")
    for name, visual in (("symbolic", "bi_inc"), ("text", "none")):
        assert main(["evaluate", "--dataset", str(small_build), "--model", "baseline:symbolic", "--out", str(out / name),
                     "--tasks", "VC", "HEC", "--visual-reps", visual, "--no-progress"]) == 0
    for name in ("symbolic", "text"):
        shutil.copytree(out / name, out / f"qwen-{name}")
        res = json.loads((out / f"qwen-{name}" / "results.json").read_text())
        res["model"]["name"] = "Qwen/Qwen2.5-VL-7B-Instruct"
        (out / f"qwen-{name}" / "results.json").write_text(json.dumps(res))
    return out


def _paper_line(number, name, cells):
    return f"| paper (Table {number}): {name} | " + " | ".join(
        f"{cells[c]:.2f}" for c in ("VC", "HEC", "Ne", "DVC", "OEC", "ONe", "OSP", "OMF", "ISM", "3-CL", "SHC", "HHM",
                                    "Avg.U", "Avg.R")) + " |"


def test_report_paper_puts_the_matching_model_row_beside_ours(runs, seed, capsys):
    from hypergvl.cli import main

    t3, t4 = seed_table(seed, 3), seed_table(seed, 4)
    assert main(["report", str(runs / "qwen-symbolic"), "--paper"]) == 0
    lines = capsys.readouterr().out.splitlines()
    qwen = _paper_line(3, "Qwen2.5-VL-7B", t3["Qwen2.5-VL-7B"])
    assert qwen == "| paper (Table 3): Qwen2.5-VL-7B | 95.41 | 41.94 | 36.19 | 24.63 | 29.01 | 27.17 | 15.73 | 14.53 " \
                   "| 59.23 | 26.31 | 10.51 | 1.50 | 42.39 | 21.30 |"
    i = lines.index(qwen)
    assert lines[i - 1].startswith("| Qwen/Qwen2.5-VL-7B-Instruct | 100.0 | ") and lines[i - 3].startswith("| Model |")
    assert not any("paper (Table 3): GPT-4o" in x for x in lines)  # every run matched: no reference rows
    assert any(x.startswith("Rows `paper (Table 3)` are printed in HyperGVL:") and "2604.15648" in x for x in lines)
    j = lines.index(_paper_line(4, "N-Set", t4["N-Set"]))
    assert lines[j - 1].startswith("| N-Set | 100.0 | ")
    assert lines.index(_paper_line(4, "Bi-Inc", t4["Bi-Inc"])) > j and not any("Enc-Hy" in x for x in lines)


def test_report_paper_lists_the_paper_rows_for_an_unknown_model(runs, seed, capsys):
    from hypergvl.cli import main

    assert main(["report", str(runs / "symbolic"), str(runs / "qwen-text"), "--paper"]) == 0
    lines = capsys.readouterr().out.splitlines()
    expected = [_paper_line(3, name, cells) for name, cells in seed_table(seed, 3).items()]
    i = lines.index(expected[0])
    assert lines[i:i + 13] == expected  # all of Table 3, in the paper's order, after our two rows
    assert lines[i - 2].startswith("| baseline:symbolic | 100.0 |")
    assert lines[i - 1].startswith("| Qwen/Qwen2.5-VL-7B-Instruct (text only) | 100.0 |")  # text only: not matched
    assert sum(x.startswith("| paper (Table 3): Qwen2.5-VL-7B |") for x in lines) == 1
    note = next(x for x in lines if x.startswith("Text-only runs:"))
    assert "GLM-4V-9B with GLM-4" in note and "Fig. 3" in note and "no value" in note
    assert any(x.startswith("Paper's averages:") and "66.91" in x for x in lines)


def test_report_without_paper_shows_none_of_it(runs, capsys):
    from hypergvl.cli import main

    assert main(["report", str(runs / "qwen-symbolic")]) == 0
    assert "paper (Table" not in capsys.readouterr().out


def _space_fixtures():
    """The Space tests' fixtures (``tests/space/conftest.py``), for the app built here."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("space_conftest", Path(__file__).parent / "space" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


space_service = _space_fixtures().space_service  # one meta problem per task per test set, seeded with the baselines


def test_space_shows_the_paper_rows_in_their_own_tab_only(space_service, seed):
    """The built app: a "Reported in the paper" tab holding Tables 3 and 4 as the seed prints them, in its order, with
    no rank column; the re-scored leaderboard's rows are ours only."""
    import gradio as gr

    from hypergvl.space.app import build_app
    from hypergvl.space.tabs.leaderboard import leaderboard_frame

    space = space_service
    app = build_app(space)
    tabs = {b.label: b for b in app.blocks.values() if isinstance(b, gr.Tab)}
    assert {"Leaderboard", "Reported in the paper"} <= set(tabs)
    frames = {b.elem_id: b.value for b in app.blocks.values() if isinstance(b, gr.Dataframe)}
    for number, first in ((3, "Model"), (4, "Representation")):
        value, text = frames[f"paper-t{number}"], seed_table(seed, number)
        i = value["headers"].index(first)
        assert [row[i] for row in value["data"]] == list(text)  # the paper's order
        assert not {"Rank", "#", "All"} & set(value["headers"])
        shown = value["metadata"]["display_value"]
        for row, disp in zip(value["data"], shown):
            for col, v in text[row[i]].items():
                j = value["headers"].index(col)
                assert row[j] == v and disp[j] == f"{v:.2f}", (row[i], col)
    notes = " ".join(b.value for b in app.blocks.values() if isinstance(b, gr.Markdown) and b.value)
    assert "not re-scored by this Space" in notes and "arXiv 2604.15648" in notes and "Fig. 3" in notes
    board = leaderboard_frame(space, space.sets.current("public").name)
    assert set(board["Model"]) and not set(board["Model"]) & set(seed_table(seed, 3))
    assert all(m.startswith("baseline:") for m in board["Model"])
