"""The daemon refuses a request for another home (gpuherd.home_header says why and how)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from gpuherd.api.limits import ASGIApp, Receive, Scope, Send, answer_error
from gpuherd.home_header import (
    HEADER,
    MISDIRECTED,
    Asked,
    another_homes_daemon,
    asked,
    identity,
    is_home,
)

log = logging.getLogger("gpuherd.api")
_NAME = HEADER.lower().encode()


class ServesItsHome:
    """ASGI middleware: a request that names another home than the daemon's (its service's)
    is answered 421, its route never run (its body never read)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.own: str | None = None
        """The home's identity, taken at the first request that names a home (the start's
        own poll): the folder renamed since is still this home."""
        self.looked = False
        self.told: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = _named(scope.get("headers", ())) if scope["type"] == "http" else None
        if request is None:
            await self.app(scope, receive, send)
            return
        state = scope["app"].state
        home: Path = state.service.home
        if not self.looked:
            self.own, self.looked = identity(home), True
        if is_home(request, self.own, home):
            await self.app(scope, receive, send)
            return
        yours = request[1]
        line = another_homes_daemon(state.socket_path, state.pid, home, yours)
        if yours not in self.told:  # once per home: a script's loop would fill the log
            self.told.add(yours)
            log.warning("refused a request for another home: %s", line)
        await answer_error(scope, send, MISDIRECTED, line, [])


def _named(headers: Iterable[tuple[bytes, bytes]]) -> Asked | None:
    for name, value in headers:
        if name == _NAME:
            return asked(value)
    return None
