"""`daemon.lock` removed while its daemon runs (a "stale lock file" clean-up), with the socket
(a logout's, a tmp cleaner's): the next `daemon start` took a new lock file and started a second
daemon on the same herd.db, and each GPU ran two jobs at once. The daemon also holds a lock on
the home folder, which cannot be removed, and puts the lock file back (home_lock.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from conftest import Herd, wait_for
from gpuherd.daemon_presence import lock_holder
from gpuherd.home_lock import AlreadyRunning, acquire_lock

PUT_BACK_WITHIN = 15.0
"""Seconds the daemon may take to put its lock file back (one look: SOCKET_CHECK, 5 s)."""


def live_daemons(herd: Herd) -> list[int]:
    return [p.pid for p in herd._daemons() if p.status() != psutil.STATUS_ZOMBIE]


def remove_lock_and_socket(herd: Herd) -> None:
    (herd.home / "daemon.lock").unlink()
    herd.client.socket_path.unlink()


def refused(herd: Herd, pid: int) -> str:
    return f"a daemon is already running for {herd.home} (pid {pid})"


def test_a_start_is_refused_when_the_lock_file_and_socket_were_removed(daemon: Herd) -> None:
    pid = daemon.pid
    remove_lock_and_socket(daemon)

    start = daemon.cli("daemon", "start", check=False)
    assert (start.returncode, start.stdout) == (1, ""), start
    assert start.stderr.startswith(f"gpuherd: error: {refused(daemon, pid)}"), start.stderr
    assert len(start.stderr.splitlines()) == 1, start.stderr
    assert live_daemons(daemon) == [pid]


def test_a_daemon_started_on_a_held_home_whose_lock_file_was_removed_exits(daemon: Herd) -> None:
    """The daemon's own refusal, which a start reaches when the running daemon cannot answer."""
    pid = daemon.pid
    remove_lock_and_socket(daemon)

    second = subprocess.run(
        [sys.executable, "-P", "-m", "gpuherd.daemon", "--home", str(daemon.home)],
        env=daemon.env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert second.returncode == 1, second
    assert second.stderr == (
        f"gpuherd daemon: {refused(daemon, pid)}, though its lock file {daemon.home}/daemon.lock "
        "was removed (it puts it back within seconds): `gpuherd daemon status` shows it, "
        "`gpuherd daemon stop` stops it\n"
    )
    assert live_daemons(daemon) == [pid]


def test_a_removed_lock_file_is_put_back_and_the_daemon_stops(daemon: Herd) -> None:
    pid = daemon.pid
    remove_lock_and_socket(daemon)
    assert lock_holder(daemon.home) == pid  # known by its lock on the folder meanwhile

    status = daemon.cli("daemon", "status", "--json")  # waits for the socket to come back
    assert f'"pid": {pid},' in status.stdout
    lock = daemon.home / "daemon.lock"
    wait_for(lambda: lock.exists() and lock.read_text() == f"{pid}\n", PUT_BACK_WITHIN, "it")
    assert (
        "daemon.lock was removed while the daemon ran: put back"
        in (daemon.home / "daemon.log").read_text()
    )

    assert daemon.cli("daemon", "stop").stdout.endswith("daemon stopped\n")
    assert live_daemons(daemon) == []


def test_a_restart_replaces_the_daemon_whose_lock_file_was_removed(daemon: Herd) -> None:
    """It took the daemon for stopped and started another beside it."""
    old = daemon.pid
    remove_lock_and_socket(daemon)

    daemon.cli("daemon", "restart")
    new = daemon.pid
    assert new != old
    assert live_daemons(daemon) == [new]


def test_the_folder_lock_refuses_a_second_hold_and_names_its_holder(tmp_path: Path) -> None:
    home, me = tmp_path / "home", os.getpid()
    held = acquire_lock(home)
    try:
        (home / "daemon.lock").unlink()
        assert lock_holder(home) == me  # known by its lock on the folder
        with pytest.raises(AlreadyRunning, match=rf"\(pid {me}\), though its lock file"):
            acquire_lock(home)
        held.mend()
        assert (home / "daemon.lock").read_text() == f"{me}\n"
        with pytest.raises(AlreadyRunning, match=rf"^a daemon is already running .* \(pid {me}\):"):
            acquire_lock(home)  # refused by the file put back, as an older gpuherd is
    finally:
        held.close()
    acquire_lock(home).close()  # free once let go
