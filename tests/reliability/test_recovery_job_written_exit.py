"""A running job that writes an `exit N` line into its own attempt's `process` file (it is in
the job's folder, $GPUHERD_ATTEMPT_DIR) is still running after a daemon crash and restart:
re-attached, its processes untouched, and its real end recorded when it comes (real daemon,
real kill -9)."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, group_members, wait_for


def reattached_after_a_crash(herd: Herd, command: str, line: str) -> tuple[int, int, Path]:
    """Run `command` as a job until its attempt's `process` file has `line`, crash the daemon
    (kill -9) and start another: the job's id, its pid and its `process` file, once the new
    daemon has found it running, re-attached, its processes untouched."""
    herd.start("--fake-gpus", "1")
    job = herd.submit("--", command)
    pid = herd.wait_state(job, "running")["pid"]
    process = herd.home / "jobs" / str(job) / "attempt-1" / "process"
    wait_for(lambda: line in process.read_text(), what=f"{line!r} in the process file")
    herd.kill9()
    herd.start("--fake-gpus", "1")
    seen = herd.job(job)
    assert (seen["state"], seen["pid"]) == ("running", pid), seen
    assert group_members(pid), "the job's processes were killed"
    log = herd.cli("daemon", "log", "-n", "20").stdout
    assert f"re-attached to job {job} (pid {pid})" in log
    return job, pid, process


def test_a_job_that_wrote_an_exit_line_is_reattached_and_its_real_end_recorded(
    herd: Herd, tmp_path: Path
) -> None:
    # Before: taken as ended with exit 3 at the restart, and its processes killed.
    go = tmp_path / "go"
    waits = f"while [ ! -e {go} ]; do sleep 0.02; done"
    command = f'echo "exit 3" >> "$GPUHERD_ATTEMPT_DIR/process"; {waits}; exit 7'
    job, _, _ = reattached_after_a_crash(herd, command, "exit 3")
    go.touch()
    ended = herd.wait_state(job, "failed", "succeeded", "lost")
    assert (ended["state"], ended["outcome"], ended["exit_code"]) == ("failed", "exit", 7)
    assert "Traceback" not in (herd.home / "daemon.log").read_text()


def test_a_shell_that_wrote_its_end_and_has_yet_to_exit_ends_as_it_wrote(
    herd: Herd, tmp_path: Path
) -> None:
    # The window between the job shell's EXIT trap writing `exit N` and the shell's exit,
    # held open: the command's own EXIT trap (which replaces the shell's) writes that line,
    # then waits. Re-attached, it ends as written, once it exits.
    go = tmp_path / "go"
    waits = f"while [ ! -e {go} ]; do sleep 0.02; done"
    writes = 'printf "exit %s\\n" "$?" >>"$GPUHERD_ATTEMPT_DIR/process"'
    job, pid, process = reattached_after_a_crash(
        herd, f"trap '{writes}; {waits}' EXIT; exit 5", "exit 5"
    )
    go.touch()
    ended = herd.wait_state(job, "failed", "succeeded", "lost")
    assert (ended["state"], ended["outcome"], ended["exit_code"]) == ("failed", "exit", 5)
    assert process.read_text().splitlines() == [f"pid {pid}", "exit 5"]
