"""Ctrl-C during `daemon restart` once its stop is under way: the old daemon stops all the same,
so a restart cut there left no daemon at all (every `submit` then failed), and said only
`gpuherd: interrupted`, read as "restart called off, the old daemon still there". The first
Ctrl-C is now said and put off, and the restart carried through; a second one stops it, and
says what it left and what to type.

The stop is held by the job a `restart --kill` kills: it takes its SIGTERM (noted in a file)
and ends only once told to, so the test knows the restart waits for the old daemon's exit;
the restart is then stopped (SIGSTOP) while the old daemon exits, and its Ctrl-C comes once
the old daemon is gone, before the new one is started."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import Herd, communicated, gone, read_line, wait_for

GOES_ON = (
    b"gpuherd: interrupted: the restart goes on, as one stopped here leaves no daemon running"
    b" (Ctrl-C again to stop it all the same)"
)


@dataclass
class Restarting:
    """A `daemon restart --kill` waiting for its old daemon (`old`), which waits for its job to
    end: it ends once the file `go` exists."""

    proc: subprocess.Popen[bytes]
    old: int
    go: Path

    def old_gone_while_stopped(self) -> None:
        """Let the old daemon exit while the restart is stopped, so it has not seen it yet."""
        self.proc.send_signal(signal.SIGSTOP)
        self.go.touch()
        wait_for(lambda: gone(self.old), what="the old daemon's exit")

    def interrupt_stopped(self) -> None:
        """Ctrl-C, as the stopped restart carries on."""
        self.proc.send_signal(signal.SIGINT)
        self.proc.send_signal(signal.SIGCONT)


@pytest.fixture
def restarting(daemon: Herd) -> Iterator[Restarting]:
    work = daemon.home.parent
    termed, go = work / "termed", work / "go"
    job = daemon.submit(f"trap 'touch {termed}' TERM; while [ ! -e {go} ]; do sleep 0.02; done")
    daemon.wait_state(job, "running")
    old = daemon.pid
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuherd", "daemon", "restart", "--kill", "--grace", "60"],
        env=daemon.env,
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(termed.exists, what="the job's SIGTERM: the restart's stop under way")
        yield Restarting(proc, old, go)
    finally:
        go.touch()
        proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.communicate()


def test_a_ctrl_c_once_the_old_daemon_stopped_carries_the_restart_through(
    daemon: Herd, restarting: Restarting
) -> None:
    restarting.old_gone_while_stopped()
    restarting.interrupt_stopped()
    out, err = communicated(restarting.proc)
    assert restarting.proc.returncode == 0, (out, err)
    assert err == GOES_ON + b"\n"
    assert out.splitlines()[-1].startswith(b"daemon started (pid ")
    assert daemon.pid != restarting.old  # a daemon runs: the queue takes jobs again
    daemon.submit("true")


def test_a_second_ctrl_c_says_no_daemon_runs_and_what_to_type(
    daemon: Herd, restarting: Restarting
) -> None:
    restarting.proc.send_signal(signal.SIGINT)
    assert restarting.proc.stderr is not None
    assert read_line(restarting.proc.stderr.fileno(), bytearray()) == GOES_ON
    restarting.old_gone_while_stopped()
    restarting.interrupt_stopped()
    out, err = communicated(restarting.proc)
    assert restarting.proc.returncode == 130, (out, err)
    assert err == (
        b"gpuherd: interrupted: the daemon stopped, and no new one was started: `gpuherd daemon"
        b" start` starts one\n"
    )
    assert daemon.cli("daemon", "status", check=False).returncode == 3  # as said: none runs


def test_a_second_ctrl_c_while_the_old_daemon_stops_says_so(
    daemon: Herd, restarting: Restarting
) -> None:
    restarting.proc.send_signal(signal.SIGINT)
    assert restarting.proc.stderr is not None
    assert read_line(restarting.proc.stderr.fileno(), bytearray()) == GOES_ON
    restarting.proc.send_signal(signal.SIGINT)
    out, err = communicated(restarting.proc)
    assert restarting.proc.returncode == 130, (out, err)
    assert (
        err
        == (
            f"gpuherd: interrupted: no new daemon was started, and the daemon (pid "
            f"{restarting.old}) is stopping: once `gpuherd daemon status` says none runs, "
            "`gpuherd daemon start` starts one\n"
        ).encode()
    )
