"""herd.db restored from an older backup while jobs run: a job the backup has queued (or on an
earlier attempt) whose later attempt runs is adopted, never started a second time in the same
folder; where it cannot be adopted, it is held, naming the process."""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path
from typing import Any

import psutil

from conftest import Herd, wait_for

CHECKPOINT = "while [ ! -e {go} ]; do sleep 0.05; done"


def backup(herd: Herd, to: Path) -> None:
    """An online backup of the running daemon's database (as `sqlite3 herd.db .backup`)."""
    source = sqlite3.connect(f"file:{herd.home / 'herd.db'}?mode=ro", uri=True)
    target = sqlite3.connect(to)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()


def restore(herd: Herd, copy: Path) -> None:
    """With the daemon stopped (its jobs run on), put the backup in place of herd.db."""
    herd.cli("daemon", "stop")
    for part in herd.home.glob("herd.db*"):
        part.unlink()
    (herd.home / "herd.db").write_bytes(copy.read_bytes())


def job_command(runs: Path, go: Path) -> str:
    """Appends `attempt pid` to `runs` as it starts, then waits for `go`."""
    return f'echo "$GPUHERD_ATTEMPT $$" >> {runs}; ' + CHECKPOINT.format(go=go)


def started(runs: Path) -> list[str]:
    return runs.read_text().splitlines() if runs.exists() else []


def attempt_json(herd: Herd, job: int, attempt: int) -> Path:
    return herd.home / "jobs" / str(job) / f"attempt-{attempt}" / "attempt.json"


def running(herd: Herd, job: int, attempt: int) -> dict[str, Any]:
    """Wait until the job runs that attempt with its pid and its start recorded in its folder."""
    wait_for(
        lambda: (j := herd.job(job))["state"] == "running" and j["attempt"] == attempt and j["pid"],
        what=f"job {job} to run attempt {attempt}",
    )
    wait_for(attempt_json(herd, job, attempt).exists, what="the attempt's attempt.json")
    return herd.job(job)


def events(herd: Herd, job: int) -> list[dict[str, Any]]:
    return list(herd.json("show", str(job))["events"])


def test_a_job_the_backup_has_queued_is_adopted_not_run_twice(herd: Herd, tmp_path: Path) -> None:
    """The backup was taken while job A waited for the GPU; A ran when it was restored. The
    daemon spared A's process, then started A again as the same attempt, in the same folder."""
    herd.start("--fake-gpus", "1")
    first, go = tmp_path / "go-first", tmp_path / "go"
    blocker = herd.submit("--", CHECKPOINT.format(go=first))
    runs_a, runs_b = tmp_path / "a", tmp_path / "b"
    a = herd.submit("--", job_command(runs_a, go))
    b = herd.submit("--", job_command(runs_b, go))
    herd.wait_state(blocker, "running")
    copy = tmp_path / "backup.db"
    backup(herd, copy)  # the blocker runs; A and B are queued
    first.touch()
    before = running(herd, a, 1)
    restore(herd, copy)
    herd.start("--fake-gpus", "1")

    now = herd.job(a)
    assert (now["state"], now["attempt"], now["gpus"]) == ("running", 1, [0])
    assert now["pid"] == before["pid"]  # before the fix: None, then a second run's
    adopted = events(herd, a)[-1]
    assert (adopted["event"], adopted["to_state"]) == ("start", "running")
    assert f"adopted attempt 1 (pid {before['pid']}) on GPU 0" in adopted["detail"]
    assert "herd.db said queued" in adopted["detail"]
    shown = herd.cli("show", str(a)).stdout
    assert "adopted attempt 1" in shown
    assert "adopted attempt 1" in (herd.home / "daemon.log").read_text()
    assert herd.job(b)["state"] == "queued"  # its GPU is A's
    assert herd.job(blocker)["state"] == "succeeded"  # it ended while the backup was put back

    go.touch()
    herd.wait_state(a, "succeeded")
    herd.wait_state(b, "succeeded")
    assert started(runs_a) == [f"1 {before['pid']}"]  # before the fix: a second `1 <pid>` line
    assert len(started(runs_b)) == 1


