"""``python -m hypergvl.evaluators.lmms_eval``: regenerate the lmms-eval task and group files from the registries."""
from . import write_task_files

changed = write_task_files()
print("\n".join(changed) if changed else "the task files are current")
