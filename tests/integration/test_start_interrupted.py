"""Ctrl-C on `gpuherd daemon start` while its daemon starts: the daemon (in a session of its
own) goes on starting, so the start says so, with its pid, not a bare "interrupted" that
reads as a start called off.

The daemon is held between binding its socket and serving (GPUHERD_TEST_SERVE_DELAY), so
that the start is still waiting for it when interrupted."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from conftest import Herd, wait_for
from gpuherd.cli.daemon_cmds import _interrupted_start
from gpuherd.daemon_presence import lock_holder


def test_an_interrupted_start_says_its_daemon_goes_on_starting(herd: Herd) -> None:
    env = {**herd.env, "GPUHERD_TEST_SERVE_DELAY": "2"}
    start = subprocess.Popen(
        [sys.executable, "-m", "gpuherd", "daemon", "start", "--fake-gpus", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=herd.home.parent,
    )
    try:
        daemon = wait_for(lambda: lock_holder(herd.home), what="the daemon's lock")
        start.send_signal(signal.SIGINT)  # as Ctrl-C: the start's own, not the daemon's
        out, err = start.communicate(timeout=15)
    finally:
        start.kill()
    assert (start.returncode, out) == (130, "")
    assert err == (
        f"gpuherd: interrupted: the daemon (pid {daemon}) goes on starting: `gpuherd daemon "
        "status` says once it is up; `gpuherd daemon stop` stops it\n"
    )
    assert wait_for(lambda: herd.cli("daemon", "status", check=False).returncode == 0)
    assert herd.pid == daemon  # the advice holds: that daemon is up


def test_an_interrupted_start_whose_daemon_has_exited_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Its daemon lost the home to another start's, or failed: "goes on starting" was false."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert _interrupted_start(gone) == 130
    assert capsys.readouterr().err == (
        f"gpuherd: interrupted: the daemon (pid {gone.pid}) has exited: `gpuherd daemon log` "
        "says why\n"
    )
