"""`gpuherd run`: the daemon's engine in-process, fed from a file, a stream or a generator.

No second scheduler: the runner builds the same Store, DeviceTable, LocalExecutor and Engine
as the daemon (state in a temporary database), submits through the same Service, and only
adds what a one-shot run needs: reading the input as it arrives, reporting each event, the
two-step Ctrl-C and the hangup (runner_signals.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuherd.core.model import Policy
from gpuherd.core.states import FINISHED_STATES, JobState
from gpuherd.core.units import plural
from gpuherd.devices import DeviceTable
from gpuherd.engine import Engine
from gpuherd.errors import HerdError
from gpuherd.gpus.base import GpuProbe
from gpuherd.layout import Layout
from gpuherd.runner_commits import LateCommits
from gpuherd.runner_executor import RunExecutor
from gpuherd.runner_failure import Failure
from gpuherd.runner_input import (
    INPUT_BATCH,
    Arrival,
    HandOver,
    Held,
    JobSource,
    NotRun,
    Numbered,
    Skipped,
    by_longest_first,
    cancelled_get,
    drain,
    feed_in_thread,
)
from gpuherd.runner_input import items_from_commands as items_from_commands  # (the CLI's)
from gpuherd.runner_options import RUN_WIDE
from gpuherd.runner_options import RunOptions as RunOptions  # (the CLI's)
from gpuherd.runner_rerun import left_over, skipping
from gpuherd.runner_signals import handled
from gpuherd.runner_state import check_keep_state, put_away
from gpuherd.runner_summary import Reporter, RunSummary, could_not_run, in_run_words, unretried
from gpuherd.runner_watchdog import Watchdog
from gpuherd.service import Service
from gpuherd.store import Store

if TYPE_CHECKING:
    from gpuherd.runner_live import LiveOutput

KILL_GRACE = 3.0
"""Seconds between SIGTERM and SIGKILL after the second Ctrl-C (the user wants out now) or a
hangup (the user is gone)."""


class Runner:
    def __init__(
        self, options: RunOptions, probe: GpuProbe, slots: dict[int, int], reporter: Reporter
    ) -> None:
        self.options = options
        self._folder_prefix = os.path.join(options.output_dir.absolute(), options.prefix)
        self.reporter = reporter
        if options.keep_state:
            check_keep_state(options.output_dir)
        self._ran = False
        self._numbers: dict[int, int] = {}  # job id -> place in the input, for every job submitted
        self._closing = contextlib.ExitStack()
        """What the run made, undone in reverse order at its end, or at once when making the
        rest fails: no temporary folder, database or watcher outlives a failed start."""
        self._state_dir = Path(tempfile.mkdtemp(prefix="gpuherd-run-"))
        layout = Layout.for_run(options.output_dir, options.prefix, self._state_dir)
        try:
            # Closed last: the jobs of a run killed, or ended with some running, are stopped.
            kept_in = options.output_dir if options.keep_state else None
            self._watchdog = Watchdog(layout.home_id, self._state_dir, kept_in, options.output_lock)
            self._closing.callback(self._watchdog.close)
            self._closing.callback(self._remove_state)
            self.store = Store(self._state_dir / "herd.db", scratch=True)
            self._closing.callback(self.store.close)
            self.store.replace_devices(slots)
            devices = DeviceTable(self.store, probe)
            # CPU-only jobs run one per core, as with GNU parallel, unless --max-parallel says.
            cpu_jobs = devices.cores() if options.max_parallel is None else None
            policy = Policy(max_running=options.max_parallel, cpu_jobs=cpu_jobs)
            self._executor = RunExecutor()  # (a job's folder gone: known by identity)
            self.engine = Engine(self.store, devices, self._executor, layout, policy)
            self.engine.unwritten = {}  # (the job folders are the run's record of its jobs)
            self._closing.callback(self.engine.close)
            self.service = Service(self.engine, self._state_dir)
            if options.gpu_file is not None:  # applied now: before anything is placed
                from gpuherd.runner_gpu_file import GpuFile  # (only then: start-up time)

                gpus_per_job, say = options.gpus_per_job, reporter.notice
                gpu_file = GpuFile(options.gpu_file, self.service, say, gpus_per_job)
                self._closing.callback(gpu_file.stop)
                gpu_file.start()
            self._live: LiveOutput | None = None
            if options.live:  # (its module imported only then: start-up time)
                from gpuherd.runner_live import LiveOutput

                self._live = LiveOutput(reporter, layout, self._numbers, self._folder)
                self._closing.callback(self._live.close)
        except BaseException:  # (a Ctrl-C in the imports above too)
            self._closing.close()
            raise
        self._finished: set[int] = set()
        self._commands: dict[int, str] = {}
        """Commands of submitted jobs that have not finished, for the `started` lines."""
        self._started_at: dict[int, float] = {}
        self._requeued: dict[int, dict[str, Any]] = {}
        """The retry change of each job whose last attempt failed and that waits to run again:
        if the run stops first, that attempt is how it ended."""
        self._input_done = False
        self._held = Held()
        self._interrupts = 0
        self.summary = RunSummary()
        self._failure = Failure(self.engine, self._stop_dispatch, self._notice, KILL_GRACE)
        self._late_commits = LateCommits(self.engine, options.commit_lookup)

    async def run(self, source: JobSource) -> RunSummary:
        """Run every job the source yields; return once input is over and all jobs ended.
        Whatever ends it, what the runner made is undone (once: a runner runs one source)."""
        self._ran = True
        with self._closing:
            loop = asyncio.get_running_loop()
            self.options.output_dir.mkdir(parents=True, exist_ok=True)
            self.engine.health.listeners.append(self._failure)  # (a bug: the run stops)
            self._closing.callback(self._failure.close)
            self.engine.start()
            changes = self.engine.changes.subscribe(backlog=0)  # every job's end is reported
            self._closing.callback(self.engine.changes.unsubscribe, changes)
            put = HandOver(loop, self._held, self.options.input_watch)  # (one for all: in order)
            numbered: Iterable[Numbered] = enumerate(source)
            if self.options.skip_succeeded:
                numbered = skipping(numbered, self._folder, put)
            if self.options.run_times is not None:
                numbered = by_longest_first(numbered, self.options.run_times, self._held)
            # (Ctrl-C taken before the input is read: one that came as the reader thread began
            # ended the run with no summary of the lines it had read.)
            with handled(self._interrupt, self._hang_up):
                feed_in_thread(numbered, put)
                await self._loop(put, changes)
                self._watchdog.all_ended = not self.engine.live
                if not self.summary.interrupted:  # (Ctrl-C: git is not waited for)
                    await self._late_commits.settled()
            read_all = not (self.summary.interrupted or self.summary.input_failed)
            if read_all and (notice := left_over(self._folder_prefix, self.summary.jobs)):
                self.reporter.notice(notice)
        self.summary.engine_failed = self._failure.error
        for job_id, failed in (self.engine.unwritten or {}).items():  # (job_3: its folder)
            self.summary.unwritten[f"{self.options.prefix}{self._numbers[job_id]}"] = failed
        return self.summary

    async def _loop(
        self,
        put: HandOver,
        changes: asyncio.Queue[dict[str, Any] | None],
    ) -> None:
        get_item = asyncio.ensure_future(put.queue.get())
        get_change = asyncio.ensure_future(changes.get())
        try:
            while not self._all_done():
                waits = {get_change} | ({get_item} if not self._input_done else set())
                done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                # Take what is there: lines read while jobs ran are submitted in one batch
                # (of INPUT_BATCH at most: 100,000 read at once held the first jobs' starts
                # while they all went in), and a burst of changes is reported without a wait
                # per change.
                if get_item in done:
                    self._take_input([get_item.result(), *drain(put.queue, INPUT_BATCH)])
                    get_item = asyncio.ensure_future(put.queue.get())
                if get_change in done:
                    self._report([get_change.result(), *drain(changes)])
                    get_change = asyncio.ensure_future(changes.get())
            # Changes published in the tick that emptied the queue are still waiting: report
            # them too, so every job that ended has its line and is counted.
            self._report([*cancelled_get(get_change), *drain(changes)])
            # And a line the pending get took after a Ctrl-C (no longer awaited): it was lost;
            # and those the input's thread read and had not handed over (HandOver.left).
            self._count_left([*cancelled_get(get_item), *drain(put.queue), *put.left()])
        finally:
            get_item.cancel()
            get_change.cancel()

    def _report(self, changes: list[dict[str, Any] | None]) -> None:
        for change in changes:
            if change is not None:
                if self._live is not None:  # a job's last lines come before its end's line
                    self._live.take(change)
                self._on_change(change)
        self.reporter.flush()

    def _take_input(self, arrived: list[Arrival]) -> None:
        batch: list[Numbered] = []
        for entry in arrived:
            if entry is None or isinstance(entry, BaseException):
                self._submit(batch)  # what came before the end goes in first
                batch = []
                self._input_done = True
                if isinstance(entry, BaseException):
                    # (a MemoryError says nothing of itself)
                    self.reporter.notice(f"input stopped: {str(entry) or type(entry).__name__}")
                    self._input_failed()
                continue
            if isinstance(entry, Skipped | NotRun):  # (whether the run goes on or not)
                self._set_aside(entry)
                continue
            if self._interrupts or self._input_done:
                self.summary.not_run += 1
                continue
            number, item = entry
            item.folder = self._folder(number)  # by input place, whatever the start order
            for name in RUN_WIDE:  # a line's own option, else the run's
                setattr(item, name, getattr(item, name) or getattr(self.options, name))
            batch.append(entry)
        self._submit(batch)

    def _set_aside(self, entry: Skipped | NotRun) -> None:
        """A job --skip-succeeded does not run: it succeeded before, or its folder holds
        another job's success (which running it would overwrite)."""
        if isinstance(entry, Skipped):
            self.summary.skipped += 1
            self.reporter.skipped(entry.number, entry.folder)
        else:
            self.summary.not_run += 1
            self.reporter.notice(f"[{entry.number}] not run: {entry.why}")

    def _submit(self, batch: list[Numbered]) -> None:
        """Submit what arrived together in one transaction; if the batch is refused, one by
        one, so that only the bad items are reported and skipped."""
        if not batch:
            return
        try:
            ids = self.service.submit(self._executor.still_there([item for _, item in batch]))
        except HerdError as exc:
            if len(batch) > 1:
                for entry in batch:
                    self._submit([entry])
                return
            self.summary.could_not_run += 1
            number, item = batch[0]
            self.reporter.notice(could_not_run(number, item.command, exc, item.cwd))
            return
        for job_id, (number, item) in zip(ids, batch, strict=True):
            self._numbers[job_id] = number
            self._commands[job_id] = item.command
        self._late_commits.submitted(ids, [item for _, item in batch])
        self.reporter.submitted(len(self._numbers))

    def _folder(self, number: int) -> str:
        return f"{self._folder_prefix}{number}"  # a string: this is on every job's path

    def _on_change(self, change: dict[str, Any]) -> None:
        """Report one state change, from what the change itself says (the job moves on)."""
        job_id = change.get("id")
        if change["event"] == "interrupt":
            self.reporter.notice(change["notice"])
        if not isinstance(job_id, int) or job_id not in self._numbers:
            return
        if job_id in self._finished:  # (ended here when the run stopped before its retry)
            return
        number = self._numbers[job_id]
        state = JobState(change["state"])
        if change["event"] == "start":
            self._requeued.pop(job_id, None)
            if change.get("started_at") is not None:
                self._started_at[job_id] = change["started_at"]
            command = self._commands.get(job_id, "")
            self.reporter.started(number, list(change.get("gpus", [])), command)
        elif change["event"] == "retry":
            self._requeued[job_id] = change
            if self.engine.stopping and self._waits_to_start(job_id):
                self._end_unretried(job_id)  # nothing starts any more: this was its end
            elif change.get("detail"):
                self.reporter.retrying(number, in_run_words(change["detail"], job_id))
        elif state in FINISHED_STATES:
            self._ended(job_id, state, change)

    def _ended(self, job_id: int, state: JobState, change: dict[str, Any]) -> None:
        number = self._numbers[job_id]
        self._finished.add(job_id)
        self._commands.pop(job_id, None)
        started = self._started_at.pop(job_id, None)
        seconds = change.get("ended_at", started or 0) - started if started else 0
        folder = self._folder(number)
        if state is JobState.SUCCEEDED:
            self.summary.succeeded += 1
        elif state is JobState.CANCELLED:
            self.summary.not_run += 1
        else:
            self.summary.failed += 1
            self.summary.failed_folders.append(folder)
            folder = self._last_attempt_folder(job_id, folder)
        detail = in_run_words(change.get("detail") or "", job_id)
        self.reporter.ended(number, state.value, detail, seconds, folder)

    def _waits_to_start(self, job_id: int) -> bool:
        """Queued (not started again before the run stopped: its start is still to report)."""
        job = self.store.get_job(job_id)
        return job_id not in self.engine.live and job is not None and job.state is JobState.QUEUED

    def _end_unretried(self, job_id: int) -> None:
        """A job queued again after a failed attempt, in a run that stopped before the retry
        started: it failed, as its last attempt did (its job.json and FAILURE say so)."""
        change = self._requeued.pop(job_id)
        self._ended(job_id, JobState.FAILED, {**change, "detail": unretried(change.get("detail"))})

    def _count_left(self, unread: list[Arrival]) -> None:
        """Once the run is over, every job of the input is counted: the submitted ones that
        never ended (queued when the run stopped) and the lines it had read but not taken."""
        for job_id in [j for j in self._numbers if j not in self._finished]:
            if job_id in self._requeued:
                self._end_unretried(job_id)
            else:
                self.summary.not_run += 1
        self.summary.not_run += sum(isinstance(entry, tuple) for entry in unread)
        for entry in unread:
            if isinstance(entry, Skipped | NotRun):  # decided before the run stopped
                self._set_aside(entry)
        self.summary.not_run += self._held.count  # read, but not handed over yet
        self.reporter.flush()

    def _last_attempt_folder(self, job_id: int, folder: str) -> str:
        """Where a failed job's last attempt ran (attempt-N after retries): its logs."""
        job = self.store.get_job(job_id)
        return str(self.engine.layout.attempt_dir(job, job.attempt)) if job else folder

    def _all_done(self) -> bool:
        if (self.engine.stopping and not self.engine.live) or self._failure.gave_up:
            return True  # its queued jobs will never start
        return self._input_done and len(self._finished) == len(self._numbers)

    def _interrupt(self) -> None:
        self._interrupts += 1
        self.summary.interrupted = True
        if self._interrupts == 1:
            running = len(self.engine.live)
            waiting = (  # with none running there is nothing to wait for, nor to kill
                f"; waiting for {plural(running, 'running job')} to finish (a second Ctrl-C or "
                f"SIGTERM kills {'it' if running == 1 else 'them'})"  # (either: SIGTERM too)
                if running
                else ""
            )
            self._notice(f"interrupted: starting nothing new{waiting}")
            self._stop_dispatch()
        else:
            self._notice(f"killing {plural(len(self.engine.live), 'running job')}")
            self.engine.kill_all(KILL_GRACE)

    def _notice(self, notice: str) -> None:
        """Say it in the order of the changes (after the `started` lines of the jobs it
        counts, still on their way), and wake the loop to see what it changes."""
        self.engine.changes.publish({"event": "interrupt", "notice": notice})

    def _hang_up(self) -> None:
        """SIGHUP: the terminal closed or the ssh connection dropped. Nobody is left to wait
        for the running jobs: kill them now (SIGTERM, SIGKILL KILL_GRACE later), record their
        ends, and exit HANGUP_STATUS once they are gone."""
        self._stop_dispatch()
        self._interrupts += 1
        self.summary.interrupted = self.summary.hung_up = True
        running = len(self.engine.live)  # (none: not "killing 0 running jobs")
        doing = f"killing {plural(running, 'running job')}" if running else "starting nothing new"
        self._notice(f"hung up: {doing}")
        self.engine.kill_all(KILL_GRACE)

    def _input_failed(self) -> None:
        """The source failed midway: nothing after its bad line is read, but the jobs of the
        lines before it are jobs like any other (whether they started yet or not)."""
        self.summary.input_failed = True

    def _stop_dispatch(self) -> None:
        """Start nothing new; the jobs left queued are counted once the run is over."""
        self.engine.stop_dispatch()
        self._input_done = True

    def _remove_state(self) -> None:
        keep = self.options.keep_state and self._ran  # (a run that never started keeps none)
        if notice := put_away(self._state_dir, self.options.output_dir, keep):
            self.summary.state_left_in = self._state_dir
            self.reporter.notice(notice)


async def run_jobs(
    options: RunOptions,
    probe: GpuProbe,
    slots: dict[int, int],
    reporter: Reporter,
    source: JobSource,
) -> RunSummary:
    """Make a runner on the running loop and run `source`: a loop that cannot be made (no
    file descriptor left) leaves no runner made before it, with its temporary folder."""
    return await Runner(options, probe, slots, reporter).run(source)
