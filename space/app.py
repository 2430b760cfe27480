"""The HyperGVL leaderboard Space: browse, compare and submit, re-scored by the server.

    python space/app.py            # local: embedded SQLite store under space/.data, seeded with the baselines

Tabs, one module each under ``space/tabs/``, registered with ``@register_tab`` (:mod:`hypergvl.space.tabs.base`):
Leaderboard (HyperGVL Table 3 layout), Reported in the paper (the paper's own Tables 3 and 4, not re-scored and not
ranked with ours), Representations (Table 4, the task x representation heatmap, Figures 3 and 4), Router (routed
results, Figure 5 style), HNN (DHG-Bench tables and figures from ``hypergvl.models.study`` result folders), Browse
(public set: image, prompt, reference answer), Submit (uploads re-scored by the server, requests for the worker, the
queue). Built from Gradio 6 components only (``gradio_leaderboard`` needs gradio<6).

Everything a user types or uploads is shown as text (Textbox, Dataframe ``str`` cells): no Markdown or HTML is
rendered from user input. Configuration: :class:`hypergvl.space.service.SpaceConfig` (environment variables)."""
from __future__ import annotations

import threading
import time
from pathlib import Path

if __name__ == "__main__" and __package__ in (None, ""):  # run as a script: `python space/app.py`, or the Space
    _here = Path(__file__).resolve().parent  # in a checkout this is space/; in a deployed Space, the repo root
    if _here.name != "space":  # a deployed Space (hypergvl.space.deploy): the studies it shows are staged beside
        import os

        os.environ.setdefault("HYPERGVL_SPACE_STUDIES", str(_here / "seed_studies"))
        os.environ.setdefault("HYPERGVL_SPACE_REPRODUCTION", str(_here / "reproduction"))
    from hypergvl.space.app import main

    main()
    raise SystemExit(0)

import gradio as gr  # noqa: E402
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot  # noqa: E402,F401 - imported once here, in the main thread: gradio switches the backend on
# every event (importing pyplot) while the HNN-report thread draws, and two threads importing pyplot at once leave
# one of them a partially initialised module ("no attribute 'switch_backend'"): the first submissions then failed.

from hypergvl.render import RENDERERS  # noqa: E402
from hypergvl.tasks import task_codes  # noqa: E402
from hypergvl.text import TEXT_REPS  # noqa: E402

from .config import SpaceConfig  # noqa: E402
from . import isolation  # noqa: E402
from .rescore import rescore  # noqa: E402
from .seed import seed  # noqa: E402
from .service import Service, current_sets, make_service  # noqa: E402
from .tabs import in_order  # noqa: E402
from .tabs.base import OnLoad, Page  # noqa: E402
from .tabs.hnn import hnn_report  # noqa: E402
from .upload_limits import UploadLimit  # noqa: E402


def build_app(service: Service, *, oauth: bool = False) -> gr.Blocks:
    """The Blocks app over ``service`` (``oauth``: require a Hub login to submit, rate-limited per user): a
    ``gr.Tab`` per registered tab (:mod:`hypergvl.space.tabs`), in page order, and what each fills at page load."""
    page = Page(service, current_sets(service), oauth)
    threading.Thread(target=hnn_report, args=(service,), daemon=True).start()  # warm the HNN tab
    window = int(service.config.upload_window_s)  # uploads kept at most this long (hypergvl.space.upload_limits)
    loads: list[OnLoad] = []
    with gr.Blocks(title="HyperGVL leaderboard", delete_cache=(window, window)) as app:
        tasks, texts, visuals = len(task_codes()), len(TEXT_REPS), len(RENDERERS)  # 12, 7 and 5 in the paper
        gr.Markdown("# HyperGVL leaderboard\nHypergraph understanding and reasoning of vision-language models "
                    f"({tasks} tasks, {texts} textual x {visuals} visual representations). Every score is computed "
                    "by this server from the raw responses; submitted scores are never used.")
        if oauth:
            gr.LoginButton()
        for tab in in_order():
            with gr.Tab(tab.title, id=f"tab-{tab.name}"):
                loads += tab.build(page)
        for load in loads:
            app.load(load.fn, None, list(load.outputs), api_name=False, queue=load.queue)
    return app


