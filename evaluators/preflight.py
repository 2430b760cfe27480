"""Checks of ``--dataset`` and ``--model`` that answer a user's mistake in about a second, before any network call
that retries or any model load.

Without them a typo cost a minute and said the wrong thing: ``--dataset nope`` retried the Hub five times (72 s) and
never said that ``./nope`` does not exist; ``--model hf:does/not-exist`` took 27 s offline; an ``openai:`` model
with neither ``--base-url`` nor a key tried ``api.openai.com`` for 39 s. Here:

* a dataset or ``hf:`` model that is an existing path is used as it is;
* otherwise the argument must read as a Hub id (``name`` or ``owner/name``), else the error names the missing folder;
* a Hub id needs the Hub: when ``HF_HUB_OFFLINE``/``HF_DATASETS_OFFLINE`` is set, a model must be in the local cache;
  when the Hub's host cannot be reached in :data:`PROBE_S` seconds (one connection attempt, never a retry), a
  dataset or an uncached model is refused with what to do instead;
* an ``openai:`` model needs ``--base-url`` or ``OPENAI_API_KEY``, and a ``--base-url`` whose host refuses the
  connection (no server listening) or has no address is refused at once (one connection attempt, never a retry:
  the adapter keeps its retries for a server that has answered, or answers 429/5xx).
"""
from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from urllib.parse import urlparse

from hypergvl.cli import UserError

PROBE_S = 2.0
_HUB_ID = re.compile(r"^(?:[A-Za-z0-9][\w.-]{0,95}/)?[A-Za-z0-9][\w.-]{0,95}$")
_TRUE = {"1", "ON", "YES", "TRUE"}
_reachable: dict[str, bool] = {}


def offline(kind: str = "model") -> bool:
    """Whether the user asked for no network (``HF_HUB_OFFLINE``, and ``HF_DATASETS_OFFLINE`` for datasets)."""
    names = ["HF_HUB_OFFLINE"] + (["HF_DATASETS_OFFLINE"] if kind == "dataset" else ["TRANSFORMERS_OFFLINE"])
    return any(os.environ.get(n, "").upper() in _TRUE for n in names)


def hub_host() -> tuple[str, int]:
    # lazy: huggingface_hub 0.23 s; 'hypergvl --help' imports this module
    from huggingface_hub import constants

    url = urlparse(os.environ.get("HF_ENDPOINT") or constants.ENDPOINT)
    return url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)


def hub_reachable() -> bool:
    """One TCP connection to the Hub's host, at most :data:`PROBE_S` seconds (remembered for the process)."""
    host, port = hub_host()
    key = f"{host}:{port}"
    if key not in _reachable:
        try:
            socket.create_connection((host, port), timeout=PROBE_S).close()
            _reachable[key] = True
        except OSError:
            _reachable[key] = False
    return _reachable[key]


def check_dataset(dataset: str, flag: str = "--dataset") -> None:
    """A build folder, or a Hub dataset id the Hub can serve now (or, offline, that ``datasets`` may have cached)."""
    path = Path(dataset)
    if path.exists():
        if not path.is_dir():
            raise UserError(f"{flag} {dataset}: a file, not a build folder (hypergvl build --out DIR writes one)")
        return
    if not _HUB_ID.match(dataset):
        raise UserError(f"{flag} {dataset}: no folder {path.resolve()} exists, and it is not a Hub dataset id "
                        "(owner/name); give a build folder (hypergvl build --out DIR) or a Hub id")
    if offline("dataset"):
        return  # datasets reads its cache without a network call, and says so when the id is not there
    if not hub_reachable():
        host, _ = hub_host()
        raise UserError(f"{flag} {dataset}: no folder {path.resolve()} exists, and the Hub ({host}) cannot be "
                        "reached to load it as a dataset id; give a build folder, connect, or set HF_HUB_OFFLINE=1 "
                        "to read a copy the datasets cache already holds")


def check_server(base_url: str, what: str) -> None:
    """One TCP connection to ``base_url``'s host (at most :data:`PROBE_S` s): a refused connection or a host with no
    address is a :class:`UserError` naming the URL and the fix; a slow or filtered host is left to the adapter."""
    url = urlparse(base_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise UserError(f"{what}: --base-url {base_url} is not an http(s) URL (e.g. http://127.0.0.1:8000/v1)")
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname, port), timeout=PROBE_S).close()
    except ConnectionRefusedError:
        raise UserError(f"{what}: nothing listens at {url.hostname}:{port} (connection refused); start the server "
                        f"(e.g. vllm serve MODEL --port {port}) or fix --base-url {base_url}") from None
    except socket.gaierror as exc:
        raise UserError(f"{what}: --base-url {base_url}: host {url.hostname} has no address ({exc.strerror}); "
                        "fix --base-url") from None
    except OSError:
        return  # a timeout or an unreachable network: the adapter's retries and its error say what happened


def _cached_model(repo: str, revision: str | None) -> bool:
    # lazy: huggingface_hub 0.23 s; 'hypergvl --help' imports this module
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(repo, "config.json", revision=revision), str)


def check_model(spec: str, options: dict | None = None) -> None:
    """``hf:`` a folder, or a Hub model id that is cached or downloadable now; ``openai:`` with somewhere to send."""
    options = options or {}
    prefix, _, rest = spec.partition(":")
    if prefix == "openai":
        if not options.get("base_url") and not os.environ.get("OPENAI_API_KEY"):
            raise UserError(f"--model {spec}: give --base-url URL (an OpenAI-compatible server, e.g. "
                            "http://127.0.0.1:8000/v1) or set OPENAI_API_KEY to use api.openai.com")
        if options.get("base_url"):
            check_server(options["base_url"], f"--model {spec}")
        return
    if prefix != "hf" or not rest:
        return  # baseline: and unknown prefixes are answered by the adapter registry
    check_hub_model(rest, f"--model {spec}", options.get("revision"))


def check_hub_model(name: str, what: str, revision: str | None = None) -> None:
    """A model folder, or a Hub model id that is cached or downloadable now (``what`` names the flag in the error):
    never a download's retries against an unreachable or offline Hub."""
    if Path(name).exists():
        return
    if not _HUB_ID.match(name):
        raise UserError(f"{what}: no such model folder ({Path(name).resolve()}), and not a Hub model id "
                        "(owner/name)")
    if _cached_model(name, revision):
        return
    if offline():
        raise UserError(f"{what}: not a loadable Hub model here: not in the local Hugging Face cache, and "
                        "HF_HUB_OFFLINE is set; download it "
                        f"on a connected machine (huggingface-cli download {name}) or give a local folder")
    if not hub_reachable():
        host, _ = hub_host()
        raise UserError(f"{what}: not a loadable Hub model here: not in the local Hugging Face cache, and "
                        f"the Hub ({host}) cannot be "
                        f"reached; connect, download it elsewhere (huggingface-cli download {name}) or give a "
                        "local folder")


__all__ = ["check_dataset", "check_model", "check_hub_model", "check_server", "hub_reachable", "offline"]
