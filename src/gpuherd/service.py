"""One function per verb, shared by the HTTP API and the in-process runner.

Each verb validates its input, changes the queue through the engine, and answers plain data.
Verbs on several jobs answer one ActionResult per job, so one bad id never hides the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuherd import log_text
from gpuherd.core.deps import KINDS
from gpuherd.core.lifecycle import Rerun, cancelled_at_once
from gpuherd.core.log_names import FOLDER_LOGS
from gpuherd.core.model import Job, JobSpec, Policy
from gpuherd.core.nearest_now import LeftOut
from gpuherd.core.output_files import Files, recorded_or_named, shared_file, sharing
from gpuherd.core.retry_budget import idle_retry_delay
from gpuherd.core.states import (
    FINISHED_STATES,
    LIVE_STATES,
    JobState,
    OutcomeKind,
)
from gpuherd.engine import Engine
from gpuherd.engine_endings import fail_orphaned_waiters
from gpuherd.errors import Conflict, InvalidValue, NotFound
from gpuherd.executors.base import NO_USER_FILES
from gpuherd.gc_pause import collector_paused
from gpuherd.listing import (
    PLAIN_LS,
    ListingQuery,
    listed,
    listed_ids,
    peaks_of,
    states_named,
    stored_views,
    worded,
)
from gpuherd.retry_chain import reruns
from gpuherd.service_edit import EditVerbs
from gpuherd.service_order import MoveVerbs
from gpuherd.service_reasons import explainer, refusals
from gpuherd.service_system import SystemVerbs
from gpuherd.store import NewJob, Store
from gpuherd.store_rows import JobFilter
from gpuherd.submission import spec_from_item, unknown_jobs
from gpuherd.submission_batch import Batch, shared_options
from gpuherd.submission_text import printable
from gpuherd.sweep_folders import in_own_run, with_own_run
from gpuherd.unknown_retry import submitted_beside
from gpuherd.wire import SubmitItem, attempt_view, outcome_view

if TYPE_CHECKING:  # the daemon makes the reader: `gpuherd run` never loads it, nor pydantic-core
    from gpuherd.listing_reader import ListingReader

STDERR_TAIL_LINES = 20


@dataclass(frozen=True)
class Submitted:
    ids: list[int]
    cancelled: Mapping[int, tuple[int, JobState]]
    """The jobs cancelled at once, each with the dependency that already ended badly."""
    reruns: Mapping[int, Rerun] = field(default_factory=dict)
    """Of each job cancelled so, what a retry must run again ahead of it: every job it waits
    for that ended badly, and theirs through the ones cancelled so (retry_chain.reruns)."""
    notes: Sequence[str] = ()
    """Of jobs whose --only-gpus names GPUs gpuherd does not have, a line each (gpu_unknown);
    of jobs whose --retry-delay does nothing (never retried), a line (idle_retry_delay)."""

    @classmethod
    def told(
        cls,
        store: Store,
        ids: list[int],
        cancelled: Mapping[int, tuple[int, JobState]],
        notes: Sequence[str] = (),
    ) -> Submitted:
        """The submission of `ids`, with what a retry of each job in `cancelled` needs ahead
        of it (the submission's answer and the dashboard's banner say the same)."""
        return cls(ids, cancelled, reruns(store, sorted(cancelled)), notes)

    def warnings(self) -> list[str]:
        """One line per dependency (and retry), on the jobs cancelled at once as it already
        ended badly."""
        by_dep: dict[tuple[int, JobState, Rerun | None], list[int]] = {}
        for job_id, dep in sorted(self.cancelled.items()):
            by_dep.setdefault((*dep, self.reruns.get(job_id)), []).append(job_id)
        said = [cancelled_at_once(ids, *told) for told, ids in by_dep.items()]
        return said + list(self.notes)


@dataclass(frozen=True)
class CheckedJobs:
    """A submission's jobs, checked (every refusal made), not yet stored (store_checked)."""

    items: Sequence[SubmitItem]
    new_jobs: list[NewJob]
    deps: frozenset[int]
    """The jobs they wait for: looked up again when they are stored."""


