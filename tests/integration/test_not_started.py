"""An executor that cannot start a job there and then (NotStarted: a cluster node that left
between placement and start) sends it back to the queue; the job keeps its retries and runs.

The engine is built as the daemon builds it, with the local executor behind a door that
refuses the first launch (what the Ray executor does when the chosen node is gone).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from conftest import one_gpu_engine, settled
from gpuherd.core.states import JobState
from gpuherd.errors import HerdError
from gpuherd.executors.base import LaunchRequest, NotStarted
from gpuherd.executors.local import LocalExecutor
from gpuherd.service import Service
from gpuherd.store import Store
from gpuherd.sweeps import Sweeps
from gpuherd.wire import SubmitItem
from gpuherd.wire_requests import SweepRequest


class NodeGoneOnce(LocalExecutor):
    def __init__(self) -> None:
        super().__init__()
        self.refused: list[tuple[int, int]] = []

    def launch(self, request: LaunchRequest) -> int:
        if not self.refused:
            self.refused.append((request.job_id, request.attempt))
            raise NotStarted("node n1 left the cluster before this attempt started")
        return super().launch(request)


def test_a_job_not_started_goes_back_to_the_queue_with_its_retries(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    executor = NodeGoneOnce()

    async def main() -> None:
        engine = one_gpu_engine(tmp_path, store, executor)
        service = Service(engine, tmp_path)
        engine.start()
        try:
            item = SubmitItem(command="echo ran", cwd=str(tmp_path), env=dict(os.environ))
            (job_id,) = service.submit([item])
            await settled(store, job_id)
        finally:
            engine.close()

        job = store.get_job(job_id)
        assert job is not None and job.state is JobState.SUCCEEDED, job
        assert executor.refused == [(job_id, 1)]
        assert job.attempt == 1  # the refused start is not an attempt: no retry was used
        assert [a.number for a in store.attempts(job_id)] == [1]
        events = [(e.event, e.to_state) for e in store.events(job_id)]
        assert events[:3] == [("submit", "queued"), ("start", "running"), ("retry", "queued")]
        assert ("succeed", "succeeded") in events
        retry = next(e for e in store.events(job_id) if e.event == "retry")
        assert retry.detail is not None and "node n1 left" in retry.detail
        assert (tmp_path / "jobs" / str(job_id) / "attempt-1" / "stdout.log").read_text() == "ran\n"

    asyncio.run(main())
    store.close()


class BrokenOnce(LocalExecutor):
    """A launch that fails in a way no executor means to (a bug): once."""

    def __init__(self) -> None:
        super().__init__()
        self.broke = False

    def launch(self, request: LaunchRequest) -> int:
        if not self.broke:
            self.broke = True
            raise KeyError("a bug in the executor")
        return super().launch(request)


def test_a_launch_that_fails_unexpectedly_fails_its_job_and_the_queue_goes_on(
    tmp_path: Path,
) -> None:
    # Before, the exception escaped the engine's tick: the job stayed "running" with no
    # process, for ever (kill could not end it), and its GPU stayed taken.
    store = Store(tmp_path / "herd.db")

    async def main() -> None:
        engine = one_gpu_engine(tmp_path, store, BrokenOnce())
        service = Service(engine, tmp_path)
        engine.start()
        try:
            items = [
                SubmitItem(command=f"echo {n}", cwd=str(tmp_path), env=dict(os.environ))
                for n in ("first", "second")
            ]
            first, second = service.submit(items)
            await settled(store, second)  # one GPU: the second runs once the first let it go
        finally:
            engine.close()

        broken, fine = store.get_job(first), store.get_job(second)
        assert broken is not None and broken.state is JobState.FAILED, broken
        assert broken.outcome is not None and broken.outcome.kind.value == "spawn_error"
        message = broken.outcome.message
        assert message == "gpuherd could not start it: KeyError('a bug in the executor')"
        assert fine is not None and fine.state is JobState.SUCCEEDED, fine

    asyncio.run(main())
    store.close()


def test_a_sweep_rolled_back_tells_watchers_of_no_job(tmp_path: Path) -> None:
    # The results folder is a file: no params.json can be written, and the whole sweep is
    # refused. Its jobs were inserted first; watchers heard of them before the fix.
    store = Store(tmp_path / "herd.db")
    results = tmp_path / "results"
    spec = {"name": "s", "command": "echo {x}", "grids": [{"x": [1, 2, 3]}]}
    spec["results_dir"] = str(results)

    async def main() -> list[object]:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        sweeps = Sweeps(Service(engine, tmp_path))
        engine.start()
        heard = engine.changes.subscribe(backlog=0)
        try:
            results.write_text("not a folder")
            with pytest.raises(HerdError, match="cannot write"):
                sweeps.submit(SweepRequest(spec=spec, cwd=str(tmp_path)))
            await asyncio.sleep(0.1)  # a tick would start a job that was not rolled back
            return [heard.get_nowait() for _ in range(heard.qsize())]
        finally:
            engine.close()

    assert asyncio.run(main()) == []
    assert store.count_jobs() == 0
    store.close()
