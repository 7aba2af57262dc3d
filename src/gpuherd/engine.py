"""The engine: one event-driven loop that ties the pure core to the store, probe and executor.

Every wake-up runs the same short tick: handle finished attempts, then start what fits.
Wake-ups come from submissions, process exits (pidfd), deadlines and GPU changes; the only
timer is GPU telemetry.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path

from gpuherd import jobfiles
from gpuherd.broadcast import Broadcast
from gpuherd.core.lifecycle import Ended, after_attempt, classify, dependency_failed
from gpuherd.core.model import Attempt, Device, Job, Outcome, Policy, Reservation
from gpuherd.core.placement import plan
from gpuherd.core.recovery import Finish, Observed, Reattach, Unstart, reconcile
from gpuherd.core.states import LIVE_STATES, Event, JobState, OutcomeKind, transition
from gpuherd.devices import DeviceTable
from gpuherd.executors.base import Executor, ExitStatus, LaunchRequest, SpawnError
from gpuherd.executors.local import read_pid_file
from gpuherd.store import Store

log = logging.getLogger("gpuherd.engine")

SCAN_LIMIT = 2000
"""How deep one placement pass looks into the queue for a job that fits (backfill depth)."""


@dataclass
class Live:
    """Runtime handle of a running attempt; never persisted (the store holds the facts)."""

    job_id: int
    attempt: int
    pid: int | None
    gpus: tuple[int, ...]
    mem: int
    attempt_dir: Path
    stop_reason: OutcomeKind | None = None
    requeue: bool = False
    deadline: asyncio.TimerHandle | None = field(default=None, repr=False)


class Engine:
    def __init__(
        self,
        store: Store,
        devices: DeviceTable,
        executor: Executor,
        layout: jobfiles.Layout,
        policy: Policy | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.devices = devices
        self.executor = executor
        self.layout = layout
        self.policy = policy or Policy()
        self.clock = clock
        self.host = socket.gethostname()
        self.changes = Broadcast()
        self.live: dict[int, Live] = {}
        self.queue_paused = store.get_setting("queue_paused") == "1"
        self._exits: list[tuple[int, int, ExitStatus]] = []
        self._paperwork: list[Callable[[], None]] = []
        self._tick_scheduled = False
        self._stopping = False
        self._idle = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    # ---- the loop -------------------------------------------------------------------------

    def start(self) -> None:
        """Recover what the database says is live, then begin dispatching. Call on the loop."""
        self._loop = asyncio.get_running_loop()
        self.devices.start(self._loop, on_change=self.wake)
        with self.store.transaction():
            self._recover(self.clock())
        self.wake()

    def wake(self) -> None:
        """Ask for a tick soon; many wake-ups before it runs coalesce into one."""
        if self._tick_scheduled or self._loop is None:
            return
        self._tick_scheduled = True
        self._loop.call_soon(self._tick)

    def _tick(self) -> None:
        self._tick_scheduled = False
        try:
            now = self.clock()
            self._handle_exits(now)
            self._start_what_fits(now)
            self._do_paperwork()
        except Exception:  # a bug in one tick must not take the queue down
            log.exception("engine tick failed")
        if not self.live:
            self._idle.set()

    async def drain(self, kill: bool = False, grace: float | None = None) -> None:
        """Start nothing new; with `kill`, stop every running job; return once none runs."""
        self.stop_dispatch()
        if kill:
            self.kill_all(grace)
        while self.live:
            self._idle.clear()
            await self._idle.wait()

    def stop_dispatch(self) -> None:
        """Start nothing new from now on (for good: a stopping daemon, an interrupted run)."""
        self._stopping = True

    def close(self) -> None:
        """Stop watching; jobs still running are left for the next daemon to re-attach."""
        self._stopping = True
        for live in self.live.values():
            if live.deadline:
                live.deadline.cancel()
        self.devices.stop()
        self.executor.close()
        self.changes.close()

    # ---- step 1: finished attempts --------------------------------------------------------

    def _on_exit(self, job_id: int, attempt: int, status: ExitStatus) -> None:
        self._exits.append((job_id, attempt, status))
        self.wake()

    def _handle_exits(self, now: float) -> None:
        exits, self._exits = self._exits, []
        if not exits:
            return
        with self.store.transaction():
            for job_id, attempt, status in exits:
                live = self.live.get(job_id)
                if live is None or live.attempt != attempt:
                    continue
                del self.live[job_id]
                if live.deadline:
                    live.deadline.cancel()
                ended = Ended(status.exit_code, status.signal, live.stop_reason, live.requeue)
                self._finish(job_id, ended, status.ended_at, now)

    def _finish(self, job_id: int, ended: Ended, ended_at: float | None, now: float) -> None:
        job = self.store.get_job(job_id)
        if job is None or job.state not in LIVE_STATES:
            return
        attempt_dir = self.layout.attempt_dir(job_id, job.attempt)
        tail = "" if ended.exit_code in (0, None) else jobfiles.tail(attempt_dir / "stderr.log")
        outcome = classify(ended, tail)
        nxt = after_attempt(job, ended, outcome)
        ended_at = ended_at or now
        self.store.update_attempt(job_id, job.attempt, ended_at=ended_at, outcome=outcome)
        self._move(
            job, nxt.event, nxt.state, detail=outcome.describe(), ended_at=ended_at, outcome=outcome
        )
        self._paperwork.append(lambda: jobfiles.record_end(self.layout, job, outcome, ended_at))
        if nxt.cancel_waiters:
            self.cancel_waiters(job_id, nxt.state, now)

    def cancel_waiters(self, job_id: int, state: JobState, now: float) -> None:
        pending = [(job_id, state)]
        while pending:
            dep_id, dep_state = pending.pop()
            for waiter_id in self.store.waiters_of(dep_id):
                waiter = self.store.get_job(waiter_id)
                if waiter is None:
                    continue
                outcome = dependency_failed(dep_id, dep_state)
                self._move(
                    waiter,
                    Event.CANCEL,
                    JobState.CANCELLED,
                    detail=outcome.message,
                    outcome=outcome,
                    ended_at=now,
                )
                pending.append((waiter_id, JobState.CANCELLED))

    def fail_orphaned_waiters(self, now: float) -> None:
        """Cancel queued jobs whose dependency already ended badly (e.g. submitted after it)."""
        for job in self.store.list_jobs(states=(JobState.QUEUED, JobState.HELD)):
            for dep_id, dep_state in self.store.unmet_deps(job.id):
                if JobState(dep_state) not in LIVE_STATES | {JobState.QUEUED, JobState.HELD}:
                    outcome = dependency_failed(dep_id, JobState(dep_state))
                    self._move(
                        job,
                        Event.CANCEL,
                        JobState.CANCELLED,
                        detail=outcome.message,
                        outcome=outcome,
                        ended_at=now,
                    )
                    self.cancel_waiters(job.id, JobState.CANCELLED, now)
                    break

    # ---- step 2: start what fits ----------------------------------------------------------

    def _start_what_fits(self, now: float) -> None:
        if self.queue_paused or self._stopping:
            return
        devices = self.device_listing()
        reservations = self.reservations()
        gpu_room = _has_free_slot(devices, reservations)
        # With every GPU slot taken only CPU-only jobs can start: read just those.
        pending = self.store.queued_ready(cpu_only=not gpu_room)
        try:
            assignments = plan(
                islice(pending, SCAN_LIMIT),
                devices,
                reservations,
                self.policy,
                now,
                cpu_jobs_waiting=self.store.has_queued_cpu_jobs(),
            )
        finally:
            pending.close()
        if not assignments:
            return
        by_index = {d.index: d for d in devices}
        jobs = self.store.get_jobs([a.job_id for a in assignments])
        started: list[tuple[Job, Attempt]] = []
        # Record the intent first: a daemon killed between this commit and the spawn finds
        # no pid file on restart and queues the job again instead of running it twice.
        with self.store.transaction():
            for a in assignments:
                job = jobs[a.job_id]
                attempt = Attempt(
                    job_id=job.id,
                    number=job.attempt + 1,
                    gpus=a.gpus,
                    gpu_uuids=tuple(by_index[i].uuid or "" for i in a.gpus),
                    dir=str(self.layout.attempt_dir(job.id, job.attempt + 1)),
                    host=self.host,
                    started_at=now,
                )
                self.store.add_attempt(attempt)
                self._move(
                    job,
                    Event.START,
                    JobState.RUNNING,
                    attempt=attempt.number,
                    started_at=now,
                    ended_at=None,
                    assigned=a.gpus,
                    pid=None,
                    outcome=None,
                )
                started.append((job, attempt))
        with self.store.transaction():
            for job, attempt in started:
                self._spawn(job, attempt, now)

    def _do_paperwork(self) -> None:
        """Write the human-readable job files, after the GPUs got their next jobs.

        They are copies of what the store already holds, so they stay off the path from one
        job's exit to the next one's start (file creation is slow on some file systems).
        """
        work, self._paperwork = self._paperwork, []
        for write in work:
            write()

    def _spawn(self, job: Job, attempt: Attempt, now: float) -> None:
        folder = Path(attempt.dir)
        live = Live(job.id, attempt.number, None, attempt.gpus, job.spec.mem or 0, folder)
        try:
            jobfiles.prepare(folder)
            pid = self.executor.launch(
                LaunchRequest(
                    job_id=job.id,
                    attempt=attempt.number,
                    command=job.spec.command,
                    cwd=job.spec.cwd,
                    env=jobfiles.job_env(self.layout, job, attempt),
                    attempt_dir=str(folder),
                )
            )
        except (SpawnError, OSError) as exc:
            message = str(exc) if isinstance(exc, SpawnError) else f"{folder}: {exc}"
            outcome = Outcome(OutcomeKind.SPAWN_ERROR, message=message)
            self.store.update_attempt(job.id, attempt.number, ended_at=now, outcome=outcome)
            running = replace(job, state=JobState.RUNNING)
            self._move(
                running, Event.FAIL, JobState.FAILED, detail=message, outcome=outcome, ended_at=now
            )
            self.cancel_waiters(job.id, JobState.FAILED, now)
            return
        live.pid = pid
        self.live[job.id] = live
        self.store.update_job(job.id, now, "spawn", pid=pid, detail=f"pid {pid}")
        self.store.update_attempt(job.id, attempt.number, pid=pid)
        self._paperwork.append(lambda: jobfiles.record_start(self.layout, job, attempt, pid))
        self._watch(live, job.spec.timeout, job.spec.grace, job.started_at or now, now)

    def _watch(
        self, live: Live, timeout: float | None, grace: float, started: float, now: float
    ) -> None:
        assert live.pid is not None and self._loop is not None
        job_id, number = live.job_id, live.attempt
        self.executor.watch(
            live.pid, str(live.attempt_dir), lambda status: self._on_exit(job_id, number, status)
        )
        if timeout is not None:
            remaining = max(0.0, started + timeout - now)
            live.deadline = self._loop.call_later(
                remaining, self._on_deadline, job_id, number, grace
            )

    def _on_deadline(self, job_id: int, attempt: int, grace: float) -> None:
        live = self.live.get(job_id)
        if live and live.attempt == attempt and live.stop_reason is None and live.pid:
            live.stop_reason = OutcomeKind.TIMEOUT
            self.executor.terminate(live.pid, grace)

    # ---- actions on live jobs (called by the service) ---------------------------------------

    def stop_job(
        self, job_id: int, reason: OutcomeKind, requeue: bool = False, grace: float | None = None
    ) -> bool:
        """SIGTERM the job's group, SIGKILL after its grace period (or `grace`, if shorter)."""
        live = self.live.get(job_id)
        job = self.store.get_job(job_id)
        if live is None or live.pid is None or job is None:
            return False
        if live.stop_reason is None:
            live.stop_reason, live.requeue = reason, requeue
        wait = job.spec.grace if grace is None else min(grace, job.spec.grace)
        self.executor.terminate(live.pid, wait)
        return True

    def kill_all(self, grace: float | None = None) -> None:
        for job_id in list(self.live):
            self.stop_job(job_id, OutcomeKind.KILLED, grace=grace)

    def signal_job(self, job: Job, event: Event) -> None:
        """Pause (SIGSTOP) or resume (SIGCONT) a live job's whole process group."""
        live = self.live.get(job.id)
        if live is None or live.pid is None:
            return
        self.executor.signal(live.pid, signal.SIGSTOP if event is Event.PAUSE else signal.SIGCONT)
        to_state = JobState.PAUSED if event is Event.PAUSE else JobState.RUNNING
        self._move(job, event, to_state)

    def move_state(
        self,
        job: Job,
        event: Event,
        to_state: JobState,
        detail: str | None = None,
        **changes: object,
    ) -> None:
        self._move(job, event, to_state, detail, **changes)
        self.wake()

    def set_queue_paused(self, paused: bool) -> None:
        self.store.set_setting("queue_paused", "1" if paused else "0")
        self.queue_paused = paused
        self.changes.publish({"queue_paused": paused})
        self.wake()

    # ---- recovery -------------------------------------------------------------------------

    def _recover(self, now: float) -> None:
        live_jobs = self.store.list_jobs(states=tuple(LIVE_STATES))
        observed: dict[int, Observed] = {}
        for job in live_jobs:
            folder = self.layout.attempt_dir(job.id, job.attempt)
            pid = job.pid or read_pid_file(str(folder))
            status = self.executor.recorded_exit(str(folder))
            observed[job.id] = Observed(
                pid=pid,
                running=pid is not None and self.executor.is_running(pid, job.id, job.attempt),
                exit_code=status.exit_code if status else None,
                signal=status.signal if status else None,
                recorded=status is not None,
                ended_at=status.ended_at if status else now,
            )
        jobs = {job.id: job for job in live_jobs}
        for action in reconcile(live_jobs, observed):
            job = jobs[action.job_id]
            if isinstance(action, Reattach):
                self._reattach(job, action.pid, now)
            elif isinstance(action, Finish):
                self._finish(job.id, Ended(action.exit_code, action.signal), action.ended_at, now)
            elif isinstance(action, Unstart):
                self.store.delete_attempt(job.id, job.attempt)
                self._move(
                    job,
                    Event.RETRY,
                    JobState.QUEUED,
                    detail="daemon stopped before spawn",
                    attempt=job.attempt - 1,
                    started_at=None,
                    assigned=(),
                    pid=None,
                )
        self.fail_orphaned_waiters(now)

    def _reattach(self, job: Job, pid: int, now: float) -> None:
        folder = self.layout.attempt_dir(job.id, job.attempt)
        live = Live(job.id, job.attempt, pid, job.gpus, job.spec.mem or 0, folder)
        self.live[job.id] = live
        if job.pid is None:
            self.store.update_job(job.id, now, "spawn", pid=pid, detail=f"pid {pid} (recovered)")
            self.store.update_attempt(job.id, job.attempt, pid=pid)
        log.info("re-attached to job %d (pid %d)", job.id, pid)
        self._watch(live, job.spec.timeout, job.spec.grace, job.started_at or now, now)

    # ---- helpers --------------------------------------------------------------------------

    def _move(
        self,
        job: Job,
        event: Event,
        to_state: JobState,
        detail: str | None = None,
        **changes: object,
    ) -> None:
        transition(job.state, event)  # raises TransitionError for a change the table forbids
        self.store.update_job(job.id, self.clock(), event.value, to_state, detail, **changes)
        change: dict[str, object] = {
            "id": job.id,
            "state": to_state.value,
            "event": event.value,
            "detail": detail,
        }
        if "assigned" in changes:
            change["gpus"] = list(changes["assigned"])  # type: ignore[call-overload]
        self.changes.publish(change)

    def our_pgids(self) -> set[int]:
        return {lv.pid for lv in self.live.values() if lv.pid is not None}

    def device_listing(self) -> list[Device]:
        return self.devices.listing(self.our_pgids())

    def reservations(self) -> list[Reservation]:
        return [Reservation(lv.job_id, lv.gpus, lv.mem) for lv in self.live.values()]

    @property
    def stopping(self) -> bool:
        return self._stopping


def _has_free_slot(devices: list[Device], reservations: list[Reservation]) -> bool:
    used: dict[int, int] = {}
    for r in reservations:
        for i in r.gpus:
            used[i] = used.get(i, 0) + 1
    return any(d.slots > used.get(d.index, 0) for d in devices)
