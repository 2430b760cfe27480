"""Start a published Gradio app as a Space does: ``python app.py`` in a fresh process, the Space's folder as the
working directory, the port in ``GRADIO_SERVER_PORT``; then talk to it with ``gradio_client`` as a visitor would."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from gradio_client import Client


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def started(folder: Path, *, pythonpath: Path | None = None, env: dict | None = None, start_limit_s: float = 600):
    """A ``gradio_client.Client`` of ``folder``'s ``app.py`` run as a Space runs it (``pythonpath``: what the
    Space's pip installed, ahead of this environment's packages); the process is stopped on exit. A process that
    exits before it serves fails with its output."""
    port = free_port()
    run_env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "GRADIO_SERVER_NAME": "127.0.0.1",
               "GRADIO_ANALYTICS_ENABLED": "False", **(env or {})}
    if pythonpath is not None:
        run_env["PYTHONPATH"] = str(pythonpath)
    log = open(folder.parent / f"{folder.name}.log", "w+")  # noqa: SIM115 - read back on failure, closed below
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=folder, env=run_env, stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + start_limit_s  # a guard against a hang, not a bound on start-up time
        while True:
            if proc.poll() is not None:
                log.seek(0)
                raise AssertionError(f"{folder}/app.py exited with {proc.returncode}:\n{log.read()[-4000:]}")
            try:  # the app answers its API description (bound is not enough: a busy machine is slow to serve)
                urllib.request.urlopen(f"http://127.0.0.1:{port}/gradio_api/info", timeout=30)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"{folder}/app.py did not serve on port {port}") from None
                time.sleep(0.5)
        yield Client(f"http://127.0.0.1:{port}/", verbose=False, httpx_kwargs={"timeout": 300})
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
