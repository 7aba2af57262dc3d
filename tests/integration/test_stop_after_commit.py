"""A stop's signals go once the stop is committed, and a stop rolled back is undone in memory:
it never leaves a job that looks stopping and was never signalled (a second `kill` then sent
nothing either). The engine is built as the daemon builds it, on the local executor, which
notes each SIGTERM it is asked for and whether herd.db's transaction was still open."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import item, one_gpu_engine, serving
from gpuherd.core.states import FINISHED_STATES, JobState, OutcomeKind
from gpuherd.engine import Engine
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store


class NotedTerminations(LocalExecutor):
    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store
        self.sent: list[tuple[int, bool]] = []
        """(pid, whether herd.db had a transaction open) for each terminate."""

    def terminate(
        self, pid: int, grace: float, begun: bool = False, sent: Callable[[], object] | None = None
    ) -> None:
        self.sent.append((pid, self.store._db.in_transaction))
        super().terminate(pid, grace, begun, sent)


async def until(check: Callable[[], Any], what: str, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)
    return value


async def running(engine: Engine, job_id: int) -> int:
    """The job's pid, once it runs."""
    live = await until(lambda: engine.live.get(job_id), f"job {job_id} to run")
    return int(live.pid)


def ended(store: Store, job_id: int) -> bool:
    job = store.get_job(job_id)
    return job is not None and job.state in FINISHED_STATES


def test_a_stop_rolled_back_sends_nothing_and_a_kill_after_it_does(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    executor = NotedTerminations(store)

    async def main() -> None:
        engine = one_gpu_engine(tmp_path, store, executor)
        async with serving(engine, tmp_path) as service:
            (job_id,) = service.submit([item(tmp_path, "sleep 60", grace=5.0)])
            pid = await running(engine, job_id)
            with store.transaction(), pytest.raises(RuntimeError), store.savepoint():
                assert engine.stop_job(job_id, OutcomeKind.KILLED)
                assert executor.sent == []  # not before its commit
                raise RuntimeError("this job's action failed after its stop")
            live = engine.live[job_id]
            assert (live.stop_reason, live.kill_at, executor.sent) == (None, None, [])
            job = store.get_job(job_id)
            assert job is not None and job.stop is None
            # Was: "already stopping", and no SIGTERM, as the stop looked under way.
            [said] = service.kill([job_id])
            assert said.ok and "stopping (SIGTERM" in said.message, said
            assert executor.sent == [(pid, False)]  # once committed
            await until(lambda: ended(store, job_id), f"job {job_id} to end")

        job = store.get_job(job_id)
        assert job is not None and job.state is JobState.KILLED, job

    asyncio.run(main())
    store.close()


def refused_once_then_ended(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    event: str,
    job_item: Any,
    outcome: OutcomeKind,
) -> tuple[Store, int]:
    """Run `job_item` on an engine whose first write of `event` herd.db refuses (a full disk):
    the stop it leads to is tried again, and the job ends `failed` by `outcome`, its SIGTERM
    sent once, after its commit. The store (the caller closes it) and the job's id."""
    store = Store(tmp_path / "herd.db")
    executor = NotedTerminations(store)
    update_job, refused = store.update_job, []

    def full_once(job_id: int, now: float, said: str, *args: Any, **kw: Any) -> None:
        if said == event and not refused:
            refused.append(job_id)
            raise sqlite3.OperationalError("database or disk is full")
        update_job(job_id, now, said, *args, **kw)

    monkeypatch.setattr(store, "update_job", full_once)

    async def main() -> int:
        engine = one_gpu_engine(tmp_path, store, executor)
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda loop, context: None)  # (the refusal, raised)
        async with serving(engine, tmp_path) as service:
            (job_id,) = service.submit([job_item])
            pid = await running(engine, job_id)
            await until(lambda: ended(store, job_id), f"job {job_id} to be stopped ({outcome})")
            assert refused == [job_id] and executor.sent == [(pid, False)]
        return job_id

    job_id = asyncio.run(main())
    job = store.get_job(job_id)
    assert job is not None and job.outcome is not None, job
    assert (job.state, job.outcome.kind) == (JobState.FAILED, outcome), job
    return store, job_id


def test_a_timeout_whose_stop_herd_db_refused_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job_item = item(tmp_path, "sleep 60", timeout=0.3)
    store, _ = refused_once_then_ended(tmp_path, monkeypatch, "stop", job_item, OutcomeKind.TIMEOUT)
    store.close()


@pytest.mark.parametrize("refused_event", ["stalled", "stop"])
def test_a_stall_whose_flag_or_stop_herd_db_refused_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused_event: str
) -> None:
    """`--no-output-timeout ... --on-no-output kill`: a refused write (a full disk) ended the
    job's liveness watch, so the job ran on, silent, for ever. The flag and its stop are now
    stored together, or neither, and the next look flags the job again."""
    silent = item(tmp_path, "sleep 60", no_output_timeout=0.3, kill_on_no_output=True)
    store, job_id = refused_once_then_ended(
        tmp_path, monkeypatch, refused_event, silent, OutcomeKind.STALLED
    )
    events = [row.event for row in store.events(job_id)]
    assert events.count("stalled") == 1 and events.count("stop") == 1, events
    store.close()
