"""A job whose start was recorded but whose command could not start (a missing folder) is
failed `spawn_error`; where herd.db refused that failure (a full disk: the start's commit had
fit, the failure's did not), the error ended the engine's pass, the job stayed `running` for
ever with no process (`kill` did nothing, its GPU looked taken) and the jobs after it in that
pass never spawned. Now the failure is kept and recorded by the next pass (engine_unspawned)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from conftest import item, one_gpu_engine, serving
from gpuherd.core.states import FINISHED_STATES, JobState, OutcomeKind
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store
from integration.test_stop_after_commit import until


def test_a_spawn_failure_herd_db_refused_is_recorded_by_the_next_pass(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    update_attempt, refused = store.update_attempt, []

    def full_once(job_id: int, number: int, **changes: Any) -> None:
        outcome = changes.get("outcome")
        if outcome is not None and outcome.kind is OutcomeKind.SPAWN_ERROR and not refused:
            refused.append(job_id)
            raise sqlite3.OperationalError("database or disk is full")
        update_attempt(job_id, number, **changes)

    store.update_attempt = full_once  # type: ignore[method-assign]
    gone = tmp_path / "gone"
    gone.mkdir()

    async def main() -> None:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        async with serving(engine, tmp_path) as service:
            [lost] = service.submit([item(gone, "true", hold=True)])
            [after] = service.submit([item(tmp_path, "true")])  # behind it, on the one GPU
            gone.rmdir()  # its start fails: no such folder
            service.release([lost])  # (first in the queue again: submitted first)
            await until(lambda: refused, "the failure's recording to be refused")

            def ended(job_id: int) -> Any:
                job = store.get_job(job_id)
                return job if job is not None and job.state in FINISHED_STATES else None

            failed = await until(lambda: ended(lost), "the refused failure to be recorded")
            done = await until(lambda: ended(after), "the next job to run")

        assert refused == [lost]
        assert failed.state is JobState.FAILED and failed.outcome is not None
        assert failed.outcome.kind is OutcomeKind.SPAWN_ERROR, failed.outcome
        assert "does not exist" in (failed.outcome.message or ""), failed.outcome
        assert (done.state, done.attempt) == (JobState.SUCCEEDED, 1)
        assert [a.number for a in store.attempts(lost)] == [1]  # failed once, not run again

    asyncio.run(main())
    store.close()
