"""How large a request body the daemon takes, checked before and while the body is read.

Without a cap, a 300 MB body (a buggy script, raw curl, anyone with the dashboard's token)
was read and parsed whole: the event loop, and with it the engine, stalled for 3 s and the
daemon's memory grew. `CapsBody` answers 413 instead: at once when Content-Length says the
body is too large, and as soon as a body sent without one (chunked) has grown past the cap.

The caps themselves are in gpuherd.body_cap: the client (which must not import the API) checks
a request against the same cap before it sends one.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from gpuherd.body_cap import body_limit, too_large

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class _Refused(Exception):
    """Raised into the app by `receive` once it has refused the body for it."""


class CapsBody:
    """ASGI middleware: 413 (and the connection closed) for a body over `body_limit`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        limit = body_limit(path)
        length = _content_length(scope)
        if length is not None and length > limit:  # before a byte of the body is read
            await answer_error(scope, send, 413, too_large(path, length), [CLOSE])
            return
        received = 0
        started = refused = False

        async def counting_receive() -> Message:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit and not started:
                    # Answer now and read no further: the app's own answer to the body it
                    # never got is dropped (guarded_send), as is the exception it is given.
                    refused = True
                    await answer_error(scope, send, 413, too_large(path, None), [CLOSE])
                    raise _Refused
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if not refused:
                started = started or message["type"] == "http.response.start"
                await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except _Refused:
            pass  # a route that let it through (FastAPI answers it with a 400, dropped)


CLOSE = (b"connection", b"close")
"""The rest of a refused body is never read: the connection cannot carry another request."""


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None  # h11 refuses a bad one before us
    return None


async def answer_error(
    scope: Scope, send: Send, status: int, reason: str, headers: list[tuple[bytes, bytes]]
) -> None:
    """Answer with one line before the app runs: `{"error": …}` under /api, as every API
    error; plain text for a page, which a browser shows as it is."""
    if scope.get("path", "").startswith("/api/"):
        body, kind = json.dumps({"error": reason}).encode(), b"application/json"
    else:
        phrase = {403: "Forbidden", 413: "Content Too Large"}.get(status, "Error")
        body, kind = f"{status} {phrase}: {reason}\n".encode(), b"text/plain; charset=utf-8"
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", kind),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
