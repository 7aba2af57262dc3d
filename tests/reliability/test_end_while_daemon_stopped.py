"""When a job that ends while its daemon is stopped (SIGSTOP, Ctrl-Z, a debugger) or its event
loop held ended. Before, the daemon stamped the end when it got to the exit, once resumed: a
`sleep 1` ended during a 10 s stop showed as a run of 10.3 s (`ls` TIME, `show`, sweeps,
`--order longest-first`) and its `--retry-delay` counted from the resumption; while the same
job, had the daemon been killed and restarted instead, was recorded at its real end, from its
shell's exit line. Both now take that line's moment (docs/reliability.md)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psutil

from conftest import MTIME_TICK, Herd, wait_for

STOPPED_FOR = 3.0
"""How long the daemon stays stopped after the job's end: what its run time must not count."""


def _zombie(pid: int) -> bool:
    """The job's shell has ended: a zombie its stopped parent, the daemon, has not reaped."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_job_ended_while_the_daemon_was_stopped_keeps_its_own_end(
    daemon: Herd, work: Path
) -> None:
    go = work / "go"
    # Its `sleep 1` begins once the daemon is stopped (the file made then), so it ends while
    # the daemon is stopped on any machine, however loaded.
    job = daemon.submit(
        "--cwd", str(work), "--", f"while [ ! -e {go} ]; do sleep 0.02; done; sleep 1"
    )
    pid = int(wait_for(lambda: daemon.job(job)["pid"], what="the job's pid"))
    daemon_pid = daemon.pid
    os.kill(daemon_pid, signal.SIGSTOP)
    try:
        process = psutil.Process(daemon_pid)
        wait_for(lambda: process.status() == psutil.STATUS_STOPPED, what="the daemon stopped")
        go.touch()
        went = time.time()
        wait_for(lambda: _zombie(pid), what="the job's shell to end")
        ended = time.time()
        wait_for(lambda: time.time() > ended + STOPPED_FOR, what="the stop to go on")
    finally:
        os.kill(daemon_pid, signal.SIGCONT)
    resumed = time.time()

    done = daemon.wait_state(job, "succeeded")
    exit_line = (daemon.home / "jobs" / str(job) / "attempt-1" / "process").stat().st_mtime
    assert abs(done["ended_at"] - exit_line) < 0.001, (done["ended_at"], exit_line)
    assert done["ended_at"] < resumed - STOPPED_FOR, (done["ended_at"], resumed)  # before: ~resumed
    # Its `sleep 1` ran from the file to its end: about a second, not the stop's length.
    assert 1.0 - MTIME_TICK <= done["ended_at"] - went < 1.0 + STOPPED_FOR / 2, (done, went)
