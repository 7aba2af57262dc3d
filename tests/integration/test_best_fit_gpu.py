"""A job that fits the small GPUs takes one of them, and a big GPU stays for the jobs only it
can run (best fit): a job without --mem took the 80 GiB GPU beside idle 24 GiB ones, and a
--mem 50GiB job waited behind it until it ended (real daemon, fake GPUs 24, 24 and 80 GiB)."""

from __future__ import annotations

from conftest import Herd


def test_small_jobs_leave_the_big_gpu_to_the_job_that_needs_it(herd: Herd) -> None:
    herd.start("--fake-gpus", "2,1x80GiB")
    plain = herd.submit("--", "sleep", "300")
    small = herd.submit("--mem", "4GiB", "--", "sleep", "300")
    big = herd.submit("--mem", "50GiB", "--", "sleep", "300")
    for job in (plain, small, big):
        herd.wait_state(job, "running")
    assert herd.job(plain)["gpus"] == [0]  # the smallest, the emptiest of those
    assert herd.job(small)["gpus"] == [1]
    assert herd.job(big)["gpus"] == [2]  # at once: it waited for the plain job to end
    herd.cli("kill", str(plain), str(small), str(big))
