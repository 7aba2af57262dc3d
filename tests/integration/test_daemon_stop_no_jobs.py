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
