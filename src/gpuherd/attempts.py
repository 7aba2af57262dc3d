"""The running attempts: their runtime handles, process watching, deadlines and stopping
(their --no-output-timeout: silence_watch.py; their --max-log-size: log_cap_watch.py).

Nothing here is persisted: the store holds the facts, this what only a live process has (its
pid watch, deadline timer, why gpuherd stops it, measured memory)."""

from __future__ import annotations

import asyncio
import signal
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from gpuherd import jobfiles, stop_signals, unknown_ended
from gpuherd.attempt_numbers import next_number
from gpuherd.core.log_caps import LogBases
from gpuherd.core.log_names import FOLDER_LOGS
from gpuherd.core.model import Attempt, Job, Reservation
from gpuherd.core.output_files import attempt_files_for, launch_files, stream_templates
from gpuherd.core.recovery import Ran
from gpuherd.core.states import JobState, OutcomeKind
from gpuherd.executors.base import (
    NO_USER_FILES,
    Executor,
    ExitStatus,
    LaunchRequest,
    NotStarted,
    SpawnError,
)
from gpuherd.gpu_processes import RunKey, RunningJob
from gpuherd.held_run import HeldRun
from gpuherd.layout import Layout
from gpuherd.log_cap_watch import NamedLogs, start_bases, watch_logs
from gpuherd.silence_watch import OnStall, watch_output

OnExit = Callable[[int, int, ExitStatus], None]
OnTimeout = Callable[[int], object]
"""Called with a job id whose attempt has run its --timeout: the engine stops it."""
Send = Callable[[Callable[[], None]], None]
"""Carries out a stop's signals: at once, or once the stop is stored (Store.after_commit)."""
START_RECORD_DELAY = 1.0
"""Seconds an attempt runs before its job.json is written. One that ends sooner gets a single
file, written at its end, instead of two: creating files was most of gpuherd's own work for a
short job (and a job.json replaced frees an inode, which slows the next creations)."""


@dataclass
class Live:
    """Runtime handle of a running attempt."""

    job_id: int
    attempt: int
    pid: int
    gpus: tuple[int, ...]
    mem: int | None
    attempt_dir: Path
    job_dir: Path
    started_info: Mapping[str, object]
    """What job.json says of this attempt's start (jobfiles.start_info)."""
    exclusive: bool = False
    grace: float = 10.0
    sweep: str | None = None
    project: str | None = None
    ram: int | None = None  # its job's --ram, held while it runs (host_room.py)
    stalled: bool = False
    """Printed nothing for its --no-output-timeout (cleared by its next output)."""
    peak: int = 0
    """The most GPU memory the job was seen to use on one GPU (telemetry)."""
    full_disk: Path | None = None
    """Its logs' folder, found full as herd.db refused its end (engine_endings.note_full_disks):
    its end says so once recorded, when that disk may have room again."""
    recorded_peak: int = 0
    """The peak herd.db holds for the attempt (peaks_to_record): a restarted daemon takes it
    up, so a job holds its peak for its whole life, not its --mem alone after a restart."""
    stop_reason: OutcomeKind | None = None
    requeue: bool = False
    kill_at: float | None = None
    """When (event-loop time) the stop's SIGKILL comes: a later stop request never delays it,
    unless it chooses a grace (`kill --grace`)."""
    deadline: asyncio.TimerHandle | None = field(default=None, repr=False)
    paused: bool = False
    time_left: float | None = None
    """Seconds of its --timeout a paused attempt has left: time does not run while paused."""
    max_log_size: int | None = None
    """Its --max-log-size (log_cap_watch.py looks at `logs` only where it has one)."""
    logs: NamedLogs = ()
    log_bases: LogBases = field(default_factory=dict)
    """What its logs held as it began (a retry adding to its job's --output file)."""


