"""``hypergvl submit``: send a run, or an evaluation request, to the leaderboard Space through its API.

A run (the folder ``hypergvl evaluate --out`` wrote) goes up as a zip of its ``samples.jsonl`` and ``results.json``
to the Space's ``/submit`` endpoint, which re-scores every response; ``--request hf:ORG/NAME`` calls ``/request``
instead, so the Space's worker evaluates the model. One line per outcome; exit status 0 accepted (or queued),
1 refused by the Space (a rate limit included), 2 bad arguments, an unreadable run, or a Space that cannot be
reached (nothing was decided there). The Hub login ($HF_TOKEN, else the one `hf auth login` stored) goes
only to a Space on the Hub (an ORG/NAME id or an https URL on huggingface.co or hf.space) and is never printed."""
from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path
from urllib.parse import urlparse

from hypergvl.cli import UserError, command

from .run_folder import LOG, RESULTS, finished_records, read_results

RUN_FILES = (LOG, RESULTS)
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_SCORES = re.compile(r"accuracy (-|\d+\.\d+), Avg\.U (-|\d+\.\d+), Avg\.R (-|\d+\.\d+)")
_HUB_HOSTS = ("huggingface.co", "hf.space")


def _args(p: argparse.ArgumentParser) -> None:
    p.description = __doc__.split("\n\n")[1].replace("\n", " ").replace("``", "`")
    p.add_argument("run", nargs="?", metavar="RUN", help="a `hypergvl evaluate --out` folder (samples.jsonl and "
                   "results.json); its track (vision, text-only, routed) is read from its results.json")
    p.add_argument("--request", metavar="hf:ORG/NAME", help="instead of a run: ask the Space's worker to evaluate "
                   "this model (shown in the Space's queue)")
    p.add_argument("--space", required=True, metavar="URL_OR_ID",
                   help="the Space: a URL (http://127.0.0.1:7860/) or a Hub id (ORG/NAME)")
    p.add_argument("--model", metavar="NAME", help="the model's name on the leaderboard (runs only)")
    p.add_argument("--revision", default="main", help="the model's branch, tag or commit (default: main)")
    p.add_argument("--type", dest="model_type", required=True, choices=("open", "closed"))
    p.add_argument("--params", required=True, type=float, metavar="B", help="parameters in billions (0: not stated)")
    p.add_argument("--testset", default="public", choices=("public", "hidden"),
                   help="the Space's current public or hidden test set (default: public); the hidden set takes "
                   "--request only: its scores come from runs the Space makes")
    p.add_argument("--track", choices=("vision", "text-only"), help="the track of a --request (default: vision)")
    p.add_argument("--link", default="", help="a Hub id or URL shown with the entry")


def _space(text: str) -> tuple[str, bool]:
    """``(src, on_the_hub)`` for gradio_client; the Hub login goes only to the Hub, never to another host."""
    if _HUB_ID.match(text):
        return text, True
    url = urlparse(text)
    if url.scheme in ("http", "https") and url.hostname:
        host = url.hostname.lower()
        return text, url.scheme == "https" and any(host == h or host.endswith("." + h) for h in _HUB_HOSTS)
    raise UserError(f"--space {text!r} is neither an http(s) URL nor a Hub Space id (ORG/NAME)")


def _read_run(run: Path) -> tuple[str, str]:
    """``(track, routing)`` of a run folder, from its results.json; both files must be there."""
    if not run.is_dir():
        raise UserError(f"{run} is not a run folder (`hypergvl evaluate --out` writes one)")
    for name in RUN_FILES:
        if not (run / name).is_file():
            raise UserError(f"{run} has no {name}: submit the folder `hypergvl evaluate --out` wrote")
    results = read_results(run)
    finished_records(run, results)  # a cut or short samples.jsonl is refused here, not by the Space after the upload
    try:
        policy = (results.get("selection") or {}).get("routing")
        text_only = bool(results.get("text_only"))
    except AttributeError as exc:
        raise UserError(f"{run / RESULTS} is not a hypergvl evaluate results.json ({exc})") from None
    if policy:
        return "routed", str(policy).partition(":")[0]  # "rand:0" -> the leaderboard's policy "rand"
    return ("text-only" if text_only else "vision"), ""


