"""Stopping and starting the daemon: a drain in progress (`gpuherd daemon stop --drain`) as
`status`, `submit` and `resume` see it, the way out of a drain, and starts run at once.

Real daemons in temporary homes; jobs wait for a file, so the test says when they end.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil

from conftest import Herd, read_line, wait_dead, wait_for, wait_for_long_poll


@contextlib.contextmanager
def drain_begun(herd: Herd) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`gpuherd daemon stop --drain` left running, and the first line it printed once the
    daemon took it (the CLI is killed at the end if still there)."""
    stop = herd.popen("daemon", "stop", "--drain")
    try:
        assert stop.stdout is not None
        yield stop, read_line(stop.stdout.fileno(), bytearray()).decode()
    finally:
        if stop.poll() is None:
            stop.kill()
            stop.wait(timeout=10)


def draining(herd: Herd) -> int:
    """Start `gpuherd daemon stop --drain`, wait until the daemon took it, then interrupt the
    CLI (as `timeout -s INT 3 gpuherd daemon stop --drain` does): the daemon goes on
    draining. Its pid."""
    pid = herd.pid
    with drain_begun(herd) as (stop, line):
        assert line == "stopping after waiting for 1 running job", line
        stop.send_signal(signal.SIGINT)
        stop.communicate(timeout=15)
    return pid


