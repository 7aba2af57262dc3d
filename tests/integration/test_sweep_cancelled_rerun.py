"""A point's rerun cancelled before it started (`--force` then `kill`, a resubmission held then
removed) leaves the point as its last run left it. A submission moves that run to
`previous-runs/N/` at once, so the point's folder said nothing: the next submission ran the
points that had succeeded again as new, and once their jobs were cleaned `sweep status` said
`missing` of points whose results were there (real daemon)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Herd


def test_a_rerun_cancelled_before_it_started_keeps_the_points_results(
    daemon: Herd, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    command = "echo '{{\"loss\": {x}}}' > {run_dir}/metrics.json"
    sweep = ["sweep", command, "-p", "x", "1", "2", "3", "--name", "fc", "--gpus", "0"]
    sweep += ["--results-dir", str(work / "results")]
    ids = [int(i) for i in daemon.cli(*sweep, "-q", cwd=work).stdout.split()]
    for job in ids:
        daemon.wait_state(job, "succeeded")

    rerun = daemon.cli(*sweep, "--force", "--hold", "-q", cwd=work).stdout.split()
    assert len(rerun) == 3
    daemon.cli("kill", *rerun)  # held: cancelled, never started
    point = work / "results" / "x=2"
    assert (point / "previous-runs" / "1" / "SUCCESS").exists()  # (moved at the submission)

    again = daemon.cli(*sweep, "--hold", cwd=work)
    assert "3 done skipped" in again.stdout + again.stderr, again.stdout + again.stderr

    daemon.cli("clean")  # no job of the sweep left: judged by its folders alone
    shown = json.loads(daemon.cli("sweep", "status", "fc", "--json").stdout)
    rows = shown["rows"] if isinstance(shown, dict) else shown
    assert [(r["folder"], r["state"], r["metrics"]) for r in rows] == [
        (f"x={x}", "done", {"loss": x}) for x in (1, 2, 3)
    ]


def test_status_q_says_why_points_removed_by_clean_give_no_id(daemon: Herd, tmp_path: Path) -> None:
    """`retry $(sweep status NAME --state failed -q)` after `clean` had no ids to retry and
    said only "no job ids given": `-q` now says, on stderr, that such points have no job and
    that submitting the sweep again reruns them (stdout keeps ids alone, for `$(...)`)."""
    sweep = ["sweep", "exit {x}", "-p", "x", "0", "1", "2", "--name", "gone", "--gpus", "0"]
    ids = daemon.cli(*sweep, "-q", cwd=tmp_path).stdout.split()
    daemon.cli("sweep", "wait", "gone", check=False)
    before = daemon.cli("sweep", "status", "gone", "--state", "failed", "-q")
    assert len(before.stdout.split()) == 2 and set(before.stdout.split()) < set(ids)
    assert before.stderr == ""

    daemon.cli("clean")
    after = daemon.cli("sweep", "status", "gone", "--state", "failed", "-q")
    assert after.stdout == ""
    assert "2 points have no job in the queue (removed by `clean`" in after.stderr
    assert "submit the sweep again" in after.stderr

    again = daemon.cli(*sweep, cwd=tmp_path)  # as the note says: the 2 failed points run
    assert "2 failed rerun" in again.stdout + again.stderr, again.stdout + again.stderr


def test_a_rerun_that_succeeded_and_was_cleaned_keeps_the_point_done(
    daemon: Herd, tmp_path: Path
) -> None:
    """A point failed, then succeeded when the sweep was submitted again; `clean --state
    succeeded` (keep the failures to look at) removed the rerun's job. The failed job, its
    run moved to previous-runs/1/, became the point's verdict again: `sweep status` said
    `failed` beside the rerun's metrics and `sweep wait` exited 1, where the next submission
    skipped the point as done."""
    work = tmp_path / "work"
    work.mkdir()
    command = "test -e ok || exit 3; echo '{{\"acc\": {x}}}' > {run_dir}/metrics.json"
    sweep = ["sweep", command, "-p", "x", "1", "2", "--name", "rc", "--gpus", "0"]
    sweep += ["--results-dir", str(work / "results")]
    failed = [int(i) for i in daemon.cli(*sweep, "-q", cwd=work).stdout.split()]
    assert daemon.cli("sweep", "wait", "rc", check=False).returncode == 1
    (work / "ok").touch()
    rerun = [int(i) for i in daemon.cli(*sweep, "-q", cwd=work).stdout.split()]
    assert len(rerun) == 2 and daemon.cli("sweep", "wait", "rc").returncode == 0

    daemon.cli("clean", "--state", "succeeded")
    shown = json.loads(daemon.cli("sweep", "status", "rc", "--json").stdout)
    rows = shown["rows"] if isinstance(shown, dict) else shown
    assert [(r["folder"], r["state"], r["job_id"], r["metrics"]) for r in rows] == [
        (f"x={x}", "done", None, {"acc": x}) for x in (1, 2)
    ]
    waited = daemon.cli("sweep", "wait", "rc", check=False)
    assert (waited.returncode, waited.stdout.strip()) == (0, "2 of 2 points succeeded")
    assert daemon.cli("sweep", "status", "rc", "--state", "failed", "-q").stdout == ""
    again = daemon.cli(*sweep, cwd=work)
    assert "2 done skipped" in again.stdout + again.stderr
    assert all(daemon.job(job)["state"] == "failed" for job in failed)  # (kept, to look at)


def test_sweep_retry_is_answered_with_a_retry_that_works_after_a_rerun(
    daemon: Herd, tmp_path: Path
) -> None:
    """`gpuherd sweep retry NAME` named `retry $(ls -q --sweep NAME --state failed)`, which
    lists the older failed runs of points rerun since too: `retry` refused those, exit 1.
    It names `sweep status NAME --state failed -q`, each point's latest job."""
    sweep = ["sweep", "exit {c}", "-p", "c", "0", "1", "--name", "rt", "--gpus", "0"]
    for _ in range(2):  # the failed point rerun once: two failed jobs of it
        daemon.cli(*sweep, "-q", cwd=tmp_path)
        daemon.cli("sweep", "wait", "rt", check=False)
    refused = daemon.cli("sweep", "retry", "rt", check=False)
    advised = "gpuherd retry $(gpuherd sweep status rt --state failed -q) reruns the failed ones"
    assert refused.returncode == 2 and advised in refused.stderr, refused.stderr
    ids = daemon.cli("sweep", "status", "rt", "--state", "failed", "-q").stdout.split()
    assert len(ids) == 1
    assert daemon.cli("retry", *ids).stdout == f"job {ids[0]}: queued again\n"


