"""``python -m hypergvl.evaluators.lm_eval``: regenerate the lm-eval task, group and template files from the
registries."""
from . import write_task_files

changed = write_task_files()
print("\n".join(changed) if changed else "the task files are current")
