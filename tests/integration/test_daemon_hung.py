"""A daemon that holds its home but does not answer: stopped (SIGSTOP, Ctrl-Z) or stuck.
`daemon start`, `status` and `stop` each waited the client's 60 s for its answer (and `start`
then began another daemon, which found the home taken). Each now says within ANSWER_WITHIN,
on one line, which daemon it is and what ends the wait; the advice given is followed here."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from conftest import Herd, wait_dead, wait_for
from gpuherd.client import Client
from gpuherd.daemon_presence import lock_holder
from gpuherd.errors import NoAnswer

QUICK = 20.0
"""Seconds a command may take against a daemon that does not answer: the point is not 60."""

ANSWER_WITHIN = "2"
"""The wait for an answer in these tests (GPUHERD_TEST_ANSWER_WITHIN), not the real 5 s:
each test waits it out at least once."""


@pytest.fixture(autouse=True)
def answer_sooner(herd: Herd) -> None:
    herd.env["GPUHERD_TEST_ANSWER_WITHIN"] = ANSWER_WITHIN


def not_answering(herd: Herd, pid: int, how: str) -> str:
    return (
        f"gpuherd: error: a daemon (pid {pid}) holds {herd.home} but did not answer within "
        f"{ANSWER_WITHIN}s: {how}`kill -9 {pid}` ends it (its running jobs go on, and the "
        "next `gpuherd daemon start` re-attaches to them)\n"
    )


def stop(pid: int) -> None:
    """SIGSTOP the daemon, as Ctrl-Z or a debugger would, and wait until it is stopped."""
    os.kill(pid, signal.SIGSTOP)
    process = psutil.Process(pid)
    wait_for(lambda: process.status() == psutil.STATUS_STOPPED, what="the daemon stopped")


@pytest.fixture
def stopped(daemon: Herd) -> Iterator[int]:
    """The daemon's pid, the daemon stopped (resumed at the end, for its stop)."""
    pid = daemon.pid
    try:
        stop(pid)
        yield pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


@pytest.mark.parametrize("verb", ["start", "status", "stop"])
def test_a_stopped_daemon_is_said_within_seconds(daemon: Herd, stopped: int, verb: str) -> None:
    began = time.monotonic()
    proc = daemon.cli(
        "daemon", verb, *(["--fake-gpus", "4"] if verb == "start" else []), check=False
    )
    took = time.monotonic() - began
    how = f"it is stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {stopped}` resumes it; "
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1,
        "",
        not_answering(daemon, stopped, how),
    )
    assert took < QUICK
    assert lock_holder(daemon.home) == stopped  # no other daemon was started meanwhile


def test_the_advice_for_a_stopped_daemon_works(daemon: Herd) -> None:
    job = daemon.submit("--gpus", "0", "--", "sleep", "60")
    daemon.wait_state(job, "running")
    pid = daemon.pid
    stop(pid)
    said = daemon.cli("daemon", "status", check=False).stderr
    assert f"`kill -CONT {pid}` resumes it" in said
    os.kill(pid, signal.SIGCONT)
    assert daemon.cli("daemon", "status").stdout.startswith(f"running: pid {pid},")
    stop(pid)
    assert f"`kill -9 {pid}` ends it" in said
    os.kill(pid, signal.SIGKILL)
    wait_dead(psutil.Process(pid))
    daemon.start("--fake-gpus", "4")
    assert daemon.pid != pid
    assert daemon.wait_state(job, "running")["state"] == "running"  # re-attached, still running
    daemon.cli("kill", str(job))


