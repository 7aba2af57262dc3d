"""`kill` and `rm` of many jobs end the ones no dependency ties to another together, a statement
per table for each piece of them (service_bulk.py), not a savepoint, a row, an event and a
look for waiters for each: `kill` of a sweep of 40,000 queued points took 2.6 s of the
daemon's CPU, `rm` of them 4.1 s (benchmarks/sweep_scale.py). What each job ends as, what its
watchers hear, in order, and what the verb answers for it are what a job at a time gave; a
job tied to others by a dependency, a running one and a finished one go as before. The engine
is built as the daemon builds it; the statements are counted by a wrapper around the store's
connection."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from conftest import item, one_gpu_engine, serving
from gpuherd.core.states import JobState
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store
from integration.test_stop_after_commit import until

LONE = 600
"""More than a piece (service_bulk.PIECE): two pieces, each in bulk."""


class Counted:
    """The store's connection, its statements counted (an executemany as one)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.statements = 0

    def execute(self, *args: Any) -> sqlite3.Cursor:
        self.statements += 1
        return self.db.execute(*args)

    def executemany(self, *args: Any) -> sqlite3.Cursor:
        self.statements += 1
        return self.db.executemany(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)


def test_a_kill_then_an_rm_of_many_lone_jobs_go_in_bulk_and_say_as_before(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "herd.db")

    async def main() -> None:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        heard: list[dict[str, Any]] = []
        engine.changes.listen(heard.append)
        async with serving(engine, tmp_path) as service:
            (running,) = service.submit([item(tmp_path, "sleep 600", gpus=0)])
            await until(lambda: engine.live.get(running), "the job to run")
            engine.set_queue_paused(True)  # (the others wait: queued, or held)
            lone = service.submit([item(tmp_path, "true", hold=i % 2 == 0) for i in range(LONE)])
            (first,) = service.submit([item(tmp_path, "true")])
            (waiter,) = service.submit([item(tmp_path, "true", after=[first])])
            (done,) = service.submit([item(tmp_path, "true", gpus=0)])
            service.kill([done])
            ids = [running, *lone[:300], first, waiter, *lone[300:], done]

            counted = store._db = Counted(store._db)  # type: ignore[assignment]
            said = {r.id: (r.ok, r.message) for r in await service.act("kill", ids)}
            # A job at a time took ~8 statements each (~4,800): a few per piece now.
            assert counted.statements < 100, counted.statements
            assert said[running][1].startswith("stopping (SIGTERM"), said[running]
            assert said[first] == (True, "cancelled")  # (its waiter named too: said apart)
            assert said[waiter] == (True, "cancelled")
            assert said[done] == (True, "already ended (cancelled)")
            assert all(said[job_id] == (True, "cancelled") for job_id in lone)
            for job_id in lone:
                job = store.get_job(job_id)
                assert job is not None and job.state is JobState.CANCELLED, job
                assert job.outcome is not None and job.outcome.message == "cancelled by the user"
                assert job.ended_at is not None and job.started_at is None, job
            was = {job_id: "held" if i % 2 == 0 else "queued" for i, job_id in enumerate(lone)}
            events = store.events(limit=100_000)
            cancels = [e for e in events if e.job_id in was and e.event == "cancel"]
            assert [(e.job_id, e.from_state, e.to_state, e.detail) for e in cancels] == [
                (job_id, was[job_id], "cancelled", "cancelled by the user") for job_id in lone
            ]
            told = [c for c in heard if c.get("id") in was and c.get("state") == "cancelled"]
            assert [c.get("id") for c in told] == lone
            assert all(
                set(c) == {"id", "state", "event", "detail", "ended_at"}
                and (c.get("event"), c["detail"]) == ("cancel", "cancelled by the user")
                for c in told
            ), told[0]
            await until(lambda: not engine.live.get(running), "the killed job to end")

            # And an rm of them: removed in bulk (the chain and the others one at a time).
            more = service.submit([item(tmp_path, "true", hold=True) for _ in range(LONE)])
            heard.clear()
            counted.statements = 0
            gone = [*ids, *more]
            said = {r.id: (r.ok, r.message) for r in await service.act("rm", gone)}
            assert counted.statements < 150, counted.statements  # (a job at a time: ~9,000)
            assert set(said.values()) == {(True, "removed")}, said
            assert all(store.get_job(job_id) is None for job_id in gone)
            # Each waiting one was cancelled first, then removed, as watchers hear it.
            for job_id in more:
                changes = [c for c in heard if c.get("id") == job_id]
                assert [(c.get("state"), c.get("event")) for c in changes] == [
                    ("cancelled", "cancel"),
                    (None, "rm"),
                ], changes
                assert changes[0]["detail"] == "removed by the user"
            assert [c.get("id") for c in heard if c.get("event") == "rm"][-LONE:] == more

    asyncio.run(main())
