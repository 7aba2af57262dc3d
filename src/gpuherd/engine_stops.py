"""Stopping running jobs, one or all, and waiting for them: a part of the engine (a mixin of
Engine, which sets the attributes below). Every stop is stored before it is carried out, so a
daemon that crashes or stops meanwhile leaves it to the next one."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from gpuherd.attempts import Attempts, Live
from gpuherd.core.lifecycle import stop_said
from gpuherd.core.states import OutcomeKind
from gpuherd.executors.base import Executor
from gpuherd.store import Store

REACH_CHECK = 1.0
"""Seconds between looks, in a stop with --kill, at whether its jobs are in reach."""


class JobStops:
    """Part of `Engine` (which sets these attributes)."""

    attempts: Attempts
    clock: Callable[[], float]
    executor: Executor
    store: Store
    _idle: asyncio.Event
    _stopping: bool
    record_spawns: Callable[[], None]

    @property
    def live(self) -> dict[int, Live]:
        return self.attempts.live

    def stop_dispatch(self) -> None:
        """Start nothing new from now on (for good: a stopping daemon, an interrupted run)."""
        self._stopping = True

    def stop_job(
        self,
        job_id: int,
        reason: OutcomeKind,
        requeue: bool = False,
        grace: float | None = None,
        chosen: float | None = None,
    ) -> bool:
        """Stop a running attempt; the request is stored, so a restarted daemon carries it out.
        `grace` caps the job's own grace; `chosen` replaces it (Attempts.stop)."""
        live = self.attempts.stop(job_id, reason, requeue, grace, chosen=chosen)
        if live is None or live.kill_at is None:
            return False
        now, reason = self.clock(), live.stop_reason or reason
        # Stored so that `at + grace` is when the SIGKILL is due, however often it was asked
        # and whatever grace it chose (`at` is in the future when it chose a longer one).
        kill_in = live.kill_at - asyncio.get_running_loop().time()
        self.store.update_job(
            job_id,
            now,
            "stop",
            detail=stop_said(reason, live.requeue),
            stop_reason=reason.value,
            stop_at=now + kill_in - live.grace,
            stop_requeue=int(live.requeue),
        )
        return True

    def kill_all(self, grace: float | None = None, chosen: float | None = None) -> None:
        """Stop every running job, each stop stored: a crash in its grace must not undo it.
        `grace` caps each job's own grace (a Ctrl-C of `gpuherd run`); `chosen` replaces it
        (`daemon stop --kill --grace`)."""
        self.record_spawns()  # a job started within the last 50 ms: its pid before its stop
        with self.store.transaction():
            for job_id in list(self.attempts.live):
                self.stop_job(job_id, OutcomeKind.KILLED, grace=grace, chosen=chosen)

    async def drain(self, kill: bool = False, chosen: float | None = None) -> dict[int, str]:
        """Start nothing new; with `kill`, stop every running job (with the grace `chosen`,
        else each its own); return once none runs, or, with `kill`, once the executor can
        reach none left: those, with why (their stops are stored: the next daemon carries
        them out)."""
        self.stop_dispatch()
        if kill:
            self.kill_all(chosen=chosen)
        reach = self.executor.out_of_reach
        while self.live:
            away = {i: why for i, lv in self.live.items() if kill and (why := reach(lv.pid))}
            if len(away) == len(self.live):
                return away
            self._idle.clear()
            with contextlib.suppress(TimeoutError):  # nothing tells when one goes out of reach
                await asyncio.wait_for(self._idle.wait(), REACH_CHECK if kill else None)
        return {}
