"""herd.db restored from a backup that has a sweep's points held, while later jobs of those
points (resubmitted after the backup) ran to their end in the points' folders, unknown to the
restored queue: their ends are recorded there alone (job.json, the `exit N` in
attempt-1/process). A release of a held job, or an HTTP submission whose `folder` is such a
folder, started its attempt 1 in the run's attempt-1/: the `process` file holding the run's
end was deleted, and the new attempt's output appended to the run's logs. Now that run's files
are moved to previous-runs/<n>/, as a resubmission moves a point's previous run, and the new
attempt starts in a clean folder (unknown_ended.set_aside)."""

from __future__ import annotations

import os
from pathlib import Path

from test_restored_database import CHECKPOINT
from test_restored_unknown_run_ids import ended_unknown

from conftest import Herd


def test_a_job_started_where_an_unknown_run_ended_keeps_that_run_aside(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "2")
    go, results = tmp_path / "go", herd.home / "results"
    # Each run says which job it is, then runs until `go` (the unknown runs) and exits 4.
    template = f"echo job $GPUHERD_JOB_ID; {CHECKPOINT.format(go=go)}; exit 4 # {{x}}"
    sweep = ("sweep", template, "-p", "x", "1", "2", "--name", "s", "--results-dir", str(results))
    held = herd.json(*sweep, "--hold")["ids"]
    copy = tmp_path / "herd-backup.db"
    herd.cli("daemon", "backup", str(copy))  # the points' jobs held
    herd.cli("rm", *map(str, held))
    later = herd.json(*sweep)["ids"]  # the points run since
    ended_unknown(herd, later, results, copy, go)

    # The held job of x=1 released: its attempt 1 runs in x=1/attempt-1, where the run was.
    herd.cli("release", str(held[0]))
    assert herd.wait_state(held[0], "failed")["attempt"] == 1
    # Another job submitted over HTTP into x=2.
    item = {"command": "echo mine", "cwd": str(tmp_path), "env": dict(os.environ), "gpus": 0}
    item["folder"] = str(results / "x=2")
    (mine,) = herd.client.post("/jobs", {"jobs": [item]})["ids"]
    assert herd.wait_state(mine, "succeeded")["attempt"] == 1

    for x, job, output in ((1, later[0], f"job {held[0]}\n"), (2, later[1], "mine\n")):
        folder = results / f"x={x}"
        # Before: the run's output, then the new attempt's, in one log.
        assert (folder / "attempt-1" / "stdout.log").read_text() == output
        kept = folder / "previous-runs" / "1"
        # Before: the process file, the only record of the run's end, deleted.
        process = (kept / "attempt-1" / "process").read_text()
        assert process.rstrip().endswith("exit 4"), process
        assert (kept / "attempt-1" / "stdout.log").read_text() == f"job {job}\n"
        assert f'"id": {job},' in (kept / "job.json").read_text()
        assert (kept / "params.json").exists()
        assert f'"id": {job},' not in (folder / "job.json").read_text()
    # A job's logs are its own run's: the unknown run's in previous-runs/1, read by none.
    assert herd.cli("log", str(held[0])).stdout == f"job {held[0]}\n"


def test_a_job_started_where_a_run_herd_db_forgot_ended_watched_keeps_that_run_aside(
    herd: Herd, tmp_path: Path
) -> None:
    """The same, with runs whose ends their daemon recorded (job.json's `ended_at`, SUCCESS
    or FAILURE) before herd.db was restored: a job starting attempt 1 there deleted the
    markers and logs of the run (jobfiles.prepare), and its own output took their place."""
    herd.start("--fake-gpus", "2")
    results = herd.home / "results"
    template = "echo job $GPUHERD_JOB_ID; exit {x}"
    sweep = ("sweep", template, "-p", "x", "0", "3", "--name", "s", "--results-dir", str(results))
    held = herd.json(*sweep, "--hold")["ids"]
    copy = tmp_path / "herd-backup.db"
    herd.cli("daemon", "backup", str(copy))  # the points' jobs held
    herd.cli("rm", *map(str, held))
    later = herd.json(*sweep)["ids"]  # the points run since, watched to their ends
    herd.wait_state(later[0], "succeeded")
    herd.wait_state(later[1], "failed")
    herd.restore(copy)

    herd.cli("release", str(held[0]))  # x=0's held job: its attempt 1 in x=0/attempt-1
    assert herd.wait_state(held[0], "succeeded")["attempt"] == 1
    item = {"command": "echo mine", "cwd": str(tmp_path), "env": dict(os.environ), "gpus": 0}
    item["folder"] = str(results / "x=3")
    (mine,) = herd.client.post("/jobs", {"jobs": [item]})["ids"]
    assert herd.wait_state(mine, "succeeded")["attempt"] == 1

    runs = ((0, later[0], "SUCCESS", f"job {held[0]}\n"), (3, later[1], "FAILURE", "mine\n"))
    for x, job, ended, output in runs:
        folder = results / f"x={x}"
        kept = folder / "previous-runs" / "1"
        # Before: no previous-runs/, the run's logs and markers deleted.
        assert (kept / "attempt-1" / "stdout.log").read_text() == f"job {job}\n"
        assert (kept / ended).exists()
        assert '"ended_at": null' not in (kept / "job.json").read_text()
        assert f'"id": {job},' in (kept / "job.json").read_text()
        assert (folder / "attempt-1" / "stdout.log").read_text() == output
        assert (folder / "SUCCESS").exists() and not (folder / "FAILURE").exists()
    assert herd.cli("log", str(held[0])).stdout == f"job {held[0]}\n"


def test_a_known_jobs_run_set_aside_is_still_its_log(herd: Herd, tmp_path: Path) -> None:
    # The set-aside goes by the folder, not herd.db: a job herd.db knows, whose run ended in
    # a folder another job then starts in, has its run moved too, and `log` follows it.
    herd.start("--fake-gpus", "1")
    folder = tmp_path / "point"
    ids = []
    for word in ("first", "second"):
        item = {"command": f"echo {word}", "cwd": str(tmp_path), "env": dict(os.environ)}
        item["folder"] = str(folder)
        (job,) = herd.client.post("/jobs", {"jobs": [item]})["ids"]
        herd.wait_state(job, "succeeded")
        ids.append(job)
    assert f'"id": {ids[0]},' in (folder / "previous-runs" / "1" / "job.json").read_text()
    assert herd.cli("log", str(ids[0])).stdout == "first\n"
    assert herd.cli("log", str(ids[1])).stdout == "second\n"
