"""The ``openai:`` adapter: any OpenAI-compatible chat-completions server (:class:`OpenAIAdapter`, options
:class:`OpenAIConfig`), the image sent as a base64 PNG data URL, requests concurrent, retried with exponential
backoff and jitter. Standard library HTTP only."""
from __future__ import annotations

import base64
import http.client
import json
import logging
import os
import random
import socket
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .base import (DEFAULT_MAX_NEW_TOKENS, AdapterError, Generation, ModelInfo, Sample, _check, _check_batch, _is_int,
                   _is_number, _png_bytes, make_config, register_adapter)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class OpenAIConfig:
    """Options of the ``openai:`` adapter. The API key is read from ``OPENAI_API_KEY`` (none for local servers)."""

    base_url: str = "https://api.openai.com/v1"
    max_tokens: int = DEFAULT_MAX_NEW_TOKENS
    temperature: float = 0.0  # 0 = greedy, as for the open models
    concurrency: int = 4  # requests in flight at once
    timeout: float = 120.0  # seconds per request
    max_retries: int = 5  # after the first attempt, on HTTP 429 / 5xx, dropped connections and timeouts
    backoff: float = 1.0  # seconds before the first retry; doubles each retry, with +-50% jitter
    max_backoff: float = 60.0
    seed: int = 0  # of the jitter
    model_type: str = "closed"  # "open" when the server runs an open-weight model (vLLM, SGLang, ...)

    def __post_init__(self):
        _check(isinstance(self.base_url, str) and self.base_url.startswith(("http://", "https://")),
               f"base_url must start with http:// or https://, got {self.base_url!r}")
        _check(_is_int(self.max_tokens) and self.max_tokens > 0, "max_tokens must be a positive integer")
        _check(_is_number(self.temperature) and self.temperature >= 0, "temperature must be a number >= 0")
        _check(_is_int(self.concurrency) and self.concurrency > 0, "concurrency must be a positive integer")
        _check(_is_number(self.timeout) and self.timeout > 0, "timeout must be a positive number of seconds")
        _check(_is_int(self.max_retries) and self.max_retries >= 0, "max_retries must be an integer >= 0")
        _check(_is_number(self.backoff) and self.backoff >= 0, "backoff must be a number of seconds >= 0")
        _check(_is_number(self.max_backoff) and self.max_backoff >= 0, "max_backoff must be a number >= 0")
        _check(_is_int(self.seed), "seed must be an integer")
        _check(self.model_type in ("open", "closed"), f"model_type must be open or closed, got {self.model_type!r}")


_IMAGE_SLOT = "@@hypergvl-image@@"  # the image part precedes the text, so its slot is the first occurrence
_RETRYABLE = (http.client.HTTPException, OSError)  # refused, reset or dropped connections, timeouts
# no server there (nothing listens, no such host): not retried until the server has answered once (then a refused
# connection is a restart, retried like the others)
_NO_SERVER = (ConnectionRefusedError, socket.gaierror)


