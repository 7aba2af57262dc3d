"""A stop of every job (`daemon stop --kill`, a Ctrl-C of `gpuherd run`) just after a start
records the started job's pid first, as a verb on the job does: its history had the stop
before the spawn, and the job showed running without a pid until the next tick."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from conftest import item, one_gpu_engine, serving
from gpuherd.core.states import JobState
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store


def test_a_kill_of_all_just_after_a_start_records_the_pid_before_its_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pids wait for the next tick (PID_RECORD_DELAY, 50 ms): an hour here, so the kill
    # surely comes in that window.
    monkeypatch.setattr("gpuherd.engine_spawns.PID_RECORD_DELAY", 3600.0)
    store = Store(tmp_path / "herd.db")

    async def main() -> int:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        async with serving(engine, tmp_path) as service:
            (job_id,) = service.submit([item(tmp_path, "sleep 60")])
            for _ in range(500):
                if job_id in engine.live:
                    break
                await asyncio.sleep(0.02)
            engine.kill_all(grace=5.0)
            stopping = store.get_job(job_id)
            assert stopping is not None and stopping.pid, "being stopped, with no pid"
            for _ in range(500):
                if job_id not in engine.live:
                    break
                await asyncio.sleep(0.02)
        return job_id

    job_id = asyncio.run(main())
    job = store.get_job(job_id)
    assert job is not None and job.state is JobState.KILLED
    events = [e.event for e in store.events(job_id)]
    store.close()
    assert events == ["submit", "start", "spawn", "stop", "kill"]
