"""The engine: one event-driven loop that ties the pure core to the store, probe and executor.

Every wake-up runs the same short tick: handle finished attempts, then start what fits.
Wake-ups come from submissions, process exits (pidfd), deadlines and GPU changes; the
timers are GPU telemetry and the earliest `--begin` time (engine_begin.py)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import socket
import sqlite3
import time
from collections.abc import Callable, Iterator
from functools import partial

from gpuherd import engine_endings, seen_alive
from gpuherd.attempts import Attempts
from gpuherd.broadcast import Broadcast
from gpuherd.config import load_policy
from gpuherd.core.caps import pass_offering, sweep_room
from gpuherd.core.model import Assignment, Attempt, Device, Job, Policy, Reservation
from gpuherd.core.placement import Hold, cpu_slots_left, place
from gpuherd.core.states import WAITING_STATES, Event, JobState, OutcomeKind, transition
from gpuherd.devices import DeviceTable
from gpuherd.engine_begin import BeginTimer
from gpuherd.engine_damaged import SetAside
from gpuherd.engine_endings import finish_exits, flag_stalled
from gpuherd.engine_health import TickHealth
from gpuherd.engine_held_runs import record_held_ends
from gpuherd.engine_recovery import recover
from gpuherd.engine_scan import SCAN_LIMIT as SCAN_LIMIT  # where tests look for it
from gpuherd.engine_scan import Scan
from gpuherd.engine_spawns import Paperwork, Spawns
from gpuherd.engine_stops import JobStops
from gpuherd.engine_unspawned import (
    RETRY_RECORDING,
    Unrecorded,
    fail_unspawned,
    requeue_unstarted,
)
from gpuherd.executors.base import Executor, ExitStatus, NotStarted
from gpuherd.layout import Layout
from gpuherd.log_cap_watch import LogCapWatch
from gpuherd.saved_settings import QUEUE_PAUSED, parse_paused
from gpuherd.store import Store

log = logging.getLogger("gpuherd.engine")

Exit = tuple[int, int, ExitStatus]
"""(job id, attempt number, how its process ended)"""
TELEMETRY_MAX_AGE = 1.0
"""Seconds a GPU reading may be old when placement uses it (else it is read again)."""


class Engine(JobStops, Spawns):
    def __init__(
        self,
        store: Store,
        devices: DeviceTable,
        executor: Executor,
        layout: Layout,
        policy: Policy | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.devices = devices
        self.executor = executor
        self.layout = layout
        self.policy_defaults = Policy(cpu_jobs=devices.cores())
        """What a setting never changed (or set to `auto`) is, where these jobs run."""
        self.policy = policy or load_policy(store, self.policy_defaults)
        self.clock = clock
        self.host = socket.gethostname()
        self.changes = Broadcast()
        self.attempts = Attempts(
            executor,
            layout,
            self._on_exit,
            partial(flag_stalled, self),
            lambda job_id: self.stop_job(job_id, OutcomeKind.TIMEOUT),
        )
        self.log_caps = LogCapWatch(
            self.attempts.live, lambda job_id: self.stop_job(job_id, OutcomeKind.LOG_TOO_LARGE)
        )
        self.sweep_caps: dict[str, int] = {
            row.name: int(cap)
            for row in store.list_sweeps()
            if (cap := row.spec.get("submission", {}).get("max_parallel"))
        }
        """Sweeps whose running jobs are capped (`--max-parallel`), by name."""
        self.queue_paused = parse_paused(store.get_setting(QUEUE_PAUSED))  # (mended at start)
        self.begins = BeginTimer(self)
        self.scan = Scan(store)
        self.health = TickHealth(self.wake_later)
        self.set_aside = SetAside(self)  # (the jobs whose rows cannot be read)
        self.seen = seen_alive.Notes(store, self.attempts.live, clock)  # (of running jobs)
        self._hold: Hold | None = None  # what the last pass kept for a starving job
        self._exits: list[Exit] = []
        self._refused: sqlite3.Error | None = None
        """Why herd.db refused the last tick's changes (a full disk; None: it took them)."""
        self._unrecorded_pids: list[tuple[int, int, int, float]] = []  # job, attempt, pid, at
        self.unrecorded: list[Unrecorded] = []  # (unstarted jobs' ends herd.db refused)
        self._paperwork: list[tuple[int, Paperwork]] = []  # (job id, write)
        self._tick_scheduled = False
        self._stopping = False
        self._dispatch_pauses = 0
        self._idle = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    # ---- the loop -------------------------------------------------------------------------

    def start(self) -> None:
        """Recover what the database says is live, then begin dispatching. Call on the loop."""
        self._loop = asyncio.get_running_loop()
        self.health.watch(self._loop)  # (a callback of the engine that raises)
        self.devices.start(self._loop, on_change=self.wake, jobs=self.attempts.running_jobs)
        with self.store.transaction():
            recover(self, self.clock())
        self.begins.arm()
        self.log_caps.start()
        self.wake()

    def wake(self) -> None:
        """Ask for a tick soon; many wake-ups before it runs coalesce into one."""
        if self._tick_scheduled or self._loop is None:
            return
        self._tick_scheduled = True
        # In a context of its own: woken by a request, it inherited that request's (its
        # asker's time zone, api/askers_zone.py), and so would the tasks it starts.
        self._loop.call_soon(self._tick, context=contextvars.Context())

    def wake_later(self, seconds: float) -> None:
        """Ask for a tick in `seconds` (to try again after something failed)."""
        if self._loop is not None:
            self._loop.call_later(seconds, self.wake)

    def _tick(self) -> None:
        self._tick_scheduled = False
        try:
            now = self.clock()
            started = self._record_exits_and_starts(now)
            self._spawn_all(started, now)
            self._do_paperwork()
            self.seen.arm()  # (a note of the running jobs when due; no timer while none runs)
            self.set_aside.arm()
        except Exception as exc:  # a bug in one tick must not take the queue down
            self.health.failed(exc)
        else:  # herd.db refusing the tick's changes (a full disk) is a failing pass too
            if self._refused is None:
                self.health.worked()
            else:
                self.health.failed(self._refused, logged=True)  # (its warning: below)
        if not self.live:
            self._idle.set()

    def _record_exits_and_starts(
        self, now: float, closing: bool = False
    ) -> list[tuple[Job, Attempt]]:
        """Record the ended attempts and new starts in one transaction; return those to spawn
        (`closing`: the stopping daemon's last recording, which no tick retries)."""
        exits, self._exits = self._exits, []
        pids, self._unrecorded_pids = self._unrecorded_pids, []
        kept, self.unrecorded = self.unrecorded, []
        self._refused = None
        held_ends = self.attempts.held_ends  # runs a restored herd.db did not know, ended
        peaks = self.attempts.peaks_to_record(self.devices.usage)
        if not (exits or pids or held_ends or peaks or kept) and (
            self.queue_paused or self._stopping
        ):
            return []  # nothing to record: no transaction (a paused queue is woken often)
        taken = [(e, live) for e in exits if (live := self.attempts.ended(e[0], e[1]))]
        paperwork = len(self._paperwork)
        try:
            with self.store.transaction():
                self.store.record_pids(pids)
                for record in kept:
                    record()
                finish_exits(self, [(live, status) for (_, _, status), live in taken], now)
                record_held_ends(self, now)
                started = self._record_starts(now)
                peaks = self.attempts.peaks_to_record(self.devices.usage)  # (its pass's too)
                self.store.record_peaks(peaks)
                self.store.after_commit(partial(self.attempts.peaks_recorded, peaks))
                self.seen.note(now)  # (when due: in a commit made anyway)
                return started
        except Exception as exc:
            # Nothing was recorded: keep the exits and their jobs' GPUs (held runs' ends stay
            # kept), and try again rather than forget these ends (kept for herd.db's errors
            # alone, a bug's or a damaged row's were dropped: jobs `running` for ever).
            del self._paperwork[paperwork:]
            for (job_id, _, _), live in taken:
                self.attempts.live[job_id] = live
            self._exits = exits + self._exits
            self._unrecorded_pids = pids + self._unrecorded_pids
            self.unrecorded = kept + self.unrecorded
            if not isinstance(exc, sqlite3.Error):
                raise  # a failing pass: logged, said and tried again (engine_health.py)
            engine_endings.note_full_disks(self, [live for _, live in taken if not live.requeue])
            self._refused = exc  # (said by `daemon status` and queued jobs' reasons: health)
            then = "the next start reads them from the folders" if closing else "retrying"
            log.warning("recording the queue's changes failed, %s: %s", then, exc)  # (full disk)
            if not closing:
                self.wake_later(RETRY_RECORDING)
            return []

    @contextlib.contextmanager
    def dispatch_paused(self) -> Iterator[None]:
        """Start nothing meanwhile (ends are still recorded): a verb on many jobs that lets
        other clients in between its pieces still lands as one change of the queue."""
        self._dispatch_pauses += 1
        try:
            yield
        finally:
            self._dispatch_pauses -= 1
            self.wake()

    def close(self) -> None:
        """Stop watching; jobs still running are left for the next daemon to re-attach. What
        no tick recorded yet (herd.db refused it, or it came after the last) is recorded now:
        pids, ends, held runs' ends (the exit status seen, which the run's folder may lack)."""
        self._stopping = True
        try:
            self._record_exits_and_starts(self.clock(), closing=True)  # starts nothing
            self._do_paperwork()
        except Exception as exc:  # the bug that failed the ticks: the rest still closes
            self.health.failed(exc, retry=False)
        self.seen.stop()
        if lives := [(live.job_id, live.attempt) for live in self.live.values()]:
            # (a lost one's last sign of life; a herd.db that refuses it loses only that hint)
            with contextlib.suppress(sqlite3.Error):
                seen_alive.leave(self.store, lives, self.clock())
        self.log_caps.stop()
        self.attempts.close()
        self.devices.stop()
        self.begins.stop()
        self.changes.close()
        self.health.unwatch()

    # ---- step 1: finished attempts --------------------------------------------------------

    def _on_exit(self, job_id: int, attempt: int, status: ExitStatus) -> None:
        self._exits.append((job_id, attempt, status))
        self.wake()

    # ---- step 2: start what fits ----------------------------------------------------------

    def _record_starts(self, now: float) -> list[tuple[Job, Attempt]]:
        """Plan what fits and record each start (in the caller's transaction): a daemon
        killed between this commit and the spawn finds no pid on restart and queues the
        job again instead of running it twice."""
        if self._starts_nothing():
            return []
        self.devices.refresh_if_older(TELEMETRY_MAX_AGE)
        devices = self.device_listing()
        assignments, seen = self._plan_starts(devices, now)
        by_index = {d.index: d for d in devices}
        started: list[tuple[Job, Attempt]] = []
        for a in assignments:
            job = seen[a.job_id]
            uuids = tuple(by_index[i].uuid or "" for i in a.gpus)
            attempt, skipped = self.attempts.next_attempt(job, a.gpus, uuids, self.host, now)
            self.store.add_attempt(attempt)
            self.move(
                job,
                Event.START,
                JobState.RUNNING,
                skipped,
                attempt=attempt.number,
                started_at=now,
                ended_at=None,
                assigned=a.gpus,
                pid=None,
                outcome=None,
            )
            started.append((job, attempt))
        return started

    def _plan_starts(
        self, devices: list[Device], now: float
    ) -> tuple[list[Assignment], dict[int, Job]]:
        """One placement pass (records nothing): what starts where, and every job it read."""
        reservations, policy = self.reservations(), self.policy
        running = self.attempts.sweeps_running() if self.sweep_caps else {}
        offer = pass_offering(self.sweep_caps, running, devices, reservations, policy, now)
        room = sweep_room(self.sweep_caps, running)  # (kept by placement too: caps.py)
        cpu_jobs = cpu_slots_left(reservations, policy) != 0  # (else none is worth reading)
        with self.scan.reading(offer, cpu_jobs) as (jobs, behind, seen):
            free = self.devices.host_memory(TELEMETRY_MAX_AGE, self.attempts.live.values()).room
            placed = place(
                jobs,
                devices,
                reservations,
                policy,
                now,
                host_free=free,
                behind=behind,
                sweep_room=room,
                cpu_full=self.scan.cpu_full,
                held=self.scan.held,
            )
        self._hold = placed.hold
        return placed.starts, seen

    def _starts_nothing(self) -> bool:
        """Whether no placement pass runs now (nothing may start)."""
        return bool(
            self.queue_paused or self._stopping or self._dispatch_pauses or self.devices.outage()
        )

    @property
    def hold(self) -> Hold | None:
        """The GPUs the last pass kept for a starving job; None while no pass runs (a paused
        queue): that job may have been removed or killed since (`gpus` named it still)."""
        return None if self._starts_nothing() else self._hold

    def set_sweep_cap(self, sweep: str, cap: int | None) -> None:
        if cap is None:
            self.sweep_caps.pop(sweep, None)
        else:
            self.sweep_caps[sweep] = cap
        self.wake()

    def _spawn(self, job: Job, attempt: Attempt, now: float) -> int | None:
        """Launch an attempt whose start is recorded; its pid, or None if it could not start."""
        try:
            pid = self.attempts.launch(job, attempt, now, self._written(job, attempt))
        except NotStarted as exc:
            requeue_unstarted(self, job, attempt, str(exc))
            return None
        except Exception as exc:  # of any kind: the job must not stay "running" for ever
            fail_unspawned(self, job, attempt, exc, now)
            return None
        return pid

    # ---- actions on live jobs (called by the service; pauses and stops: engine_stops.py) ---

    def move_state(
        self,
        job: Job,
        event: Event,
        to_state: JobState,
        detail: str | None = None,
        **changes: object,
    ) -> None:
        self.move(job, event, to_state, detail, **changes)
        self.wake()

    def set_queue_paused(self, paused: bool) -> None:
        self.store.set_setting(QUEUE_PAUSED, "1" if paused else "0")
        self.queue_paused = paused
        self.changes.publish({"queue_paused": paused})
        self.wake()

    def move(
        self,
        job: Job,
        event: Event,
        to_state: JobState,
        detail: str | None = None,
        **changes: object,
    ) -> None:
        transition(job.state, event)  # raises TransitionError for a change the table forbids
        if to_state in WAITING_STATES:  # no GPUs (its attempts keep theirs; a hold for a run
            changes.setdefault("assigned", ())  # sets the run's); wire.job_view: older rows
        if event is Event.CANCEL:  # the attempt it waited for never started: an earlier
            changes.setdefault("started_at", None)  # one's start to now is no run time
        self.store.update_job(
            job.id, self.clock(), event.value, to_state, detail, from_state=job.state, **changes
        )
        change: dict[str, object] = {"id": job.id, "state": to_state.value}
        change.update(event=event.value, detail=detail)
        if "assigned" in changes:
            change["gpus"] = list(changes["assigned"])  # type: ignore[call-overload]
        for moment in ("started_at", "ended_at"):
            if changes.get(moment) is not None:
                change[moment] = changes[moment]
        if event is Event.START and "attempt" in changes:  # its folder: `run --live` reads it
            change["attempt"] = changes["attempt"]
        self.publish(change)

    def publish(self, *changes: dict[str, object]) -> None:
        """Tell watchers of changes to jobs once they are committed (never if rolled back),
        in order (a sweep's 10,000 submissions: one callback, not 10,000)."""
        self.store.after_commit(partial(self.changes.publish, *changes))

    def device_listing(self) -> list[Device]:
        return self.devices.listing()

    def reservations(self) -> list[Reservation]:
        return self.attempts.reservations(self.devices.usage) + self.set_aside.reservations()

    @property
    def stopping(self) -> bool:
        return self._stopping