class Service(SystemVerbs, EditVerbs, MoveVerbs):
    def __init__(self, engine: Engine, home: Path, started_at: float | None = None) -> None:
        self.engine = engine
        self.home = home
        self.store = engine.store
        self.started_at = started_at or time.time()
        self.sweeps_removing: set[str] = set()
        """Sweeps a `sweep rm` works through (in pieces): not to be submitted meanwhile."""
        self.sweep_submitting = asyncio.Lock()
        """Held by a sweep's submission from its plan to its commit (sweeps.py): its folders
        are written off the loop meanwhile, and another submission planned then would find
        the same points not yet queued, and queue them twice."""
        self.reader: ListingReader | None = None
        """The daemon's listing thread (listing_reader.py); None: listings read on the loop."""

    # ---- submit ---------------------------------------------------------------------------

    def submit(self, items: Sequence[SubmitItem]) -> list[int]:
        return self.submit_and_tell(items).ids

    def submit_and_tell(self, items: Sequence[SubmitItem], batch: Batch | None = None) -> Submitted:
        """Queue the jobs; a job whose dependency already ended otherwise than it waits for
        (`after` a failed job, `after_fail` a succeeded one) is stored, then cancelled at
        once (dependency_failed), as it would be a moment later: refused, the same script
        failed or not by how fast that dependency ended. `batch` names the items in refusals
        (a sweep's points); by default by number, `job 3 of the submission`, and the options
        all items share as the batch's, `the 3 jobs' options`."""
        return self.store_checked(self.check_submission(items, batch))

    def check_submission(
        self, items: Sequence[SubmitItem], batch: Batch | None = None
    ) -> CheckedJobs:
        """Every refusal of submit_and_tell, made before anything is stored: a sweep checks
        its points so, writes their folders off the loop, then stores them (sweeps.py)."""
        return self.submission_check(items, batch)()

    def submission_check(
        self, items: Sequence[SubmitItem], batch: Batch | None = None
    ) -> Callable[[], CheckedJobs]:
        """check_submission in two: what reads the queue and the engine, done now; and what
        reads only the items (and the files they name), returned, for a worker thread to run
        (a sweep's 10,000 points: ~0.4 s, the loop free meanwhile)."""
        if not items:
            raise InvalidValue(
                "nothing to submit: the list of jobs is empty (the CLI: give a command after --, "
                "or --file with lines)"
            )
        if not self.engine.executor.user_files and any(i.output or i.error for i in items):
            raise InvalidValue(NO_USER_FILES)
        deps = frozenset(dep for item in items for kind in KINDS for dep in getattr(item, kind))
        self._check_deps_exist(deps, items)
        engine = self.engine
        if beside := submitted_beside(engine, (item.folder for item in items)):
            raise Conflict(beside)  # (a folder a run no job watches writes in)
        never = refusals(engine)
        judged = _Judged(batch or Batch(len(items)), engine.policy, never, engine.clock())
        return partial(_checked, items, deps, judged)

    def store_checked(self, checked: CheckedJobs) -> Submitted:
        """Store the jobs check_submission passed. Their dependencies are looked up again:
        a sweep's loop was free while its folders were written, and a job it waits for may
        have been removed meanwhile."""
        self._check_deps_exist(checked.deps, checked.items)
        now = self.engine.clock()
        new_jobs = checked.new_jobs
        ids = self.store.add_jobs(new_jobs, now)
        submits: list[dict[str, object]] = [
            {"id": job_id, "state": new.state.value, "event": "submit"}
            for job_id, new in zip(ids, new_jobs, strict=True)
        ]
        self.engine.publish(*submits)  # (one callback for them all: a sweep's 10,000 took 20 ms)
        cancelled = {}
        if checked.deps:
            with self.store.transaction():
                cancelled = fail_orphaned_waiters(self.engine, now, ids)
        if any(new.release_at for new in new_jobs):
            self.engine.begins.arm()
        self.engine.wake()
        specs = list(zip(ids, (new.spec for new in new_jobs), strict=True))
        notes = self.unknown_gpus_named(specs)
        if idle := idle_retry_delay(specs):
            notes.append(idle)
        return Submitted.told(self.store, ids, cancelled, notes)

    def _check_deps_exist(self, deps: frozenset[int], items: Sequence[SubmitItem]) -> None:
        missing = sorted(deps - set(self.store.get_jobs(sorted(deps)))) if deps else []
        if missing:
            raise unknown_jobs(missing, items)

    # ---- read -----------------------------------------------------------------------------

    @collector_paused()  # 100,000 jobs listed: 600,000 objects made (gc_pause.py)
    def ls(self, query: ListingQuery = PLAIN_LS) -> tuple[list[dict[str, Any]], LeftOut]:
        """The jobs `ls` lists, and what `limit` left out of those that match: with `states`
        or `all_jobs`, the jobs that match (the waiting ones last, as below; all by id, the
        newest first, if asked), a limit keeping those nearest now (core/nearest_now.py);
        else the most recent finished ones and the running ones, then the waiting ones in
        the order they are to start (the limit applies to the waiting)."""
        self.engine.record_spawns_for_a_read()
        jobs, left = listed(self.store, query)
        return self._views(jobs), left

    async def ls_off_loop(
        self, query: ListingQuery = PLAIN_LS
    ) -> tuple[list[dict[str, Any]], LeftOut]:
        """`ls`, read on the daemon's listing thread, the loop left free meanwhile
        (listing_reader.py); on the loop where there is none, or it cannot read."""
        if self.reader is not None:
            # On the loop, before the read: the thread's snapshot then has the pids spawned
            # within the last PID_RECORD_DELAY (nothing to write when none is pending).
            self.engine.record_spawns_for_a_read()
            found = await self.reader.listing(self.engine, query)
            if found is not None:
                return found
        return self.ls(query)

    def ls_ids(self, query: ListingQuery = PLAIN_LS) -> list[int]:
        """`ls -q`: the ids of the jobs matching, or else of every job not finished; as `ls`
        lists them (the waiting ones last, in the order they are to start), `limit` applied
        as `ls` applies it: to every job with `states` or `all_jobs`, else to the waiting."""
        return listed_ids(self.store, query)

    async def ls_ids_off_loop(self, query: ListingQuery = PLAIN_LS) -> list[int]:
        """`ls -q`, read on the listing thread in one snapshot, as ls_off_loop reads `ls` (the
        ids of 100,000 jobs held the loop ~45 ms); on the loop where that cannot read."""
        if self.reader is not None:
            found = await self.reader.read(lambda reads: listed_ids(reads, query))
            if found is not None:
                return found
        return self.ls_ids(query)

    def page_jobs(
        self,
        states: Sequence[str] = (),
        project: str | None = None,
        search: str = "",
        sweep: str | None = None,
        offset: int = 0,
        limit: int = 50,
        since: float | None = None,
        latest: bool = False,
        ids: tuple[int, ...] | None = None,
    ) -> tuple[int, list[dict[str, Any]]]:
        """(how many jobs match, the views of `limit` of them from `offset`), newest first: a
        COUNT and a LIMIT/OFFSET query, cheap with 100,000 jobs. since, latest, ids: JobFilter's."""
        match = JobFilter(project, sweep, since=since, latest=latest, ids=ids)
        self.engine.record_spawns_for_a_read()
        with self.store.passing_over_damaged():  # (the jobs page says which: views.jobs_page)
            total, jobs = self.store.page_jobs(
                states_named(states), match, search.strip(), max(0, offset), max(0, limit)
            )
        return total, self._views(jobs) if jobs else []

    def show(self, job_id: int) -> dict[str, Any]:
        self.engine.record_spawns_for_a_read()  # a job started within 50 ms: its pid shown
        job = self._job(job_id)
        (view,) = self._views([job])
        # Each attempt's files, as it recorded them; the job's, of its latest attempt (before
        # its first start, where the first one's will be); in its own run's folder.
        ran = with_own_run(job)
        attempts = [in_own_run(a, job, ran) for a in self.store.attempts(job.id)]
        logs = {a.number: self._log_files(ran, a.number, a.files) for a in attempts}
        latest = logs.get(job.attempt) or self._log_files(ran, job.attempt or 1, None)
        view.update(
            # Printable: an older gpuherd let undecodable bytes in, and JSON cannot carry them.
            env_overrides={printable(k): printable(v) for k, v in job.spec.env_overrides.items()},
            job_dir=str(self.engine.layout.job_dir(job)),
            attempts=[
                {**attempt_view(a, job.spec.ram), "log_files": logs[a.number]} for a in attempts
            ],
            events=[asdict(e) for e in self.store.events(job.id)],
            stderr_tail=log_text.tail_lines(Path(latest["stderr"]), STDERR_TAIL_LINES)
            if job.attempt
            else [],
            log_files=latest,
            # Its GPUs lost or removed while it runs (it goes on: its process is untouched),
            # said by `show`, where its row said `gpus 1` as if nothing had happened.
            gpus_gone=self.engine.devices.gone(job.gpus) if job.state in LIVE_STATES else [],
        )
        return view

    def _log_files(self, job: Job, number: int, files: Files | None) -> dict[str, str]:
        layout = self.engine.layout
        return {s: str(layout.log_file(job, number, s, files)) for s in ("stdout", "stderr")}

    def log_path(self, job_id: int, stream: str, attempt: int | None = None) -> Path:
        return self.log_target(job_id, stream, attempt)[1]

    def log_target(self, job_id: int, stream: str, attempt: int | None) -> tuple[int, Path]:
        """The attempt whose log is read (`attempt`, or the job's latest) and that log."""
        if stream not in ("stdout", "stderr"):  # a bad query value, before any job is looked up
            raise InvalidValue(f"unknown stream '{stream}': use stdout or stderr")
        job = self._job(job_id)
        number = attempt or job.attempt
        if number < 1 or number > job.attempt:
            if job.attempt == 0 and job.state in FINISHED_STATES:  # cancelled, say
                raise Conflict(f"job {job_id} never ran ({job.state.value}): it has no log")
            if job.attempt == 0:
                why = explainer(self.engine)(job)
                raise Conflict(f"job {job_id} has not started yet" + (f" ({why})" if why else ""))
            ran = "it has run once" if job.attempt == 1 else f"its attempts are 1-{job.attempt}"
            raise NotFound(f"job {job_id} has no attempt {number}: {ran}")
        files = self.store.attempt_files(job.id, number)
        return number, self.engine.layout.log_file(with_own_run(job), number, stream, files)

    def no_log(self, job_id: int, stream: str, number: int) -> str | None:
        """Why that attempt's log has nothing to show, when the reason is no fault of a
        reader's (`log` and the dashboard say it in these words): its output went where
        nothing is kept (`--output /dev/null`, a named pipe), or the attempt never started,
        so there is no log (spawn_error: the reason `show` gives). None: neither."""
        job = self._job(job_id)
        attempt = next((a for a in self.store.attempts(job.id) if a.number == number), None)
        files = recorded_or_named(job.spec, job.id, number, attempt.files if attempt else None)
        path = self.engine.layout.log_file(with_own_run(job), number, stream, files)
        with contextlib.suppress(OSError):  # (its folder or the file gone: below)
            if path.name not in FOLDER_LOGS and not stat.S_ISREG(os.stat(path).st_mode):
                option = "--error" if stream == "stderr" and files[1] != files[0] else "--output"
                return f"job {job_id}: its {stream} went to {path} ({option}): nothing was kept"
        ended = attempt.outcome if attempt else None
        if ended and ended.kind is OutcomeKind.SPAWN_ERROR and not os.path.lexists(path):
            why = f": {ended.message}" if ended.message else ""
            return f"job {job_id}: attempt {number} never started{why}"
        return None

    def job_states(self, ids: Sequence[int]) -> dict[int, JobState]:
        """The states of these jobs, read in one go; NotFound names the first unknown id."""
        states = self.store.states_of(list(dict.fromkeys(ids)))
        for job_id in ids:
            if job_id not in states:
                self._job(job_id)  # raises NotFound with the usual message
        return {job_id: states[job_id] for job_id in ids}

    def endings(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """How each of these jobs ended (state, outcome, exit code, signal, message), read in
        one go: what `wait` says of those that did not succeed (`failed (exit 7)`)."""
        jobs = self.store.get_jobs(list(ids)) if ids else {}
        return {i: {"state": j.state.value, **outcome_view(j.outcome)} for i, j in jobs.items()}

    # ---- helpers --------------------------------------------------------------------------

    def _views(self, jobs: Sequence[Job]) -> list[dict[str, Any]]:
        """The jobs' views (wire.job_view), with why each waits, and how long its attempt
        has been paused: `paused_seconds` in pauses that are over, `paused_at` when the
        pause still on began (core/run_time.py; its run time leaves both out), and that run
        time by now, `seconds` (None for a job not started): Slurm's sacct Elapsed, so a
        script need not count the pauses itself."""
        engine = self.engine
        views, holds = stored_views(
            self.store, jobs, engine.clock(), peaks_of(engine.live), engine.layout
        )
        worded(views, jobs, explainer(self.engine, holds))
        return views


@dataclass(frozen=True)
class _Judged:
    """What a submission's items are checked with, read on the loop (submission_check)."""

    batch: Batch
    settings: Policy
    never: Callable[[JobSpec], str | None]
    now: float


def _checked(items: Sequence[SubmitItem], deps: frozenset[int], judged: _Judged) -> CheckedJobs:
    """Each item's JobSpec, checked (submission_check's second part: no queue, no engine)."""
    batch, settings, never = judged.batch, judged.settings, judged.never
    new_jobs = []
    folders: set[str] = set()
    # Options every job has (`submit --file`'s flags, the form's boxes) are the batch's
    # mistake: "job 1 of the submission: this job can never run" blamed one for all.
    alike = shared_options(items)  # checked once; its folder and verdict kept for the items
    if alike and (reason := never(spec_from_item(alike, batch.shared(), settings, folders))):
        raise InvalidValue(batch.never_runs(None, reason))
    for n, item in enumerate(items, 1):
        spec = spec_from_item(item, batch.where(n), settings, folders)
        if reason := never(spec):
            raise InvalidValue(batch.never_runs(n, reason))  # only the daemon can check
        new_jobs.append(NewJob(spec, item.priority, item.hold, _future(item.begin, judged.now)))
    if len(new_jobs) > 1 and (clash := shared_file([new.spec for new in new_jobs])):
        path, first, second = clash
        raise InvalidValue(sharing(path, batch.two(first + 1, second + 1)))
    return CheckedJobs(items, new_jobs, deps)


def _future(begin: float | None, now: float) -> float | None:
    """A `--begin` time still to come (one that has passed queues the job at once)."""
    return begin if begin is not None and begin > now else None
