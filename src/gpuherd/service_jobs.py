"""The verbs on jobs: kill, rm, retry, pause, resume, hold, release (edit: service_edit.py;
priority and move: service_order.py).

A verb on several jobs answers one ActionResult per job, so one bad id never hides the rest.
Jobs given the same answer share a line (`jobs 1-3: held`, core/idspec.summarize): an answer
reads right for one job and for many (no "it", "its").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence, Set
from dataclasses import replace
from functools import partial
from pathlib import Path

from gpuherd import removal_journal
from gpuherd.core.deps import cancelled_once_ended, cancelled_with
from gpuherd.core.lifecycle import (
    Rerun,
    Stopping,
    chosen_grace_refused,
    ended_refused,
    killed_while_stopping,
    put_back_by_hand,
    refused_while_stopping,
    retry_refused,
    retry_refused_removed,
    retry_refused_waiting,
    stop_begun,
)
from gpuherd.core.model import Job, Outcome
from gpuherd.core.states import (
    FINISHED_STATES,
    LIVE_STATES,
    VERB_OF_EVENT,
    WAITING_STATES,
    Event,
    JobState,
    OutcomeKind,
    TransitionError,
    transition,
    what_it_is,
)
from gpuherd.engine import Engine
from gpuherd.engine_begin import drop_begin_time, drop_retry_wait
from gpuherd.engine_endings import cancel_waiters, waiters_cancelled_at_stop
from gpuherd.engine_held_runs import removal_refused
from gpuherd.errors import Conflict, HerdError, InvalidValue
from gpuherd.retry_chain import Newest, older_than, removed_dependency, reruns
from gpuherd.service_bulk import (
    KILLED,
    REMOVED,
    PieceAction,
    in_bulk,
    in_pieces,
    kill_lone,
    remove_lone,
)
from gpuherd.service_bulk import no_job as no_job  # (the API's, from here: job_wait, dashboard_job)
from gpuherd.store import Store
from gpuherd.unknown_retry import RetryBeside, release_beside, retry_beside
from gpuherd.wire import ActionResult

VERBS = ("kill", "rm", "retry", "retry-held", "pause", "resume", "hold", "release")


class JobVerbs:
    """Part of `Service` (which sets these attributes)."""

    engine: Engine
    store: Store
    home: Path

    async def act(
        self, verb: str, ids: Sequence[int], grace: float | None = None
    ) -> list[ActionResult]:
        """One of VERBS on the jobs `ids`, PIECE jobs at a time: between pieces the daemon
        answers other clients and records jobs that end (a hold of 100,000 jobs used to keep
        it deaf for seconds); nothing starts until the last piece is done. `grace`: a kill's
        (`kill --grace`), refused with another verb."""
        if grace is not None:
            if verb != "kill":
                raise InvalidValue(f"grace is a kill's, not a {verb}'s: leave it out")
            if refused := chosen_grace_refused(grace):
                raise InvalidValue(refused)
        actions: dict[str, PieceAction] = {
            "kill": lambda ids: self.kill(ids, grace),
            "rm": self.remove,
            "retry": self.retry,
            "retry-held": lambda ids: self.retry(ids, hold=True),
            "pause": self.pause,
            "resume": self.resume,
            "hold": self.hold,
            "release": self.release,
        }
        return await self.in_pieces(actions[verb], ids)

    async def in_pieces(self, action: PieceAction, ids: Sequence[int]) -> list[ActionResult]:
        """`action` on `ids`, PIECE jobs at a time with a breath between (see `act`)."""
        return await in_pieces(self.engine, action, ids)

    def kill(self, ids: Sequence[int], grace: float | None = None) -> list[ActionResult]:
        """Cancel waiting jobs, stop running ones: SIGKILL after their own grace, or after
        `grace` (chosen: from now, also for a job already being stopped)."""
        # A waiter cancelled with a job named before it was cancelled by this very command.
        named = frozenset(ids)
        one = partial(self._kill_one, named=named, grace=grace)
        each = partial(self._each, action=one, ended_here=lambda job: job.state.value)
        return in_bulk(self.store, ids, kill_lone(self.engine), each)  # (the lone ones: in_bulk)

    def _kill_one(self, job: Job, named: Set[int], grace: float | None = None) -> str:
        if job.state in (JobState.QUEUED, JobState.HELD):
            waiters = self._cancel(job, KILLED)
            return cancelled_with("cancelled", waiters, named, "")
        if job.state in LIVE_STATES:
            # A stop under way is looked for first: told by the time left after this one, a
            # daemon slow in between called a first kill "already stopping (SIGKILL in 9.9s)".
            stopping = self._stopping(job)
            self.engine.resume_for_stop(job)
            self.engine.stop_job(job.id, OutcomeKind.KILLED, chosen=grace)
            if stopping is None:
                said = stop_begun(job.spec.grace if grace is None else grace)
            elif grace is None:  # asking again never puts the SIGKILL off
                said = killed_while_stopping(stopping)
            else:  # a chosen grace counts from now, sooner or later than the SIGKILL was due
                said = killed_while_stopping(replace(stopping, left=grace), was=stopping.left)
            # Its waiters end with it: said now, as a waiting job's kill says them.
            waiters = waiters_cancelled_at_stop(self.engine, job, named)
            return cancelled_once_ended(said, waiters, named)
        # What a kill asks for, the job not running, already holds: an answer, not a refusal
        # (as `hold` of a held job), or `kill $(gpuherd ls -q)` failed on a queue of short
        # jobs, any of them ending between the `ls` and the kill. Said, so a typo shows.
        return f"already ended ({job.state.value})"

    async def remove(
        self, ids: Sequence[int], cancelled: list[int] | None = None
    ) -> list[ActionResult]:
        """Remove the jobs; `cancelled`, given, gets the ids of the jobs cancelled as they
        waited for them (`sweep rm` names those outside the sweep)."""
        leftovers: list[tuple[int, Path]] = []
        cancelled = [] if cancelled is None else cancelled
        named = frozenset(ids)
        jobs = self.store.get_jobs(list(ids))
        layout = self.engine.layout
        found = {i: removal_journal.leftovers(job, layout, self.home) for i, job in jobs.items()}
        # Noted before the commit: a crash amid the deletions left them for good (the
        # daemon's next start deletes those of the jobs gone: removal_journal).
        journal = removal_journal.note(self.home, [one for left in found.values() for one in left])
        each = partial(self._remove_one, named=named, leftovers=leftovers, cancelled=cancelled)
        bulk = remove_lone(self.engine, jobs, found, leftovers)  # (the lone ones: in_bulk)
        results = in_bulk(self.store, ids, bulk, partial(self._each, action=each))
        # Once the removal is committed; a job whose folder is left fails: it says where. On a
        # worker thread: a `clean` of 40,000 jobs' folders held every other request (and the
        # dashboard) for seconds. Their ids are no job's any more: nothing else touches them.
        left = await asyncio.to_thread(
            removal_journal.delete_committed, self.home, journal, leftovers
        )
        return [
            ActionResult(r.id, False, left[r.id], left=True) if r.id in left else r for r in results
        ]

    def _remove_one(
        self, job: Job, named: Set[int], leftovers: list[tuple[int, Path]], cancelled: list[int]
    ) -> str:
        if stopping := self._stopping(job):
            raise Conflict(refused_while_stopping(job.id, "rm", stopping))
        if job.state in LIVE_STATES:
            raise Conflict(
                f"job {job.id} {what_it_is(job.state)}: kill it first (gpuherd kill {job.id})"
            )
        if refused := removal_refused(self.engine, job):
            raise Conflict(refused)
        waiters: list[int] = []
        if job.state in (JobState.QUEUED, JobState.HELD):
            waiters = self._cancel(job, REMOVED)
        self.store.delete_jobs([job.id])
        self.engine.publish({"id": job.id, "event": "rm"})  # no state: it has none now
        leftovers += removal_journal.leftovers(job, self.engine.layout, self.home)
        cancelled += waiters
        return cancelled_with("removed", waiters, named, ", cancelled")

    def retry(self, ids: Sequence[int], hold: bool = False) -> list[ActionResult]:
        """Finished jobs queued again (`hold`: held, to be edited, then released); running
        ones stopped and queued again."""
        newest: Newest = {}  # per sweep, read at its first job here
        beside = retry_beside(self.engine)  # (runs no job watches, in jobs' folders)
        return self._each(ids, lambda job: self._retry_one(job, newest, hold, beside))

    def _retry_one(self, job: Job, newest: Newest, hold: bool, beside: RetryBeside) -> str:
        # Its next attempt would run beside a run no job watches in its folder (the first:
        # one still going on, of a job herd.db does not know), or the folder is another's:
        if refused := beside(job) or older_than(self.store, job, newest):
            raise Conflict(refused)
        if hold and (stopping := self._stopping(job)):
            raise Conflict(refused_while_stopping(job.id, "retry --hold", stopping))
        if job.state in LIVE_STATES and hold:
            raise Conflict(
                f"job {job.id} {what_it_is(job.state)}: retry --hold takes a finished job "
                f"(gpuherd kill {job.id}, then retry --hold it)"
            )
        if job.state in LIVE_STATES:
            self.engine.resume_for_stop(job)
            self.engine.stop_job(job.id, OutcomeKind.KILLED, requeue=True)
            return "stopping, then queued again"
        if job.state not in FINISHED_STATES:
            raise Conflict(retry_refused_waiting(job, self.engine.clock()))
        # A removed dependency first: "retry both" of a job that also waits for a removed
        # one was refused in turn for the job itself.
        if removed := removed_dependency(self.store, job):
            raise Conflict(retry_refused_removed(job.id, *removed))
        if dead := self._dead_dependency(job):
            raise Conflict(retry_refused(job.id, *dead))
        event, to = (Event.RETRY_HELD, JobState.HELD) if hold else (Event.RETRY, JobState.QUEUED)
        detail = "retry by the user" + (", held" if hold else "")
        self.engine.move_state(
            job, event, to, detail=detail, release_at=None, **put_back_by_hand(job)
        )
        return "held (`gpuherd release` to run again)" if hold else "queued again"

    def _dead_dependency(self, job: Job) -> tuple[int, JobState, Rerun] | None:
        """The first job `job` waits for that ended otherwise than it waits for (never met:
        core/deps.never_met), with how it ended and what a retry must run again ahead of
        `job` (retry_chain.reruns: every job so, not that one alone); None if none did."""
        for dep_id, state, _ in self.store.unmet_deps(job.id):
            if JobState(state) in FINISHED_STATES:  # ended, yet unmet
                return dep_id, JobState(state), reruns(self.store, [job.id])[job.id]
        return None

    def _unretried(
        self,
        job: Job,
        dead: tuple[int, JobState, Rerun] | None,
        newest: Newest | None = None,
        alone: bool = False,
    ) -> str | None:
        """Why no `retry` runs the ended `job` again, nor the chain it waits for (`dead`: its
        _dead_dependency), and what does instead; None if a retry can. `newest`: a verb on
        many jobs' (a sweep's), read once. `alone`: why a retry of `job` alone is refused
        (a chain's retry may run it: said as `retry` says it, "retry both (...)")."""
        if refused := older_than(self.store, job, {} if newest is None else newest):
            return refused
        if removed := removed_dependency(self.store, job):
            return retry_refused_removed(job.id, *removed)
        if dead and (alone or dead[2].blocked):
            return retry_refused(job.id, *dead)
        return None

    def pause(self, ids: Sequence[int]) -> list[ActionResult]:
        return self._each(ids, lambda job: self._signal_one(job, Event.PAUSE))

    def resume(self, ids: Sequence[int]) -> list[ActionResult]:
        return self._each(ids, lambda job: self._signal_one(job, Event.RESUME))

    def _signal_one(self, job: Job, event: Event) -> str:
        already = JobState.PAUSED if event is Event.PAUSE else JobState.RUNNING
        if job.state is already:  # `pause $(gpuherd ls -q)` over jobs some of them paused
            return f"already {already.value}"
        self._check(job, event)
        if event is Event.PAUSE and (stopping := self._stopping(job)):
            raise Conflict(refused_while_stopping(job.id, "pause", stopping))
        self.engine.signal_job(job, event)
        return "paused (SIGSTOP; GPUs stay reserved)" if event is Event.PAUSE else "resumed"

    def hold(self, ids: Sequence[int]) -> list[ActionResult]:
        return self._each(ids, self._hold_one)

    def _hold_one(self, job: Job) -> str:
        if job.state is JobState.HELD and job.release_at is not None:
            return drop_begin_time(self.store, job, self.engine.clock())
        return self._simple(job, Event.HOLD, JobState.HELD)

    def release(self, ids: Sequence[int]) -> list[ActionResult]:
        newest: Newest = {}
        beside = release_beside(self.engine)  # (runs no job watches, in jobs' folders)

        def one(job: Job) -> str:
            if job.state is JobState.QUEUED and job.release_at is not None:
                return drop_retry_wait(self.engine, job)  # as a --begin job's release
            if refused := beside(job):  # it would start beside that run
                raise Conflict(refused)
            # Not "(it can: retry, rm)" where a retry of it alone is refused: what works.
            ended = job.state in FINISHED_STATES
            dead = self._dead_dependency(job) if ended else None
            if ended and (why := self._unretried(job, dead, newest, alone=True)):
                raise Conflict(f"job {job.id} already ended ({job.state.value}): {why}")
            return self._simple(job, Event.RELEASE, JobState.QUEUED)

        return self._each(ids, one)

    def _simple(self, job: Job, event: Event, to_state: JobState) -> str:
        if job.state is to_state:  # `hold $(gpuherd ls -q)` on a queue with held jobs
            return f"already {to_state.value}"
        self._check(job, event)
        # By hand, a job is held until told, or released now: its --begin time is forgotten.
        changes = {} if job.release_at is None else {"release_at": None}
        self.engine.move_state(job, event, to_state, **changes)
        return to_state.value

    # ---- helpers --------------------------------------------------------------------------

    def _job(self, job_id: int) -> Job:
        job = self.store.get_job(job_id)
        if job is None:
            raise no_job(job_id)
        return job

    def _each(
        self,
        ids: Sequence[int],
        action: Callable[[Job], str],
        ended_here: Callable[[Job], str] | None = None,
    ) -> list[ActionResult]:
        """`action` on each job, one result per job. An action may change other jobs too (a
        cancel cancels the jobs waiting for it): such a job is read again before its turn,
        and if it ended meanwhile and `ended_here` is given, that says what became of it."""
        if not ids:
            raise InvalidValue("no job ids given: name jobs like 3, 3-7 or 3,5,9")
        self.engine.record_spawns()  # a job started within the last 50 ms has its pid
        jobs = self.store.get_jobs(list(ids))
        results = []
        touched = self.store.touched = set()
        try:
            # One commit for the lot (a commit per job made `hold` of 100,000 jobs take
            # seconds); a job whose action fails has its own writes undone, the others' stand.
            with self.store.transaction():
                for job_id in ids:
                    job = jobs.get(job_id)
                    try:
                        if job is None:
                            raise no_job(job_id)
                        if job_id in touched:
                            job = self._job(job_id)
                            if ended_here and job.state in FINISHED_STATES:
                                results.append(ActionResult(job_id, True, ended_here(job)))
                                continue
                        with self.store.savepoint():
                            results.append(ActionResult(job_id, True, action(job)))
                    except (HerdError, TransitionError) as exc:
                        status = exc.status if isinstance(exc, HerdError) else Conflict.status
                        results.append(ActionResult(job_id, False, str(exc), status=status))
        finally:
            self.store.touched = None
        return results

    def _check(self, job: Job, event: Event) -> None:
        try:
            transition(job.state, event)
        except TransitionError as exc:
            if stopping := self._stopping(job):  # not all a running job can do is done now
                verb = VERB_OF_EVENT.get(event, event.value)
                raise Conflict(refused_while_stopping(job.id, verb, stopping)) from None
            raise Conflict(f"job {job.id}: {exc}") from None

    def _refuse_ended(self, job: Job, to: str) -> None:
        """Conflict for a verb of waiting jobs (`to`: what it does) of a job that ended, naming
        the way that works (core/lifecycle.ended_refused); where `retry` is refused too (a job
        it waited for ended badly, or was removed since), what `retry` says, and to submit
        its command again (not `retry --hold`: a dead end)."""
        if job.state not in FINISHED_STATES:
            return
        dead = self._dead_dependency(job)
        why = self._unretried(job, dead)  # (retry --hold is refused as well)
        if why is None and dead:
            why = f"{retry_refused(job.id, *dead)}; to run it without waiting for job {dead[0]}"
            why += ", submit its command again"
        if why is None:
            raise Conflict(ended_refused(job.id, job.state, to))
        raise Conflict(f"job {job.id} already ended ({job.state.value}): {why}")

    def _refuse_unless_waiting(self, job: Job, verb: str, why: str) -> None:
        """Conflict for `verb` of a job that is not queued or held, saying `why`; one being
        stopped is told what works then (core/lifecycle.refused_while_stopping)."""
        if stopping := self._stopping(job):
            raise Conflict(refused_while_stopping(job.id, verb, stopping))
        if job.state not in WAITING_STATES:
            raise Conflict(f"job {job.id} {what_it_is(job.state)}: {why}")

    def _stopping(self, job: Job) -> Stopping | None:
        """The stop `job` is in the grace of (SIGTERM sent, its SIGKILL due); None if none."""
        live = self.engine.live.get(job.id) if job.state in LIVE_STATES else None
        if live is None or live.stop_reason is None or live.kill_at is None:
            return None
        left = max(0.0, live.kill_at - asyncio.get_running_loop().time())
        return Stopping(live.stop_reason, live.requeue, left)

    def _cancel(self, job: Job, message: str) -> list[int]:
        """Cancel a waiting job, and the jobs waiting for it that it leaves unmet (their ids)."""
        now = self.engine.clock()
        with self.store.transaction():
            self.engine.move_state(
                job,
                Event.CANCEL,
                JobState.CANCELLED,
                detail=message,
                outcome=Outcome(OutcomeKind.CANCELLED, message=message),
                ended_at=now,
            )
            return cancel_waiters(self.engine, job.id, JobState.CANCELLED, now)
