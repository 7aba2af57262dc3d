"""A daemon stopped while herd.db refuses writes (another program holds its write lock for
longer than the daemon waits, 5 s; 1 s here, GPUHERD_TEST_BUSY_TIMEOUT) records, as it
stops, the ends it saw and could not record yet: a held run's (a restored herd.db:
engine_held_runs.py), a watched attempt's. Before, it left them to the next start, which
read them from the runs' folders: `lost` where a full disk had kept the `process` file from
its `exit` line. Where herd.db still refuses them as it stops, it says so in its log, and
the next start reads them from the folders."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
from test_restored_database import held_for_its_run, job_command, running, started

from conftest import Herd, wait_dead, wait_for

FAILED = "recording the queue's changes failed, retrying: database is locked"
LEFT = (
    "recording the queue's changes failed, the next start reads them from the folders: "
    "database is locked"
)

LOCK_WAIT = "1"
"""GPUHERD_TEST_BUSY_TIMEOUT: seconds the daemon waits for herd.db's write lock before a
write is refused (5 s otherwise: each refusal here would wait that long). The lock is let go
within milliseconds of the stop's request, well inside it."""


@pytest.fixture(autouse=True)
def short_lock_wait(herd: Herd) -> None:
    """The daemons the tests start (through `herd`) read it."""
    herd.env["GPUHERD_TEST_BUSY_TIMEOUT"] = LOCK_WAIT


@contextmanager
def write_locked(herd: Herd) -> Iterator[None]:
    """herd.db's write lock held by another program (as an sqlite3 shell's transaction)."""
    writer = sqlite3.connect(herd.home / "herd.db", isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        yield
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def refused(herd: Herd, go: Path) -> None:
    """End the run (`go`) and wait until the daemon has failed to record its end."""
    go.touch()
    log = herd.home / "daemon.log"
    wait_for(lambda: FAILED in log.read_text(), 30, "the daemon to fail to record the end")


def without_exit_line(process: Path) -> None:
    """The disk filled up as the run ended: its `process` file has no `exit` line."""
    lines = process.read_text().splitlines()
    assert lines[-1] == "exit 3"
    process.write_text("".join(f"{line}\n" for line in lines[:-1]))


def stopped_as_the_lock_goes(herd: Herd, go: Path, process: Path) -> None:
    """The run ends (exit 3) while herd.db refuses writes, its `process` file loses its exit
    line, and the daemon is asked to stop; the lock is let go as it stops (right after the
    request, before the daemon's next try, a second after its last failure)."""
    daemon = psutil.Process(herd.pid)
    with write_locked(herd):
        refused(herd, go)
        without_exit_line(process)
        herd.client.post("/daemon/stop", {"mode": "leave"})
    wait_dead(daemon, 30)


def test_a_held_runs_end_seen_before_a_stop_is_recorded_as_it_ended(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "1")
    go, runs, copy = tmp_path / "go", tmp_path / "runs", tmp_path / "backup.db"
    before = held_for_its_run(herd, copy, "--", job_command(runs, go) + "; exit 3")
    job, pid = before["id"], before["pid"]
    assert herd.job(job)["state"] == "held"
    process = herd.home / "jobs" / str(job) / "attempt-1" / "process"
    stopped_as_the_lock_goes(herd, go, process)
    herd.start("--fake-gpus", "1")

    done = herd.job(job)  # before: lost, as the restart read the run's folder
    assert (done["state"], done["attempt"], done["outcome"], done["exit_code"]) == (
        "failed",
        1,
        "exit",
        3,
    )
    (first,) = herd.json("show", str(job))["attempts"]
    assert (first["pid"], first["outcome"], first["exit_code"]) == (pid, "exit", 3)
    assert started(runs) == [f"1 {pid}"]


def test_a_watched_attempts_end_seen_before_a_stop_is_recorded_as_it_ended(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "1")
    go, runs = tmp_path / "go", tmp_path / "runs"
    job = herd.submit("--", job_command(runs, go) + "; exit 3")
    pid = running(herd, job, 1)["pid"]
    process = herd.home / "jobs" / str(job) / "attempt-1" / "process"
    stopped_as_the_lock_goes(herd, go, process)
    herd.start("--fake-gpus", "1")

    done = herd.job(job)  # before: lost
    assert (done["state"], done["outcome"], done["exit_code"]) == ("failed", "exit", 3)
    (first,) = herd.json("show", str(job))["attempts"]
    assert (first["pid"], first["outcome"], first["exit_code"]) == (pid, "exit", 3)


def test_an_end_herd_db_still_refuses_at_the_stop_is_left_to_the_next_start(
    herd: Herd, tmp_path: Path
) -> None:
    """The lock is held through the stop: the daemon says in its log that it could not record
    the end, stops as asked (no traceback), and the next start records the run from its
    folder, as it ended."""
    herd.start("--fake-gpus", "1")
    go, runs, copy = tmp_path / "go", tmp_path / "runs", tmp_path / "backup.db"
    before = held_for_its_run(herd, copy, "--", job_command(runs, go) + "; exit 3")
    job = before["id"]
    log = herd.home / "daemon.log"
    with write_locked(herd):
        refused(herd, go)
        stopping = herd.cli("daemon", "stop")
    assert stopping.stdout.endswith("daemon stopped\n")
    assert LEFT in log.read_text()  # before: nothing said
    assert "Traceback" not in log.read_text()
    herd.start("--fake-gpus", "1")

    done = herd.job(job)
    assert (done["state"], done["attempt"], done["exit_code"]) == ("failed", 1, 3)
