"""While herd.db refuses the engine's changes (a full disk; here another program holds its
write lock for longer than the daemon waits), `daemon status` and the queued jobs' reasons
say the scheduler fails, and why. Before, the refusal was only logged (twice a second): the
tick that failed to record went on as one that worked, cleared the failing state, and a job
whose end could not be recorded showed `running` with nothing said anywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_stop_records_ends import write_locked

from conftest import Herd, wait_for


def _failing(herd: Herd) -> Any:
    return herd.client.get("/daemon")["scheduler_failing"]


def test_changes_herd_db_refuses_are_said_until_it_takes_them(herd: Herd, tmp_path: Path) -> None:
    herd.env["GPUHERD_TEST_BUSY_TIMEOUT"] = "1"  # the daemon waits 1 s for the lock, not 5
    herd.start("--fake-gpus", "1")
    go = tmp_path / "go"
    first = herd.submit(f"while [ ! -e {go} ]; do sleep 0.05; done")
    herd.wait_state(first, "running")
    second = herd.submit("true")
    assert _failing(herd) is None
    with write_locked(herd):
        go.touch()  # its end cannot be recorded while the lock is held
        said = wait_for(lambda: _failing(herd), 30, "daemon status to say the scheduler fails")
        assert "database is locked" in said, said
        reason = herd.job(second)["reason"]
        assert reason.startswith("not starting: the scheduler fails"), reason
        status = herd.cli("daemon", "status").stdout
        assert "database is locked" in status, status
    # The lock gone, the next try records the end, starts the next job and clears it.
    herd.wait_state(first, "succeeded")
    herd.wait_state(second, "succeeded")
    wait_for(lambda: _failing(herd) is None, 30, "the failing state to clear")
