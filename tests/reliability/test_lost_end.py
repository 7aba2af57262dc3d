"""When a job found `lost` by a restart ended: its processes died with no exit status while no
daemon ran (SIGKILLed, or the machine restarted). Before, the restart recorded its end at its
own moment, and its run time (`ls` TIME, `show`, sweeps, the dashboard) counted all the time
no daemon ran: after a weekend outage, 10 minutes of work showed as 60 hours. Its end is now
its last sign of life (the last write to its logs or its process file), never after the
machine's boot where it started before it (docs/reliability.md)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from conftest import MTIME_TICK, Herd, group_members, wait_for

TICKS = "while :; do echo tick; sleep 0.1; done"
"""A job that writes to its log ten times a second, as a training loop's progress does."""


def _stdout(herd: Herd, job: int) -> Path:
    return herd.home / "jobs" / str(job) / "attempt-1" / "stdout.log"


def _kill_unwatched(herd: Herd, *jobs: int) -> None:
    """Crash the daemon, then SIGKILL the jobs' processes, as a reboot would: no shell is
    left to record an exit status, and no daemon is there to see them end."""
    pids = [int(wait_for(lambda job=job: herd.job(job)["pid"], what="its pid")) for job in jobs]
    herd.kill9()
    for pid in pids:
        os.killpg(pid, signal.SIGKILL)
    for pid in pids:  # gone, they write to their logs no more
        wait_for(lambda pid=pid: not group_members(pid), what=f"job group {pid} to be gone")


def test_a_job_killed_while_no_daemon_ran_ends_at_its_last_sign_of_life(
    daemon: Herd, work: Path
) -> None:
    job = daemon.submit("--cwd", str(work), "--", "echo first; sleep 0.5; echo last; sleep 300")
    log = _stdout(daemon, job)
    wait_for(lambda: log.exists() and "last" in log.read_text(), what="the job's second line")
    _kill_unwatched(daemon, job)
    last_seen = log.stat().st_mtime
    # The restart comes a measurable while after the job died: that while is not its run.
    wait_for(lambda: time.time() > last_seen + 2.0, what="two seconds to pass")
    restarted = time.time()
    daemon.start()

    lost = daemon.wait_state(job, "lost")
    assert lost["ended_at"] < restarted - 1.5, lost  # before: the restart's moment
    assert abs(lost["ended_at"] - last_seen) < 0.01, (lost["ended_at"], last_seen)
    # It ran until its second line, 0.5 s in (not ended at its start). A file's mtime is
    # the kernel's coarse clock, up to a scheduler tick (1-10 ms) behind the start's stamp.
    assert lost["ended_at"] - lost["started_at"] >= 0.5 - MTIME_TICK
    said = daemon.cli("daemon", "log", "-n", "20").stdout
    assert (
        f"job {job} attempt 1 (pid {lost['pid']}) is gone, with no exit status recorded "
        "(killed with SIGKILL while no daemon watched it; its end recorded at "
    ) in said and ", when it was last seen alive): the job is lost" in said


def test_a_job_started_before_the_machine_restarted_ends_by_then(daemon: Herd, work: Path) -> None:
    """A reboot cannot be done in a test: the restarted daemon is told a boot time
    (GPUHERD_TEST_BOOT_TIME) after the first job started and before the second did. The
    first job's log goes on past that moment (no real process outlives a reboot): its end
    is the boot all the same. The second started after the boot: the boot says nothing of
    it, and its end is its last sign of life."""
    before = daemon.submit("--cwd", str(work), "--", TICKS)
    daemon.wait_state(before, "running")
    wait_for(lambda: _stdout(daemon, before).exists(), what="the first job's log")
    booted = time.time()
    wait_for(lambda: _stdout(daemon, before).stat().st_mtime > booted + 0.2, what="more ticks")
    after = daemon.submit("--cwd", str(work), "--", TICKS)
    began = daemon.wait_state(after, "running")["started_at"]
    log = _stdout(daemon, after)
    wait_for(lambda: log.exists() and log.stat().st_mtime > began + 0.2, what="its ticks")
    _kill_unwatched(daemon, before, after)
    last_seen = _stdout(daemon, after).stat().st_mtime
    wait_for(lambda: time.time() > last_seen + 2.0, what="two seconds to pass")
    daemon.env["GPUHERD_TEST_BOOT_TIME"] = repr(booted)
    daemon.start()

    first = daemon.wait_state(before, "lost")
    assert first["started_at"] < booted
    assert first["ended_at"] == booted, (first["ended_at"], booted)
    second = daemon.wait_state(after, "lost")
    assert second["started_at"] > booted
    assert abs(second["ended_at"] - last_seen) < 0.01, (second["ended_at"], last_seen)
    said = daemon.cli("daemon", "log", "-n", "20").stdout
    assert (
        f"job {before} attempt 1 (pid {first['pid']}) is gone, with no exit status recorded "
        f"(the machine restarted at {_clock(booted)}, after it started; its end recorded at "
        f"{_clock(booted)}): the job is lost"
    ) in said
    assert f"job {after} attempt 1 (pid {second['pid']}) is gone" in said
    assert ", when it was last seen alive): the job is lost" in said


def _clock(at: float) -> str:
    """As daemon.log says a moment of today (format_moment): no seconds when there are none."""
    return time.strftime("%H:%M:%S" if int(at) % 60 else "%H:%M", time.localtime(at))
