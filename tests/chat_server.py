"""A loopback OpenAI-compatible chat-completions server for the tests and ``benchmarks/harness.py``.

It binds 127.0.0.1 on a free port, counts the requests in flight (its own counter, so a test can check what the
client kept in flight) and logs every change of that count with a timestamp. ``script`` holds the next actions
("ok", "length", 429, 500, 400, "drop", "slow", "garbage"); when it is empty every request succeeds with
``echo:<prompt text>`` and ``finish_reason`` ``"stop"`` ("length": the same text, cut at ``max_tokens``), after
``delay(prompt)`` seconds (default: 0-40 ms, so answers finish out of order).
"""
from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


def _default_delay(prompt: str) -> float:
    return 0.01 * (len(prompt) % 5)


class ChatServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024

    def __init__(self, delay: Callable[[str], float] = _default_delay, record: bool = True):
        super().__init__(("127.0.0.1", 0), ChatHandler)
        self.script: deque = deque()
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.in_flight = self.max_in_flight = 0
        self.served = 0
        self.events: list[tuple[float, int]] = []  # (time.monotonic(), in flight after the change)
        self.delay, self.record = delay, record

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def mean_in_flight(self) -> float:
        """Time-weighted mean of the in-flight count from the first to the last request's arrival (the tail, when
        no request is left to send, is excluded)."""
        with self.lock:
            events = list(self.events)
        arrivals = [i for i in range(1, len(events)) if events[i][1] > events[i - 1][1]] or [0]
        start = next(i for i, (_, n) in enumerate(events) if n > 0)
        end = arrivals[-1]
        area = sum((events[i + 1][0] - events[i][0]) * events[i][1] for i in range(start, end))
        span = events[end][0] - events[start][0]
        return area / span if span > 0 else float(events[start][1])


class ChatHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    disable_nagle_algorithm = True  # headers and body leave at once, as from a real server

    def log_message(self, *args):  # keep test output clean
        pass

    def _change(self, step: int) -> None:
        server: ChatServer = self.server
        with server.lock:
            server.in_flight += step
            server.max_in_flight = max(server.max_in_flight, server.in_flight)
            server.served += step < 0
            server.events.append((time.monotonic(), server.in_flight))

    def _done(self):
        """Leave the in-flight count once, before the reply is written: the client may send its next request as
        soon as it has the reply, before this thread would reach ``finally``."""
        if getattr(self, "_counted", False):
            self._change(-1)
            self._counted = False

    def _send(self, status: int, body: bytes, headers=()):
        self._done()
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        server: ChatServer = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with server.lock:
            if server.record:
                server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
            action = server.script.popleft() if server.script else "ok"
        self._change(+1)
        self._counted = True
        try:
            prompt = next(part["text"] for part in body["messages"][0]["content"] if part["type"] == "text")
            if action == "drop":
                self.close_connection = True  # no status line at all: the client sees a dropped connection
                return
            if action == "slow":  # longer than the client's timeout, then hang up
                time.sleep(1.0)
                self.close_connection = True
                return
            if action == "garbage":
                self._send(200, b"<html>not json</html>")
            elif isinstance(action, int):
                self._send(action, json.dumps({"error": {"message": f"status {action}"}}).encode(),
                           [("Retry-After", "0")] if action == 429 else [])
            else:
                time.sleep(server.delay(prompt))
                reason = "length" if action == "length" else "stop"
                reply = {"model": body["model"] + "-2024-08-06",
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": f"echo:{prompt}"},
                                      "finish_reason": reason}]}
                self._send(200, json.dumps(reply).encode())
        finally:
            self._done()


@contextlib.contextmanager
def serve(**options):
    """A running :class:`ChatServer`, shut down on exit."""
    chat = ChatServer(**options)
    thread = threading.Thread(target=chat.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield chat
    finally:
        chat.shutdown()
        chat.server_close()
