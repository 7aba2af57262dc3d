"""`edit`: waiting jobs change what they ask for, the folder they run in, the jobs they wait
for and when they may begin; each keeps its place in the queue. A part of `Service`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from gpuherd.core.deps import KINDS, kept_list_contradiction, never_met
from gpuherd.core.edit import (
    BEGIN,
    begin_edit,
    check_edit,
    cpu_only_kept,
    dependency_cycle,
    describe_edit,
    edit_spec,
)
from gpuherd.core.lifecycle import retry_wait
from gpuherd.core.model import DEFAULT_GRACE, Job, JobSpec
from gpuherd.core.output_files import recorded_or_named, shared_file, sharing
from gpuherd.core.retry_budget import retry_over_budget
from gpuherd.core.states import JobState
from gpuherd.core.when import format_moment, said_in
from gpuherd.edit_warnings import EditedJob
from gpuherd.errors import Conflict, HerdError, InvalidValue
from gpuherd.executors.base import NO_USER_FILES
from gpuherd.service_jobs import JobVerbs
from gpuherd.service_reasons import refusals
from gpuherd.submission import check_spec, output_file, unknown_jobs
from gpuherd.submission_folders import check_cwd
from gpuherd.submission_text import (
    check_given,
    reject_bad_names,
    reject_nul,
)
from gpuherd.wire import ActionResult


class EditVerbs(JobVerbs):
    def edit(
        self,
        ids: Sequence[int],
        changes: Mapping[str, Any],
        clear: Sequence[str],
        edited: list[EditedJob] | None = None,
    ) -> list[ActionResult]:
        """Change what waiting jobs ask for (core.edit's EDITABLE fields, and BEGIN); their
        place in the queue stays. `edited` gets each job changed, for the edit's warnings,
        said once for all its jobs (edit_warnings.py; an edit in pieces: once for them all)."""
        try:
            check_edit(changes, clear)
        except ValueError as exc:
            raise InvalidValue(str(exc)) from None
        engine = self.engine
        if not engine.executor.user_files and (changes.get("output") or changes.get("error")):
            raise InvalidValue(NO_USER_FILES)
        # (an edit of a job that ran changes its next attempts' files: each attempt recorded
        # its own as it started, where `log --attempt N` reads them)
        if len(ids) > 1 and {"output", "error", "name"} & {*changes, *clear}:
            self._refuse_one_file(ids, changes, clear)
        never = refusals(engine)
        edited = [] if edited is None else edited
        results = self._each(ids, lambda job: self._edit_one(job, changes, clear, never, edited))
        if {BEGIN, "retry_delay"} & {*changes, *clear}:
            engine.begins.arm()  # the earliest --begin time (or end of a retry's wait) moved
        engine.wake()  # a job asking for less, or released, may fit now
        return results

    def _refuse_one_file(
        self, ids: Sequence[int], changes: Mapping[str, Any], clear: Sequence[str]
    ) -> None:
        """InvalidValue, nothing edited, when two of the jobs would write one output file, as
        for a submission's jobs (core/output_files.shared_file): by new files, or by new names
        where their files are named after them (%x). Only the edit's jobs are compared, as a
        submission's are among themselves. A job the edit refuses for another reason is left
        to say it, in its own line."""
        jobs, specs = [], []
        found = self.store.get_jobs(list(dict.fromkeys(ids)))
        for job in sorted(found.values(), key=lambda job: job.id):
            try:
                spec, _ = edit_spec(job.spec, _outputs_made_absolute(job, changes), clear)
            except (HerdError, ValueError):
                continue
            jobs.append(job)
            specs.append(spec)
        if clash := shared_file(specs):
            path, first, second = clash
            named = not {"output", "error"} & {*changes, *clear}  # (by their new names alone)
            pair = f"jobs {jobs[first].id} and {jobs[second].id}"
            raise InvalidValue(sharing(path, pair, by_name=named))

    def _edit_one(
        self,
        job: Job,
        changes: Mapping[str, Any],
        clear: Sequence[str],
        never: Callable[[JobSpec], str | None],
        changed: list[EditedJob],
    ) -> str:
        self._refuse_ended(job, "edit it")
        self._refuse_unless_waiting(job, "edit", "only queued or held jobs can be edited")
        now = self.engine.clock()
        spec, fields = edit_spec(job.spec, _outputs_made_absolute(job, changes), clear)
        moved = None
        if BEGIN in changes or BEGIN in clear:
            moved = begin_edit(job.state, job.release_at, changes.get(BEGIN), now)
        if not fields and moved is None:
            return "unchanged"
        retry_moved, retry_said = _retry_wait_edited(job, spec, fields, moved, now)
        # Refusals of a value begin with the job, so that `edit 1-2000 --mem 2GiB` of CPU-only
        # jobs says one line for them all (idspec.summarize), naming them.
        where = f"job {job.id}: "
        reject_nul(
            where,
            command=spec.command,
            name=spec.name or "",
            project=spec.project or "",
            env_overrides=spec.env_overrides,
            cwd=spec.cwd,
        )
        reject_bad_names(where, spec.env_overrides)
        check_given(where, changes)
        if said := kept_list_contradiction(job.id, spec.after, spec.after_fail, {*changes, *clear}):
            raise InvalidValue(said)  # (before check_spec's words, which miss the kept list)
        if said := cpu_only_kept(job.id, spec, {*changes, *clear}):
            raise InvalidValue(said)  # (before check_spec's, which told it to drop them)
        # A grace of 0 an older gpuherd stored (its APIs took one) stays the job's, as a retry
        # keeps it: an edit of other fields is not refused for a value it did not type.
        check_spec(spec if "grace" in fields else replace(spec, grace=DEFAULT_GRACE), where)
        if "cwd" in fields:
            check_cwd(spec.cwd, where)
        if any(kind in fields for kind in KINDS):
            self._check_dependencies(job.id, spec)
        # A value no job can have here: InvalidValue (422), as a submission's `this job can
        # never run`; it was a Conflict (409), and job.edit(gpus=3) raised what a job that
        # runs raises, where submit(gpus=3) raised InvalidValue.
        if reason := never(spec):
            raise InvalidValue(f"job {job.id} would never run: {reason}")
        over = retry_over_budget(job, spec) if "retries" in fields else None
        words = functools.partial(_edit_words, job, spec, fields, moved, changes.get(BEGIN), over)
        what = words(retry_said, now)  # (the answer: in the asker's zone, api/askers_zone.py)
        with said_in(None):  # the history: in the daemon's, as every reader's was before
            stored = words(_retry_wait_edited(job, spec, fields, moved, now)[1], now)
        # Held or released by its new time; else its state, and when it was queued (its wait
        # counts towards reserving GPUs), stay as they are.
        edited = {name: getattr(spec, name) for name in fields}
        if moved is not None:
            edited["release_at"] = moved[1]
        edited.update(retry_moved)
        if job.attempt and {"output", "error", "name"} & set(fields):
            self._pin_attempt_files(job)
        self.store.update_job(
            job.id,
            now,
            "edit",
            to_state=None if moved is None else moved[0],
            detail=stored,
            from_state=job.state,
            **edited,
        )
        if any(kind in fields for kind in KINDS):
            self.store.replace_deps(job.id, spec, now)
        state = job.state if moved is None else moved[0]
        self.engine.publish({"id": job.id, "state": state.value, "event": "edit"})
        changed.append(EditedJob(job.id, spec, frozenset(fields), job.outcome is not None))
        return f"edited ({what})"

    def _pin_attempt_files(self, job: Job) -> None:
        """Record the files of the job's attempts that recorded none (begun before attempts
        did: schema 10), as the job's files before this edit name them. Their readers (`log
        --attempt N`, show) and the next attempt's `written` take such an attempt's files from
        the job's as they are now: after an edit of its --output, --error or --name (%x),
        they would read the edit's new file for it, and the next attempt add to that new
        file rather than empty it. Before schema 10 such an edit of a job that ran was
        refused: the files its spec names now are the ones those attempts wrote."""
        for attempt in self.store.attempts(job.id):
            if attempt.files is None:
                out, err = recorded_or_named(job.spec, job.id, attempt.number, None)
                self.store.update_attempt(job.id, attempt.number, stdout_file=out, stderr_file=err)

    def _check_dependencies(self, job_id: int, spec: JobSpec) -> None:
        """The checks of a submission's dependencies, and two of an edit's own: the job must
        not wait for itself (a value no job can have: InvalidValue, 422, as a submission's
        are; it was a Conflict, 409, as if the job's state were at fault) or for a job that
        waits for it (both would wait for ever: a Conflict, with the queue as it is), and a
        job that already ended otherwise than it is to wait for (`after` one that failed,
        `after_fail` one that succeeded) would cancel it at once: refused, so an edit never
        ends a job (a submission stores it, then cancels it: Service.submit)."""
        deps = sorted({dep for kind in KINDS for dep in getattr(spec, kind)})
        found = self.store.get_jobs(deps)
        missing = [dep for dep in deps if dep not in found]
        if missing:
            raise unknown_jobs(missing, [spec])
        dep = dependency_cycle(job_id, deps, self.store.waiting_for(job_id))
        if dep == job_id:
            raise InvalidValue(f"job {job_id} cannot wait for itself: name other jobs")
        if dep is not None:
            raise Conflict(
                f"job {job_id} cannot wait for job {dep}: job {dep} already waits for it "
                "(directly or through other jobs), and the two would wait for each other "
                "for ever"
            )
        ended = [
            found[d]
            for kind in KINDS
            for d in getattr(spec, kind)
            if never_met(kind, found[d].state)
        ]
        if ended:
            bad = ended[0]
            then = (
                "--after-fail waits for a failure"
                if bad.state is JobState.SUCCEEDED
                else f"gpuherd retry {bad.id} first, then edit {job_id}"
            )
            raise Conflict(
                f"job {job_id} would be cancelled at once: job {bad.id}, which it is to wait "
                f"for, already {bad.state.value} ({then})"
            )


def _outputs_made_absolute(job: Job, changes: Mapping[str, Any]) -> Mapping[str, Any]:
    """`changes` with a new `output` or `error` file checked and made absolute as a
    submission's is: a relative one is taken from the folder the job runs in (its new one,
    with `cwd` in `changes`), whoever edits it (the CLI, the dashboard, the Python API)."""
    given = {name: changes[name] for name in ("output", "error") if name in changes}
    if not given:
        return changes
    cwd, where = changes.get("cwd", job.spec.cwd), f"job {job.id}: "  # (a refusal names it)
    reject_nul(where, cwd=cwd, **given)
    made = {name: output_file(path, cwd, name, where) for name, path in given.items()}
    return {**changes, **made}


def _retry_wait_edited(
    job: Job,
    spec: JobSpec,
    fields: Sequence[str],
    moved: tuple[JobState, float | None] | None,
    now: float,
) -> tuple[dict[str, float | None], list[str]]:
    """Of a queued job waiting to retry (--retry-delay) whose delay the edit changes: the
    columns that say when it may start, and what the answer adds. Its wait counts from its
    attempt's end, as the old delay's did (lifecycle.retry_wait): kept as it was, `ls` paired
    the old delay's time with the new delay, and a delay cleared or shortened still waited
    out the old one. Nothing for a job the edit gives a --begin time (`moved`: it holds it
    until then) or that has no wait (a held job: its release runs it at once)."""
    if "retry_delay" not in fields or job.state is not JobState.QUEUED or moved is not None:
        return {}, []
    if job.release_at is None or job.ended_at is None:
        return {}, []
    due, _ = retry_wait(job.ended_at, spec.retry_delay or 0, now)
    if due is None:  # it may start from now on (reserve-after counts its wait from then)
        return {"release_at": None, "queued_at": now}, ["no longer waits to retry"]
    return {"release_at": due}, [f"retrying at {format_moment(due, now)}"]


def _edit_words(
    job: Job,
    spec: JobSpec,
    fields: Sequence[str],
    moved: tuple[JobState, float | None] | None,
    begin: float | None,
    over: str | None,
    retry_said: list[str],
    now: float,
) -> str:
    """What an edit changed: `retries 0 -> 2, retrying at 23:30`."""
    return ", ".join(
        ([describe_edit(job.spec, spec, fields)] if fields else [])
        + ([_describe_begin(job, moved[0], begin, now)] if moved else [])
        + retry_said
        + ([over] if over else [])
    )


def _describe_begin(job: Job, state: JobState, asked: float | None, now: float) -> str:
    """`begin none -> 23:30`, `begin 23:30 -> none, released`: an edit's change of its time
    (`asked`: the --begin given; None for --clear begin). A job has one hold, by hand or until
    a time, and each replaces the other (as `hold` drops a time): so the answer says when a
    time ends a hold by hand, and why a time released the job (it is past)."""
    held_until = job.release_at if job.state is JobState.HELD else None
    before = format_moment(held_until, now) if held_until is not None else "none"
    after = format_moment(asked, now) if asked is not None else "none"
    said = f"begin {before} -> {after}"
    if state is JobState.QUEUED:
        return said + (", already past: released" if asked is not None else ", released")
    if job.state is JobState.HELD and held_until is None:
        return said + ": held until then, no longer until released"
    return said
