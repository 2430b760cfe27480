"""``hypergvl space deploy --space-id ORG/NAME``: publish this folder as a Hugging Face Space.

A Space repository is flat: its root holds ``README.md`` (the front matter), ``app.py`` and ``requirements.txt``.
:func:`stage` lays one out from the checkout: those three files, the HNN study results it shows (``seed_studies/``:
the fairness, efficiency and robustness points, the claim table's input; ``reproduction/``: the DHG-Bench
reproduction's per-seed points; the staged ``app.py`` names them in ``HYPERGVL_SPACE_STUDIES`` and
``HYPERGVL_SPACE_REPRODUCTION``), and a wheel of the project (``pip wheel --no-deps
.``: the builder, tasks, metrics, harness, router and this app, ``hypergvl.space``), named in ``requirements.txt``. :func:`deploy`
creates the Space if needed, sets the secrets and variables given, and uploads the staged folder.

Secrets and variables a deployed Space reads (Settings > Variables and secrets): ``HYPERGVL_HIDDEN_SEED`` (secret:
the hidden set's seed; change it to rotate), ``HF_TOKEN`` (secret, write access to the two dataset repositories),
``HYPERGVL_REQUESTS_REPO`` / ``HYPERGVL_RESULTS_REPO`` (variables: the store's dataset repositories; without them
the Space keeps an SQLite file in its persistent storage, ``HYPERGVL_SPACE_DATA=/data``), ``HYPERGVL_PER_TASK``;
optionally ``HYPERGVL_ANONYMOUS_UPLOADS=1`` (uploads without a Hub login; off on a deployed Space) with
``HYPERGVL_TRUSTED_PROXIES`` (the proxy addresses whose ``X-Forwarded-For`` names the client), and the hidden set's
publication rules ``HYPERGVL_HIDDEN_MIN_PROBLEMS``, ``HYPERGVL_HIDDEN_ROUND``, ``HYPERGVL_HIDDEN_MARGIN``.
"""
from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from hypergvl.wheel import build_wheel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: the DHG-Bench reproduction's points the HNN tab reads (``SpaceConfig.reproduction_dir``), staged in
#: ``reproduction/``, which the staged ``app.py`` names in ``HYPERGVL_SPACE_REPRODUCTION``
RESULTS = ROOT / "benchmarks" / "results"
REPRODUCTION = ("points", "fairness_dhgbench")


def stage(out: Path, *, wheel: bool = True) -> Path:
    """Lay out the Space repository in ``out`` (emptied first); returns ``out``."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    if (HERE / "seed_studies").is_dir():
        shutil.copytree(HERE / "seed_studies", out / "seed_studies")
    for name in REPRODUCTION:  # the HNN tab's reproduction rows: the shipped per-seed points
        if (RESULTS / name).is_dir():
            shutil.copytree(RESULTS / name, out / "reproduction" / name)
    shutil.copy2(HERE / "app.py", out / "app.py")
    shutil.copy2(HERE / "README.md", out / "README.md")
    requirements = (HERE / "requirements.txt").read_text()
    if wheel:
        requirements += f"./{build_wheel(out).name}\n"
    (out / "requirements.txt").write_text(requirements)
    return out


def deploy(space_id: str, staged: Path, *, api=None, secrets: dict | None = None, variables: dict | None = None,
           private: bool = False) -> str:
    """Create (if needed) and upload the Space; returns its URL."""
    if api is None:
        # lazy: huggingface_hub 0.23 s; only a deploy without an api given needs it
        from huggingface_hub import HfApi

        api = HfApi()
    api.create_repo(space_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
    for k, v in (secrets or {}).items():
        api.add_space_secret(space_id, k, v)
    for k, v in (variables or {}).items():
        api.add_space_variable(space_id, k, v)
    api.upload_folder(folder_path=str(staged), repo_id=space_id, repo_type="space",
                      commit_message="Deploy the HyperGVL leaderboard")
    return f"https://huggingface.co/spaces/{space_id}"


def _pairs(items) -> dict:
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"expected KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="hypergvl space deploy", description=__doc__.splitlines()[0])
    p.add_argument("--space-id", required=True, help="ORG/NAME of the Space")
    p.add_argument("--stage", type=Path, default=ROOT / "out" / "space-stage", help="where to lay the Space out")
    p.add_argument("--secret", action="append", metavar="KEY=VALUE", help="e.g. HYPERGVL_HIDDEN_SEED=...")
    p.add_argument("--variable", action="append", metavar="KEY=VALUE", help="e.g. HYPERGVL_RESULTS_REPO=org/results")
    p.add_argument("--private", action="store_true")
    p.add_argument("--dry-run", action="store_true", help="stage only")
    args = p.parse_args(argv)
    staged = stage(args.stage)
    if args.dry_run:
        print(f"staged the Space in {staged}")
        return 0
    print(deploy(args.space_id, staged, secrets=_pairs(args.secret), variables=_pairs(args.variable),
                 private=args.private))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
