"""herd.db restored from an older backup while jobs run: a job the backup has queued, on an
earlier attempt, or finished (retried since), whose later attempt runs is adopted, never
started a second time in the same folder; where it cannot be adopted, it is held, naming the
process (in `ls` too). An attempt that ended since keeps its folder: the next is numbered
past it."""

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


def as_if_never_paused(herd: Herd) -> None:
    """The backup was taken with the queue paused (so that it has the job queued): undo that
    in the restored herd.db, or the job would never start."""
    with sqlite3.connect(herd.home / "herd.db") as db:
        db.execute("UPDATE meta SET value = '0' WHERE key = 'queue_paused'")
    db.close()


def ended(process: psutil.Process) -> bool:
    """Gone, or a zombie nobody reaps here (its daemon, the parent, was stopped)."""
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def failed_then_retried(herd: Herd, tmp_path: Path, copy: Path) -> tuple[int, dict[str, Any]]:
    """A job whose attempt 1 fails, backed up to `copy` as failed, then retried: attempt 2 runs
    (until `go`); returns the job and its view while attempt 2 runs."""
    go, runs = tmp_path / "go", tmp_path / "runs"
    command = (
        f'echo "$GPUHERD_ATTEMPT $$" >> {runs}; '
        f'if [ "$GPUHERD_ATTEMPT" = 1 ]; then exit 1; fi; ' + CHECKPOINT.format(go=go)
    )
    job = herd.submit("--", command)
    herd.wait_state(job, "failed")
    backup(herd, copy)
    herd.cli("retry", str(job))
    return job, running(herd, job, 2)


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
    as_if_never_paused(herd)
    herd.start("--fake-gpus", "1")

    now = herd.json("show", str(job))
    assert (now["state"], now["attempt"]) == ("held", 1)
    hold = now["events"][-1]
    assert hold["event"] == "hold"
    assert f"attempt 1 runs already (pid {before['pid']}, unwatched)" in hold["detail"]
    assert "does not record its GPUs" in hold["detail"]
    assert f"gpuherd release {job}" in hold["detail"]
    assert f"pid {before['pid']}" in herd.cli("show", str(job)).stdout
    # `ls` says why (before: only "held"; the reason was in `show`'s history alone).
    assert now["reason"] == f"held: attempt 1 runs unwatched (pid {before['pid']})"
    shell = psutil.Process(before["pid"])
    assert shell.is_running()  # left alone, not killed as a leftover

    go.touch()
    wait_for(lambda: ended(shell), what="the unwatched attempt to end")
    gone = f"held: attempt 1 (pid {before['pid']}) ran unwatched and has ended: release it"
    assert herd.job(job)["reason"] == gone
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


def test_an_attempt_that_ended_after_the_backup_keeps_its_folder(
    herd: Herd, tmp_path: Path
) -> None:
    """The backup has the job queued; its attempt 1 ran and ended since. The daemon started
    attempt 1 again, in that folder: the first run's logs and process file were replaced by
    the second's (or, without a marker, its output appended to them)."""
    herd.start("--fake-gpus", "1")
    runs, copy = tmp_path / "runs", tmp_path / "backup.db"
    herd.cli("pause")  # so that the backup has the job queued
    job = herd.submit("--", f'echo "$GPUHERD_ATTEMPT $$" >> {runs}; echo "run $GPUHERD_ATTEMPT"')
    backup(herd, copy)
    herd.cli("resume")
    herd.wait_state(job, "succeeded")
    folder = herd.home / "jobs" / str(job)
    (first,) = started(runs)
    restore(herd, copy)
    as_if_never_paused(herd)
    herd.start("--fake-gpus", "1")

    wait_for(lambda: herd.job(job)["state"] == "succeeded", what="the job to run again")
    now = herd.json("show", str(job))
    assert now["attempt"] == 2  # before the fix: 1, in attempt-1 again
    start = [e for e in now["events"] if e["event"] == "start"][-1]
    skipped = "attempt 1's folder exists (a run herd.db does not know): this is attempt 2"
    assert start["detail"] == skipped
    assert skipped in (herd.home / "daemon.log").read_text()
    assert [line.split()[0] for line in started(runs)] == ["1", "2"]
    pid = first.split()[1]
    assert (folder / "attempt-1" / "process").read_text().splitlines() == [f"pid {pid}", "exit 0"]
    assert (folder / "attempt-1" / "stdout.log").read_text() == "run 1\n"
    assert (folder / "attempt-2" / "stdout.log").read_text() == "run 2\n"


def test_a_finished_job_retried_after_the_backup_is_adopted(herd: Herd, tmp_path: Path) -> None:
    """The backup has the job failed; a `retry` since runs attempt 2. The daemon left that
    process running unwatched (the job stayed failed), and a next `retry` started attempt 2
    again, in its folder."""
    herd.start("--fake-gpus", "1")
    copy = tmp_path / "backup.db"
    job, before = failed_then_retried(herd, tmp_path, copy)
    restore(herd, copy)
    herd.start("--fake-gpus", "1")

    now = herd.json("show", str(job))
    assert (now["state"], now["attempt"], now["pid"]) == ("running", 2, before["pid"])
    assert now["gpus"] == [0]
    retry, start = now["events"][-2:]
    assert (retry["event"], retry["from_state"], retry["detail"]) == (
        "retry",
        "failed",
        "attempt 2 runs",
    )
    assert f"adopted attempt 2 (pid {before['pid']}) on GPU 0" in start["detail"]
    assert "herd.db said failed" in start["detail"]

    (tmp_path / "go").touch()
    herd.wait_state(job, "succeeded")
    assert [line.split()[0] for line in started(tmp_path / "runs")] == ["1", "2"]


def test_a_finished_job_whose_retry_cannot_be_adopted_is_held(herd: Herd, tmp_path: Path) -> None:
    """As above, with no attempt.json in attempt 2's folder: the job is held (`retry-held`),
    numbered past attempt 2, and `ls` says which attempt runs unwatched, then that it ended;
    a release runs attempt 3."""
    herd.start("--fake-gpus", "1")
    copy = tmp_path / "backup.db"
    job, before = failed_then_retried(herd, tmp_path, copy)
    restore(herd, copy)
    attempt_json(herd, job, 2).unlink()
    herd.start("--fake-gpus", "1")

    now = herd.json("show", str(job))
    assert (now["state"], now["attempt"]) == ("held", 2)
    hold = now["events"][-1]
    assert (hold["event"], hold["from_state"]) == ("retry-held", "failed")
    assert f"attempt 2 runs already (pid {before['pid']}, unwatched)" in hold["detail"]
    runs_unwatched = f"held: attempt 2 runs unwatched (pid {before['pid']})"
    assert now["reason"] == runs_unwatched
    assert runs_unwatched in herd.cli("ls").stdout

    shell = psutil.Process(before["pid"])
    (tmp_path / "go").touch()
    wait_for(lambda: ended(shell), what="the unwatched attempt to end")
    assert "ran unwatched and has ended" in herd.job(job)["reason"]
    herd.cli("release", str(job))
    assert herd.wait_state(job, "succeeded")["attempt"] == 3
    assert [line.split()[0] for line in started(tmp_path / "runs")] == ["1", "2", "3"]