@pytest.fixture
def stuck(herd: Herd) -> Iterator[int]:
    """A daemon that listens but never serves (GPUHERD_TEST_SERVE_DELAY), not stopped: stuck."""
    env = {**herd.env, "GPUHERD_TEST_SERVE_DELAY": "600"}
    args = [sys.executable, "-m", "gpuherd.daemon", "--home", str(herd.home), "--fake-gpus", "1"]
    herd.home.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: lock_holder(herd.home) == proc.pid, what="the daemon's lock")
        wait_for(herd.client.socket_path.exists, what="the daemon's socket")
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def test_a_stuck_daemon_is_said_within_seconds_and_kill_9_ends_it(herd: Herd, stuck: int) -> None:
    began = time.monotonic()
    proc = herd.cli("daemon", "status", check=False)
    assert time.monotonic() - began < QUICK
    how = (
        "stuck, busy with a large submission (wait a moment and try again), or still starting "
        "(`gpuherd daemon log` may say which); "
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", not_answering(herd, stuck, how))
    os.kill(stuck, signal.SIGKILL)  # the advice
    wait_dead(psutil.Process(stuck))
    herd.start("--fake-gpus", "1")
    assert herd.pid != stuck


def test_any_command_names_a_stopped_daemon_within_seconds(daemon: Herd, stopped: int) -> None:
    """`ls` (and every command but `daemon start`, `status` and `stop`) waited the client's
    60 s, then said "the daemon did not answer within 60s", naming neither it nor the way on."""
    began = time.monotonic()
    proc = daemon.cli("ls", check=False, timeout=QUICK)
    assert time.monotonic() - began < QUICK
    how = f"it is stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {stopped}` resumes it; "
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1,
        "",
        not_answering(daemon, stopped, how),
    )


def test_a_big_submit_names_a_stopped_daemon_within_seconds(
    daemon: Herd, stopped: int, tmp_path: Path
) -> None:
    """A request bigger than the socket's buffer (`submit --file` of thousands of lines) is
    not all sent to a stopped daemon, which reads none of it: the send waited its 60 s, then
    named the daemon; it is now said as soon as the answer's wait would say it."""
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("".join(f"echo {n} {'x' * 200}\n" for n in range(5000)))  # ~1 MB
    began = time.monotonic()
    proc = daemon.cli("submit", "--hold", "--file", str(jobs), check=False, timeout=QUICK)
    assert time.monotonic() - began < QUICK
    how = f"it is stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {stopped}` resumes it; "
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1,
        "",
        not_answering(daemon, stopped, how),
    )


def connected(pid: int) -> bool:
    """Whether the process has a connection open on a Unix socket (to the daemon)."""
    return bool(psutil.Process(pid).net_connections(kind="unix"))


def test_a_wait_whose_daemon_is_stopped_says_so_within_seconds(daemon: Herd) -> None:
    """A wait's long poll is cut short by a stopped daemon: it answers nothing until resumed.
    (It went on 60 s, then waited 60 more for the daemon to "come back", then said to start
    one, which `daemon start` refused.)"""
    job = daemon.submit("--", "sleep", "60")
    daemon.wait_state(job, "running")
    pid = daemon.pid
    waiter = daemon.popen("wait", str(job))
    try:
        wait_for(lambda: connected(waiter.pid), what="the wait to ask the daemon")
        stop(pid)
        _, err = waiter.communicate(timeout=QUICK)
    finally:
        waiter.kill()
        waiter.wait()
        os.kill(pid, signal.SIGCONT)
    how = f"it is stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {pid}` resumes it; "
    assert (waiter.returncode, err.decode()) == (3, not_answering(daemon, pid, how))
    daemon.cli("kill", str(job))


def test_a_busy_daemon_is_waited_for_past_the_look(daemon: Herd) -> None:
    """A request the daemon holds longer than ANSWER_WITHIN (a wait's long poll) goes on while
    the daemon runs: only a stopped one is given up on early."""
    job = daemon.submit("--", "sleep", str(float(ANSWER_WITHIN) + 3))
    daemon.wait_state(job, "running")
    waited = daemon.cli("wait", str(job), timeout=QUICK)
    assert "succeeded" in waited.stdout, waited.stdout


def test_a_silent_daemon_is_named_at_the_clients_timeout(herd: Herd, stuck: int) -> None:
    """Not stopped, silent past the client's own timeout (60 s; 1 s here): named, with what
    ends the wait (it said only "the daemon did not answer within 60s")."""
    with pytest.raises(NoAnswer) as refused:
        Client(herd.home, timeout=1.0).get("/jobs")
    how = (
        "stuck, busy with a large submission (wait a moment and try again), or still starting "
        "(`gpuherd daemon log` may say which); "
    )
    said = not_answering(herd, stuck, how).replace(f"within {ANSWER_WITHIN}s", "within 1s")
    assert f"gpuherd: error: {refused.value}\n" == said
