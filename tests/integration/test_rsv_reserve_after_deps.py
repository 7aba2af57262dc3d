"""`reserve-after` counts a job's wait from when it could first start, through a real daemon
(fake GPUs): a job `--after` a long one does not hold GPUs the moment that one ends, and a
smaller job behind it backfills meanwhile."""

from __future__ import annotations

import time
from pathlib import Path

from conftest import Herd, wait_for

RESERVE_AFTER = 2.0


def test_a_job_after_a_long_one_lets_smaller_jobs_pass_until_ready_for_reserve_after(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "2")
    herd.cli("config", "set", "reserve-after", f"{RESERVE_AFTER:g}s")
    busy = herd.submit("--", "sleep", "60")  # keeps one GPU taken throughout
    herd.wait_state(busy, "running")
    dep = herd.running_until(tmp_path / "go")  # on the other GPU
    big = herd.submit("--gpus", "2", "--after", str(dep), "--", "true")
    small = herd.submit("--", "sleep", "60")  # waits for a free GPU
    created = herd.job(big)["created_at"]
    wait_for(lambda: time.time() - created > RESERVE_AFTER + 0.5, 10, "big to be queued long")
    assert herd.job(big)["reason"] == f"waiting for job {dep}"

    # Its dependency ends: the 2-GPU job could start from now on, and has not waited at all
    # as a job that could run, so the GPU freed goes to the 1-GPU job behind it.
    (tmp_path / "go").touch()
    ended = herd.wait_state(dep, "succeeded")["ended_at"]
    herd.wait_state(small, "running", timeout=10)

    # Once it has been ready for reserve-after, it holds the GPU freed against the jobs behind.
    wait_for(lambda: time.time() - ended > RESERVE_AFTER + 0.5, 10, "big to be ready long")
    herd.cli("kill", str(small))
    herd.wait_state(small, "killed")
    behind = herd.submit("--", "true")
    wait_for(
        lambda: (
            herd.job(behind)["reason"]
            == f"waiting for its turn: GPUs 0, 1 are held for job {big}, which waits longer"
        ),
        10,
        "the job behind to wait for the GPUs held for the 2-GPU job",
    )
    assert herd.job(behind)["state"] == "queued"
    herd.cli("kill", str(busy))
    herd.wait_state(big, "succeeded")
    herd.wait_state(behind, "succeeded")
