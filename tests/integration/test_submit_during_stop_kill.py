"""A submit taken while `daemon stop --kill` waits out a job's grace warned "the daemon is
stopping (daemon stop --drain)", which sent the user looking for a drain nobody started: the
warning names the stop that runs (cli/stopping_note.py)."""

from __future__ import annotations

import os
import signal

from conftest import Herd, wait_for
from waits import communicated

STUBBORN = 'trap "" TERM; while true; do sleep 0.05; done'
"""A job that ignores SIGTERM: the stop's kill waits out its grace."""


def test_a_submit_during_a_stop_kill_says_the_daemon_kills_its_jobs(daemon: Herd) -> None:
    job = daemon.submit("--", STUBBORN)
    daemon.wait_state(job, "running")
    pid = wait_for(lambda: daemon.job(job)["pid"], what="the job's pid")
    killing = daemon.popen("daemon", "stop", "--kill", "--grace", "120")
    try:
        wait_for(lambda: daemon.client.get("/daemon")["stopping"] == "kill", what="the kill")
        taken = daemon.cli("submit", "-q", "--", "echo hi")
        os.kill(pid, signal.SIGKILL)  # (its grace not waited out: the stop ends now)
        out, err = communicated(killing, timeout=60)
    finally:
        if killing.poll() is None:
            killing.kill()
            killing.communicate()
    assert taken.stderr == (
        "gpuherd: warning: the daemon is stopping, killing its running jobs (--kill): this job "
        "starts after the next `gpuherd daemon start`\n"
    )
    assert (killing.returncode, err) == (0, b""), (out, err)
    later = int(taken.stdout)
    daemon.start()
    assert daemon.wait_state(later, "succeeded")
    assert daemon.cli("log", str(later)).stdout == "hi\n"
