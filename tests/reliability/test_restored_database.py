"""herd.db restored from an older backup while jobs run: a job the backup has queued, on an
earlier attempt, or finished (retried since), whose later attempt runs is adopted, never
started a second time in the same folder; where it cannot be adopted, it is held, naming the
process (in `ls` too), whose GPUs stay reserved for it until it ends, when it is the job's
attempt. An attempt that ended since is recorded from its folder."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
from pathlib import Path
from typing import Any

import psutil

from conftest import Herd, exited, wait_for
from gpuherd.client import Client

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
    # A connection made before refuses an older queue, which gives its ids again
    # (home_header.QueueKnown): a new one, as a notebook connects again.
    herd.client = Client(herd.home)


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


def queued_in_backup(herd: Herd, copy: Path, *submit: str) -> int:
    """Submit a job with the queue paused, back the database up to `copy` (the job queued
    in it), and resume: the job runs."""
    herd.cli("pause")
    job = herd.submit(*submit)
    backup(herd, copy)
    herd.cli("resume")
    return job


def as_if_never_paused(herd: Herd) -> None:
    """The backup was taken with the queue paused (so that it has the job queued): undo that
    in the restored herd.db, or the job would never start."""
    with sqlite3.connect(herd.home / "herd.db") as db:
        db.execute("UPDATE meta SET value = '0' WHERE key = 'queue_paused'")
    db.close()


def held_for_its_run(herd: Herd, copy: Path, *submit: str) -> dict[str, Any]:
    """A job (submitted with `submit`) queued in the backup at `copy`, which runs attempt 1
    when the backup is put back with no attempt.json in its folder (a daemon stopped within
    a second of its start writes none): its GPUs unknown, the restarted daemon (1 GPU) holds
    the job for that run. The job's view as the run began (its pid)."""
    job = queued_in_backup(herd, copy, *submit)
    before = running(herd, job, 1)
    restore(herd, copy)
    attempt_json(herd, job, 1).unlink()
    as_if_never_paused(herd)
    herd.start("--fake-gpus", "1")
    return before


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
    start writes no attempt.json): the job is held, its process left running, watched; when
    it ends, it is the job's attempt (before: the job stayed held, and a release ran it a
    second time, although it had succeeded)."""
    herd.start("--fake-gpus", "1")
    go, runs = tmp_path / "go", tmp_path / "runs"
    copy = tmp_path / "backup.db"
    before = held_for_its_run(herd, copy, "--", job_command(runs, go))
    job = before["id"]

    now = herd.json("show", str(job))
    assert (now["state"], now["attempt"]) == ("held", 1)
    hold = now["events"][-1]
    assert hold["event"] == "hold"
    assert f"attempt 1 runs already (pid {before['pid']}, unwatched)" in hold["detail"]
    assert "does not record its GPUs" in hold["detail"]
    assert "when that process ends, the job goes on from how it ended" in hold["detail"]
    assert f"gpuherd release {job}" in hold["detail"]
    assert f"pid {before['pid']}" in herd.cli("show", str(job)).stdout
    # `ls` says why (before: only "held"; the reason was in `show`'s history alone), and
    # which GPU it keeps for that run: as its environment names it (no attempt.json).
    assert now["reason"] == (
        f"held: attempt 1 runs unwatched (pid {before['pid']}), GPU 0 reserved for it"
    )
    shell = psutil.Process(before["pid"])
    assert shell.is_running()  # left alone, not killed as a leftover

    go.touch()
    done = herd.wait_state(job, "succeeded")  # before: held, "release it"
    assert done["attempt"] == 1
    (first,) = herd.json("show", str(job))["attempts"]
    assert (first["number"], first["pid"], first["gpus"]) == (1, before["pid"], [0])
    assert (first["outcome"], first["exit_code"]) == ("exit", 0)
    # Its start as its process file's time says (as it was when held), its end its exit's.
    assert abs(first["started_at"] - before["started_at"]) < 1
    assert first["ended_at"] > first["started_at"]
    release, start, succeed = herd.json("show", str(job))["events"][-3:]
    assert (release["event"], release["to_state"]) == ("release", "queued")
    assert release["detail"] == (f"attempt 1 (pid {before['pid']}), which ran unwatched, has ended")
    assert start["detail"] == (
        f"attempt 1 (pid {before['pid']}) on GPU 0 taken from its folder: the job was held "
        "for it while it ran unwatched (herd.db did not know it)"
    )
    assert (succeed["event"], succeed["detail"]) == ("succeed", "exit 0")
    witness = herd.submit("--", "true")  # the queue has run what it would run
    herd.wait_state(witness, "succeeded")
    assert started(runs) == [f"1 {before['pid']}"]  # it ran once
    first_folder = herd.home / "jobs" / str(job) / "attempt-1"
    assert (first_folder / "process").read_text().splitlines()[-1] == "exit 0"  # its own, kept
    assert (first_folder / "SUCCESS").exists()  # recorded as a watched attempt's end is


def test_a_held_job_whose_process_runs_can_be_cancelled(herd: Herd, tmp_path: Path) -> None:
    """The backup has the job held; it was released since, and runs. It is held again,
    numbered past the attempt that runs (before the fix: at attempt 0, so that a release ran
    attempt 1 a second time, in its folder); `gpuherd kill` cancels it, and its process is
    the user's to stop. Until it ends, its GPU stays reserved for it, also across a restart
    (before: a restart reserved it only for a job still held); its end is recorded as
    attempt 1, and the job stays cancelled: the user's word, given while it ran."""
    herd.start("--fake-gpus", "1")
    go, runs = tmp_path / "go", tmp_path / "runs"
    copy = tmp_path / "backup.db"
    job = herd.submit("--hold", "--", job_command(runs, go))
    backup(herd, copy)  # held
    herd.cli("release", str(job))
    before = running(herd, job, 1)
    pid = before["pid"]
    restore(herd, copy)
    attempt_json(herd, job, 1).unlink()
    herd.start("--fake-gpus", "1")

    assert herd.wait_state(job, "held")["attempt"] == 1
    herd.cli("kill", str(job))
    assert herd.job(job)["state"] == "cancelled"
    herd.cli("daemon", "stop")
    herd.start("--fake-gpus", "1")
    (gpu,) = herd.json("gpus")["gpus"]
    why = f"cancelled: attempt 1 runs unwatched (pid {pid})"
    assert gpu["reserved"] == [{"job": job, "job_id": job, "reason": why}]
    witness = herd.submit("--", "true")
    assert herd.job(witness)["reason"] == (  # before: it ran beside the run, on its GPU
        f"waiting for a free GPU (GPU 0 is reserved for job {job}, whose attempt 1 runs "
        f"unwatched (pid {pid}))"
    )

    os.killpg(pid, signal.SIGTERM)
    herd.wait_state(witness, "succeeded")  # once the run has ended: its GPU is free
    now = herd.json("show", str(job))
    assert (now["state"], now["attempt"], now["outcome"]) == ("cancelled", 1, "cancelled")
    (first,) = now["attempts"]
    assert (first["number"], first["pid"], first["gpus"]) == (1, pid, [0])
    assert first["ended_at"] is not None and first["outcome"] is not None
    end = now["events"][-1]
    assert end["event"] == "unwatched-ended"  # (no change of state)
    assert end["detail"].startswith(f"attempt 1 (pid {pid}), which ran unwatched, has ended (")
    assert end["detail"].endswith(
        "): recorded as attempt 1, not as the job's result: the job was released or "
        "cancelled while it ran (its state: cancelled)"
    )
    assert herd.json("gpus")["gpus"][0]["reserved"] == []
    assert len(started(runs)) == 1


