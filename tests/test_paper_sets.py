"""The paper's sets (hypergvl/paper.py) are the names the package registers for the paper, and the averages keep
the paper's definition whatever else is registered."""
from hypergvl.paper import (PAPER_COMBINATIONS, PAPER_REASONING, PAPER_TASKS, PAPER_TEXT_REPS, PAPER_UNDERSTANDING,
                            PAPER_VISUAL_REPS, averaged_over, averages)
from hypergvl.render import RENDERERS
from hypergvl.tasks import TASKS, task_codes
from hypergvl.text import TEXT_REPS


def test_the_package_registers_every_paper_name_in_the_papers_order():
    assert len(PAPER_TASKS) == 12 and set(PAPER_UNDERSTANDING) | set(PAPER_REASONING) == set(PAPER_TASKS)
    assert [TASKS[t].level for t in PAPER_TASKS] == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]  # Table 2
    assert task_codes()[:12] == PAPER_TASKS
    assert [r for r in TEXT_REPS if r in PAPER_TEXT_REPS] == list(PAPER_TEXT_REPS)
    assert [r for r in RENDERERS if r in PAPER_VISUAL_REPS] == list(PAPER_VISUAL_REPS)
    assert len(PAPER_COMBINATIONS) == len(PAPER_TEXT_REPS) * len(PAPER_VISUAL_REPS) == 35  # sec. 2.4


def test_avg_u_and_avg_r_are_the_papers_and_a_task_beyond_them_has_its_own_average():
    per_task = {"VC": 90.0, "HEC": 70.0, "OSP": 40.0, "NEW": 10.0, "OTHER": 30.0, "HHM": None}
    assert averages(per_task) == {"avg_u": 80.0, "avg_r": 40.0, "avg_ext": 20.0}
    assert averaged_over(["VC", "HEC", "OSP", "NEW", "OTHER"]) == {
        "avg_u": ["VC", "HEC"], "avg_r": ["OSP"], "avg_ext": ["NEW", "OTHER"],
        "accuracy": ["VC", "HEC", "OSP", "NEW", "OTHER"]}
    assert averages({"VC": 50.0}) == {"avg_u": 50.0, "avg_r": None, "avg_ext": None}
