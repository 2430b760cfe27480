"""The benchmark as ``hypergvl push`` publishes it: the build folder, uploaded whole, is a Hub dataset whose card
tells ``datasets`` what to load. Loaded as the Hub loads it (``load_dataset`` from the published files alone, in a
fresh process that never imports hypergvl, its working directory elsewhere), the default config and a per-task
config give the rows the builder wrote."""
import json
import shutil
import subprocess
import sys

from datasets import load_dataset

LOAD = """
import json, sys
from datasets import load_dataset
folder = sys.argv[1]
ds = load_dataset(folder, split="test")                    # the card's snippet, the folder for the repo id
one = load_dataset(folder, "vc", split="test")
assert not any(m == "hypergvl" or m.startswith("hypergvl.") for m in sys.modules)
print(json.dumps({"all": list(ds["id"]), "vc": list(one["id"]), "columns": ds.column_names}))
"""


def test_the_pushed_build_loads_from_its_own_files_as_the_hub_loads_it(small_build, tmp_path):
    card = (small_build / "README.md").read_text()
    assert 'load_dataset("hypergvl", split="test")' in card and 'load_dataset("hypergvl", "osp"' in card
    published = tmp_path / "org--hypergvl"  # what upload_folder sends: every file of the folder
    shutil.copytree(small_build, published)
    env = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"), "HOME": str(tmp_path),
           "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-c", LOAD, str(published)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    built = load_dataset(str(small_build), split="test")
    assert got["all"] == list(built["id"]) and got["columns"] == built.column_names
    assert got["vc"] == [i for i, t in zip(built["id"], built["task"]) if t == "VC"] and got["vc"]
