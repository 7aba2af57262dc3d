"""A job that fits starts, however many queued jobs of another shape stand before it.

Placement reads at most SCAN_LIMIT queued jobs per pass: a 1-GPU job behind more 4-GPU jobs
than that, with 3 GPUs free (none of the 4-GPU jobs can start), stayed queued ("waiting:
2,100 jobs ahead in the queue") until they left.
"""

from __future__ import annotations

from conftest import Herd, Recorder, wait_for
from gpuherd.engine_scan import SCAN_LIMIT


def test_a_gpu_job_is_not_kept_waiting_by_a_long_queue_of_bigger_jobs(
    daemon: Herd, recorder: Recorder
) -> None:
    busy = daemon.submit(recorder.cmd("busy", wait="go"))
    wait_for(lambda: recorder.waiting("busy") == 1, what="one of the four GPUs to be busy")
    backlog = daemon.submit_lines(["true"] * (SCAN_LIMIT + 100), "--gpus", "4")
    small = daemon.submit("--", recorder.cmd("small"))
    assert daemon.wait_state(small, "succeeded")["gpus"] != []
    for job_id in (backlog[0], backlog[-1]):  # the 4-GPU jobs wait, and say what for
        job = daemon.job(job_id)
        assert (job["state"], job["reason"]) == ("queued", "waiting for 4 free GPUs")
    daemon.cli("kill", f"{backlog[0]}-{backlog[-1]}")
    recorder.go()
    daemon.wait_state(busy, "succeeded")
