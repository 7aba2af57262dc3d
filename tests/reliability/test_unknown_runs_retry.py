"""herd.db restored from a backup that has a sweep point's job failed, while a later job of
that point (resubmitted after the backup) runs in the point's folder, unknown to the restored
queue. `gpuherd retry` of the failed job queued it again, and its next attempt started in the
point's folder beside the run: two processes writing one folder's job.json, metrics and GPU
files. Now the retry is refused, in one line naming the run and how to end it, the job left
as it was (CLI, HTTP, Python; unknown_retry.py); once the run has ended, the point's folder
holds that run: the retry is refused still, as an older run of the point (it moved that run
aside and ran the point again)."""

from __future__ import annotations

from pathlib import Path

from test_restored_database import CHECKPOINT
from test_restored_unknown_run_ids import unknown_runs

import gpuherd
from conftest import Herd, gone, wait_for


def test_retry_of_a_job_whose_folder_an_unknown_run_writes_in_is_refused(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "2")
    flag, go, pid_file = tmp_path / "flag", tmp_path / "go", tmp_path / "pid"
    results = herd.home / "results"  # (inside the home: the fixture's clean-up finds the run)
    # Fails until `flag` exists; then runs until `go`.
    template = (
        f"if [ ! -e {flag} ]; then exit 3; fi; echo $$ > {pid_file}; {CHECKPOINT.format(go=go)}"
        " # {x}"
    )
    sweep = ("sweep", template, "-p", "x", "1", "--name", "s", "--results-dir", str(results))
    (failed,) = herd.json(*sweep)["ids"]
    herd.wait_state(failed, "failed")
    copy = tmp_path / "herd-backup.db"
    herd.cli("daemon", "backup", str(copy))  # the point's job failed
    flag.touch()
    (later,) = herd.json(*sweep)["ids"]  # the failed point run again
    run = int(wait_for(lambda: pid_file.exists() and pid_file.read_text().strip()))
    wait_for((results / "x=1" / "attempt-1" / "attempt.json").exists, what="its attempt.json")
    herd.restore(copy)
    assert [(r["job_id"], r["pid"]) for r in unknown_runs(herd)] == [(later, run)]
    before = herd.job(failed)

    refused = herd.cli("retry", str(failed), check=False)
    assert refused.returncode == 1  # before: 0, "queued again", attempt 2 beside the run
    expected = (
        f"job {failed}: not queued again: job {later} attempt 1 (pid {run}) runs in its folder"
        f" {results / 'x=1'}, unknown to herd.db (restored from an older backup?); a new"
        " attempt would run beside it, in the same folder. Retry it once that run has ended"
        f" (gpuherd daemon status lists it until then), or end it first: kill -TERM -{run}"
    )
    assert refused.stderr.splitlines() == [f"gpuherd: error: {expected}"]
    assert herd.cli("retry", "--hold", str(failed), check=False).returncode == 1
    (answer,) = herd.client.post("/jobs/retry", {"ids": [failed]})["results"]
    assert (answer["ok"], answer["message"]) == (False, expected)
    assert gpuherd.connect(herd.home, start=False).job(failed).retry() == expected
    after = herd.job(failed)
    assert (after["state"], after["attempt"]) == ("failed", before["attempt"])
    assert after["events"] == before["events"]
    assert not (results / "x=1" / "attempt-2").exists()

    # Once the run has ended, the point's folder holds it: a retry moved it aside and ran the
    # point again; refused, saying what runs the point (a resubmission judges it by its folder).
    go.touch()
    wait_for(lambda: gone(run), what="the run to end")
    wait_for(lambda: not unknown_runs(herd), what="the daemon to see the run end")
    assert herd.cli("retry", str(failed), check=False).stderr == (
        f"gpuherd: error: job {failed} is an older run of s/x=1: its folder holds the run of "
        f"job {later}, which ran that point after it and is no longer in the queue; to run the "
        "point again, submit the sweep again (it skips the points done, reruns the failed ones)\n"
    )
    assert herd.job(failed)["attempt"] == before["attempt"]
    assert not (results / "x=1" / "attempt-2").exists()
