"""`gpuherd sweep --after-any`: a sweep's points wait for other jobs to end, however they end."""

from __future__ import annotations

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
