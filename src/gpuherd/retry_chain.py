"""The jobs a `retry` runs again ahead of a job that waits for jobs that ended otherwise than
it waits for: of a chain 18 <- 19 <- 20 whose job 18 failed, `gpuherd retry 19 20` is refused
for job 19, and `gpuherd retry 18 19 20` runs the chain again; of a job 5 `--after 3,4`
whose jobs 3 and 4 both failed, `gpuherd retry 3 4 5` (`retry 3 5` is refused: job 4 stays
failed). However a job of the chain was cancelled, what it waits for that ended so is named
too, as `retry` refuses it alone: of 18 <- 19 <- 20 whose job 19 was cancelled by the user,
job 18 failing only after, `gpuherd retry 18 19 20` (`retry 19 20` is refused for job 19).
A chain `retry` itself refuses part of (a job of it waits for one removed since, or
is an older run of a sweep point: older_than) is not named to retry (Rerun.blocked)."""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from gpuherd.core.lifecycle import Rerun
from gpuherd.core.model import Job
from gpuherd.core.retry_blocked import Blocked, older_run, point_of
from gpuherd.core.states import FINISHED_STATES, JobState, OutcomeKind
from gpuherd.store import Store
from gpuherd.sweep_folders import named_job

Newest = dict[str, dict[str, int]]
"""Per sweep, read once: the newest job of each of its points (Store.newest_runs)."""


def reruns(store: Store, job_ids: Iterable[int]) -> dict[int, Rerun]:
    """For each of `job_ids`, what a retry must run again ahead of it (core/lifecycle.Rerun):
    every job it waits for that ended otherwise than it waits for, and of those that wait in
    turn for one that ended so (cancelled as it did, or by the user before it did: `retry`
    refuses both), theirs, each once. Each job's read once, however many jobs
    wait for it (a sweep of 1,000 points `--after` one failed job)."""
    return _Walk(store).reruns(job_ids)


def newer_run(store: Store, job: Job, newest: Newest) -> int | None:
    """Of an older run of a sweep point, the job that ran that point since (its folder is
    that job's now: a retry would run the point twice in it); None if `job` is the newest."""
    sweep, folder = job.spec.sweep, job.spec.folder
    if not (sweep and folder):
        return None
    if sweep not in newest:
        newest[sweep] = store.newest_runs(sweep)
    newer = newest[sweep].get(folder, job.id)
    return newer if newer != job.id else None


def removed_run(store: Store, job: Job) -> int | None:
    """Of a sweep point's job that ran, the job whose run the point's folder holds (its
    job.json names it) where herd.db no longer has that job: a rerun of the point that
    succeeded, then `clean --state succeeded` (or herd.db restored from an older backup).
    newer_run, which reads herd.db, does not find it, and a retry moved that run aside to
    run the point again. One job.json read; None where the folder holds its own run, none,
    or a job herd.db still has."""
    folder = job.spec.folder
    if not (job.spec.sweep and folder and job.attempt):
        return None
    named = named_job(Path(folder))
    if not isinstance(named, int) or named == job.id or store.known_ids([named]):
        return None
    return named


def older_than(store: Store, job: Job, newest: Newest) -> str | None:
    """Why `retry` refuses `job` as an older run of its sweep point (core/retry_blocked:
    older_run): a newer job of the point, or the run of one removed since, has its folder;
    None if neither does."""
    if newer := newer_run(store, job, newest):
        return older_run(job, newer)
    if gone := removed_run(store, job):
        return older_run(job, gone, gone=True)
    return None


def removed_dependency(store: Store, job: Job) -> tuple[int, str] | None:
    """Of a job cancelled as one it waited for ended otherwise (dependency_failed), the
    first job it waits for to succeed or to fail that was removed since, not having ended
    so, and the option it was named by (one of --after-any met it by any end; one removed
    once it had met it is known not to hold it back: Store.delete_jobs); None if none was."""
    if job.outcome is None or job.outcome.kind is not OutcomeKind.DEPENDENCY_FAILED:
        return None
    after, after_fail = job.spec.after, job.spec.after_fail
    waited = [(d, "--after") for d in after] + [(d, "--after-fail") for d in after_fail]
    there = store.known_ids([dep for dep, _ in waited])
    unmet = store.deps_kept(job.id)  # (one removed once it had met it is not)
    gone = (w for w in sorted(waited) if w[0] not in there and w[0] in unmet)
    return next(gone, None)


