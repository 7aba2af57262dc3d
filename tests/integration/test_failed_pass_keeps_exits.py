"""A pass of the engine that failed while it recorded ended jobs kept their exits only for
herd.db's own errors (a full disk): any other (a bug, a damaged row) dropped them, and the
jobs stayed `running` for ever (`wait` hung, `kill` did nothing) while their GPUs went to the
next jobs. Now every failure keeps them; the failing pass is tried again (engine_health)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import gpuherd.engine
from conftest import item, one_gpu_engine, serving
from gpuherd.core.states import JobState
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store
from integration.test_stop_after_commit import until


def test_an_exit_whose_recording_failed_is_recorded_by_the_next_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "herd.db")
    finish_exits, failed = gpuherd.engine.finish_exits, []

    def fails_once(engine: Any, ended: list[Any], now: float) -> None:
        if ended and not failed:
            failed.append([live.job_id for live, _ in ended])
            raise ValueError("a damaged row")
        finish_exits(engine, ended, now)

    monkeypatch.setattr(gpuherd.engine, "finish_exits", fails_once)

    async def main() -> None:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        async with serving(engine, tmp_path) as service:
            first, second = service.submit([item(tmp_path, "true"), item(tmp_path, "true")])
            await until(lambda: failed, "the first exit's recording to fail")
            assert failed == [[first]]
            assert engine.health.status() is not None  # said as failing meanwhile

            def both_ended() -> bool:
                jobs = [store.get_job(job_id) for job_id in (first, second)]
                return all(job is not None and job.state is JobState.SUCCEEDED for job in jobs)

            await until(both_ended, "both jobs' ends to be recorded")
            assert engine.health.status() is None

        for job_id in (first, second):
            job = store.get_job(job_id)
            assert job is not None and job.outcome is not None, job
            assert (job.state, job.outcome.exit_code, job.attempt) == (JobState.SUCCEEDED, 0, 1)

    asyncio.run(main())
    store.close()
