"""Pausing, resuming and stopping running jobs, one or all, and waiting for them: a part of
the engine (a mixin of Engine, which sets the attributes below). Every change is stored before
its signal goes, so a daemon that crashes or stops meanwhile leaves it to the next one."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from functools import partial

from gpuherd.attempts import Attempts, Live
from gpuherd.core.lifecycle import stop_said
from gpuherd.core.model import Job
from gpuherd.core.states import Event, JobState, OutcomeKind
from gpuherd.executors.base import Executor
from gpuherd.stop_signals import STOP_HOLD, hold_for_test
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
    move: Callable[..., None]

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
        `grace` caps the job's own grace; `chosen` replaces it (Attempts.stop).

        The signals go once the stop is committed (a `kill` of many jobs commits once, at its
        end): a crash before left a job SIGTERMed with no record of its stop, which ended
        `failed (signal 15)` or ran again. The stop in memory is undone with a rollback (a
        full disk, the job's savepoint), or the job looked stopping, never signalled."""
        # Both clocks read at one instant, before the stop sets its SIGKILL's time: read
        # after it, a pause between (the collector, a busy core) made the stored stop time
        # earlier than its event by that much, and a restarted daemon's SIGKILL that early.
        now, loop_now = self.clock(), asyncio.get_running_loop().time()
        with self.store.transaction():
            before = self.live.get(job_id)
            if before is not None:
                self.store.on_rollback(partial(_put_back, before, _stop_of(before)))
            live = self.attempts.stop(
                job_id, reason, requeue, grace, chosen=chosen, send=self.store.after_commit
            )
            if live is None or live.kill_at is None:
                return False
            reason = live.stop_reason or reason
            # Stored so that `at + grace` is when the SIGKILL is due, however often it was
            # asked and whatever grace it chose (`at` is in the future when it chose longer).
            kill_in = live.kill_at - loop_now
            self.store.update_job(
                job_id,
                now,
                "stop",
                detail=stop_said(reason, live.requeue),
                stop_reason=reason.value,
                stop_at=now + kill_in - live.grace,
                stop_requeue=int(live.requeue),
            )
            hold_for_test(STOP_HOLD)
            return True

    def signal_job(self, job: Job, event: Event) -> None:
        """Pause (SIGSTOP) or resume (SIGCONT) a live job's whole process group, once that is
        committed: sent at once, a commit that failed (a full disk, herd.db locked) left the
        job stopped or running where herd.db said otherwise. The attempt's state here (its
        --timeout's clock) is undone with a rollback."""
        pause = event is Event.PAUSE
        with self.store.transaction():
            if self.attempts.pause(job.id, pause, send=self.store.after_commit):
                self.store.on_rollback(partial(_paused_as, self.attempts, job.id, not pause))
                self.move(job, event, JobState.PAUSED if pause else JobState.RUNNING)

    def resume_for_stop(self, job: Job) -> None:
        """A paused job about to be stopped runs its grace: recorded as resumed (else it
        stayed `paused`, which a restarted daemon SIGSTOPs again), with no SIGCONT of its
        own: the stop's SIGTERM goes with one (Executor.terminate), once committed. One sent
        at once, a stop whose commit failed (a full disk) or a crash before it left the job
        running, unasked, where herd.db said paused; the resume is undone with a rollback."""
        if job.state is JobState.PAUSED and self.attempts.pause(job.id, False, signalled=False):
            self.store.on_rollback(partial(_paused_as, self.attempts, job.id, True))
            self.move(job, Event.RESUME, JobState.RUNNING)

    def kill_all(self, grace: float | None = None, chosen: float | None = None) -> None:
        """Stop every running job, each stop stored: a crash in its grace must not undo it.
        `grace` caps each job's own grace (a Ctrl-C of `gpuherd run`); `chosen` replaces it
        (`daemon stop --kill --grace`)."""
        self.record_spawns()  # a job started within the last 50 ms: its pid before its stop
        with self.store.transaction():
            # (the rows, not Live.paused: a resume whose commit failed left the job running,
            # herd.db saying paused; read in one query: a stop of thousands)
            with self.store.passing_over_damaged():  # (such a job is stopped all the same)
                jobs = self.store.get_jobs(list(self.attempts.live))
            for job_id in list(self.attempts.live):
                if (job := jobs.get(job_id)) is not None:
                    self.resume_for_stop(job)  # (a paused one: as `kill` does)
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


Stop = tuple[OutcomeKind | None, bool, float | None]
"""What a running attempt's stop is in memory: its reason, requeue and SIGKILL time."""


def _stop_of(live: Live) -> Stop:
    return live.stop_reason, live.requeue, live.kill_at


def _put_back(live: Live, stop: Stop) -> None:
    """The stop `live` was under before one that was rolled back (its signals never went)."""
    live.stop_reason, live.requeue, live.kill_at = stop


def _paused_as(attempts: Attempts, job_id: int, paused: bool) -> None:
    """A pause or resume rolled back: the attempt as it was (its signal never went)."""
    attempts.pause(job_id, paused, signalled=False)
