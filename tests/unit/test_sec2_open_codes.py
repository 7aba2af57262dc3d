"""One-time codes of `gpuherd ui --open` (api/open_codes.py): used once, within their
lifetime, and only from a socket of the daemon's own user, found in the kernel's TCP table."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from gpuherd.api import open_codes
from gpuherd.api.open_codes import CodeRefused, OneTimeCodes, socket_owner


@contextmanager
def connection(family: socket.AddressFamily, host: str) -> Iterator[tuple[socket.socket, ...]]:
    with socket.socket(family) as server:
        server.bind((host, 0))
        server.listen()
        with socket.create_connection(server.getsockname()[:2]) as client:
            accepted, _ = server.accept()
            with accepted:
                yield client, accepted


@pytest.mark.parametrize(
    ("family", "host"), [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")]
)
def test_the_owner_of_a_loopback_connection_is_found(
    family: socket.AddressFamily, host: str
) -> None:
    if family == socket.AF_INET6 and not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    try:
        with connection(family, host) as (_client, accepted):
            peer, me = accepted.getpeername()[:2], accepted.getsockname()[:2]
            assert socket_owner(peer, me) == os.getuid()
            assert socket_owner((peer[0], peer[1] ^ 1), me) is None  # no such socket
    except OSError as exc:  # (a machine with IPv6 turned off)
        pytest.skip(f"cannot connect over {host}: {exc}")


def test_a_code_is_taken_once_and_not_after_its_lifetime(monkeypatch: pytest.MonkeyPatch) -> None:
    codes = OneTimeCodes()
    monkeypatch.setattr(open_codes, "socket_owner", lambda client, server: os.getuid())
    here = ("127.0.0.1", 50000), ("127.0.0.1", 8888)
    code = codes.issue()
    codes.redeem(code, *here)
    with pytest.raises(CodeRefused, match="used already or is more than 60 s old"):
        codes.redeem(code, *here)
    late = codes.issue()
    now = open_codes.time.monotonic()
    monkeypatch.setattr(open_codes.time, "monotonic", lambda: now + open_codes.CODE_LIFETIME + 1)
    with pytest.raises(CodeRefused, match="used already or is more than 60 s old"):
        codes.redeem(late, *here)


def test_another_users_try_leaves_the_code_for_the_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    codes = OneTimeCodes()
    code = codes.issue()
    here = ("127.0.0.1", 50000), ("127.0.0.1", 8888)
    monkeypatch.setattr(open_codes, "socket_owner", lambda client, server: 65534)
    with pytest.raises(CodeRefused, match="this connection is of uid 65534"):
        codes.redeem(code, *here)
    monkeypatch.setattr(open_codes, "socket_owner", lambda client, server: None)
    with pytest.raises(CodeRefused, match="this connection is from another machine"):
        codes.redeem(code, *here)
    monkeypatch.setattr(open_codes, "socket_owner", lambda client, server: os.getuid())
    codes.redeem(code, *here)


def test_codes_left_unused_are_capped() -> None:
    codes = OneTimeCodes()
    for _ in range(1000):
        codes.issue()
    assert len(codes._expiry) <= 32
