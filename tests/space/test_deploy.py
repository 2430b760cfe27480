"""The Space repository layout: front matter, the staged app importable as a Space would import it, the upload."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hypergvl.space.deploy import deploy, stage


def front_matter(text: str) -> dict:
    import yaml

    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_front_matter_pins_the_installed_gradio():
    import gradio

    from hypergvl.space.deploy import HERE

    meta = front_matter((HERE / "README.md").read_text())
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py" and meta["sdk_version"] == gradio.__version__
    pins = [line.split("#")[0].strip() for line in (HERE / "requirements.txt").read_text().splitlines()]
    assert f"gradio[oauth]=={gradio.__version__}" in pins


def test_staged_space_imports_and_uploads(tmp_path):
    from hypergvl.space.deploy import HERE, RESULTS

    out = stage(tmp_path / "stage", wheel=False)
    assert {p.name for p in out.iterdir()} == {"README.md", "app.py", "requirements.txt", "seed_studies",
                                               "reproduction"}
    # every point the HNN tab reads: the studies' (fairness, efficiency, robustness: the claim table's input) and
    # the reproduction's per-seed points, whatever the checkout ships
    for src, dst in ((HERE / "seed_studies", out / "seed_studies"),
                     (RESULTS / "points", out / "reproduction" / "points"),
                     (RESULTS / "fairness_dhgbench", out / "reproduction" / "fairness_dhgbench")):
        shipped = sorted(p.relative_to(src) for p in src.rglob("*.json"))
        assert shipped and shipped == sorted(p.relative_to(dst) for p in dst.rglob("*.json")), src
    assert list((out / "seed_studies" / "robustness").rglob("*.json"))
    # the staged app.py runs the installed hypergvl.space and points it at the staged studies: load it as the
    # Space does (a script in the repository root), with main() stubbed, and read the configuration it would use
    code = ("import runpy, sys, hypergvl.space.app as a; seen = []\n"
            "a.main = lambda: seen.append(a.SpaceConfig.from_env())\n"
            "try:\n    runpy.run_path('app.py', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(seen[0].study_dirs[0]); print(seen[0].reproduction_dir)")
    run = subprocess.run([sys.executable, "-c", code], cwd=out, capture_output=True, text=True, timeout=300)
    assert run.stdout.split() == [str((out / "seed_studies").resolve()), str((out / "reproduction").resolve())], \
        run.stderr[-2000:]

    calls = []

    class FakeApi:
        def __getattr__(self, name):
            return lambda *a, **k: calls.append((name, a, k))

    url = deploy("org/board", out, api=FakeApi(), secrets={"HYPERGVL_HIDDEN_SEED": "123"},
                 variables={"HYPERGVL_RESULTS_REPO": "org/results"})
    assert url == "https://huggingface.co/spaces/org/board"
    assert [c[0] for c in calls] == ["create_repo", "add_space_secret", "add_space_variable", "upload_folder"]
    assert calls[-1][2]["repo_type"] == "space" and calls[-1][2]["folder_path"] == str(out)


@pytest.mark.slow
def test_stage_builds_the_project_wheel(tmp_path):
    out = stage(tmp_path / "stage")
    (wheel,) = out.glob("hypergvl-*.whl")
    assert f"./{wheel.name}" in (out / "requirements.txt").read_text()


@pytest.mark.slow
def test_the_staged_bundle_starts_from_its_own_files_and_serves_the_leaderboard(space_service, tmp_path):
    """The bundle as the Hub runs it: pip installs the package line of its requirements.txt from the bundle (the
    wheel staged beside app.py; the pinned lines are this environment's), and ``python app.py`` in the bundle, in a
    fresh process whose ``hypergvl`` is that install, serves the leaderboard of its data folder (the baselines a
    Space seeds) through the API a visitor's client calls."""
    import shutil

    from space_process import started

    out = stage(tmp_path / "stage")
    package = (out / "requirements.txt").read_text().splitlines()[-1]
    assert package.startswith("./hypergvl-") and (out / package).is_file()
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", "--target",
                    str(site), package], cwd=out, check=True, timeout=600)
    data = tmp_path / "data"
    shutil.copytree(space_service.config.data_dir, data)
    env = {"HYPERGVL_SPACE_DATA": str(data), "HYPERGVL_PER_TASK": "1"}
    with started(out, pythonpath=site, env=env) as client:
        table = client.predict(api_name="/leaderboard")
    frame = table.get("value", table)  # the Refresh handler returns gr.update(value=..., datatype=...)
    cells = {str(c) for row in frame["data"] for c in row}
    stored = {e.model for e in space_service.store.entries()}
    assert stored and all(any(m in c for c in cells) for m in stored), (stored, frame["headers"])
    # the HNN tab from the bundle's files alone: the installed wheel's hypergvl, configured by the bundle's app.py
    # (main stubbed), reads the reproduction rows, the claim table and Figures 2-4 from the staged points; the same
    # counts as from this checkout
    from conftest import fresh

    from hypergvl.space.deploy import HERE
    from hypergvl.space.tabs import hnn

    local = fresh(space_service, tmp_path / "local", study_dirs=(HERE / "seed_studies",))
    want = (len(hnn.reproduction_table(local)[0]), len(hnn.claim_table(local)[0]))
    code = ("import json, runpy, types, hypergvl, hypergvl.space.app as a; seen = []\n"
            "a.main = lambda: seen.append(a.SpaceConfig.from_env())\n"
            "try:\n    runpy.run_path('app.py', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "from hypergvl.space.tabs import hnn\n"
            "svc = types.SimpleNamespace(config=seen[0])\n"
            "figures = [c for _, c in hnn.hnn_report(svc)[1]]\n"
            "print(json.dumps([hypergvl.__file__, len(hnn.reproduction_table(svc)[0]), len(hnn.claim_table(svc)[0]),"
            " figures]))")
    run = subprocess.run([sys.executable, "-c", code], cwd=out, capture_output=True, text=True, timeout=900,
                         env={**os.environ, "PYTHONPATH": str(site), "HYPERGVL_SPACE_DATA": str(tmp_path / "d2")})
    assert run.returncode == 0, run.stderr[-3000:]
    where, rows, claims, figures = json.loads(run.stdout.strip().splitlines()[-1])
    assert Path(where).is_relative_to(site) and (rows, claims) == want and rows > 0 and claims > 0
    assert {"robustness_structure.png", "robustness_feature.png", "robustness_supervision.png", "efficiency.png",
            "fairness_ranks.png"} <= set(figures)
