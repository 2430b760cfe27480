"""Limits on Gradio's file-upload route (``POST /gradio_api/upload``), per submitter, kept on disk.

Gradio stores every file posted to that route before any event handler sees it: without a limit a client could
send 64 MiB a call with no identity (1.8 GB on disk in 12 s, kept an hour, in the earlier attack). This ASGI
middleware sits in front of the route and, before a byte of the body is read:

* refuses a request without a ``Content-Length`` (411) or one longer than the upload limit plus the multipart
  envelope (413);
* names the submitter as the submit handler does (the Hub login on an OAuth Space, which must be logged in, 401;
  else the peer address, refused with 403 where anonymous submissions are off);
* records the file in ``<data>/private/counters.sqlite`` and refuses it (429) past ``upload_files`` files or
  ``upload_bytes`` bytes within ``upload_window_s`` (:meth:`hypergvl.space.counters.Counters.upload`), so what one
  submitter can hold on disk is bounded, and a restart does not reset it.

While the body streams through (:class:`_OneFile`), one file is let through per request, so the count above is a
count of files, not of requests: the Space's upload component sends one file a request, and a second file part ends
the body there; what Gradio stored of the request is deleted and it is refused (413), so one POST of 1,000 parts
stores nothing. The file's name gets a prefix that only its submitter's uploads get (a keyed digest of the
submitter), so two submitters sending the same bytes get two files, and one's cleanup never deletes the other's
(Gradio keys its cache folder on the content alone).

Gradio deletes cached uploads after ``upload_window_s`` (``delete_cache``), and the submit handler deletes a graded
upload at once.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from pathlib import Path

import anyio
from gradio.utils import get_upload_folder
from python_multipart.multipart import parse_options_header

from .counters import Counters

#: what a multipart envelope may add to the file itself (boundaries, part headers)
ENVELOPE_BYTES = 64 * 1024
ONE_FILE = "one file per upload request (the Space's upload takes one); nothing of this request was stored"
_FILENAME = re.compile(rb'filename="([^"\r\n]*)"', re.IGNORECASE)


class _OneFile:
    """A multipart body, streamed: the first part's ``filename`` prefixed with ``tag``, and the body ended (closed
    by a final delimiter) where a second part begins (``cut`` then). A part header without one plain
    ``filename="..."`` (``filename*=``, two of them) is passed on without a file name it could pick (``bad``)."""

    MAX_HEADERS = 16 * 1024

    def __init__(self, boundary: bytes, tag: str):
        self.delim = b"\r\n--" + boundary
        self.tag = tag.encode()
        self.buf = b"\r\n"  # the first delimiter has no CRLF before it: one is supplied, and not passed on
        self.skip = 2
        self.parts, self.headers, self.closed, self.cut, self.bad = 0, False, False, False, None

    def feed(self, chunk: bytes, more: bool) -> bytes:
        if self.closed or self.cut:
            return b"" if self.cut else chunk
        self.buf += chunk
        out = bytearray()
        d = len(self.delim)
        while True:
            if self.headers:
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    if len(self.buf) > self.MAX_HEADERS or not more:
                        self.bad, self.cut = "a part's headers are too long or unfinished", True
                        self.buf = b""
                    break
                out += self._rename(self.buf[:end])
                self.buf, self.headers = self.buf[end:], False
                continue
            i = self.buf.find(self.delim)
            if i < 0 or i + d + 2 > len(self.buf):
                n = len(self.buf) if not more else (i if i >= 0 else max(0, len(self.buf) - d - 1))
                out += self.buf[:n]
                self.buf = self.buf[n:]
                break
            if self.buf[i + d:i + d + 2] == b"--":  # the closing delimiter: the rest is the epilogue
                out += self.buf
                self.buf, self.closed = b"", True
                break
            self.parts += 1
            if self.parts > 1:
                out += self.buf[:i] + self.delim + b"--\r\n"
                self.buf, self.cut = b"", True
                break
            out += self.buf[:i + d]
            self.buf, self.headers = self.buf[i + d:], True
        if self.skip:
            taken = min(self.skip, len(out))
            del out[:taken]
            self.skip -= taken
        return bytes(out)

    def _rename(self, headers: bytes) -> bytes:
        names = _FILENAME.findall(headers)
        if headers.lower().count(b"filename") != len(names) or len(names) > 1:
            self.bad = "a file part names its file once, as filename=\"...\""
            return _FILENAME.sub(b'filename="' + self.tag + b'-upload"', headers.replace(b"filename*", b"x-name*"))
        if not names:
            return headers  # a form field, not a file
        base = re.split(rb"[/\\]", names[0])[-1]
        return _FILENAME.sub(lambda _: b'filename="' + self.tag + b"-" + base + b'"', headers)


def submitter_name(username: str | None, host: str | None, *, oauth: bool, anonymous: bool
                   ) -> tuple[str | None, int, str]:
    """Who submits, by the Space's one rule (the upload route and the submit handler both ask): the Hub login on an
    OAuth Space, else the peer address where anonymous submissions are on. ``(name, 0, "")``, or ``(None, HTTP
    status, reason)``."""
    if oauth:
        if not username:
            return None, 401, "log in with your Hugging Face account to submit"
        return f"user:{username}", 0, ""
    if not anonymous:
        return None, 403, "anonymous submissions are off on this Space (HYPERGVL_ANONYMOUS_UPLOADS)"
    return f"ip:{host or 'unknown'}", 0, ""


class UploadLimit:
    """ASGI middleware: per-submitter limits on Gradio's upload route (see the module docstring)."""

    def __init__(self, app, *, counters: Counters, max_file_bytes: int, files: int, total_bytes: int,
                 window_s: float, oauth: bool, anonymous: bool):
        self.app, self.counters = app, counters
        self.max_file_bytes, self.files, self.total_bytes, self.window_s = max_file_bytes, files, total_bytes, window_s
        self.oauth, self.anonymous = oauth, anonymous
        self._key = os.urandom(32)  # keys the submitters' file-name prefixes: no one can name another's

    def submitter(self, scope) -> tuple[str | None, int, str]:
        """:func:`submitter_name` of the request (the OAuth session's login; the peer address)."""
        session = scope.get("session") or {}
        username = ((session.get("oauth_info") or {}).get("userinfo") or {}).get("preferred_username")
        client = scope.get("client")
        return submitter_name(username, client[0] if client else None, oauth=self.oauth, anonymous=self.anonymous)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].rstrip("/").endswith("/upload"):
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or ())
        length = headers.get(b"content-length", b"")
        if not length.isdigit():
            return await _refuse(send, 411, "an upload needs a Content-Length")
        nbytes = int(length)
        if nbytes > self.max_file_bytes + ENVELOPE_BYTES:
            return await _refuse(send, 413, f"the upload is {nbytes:,} bytes; the limit is {self.max_file_bytes:,}")
        who, status, reason = self.submitter(scope)
        if who is None:
            return await _refuse(send, status, reason)
        reason = await anyio.to_thread.run_sync(lambda: self.counters.upload(
            who, nbytes, max_count=self.files, max_bytes=self.total_bytes, window_s=self.window_s))
        if reason is not None:
            return await _refuse(send, 429, reason)
        _, params = parse_options_header(headers.get(b"content-type", b""))
        if not params.get(b"boundary"):
            return await _refuse(send, 400, "an upload is a multipart/form-data request")
        body = _OneFile(params[b"boundary"], hmac.new(self._key, who.encode(), hashlib.sha256).hexdigest()[:16])
        ended = False

        async def one_file():
            nonlocal ended
            while ended:  # the body the app reads has ended: what more the client sends is dropped, and what the
                message = await receive()  # app waits for is its disconnect, as without this middleware
                if message["type"] != "http.request":
                    return message
            message = await receive()
            if message["type"] != "http.request":
                return message
            more = message.get("more_body", False)
            data = body.feed(message.get("body", b""), more)
            ended = body.cut or not more
            return {"type": "http.request", "body": data, "more_body": not ended}

        held: list[dict] = []

        async def kept(message):
            if not (body.cut or body.bad):
                return await send(message)
            held.append(message)  # the reply of a refused request: its files are deleted, then the refusal
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                _delete_stored(b"".join(m.get("body", b"") for m in held if m["type"] == "http.response.body"))
                await _refuse(send, 413 if body.cut else 400, ONE_FILE if body.cut else body.bad)

        return await self.app(scope, one_file, kept)


def _delete_stored(reply: bytes) -> None:
    """Delete the files Gradio's reply lists (paths under its upload folder only)."""
    root = Path(get_upload_folder()).resolve()
    try:
        paths = json.loads(reply)
    except ValueError:
        return
    for p in paths if isinstance(paths, list) else ():
        path = Path(str(p)).resolve()
        if path.is_relative_to(root):
            path.unlink(missing_ok=True)


async def _refuse(send, status: int, reason: str) -> None:
    body = reason.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


__all__ = ["UploadLimit", "ENVELOPE_BYTES", "submitter_name"]
