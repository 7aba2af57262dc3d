"""Ends the daemon could not write into their jobs' folders as the jobs ended (`SUCCESS` or
`FAILURE`, the end in job.json and attempt.json): a read-only folder, a full disk, an NFS
server away for a moment. herd.db has the end, so the queue goes on (the jobs `--after` it
start); but the folder is what a sweep submitted again reads (a point without `SUCCESS` runs
again) and what a job `--after` it may read. Before, the daemon said nothing of it.

Now the failure is said in daemon.log and in the job's history (`gpuherd show`), and the end
is written again from herd.db every RETRY_UNWRITTEN seconds, and at the next daemon's first
tick (the job ids are kept in herd.db: UNWRITTEN_SETTING), until it is written or the job
moved on (retried, removed). A job `--after` it that starts meanwhile says so in its history.
`gpuherd run` keeps its own account of these (Engine.unwritten): its folders are its record.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from typing import TYPE_CHECKING

from gpuherd import jobfiles
from gpuherd.core.model import HostUsage, Job
from gpuherd.core.states import FINISHED_STATES
from gpuherd.engine_endings import stored_attempt
from gpuherd.errors import StoreError

if TYPE_CHECKING:
    from gpuherd.engine import Engine

log = logging.getLogger("gpuherd.engine")

RETRY_UNWRITTEN = 30.0
"""Seconds between tries to write again the ends that could not be written."""

TIMER_SLACK = 0.1
"""Seconds early the loop's timer may wake the tick that tries (asyncio's clock resolution)."""

UNWRITTEN_SETTING = "unwritten_ends"
"""herd.db's meta key: the jobs whose end waits to be written, as a JSON list of [job id,
attempt] pairs (an attempt since is another end, written or said as it ends)."""

FOLDER_GONE = (FileNotFoundError, NotADirectoryError)
"""The job's folder removed (`gpuherd clean`, a results folder deleted): nothing to write
into, and nothing a sweep would take for done; said where the run's logs go missing."""


