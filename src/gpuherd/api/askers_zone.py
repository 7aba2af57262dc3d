"""The daemon says the moments of an answer (`retrying at 23:30`, `begin none -> 23:30`) in the
time zone of the client that asked, as `ls` and `show` say theirs: a daemon that a systemd
unit runs is in UTC while its user's shell is in TZ=Europe/Berlin, who typed `gpuherd edit 7
--begin 23:30` and read back `begin none -> 22:30`.

The client sends `Gpuherd-Zone: OFFSET [TZ]` (client_http.zone): its TZ variable when set,
taken as an IANA name where this machine knows it, else its offset from UTC now. Without TZ,
a client at the daemon's own offset is in the daemon's zone (the machine's), said as it is;
and a request without the header (curl, the dashboard's browser) is said in the daemon's zone.
"""

from __future__ import annotations

from datetime import UTC, timedelta, timezone, tzinfo
from functools import lru_cache

from gpuherd.api.limits import ASGIApp, Receive, Scope, Send
from gpuherd.core.when import SAID_IN

HEADER = b"gpuherd-zone"
_DAY = 86400


class InAskersZone:
    """ASGI middleware: core.when.SAID_IN set to the asker's zone for the request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        value = next((v for k, v in scope.get("headers", ()) if k == HEADER), None)
        zone = askers_zone(value.decode("latin-1")) if value and scope["type"] == "http" else None
        if zone is None:
            await self.app(scope, receive, send)
            return
        token = SAID_IN.set(zone)  # (copied into the threads the request runs work on)
        try:
            await self.app(scope, receive, send)
        finally:
            SAID_IN.reset(token)


@lru_cache(maxsize=64)
def askers_zone(value: str) -> tzinfo | None:
    """The zone a `Gpuherd-Zone` value names; None for the daemon's own (or a value that names
    none: the daemon's zone, as before the header)."""
    offset_text, _, name = value.strip().partition(" ")
    if name:
        named = _named(name)
        if named is not None:
            return named
    try:
        offset = int(offset_text)
    except ValueError:
        return None
    if not -_DAY < offset < _DAY:
        return None
    if not name and offset == _own_offset():
        return None  # the machine's zone, with its summer time: the daemon's own
    return UTC if offset == 0 else timezone(timedelta(seconds=offset))


def _named(name: str) -> tzinfo | None:
    from zoneinfo import ZoneInfo  # deferred: only for a client whose TZ is set

    try:
        return ZoneInfo(name)
    except (ValueError, OSError, LookupError):  # no such zone here (a POSIX TZ like EST5EDT)
        return None


def _own_offset() -> int:
    import time

    return time.localtime().tm_gmtoff
