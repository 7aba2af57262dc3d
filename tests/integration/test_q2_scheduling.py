"""Scheduling promises a campaign on a shared server leans on, checked with a real daemon
(fake GPUs, real processes)."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd


def test_a_projects_small_job_starts_while_its_big_job_waits(herd: Herd, tmp_path: Path) -> None:
    # Fairness: a job that does not fit lets smaller ones pass; a project limit of 1 with
    # nothing of the project running leaves room for one. Before, the project's 2-GPU job
    # used its room in every pass, and its 1-GPU job waited with GPU 1 idle, "waiting for
    # its turn (its GPUs are held for an older job ...)" while nothing was held.
    herd.start("--fake-gpus", "2")
    herd.cli("config", "set", "project-limits", "p=1")
    go = tmp_path / "go"
    busy = herd.submit("--only-gpus", "0", f"while [ ! -e {go} ]; do sleep 0.05; done")
    herd.wait_state(busy, "running")
    big = herd.submit("-g", "2", "--project", "p", "--", "true")
    small = herd.submit("--project", "p", "--", "echo $CUDA_VISIBLE_DEVICES")
    assert herd.wait_state(small, "succeeded")["gpus"] == [1]
    assert herd.cli("log", str(small)).stdout == "1\n"
    assert herd.job(big)["state"] == "queued"
    go.touch()
    assert herd.wait_state(big, "succeeded")["gpus"] == [0, 1]


def test_a_retry_never_runs_a_job_past_a_dependency_removed_since(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    # prep fails, train (--after prep) is cancelled; `rm prep`, then `retry train`: before,
    # train ran as though prep had succeeded (its dependency no longer read), and `retry
    # --hold` then `release` the same.
    herd, ran = shared_daemon, tmp_path / "ran"
    prep = herd.submit("--", "exit 1")
    train = herd.submit("--after", str(prep), "--", f"touch {ran}")
    herd.wait_state(train, "cancelled")
    herd.cli("rm", str(prep))
    for verb in (["retry"], ["retry", "--hold"]):
        refused = herd.cli(*verb, str(train), check=False)
        assert refused.returncode == 1, refused
        assert refused.stderr == (
            f"gpuherd: error: job {train} waits for job {prep} (--after), which was removed "
            f"since: a retry cannot know whether job {prep} did what it waits for; submit its "
            f"command again (gpuherd show {train}) to run it without that dependency\n"
        )
    assert herd.job(train)["state"] == "cancelled" and not ran.exists()
    # A job that ran, its dependency met, is retried as before once that job is removed.
    done = herd.submit("--", "true")
    tried = herd.submit("--after", str(done), "--", "exit 3")
    herd.wait_state(tried, "failed")
    herd.cli("rm", str(done))
    herd.cli("retry", str(tried))
    assert herd.wait_state(tried, "failed")["attempt"] == 2


def test_an_edited_sweep_point_that_waits_lets_the_others_run(herd: Herd, tmp_path: Path) -> None:
    # A sweep with --max-parallel 1 whose first point was edited to 2 GPUs: before, that
    # point used the sweep's room in every pass, and the others waited with GPU 1 idle,
    # "waiting for its turn (its GPUs are held ...)" while nothing was held.
    herd.start("--fake-gpus", "2")
    go = tmp_path / "go"
    busy = herd.submit("--only-gpus", "0", f"while [ ! -e {go} ]; do sleep 0.05; done")
    herd.wait_state(busy, "running")
    herd.cli("pause")
    sweep = ["sweep", "echo {x} $CUDA_VISIBLE_DEVICES", "-p", "x", "1", "2", "3"]
    points = [int(i) for i in herd.cli(*sweep, "--max-parallel", "1", "-q").stdout.split()]
    herd.cli("edit", str(points[0]), "--gpus", "2")
    herd.cli("resume")
    for point in points[1:]:
        assert herd.wait_state(point, "succeeded")["gpus"] == [1]
    assert herd.job(points[0])["state"] == "queued"
    go.touch()
    assert herd.wait_state(points[0], "succeeded")["gpus"] == [0, 1]
