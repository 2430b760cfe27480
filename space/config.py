"""The Space's configuration: :class:`SpaceConfig`, read from environment variables by :meth:`SpaceConfig.from_env`.

Its own module, below the service, the test sets and the worker that all read it."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .scoring import Limits


def default_data_dir(env=os.environ, here: Path = Path(__file__).resolve().parent) -> Path:
    """Where the Space keeps its store, test sets, uploads and runs when ``$HYPERGVL_SPACE_DATA`` is not set: on a
    Hub Space with persistent storage ``/data/hypergvl``; from a checkout ``space/.data`` (git-ignored); from an
    installed wheel the user's data folder (``$XDG_DATA_HOME/hypergvl/space``, else
    ``~/.local/share/hypergvl/space``), never inside the installed package, which an upgrade replaces and a user
    may not be allowed to write."""
    if env.get("SPACE_ID") and Path("/data").is_dir():
        return Path("/data/hypergvl")
    if (here.parent / "pyproject.toml").is_file():  # space/ beside the checkout's pyproject.toml
        return here / ".data"
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "hypergvl" / "space"


@dataclass(frozen=True)
class SpaceConfig:
    """Everything the Space is configured with (environment variables in :meth:`from_env`)."""

    data_dir: Path = field(default_factory=default_data_dir)
    public_seed: int = 0
    per_task: int = 4
    hidden_seed: int | None = field(default=None, repr=False)  # a secret: never in a repr, a log or an error
    limits: Limits = Limits()
    rate_limit: int = 5                 # submissions and requests per submitter per window
    rate_window_s: float = 24 * 3600.0
    reject_limit: int = 20              # rejected uploads and requests per submitter per window (a limit of their own)
    hidden_min_problems: int = 10       # a published hidden-set number aggregates at least this many problems
    hidden_round: float = 1.0           # hidden-set numbers are published rounded to this many points
    hidden_margin: float = 1.0          # Ladder: a submitter's new hidden score shows only above its best + this
    trusted_proxies: tuple[str, ...] = ()  # peers whose X-Forwarded-For names the client (uvicorn's rule)
    anonymous_uploads: bool = True      # without a Hub login, the peer address is the submitter
    upload_files: int = 30              # files a submitter may send to gradio's upload route per upload window
    upload_bytes: int = 256 * 2 ** 20   # and bytes: what the route may hold on disk per submitter (kept at most
    upload_window_s: float = 3600.0     # the window, then deleted; a graded upload is deleted at once)
    request_prefixes: tuple[str, ...] = ("hf", "openai", "baseline")
    local_requests: bool = False        # requests may name server files (hf:/path, name:dataset=...): the operator's
    #                                     own runs only ($HYPERGVL_LOCAL_REQUESTS=1; never on a deployed Space)
    anonymous_requests: int = 10        # evaluation requests all anonymous submitters together may make per window
    api_models: tuple[str, ...] | None = None  # the openai:NAME models the maintainer serves (None: any name)
    claim_ttl_s: float = 600.0
    request_budget_s: float = 6 * 3600.0  # wall-clock time one evaluation request may run (then FAILED)
    request_max_new_tokens: int = 4096  # tokens a model may generate per response in a request (the harness default)
    request_attempts: int = 3           # claims of one request (a worker died each time) before it is FAILED
    study_dirs: tuple[Path, ...] = ()
    #: the DHG-Bench reproduction's shipped points (``points/``, ``fairness_dhgbench/``): the checkout's
    #: ``benchmarks/results``, or a deployed bundle's ``reproduction/`` ($HYPERGVL_SPACE_REPRODUCTION, set by its
    #: app.py)
    reproduction_dir: Path | None = None
    seed_baselines: bool = True
    #: seconds a page view (leaderboard table, figures) may lag behind the store: after a submission the views of
    #: the entries before it are served until this many seconds have passed, then recomputed once. Recomputing
    #: every view after every submission was a third of the server's time under 50 visitors and a submission a
    #: second (benchmarks/space_load.py, py-spy). 0: every view is exact ($HYPERGVL_VIEW_REFRESH_S; a deployed
    #: Space's default is 5)
    view_refresh_s: float = 0.0

    @classmethod
    def from_env(cls, env=os.environ) -> "SpaceConfig":
        here = Path(__file__).resolve().parent
        studies = env.get("HYPERGVL_SPACE_STUDIES")
        deployed = bool(env.get("SPACE_ID"))
        proxies = env.get("HYPERGVL_TRUSTED_PROXIES", "")
        anonymous = env.get("HYPERGVL_ANONYMOUS_UPLOADS", "")
        if anonymous not in ("", "0", "1"):
            raise ValueError("HYPERGVL_ANONYMOUS_UPLOADS must be 0 or 1")
        local = env.get("HYPERGVL_LOCAL_REQUESTS", "")
        if local not in ("", "0", "1"):
            raise ValueError("HYPERGVL_LOCAL_REQUESTS must be 0 or 1")
        if local == "1" and deployed:
            raise ValueError("HYPERGVL_LOCAL_REQUESTS=1 is for a Space run by its operator on their own machine, "
                             "not a deployed one (SPACE_ID is set)")
        cfg = cls(
            data_dir=Path(env.get("HYPERGVL_SPACE_DATA") or default_data_dir(env)),
            public_seed=int(env.get("HYPERGVL_PUBLIC_SEED", 0)), per_task=int(env.get("HYPERGVL_PER_TASK", 4)),
            hidden_seed=_secret_seed(env.get("HYPERGVL_HIDDEN_SEED")),
            rate_limit=int(env.get("HYPERGVL_RATE_LIMIT", 5)),
            rate_window_s=float(env.get("HYPERGVL_RATE_WINDOW_S", 24 * 3600)),
            reject_limit=int(env.get("HYPERGVL_REJECT_LIMIT", 20)),
            hidden_min_problems=int(env.get("HYPERGVL_HIDDEN_MIN_PROBLEMS", 10)),
            hidden_round=float(env.get("HYPERGVL_HIDDEN_ROUND", 1.0)),
            hidden_margin=float(env.get("HYPERGVL_HIDDEN_MARGIN", 1.0)),
            trusted_proxies=tuple(p.strip() for p in proxies.split(",") if p.strip()),
            anonymous_uploads=anonymous == "1" if anonymous else not deployed,
            upload_files=int(env.get("HYPERGVL_UPLOAD_FILES", 30)),
            upload_bytes=int(env.get("HYPERGVL_UPLOAD_BYTES", 256 * 2 ** 20)),
            request_prefixes=("hf", "openai") if deployed else ("hf", "openai", "baseline"),
            local_requests=local == "1",
            anonymous_requests=int(env.get("HYPERGVL_ANONYMOUS_REQUESTS", 10)),
            # deployed, an API model is one the maintainer named (none by default); locally any name is passed on
            api_models=tuple(m.strip() for m in env.get("HYPERGVL_API_MODELS", "").split(",") if m.strip())
            if deployed or env.get("HYPERGVL_API_MODELS") else None,
            request_budget_s=float(env.get("HYPERGVL_REQUEST_BUDGET_S", 6 * 3600)),
            request_max_new_tokens=int(env.get("HYPERGVL_REQUEST_MAX_NEW_TOKENS", 4096)),
            request_attempts=int(env.get("HYPERGVL_REQUEST_ATTEMPTS", 3)),
            study_dirs=tuple(Path(p) for p in studies.split(os.pathsep)) if studies else (here / "seed_studies",),
            reproduction_dir=Path(env.get("HYPERGVL_SPACE_REPRODUCTION") or here.parent / "benchmarks" / "results"),
            view_refresh_s=float(env.get("HYPERGVL_VIEW_REFRESH_S", 5.0 if deployed else 0.0)),
        )
        if not 0 <= cfg.view_refresh_s <= 3600:
            raise ValueError("HYPERGVL_VIEW_REFRESH_S must be 0 to 3600 seconds")
        if cfg.request_budget_s <= 0 or cfg.request_max_new_tokens < 1 or cfg.request_attempts < 1:
            raise ValueError("HYPERGVL_REQUEST_BUDGET_S must be positive, HYPERGVL_REQUEST_MAX_NEW_TOKENS and "
                             "HYPERGVL_REQUEST_ATTEMPTS at least 1")
        if cfg.hidden_min_problems < 1 or cfg.hidden_round < 0 or cfg.hidden_margin < 0:
            raise ValueError("HYPERGVL_HIDDEN_MIN_PROBLEMS must be at least 1, HYPERGVL_HIDDEN_ROUND and "
                             "HYPERGVL_HIDDEN_MARGIN at least 0")
        return cfg


def _secret_seed(text: str | None) -> int | None:
    """``$HYPERGVL_HIDDEN_SEED`` as an integer; the error never repeats the value (it is a secret)."""
    if not text:
        return None
    try:
        seed = int(text.strip())
    except ValueError:
        raise ValueError("HYPERGVL_HIDDEN_SEED is not a decimal integer (its value is not shown: it is a secret)") \
            from None
    if seed < 0:
        raise ValueError("HYPERGVL_HIDDEN_SEED must not be negative (its value is not shown: it is a secret)")
    return seed
