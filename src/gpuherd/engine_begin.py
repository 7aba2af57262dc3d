"""Jobs submitted with `--begin`: held until their time, then released by the engine; and
jobs retried with `--retry-delay`: queued, but not placed before their time.

One timer for the earliest time; it re-reads the store whenever it fires, so jobs released,
held or removed by hand meanwhile need no bookkeeping here.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from typing import TYPE_CHECKING

from gpuherd.core.states import Event, JobState

if TYPE_CHECKING:
    from gpuherd.core.model import Job
    from gpuherd.engine import Engine
    from gpuherd.store import Store

LONGEST_SLEEP = 60.0
"""Seconds the timer sleeps at most before it looks again: a wall clock that jumps (a
suspended machine, a clock set by hand) delays a release by a minute at most."""
RETRY_AFTER_ERROR = 1.0
"""Seconds before trying again when the database failed."""
RELEASED = "its --begin time came"

log = logging.getLogger("gpuherd.engine")


class BeginTimer:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._handle: asyncio.TimerHandle | None = None

    def arm(self) -> None:
        """Fire at the earliest `--begin` time of a held job (call on the loop, after jobs
        with one were added, and at start: times that passed while no daemon ran are due)."""
        self.stop()
        at = self._engine.store.next_release()
        if at is not None:
            delay = min(max(0.0, at - self._engine.clock()), LONGEST_SLEEP)
            self._handle = asyncio.get_running_loop().call_later(delay, self._fire)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        self._handle = None
        try:
            self._release_due()
            self.arm()
        except sqlite3.Error as exc:  # a full disk, say: the jobs stay held, try again
            log.warning("releasing jobs whose --begin time came failed, retrying: %s", exc)
            self._handle = asyncio.get_running_loop().call_later(RETRY_AFTER_ERROR, self._fire)

    def _release_due(self) -> None:
        engine = self._engine
        now = engine.clock()
        due = engine.store.due_releases(now)
        with engine.store.transaction():
            for job in due:
                engine.move(job, Event.RELEASE, JobState.QUEUED, RELEASED, release_at=None)
            retries = engine.store.end_retry_waits(now)
            for job_id in retries:  # no event of their own: the retry's says when it starts
                engine.publish({"id": job_id, "state": JobState.QUEUED.value, "event": "ready"})
        if due or retries:
            engine.wake()


def drop_retry_wait(engine: Engine, job: Job) -> str:
    """`release` of a queued job waiting out its --retry-delay: it may start now, as the
    release of a job held until its --begin time does (it said `already queued` and left the
    wait; only `hold` then `release` ended it). Its wait counts from now (reserve-after)."""
    now = engine.clock()
    engine.store.update_job(
        job.id,
        now,
        Event.RELEASE.value,
        detail="its --retry-delay wait dropped",
        from_state=job.state,
        release_at=None,
        queued_at=now,
    )
    engine.publish({"id": job.id, "state": JobState.QUEUED.value, "event": "release"})
    engine.wake()
    return "queued, no longer waits to retry (--retry-delay)"


def drop_begin_time(store: Store, job: Job, now: float) -> str:
    """`hold` of a job held until its --begin time: held until released instead."""
    store.update_job(
        job.id,
        now,
        Event.HOLD.value,
        detail="its --begin time dropped",
        from_state=job.state,
        release_at=None,
    )
    return "held until released (--begin time dropped)"