def test_a_job_whose_run_runs_unwatched_is_not_removed(herd: Herd, tmp_path: Path) -> None:
    """`rm` of a job held for its run, and `clean` of it once cancelled, are refused while
    the run runs (before: the job was removed, and with it the hold event by which a restart
    finds the run: a restart gave GPU 0 to the next job while the run still used it, and the
    run's folder was deleted under it). Once the run has ended, the job is removed."""
    herd.start("--fake-gpus", "1")
    go, runs, copy = tmp_path / "go", tmp_path / "runs", tmp_path / "backup.db"
    before = held_for_its_run(herd, copy, "--", job_command(runs, go))
    job, pid = before["id"], before["pid"]
    refusal = (
        f"gpuherd: error: job {job}: its attempt 1 runs unwatched (pid {pid}), GPU 0 reserved "
        f"for it: end it (kill -TERM -{pid}: its whole process group) or wait for it to end, "
        "then remove the job (removed now, a "
        "restart would no longer know the run, and would give its GPUs to other jobs while it "
        "runs)\n"
    )
    removed = herd.cli("rm", str(job), check=False)
    assert (removed.returncode, removed.stderr) == (1, refusal)
    assert herd.job(job)["state"] == "held"
    herd.cli("kill", str(job))  # cancelled: the run is the user's to stop
    cleaned = herd.cli("clean", check=False)
    assert (cleaned.returncode, cleaned.stderr) == (1, refusal)
    folder = herd.home / "jobs" / str(job) / "attempt-1"
    assert (folder / "stdout.log").exists()  # the run's folder is kept

    herd.cli("daemon", "stop")
    herd.start("--fake-gpus", "1")
    why = f"cancelled: attempt 1 runs unwatched (pid {pid})"
    assert herd.json("gpus")["gpus"][0]["reserved"] == [{"job": job, "job_id": job, "reason": why}]
    witness = herd.submit("--", "true")
    assert herd.job(witness)["reason"] == (  # before: it ran on GPU 0 beside the run
        f"waiting for a free GPU (GPU 0 is reserved for job {job}, whose attempt 1 runs "
        f"unwatched (pid {pid}))"
    )

    go.touch()
    herd.wait_state(witness, "succeeded")  # the run has ended: GPU 0 is free
    assert herd.cli("rm", str(job)).stdout == f"job {job}: removed\n"
    assert not folder.exists()
    assert started(runs) == [f"1 {pid}"]


