"""One-time codes for `gpuherd ui --open`: what the browser's command line carries instead of
the token.

A browser is started with its URL on its command line, which `ps` shows to every user of the
machine: `?token=…` there was the dashboard's credential, given to anyone who looked. The
CLI asks the daemon (over the Unix socket) for a code instead, and opens `/?code=…`. The gate
(auth.py) takes a code once, within CODE_LIFETIME seconds, and only from a connection that
the daemon's own user makes from this machine (the owner of the browser's socket, as the
kernel's TCP table says): a user who reads the code in `ps` and races the browser to it is
refused, and the browser's visit still gets in. Then, as a `?token=` visit, it sets the cookie.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import sys
import time

CODE_LIFETIME = 60.0
_MAX_CODES = 32
"""Codes not yet used, kept at most (the oldest dropped): a loop of `ui --open` grows nothing."""
_TCP_TABLES = ("/proc/net/tcp", "/proc/net/tcp6")


class CodeRefused(Exception):
    """A code the gate does not take; the message says why, and what to do, in one line."""


class OneTimeCodes:
    def __init__(self) -> None:
        self._expiry: dict[str, float] = {}

    def issue(self) -> str:
        now = time.monotonic()
        self._expiry = {c: t for c, t in self._expiry.items() if t > now}
        while len(self._expiry) >= _MAX_CODES:
            del self._expiry[next(iter(self._expiry))]
        code = secrets.token_urlsafe(16)
        self._expiry[code] = now + CODE_LIFETIME
        return code

    def redeem(
        self, code: str, client: tuple[str, int] | None, server: tuple[str, int] | None
    ) -> None:
        """Take `code` (used up), from the connection `client` -> `server`; CodeRefused if it
        is not one, or not the daemon's user's connection (the code is kept for theirs)."""
        if self._expiry.get(code, 0.0) <= time.monotonic():
            self._expiry.pop(code, None)
            raise CodeRefused(
                "this one-time link of `gpuherd ui --open` was used already or is more than "
                f"{CODE_LIFETIME:.0f} s old: run `gpuherd ui --open` again, or open the URL "
                "`gpuherd ui --url` prints"
            )
        owner = None if client is None or server is None else socket_owner(client, server)
        if owner != os.getuid():
            whose = "from another machine" if owner is None else f"of uid {owner}"
            raise CodeRefused(
                f"the one-time link of `gpuherd ui --open` is for the browser of the daemon's "
                f"user (uid {os.getuid()}) on this machine, and this connection is {whose}: "
                "open the URL `gpuherd ui --url` prints"
            )
        del self._expiry[code]


def socket_owner(client: tuple[str, int], server: tuple[str, int]) -> int | None:
    """The uid that owns the TCP socket at `client` connected to `server` on this machine
    (None: none here, as for a connection from another machine), from /proc/net/tcp{,6}."""
    want_local = (_ip(client[0]), client[1])
    want_remote = (_ip(server[0]), server[1])
    for table in _TCP_TABLES:
        try:
            with open(table) as rows:
                next(rows, None)  # the header
                for row in rows:
                    fields = row.split()
                    local, remote = _endpoint(fields[1]), _endpoint(fields[2])
                    if local == want_local and remote == want_remote:
                        return int(fields[7])
        except (OSError, ValueError, IndexError):
            continue
    return None


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address, an IPv4-mapped IPv6 one (`::ffff:127.0.0.1`) as its IPv4 address."""
    address = ipaddress.ip_address(text.strip("[]"))
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _endpoint(text: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """`0100007F:1F90` (the kernel's hex, each 32-bit word in host order) -> (127.0.0.1, 8080)."""
    address, _, port = text.partition(":")
    raw = bytes.fromhex(address)
    if sys.byteorder == "little":
        raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    packed = ipaddress.ip_address(raw)
    return _ip(str(packed)), int(port, 16)