def test_an_older_run_of_a_point_names_its_own_attempt_folders(
    daemon: Herd, tmp_path: Path
) -> None:
    """A failed point rerun by submitting the sweep again: its failed job's run moved to
    previous-runs/1/. Its `attempts[].dir` still named the point's attempt-1, the rerun's
    (whose attempt.json says another job and exit 0), and its logs, not there, looked sent
    to files of the user's choosing: `show` listed `stdout` and `stderr` rows for them."""
    work = tmp_path / "work"
    work.mkdir()
    sweep = ["sweep", "test -e ok || exit 3", "-p", "x", "1", "--name", "od", "--gpus", "0"]
    sweep += ["--results-dir", str(work / "results")]
    (failed,) = daemon.cli(*sweep, "-q", cwd=work).stdout.split()
    daemon.cli("sweep", "wait", "od", check=False)
    (work / "ok").touch()
    (rerun,) = daemon.cli(*sweep, "-q", cwd=work).stdout.split()
    daemon.cli("sweep", "wait", "od")

    (attempt,) = json.loads(daemon.cli("show", failed, "--json").stdout)["attempts"]
    own = work / "results" / "x=1" / "previous-runs" / "1" / "attempt-1"
    assert attempt["dir"] == str(own)
    assert json.loads((own / "attempt.json").read_text())["id"] == int(failed)
    assert attempt["log_files"]["stderr"] == str(own / "stderr.log")
    shown = daemon.cli("show", failed).stdout
    assert str(own / "stderr.log") not in shown, shown  # (no `--output` row: its own logs)
    (later,) = json.loads(daemon.cli("show", rerun, "--json").stdout)["attempts"]
    assert later["dir"] == str(work / "results" / "x=1" / "attempt-1")