class Attempts:
    def __init__(
        self,
        executor: Executor,
        layout: Layout,
        on_exit: OnExit,
        on_stall: OnStall,
        on_timeout: OnTimeout,
    ) -> None:
        self.executor = executor
        self.layout = layout
        self.live: dict[int, Live] = {}
        self.held_runs: dict[RunKey, HeldRun] = {}
        """By (job id, attempt): the runs their jobs were held for, while they run (their GPUs
        reserved). By run, not by job: a job released meanwhile runs its next attempt beside
        its run (in `live`), and a job held again for a later run keeps the earlier one."""
        self.held_ends: dict[RunKey, Ran] = {}
        """By (job id, attempt): such runs that have ended, as they ended, until their ends
        are recorded (the engine's tick records them with the queue's other changes, and
        tries again as it does when the database fails)."""
        self._on_exit = on_exit
        self._on_stall = on_stall
        self._on_timeout = on_timeout
        self._closed = False
        """Closed: the jobs run on for the next daemon, watched by none here."""

    def next_attempt(
        self, job: Job, gpus: tuple[int, ...], uuids: tuple[str, ...], host: str, now: float
    ) -> tuple[Attempt, str | None]:
        """The job's next attempt, starting now, numbered past the attempt folders its runs
        left (attempt_numbers.py), and why it skips numbers (None: it does not)."""
        number, folder, skipped = next_number(self.layout, self.executor, job)
        files = attempt_files_for(job.spec, job.id, number, self.executor.user_files)
        mem = job.spec.mem
        attempt = Attempt(job.id, number, gpus, uuids, folder, host, now, mem=mem, files=files)
        return attempt, skipped

    def launch(self, job: Job, attempt: Attempt, now: float, written: Collection[str]) -> int:
        """Spawn the attempt and watch it (`written`: the files the job's earlier attempts
        wrote, which it adds to); raises SpawnError or OSError when it cannot start."""
        # A run herd.db does not know may have ended there: kept aside. Not by `gpuherd run`,
        # whose rerun into an --output-dir clears its job folders (jobfiles.prepare), another
        # job's id in each (--skip-succeeded numbers them anew); its logs, in the folder
        # itself, would stay behind to be appended to.
        if job.spec.folder and not self.layout.one_shot:
            unknown_ended.set_aside(job.spec.folder, job.id)
        jobfiles.prepare(attempt.dir)
        if attempt.number > 1:  # its marker is the attempt before's end: not this one's
            jobfiles.clear_job_marker(self.layout.job_dir(job))
        if not self.executor.user_files and any(stream_templates(job.spec)):
            # Named before a switch to Ray, whose nodes cannot write them (refused at submit).
            raise SpawnError(NO_USER_FILES)
        request = LaunchRequest(
            job_id=job.id,
            attempt=attempt.number,
            command=job.spec.command,
            cwd=job.spec.cwd,
            env=jobfiles.job_env(self.layout, job, attempt),
            attempt_dir=attempt.dir,
            outputs=launch_files(attempt.files or FOLDER_LOGS, written, job.spec),
        )
        bases = start_bases(self.layout, job, attempt, written)  # (before the spawn)
        try:
            pid = self.executor.launch(request)
        except NotStarted:  # queued again: the attempt before is the latest again
            if job.attempt:
                before = self.layout.attempt_dir(job, job.attempt)
                jobfiles.restore_job_marker(before, self.layout.job_dir(job))
            raise
        self.adopt(job, replace(attempt, pid=pid), now, log_bases=bases)
        return pid

    def adopt(
        self,
        job: Job,
        attempt: Attempt,
        now: float,
        paused_for: float = 0.0,
        log_bases: LogBases | None = None,
    ) -> None:
        """Watch a running attempt (just launched, or found alive after a restart, having
        been paused for `paused_for` seconds so far: its --timeout does not count those;
        `log_bases`: where its logs began, None: as its start record kept them)."""
        assert attempt.pid is not None
        pid, number = attempt.pid, attempt.number
        folder = self.layout.attempt_dir(job, number)
        peak = attempt.peak_mem or 0  # (of a run re-attached: as the last daemon recorded it)
        live = Live(
            job_id=job.id,
            attempt=number,
            pid=pid,
            gpus=attempt.gpus,
            mem=job.spec.mem,
            ram=job.spec.ram,
            attempt_dir=folder,
            job_dir=self.layout.job_dir(job),
            started_info=jobfiles.start_info(job, attempt),
            exclusive=job.spec.exclusive,
            grace=job.spec.grace,
            sweep=job.spec.sweep,
            project=job.spec.project,
            peak=peak,
            recorded_peak=peak,
        )
        watch_logs(live, self.layout, job, attempt.files, log_bases)
        self.live[job.id] = live
        key = self.layout.attempt_key(job.id, number)
        self.executor.watch(
            pid, str(folder), key, lambda status: self._on_exit(job.id, number, status)
        )
        loop = asyncio.get_running_loop()
        loop.call_later(START_RECORD_DELAY, self._record_start, live)
        live.paused = job.state is JobState.PAUSED
        if job.spec.timeout is not None:  # from this attempt's start (not the job's last)
            remaining = max(0.0, attempt.started_at + paused_for + job.spec.timeout - now)
            if live.paused:
                live.time_left = remaining
            else:
                live.deadline = loop.call_later(remaining, self._on_deadline, job.id, number)
        if job.spec.no_output_timeout is not None:
            limit, watched = job.spec.no_output_timeout, partial(self._watched, live)
            watch_output(live, limit, watched, self._on_stall)

    def reserve_for(self, run: HeldRun, on_end: Callable[[ExitStatus], None]) -> None:
        """Keep `run`'s GPUs reserved (if known), and call `on_end` once its process has ended
        (watched as a running attempt is: what it leaves in its process group ends with it)."""
        key = self.layout.attempt_key(run.job_id, run.attempt)
        self.held_runs[run.key] = run
        self.executor.watch(run.pid, run.folder, key, on_end)

    def held_runs_of(self, job_id: int) -> list[HeldRun]:
        """The runs the job was held for that run now, earliest first (mostly none)."""
        return [run for key, run in sorted(self.held_runs.items()) if key[0] == job_id]

    def _record_start(self, live: Live) -> None:
        if self.live.get(live.job_id) is live:  # else it ended: its end writes the file
            jobfiles.record_start(live.attempt_dir, live.job_dir, live.started_info)

    def _watched(self, live: Live) -> bool:
        """Whether the attempt runs, watched here (the daemon's loop runs a moment on after
        its stop: the attempt is the next daemon's then)."""
        return self.live.get(live.job_id) is live and not self._closed

    def _on_deadline(self, job_id: int, number: int) -> None:
        live = self.live.get(job_id)
        if live and live.attempt == number and live.stop_reason is None:
            try:
                self._on_timeout(job_id)  # through the engine, which stores the stop
            finally:  # not stored (a full disk), so undone (Engine.stop_job): again in 1 s
                if live.stop_reason is None and self.live.get(job_id) is live:
                    loop = asyncio.get_running_loop()
                    live.deadline = loop.call_later(1.0, self._on_deadline, job_id, number)

    def ended(self, job_id: int, number: int) -> Live | None:
        """Forget an attempt whose process has ended; None if it was not ours (any more)."""
        live = self.live.get(job_id)
        if live is None or live.attempt != number:
            return None
        del self.live[job_id]
        if live.deadline:
            live.deadline.cancel()
        return live

    def stop(
        self,
        job_id: int,
        reason: OutcomeKind,
        requeue: bool = False,
        grace: float | None = None,
        begun: bool = False,
        chosen: float | None = None,
        send: Send | None = None,
    ) -> Live | None:
        """SIGTERM the job's group, SIGKILL after its grace period (or `grace`, if shorter);
        `begun`: an earlier daemon sent the SIGTERM (Executor.terminate). `chosen`: the grace
        asked for this stop (`kill --grace`, or the rest of one a restarted daemon carries
        on): the SIGKILL comes that long from now, sooner or later than it was due. `send`
        carries the signals out (None: at once). Returns the attempt with the stop it is
        under; None if nothing changed."""
        send = send or _at_once
        live = self.live.get(job_id)
        if live is None:
            return None
        if live.stop_reason is not None and reason is not OutcomeKind.KILLED:
            return None  # a timeout or stall while already stopping adds nothing
        # A person's kill or retry overrides what was asked before (the last word wins: a
        # kill after a retry is not run again), and a timeout or stall (a kill is never
        # retried). The SIGKILL stays when it was due: asking again never delays it, unless
        # a grace is chosen (a checkpoint that turns out to need longer).
        live.stop_reason, live.requeue = reason, requeue
        loop = asyncio.get_running_loop()
        if chosen is not None:
            # A stop under way has had its SIGTERM: only its SIGKILL moves (a second SIGTERM
            # means "hurry, skip the checkpoint" to some programs).
            under_way = live.kill_at is not None
            live.kill_at = loop.time() + chosen
            send(partial(self._terminate, live, chosen, begun or under_way))
            return live
        wait = live.grace if grace is None else min(grace, live.grace)
        # Only a cap (`grace`) brings a stop under way forward: a plain kill again keeps a
        # SIGKILL chosen later than the job's own grace (`kill --grace 5m`, then `kill`).
        sooner = live.kill_at is not None and grace is not None
        if live.kill_at is None or (sooner and loop.time() + wait < live.kill_at):
            live.kill_at = loop.time() + wait
            send(partial(self._terminate, live, wait, begun))
        return live

    def _terminate(self, live: Live, grace: float, begun: bool) -> None:
        if not self._closed:  # (else the stop is stored: the next daemon carries it out)
            stop_signals.terminate(self.executor, live.pid, live.attempt_dir, grace, begun)

    def pause(
        self, job_id: int, pause: bool, signalled: bool = True, send: Send | None = None
    ) -> bool:
        """SIGSTOP or SIGCONT to the whole process group; its --timeout stops meanwhile.
        Not `signalled`: only the attempt's state here (the signal goes, or went, otherwise:
        a stop's SIGCONT, with its SIGTERM; or not at all, a resume for a stop rolled back).
        `send` carries the signal out (None: at once)."""
        live = self.live.get(job_id)
        if live is None:
            return False
        if signalled:
            sig = signal.SIGSTOP if pause else signal.SIGCONT
            (send or _at_once)(partial(self.executor.signal, live.pid, sig))
        loop = asyncio.get_running_loop()
        if pause and not live.paused and live.deadline is not None:
            live.time_left = max(0.0, live.deadline.when() - loop.time())
            live.deadline.cancel()
            live.deadline = None
        elif not pause and live.paused and live.time_left is not None:
            live.deadline = loop.call_later(live.time_left, self._on_deadline, job_id, live.attempt)
            live.time_left = None
        live.paused = pause
        return True

    def sweeps_running(self) -> Counter[str]:
        """How many points of each sweep run now (what --max-parallel caps): each run counts,
        a held one too, whether its GPUs are known or not (it runs on GPUs as any point does).
        A point released while its held run runs runs twice: it counts twice."""
        sweeps = [lv.sweep for lv in self.live.values()]
        sweeps += [run.sweep for run in self.held_runs.values()]
        return Counter(sweep for sweep in sweeps if sweep)

    def running_jobs(self) -> list[RunningJob]:
        """The processes on our GPUs that are our jobs' (not another user's)."""
        # A held run whose GPUs are not known is left out: its processes count as another
        # user's, which keeps plain jobs off its GPUs (nothing is reserved for it).
        held = [
            RunningJob(run.job_id, run.attempt, run.pid, run.reservation.gpus, run.job_dir)
            for run in self.held_runs.values()
            if run.reservation is not None
        ]
        return held + [
            RunningJob(lv.job_id, lv.attempt, lv.pid, lv.gpus, str(lv.job_dir))
            for lv in self.live.values()
        ]

    def reservations(self, usage: Mapping[RunKey, int]) -> list[Reservation]:
        """What each running job holds: the larger of its request and its measured peak;
        and what each held job's run holds (`usage`: by run, DeviceTable.usage)."""
        held = []
        for run in self.held_runs.values():
            if run.reservation is not None:
                run.peak = max(run.peak, usage.get(run.key, 0))
                held.append(replace(run.reservation, mem=max(run.reservation.mem, run.peak)))
        for lv in self.live.values():
            lv.peak = max(lv.peak, usage.get((lv.job_id, lv.attempt), 0))  # (peaks_to_record too)
            held.append(
                Reservation(
                    lv.job_id,
                    lv.gpus,
                    max(lv.mem or 0, lv.peak),
                    shares=lv.mem is not None,
                    exclusive=lv.exclusive,
                    project=lv.project,
                )
            )
        return held

    def peaks_to_record(self, usage: Mapping[RunKey, int]) -> list[tuple[int, int, int]]:
        """(job id, attempt, peak) of each running attempt whose GPU memory peak (grown by
        `usage`, as `reservations` grows it) is past what herd.db holds: a daemon restarted
        held a job to its --mem alone, and placed another job into the memory it had used."""
        grown = []
        for lv in self.live.values():
            lv.peak = max(lv.peak, usage.get((lv.job_id, lv.attempt), 0))
            if lv.peak > lv.recorded_peak:
                grown.append((lv.job_id, lv.attempt, lv.peak))
        return grown

    def peaks_recorded(self, peaks: Iterable[tuple[int, int, int]]) -> None:
        """These peaks are committed (peaks_to_record's, once their transaction is)."""
        for job_id, number, peak in peaks:
            if (lv := self.live.get(job_id)) is not None and lv.attempt == number:
                lv.recorded_peak = max(lv.recorded_peak, peak)

    def close(self) -> None:
        """Stop watching; the processes run on (a next daemon re-attaches to them)."""
        self._closed = True
        for live in self.live.values():
            if live.deadline:
                live.deadline.cancel()
        self.executor.close()


def _at_once(call: Callable[[], None]) -> None:
    call()
