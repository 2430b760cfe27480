"""The project's wheel, built from a checkout: what a published Space installs (``requirements.txt`` names it by its
relative path, the wheel uploaded beside ``app.py``), since no package index serves ``hypergvl``. Used by
``hypergvl space deploy`` (the leaderboard Space) and ``hypergvl push-metrics`` (the metric Spaces)."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .cli import UserError

ROOT = Path(__file__).resolve().parent.parent


def build_wheel(dest: Path, root: Path = ROOT) -> Path:
    """The project's wheel in ``dest``, built from a copy of the checkout's source files (tracked, or new and not
    ignored): setuptools' ``build/`` folder in a checkout keeps the files of earlier builds, modules since moved or
    renamed among them, and a wheel built in place would ship them. Refused (UserError) where this package is not
    run from a checkout (an installed wheel has no ``pyproject.toml`` to build from)."""
    if not (Path(root) / "pyproject.toml").is_file():
        raise UserError(f"hypergvl runs from an installed package here, not a checkout ({root} has no "
                        "pyproject.toml), so it cannot build its own wheel: give a built wheel (--wheel) or a "
                        "pip requirement that installs it (--requirement)")
    dest = Path(dest)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                                capture_output=True)
        if listed.returncode == 0:
            for name in filter(None, listed.stdout.decode().split("\0")):
                if (root / name).is_file():  # a tracked file deleted in the work tree is not copied
                    (src / name).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(root / name, src / name)
        else:  # not a git checkout (an unpacked source archive)
            shutil.copytree(root, src, ignore=shutil.ignore_patterns("build", ".venv", "*.egg-info", "__pycache__",
                                                                     ".git"))
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                        "--wheel-dir", str(Path(tmp) / "dist"), str(src)], check=True)
        (built,) = (Path(tmp) / "dist").glob("hypergvl-*.whl")
        dest.mkdir(parents=True, exist_ok=True)
        return Path(shutil.move(built, dest / built.name))