def test_a_draining_daemon_says_so_refuses_resume_and_keeps_new_jobs_for_the_next_one(
    daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    running = daemon.running_until(go)
    pid = draining(daemon)

    status = daemon.cli("daemon", "status").stdout.splitlines()
    assert status[-2:] == [
        "queue: draining; jobs: 1 running",
        "draining: the daemon stops once 1 running job ends; nothing new starts (queued jobs "
        "start after the next `gpuherd daemon start`)",
    ]
    answer = daemon.json("daemon", "status")
    assert (answer["stopping"], answer["running_jobs"]) == ("drain", 1)

    resume = daemon.cli("resume", check=False)
    assert (resume.returncode, resume.stdout) == (1, "")
    assert resume.stderr.splitlines() == [
        "gpuherd: error: cannot resume dispatch while the daemon drains: it stops once its "
        "running jobs end, and the next `gpuherd daemon start` dispatches the queue again"
    ]
    assert daemon.job(running)["state"] == "running"

    taken = daemon.cli("submit", "-q", "--", "echo hi")  # taken, for the next daemon
    later = int(taken.stdout)
    assert taken.stderr == (
        "gpuherd: warning: the daemon is stopping (daemon stop --drain): this job starts after"
        " the next `gpuherd daemon start`\n"
    )
    assert daemon.job(later)["state"] == "queued"
    assert daemon.job(later)["reason"] == (
        "daemon stopping: starts after the next `gpuherd daemon start`"
    )  # was "waiting for its turn (its GPUs are held for an older job ...)"

    go.touch()  # the running job ends: the drain is over, and the daemon stops
    wait_dead(psutil.Process(pid))
    assert not daemon.is_up()
    daemon.start()
    assert daemon.wait_state(running, "succeeded")
    daemon.wait_state(later, "succeeded")
    assert daemon.cli("log", str(later)).stdout == "hi\n"
    assert daemon.cli("daemon", "status").stdout.splitlines()[-1].startswith("queue: dispatching")


def test_a_plain_stop_ends_a_drain_at_once_leaving_its_jobs_to_the_next_daemon(
    daemon: Herd, tmp_path: Path
) -> None:
    # A drain cannot be called off; `daemon stop` ends it now, the running jobs go on, and
    # the next daemon re-attaches to them and dispatches again.
    go = tmp_path / "go"
    running = daemon.submit(f"while [ ! -e {go} ]; do sleep 0.02; done")
    job_pid = wait_for(lambda: daemon.job(running)["pid"], what="the job's pid")
    pid = draining(daemon)
    queued = daemon.submit("echo after")
    stop = daemon.cli("daemon", "stop")
    assert stop.stdout.splitlines() == [
        "stopping; 1 running job goes on and the next daemon re-attaches",
        "daemon stopped",
    ]
    wait_dead(psutil.Process(pid))
    assert psutil.pid_exists(job_pid)  # the job goes on without a daemon
    daemon.start()
    daemon.wait_state(queued, "succeeded")
    assert daemon.job(running)["state"] == "running"
    go.touch()
    daemon.wait_state(running, "succeeded")


def test_a_plain_stop_counts_apart_the_jobs_being_killed_and_the_paused_ones(
    daemon: Herd,
) -> None:
    # A job in its kill's grace (deaf to SIGTERM) and a paused one were "running jobs [that]
    # go on": the answer hid a kill not finished (the next daemon sends its SIGKILL).
    deaf = daemon.submit("--grace", "60s", "--", "trap '' TERM; sleep 300")
    paused = daemon.submit("--", "sleep 300")
    running = daemon.submit("--", "sleep 300")
    for job in (deaf, paused, running):
        daemon.wait_state(job, "running")
    daemon.cli("pause", str(paused))
    daemon.cli("kill", str(deaf))
    wait_for(lambda: daemon.job(deaf)["reason"] == "stopping (killed)", what="the kill")
    assert daemon.cli("daemon", "stop").stdout.splitlines() == [
        "stopping; 1 running job goes on, 1 paused job stays paused and the next daemon "
        "re-attaches; 1 job being killed: the next daemon finishes the kill",
        "daemon stopped",
    ]
    daemon.start()
    assert daemon.job(deaf)["reason"] == "stopping (killed)"  # the kill goes on
    assert daemon.job(paused)["state"] == "paused"
    assert daemon.job(running)["state"] == "running"
    os.killpg(daemon.job(deaf)["pid"], signal.SIGKILL)  # its SIGKILL now, not in 60 s
    daemon.wait_state(deaf, "killed")


def test_a_drain_names_the_paused_jobs_it_waits_for_and_what_ends_them(
    daemon: Herd, tmp_path: Path
) -> None:
    # It said "stopping after waiting for 1 running job" of a paused job, which ends only
    # once resumed: a drain that looked as if it never ended.
    go = tmp_path / "go"
    job = daemon.running_until(go)
    daemon.cli("pause", str(job))
    daemon.wait_state(job, "paused")
    process = psutil.Process(daemon.pid)  # (before it exits: it may be reaped at once)
    with drain_begun(daemon) as (stop, line):
        assert line == (
            "stopping after waiting for 1 running job (1 of them paused: it ends only once "
            f"resumed, gpuherd resume {job})"
        )
        daemon.cli("resume", str(job))  # the advice, followed
        go.touch()
        out, _ = stop.communicate(timeout=60)
        assert (stop.returncode, out.decode()) == (0, "daemon stopped\n")
    wait_dead(process)


def test_of_starts_run_at_once_one_starts_the_daemon_and_the_others_say_it_runs(
    herd: Herd,
) -> None:
    for _ in range(2):  # the race is not lost every time: run it twice
        starts = [
            subprocess.Popen(
                [sys.executable, "-m", "gpuherd", "daemon", "start", "--fake-gpus", "2"],
                env=herd.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(5)
        ]
        said = [(*p.communicate(timeout=60), p.returncode) for p in starts]
        pid = herd.pid
        started = [out for out, _, code in said if code == 0]
        assert len(started) == 1, said
        assert started[0].startswith(f"daemon started (pid {pid}, fake: 2 GPUs)"), said
        refused = [(out, err) for out, err, code in said if code != 0]
        assert (
            refused
            == [
                (
                    "",
                    f"gpuherd: error: a daemon is already running for {herd.home} (pid {pid}): "
                    "`gpuherd daemon stop` stops it\n",
                )
            ]
            * 4
        ), said
        # A start while it runs says the same.
        again = herd.cli("daemon", "start", "--fake-gpus", "2", check=False)
        assert (again.returncode, again.stdout, again.stderr) == (1, *refused[0])
        daemons = [p for p in psutil.process_iter(["cmdline"]) if _is_daemon_of(p, herd)]
        assert [p.pid for p in daemons] == [pid]
        herd.cli("daemon", "stop")
        wait_for(lambda: not herd.is_up(), what="the daemon to stop")


def _is_daemon_of(process: psutil.Process, herd: Herd) -> bool:
    cmdline = process.info["cmdline"] or []
    return "gpuherd.daemon" in cmdline and str(herd.home) in cmdline


def test_a_follow_and_a_wait_go_on_through_a_drain_to_the_jobs_end(
    daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job = daemon.submit(f"echo before; while [ ! -e {go} ]; do sleep 0.02; done; echo after")
    daemon.wait_state(job, "running")
    follow = daemon.popen("log", "-f", str(job))
    waiting = daemon.popen("wait", str(job))
    try:
        assert follow.stdout is not None
        assert read_line(follow.stdout.fileno(), bytearray()) == b"before"
        # On a loaded machine the wait could start after the drain ended the daemon: it then
        # rightly says no daemon runs (exit 3). The test is of a wait that was waiting.
        process = psutil.Process(waiting.pid)
        wait_for_long_poll(process)
        pid = draining(daemon)
        go.touch()  # the job ends during the drain: the follow and the wait see it end
        out, err = follow.communicate(timeout=30)
        assert (follow.returncode, out, err) == (0, b"after\n", b"")
        assert waiting.wait(timeout=30) == 0
    finally:
        for proc in (follow, waiting):
            proc.kill()
            proc.communicate()
    wait_dead(psutil.Process(pid))
