"""The `--begin` timer inside an engine built as the daemon builds it: a database that fails
when the time comes leaves the job held, and the timer tries again until it is released."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

from conftest import item, one_gpu_engine, serving, settled
from gpuherd.core.model import Job
from gpuherd.core.states import JobState
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store


class FailsOnce(Store):
    """A store whose first look for due jobs fails as a full disk would."""

    failures = 0

    def due_releases(self, now: float) -> list[Job]:
        if not self.failures:
            self.failures += 1
            raise sqlite3.OperationalError("database or disk is full")
        return super().due_releases(now)


def test_a_failed_release_is_tried_again(tmp_path: Path) -> None:
    store = FailsOnce(tmp_path / "herd.db")

    async def main() -> None:
        async with serving(one_gpu_engine(tmp_path, store, LocalExecutor()), tmp_path) as service:
            begin = time.time() + 0.2
            (job_id,) = service.submit([item(tmp_path, "true", begin=begin)])
            assert store.get_job(job_id).state is JobState.HELD  # type: ignore[union-attr]
            await settled(store, job_id)
        job = store.get_job(job_id)
        assert job is not None and job.state is JobState.SUCCEEDED, job
        assert store.failures == 1
        assert job.started_at is not None and job.started_at >= begin + 1.0  # after the retry

    asyncio.run(main())
    store.close()