def test_a_sweep_whose_job_runs_unwatched_is_not_removed(herd: Herd, tmp_path: Path) -> None:
    """`sweep rm` of a sweep whose point A is held for its run, point B queued, is refused as
    a whole, naming A's run (before: B was removed, A refused, and the sweep's record kept:
    half a removal). Once the run has ended, the sweep is removed."""
    herd.start("--fake-gpus", "1")
    go, copy, results = tmp_path / "go", tmp_path / "backup.db", tmp_path / "results"
    herd.cli("pause")
    template = CHECKPOINT.format(go=go) + "; echo {x}"
    herd.cli("sweep", template, "-p", "x", "1", "2", "--name", "s", "--results-dir", str(results))
    a, b = herd.json("ls", "--sweep", "s")
    backup(herd, copy)  # both queued
    herd.cli("resume")
    pid = wait_for(lambda: herd.job(a["id"])["pid"], what="A to run")
    started_a = Path(herd.json("show", str(a["id"]))["job_dir"]) / "attempt-1" / "attempt.json"
    wait_for(started_a.exists, what="A's attempt.json")
    restore(herd, copy)
    started_a.unlink()  # so A cannot be adopted
    as_if_never_paused(herd)
    herd.start("--fake-gpus", "1")
    assert (herd.job(a["id"])["state"], herd.job(b["id"])["state"]) == ("held", "queued")

    try:
        refused = herd.cli("sweep", "rm", "s", check=False)
        assert (refused.returncode, refused.stderr) == (
            1,
            f"gpuherd: error: sweep 's': job {a['id']}: its attempt 1 runs unwatched (pid "
            f"{pid}), GPU 0 reserved for it: nothing removed. End that process or wait for it "
            "to end, then remove the sweep (removed now, a restart would no longer know the "
            "run, and would give its GPUs to other jobs while it runs)\n",
        )
        assert [job["id"] for job in herd.json("ls", "--sweep", "s")] == [a["id"], b["id"]]
        assert [sweep["name"] for sweep in herd.json("sweep", "ls")] == ["s"]
    finally:
        go.touch()  # A's run ends, also where the test failed (no daemon would end it)
    herd.wait_state(a["id"], "succeeded")  # A's run, recorded as it ended
    herd.wait_state(b["id"], "succeeded")
    herd.cli("sweep", "rm", "s")
    assert herd.json("sweep", "ls") == []


