"""Refusals a user can cause in evaluate and router train: exit 2, the thing named with the nearest valid names and
the fix, before any download, model load or heavy import; labels as reports print them ("N-Set") accepted where
codes are."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from hypergvl.cli import UserError, main
from hypergvl.evaluators.selection import Selection

_PROBE = ("import json, socket, sys\nattempts = []\nreal = socket.create_connection\n"
          "def probe(address, *a, **k):\n    attempts.append(list(address))\n    return real(address, *a, **k)\n"
          "socket.create_connection = probe\nfrom hypergvl.cli import main\ntry:\n    rc = main(sys.argv[1:])\n"
          "except SystemExit as e:\n    rc = e.code\n"
          "heavy = sorted(m for m in ('torch', 'transformers', 'accelerate') if m in sys.modules)\n"
          "print(json.dumps({'rc': rc, 'heavy': heavy, 'attempts': attempts}), file=sys.stderr)\nsys.exit(0)")


def cli(*argv: str, env: dict | None = None, cwd=None) -> tuple[int, str, dict]:
    """(exit status, stderr without the probe's line, the probe: heavy modules imported, connection attempts)."""
    proc = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})}, cwd=cwd)
    *err, last = proc.stderr.strip().splitlines()
    probe = json.loads(last)
    return probe["rc"], "\n".join(err), probe


def test_representations_by_code_or_label_in_any_case():
    sel = Selection(text_reps=("N-Set", "ho_inc", "adj-mat", "HO_NEIGH"), visual_reps=("Enc-Hy", "none"))
    assert sel.text_reps == ("n_set", "ho_inc", "adj_mat", "ho_neigh") and sel.visual_reps == ("enc_hy", "none")
    with pytest.raises(UserError, match=r"--text-reps: unknown representation 'nset' \(did you mean n_set\?\); "
                                        r"choose from .*n_set \(N-Set\)"):
        Selection(text_reps=("nset",))
    with pytest.raises(UserError, match=r"--visual-reps: unknown representation 'enc'"):
        Selection(visual_reps=("enc",))


def test_a_label_as_printed_runs_and_is_recorded_as_its_code(small_build, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["evaluate", "--dataset", str(small_build), "--model", "baseline:random", "--out", str(out),
                 "--text-reps", "N-Set", "--visual-reps", "Enc-Hy", "--limit", "3", "--no-progress"]) == 0
    res = json.loads((out / "results.json").read_text())
    assert res["selection"]["text_reps"] == ["n_set"] and res["selection"]["visual_reps"] == ["enc_hy"]
    assert {json.loads(line)["text_rep"] for line in (out / "samples.jsonl").read_text().splitlines()} == {"n_set"}


def test_a_mistyped_representation_is_refused_before_the_dataset_is_looked_at(tmp_path):
    rc, err, probe = cli("evaluate", "--dataset", "someone/not-there", "--model", "baseline:random", "--out",
                         str(tmp_path / "run"), "--text-reps", "N-Sett")
    assert rc == 2 and "unknown representation 'N-Sett' (did you mean n_set?)" in err, err
    assert probe["attempts"] == [] and probe["heavy"] == [] and not (tmp_path / "run").exists()


@pytest.mark.parametrize("backbone, message", [
    ("microsoft/deberta-v3-bsae", "--backbone microsoft/deberta-v3-bsae: not a loadable Hub model here: not in "
                                  "the local Hugging Face cache, and HF_HUB_OFFLINE is set"),
    ("no such/folder!", "--backbone no such/folder!: no such model folder"),
])
def test_a_router_backbone_that_cannot_load_is_refused_at_once(tmp_path, backbone, message):
    """No Hub retries, no transformers or torch import, no connection: the check reads the local cache (and, online,
    probes the Hub once: tests/test_preflight.py)."""
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"), "HF_HUB_CACHE": str(tmp_path / "hf" / "hub")}
    rc, err, probe = cli("router", "train", "--prm", str(tmp_path), "--out", str(tmp_path / "out"), "--backbone",
                         backbone, env=env)
    assert rc == 2 and message in err and "Traceback" not in err, err
    assert probe["attempts"] == [] and "transformers" not in probe["heavy"] and "torch" not in probe["heavy"]
    assert not (tmp_path / "out").exists()
