"""The Ray supervisor's look at its raylet through a pidfd (ray_supervisor._ending): a process
that runs, even stopped, is not ending; one that has exited is, reaped or not yet."""

from __future__ import annotations

import os
import signal
import subprocess

from conftest import wait_for
from gpuherd.executors.ray_supervisor import _ending


def test_a_process_is_ending_once_killed_and_not_before() -> None:
    process = subprocess.Popen(["sleep", "60"])
    pidfd = os.pidfd_open(process.pid)
    try:
        assert not _ending(pidfd)
        os.kill(process.pid, signal.SIGSTOP)
        assert not _ending(pidfd)
        os.kill(process.pid, signal.SIGKILL)
        wait_for(lambda: _ending(pidfd), 10, "the killed process to be seen ending")
        process.wait(timeout=10)
        assert _ending(pidfd)  # reaped: its pidfd names no process any more
    finally:
        process.kill()
        process.wait()
        os.close(pidfd)