def _zip_run(run: Path, into: Path) -> Path:
    """The two files the Space reads, zipped with a fixed date, so one run always gives the same upload."""
    path = into / f"{run.resolve().name or 'run'}.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name in RUN_FILES:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(run / name, "rb") as src, z.open(info, "w") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    return path


def _testset(client, endpoint: str, kind: str, space: str) -> str:
    """The name of the Space's current ``kind`` test set: the choice of the endpoint's test-set input."""
    api = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    if endpoint not in api:
        raise UserError(f"Space {space} has no {endpoint} endpoint: is it the HyperGVL leaderboard?")
    param = next((p for p in api[endpoint]["parameters"] if p.get("parameter_name") == "testset"), {})
    names = [n for n in param.get("type", {}).get("enum", []) if str(n).startswith(f"{kind}-")]
    if not names:
        raise UserError(f"Space {space} offers no {kind} test set")
    return names[0]


def _call(client, space: str, *args, **kwargs):
    """``client.predict``; a connection that fails is a user error (2), anything the Space raises a refusal."""
    # lazy: httpx 0.21 s; 'hypergvl --help' imports this module, only a call to the Space needs it
    import httpx

    try:
        return client.predict(*args, **kwargs)
    except (httpx.TransportError, ConnectionError) as exc:
        raise UserError(f"cannot reach Space {space}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the Space refused (an app error, an upload over its size limit)
        return f"Rejected: {exc}"


def _outcome(space: str, message: str, accepted: str) -> int:
    """Print the Space's answer as one line; its exit status."""
    if message.startswith(accepted):
        m = _SCORES.search(message)  # a request's answer, or hidden-set scores the Ladder withholds: verbatim
        print(f"accepted: accuracy {m[1]}, Avg.U {m[2]}, Avg.R {m[3]}; {message}" if m else message)
        return 0
    kind = "rate limited" if message.startswith("Rejected: rate limit") else "refused"
    print(f"{kind} by Space {space}: {message}", file=sys.stderr)
    return 1


@command("submit", _args)
def _submit(args: argparse.Namespace) -> int:
    """Send a run (or an evaluation request) to the leaderboard Space; exit 0 accepted, 1 refused, 2 otherwise."""
    if (args.run is None) == (args.request is None):
        raise UserError("give either RUN (a `hypergvl evaluate --out` folder) or --request hf:ORG/NAME")
    if args.request is None and not (args.model or "").strip():
        raise UserError("--model NAME is required with RUN (the name the leaderboard shows)")
    if args.request is not None and args.model:
        raise UserError("--model is for runs: a request is shown under its model id")
    if args.run is not None and args.track:
        raise UserError("--track is for requests: a run's track is read from its results.json")
    if args.run is not None and args.testset == "hidden":
        raise UserError("the hidden set takes no uploaded run: its scores come only from runs the Space makes; "
                        "use --request hf:ORG/NAME --testset hidden (an uploaded RUN is scored on the public set)")
    src, on_hub = _space(args.space)
    track, routing = _read_run(Path(args.run)) if args.run is not None else (args.track or "vision", "")

    # lazy: gradio_client 0.7 s; 'hypergvl --help' imports this module, only a submission needs it
    from gradio_client import Client, handle_file
    from huggingface_hub import get_token

    try:  # the token ($HF_TOKEN, else the stored `hf auth login`) is sent to the Hub only and never printed
        client = Client(src, token=get_token() if on_hub else None, verbose=False, download_files=False,
                        analytics_enabled=False)
    except Exception as exc:  # noqa: BLE001 - whatever stops the connection (DNS, refused, 404, offline Hub)
        raise UserError(f"cannot reach Space {args.space}: {str(exc) or type(exc).__name__}") from None
    common = dict(link=args.link, revision=args.revision, model_type=args.model_type, params=args.params,
                  track=track)
    if args.request is not None:
        testset = _testset(client, "/request", args.testset, args.space)
        answer = _call(client, args.space, model=args.request, testset=testset, api_name="/request", **common)
        return _outcome(args.space, answer if isinstance(answer, str) else answer[0], "Queued")
    testset = _testset(client, "/submit", args.testset, args.space)
    with tempfile.TemporaryDirectory(prefix="hypergvl-submit-") as tmp:
        upload = _zip_run(Path(args.run), Path(tmp))
        message = _call(client, args.space, file=handle_file(str(upload)), model=args.model, routing=routing,
                        testset=testset, api_name="/submit", **common)
    return _outcome(args.space, message, "Accepted")
