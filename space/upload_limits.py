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

Gradio deletes cached uploads after ``upload_window_s`` (``delete_cache``), and the submit handler deletes a graded
upload at once.
"""
from __future__ import annotations

import anyio

from .counters import Counters

#: what a multipart envelope may add to the file itself (boundaries, part headers)
ENVELOPE_BYTES = 64 * 1024


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
        return await self.app(scope, receive, send)


async def _refuse(send, status: int, reason: str) -> None:
    body = reason.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


__all__ = ["UploadLimit", "ENVELOPE_BYTES", "submitter_name"]