def test_a_held_job_released_while_its_run_runs_waits_for_it(herd: Herd, tmp_path: Path) -> None:
    """The job is held for its run (no attempt.json), and the user releases it while that
    run runs: the run keeps GPU 0 until it ends, also across a restart (before: a restart
    reserved it only for a job still held, and the released job ran a second time beside
    it, on the same GPU). The job, queued, says what it waits for. When the run ends it is
    recorded as attempt 1, and the job runs again, as the user's release asked."""
    herd.start("--fake-gpus", "1")
    go, runs, copy = tmp_path / "go", tmp_path / "runs", tmp_path / "backup.db"
    before = held_for_its_run(herd, copy, "--", job_command(runs, go))
    job, pid = before["id"], before["pid"]
    assert herd.job(job)["state"] == "held"
    herd.cli("release", str(job))
    herd.cli("daemon", "stop")
    herd.start("--fake-gpus", "1")

    now = herd.job(job)
    assert (now["state"], now["attempt"], now["gpus"]) == ("queued", 1, [])
    assert now["reason"] == (
        f"waiting for a free GPU (GPU 0 is reserved for job {job}, whose attempt 1 runs "
        f"unwatched (pid {pid}))"
    )
    (gpu,) = herd.json("gpus")["gpus"]
    why = f"queued: attempt 1 runs unwatched (pid {pid})"
    assert (gpu["jobs"], gpu["reserved"]) == ([job], [{"job": job, "job_id": job, "reason": why}])
    assert started(runs) == [f"1 {pid}"]  # before: attempt 2 had started beside it

    go.touch()
    done = herd.wait_state(job, "succeeded")
    assert done["attempt"] == 2
    show = herd.json("show", str(job))
    attempts = [(a["number"], a["pid"], a["outcome"], a["exit_code"]) for a in show["attempts"]]
    assert attempts[0] == (1, pid, "exit", 0)
    assert attempts[1][0] == 2
    (end,) = [e for e in show["events"] if e["event"] == "unwatched-ended"]
    assert end["detail"] == (
        f"attempt 1 (pid {pid}), which ran unwatched, has ended (exit 0): recorded as attempt "
        "1, not as the job's result: the job was released or cancelled while it ran (its "
        "state: queued)"
    )
    assert [line.split()[0] for line in started(runs)] == ["1", "2"]


def test_a_held_jobs_run_that_ended_while_no_daemon_ran_counts(herd: Herd, tmp_path: Path) -> None:
    """The job (`--retries 1`) is held for its run; the daemon is stopped, and the run fails
    meanwhile (exit 3). The restart records it as attempt 1, and the job, retried per its
    --retries, runs attempt 2 (before: it stayed held, "ran unwatched and has ended")."""
    herd.start("--fake-gpus", "1")
    go, runs, copy = tmp_path / "go", tmp_path / "runs", tmp_path / "backup.db"
    first_fails = '; [ "$GPUHERD_ATTEMPT" != 1 ] || exit 3'
    command = job_command(runs, go) + first_fails
    before = held_for_its_run(herd, copy, "--retries", "1", "--", command)
    job, pid = before["id"], before["pid"]
    assert herd.job(job)["state"] == "held"
    herd.cli("daemon", "stop")
    shell = psutil.Process(pid)
    go.touch()
    wait_for(lambda: exited(shell), what="the held run to end")
    herd.start("--fake-gpus", "1")

    done = herd.wait_state(job, "succeeded")
    assert done["attempt"] == 2
    show = herd.json("show", str(job))
    ends = [(a["number"], a["pid"], a["outcome"], a["exit_code"]) for a in show["attempts"]]
    assert ends[0] == (1, pid, "exit", 3)
    assert ends[1][::2] == (2, "exit")
    moves = [(e["event"], e["to_state"]) for e in show["events"] if e["event"] != "spawn"]
    assert moves[-5:] == [
        ("release", "queued"),  # attempt 1 ended: the job goes on from it
        ("start", "running"),  # attempt 1, taken from its folder
        ("retry", "queued"),  # exit 3, retried per --retries
        ("start", "running"),
        ("succeed", "succeeded"),
    ]
    assert [line.split()[0] for line in started(runs)] == ["1", "2"]


