"""`gpuherd.connect()` with the home's daemon stopped (SIGSTOP, Ctrl-Z): it raises the line
every other call gives (`kill -CONT` resumes it) within seconds. Before, it took the silent
daemon for none, started another, and raised after 15 s that "a daemon is already running
… `gpuherd daemon stop` stops it", which a stopped daemon does not."""

from __future__ import annotations

import subprocess
import sys

from test_daemon_hung import answer_sooner, not_answering, stopped

from conftest import Herd
from gpuherd import paths

__all__ = ["answer_sooner", "stopped"]  # (fixtures: the daemon stopped, the wait shortened)

CONNECT = """
import gpuherd
try:
    gpuherd.connect()
except gpuherd.errors.Suspended as stopped:
    print(stopped)
"""


def test_connect_names_a_stopped_daemon_and_starts_none(daemon: Herd, stopped: int) -> None:
    ran = subprocess.run(
        [sys.executable, "-c", CONNECT], env=daemon.env, capture_output=True, text=True, timeout=60
    )
    said = not_answering(
        daemon, stopped, f"it is stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {stopped}` resumes it; "
    )
    assert (ran.returncode, ran.stdout, ran.stderr) == (
        0,
        said.removeprefix("gpuherd: error: "),
        "",
    )
    assert "already running" not in paths.daemon_log(daemon.home).read_text()  # none started
