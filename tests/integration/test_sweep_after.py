"""`gpuherd sweep --after-any` and `--after`: a sweep's points wait for other jobs to end."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, Recorder


def test_sweep_after_any_runs_the_points_once_the_jobs_ended_even_failed(
    daemon: Herd, recorder: Recorder
) -> None:
    none_yet = daemon.cli("sweep", "true {x}", "-p", "x", "1", "--after-any", "last", check=False)
    assert none_yet.returncode == 1
    assert none_yet.stderr == "gpuherd: error: --after-any last: there is no job yet to wait for\n"
    good = daemon.submit("--", "true")
    failing = daemon.submit(recorder.cmd("first", wait="go", exit=3))
    out = daemon.cli(
        "sweep",
        "true {x}",
        "-p",
        "x",
        "1",
        "2",
        "--after-any",
        "last",
        "--after-any",
        str(good),
        "-q",
    ).stdout
    points = [int(word) for word in out.split()]
    assert len(points) == 2
    for point in points:
        job = daemon.job(point)
        assert (job["state"], job["after"], job["after_any"]) == ("queued", [], [good, failing])
    daemon.wait_state(good, "succeeded")
    assert daemon.job(points[0])["reason"] == f"waiting for job {failing}"
    recorder.go()
    assert daemon.wait_state(failing, "failed")["exit_code"] == 3
    for point in points:  # not cancelled, as --after's points would be
        assert daemon.wait_state(point, "succeeded", "cancelled")["state"] == "succeeded"


def test_sweep_after_a_job_that_already_failed_cancels_its_points_at_once(
    daemon: Herd, tmp_path: Path
) -> None:
    failed = daemon.submit("--gpus", "0", "--", "exit 3")
    daemon.wait_state(failed, "failed")
    swept = daemon.cli(
        "sweep", "true {x}", "-p", "x", "1", "2", "--after", str(failed), "-q", cwd=tmp_path
    )
    points = [int(word) for word in swept.stdout.split()]
    assert swept.stderr == (
        f"gpuherd: warning: jobs {points[0]}-{points[1]} are cancelled at once: job {failed}, "
        f"which they wait for, already failed (gpuherd retry {failed} {points[0]}-{points[1]} "
        "runs them all again)\n"
    )
    for point in points:
        job = daemon.job(point)
        assert (job["state"], job["outcome"]) == ("cancelled", "dependency_failed")