class OpenAIAdapter:
    """Chat completions over HTTP: one request per sample, ``concurrency`` at a time, order preserved."""

    def __init__(self, model: str, config: OpenAIConfig):
        self.model, self.config = model, config
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        parts = urllib.parse.urlsplit(self.url)
        self._scheme, self._netloc = parts.scheme, parts.netloc
        self._path = parts.path + (f"?{parts.query}" if parts.query else "")
        self._local = threading.local()  # one kept-alive connection per request thread
        self.headers = {"Content-Type": "application/json"}
        api_key = os.environ.get("OPENAI_API_KEY")
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self._rng = random.Random(config.seed)
        self._lock = threading.Lock()
        self._served_model: str | None = None
        self._answered = False  # whether the server has answered any request (then a refused connection is retried)

    @property
    def concurrency(self) -> int:
        """Requests kept in flight: the harness runs a sliding window of this many (``hypergvl.evaluators.pipeline``)."""
        return self.config.concurrency

    def _payload(self, sample: Sample) -> bytes:
        """The JSON request body. The base64 image is spliced in after encoding the rest: its alphabet needs no JSON
        escaping, and scanning tens of kilobytes for escapes would be most of the harness's work per request."""
        content: list[dict] = []  # without an image, a text-only message: the one text part
        if sample.image is not None:
            content.append({"type": "image_url", "image_url": {"url": _IMAGE_SLOT}})
        content.append({"type": "text", "text": sample.prompt})
        body = json.dumps({"model": self.model, "messages": [{"role": "user", "content": content}],
                           "max_tokens": self.config.max_tokens, "temperature": self.config.temperature}).encode()
        if sample.image is None:
            return body
        head, tail = body.split(_IMAGE_SLOT.encode(), 1)
        return b"".join((head, b"data:image/png;base64,", base64.b64encode(_png_bytes(sample.image)), tail))

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        with self._lock:
            jitter = 0.5 + self._rng.random()
        delay = min(self.config.max_backoff, self.config.backoff * 2 ** attempt) * jitter
        if retry_after is not None and retry_after.strip().isdigit():
            delay = max(delay, float(retry_after))
        return min(delay, self.config.max_backoff)

    def _connection(self) -> http.client.HTTPConnection:
        """This thread's kept-alive connection to the server (opened on first use, and again after a failure)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            conn = self._local.conn = cls(self._netloc, timeout=self.config.timeout)
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _exchange(self, payload: bytes) -> tuple[int, bytes, str | None]:
        """One POST on this thread's connection: (status, body, Retry-After). A kept-alive connection the server has
        closed meanwhile is reopened once without counting as an attempt."""
        for fresh in (False, True):
            conn = self._connection()
            reused = conn.sock is not None
            try:
                if conn.sock is None:  # http.client sends headers and body apart: without TCP_NODELAY the body waits
                    conn.connect()     # for the server's delayed ACK of the headers (about 40 ms a request)
                    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conn.request("POST", self._path, body=payload, headers=self.headers)
                response = conn.getresponse()
                body = response.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self._drop_connection()
                if reused and not fresh:
                    continue
                raise
            except BaseException:
                self._drop_connection()
                raise
            if response.will_close:
                self._drop_connection()
            return response.status, body, response.getheader("Retry-After")
        raise AssertionError("unreachable")

    def _post(self, payload: bytes) -> dict:
        last_error = ""
        attempts = self.config.max_retries + 1
        for attempt in range(attempts):
            retry_after = None
            try:
                status, body, retry_after = self._exchange(payload)
            except _NO_SERVER as error:
                if not self._answered:
                    raise AdapterError(f"{self.url}: no server there ({type(error).__name__}: {error}); start it or "
                                       "fix --base-url") from None
                last_error = f"{type(error).__name__}: {getattr(error, 'reason', error)}"
            except _RETRYABLE as error:
                last_error = f"{type(error).__name__}: {getattr(error, 'reason', error)}"
            else:
                self._answered = True
                if 200 <= status < 300:
                    try:
                        return json.loads(body)
                    except ValueError:
                        raise AdapterError(f"{self.url} answered with non-JSON: {body[:200]!r}") from None
                detail = body[:300].decode("utf-8", "replace")
                if status != 429 and status < 500:
                    raise AdapterError(f"{self.url} refused the request: HTTP {status} {detail}")
                last_error = f"HTTP {status} {detail}"
            if attempt + 1 < attempts:
                delay = self._delay(attempt, retry_after)
                logger.warning("%s: %s; retry %d/%d in %.2f s", self.url, last_error, attempt + 1,
                               self.config.max_retries, delay)
                time.sleep(delay)
        raise AdapterError(f"{self.url}: no response after {attempts} attempts; last error: {last_error}")

    def _one(self, payload: bytes) -> Generation:
        """The response text, and why it stopped: ``"length"`` when the server says ``choices[0].finish_reason``
        is ``"length"`` (cut at ``max_tokens``), else ``"stop"``."""
        data = self._post(payload)
        try:
            choice = data["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise AdapterError(f"{self.url} answered without choices[0].message.content: {str(data)[:200]}") from None
        if isinstance(data.get("model"), str):
            self._served_model = data["model"]
        if isinstance(content, list):  # some servers return content parts
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        reason = "length" if choice.get("finish_reason") == "length" else "stop"
        return Generation(content if isinstance(content, str) else "", reason)

    def prepare(self, batch: list[Sample]) -> list[bytes]:
        """The request bodies (image as a base64 PNG data URL): CPU work the harness does ahead of the requests."""
        _check_batch(batch)
        return [self._payload(sample) for sample in batch]

    def run(self, payloads: list[bytes]) -> list[Generation]:
        """One response per request body, in order, ``concurrency`` requests at a time."""
        if len(payloads) <= 1:
            return [self._one(p) for p in payloads]
        with ThreadPoolExecutor(max_workers=min(self.config.concurrency, len(payloads))) as pool:
            return list(pool.map(self._one, payloads))

    def generate(self, batch: list[Sample]) -> list[Generation]:
        return self.run(self.prepare(batch))

    def generation_settings(self) -> dict:
        """The sampling settings every request carried (written to ``results.json``)."""
        return {"max_tokens": self.config.max_tokens, "temperature": self.config.temperature}

    def info(self) -> ModelInfo:
        """The revision is the model name the server reported (e.g. a dated snapshot), once it has answered."""
        return ModelInfo(self.model, self.config.model_type, self._served_model, None)


@register_adapter("openai")
def _openai_adapter(rest: str, **options) -> OpenAIAdapter:
    if not rest:
        raise ValueError("the openai: spec needs a model name, e.g. openai:gpt-4o")
    return OpenAIAdapter(rest, make_config(OpenAIConfig, options))
