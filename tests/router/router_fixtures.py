"""Helpers shared by the router tests (importable: tests/router is put on sys.path by its conftest)."""
import json

from hypergvl.vqa import combinations


def write_run(folder, problems, correct_of, model="m", pairs=None):
    """A samples.jsonl with every registered combination (or ``pairs``) per meta problem; correct_of(meta, combo) ->
    bool."""
    folder.mkdir(parents=True)
    with open(folder / "samples.jsonl", "w") as f:
        for meta, row in problems.items():
            for t, v in pairs or combinations():
                f.write(json.dumps({"id": f"{meta}/{t}/{v}", "meta_id": meta, "task": row["task"], "text_rep": t,
                                    "visual_rep": v, "scale": row["scale"], "source": row["source"],
                                    "correct": correct_of(meta, (t, v)), "reference": row["reference"]}) + "\n")
    (folder / "results.json").write_text(json.dumps({"model": {"name": model}, "dataset": {"id": "hand-made"}}))
    return folder
