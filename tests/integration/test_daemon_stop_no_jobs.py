"""`gpuherd daemon stop --kill` (or --drain) with no job running said "stopping after killing 0
running jobs" (after waiting for 0): as if something had been killed. It says so plainly."""

from __future__ import annotations

import pytest

from conftest import Herd


@pytest.mark.parametrize("mode", ["--kill", "--drain"])
def test_a_stop_that_kills_or_drains_nothing_says_no_job_was_running(herd: Herd, mode: str) -> None:
    herd.start("--fake-gpus", "1")
    herd.wait_state(herd.submit("--", "true"), "succeeded")  # one ran, and ended
    proc = herd.cli("daemon", "stop", mode)
    assert proc.stdout == "no job was running: stopping\ndaemon stopped\n"
    assert not herd.is_up()


def test_a_kill_says_the_paused_jobs_apart_from_the_running(herd: Herd) -> None:
    # A paused job was counted as running: `stopping after killing 2 running jobs`.
    herd.start("--fake-gpus", "2")
    running, paused = herd.submit("--", "sleep", "60"), herd.submit("--", "sleep", "60")
    herd.wait_state(running, "running")
    herd.wait_state(paused, "running")
    herd.cli("pause", str(paused))
    herd.wait_state(paused, "paused")
    proc = herd.cli("daemon", "stop", "--kill", "--grace", "0")
    assert proc.stdout.splitlines()[0] == "stopping after killing 1 running job and 1 paused job"
    assert not herd.is_up()
