"""Processes a job started that left its process group (setsid, daemonizing double forks):
stopped, paused and given their grace with the job, and killed when it ends, while processes
of other attempts, other homes and on-end hooks are left alone."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from conftest import Herd, gone, wait_for


def escaping(pid_file: Path, body: str = "exec sleep 100") -> str:
    """A command that starts a process in a session of its own (out of the job's group),
    which writes its pid to `pid_file`, and then waits."""
    return f"setsid sh -c 'echo $$ > {pid_file}; {body}' & sleep 100"


def escaped_pid(pid_file: Path, job_pgid: int | None = None) -> int:
    wait_for(lambda: pid_file.exists() and pid_file.read_text().strip(), what="escaped pid")
    pid = int(pid_file.read_text())
    assert os.getsid(pid) == pid, "the process did not leave the job's session"
    if job_pgid is not None:
        assert os.getpgid(pid) != job_pgid
    return pid


@pytest.fixture
def outsider(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A process that claims to be job 1's first attempt by id, but of another home."""
    env = dict(
        os.environ,
        GPUHERD_JOB_ID="1",
        GPUHERD_ATTEMPT="1",
        GPUHERD_ATTEMPT_DIR=str(tmp_path / "elsewhere" / "jobs" / "1" / "attempt-1"),
    )
    process = subprocess.Popen(["sleep", "100"], env=env, start_new_session=True)
    yield process
    process.kill()
    process.wait()


def test_kill_stops_what_left_the_group(daemon: Herd, tmp_path: Path) -> None:
    job_id = daemon.submit(escaping(tmp_path / "pid"))
    job = daemon.wait_state(job_id, "running")
    pid = escaped_pid(tmp_path / "pid", job["pid"])
    daemon.cli("kill", str(job_id))
    assert daemon.wait_state(job_id, "killed", "failed", "succeeded")["state"] == "killed"
    wait_for(lambda: gone(pid), 10, "the escaped process to be killed")


def test_what_left_the_group_gets_the_grace_period(daemon: Herd, tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    # It takes SIGTERM as a job's processes do, and saves before it exits.
    body = f'trap "sleep 0.3; echo saved > {saved}; exit 0" TERM; while :; do sleep 0.05; done'
    job_id = daemon.submit("--grace", "10", escaping(tmp_path / "pid", body))
    pid = escaped_pid(tmp_path / "pid")
    daemon.wait_state(job_id, "running")
    daemon.cli("kill", str(job_id))
    daemon.wait_state(job_id, "killed")
    assert saved.read_text() == "saved\n", "the job ended before what it started had saved"
    wait_for(lambda: gone(pid), 10, "the escaped process to end")


def test_the_end_of_a_job_kills_what_it_left_running(
    daemon: Herd, tmp_path: Path, outsider: subprocess.Popen[bytes]
) -> None:
    # Job 1, as the outsider claims to be: only the attempt folder tells them apart.
    pid_file = tmp_path / "pid"
    job_id = daemon.submit(
        f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 100' & "
        f"while [ ! -s {pid_file} ]; do sleep 0.05; done"
    )
    assert job_id == 1
    pid = escaped_pid(tmp_path / "pid")
    assert daemon.wait_state(job_id, "succeeded", "failed")["state"] == "succeeded"
    wait_for(lambda: gone(pid), 10, "the escaped process to be killed")
    assert outsider.poll() is None, "a process of another home's job 1 was killed"


def test_pause_stops_what_left_the_group_too(daemon: Herd, tmp_path: Path) -> None:
    job_id = daemon.submit(escaping(tmp_path / "pid"))
    daemon.wait_state(job_id, "running")
    escaped = psutil.Process(escaped_pid(tmp_path / "pid"))
    daemon.cli("pause", str(job_id))
    wait_for(lambda: escaped.status() == psutil.STATUS_STOPPED, what="escaped process stopped")
    daemon.cli("resume", str(job_id))
    wait_for(lambda: escaped.status() != psutil.STATUS_STOPPED, what="escaped process resumed")
    daemon.cli("kill", str(job_id))
    wait_for(lambda: gone(escaped.pid), 10, "the escaped process to be killed")


def test_what_a_job_left_while_no_daemon_ran_is_killed_at_restart(
    daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job_id = daemon.submit(
        f"setsid sh -c 'echo $$ > {tmp_path / 'pid'}; exec sleep 100' & "
        f"while [ ! -e {go} ]; do sleep 0.05; done"
    )
    daemon.wait_state(job_id, "running")
    pid = escaped_pid(tmp_path / "pid")
    daemon.kill9()
    go.touch()
    wait_for(
        lambda: (
            daemon.home.joinpath("jobs", str(job_id), "attempt-1", "process")
            .read_text()
            .count("exit")
        ),
        what="the job to end while no daemon runs",
    )
    assert not gone(pid)
    daemon.start()
    assert daemon.wait_state(job_id, "succeeded", "failed")["state"] == "succeeded"
    wait_for(lambda: gone(pid), 10, "the escaped process to be killed")


def test_an_on_end_hook_is_not_taken_for_what_the_job_left(daemon: Herd, tmp_path: Path) -> None:
    done = tmp_path / "hook-done"
    # The hook outlives the sweep after the job's end, and is told the job's attempt folder.
    daemon.cli("config", "set", "on-end", f"sleep 0.5; echo $GPUHERD_ATTEMPT_DIR > {done}")
    job_id = daemon.submit("true")
    daemon.wait_state(job_id, "succeeded")
    wait_for(done.exists, 10, "the hook to finish")
    assert done.read_text().strip().endswith("attempt-1")


def test_a_job_submitted_from_a_hook_is_not_taken_for_a_hook(daemon: Herd, tmp_path: Path) -> None:
    env = dict(daemon.env, GPUHERD_JOB_STATE="succeeded")  # as in a hook's environment
    job_id = int(daemon.cli("submit", "-q", escaping(tmp_path / "pid"), env=env).stdout)
    daemon.wait_state(job_id, "running")
    pid = escaped_pid(tmp_path / "pid")
    daemon.cli("kill", str(job_id))
    daemon.wait_state(job_id, "killed")
    wait_for(lambda: gone(pid), 10, "the escaped process to be killed")


def test_a_job_started_at_once_in_the_folder_an_ended_one_used_is_not_killed(
    daemon: Herd, tmp_path: Path
) -> None:
    """Two sweeps with the same results folder run their point in one folder, so both jobs
    carry the same GPUHERD_ATTEMPT_DIR: the second starts the moment the first ends, and the
    pass that kills what the first left (0.1 s later) must spare it."""
    go = tmp_path / "go"
    results = str(tmp_path / "same")
    first = daemon.cli(
        "sweep",
        f"while [ ! -e {go} ]; do sleep 0.01; done; echo {{x}}",
        "-p",
        "x",
        "1",
        "--name",
        "first",
        "--results-dir",
        results,
        "-q",
    ).stdout.split()
    second = daemon.cli(
        "sweep",
        "sleep 0.5; echo {x}",
        "-p",
        "x",
        "1",
        "--name",
        "second",
        "--results-dir",
        results,
        "--after-any",
        first[0],
        "-q",
    ).stdout.split()
    job = daemon.wait_state(int(first[0]), "running")
    assert job["attempts"][0]["dir"] == str(tmp_path / "same" / "x=1" / "attempt-1")
    go.touch()
    ended = daemon.wait_state(int(second[0]), "succeeded", "failed")
    assert (ended["state"], ended["signal"]) == ("succeeded", None)