class _Walk:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.ended: dict[int, list[tuple[int, JobState]]] = {}
        """Per job read: the jobs it waits for that ended, yet unmet (ascending ids)."""
        self.cascaded: dict[int, bool] = {}
        """Per dependency: whether it was cancelled as one it waited for ended so."""
        self.behind: dict[int, frozenset[int]] = {}
        """Per dependency: it, and what a retry must run again ahead of it."""
        self.jobs: dict[int, Job] = {}
        """Per dependency read: the job."""
        self.newest: Newest = {}
        self.refused: dict[int, Blocked | None] = {}
        """Per dependency: why `retry` refuses it (Blocked, its `again` left empty), if so."""

    def reruns(self, job_ids: Iterable[int]) -> dict[int, Rerun]:
        found: dict[int, Rerun] = {}
        for job_id in job_ids:
            deps = [dep for dep, _ in self._ended(job_id)]
            if not deps:
                continue
            ids = self._ordered(frozenset().union(*map(self._behind, deps)))
            first = deps[0]  # (its cause read, and none once that was queued again meanwhile)
            cause = next(iter(self._ended(first)), None) if self.cascaded[first] else None
            states = {d: s for i in (job_id, *ids) for d, s in self.ended.get(i, ())}
            succeeded = tuple(i for i in ids if states.get(i) is JobState.SUCCEEDED)
            found[job_id] = Rerun(ids, cause, succeeded, self._blocked(ids))
        return found

    def _blocked(self, ids: tuple[int, ...]) -> Blocked | None:
        """The first of `ids` (a chain, in order) that `retry` refuses, with the ones of them
        that wait for it through the chain: to be submitted again, as it is if removed."""
        for i, job_id in enumerate(ids):
            if job_id not in self.refused:  # (read once, however many chains hold it)
                self.refused[job_id] = self._refused(job_id)
            if found := self.refused[job_id]:
                behind = {job_id}
                for later in ids[i + 1 :]:  # (ordered: the ones waited for come first)
                    if any(d in behind for d, _ in self.ended.get(later, ())):
                        behind.add(later)
                again = sorted(behind - ({job_id} if found.newer else set()))
                return replace(found, again=tuple(again))
        return None

    def _refused(self, job_id: int) -> Blocked | None:
        """Why `retry` refuses the job (of a chain), if it does."""
        job = self.jobs.get(job_id)
        if job is None:
            return None
        removed = removed_dependency(self.store, job)
        gone = None
        if (newer := newer_run(self.store, job, self.newest)) is None:
            newer = gone = removed_run(self.store, job)  # (its folder holds a removed one's)
        point = (point_of(job), newer) if newer else None
        return Blocked(job_id, removed, point, bool(gone)) if removed or point else None

    def _ended(self, job_id: int) -> list[tuple[int, JobState]]:
        if job_id not in self.ended:
            unmet = ((dep, JobState(state)) for dep, state, _ in self.store.unmet_deps(job_id))
            self.ended[job_id] = [(dep, s) for dep, s in unmet if s in FINISHED_STATES]
        return self.ended[job_id]

    def _behind(self, dep_id: int) -> frozenset[int]:
        if dep_id not in self.behind:
            self.behind[dep_id] = frozenset([dep_id])  # (deps have no cycle: a guard still)
            job = self.store.get_jobs([dep_id]).get(dep_id)
            if job:
                self.jobs[dep_id] = job
            self.cascaded[dep_id] = bool(
                job
                and job.state is JobState.CANCELLED
                and job.outcome
                and job.outcome.kind is OutcomeKind.DEPENDENCY_FAILED
            )
            # Walked into whenever it waits for one that ended so, as `retry` refuses it then
            # (service_jobs._dead_dependency): also cancelled by the user, or failed, before.
            if job and self._ended(dep_id):
                ahead = (self._behind(dep) for dep, _ in self._ended(dep_id))
                self.behind[dep_id] = frozenset([dep_id]).union(*ahead)
        return self.behind[dep_id]

    def _ordered(self, ids: frozenset[int]) -> tuple[int, ...]:
        """`ids`, each after the ones of them it waits for, else by ascending id: ascending,
        as `gpuherd retry` takes them, unless an edit made a job wait for a later one."""
        waits = {i: {dep for dep, _ in self.ended.get(i, ()) if dep in ids} for i in ids}
        ready = [i for i in ids if not waits[i]]
        heapq.heapify(ready)
        order: list[int] = []
        while ready:
            order.append(done := heapq.heappop(ready))
            for job_id, deps in waits.items():
                if done in deps:
                    deps.discard(done)
                    if not deps:
                        heapq.heappush(ready, job_id)
        return tuple(order)
