"""A stop's stored time (from which a restarted daemon reckons its SIGKILL: stop time + grace)
is its event's, however long the engine was held up as it made the stop. It was reckoned
from the loop's clock read after the stop had set its SIGKILL's time: a pause between (the
collector, a busy core) made it that much earlier, and a restarted daemon's SIGKILL too
(seen in CI: 0.31 s before the stop's event time plus its grace)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from test_stopping import _ended, _until

from conftest import item, one_gpu_engine, serving
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store

PAUSE = 0.5


def test_a_pause_while_a_stop_is_made_leaves_its_stored_time_at_its_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "herd.db")

    async def stop_with_a_pause() -> tuple[int, float]:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        async with serving(engine, tmp_path) as service:
            (job_id,) = service.submit([item(tmp_path, "sleep 60", grace=5)])
            await _until(lambda: job_id in engine.live, "the job to start")
            stop = engine.attempts.stop

            def held_up(*args: Any, **options: Any) -> Any:
                live = stop(*args, **options)
                time.sleep(PAUSE)  # (as a collection of a large heap would)
                return live

            monkeypatch.setattr(engine.attempts, "stop", held_up)
            service.kill([job_id])
            stopping = store.get_job(job_id)
            assert stopping is not None and stopping.stop is not None
            await _until(_ended(store, job_id), "the job to end")
        return job_id, stopping.stop.at

    job_id, stored = asyncio.run(stop_with_a_pause())
    (event,) = [e for e in store.events(job_id) if e.event == "stop"]
    store.close()
    assert 0 <= stored - event.at < PAUSE / 5, (stored, event.at)
