"""`timeout_at` (show --json) is when the engine stops the job: through a pause (only the
current attempt's pauses count), a daemon restart that re-attaches the job (its timer re-armed
from the same start), and a retry (attempt 2's own start)."""

from __future__ import annotations

import time

from conftest import MTIME_TICK, Herd, wait_for

TIMEOUT = 5.0
"""Each attempt's: the first must outlast the steps until the restart is done, bar the pause
(paused, the timeout stands still): ~0.3 s on a quiet machine. The test waits out two."""
SLACK = 2.0
"""How much later than `timeout_at` an attempt may be seen to end: the SIGTERM, the exit and
its record, on a loaded machine (an engine a pause or a restart off would be seconds off)."""


def test_timeout_at_is_when_the_engine_stops_the_job(daemon: Herd) -> None:
    job = daemon.submit("--timeout", f"{TIMEOUT:g}s", "--retries", "1", "sleep 100")
    first = daemon.wait_state(job, "running")
    assert first["timeout_at"] == first["started_at"] + TIMEOUT
    daemon.cli("pause", str(job))
    paused_at = time.time()
    assert daemon.job(job)["timeout_at"] is None  # its timeout stands still
    wait_for(lambda: time.time() - paused_at >= 1.0, what="a pause of a second")
    daemon.cli("resume", str(job))
    resumed = daemon.job(job)
    assert resumed["paused_seconds"] >= 1.0
    due = resumed["started_at"] + resumed["paused_seconds"] + TIMEOUT
    assert resumed["timeout_at"] == due
    daemon.cli("daemon", "restart")  # re-attached: the timer from the same start and pauses
    assert daemon.job(job)["timeout_at"] == due
    wait_for(lambda: daemon.job(job)["attempt"] == 2, timeout=30, what="the retry")
    second = daemon.wait_state(job, "running", timeout=30)
    stopped = second["attempts"][0]
    assert stopped["outcome"] == "timeout", stopped
    # (its end is its status file's mtime: up to a tick before the SIGTERM sent at `due`)
    assert due - MTIME_TICK <= stopped["ended_at"] <= due + SLACK, stopped["ended_at"] - due
    # attempt 2: its own start, none of attempt 1's pauses
    assert second["paused_seconds"] == 0.0
    assert second["timeout_at"] == second["started_at"] + TIMEOUT
    failed = daemon.wait_state(job, "failed", timeout=30)
    late = failed["ended_at"] - second["timeout_at"]
    # (its end too is its status file's mtime, a tick early at most: -2.3 ms once, load 8)
    assert -MTIME_TICK <= late <= SLACK, late