def launch(service: Service, *, port: int | None = None, oauth: bool = False, prevent_thread_lock: bool = False,
           quiet: bool = False) -> tuple[gr.Blocks, str]:
    """Launch the app; returns the Blocks (``.close()`` stops it) and its local URL."""
    import os

    from starlette.middleware import Middleware

    # Gradio summarises its per-event records (up to 10,000, in a pandas frame) after every event for a monitoring
    # page this app does not open: a profile under 50 visitors found 4% of the server's time there
    os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", str(10 ** 9))
    isolation.HOST.warm()  # the process uploads are graded from (hypergvl.space.isolation): started now, not at the first upload
    app = build_app(service, oauth=oauth).queue(default_concurrency_limit=8, max_size=256)
    cfg = service.config
    data = cfg.data_dir
    limit = Middleware(UploadLimit, counters=service.counters, max_file_bytes=cfg.limits.max_bytes,
                       files=cfg.upload_files, total_bytes=cfg.upload_bytes, window_s=cfg.upload_window_s, oauth=oauth,
                       anonymous=cfg.anonymous_uploads)
    # uvicorn rewrites the client address from X-Forwarded-For for the peers in this list (by default loopback,
    # which let any local client choose its submitter identity): only the configured proxies, none by default
    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(service.config.trusted_proxies)
    # Only figures and the public download may be served; the hidden builds, the seeds, uploads and runs never.
    _, url, _ = app.launch(server_name="127.0.0.1" if port is not None else None, server_port=port,
                      max_file_size=service.config.limits.max_bytes, prevent_thread_lock=prevent_thread_lock,
                      quiet=quiet, show_error=False, allowed_paths=[str(data / "figures"), str(data / "downloads")],
                      app_kwargs={"middleware": [limit]},
                      # Gradio's self-check (HEAD / answered within 3 s, else "localhost is not accessible") failed
                      # starts on a busy machine; the server runs either way, and this skips only that check
                      _frontend=False,
                      blocked_paths=[str(data / d) for d in ("private", "builds", "uploads", "runs")]
                      + [str(data / "leaderboard.sqlite")])
    return app, url


def start(service: Service, say=None) -> dict:
    """What the app does before it serves: build the test sets, seed the baselines (first start only), and re-grade
    the entries an older scorer version graded (:mod:`hypergvl.space.rescore`); returns the re-grade report.
    ``say`` (default ``print``) gets a progress line per step, with the seconds since the start."""
    t0 = time.monotonic()

    def step(text: str) -> None:
        (say or (lambda line: print(line, flush=True)))(f"[{time.monotonic() - t0:6.1f} s] {text}")

    step(f"test sets in {service.config.data_dir.name}/ (built on a first start) ...")
    current_sets(service)
    if service.config.seed_baselines:
        seed(service, progress=lambda i, n, what: step(f"seeding the baselines (first start only) {i}/{n}: {what}"))
    step("re-grading entries of older scorer versions, if any ...")
    report = rescore(service)
    if report["regraded"] or report["kept"]:
        print(f"scorer version {report['version']}: re-graded {len(report['regraded'])} entries, kept "
              f"{len(report['kept'])} as they were (listed by hypergvl space rescore)", flush=True)
    step("starting the server ...")
    return report


def main(argv=None) -> None:
    """``hypergvl space serve``: the Space on this machine, configured by its environment variables
    (:meth:`~hypergvl.space.service.SpaceConfig.from_env`)."""
    import argparse
    import os

    p = argparse.ArgumentParser(prog="hypergvl space serve", description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, help="serve on 127.0.0.1:PORT (default: Gradio's, $GRADIO_SERVER_PORT or 7860, "
                   "on every interface a deployed Space needs)")
    p.add_argument("--data-dir", type=Path, help="the Space's data folder (default $HYPERGVL_SPACE_DATA, else "
                   "space/.data in a checkout)")
    args = p.parse_args(argv)
    if args.port is not None and not 0 < args.port < 65536:
        p.error(f"--port {args.port}: a port is 1 to 65535")
    env = dict(os.environ, **({"HYPERGVL_SPACE_DATA": str(args.data_dir)} if args.data_dir else {}))
    service = make_service(SpaceConfig.from_env(env))
    start(service)
    launch(service, port=args.port, oauth=bool(os.environ.get("OAUTH_CLIENT_ID")))


if __name__ == "__main__":
    main()
