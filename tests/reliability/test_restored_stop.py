"""herd.db restored from a backup taken while a job ran, which a daemon stopped since (`kill`,
`--timeout`): the restart records the stop that daemon wrote in the attempt's attempt.json.
It read only the shell's `exit 143`: a killed job became `failed (signal 15)` and, with
--retries, ran again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_restored_database import attempt_json, backup, job_command, restore, running, started

from conftest import Herd, wait_for


@pytest.mark.parametrize(
    ("stop", "options", "outcome"),
    [
        ("kill", ("--retries", "2"), "killed"),  # a kill is not retried
        ("timeout", ("--timeout", "2s"), "timeout"),  # (one is, per --retries: none here)
    ],
)
def test_a_stop_after_the_backup_stays_that_stop_and_is_not_retried(
    herd: Herd, tmp_path: Path, stop: str, options: tuple[str, ...], outcome: str
) -> None:
    herd.start("--fake-gpus", "1")
    runs, go = tmp_path / "runs", tmp_path / "go"
    job = herd.submit(*options, "--", job_command(runs, go))
    running(herd, job, 1)
    copy = tmp_path / "backup.db"
    backup(herd, copy)  # attempt 1 running
    if stop == "kill":
        herd.cli("kill", str(job))
    ended = wait_for(
        lambda: (j := herd.job(job))["state"] not in ("running", "queued") and j,
        what=f"job {job} to be stopped ({stop})",
    )
    assert (ended["state"], ended["attempt"]) == ("killed" if stop == "kill" else "failed", 1)
    recorded = json.loads(attempt_json(herd, job, 1).read_text())
    assert recorded["outcome"] == outcome
    restore(herd, copy)
    herd.start("--fake-gpus", "1")
    after = herd.job(job)
    assert (after["state"], after["attempt"]) == (ended["state"], 1), after
    assert json.loads(attempt_json(herd, job, 1).read_text())["outcome"] == outcome
    assert [line.split()[0] for line in started(runs)] == ["1"]  # it ran once
    assert herd.cli("show", str(job)).stdout.count("-> queued") == 1  # its submit only


def test_a_retry_of_the_running_job_after_the_backup_queues_it_again(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "1")
    runs, go = tmp_path / "runs", tmp_path / "go"
    job = herd.submit("--", job_command(runs, go))
    running(herd, job, 1)
    copy = tmp_path / "backup.db"
    backup(herd, copy)  # attempt 1 running
    herd.cli("pause")  # its next attempt waits: not begun when the backup is put back
    herd.cli("retry", str(job))
    wait_for(lambda: herd.job(job)["state"] == "queued", what=f"job {job} queued again")
    assert json.loads(attempt_json(herd, job, 1).read_text())["requeued"] is True
    restore(herd, copy)
    herd.start("--fake-gpus", "1")
    # As the `retry` asked: attempt 2 runs (it ended `killed` with attempt 1).
    running(herd, job, 2)
    assert [line.split()[0] for line in started(runs)] == ["1", "2"]
    assert json.loads(attempt_json(herd, job, 1).read_text())["outcome"] == "killed"
    go.touch()
    herd.wait_state(job, "succeeded")