def test_a_held_runs_end_that_could_not_be_recorded_is_recorded_once_the_database_takes_it(
    herd: Herd, tmp_path: Path
) -> None:
    """The job is held for its run; the run fails (exit 3) while another program holds
    herd.db's write lock for longer than the daemon waits for it (5 s), so its end cannot be
    recorded. `ls` says it has ended, as the daemon saw, and its GPU is free; once the lock
    is let go, the daemon records the end it saw, without a restart, as it does a watched
    attempt's (before: it gave up, and the job stayed held until a restart, which read the
    end from the run's folder: `lost` where a full disk had kept the `process` file from
    its exit line, as here)."""
    herd.env["GPUHERD_TEST_BUSY_TIMEOUT"] = "1"  # its wait for the lock: 1 s, not 5 s
    herd.start("--fake-gpus", "1")
    go, runs, copy = tmp_path / "go", tmp_path / "runs", tmp_path / "backup.db"
    before = held_for_its_run(herd, copy, "--", job_command(runs, go) + "; exit 3")
    job, pid = before["id"], before["pid"]
    assert herd.job(job)["state"] == "held"
    log = herd.home / "daemon.log"
    failed = "recording the queue's changes failed, retrying: database is locked"
    process = herd.home / "jobs" / str(job) / "attempt-1" / "process"
    writer = sqlite3.connect(herd.home / "herd.db", isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # a write lock, as an sqlite3 shell's transaction
        go.touch()
        wait_for(lambda: failed in log.read_text(), 30, "the daemon to fail to record the end")
        now = herd.job(job)
        assert (now["state"], now["attempt"]) == ("held", 1)
        assert now["reason"] == (
            f"held: attempt 1 (pid {pid}) ran unwatched and has ended, its end not recorded "
            "yet: the daemon tries again every second while herd.db refuses it (gpuherd "
            "daemon log)"
        )
        assert herd.json("gpus")["gpus"][0]["reserved"] == []  # the run's GPU is free again
        # The disk filled up as the run ended: its `process` file has no exit line.
        lines = process.read_text().splitlines()
        assert lines[-1] == "exit 3"
        process.write_text("".join(f"{line}\n" for line in lines[:-1]))
    finally:
        writer.execute("ROLLBACK")
        writer.close()

    done = herd.wait_state(job, "failed")  # no restart: before, it stayed held
    (first,) = herd.json("show", str(job))["attempts"]
    assert (done["attempt"], done["outcome"], done["exit_code"]) == (1, "exit", 3)
    assert (first["pid"], first["outcome"], first["exit_code"]) == (pid, "exit", 3)
    assert started(runs) == [f"1 {pid}"]  # it ran once


def test_an_attempt_that_succeeded_after_the_backup_counts(herd: Herd, tmp_path: Path) -> None:
    """The backup has the job queued; its attempt 1 ran and succeeded since. The daemon ran
    the job again (as attempt 2, numbered past attempt 1's folder); now attempt 1 is recorded
    as it was, from its folder, and the job is done."""
    herd.start("--fake-gpus", "1")
    runs, copy = tmp_path / "runs", tmp_path / "backup.db"
    command = f'echo "$GPUHERD_ATTEMPT $$" >> {runs}; echo "run $GPUHERD_ATTEMPT"'
    job = queued_in_backup(herd, copy, "--", command)
    herd.wait_state(job, "succeeded")
    ran = herd.json("show", str(job))["attempts"][0]  # as the daemon that watched it recorded it
    restore(herd, copy)
    as_if_never_paused(herd)
    herd.start("--fake-gpus", "1")

    now = herd.json("show", str(job))
    assert (now["state"], now["attempt"]) == ("succeeded", 1)  # before: queued, then attempt 2
    (first,) = now["attempts"]
    assert ran["cpu_time"] is not None  # (its host usage: measured by the daemon that reaped it)
    for name in ("number", "gpus", "pid", "started_at", "ended_at", "outcome", "exit_code"):
        assert first[name] == ran[name], name
    for name in ("peak_rss", "cpu_time"):  # kept from attempt.json, which keeps them too
        assert first[name] == ran[name] == json.loads(attempt_json(herd, job, 1).read_text())[name]
    start, succeed = now["events"][-2:]
    assert start["event"] == "start"
    assert f"attempt 1 (pid {ran['pid']}) on GPU 0 taken from its folder" in start["detail"]
    assert "herd.db did not know it" in start["detail"]
    assert (succeed["event"], succeed["detail"]) == ("succeed", "exit 0")
    assert "taken from its folder" in (herd.home / "daemon.log").read_text()
    witness = herd.submit("--", "true")  # the queue has run what it would run
    herd.wait_state(witness, "succeeded")
    assert started(runs) == [f"1 {ran['pid']}"]
    assert (herd.home / "jobs" / str(job) / "attempt-1" / "stdout.log").read_text() == "run 1\n"


def test_an_attempt_that_failed_after_the_backup_is_retried_per_its_retries(
    herd: Herd, tmp_path: Path
) -> None:
    """The backup has a `--retries 1` job queued; its attempt 1 failed since (exit 3), and
    the retry had not started. The daemon ran the job as if it had never run (attempt 2, and
    attempt 1's failure nowhere in the database); now attempt 1 is recorded as failed, and
    its retry, attempt 2, runs in a folder of its own."""
    herd.start("--fake-gpus", "1")
    runs, copy, go = tmp_path / "runs", tmp_path / "backup.db", tmp_path / "go"
    first_fails = f'if [ "$GPUHERD_ATTEMPT" = 1 ]; then {CHECKPOINT.format(go=go)}; exit 3; fi'
    command = f'echo "$GPUHERD_ATTEMPT $$" >> {runs}; echo "run $GPUHERD_ATTEMPT"; {first_fails}'
    job = queued_in_backup(herd, copy, "--retries", "1", "--", command)
    running(herd, job, 1)
    herd.cli("pause")  # so that attempt 1's retry waits
    go.touch()
    wait_for(lambda: herd.job(job)["state"] == "queued", what="attempt 1 to fail")
    ran = herd.json("show", str(job))["attempts"][0]
    restore(herd, copy)
    as_if_never_paused(herd)
    herd.start("--fake-gpus", "1")

    now = herd.wait_state(job, "succeeded")
    assert now["attempt"] == 2
    attempts = herd.json("show", str(job))["attempts"]
    assert [(a["number"], a["outcome"], a["exit_code"]) for a in attempts] == [
        (1, "exit", 3),  # before the fix: no attempt 1 at all
        (2, "exit", 0),
    ]
    assert (attempts[0]["started_at"], attempts[0]["ended_at"]) == (
        ran["started_at"],
        ran["ended_at"],
    )
    taken, retry, start = [e for e in events(herd, job) if e["event"] != "spawn"][-4:-1]
    assert taken["event"] == "start" and "taken from its folder" in taken["detail"]
    assert (retry["event"], retry["detail"]) == ("retry", "exit 3")
    assert (start["event"], start["detail"]) == ("start", None)  # no folder was skipped
    assert [line.split()[0] for line in started(runs)] == ["1", "2"]
    folder = herd.home / "jobs" / str(job)
    assert (folder / "attempt-1" / "stdout.log").read_text() == "run 1\n"
    assert (folder / "attempt-2" / "stdout.log").read_text() == "run 2\n"


def test_attempts_that_ended_after_the_backups_running_one_are_recorded_in_turn(
    herd: Herd, tmp_path: Path
) -> None:
    """The backup has attempt 1 of a `--retries 2` job running; since, it failed, attempt 2
    failed and attempt 3 succeeded. The daemon recorded attempt 1's end and ran the job a
    fourth time; now each attempt is recorded as it ended, and the job never passes through
    `failed` on the way (which would cancel the jobs waiting for it)."""
    herd.start("--fake-gpus", "1")
    runs, copy = tmp_path / "runs", tmp_path / "backup.db"
    first = CHECKPOINT.format(go=tmp_path / "fail-1")
    command = (
        f'echo "$GPUHERD_ATTEMPT $$" >> {runs}; '
        f'if [ "$GPUHERD_ATTEMPT" = 1 ]; then {first}; fi; [ "$GPUHERD_ATTEMPT" = 3 ]'
    )
    job = herd.submit("--retries", "2", "--", command)
    running(herd, job, 1)
    backup(herd, copy)
    (tmp_path / "fail-1").touch()
    herd.wait_state(job, "succeeded")
    restore(herd, copy)
    herd.start("--fake-gpus", "1")

    now = herd.json("show", str(job))
    assert (now["state"], now["attempt"]) == ("succeeded", 3)  # before the fix: attempt 4 ran
    ends = [(a["number"], a["outcome"], a["exit_code"]) for a in now["attempts"]]
    assert ends == [(1, "exit", 1), (2, "exit", 1), (3, "exit", 0)]
    # Each one's host usage too, as the daemon that reaped it wrote it in its attempt.json.
    assert all(a["cpu_time"] is not None for a in now["attempts"]), now["attempts"]
    moves = [(e["event"], e["to_state"]) for e in now["events"]][-5:]
    assert moves == [
        ("retry", "queued"),  # attempt 1's end, as the backup's running attempt
        ("start", "running"),  # attempt 2, taken from its folder
        ("retry", "queued"),
        ("start", "running"),  # attempt 3
        ("succeed", "succeeded"),
    ]
    details = [e["detail"] for e in now["events"] if e["event"] == "retry"][-2:]
    assert details == [
        "attempt 1 ended (exit 1), and attempt 2 ran (herd.db did not know it)",
        "attempt 2 ended (exit 1), and attempt 3 ran since",
    ]
    witness = herd.submit("--", "true")
    herd.wait_state(witness, "succeeded")
    assert [line.split()[0] for line in started(runs)] == ["1", "2", "3"]


def test_an_attempt_cut_short_after_the_backup_is_lost(herd: Herd, tmp_path: Path) -> None:
    """The backup has the job queued; its attempt 1 ran since and was killed with no exit
    status written (SIGKILL, as a power cut would). It is recorded `lost`, as an attempt
    the database knew would be, and the job (no --retries) does not run again on its own."""
    herd.start("--fake-gpus", "1")
    runs, copy, go = tmp_path / "runs", tmp_path / "backup.db", tmp_path / "go"
    job = queued_in_backup(herd, copy, "--", job_command(runs, go))
    before = running(herd, job, 1)
    shell = psutil.Process(before["pid"])
    restore(herd, copy)
    os.killpg(before["pid"], signal.SIGKILL)
    wait_for(lambda: exited(shell), what="the attempt to end")
    as_if_never_paused(herd)
    herd.start("--fake-gpus", "1")

    now = herd.json("show", str(job))
    assert (now["state"], now["attempt"], now["outcome"]) == ("lost", 1, "lost")
    (first,) = now["attempts"]
    assert (first["outcome"], first["gpus"], first["pid"]) == ("lost", [0], before["pid"])
    lose = now["events"][-1]
    assert lose["event"] == "lose"
    witness = herd.submit("--", "true")
    herd.wait_state(witness, "succeeded")
    assert len(started(runs)) == 1  # before the fix: attempt 2 ran


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
    numbered past attempt 2, and `ls` says which attempt runs unwatched; when it ends, the
    job has succeeded."""
    herd.start("--fake-gpus", "1")
    copy = tmp_path / "backup.db"
    job, before = failed_then_retried(herd, tmp_path, copy)
    restore(herd, copy)
    attempt_json(herd, job, 2).unlink()
    herd.start("--fake-gpus", "1")

    now = herd.json("show", str(job))
    assert (now["state"], now["attempt"]) == ("held", 2)
    # Put back, as a retry puts it back: no end of its own (the backup's failure is attempt
    # 1's; before, the held job showed it, exit 1 and attempt 1's pid).
    assert (now["outcome"], now["exit_code"], now["pid"]) == (None, None, None)
    hold = now["events"][-1]
    assert (hold["event"], hold["from_state"]) == ("retry-held", "failed")
    assert f"attempt 2 runs already (pid {before['pid']}, unwatched)" in hold["detail"]
    runs_unwatched = f"held: attempt 2 runs unwatched (pid {before['pid']}), GPU 0 reserved for it"
    assert now["reason"] == runs_unwatched
    assert runs_unwatched in herd.cli("ls").stdout

    (tmp_path / "go").touch()
    # Its end is the job's: succeeded at attempt 2 (before: held, for a release to run it
    # a third time).
    assert herd.wait_state(job, "succeeded")["attempt"] == 2
    second = herd.json("show", str(job))["attempts"][-1]
    assert (second["number"], second["pid"], second["exit_code"]) == (2, before["pid"], 0)
    assert [line.split()[0] for line in started(tmp_path / "runs")] == ["1", "2"]


def test_a_held_jobs_gpu_stays_reserved_while_its_run_runs(herd: Herd, tmp_path: Path) -> None:
    """The backup has GPU 0 with one slot and jobs A and B queued; since, GPU 0 got a second
    slot and both run there. After the restore A is adopted, and B held: GPU 0's one slot is
    A's. The daemon gave GPU 0 to job C as soon as A ended, while B's process still ran
    there; now B's run keeps it (`gpuherd gpus`, `ls`, and C's reason), also across a restart,
    until it ends, and then is B's attempt."""
    herd.start("--fake-gpus", "1")
    copy = tmp_path / "backup.db"
    herd.cli("pause")
    a = herd.submit("--", job_command(tmp_path / "a", tmp_path / "go-a"))
    b = herd.submit("--", job_command(tmp_path / "b", tmp_path / "go-b"))
    backup(herd, copy)
    herd.cli("gpus", "add", "0", "--slots", "2")
    herd.cli("resume")
    running(herd, a, 1)
    before = running(herd, b, 1)
    restore(herd, copy)
    as_if_never_paused(herd)
    herd.start("--fake-gpus", "1")

    assert herd.job(a)["state"] == "running"
    held = herd.job(b)
    assert held["state"] == "held"
    assert held["gpus"] == [0]
    reason = f"held: attempt 1 runs unwatched (pid {before['pid']}), GPU 0 reserved for it"
    assert held["reason"] == reason
    c = herd.submit("--", "true")
    herd.cli("daemon", "stop")  # the reservation is no runtime accident: a restart keeps it
    herd.start("--fake-gpus", "1")
    (gpu,) = herd.json("gpus")["gpus"]
    assert gpu["jobs"] == [a, b]
    why = f"held: attempt 1 runs unwatched (pid {before['pid']})"
    assert gpu["reserved"] == [{"job": b, "job_id": b, "reason": why}]
    assert herd.job(b)["reason"] == reason

    (tmp_path / "go-a").touch()
    herd.wait_state(a, "succeeded")
    # C would have started in the same step that recorded A's end (before the fix, it did);
    # it says for which job, and why, its GPU is kept (before: "waiting for a free GPU").
    waiting = herd.job(c)
    assert waiting["state"] == "queued"
    assert waiting["reason"] == (
        f"waiting for a free GPU (GPU 0 is reserved for job {b}, whose attempt 1 runs "
        f"unwatched (pid {before['pid']}))"
    )

    shell = psutil.Process(before["pid"])
    (tmp_path / "go-b").touch()
    herd.wait_state(c, "succeeded")  # once B's run has ended: noticed without a poll
    assert exited(shell)
    now = herd.json("show", str(b))
    assert (now["state"], now["attempt"], now["gpus"]) == ("succeeded", 1, [0])
    assert [(t["number"], t["pid"], t["gpus"]) for t in now["attempts"]] == [
        (1, before["pid"], [0])
    ]
    assert herd.json("gpus")["gpus"][0]["reserved"] == []
