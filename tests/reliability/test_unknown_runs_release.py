"""herd.db restored from a backup that has a sweep point's job held, while a later job of that
point (the point resubmitted after the backup) runs in the point's folder, unknown to the
restored queue. `gpuherd release` of the held job started it in the point's folder beside the
run, as `retry` did (test_unknown_runs_retry.py); so did a submission over HTTP whose `folder`
is that folder. Both are refused now, naming the run and how to end it, the job left held
and nothing queued; once the run has ended, both run (unknown_retry.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_restored_database import CHECKPOINT
from test_restored_unknown_run_ids import unknown_runs

import gpuherd
from conftest import Herd, gone, wait_for
from gpuherd.errors import Conflict


def test_release_or_a_submission_into_a_folder_an_unknown_run_writes_in_is_refused(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "2")
    go, pid_file = tmp_path / "go", tmp_path / "pid"
    results = herd.home / "results"  # (inside the home: the fixture's clean-up finds the run)
    template = f"echo $$ > {pid_file}; {CHECKPOINT.format(go=go)} # {{x}}"
    sweep = ("sweep", template, "-p", "x", "1", "--name", "s", "--results-dir", str(results))
    (held,) = herd.json(*sweep, "--hold")["ids"]
    copy = tmp_path / "herd-backup.db"
    herd.cli("daemon", "backup", str(copy))  # the point's job held
    herd.cli("rm", str(held))
    (later,) = herd.json(*sweep)["ids"]  # the point run since
    run = int(wait_for(lambda: pid_file.exists() and pid_file.read_text().strip()))
    folder = results / "x=1"
    wait_for((folder / "attempt-1" / "attempt.json").exists, what="its attempt.json")
    herd.restore(copy)
    assert [(r["job_id"], r["pid"]) for r in unknown_runs(herd)] == [(later, run)]
    before = herd.job(held)
    assert before["state"] == "held"

    refused = herd.cli("release", str(held), check=False)
    assert refused.returncode == 1  # before: 0, "queued", its attempt 1 beside the run
    expected = (
        f"job {held}: not released: job {later} attempt 1 (pid {run}) runs in its folder"
        f" {folder}, unknown to herd.db (restored from an older backup?); a new attempt would"
        " run beside it, in the same folder. Release it once that run has ended (gpuherd"
        f" daemon status lists it until then), or end it first: kill -TERM -{run}"
    )
    assert refused.stderr.splitlines() == [f"gpuherd: error: {expected}"]
    (answer,) = herd.client.post("/jobs/release", {"ids": [held]})["results"]
    assert (answer["ok"], answer["message"]) == (False, expected)
    assert gpuherd.connect(herd.home, start=False).job(held).release() == expected
    after = herd.job(held)
    assert (after["state"], after["attempt"], after["events"]) == (
        "held",
        before["attempt"],
        before["events"],
    )

    # A job of its own submitted into that folder (HTTP's `folder`): refused too.
    item = {"command": "true", "cwd": str(tmp_path), "env": dict(os.environ), "gpus": 0}
    last = herd.json("daemon", "status")["last_job"]
    with pytest.raises(Conflict) as into:  # before: queued, and started beside the run
        herd.client.post("/jobs", {"jobs": [{**item, "folder": str(folder) + "/"}]})
    assert str(into.value) == (
        f"folder {folder}: job {later} attempt 1 (pid {run}) runs in it, unknown to herd.db"
        " (restored from an older backup?); a job submitted into it would run beside it, in"
        " the same folder. Submit it once that run has ended (gpuherd daemon status lists it"
        f" until then), give another folder, or end the run first: kill -TERM -{run}"
    )
    assert herd.json("daemon", "status")["last_job"] == last  # nothing queued
    assert not (folder / "attempt-2").exists()
    assert (folder / "attempt-1" / "process").read_text().startswith(f"pid {run}")
    # Another folder (its parent, one inside it) is not the run's: taken.
    beside = herd.client.post("/jobs", {"jobs": [{**item, "folder": str(folder / "sub")}]})
    assert herd.wait_state(beside["ids"][0], "succeeded")

    # Once the run has ended, the release runs the job, as it would have.
    go.touch()
    wait_for(lambda: gone(run), what="the run to end")
    wait_for(lambda: not unknown_runs(herd), what="the daemon to see the run end")
    assert herd.cli("release", str(held)).returncode == 0
    assert herd.wait_state(held, "succeeded")["attempt"] == 1
