"""What `gpuherd daemon log` says after a crash: the jobs that ended while no daemon watched
them, and how, beside the ones re-attached. Before, a restart said only the jobs it
re-attached to: a job lost to a `kill -9` or a reboot while no daemon ran left no word."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

from conftest import Herd, wait_for
from conftest import gone as exited_pid


def test_the_daemon_log_says_what_ended_while_no_daemon_watched(daemon: Herd, work: Path) -> None:
    go = work / "go"
    waits = f"while [ ! -e {go} ]; do sleep 0.02; done"
    failed = daemon.submit("--cwd", str(work), "--", f"{waits}; exit 3")
    lost = daemon.submit("--cwd", str(work), "--", "sleep 300")
    retried = daemon.submit("--cwd", str(work), "--retries", "1", "--", "sleep 300")
    runs_on = daemon.submit("--cwd", str(work), "--", "sleep 300")
    pids = {
        job: int(wait_for(lambda job=job: daemon.job(job)["pid"], what=f"job {job}'s pid"))
        for job in (failed, lost, retried, runs_on)
    }
    daemon.kill9()
    for job in (lost, retried):  # as a reboot would: no shell left to record an exit status
        os.killpg(pids[job], signal.SIGKILL)
    go.touch()
    process_file = daemon.home / "jobs" / str(failed) / "attempt-1" / "process"
    wait_for(lambda: "exit 3" in process_file.read_text(), what="job's exit status")
    # (and its shell gone: one still between writing its status and its exit is re-attached)
    wait_for(lambda: exited_pid(pids[failed]), what="the job's shell to exit")

    daemon.start()
    assert daemon.wait_state(failed, "failed")["exit_code"] == 3
    assert daemon.wait_state(lost, "lost")["outcome"] == "lost"
    assert daemon.wait_state(retried, "running")["attempt"] == 2

    said = daemon.cli("daemon", "log", "-n", "20").stdout
    assert f"re-attached to job {runs_on} (pid {pids[runs_on]})" in said
    assert (
        f"job {failed} attempt 1 (pid {pids[failed]}) ended at " in said
        and " while no daemon watched it (exit 3): failed" in said
    )
    # When each ended as best known (its last sign of life: docs/reliability.md, "lost"):
    gone = "(killed with SIGKILL while no daemon watched it; its end recorded at "
    lines = {
        job: next(line for line in said.splitlines() if f"job {job} attempt 1 (pid" in line)
        for job in (lost, retried)
    }
    assert (
        f"WARNING gpuherd.engine: job {lost} attempt 1 (pid {pids[lost]}) is gone, with no exit "
        f"status recorded {gone}"
    ) in lines[lost] and lines[lost].endswith("): the job is lost")
    assert (
        f"job {retried} attempt 1 (pid {pids[retried]}) is gone, with no exit status recorded "
        f"{gone}"
    ) in lines[retried] and lines[retried].endswith("): lost, queued again (--retries)")


def test_a_job_whose_folder_was_deleted_is_not_said_killed(daemon: Herd, work: Path) -> None:
    """Its folder (with the shell's record of its exit) deleted while it ran, a job that then
    ended while no daemon ran is lost, and the log says why: it said "killed with SIGKILL",
    and the user looked for a killer that never was."""
    go = work / "go"
    job = daemon.submit("--cwd", str(work), "--", f"while [ ! -e {go} ]; do sleep 0.02; done")
    pid = int(wait_for(lambda: daemon.job(job)["pid"], what="the job's pid"))
    folder = daemon.home / "jobs" / str(job)
    daemon.kill9()
    shutil.rmtree(folder)
    go.touch()
    wait_for(lambda: exited_pid(pid), what="the job's shell to exit")

    daemon.start()
    assert daemon.wait_state(job, "lost")["outcome"] == "lost"
    said = daemon.cli("daemon", "log", "-n", "20").stdout
    line = next(line for line in said.splitlines() if f"job {job} attempt 1 (pid" in line)
    assert f"(its folder {folder / 'attempt-1'} was deleted, and how it ended with it" in line
    assert "SIGKILL" not in line and line.endswith("): the job is lost")
