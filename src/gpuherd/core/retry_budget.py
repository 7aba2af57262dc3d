"""A job's automatic retries (--retries; --oom-retry's own count): how many it has left.
They count from Job.retries_from: its first attempt, or the one its last retry by hand
started, which gives them anew (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gpuherd.core.idspec import format_ids
from gpuherd.core.model import Job, JobSpec, Outcome
from gpuherd.core.states import FINISHED_STATES, WAITING_STATES, OutcomeKind
from gpuherd.core.units import format_given

OOM_RETRIES = 2


def oom_retries(spec: JobSpec) -> int:
    """Retries a --oom-retry job has for out-of-memory failures (each with more --mem)."""
    return max(spec.retries, OOM_RETRIES)


def retries_left(job: Job, outcome: Outcome | None = None) -> int:
    """Automatic retries still allowed after the current attempt, counted from the attempt
    the job's last retry by hand started (Job.retries_from; 1 if none).

    With --oom-retry, a CUDA out-of-memory failure may be retried OOM_RETRIES times even
    when --retries is lower: growing the request is the point of the option.
    """
    limit = job.spec.retries
    if outcome is not None and outcome.kind is OutcomeKind.CUDA_OOM and job.spec.oom_retry:
        limit = oom_retries(job.spec)
    return max(0, limit + job.retries_from - job.attempt)


def retries_to_come(job: Job) -> int | None:
    """The automatic retries (--retries) a job may still get, as `show` says them: after the
    attempt it runs, or, waiting, the one it runs next. None once it ended: a retry by hand
    would give it them all anew (put_back_by_hand)."""
    if job.state in FINISHED_STATES:
        return None
    upcoming = job.attempt + (job.state in WAITING_STATES)
    return max(0, job.spec.retries + job.retries_from - upcoming)


def retry_over_budget(job: Job, spec: JobSpec) -> str | None:
    """What an edit giving a job waiting to retry (queued or held, its failed attempt's end
    kept) the `spec` adds when that retry is more than spec's --retries allow: it still runs,
    as an edit never ends a job, and `kill` is the way not to run it. None otherwise."""
    if job.state not in WAITING_STATES or job.outcome is None:
        return None
    if retries_left(replace(job, spec=spec), job.outcome) > 0:
        return None
    return f"the retry it waits for still runs: gpuherd kill {job.id} cancels it"


def idle_retry_delay(jobs: Sequence[tuple[int, JobSpec]]) -> str | None:
    """What to say of jobs (id, spec) given a --retry-delay yet never retried (--retries 0,
    no --oom-retry): the delay waits before a retry, so it does nothing, which a submission
    took without a word. None when no job is so."""
    idle = [(job_id, spec.retry_delay or 0) for job_id, spec in jobs if _delay_idle(spec)]
    if not idle:
        return None
    ids, delays = format_ids([job_id for job_id, _ in idle]), {delay for _, delay in idle}
    one = len(idle) == 1
    delay = f" {format_given(delays.pop())}" if len(delays) == 1 else ""
    return (
        f"{'job' if one else 'jobs'} {ids} {'is' if one else 'are'} never retried (--retries 0),"
        f" so {'its' if one else 'their'} --retry-delay{delay} does nothing: give --retries N "
        f"with it (while {'it waits' if one else 'they wait'}: gpuherd edit {ids} --retries 2)"
    )


def _delay_idle(spec: JobSpec) -> bool:
    return bool(spec.retry_delay) and spec.retries == 0 and not spec.oom_retry