class UnwrittenEnds:
    """The jobs whose end waits to be written into their folders, and the timer that tries."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.pending: dict[int, int] = {}  # job id: the attempt whose end waits
        self.due: float | None = None  # (time.monotonic(), as the loop's timers)
        self.changed = False  # (pending, since herd.db was told)
        try:
            kept = json.loads(engine.store.get_setting(UNWRITTEN_SETTING) or "[]")
        except (sqlite3.Error, ValueError):
            kept = []
        for pair in kept if isinstance(kept, list) else ():  # (a stopped daemon's: tried now)
            if isinstance(pair, list) and len(pair) == 2 and all(type(n) is int for n in pair):
                self.pending[pair[0]] = pair[1]
                self.due = time.monotonic()

    def failed(self, job_id: int, error: OSError) -> None:
        """The end of `job_id` could not be written: say so, and try again later (once the job
        has ended: an earlier attempt's, its retry running, is said and left)."""
        engine = self.engine
        if isinstance(error, FOLDER_GONE):
            return
        try:
            job = engine.store.get_job(job_id)
        except (sqlite3.Error, StoreError) as exc:  # (herd.db failing too: said as it can be)
            why = error.strerror or error
            log.warning(
                "job %d: its end could not be written (%s), nor its row read: %s", job_id, why, exc
            )
            return
        if job is None:
            return
        where, why = _folder(error, job, engine), error.strerror or error
        ended = _ended(job)
        rerun = ", so a sweep submitted again runs it again" if _succeeded(job) else ""
        later = f"gpuherd writes it again every {RETRY_UNWRITTEN:g}s"
        log.warning(
            "job %d (%s): its end could not be written to %s: %s. herd.db has it, and the"
            " queue goes on by it; but its folder has no %s and its job.json no end%s."
            " Make that folder writable (or free space there)%s",
            job_id,
            job.state.value,
            where,
            why,
            _marker(job),
            rerun,
            f": {later}" if ended else "",
        )
        detail = f"its end could not be written to {where} ({why}): no {_marker(job)} there{rerun}"
        _note(engine, job_id, "end-unwritten", f"{detail}; {later}" if ended else detail)
        if ended and self.pending.get(job_id) != job.attempt:
            self.pending[job_id] = job.attempt
            self.changed = True  # (saved once for the tick's paperwork: retry)
            self._arm()

    def retry(self, job_ids: set[int] | None = None) -> dict[int, OSError]:
        """Write again the ends now due (or those of `job_ids` at once: the jobs a starting job
        waited for); those that still cannot be written, by job."""
        if job_ids is None:
            if self.due is None or time.monotonic() < self.due - TIMER_SLACK:
                self._save()
                return {}
            self.due = None
        ids = [i for i in self.pending if job_ids is None or i in job_ids]
        left: dict[int, OSError] = {}
        before = len(self.pending)
        for job_id in ids:
            try:
                failed = self._write_again(job_id)
            except (sqlite3.Error, StoreError):  # (herd.db failing for now: tried again later)
                continue
            if failed is None or isinstance(failed, FOLDER_GONE):
                del self.pending[job_id]
            else:
                left[job_id] = failed
        self.changed = self.changed or len(self.pending) < before
        self._save()
        if self.pending:
            self._arm()
        return left

    def _write_again(self, job_id: int) -> OSError | None:
        """None: written (and said so), or no longer that end to write (the job removed, or
        retried since: its new end is written, or said, as any)."""
        job = self.engine.store.get_job(job_id)
        if job is None or job.attempt != self.pending[job_id] or not _ended(job):
            return None
        if self.engine.layout.attempt_dir(job, job.attempt + 1).exists():
            return None  # (a later run there, which a herd.db restored from a backup lacks)
        if (failed := _rewrite(self.engine, job)) is None:
            _said_written(self.engine, job)
        return failed

    def _arm(self) -> None:
        if self.due is None:
            self.due = time.monotonic() + RETRY_UNWRITTEN
            self.engine.wake_later(RETRY_UNWRITTEN)

    def _save(self) -> None:
        """Keep the ids in herd.db for the next daemon (a herd.db that refuses it, on a full
        disk: this daemon still tries; the next one does not know of them)."""
        if not self.changed:
            return
        self.changed = False
        try:
            kept = json.dumps(sorted(self.pending.items()))  # ([[job id, attempt], ...])
            self.engine.store.set_setting(UNWRITTEN_SETTING, kept)
        except (sqlite3.Error, StoreError) as exc:
            log.warning("the jobs whose end waits to be written could not be noted: %s", exc)


def _rewrite(engine: Engine, job: Job) -> OSError | None:
    """Write the ended job's end again, as herd.db has it."""
    attempt = stored_attempt(engine, job)
    outcome = attempt.outcome or job.outcome  # (the attempt's: a later cancel is not its end)
    ended_at = attempt.ended_at or job.ended_at or engine.clock()
    assert outcome is not None  # (_ended)
    folder = str(engine.layout.attempt_dir(job, job.attempt))
    # Its start as attempt.json has it (with what the start added, as its logs' sizes then)
    started = jobfiles.attempt_info(folder)
    if started is None or [started.get("id"), started.get("attempt")] != [job.id, job.attempt]:
        started = jobfiles.start_info(job, attempt)
    if started.get("git") is None and job.spec.git is not None:
        started = {**started, "git": job.spec.git}
    usage = None if attempt.cpu_time is None else HostUsage(attempt.peak_rss, attempt.cpu_time)
    return jobfiles.record_end(engine.layout, job, outcome, ended_at, started, usage=usage)


def _ended(job: Job) -> bool:
    """Has the job an end to write: finished after it ran (not cancelled while queued)."""
    return job.state in FINISHED_STATES and job.attempt > 0 and job.outcome is not None


def _said_written(engine: Engine, job: Job) -> None:
    where = engine.layout.job_dir(job)
    log.info("job %d: its end is written to %s now", job.id, where)
    _note(engine, job.id, "end-written", f"its end written to {where} now")


def note_waiter(engine: Engine, waiter: Job, waited: dict[int, OSError]) -> None:
    """A job `--after` others starts though their ends are not in their folders: say so in
    its history, where a script of it that reads their SUCCESS and fails is looked into."""
    for job_id, error in sorted(waited.items()):
        if isinstance(error, FOLDER_GONE):
            continue  # (its folder removed: by someone who meant it)
        detail = (
            f"started without job {job_id}'s end in its folder (no SUCCESS or FAILURE, no end in"
            f" its job.json): it could not be written ({error.strerror or error}); herd.db has it"
        )
        _note(engine, waiter.id, "dep-end-unwritten", detail)


def _note(engine: Engine, job_id: int, event: str, detail: str) -> None:
    """An event in the job's history (not published: a finished state published again would
    run its hooks again); herd.db refusing it (the same full disk) leaves daemon.log's."""
    try:
        engine.store.update_job(job_id, engine.clock(), event, detail=detail)
    except (sqlite3.Error, StoreError) as exc:
        log.warning("job %d: its history could not say %r: %s", job_id, detail, exc)


def _succeeded(job: Job) -> bool:
    return job.outcome is not None and job.outcome.success


def _marker(job: Job) -> str:
    return "SUCCESS" if _succeeded(job) else "FAILURE"


def _folder(error: OSError, job: Job, engine: Engine) -> str:
    """The folder the failed write was in (the attempt's, or the job's), as the error says."""
    if isinstance(error.filename, str):
        return os.path.dirname(error.filename)
    return str(engine.layout.job_dir(job))
