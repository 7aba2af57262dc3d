"""herd.db restored from a backup taken before a sweep point's run began: the restored
queue knows no job running in the point's folder, so a resubmission of the sweep ran the
point again. The run's files went to previous-runs/1/ while it wrote them, a new job started
in the same folder beside it, and when the old run ended, its shell appended its `exit 0` to
the new job's `process` file (it writes by path): the new job's record corrupted. Such a
point now counts as running: not submitted, --force or not, and said so; `sweep status`
shows it running (sweep_unwatched.py), and once it has ended, its exit judges the point
(unknown_ended.py). The same holds of a point whose job the restore
held for its run, cancelled since while the run goes on (engine_held_runs.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_restored_database import CHECKPOINT, as_if_never_paused, backup, restore
from test_restored_unknown_run_ids import unknown_runs

from conftest import Herd, gone, wait_for

WHY = (
    "run again now, the new job would have that run's files moved aside under it, and the"
    " run's end written into the new job's record"
)


def row_of(table: dict[str, Any], folder: str) -> dict[str, Any]:
    (row,) = [row for row in table["rows"] if row["folder"] == folder]
    return row


def test_a_sweep_point_whose_run_herd_db_does_not_know_is_not_run_again(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "2")
    copy = tmp_path / "herd-backup.db"
    herd.cli("daemon", "backup", str(copy))  # the queue before the sweep: empty
    go, pid_file = tmp_path / "go", tmp_path / "pid"
    results = herd.home / "results"  # (inside the home: the fixture's clean-up finds the run)
    # Point x=1 runs until `go`; point x=2 succeeds at once.
    template = f"if [ {{x}} = 1 ]; then echo $$ > {pid_file}; {CHECKPOINT.format(go=go)}; fi"
    sweep = ("sweep", template, "-p", "x", "1", "2", "--name", "s", "--results-dir", str(results))
    herd.cli(*sweep)
    point, done = (job["id"] for job in sorted(herd.json("ls", "--sweep", "s"), key=_folder))
    herd.wait_state(done, "succeeded")
    run = int(wait_for(lambda: pid_file.exists() and pid_file.read_text().strip()))
    folder = results / "x=1"
    wait_for((folder / "attempt-1" / "attempt.json").exists, what="the run's attempt.json")
    herd.restore(copy)
    assert [r["pid"] for r in unknown_runs(herd)] == [run]

    answer = herd.json(*sweep)
    assert answer["ids"] == []  # before: a new job of x=1, run beside the unknown run
    assert (answer["new"], answer["skipped_active"], answer["skipped_done"]) == (0, 1, 1)
    assert answer["warnings"] == [
        f"point x=1 not submitted: job {point} attempt 1 (pid {run}) runs in its folder,"
        f" unknown to herd.db (restored from an older backup?); {WHY}. Submit it again once"
        " that run has ended (gpuherd daemon status lists it until then), or end it first:"
        f" kill -TERM -{run}"
    ]
    assert not (folder / "previous-runs").exists()  # its files are where it writes them

    # --force runs the done point again, not the one whose run is in its folder.
    forced = herd.json(*sweep, "--force")
    assert (forced["rerun_done"], forced["skipped_active"]) == (1, 1)
    (rerun,) = forced["ids"]
    assert forced["warnings"][0].startswith(
        f"point x=1 not submitted, --force or not: job {point} attempt 1 (pid {run})"
    )
    assert herd.wait_state(rerun, "succeeded")["name"] == "s/x=2"
    assert not (folder / "previous-runs").exists()

    # `sweep status` shows the point running, its job the run's: also with --state running.
    table = herd.json("sweep", "status", "s")
    shown = row_of(table, "x=1")
    assert (shown["state"], shown["job_id"]) == ("running", point)  # before: missing, none
    assert table["counts"] == {"running": 1, "succeeded": 1}
    assert table["warnings"] == [
        f"point x=1 is shown running: job {point} attempt 1 (pid {run}) runs in its folder,"
        " unknown to herd.db (restored from an older backup?); no job of the queue runs it,"
        " and once it has ended, the exit it writes there judges the point, as a job's would,"
        " unless herd.db has a job of the point"
    ]
    (listed,) = herd.json("sweep", "ls")
    assert listed["counts"] == {"running": 1, "succeeded": 1}  # before: 1 missing
    running = herd.json("sweep", "status", "s", "--state", "running")
    assert [row["folder"] for row in running["rows"]] == ["x=1"]
    assert "running" in herd.cli("sweep", "status", "s").stdout.splitlines()[1]

    # Once the run has ended, its exit 0 judges the point: done, not submitted again
    # (test_unknown_runs_ended.py); --force runs it again, each run's record its own.
    go.touch()
    wait_for(lambda: gone(run), what="the run to end")
    wait_for(lambda: not unknown_runs(herd), what="the daemon to see the run end")
    assert row_of(herd.json("sweep", "status", "s"), "x=1")["state"] == "done"
    assert herd.json(*sweep)["ids"] == []
    again, _ = herd.json(*sweep, "--force")["ids"]  # (x=1, and x=2 again)
    herd.wait_state(again, "succeeded")
    assert row_of(herd.json("sweep", "status", "s"), "x=1")["job_id"] == again
    ended = (folder / "previous-runs" / "1" / "attempt-1" / "process").read_text()
    assert ended.splitlines() == [f"pid {run}", "exit 0"]
    assert (folder / "attempt-1" / "process").read_text().count("exit") == 1


def test_a_sweep_point_whose_cancelled_job_still_runs_is_not_run_again(
    herd: Herd, tmp_path: Path
) -> None:
    """The backup has the point queued; put back while it runs, with no attempt.json (a
    daemon stopped within a second of its start): the point's job is held for its run, then
    cancelled, and the run goes on. Before, a resubmission ran the point again beside it."""
    herd.start("--fake-gpus", "1")
    go, copy, results = tmp_path / "go", tmp_path / "backup.db", herd.home / "results"
    sweep = (
        "sweep",
        CHECKPOINT.format(go=go) + " # {x}",
        *("-p", "x", "1", "--name", "s", "--results-dir", str(results)),
    )
    herd.cli("pause")
    herd.cli(*sweep)
    (point,) = (job["id"] for job in herd.json("ls", "--sweep", "s"))
    backup(herd, copy)  # the point queued
    herd.cli("resume")
    pid = wait_for(lambda: herd.job(point)["pid"], what="the point to run")
    started = results / "x=1" / "attempt-1" / "attempt.json"
    wait_for(started.exists, what="its attempt.json")
    restore(herd, copy)
    started.unlink()  # so that it cannot be adopted: the job is held for it
    as_if_never_paused(herd)
    herd.start("--fake-gpus", "1")
    assert herd.job(point)["state"] == "held"
    herd.cli("kill", str(point))
    herd.wait_state(point, "cancelled")

    answer = herd.json(*sweep)
    assert answer["ids"] == []  # before: a new job of the point, beside its run
    assert answer["warnings"] == [
        f"point x=1 not submitted: job {point} attempt 1 (pid {pid}) runs in its folder,"
        f" unwatched, its job cancelled; {WHY}. Submit it again once that run has ended, or"
        f" end it first: kill -TERM -{pid}"
    ]
    shown = row_of(herd.json("sweep", "status", "s"), "x=1")
    assert (shown["state"], shown["job_id"]) == ("running", point)  # before: cancelled

    go.touch()
    wait_for(
        lambda: any(
            e["event"] == "unwatched-ended" for e in herd.json("show", str(point))["events"]
        ),
        what="the run's end to be recorded",
    )
    (again,) = herd.json(*sweep)["ids"]
    herd.wait_state(again, "succeeded")


def _folder(job: dict[str, Any]) -> str:
    return str(job["name"])
