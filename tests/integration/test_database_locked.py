"""herd.db locked by another program (an open `sqlite3` shell, a backup) for longer than the
store waits: a request says so in one line, as a 503, not as an internal error; a daemon
start it holds up gives up on its own clock. So does one whose daemon listens but does not
serve (stuck in its start-up, or slow: re-attaching many jobs)."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

import psutil
import pytest

from conftest import Herd, wait_dead, wait_for
from gpuherd import pyapi, pyapi_start
from gpuherd.daemon_presence import lock_holder
from gpuherd.errors import DaemonError


def test_a_request_finding_the_database_locked_says_who_to_ask(daemon: Herd) -> None:
    other = sqlite3.connect(daemon.home / "herd.db", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # what an open shell's write transaction holds
        refused = daemon.cli("submit", "--", "true", check=False)
    finally:
        other.close()
    assert refused.returncode == 1, refused
    assert refused.stderr == (
        "gpuherd: error: the queue's database is locked by another program (an open `sqlite3` "
        "shell, a backup): close it, then try again (`gpuherd ls --all` shows what was done)\n"
    )
    assert daemon.ls_all() == []  # nothing was queued; the daemon goes on once it is let go
    job = daemon.submit("--", "true")
    assert daemon.wait_state(job, "succeeded")["state"] == "succeeded"


START_TIMEOUT = 2.0
"""daemon_cmds.START_TIMEOUT (30 s) made shorter, to see `daemon start` give up at it."""
LAUNCH_MARGIN = 12.0
"""What a start may take past START_TIMEOUT (its own start-up and the daemon's launch): ~0.5 s
on a quiet machine, 3 s once beside other test suites (a margin of 2 s failed there); the
waits these tests catch last 30 s or more."""
STARTS_WITHIN = f"""
import gpuherd.cli.daemon_cmds as commands
import gpuherd.client as client
commands.START_TIMEOUT = {START_TIMEOUT}
client.SOCKET_BACK_WITHIN = 30.0  # (a poll that waited for the socket would take 30 s)
from gpuherd.cli.main import main
main(["daemon", "start", "--fake-gpus", "1"])
"""


def test_a_start_whose_daemon_does_not_listen_gives_up_on_time(herd: Herd) -> None:
    """The daemon started holds the home's lock, then waits for herd.db (locked: 40 s here),
    and does not listen meanwhile: a poll of `daemon start` waited SOCKET_BACK_WITHIN (7 s;
    30 s here, so that a slow machine's start-up is never mistaken for it) for its socket,
    and the start gave up seconds after START_TIMEOUT."""
    herd.home.mkdir()
    other = sqlite3.connect(herd.home / "herd.db", isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")  # a backup, or an open shell, holds herd.db
        began = time.monotonic()
        start = subprocess.run(
            [sys.executable, "-c", STARTS_WITHIN],
            env={**herd.env, "GPUHERD_TEST_BUSY_TIMEOUT": "40"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        took = time.monotonic() - began
    finally:
        other.close()
    assert (start.returncode, start.stdout) == (1, "")
    said = re.search(r"\(pid (\d+)\)", start.stderr)
    assert said is not None and start.stderr == still_starting(herd, int(said[1])), start.stderr
    assert took < START_TIMEOUT + LAUNCH_MARGIN


def still_starting(herd: Herd, pid: int) -> str:
    """What `daemon start` says of its daemon (`pid`) alive but not answering at START_TIMEOUT."""
    return (
        f"gpuherd: error: the daemon (pid {pid}) did not answer within {START_TIMEOUT:g}s: still "
        f"starting, or stuck; its log is {herd.home / 'daemon.log'}. `gpuherd daemon status` "
        f"looks again; `gpuherd daemon stop` stops it once it answers (`kill {pid}` if it never "
        "does)\n"
    )


def test_a_start_whose_daemon_listens_but_does_not_serve_gives_up_on_time(herd: Herd) -> None:
    """The daemon started binds its socket, then does not serve (GPUHERD_TEST_SERVE_DELAY):
    each poll of `daemon start` waited the client's 60 s for an answer, past START_TIMEOUT.
    The daemon is left running: it may only be slow."""
    stuck = {**herd.env, "GPUHERD_TEST_SERVE_DELAY": "600"}
    began = time.monotonic()
    start = subprocess.run(
        [sys.executable, "-c", STARTS_WITHIN],
        env=stuck,
        capture_output=True,
        text=True,
        timeout=90,
    )
    took = time.monotonic() - began
    # Left running: it may only be slow (on a loaded machine, not even at its lock yet).
    pid = wait_for(lambda: lock_holder(herd.home), what="the daemon's lock")
    try:
        assert took < START_TIMEOUT + LAUNCH_MARGIN
        assert (start.returncode, start.stdout) == (1, "")
        assert start.stderr == still_starting(herd, pid)
        assert psutil.Process(pid).status() != psutil.STATUS_ZOMBIE  # not killed
        wait_for(herd.is_up, what="its socket, bound")
    finally:
        os.kill(pid, signal.SIGTERM)
        wait_dead(psutil.Process(pid))


def test_a_python_connect_whose_daemon_listens_but_does_not_serve_gives_up_on_time(
    herd: Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gpuherd.connect()` starts a daemon too: its polls waited the client's 60 s each."""
    monkeypatch.setattr(pyapi_start, "START_TIMEOUT", START_TIMEOUT)
    monkeypatch.setenv("GPUHERD_TEST_SERVE_DELAY", "600")  # (the daemon inherits it)
    began = time.monotonic()
    with pytest.raises(DaemonError) as refused:
        pyapi.connect(herd.home, fake_gpus=1)
    took = time.monotonic() - began
    # Left running: it may only be slow (on a loaded machine, not even at its lock yet).
    pid = wait_for(lambda: lock_holder(herd.home), what="the daemon's lock")
    try:
        assert took < START_TIMEOUT + LAUNCH_MARGIN
        log = herd.home / "daemon.log"
        assert str(refused.value) == f"the daemon did not answer within 2s; see {log}"
        wait_for(herd.is_up, what="its socket bound")
    finally:
        os.kill(pid, signal.SIGTERM)
        wait_dead(psutil.Process(pid))
