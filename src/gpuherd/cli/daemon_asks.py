"""Asking the running daemon about itself, for `daemon start`, `stop`, `status` and
`restart`: its status within the time a daemon that answers takes, and whether it is this
home's (a daemon of another home answers on a GPUHERD_SOCKET shared by two; this home's,
renamed while it ran, names its old path)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from gpuherd.client import Client
from gpuherd.daemon_presence import (
    ALREADY_RUNNING,
    AlreadyUp,
    answer_within,
    lock_holder,
    not_answering,
)
from gpuherd.errors import DaemonError, HerdError, NoAnswer
from gpuherd.home_header import identity, same_home
from gpuherd.typed_name import typed_name


def status_within(client: Client) -> dict[str, Any]:
    """The running daemon's status, if it answers within answer_within(); one that listens but
    does not answer is a HerdError saying so and what to do (not a DaemonError: `start` takes
    those for "none runs"), not the client's 60 s wait."""
    patient, client.timeout = client.timeout, answer_within()
    try:
        status: dict[str, Any] = client.get("/daemon")
        return status
    except NoAnswer:
        raise HerdError(not_answering(client.home, lock_holder(client.home))) from None
    finally:
        client.timeout = patient


def own_status(client: Client) -> dict[str, Any]:
    """status_within, of this home's daemon: one of another home that answers on a
    GPUHERD_SOCKET shared by two is refused (`daemon stop` stopped it as this home's)."""
    status = status_within(client)
    if status.get("home") is not None and not _ours(status, client.home):
        raise already_running(client, status)
    return status


def _ours(status: dict[str, Any], home: Path | str) -> bool:
    """Whether the daemon that answered `status` serves `home`: the same path or folder, or
    the folder it opened, renamed since (its `home` names where it was: `daemon stop` of
    the home moved said "another daemon listens", and no command could stop it)."""
    taken = status.get("home_id")
    return same_home(status["home"], home) or (taken is not None and taken == identity(home))


def status_or_none(client: Client, until: float = 0.0) -> dict[str, Any] | None:
    """The running daemon's status; None if none answers (by `until`, a monotonic time)."""
    while True:
        try:
            status: dict[str, Any] = client.get("/daemon")
            return status
        except DaemonError:
            if time.monotonic() >= until:
                return None
            time.sleep(0.02)


def already_running(client: Client, status: dict[str, Any]) -> HerdError:
    theirs = status.get("home")
    if theirs is not None and not _ours(status, client.home):  # a shared GPUHERD_SOCKET
        return HerdError(
            f"another daemon listens on {client.socket_path} (pid {status['pid']}, home "
            f"{theirs}; a GPUHERD_SOCKET shared by two homes?): give each home its own socket"
        )
    return AlreadyUp(
        f"{ALREADY_RUNNING} for {client.home} (pid {status['pid']}): `{typed_name()} daemon "
        "stop` stops it",
        int(status["pid"]),
    )
