"""`ls --since/--until` in the store (JobFilter): the jobs in the queue at some moment of the
window, picked in SQL, the waiting ones in their start order as every listing has them."""

from __future__ import annotations

from pathlib import Path

from gpuherd.core.model import JobSpec
from gpuherd.core.states import JobState
from gpuherd.store import NewJob, Store
from gpuherd.store_rows import JobFilter


def test_a_window_holds_the_jobs_in_the_queue_then(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    spec = JobSpec(command="true", cwd="/tmp", env={})
    old, retried, new, held = (store.add_jobs([NewJob(spec)], now=float(t))[0] for t in range(4))
    for job, ended in ((old, 10.0), (retried, 10.0)):
        store.update_job(job, 5.0, "start", JobState.RUNNING, started_at=5.0)
        store.update_job(job, ended, "fail", JobState.FAILED, ended_at=ended)
    # Waiting to run again (retry-delay), it keeps its last end: in the queue all the same.
    store.update_job(retried, 11.0, "retry", JobState.QUEUED)
    store.update_job(new, 20.0, "start", JobState.RUNNING, started_at=20.0)
    store.update_job(new, 30.0, "succeed", JobState.SUCCEEDED, ended_at=30.0)
    store.update_job(held, 1.0, "hold", JobState.HELD)

    def listed(match: JobFilter) -> list[int]:
        started = store.list_job_ids([JobState.FAILED, JobState.SUCCEEDED], match)
        return started + store.waiting_ids(match, {JobState.QUEUED, JobState.HELD})

    assert listed(JobFilter(since=10.0)) == [old, new, retried, held]  # ended at 10: in it
    assert listed(JobFilter(since=15.0)) == [new, retried, held]
    assert listed(JobFilter(since=31.0)) == [retried, held]
    assert listed(JobFilter(until=1.0)) == [old, retried]
    assert listed(JobFilter(since=15.0, until=1.0)) == [retried]
    assert store.count_jobs((), JobFilter(since=15.0)) == 3
    store.close()
