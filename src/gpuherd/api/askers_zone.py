"""The daemon says the moments of an answer (`retrying at 23:30`, `begin none -> 23:30`) in the
time zone of the client that asked, as `ls` and `show` say theirs: a daemon that a systemd
unit runs is in UTC while its user's shell is in TZ=Europe/Berlin, who typed `gpuherd edit 7
--begin 23:30` and read back `begin none -> 22:30`.

The client sends `Gpuherd-Zone: OFFSET [TZ]` (client_http.zone): its TZ variable when set,
taken as an IANA name where this machine knows it, else its offset from UTC now. Without TZ,
a client at the daemon's own offset is in the daemon's zone (the machine's), said as it is.
The dashboard's pages set a cookie of the same value, `gpuherd_zone` (static/zone.js: the
browser's zone), so that its times and its `begin` box are the browser's. A request with
neither (curl) is said in the daemon's zone.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from urllib.parse import unquote

from gpuherd.api.limits import ASGIApp, Receive, Scope, Send
from gpuherd.core.when import SAID_IN

HEADER = b"gpuherd-zone"
COOKIE = "gpuherd_zone"
_DAY = 86400


class InAskersZone:
    """ASGI middleware: core.when.SAID_IN set to the asker's zone for the request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        value = _sent(scope.get("headers", ())) if scope["type"] == "http" else None
        # Set for every request, None (the daemon's zone) too: a context this one came from
        # may hold another's (the TCP listener, started by `gpuherd ui`'s request, ran every
        # connection in the zone of the shell that typed it).
        token = SAID_IN.set(askers_zone(value) if value else None)
        try:
            await self.app(scope, receive, send)
        finally:
            SAID_IN.reset(token)


def _sent(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """The zone a request names: its Gpuherd-Zone header, else its gpuherd_zone cookie."""
    cookies = None
    for name, value in headers:
        if name == HEADER:
            return value.decode("latin-1")
        if name == b"cookie":
            cookies = value.decode("latin-1")
    if cookies is None or COOKIE not in cookies:
        return None
    for pair in cookies.split(";"):
        key, _, text = pair.strip().partition("=")
        if key == COOKIE:
            return unquote(text)
    return None


def shown_offset() -> int:
    """The offset from UTC, now, of the zone a page is rendered in (its meta gpuherd-offset:
    zone.js reloads a page rendered in another zone than the browser's, once)."""
    zone = SAID_IN.get()
    if zone is None:
        return time.localtime().tm_gmtoff
    offset = datetime.now(zone).utcoffset()
    return int(offset.total_seconds()) if offset is not None else 0


def askers_zone(value: str) -> tzinfo | None:
    """The zone a `Gpuherd-Zone` value names; None for the daemon's own (or a value that names
    none: the daemon's zone, as before the header)."""
    zone, offset = _parsed(value)
    if zone is None and offset is not None and offset != _own_offset():
        return UTC if offset == 0 else timezone(timedelta(seconds=offset))
    # (An offset alone at the daemon's own: the machine's zone, with its summer time. Not
    # cached: the daemon's own offset changes with its summer time.)
    return zone


@lru_cache(maxsize=64)
def _parsed(value: str) -> tuple[tzinfo | None, int | None]:
    """The zone a value names by its TZ, else None and the offset it gives alone (None
    where it gives none that can be taken)."""
    offset_text, _, name = value.strip().partition(" ")
    if name and (named := _named(name)) is not None:
        return named, None
    try:
        offset = int(offset_text)
    except ValueError:
        return None, None
    if not -_DAY < offset < _DAY:
        return None, None
    if name:  # a TZ not known here: its offset, as a fixed zone, even at the daemon's own
        return (UTC if offset == 0 else timezone(timedelta(seconds=offset))), None
    return None, offset


def _named(name: str) -> tzinfo | None:
    from zoneinfo import ZoneInfo  # deferred: only for a client whose TZ is set

    try:
        return ZoneInfo(name)
    except (ValueError, OSError, LookupError):  # no such zone here (a POSIX TZ like EST5EDT)
        return None


def _own_offset() -> int:
    return time.localtime().tm_gmtoff