def test_a_later_attempt_than_the_backups_is_adopted(herd: Herd, tmp_path: Path) -> None:
    """The backup says the job runs attempt 2; attempt 2 failed since, and attempt 3 runs. The
    daemon recorded attempt 2's end, retried the job, and started attempt 3 a second time."""
    herd.start("--fake-gpus", "1")
    go, runs = tmp_path / "go", tmp_path / "runs"
    fail = CHECKPOINT.format(go=f"{tmp_path}/fail-$GPUHERD_ATTEMPT")  # attempt N fails on fail-N
    command = (
        f'echo "$GPUHERD_ATTEMPT $$" >> {runs}; '
        f'if [ "$GPUHERD_ATTEMPT" -lt 3 ]; then {fail}; exit 1; fi; ' + CHECKPOINT.format(go=go)
    )
    (tmp_path / "fail-1").touch()
    job = herd.submit("--retries", "3", "--", command)
    running(herd, job, 2)
    copy = tmp_path / "backup.db"
    backup(herd, copy)
    (tmp_path / "fail-2").touch()
    before = running(herd, job, 3)
    restore(herd, copy)
    herd.start("--fake-gpus", "1")

    now = herd.json("show", str(job))
    assert (now["state"], now["attempt"], now["pid"]) == ("running", 3, before["pid"])
    second = next(t for t in now["attempts"] if t["number"] == 2)
    assert (second["outcome"], second["exit_code"]) == ("exit", 1)
    retry, start = now["events"][-2:]
    assert retry["event"] == "retry" and "attempt 2 ended (exit 1)" in retry["detail"]
    assert "attempt 3 runs" in retry["detail"]
    assert start["event"] == "start" and "adopted attempt 3" in start["detail"]

    go.touch()
    herd.wait_state(job, "succeeded")
    third = [line for line in started(runs) if line.startswith("3 ")]
    assert third == [f"3 {before['pid']}"]  # before the fix: attempt 3 ran twice


def test_a_job_that_cannot_be_adopted_is_held_naming_its_process(
    herd: Herd, tmp_path: Path
) -> None:
    """Its folder does not say which GPUs it has (a daemon stopped within a second of its
    start writes no attempt.json): the job is held, its process left running, and a release
    runs it again in a folder of its own."""
    herd.start("--fake-gpus", "1")
    go, runs = tmp_path / "go", tmp_path / "runs"
    copy = tmp_path / "backup.db"
    herd.cli("pause")  # the queue, so the backup has the job queued
    job = herd.submit("--", job_command(runs, go))
    backup(herd, copy)
    herd.cli("resume")
    before = running(herd, job, 1)
    restore(herd, copy)
    attempt_json(herd, job, 1).unlink()
    with sqlite3.connect(herd.home / "herd.db") as db:  # as if never paused: it would start
        db.execute("UPDATE meta SET value = '0' WHERE key = 'queue_paused'")
    db.close()
    herd.start("--fake-gpus", "1")

    now = herd.json("show", str(job))
    assert (now["state"], now["attempt"]) == ("held", 1)
    hold = now["events"][-1]
    assert hold["event"] == "hold"
    assert f"attempt 1 runs already (pid {before['pid']}, unwatched)" in hold["detail"]
    assert "does not record its GPUs" in hold["detail"]
    assert f"gpuherd release {job}" in hold["detail"]
    assert f"pid {before['pid']}" in herd.cli("show", str(job)).stdout
    shell = psutil.Process(before["pid"])
    assert shell.is_running()  # left alone, not killed as a leftover

    go.touch()
    wait_for(lambda: not shell.is_running() or shell.status() == psutil.STATUS_ZOMBIE)
    herd.cli("release", str(job))
    herd.wait_state(job, "succeeded")
    assert [line.split()[0] for line in started(runs)] == ["1", "2"]
    first = herd.home / "jobs" / str(job) / "attempt-1"
    assert (first / "process").read_text().splitlines()[-1] == "exit 0"  # its own, kept


def test_a_held_job_whose_process_runs_can_be_cancelled(herd: Herd, tmp_path: Path) -> None:
    """The backup has the job held; it was released since, and runs. It is held again,
    numbered past the attempt that runs (before the fix: at attempt 0, so that a release ran
    attempt 1 a second time, in its folder); `gpuherd kill` cancels it, and its process is
    the user's to stop."""
    herd.start("--fake-gpus", "1")
    go, runs = tmp_path / "go", tmp_path / "runs"
    copy = tmp_path / "backup.db"
    job = herd.submit("--hold", "--", job_command(runs, go))
    backup(herd, copy)  # held
    herd.cli("release", str(job))
    before = running(herd, job, 1)
    restore(herd, copy)
    attempt_json(herd, job, 1).unlink()
    herd.start("--fake-gpus", "1")

    assert herd.wait_state(job, "held")["attempt"] == 1
    herd.cli("kill", str(job))
    assert herd.job(job)["state"] == "cancelled"
    os.killpg(before["pid"], signal.SIGTERM)
    witness = herd.submit("--", "true")
    herd.wait_state(witness, "succeeded")
    assert len(started(runs)) == 1
