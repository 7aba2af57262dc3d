"""What an ended attempt means for its job: the outcome, and the state that follows (pure)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from gpuherd.core.idspec import format_ids
from gpuherd.core.model import Job, Outcome
from gpuherd.core.retry_blocked import Blocked, blocked_said, retried_ids, submit_again
from gpuherd.core.retry_budget import retries_left
from gpuherd.core.states import GPUHERD_STOPS, Event, JobState, OutcomeKind, what_it_is
from gpuherd.core.units import LONGEST, format_duration, format_given
from gpuherd.core.when import format_moment

VANISHED = "the process vanished without an exit status"
"""Why an attempt is lost, where its executor does not know more."""
JUST_ENDED = 1.0
"""Seconds within which an attempt's end is heard as it happens (a watched end): its retry
waits the whole --retry-delay, said as typed."""
PUT_BACK: dict[str, None] = {"ended_at": None, "outcome": None, "pid": None}
"""The job's fields a `retry` clears, of a finished job or a running one once it stopped: the
job has not ended; how its run ended, and its process, are its attempt's (`show`'s attempts).
Kept, a job put back held said "cancelled by the user", one queued again `killed`."""


def put_back_by_hand(job: Job) -> dict[str, object]:
    """What a retry by hand (`retry`, `retry --hold`, of a finished job or a running one)
    changes: PUT_BACK, and its retries counted anew from the attempt the retry starts. The
    user retries once the cause is fixed, and expects --retries to hold as for a new
    submission (pueue's restart, Slurm's requeue), not a job that fails for good at once."""
    return {**PUT_BACK, "retries_from": job.attempt + 1}


@cache
def _cuda_oom() -> re.Pattern[str]:
    # Compiled on first use, not at import: only a failed attempt is checked.
    return re.compile(
        # PyTorch (also "CUDA error: out of memory" from cuBLAS, cuDNN or a new context),
        # the driver and runtime, JAX/XLA, TensorFlow ("OOM when allocating tensor ...").
        r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|"
        r"CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|"
        r"RESOURCE_EXHAUSTED: Out of memory|OOM when allocating"
    )


@dataclass(frozen=True)
class Ended:
    """An attempt's end as observed: exit code or signal, both None when it vanished."""

    exit_code: int | None
    signal: int | None
    stop_reason: OutcomeKind | None = None
    """Why gpuherd itself stopped it, if it did (GPUHERD_STOPS), or None."""
    requeue: bool = False
    """gpuherd stopped it to queue it again (`retry` of a running job)."""
    why: str = ""
    """Of one that vanished, why, where its executor knows (ExitStatus.why)."""


@dataclass(frozen=True)
class Next:
    event: Event
    state: JobState
    outcome: Outcome
    cancel_waiters: bool
    """The job ended for good: jobs waiting for it to end otherwise (`--after` a job that
    failed, `--after-fail` one that succeeded) end as dependency_failed."""


def classify(ended: Ended, stderr_tail: str = "") -> Outcome:
    if ended.stop_reason in GPUHERD_STOPS:
        # Stopped by gpuherd: that is why it ended, also when no exit status was seen (a
        # job re-attached after a restart is not the daemon's child, and a command that
        # replaced its shell with `exec` records none).
        return Outcome(ended.stop_reason, ended.exit_code, ended.signal)
    if ended.exit_code is None and ended.signal is None:
        return Outcome(OutcomeKind.LOST, message=ended.why or VANISHED)
    if ended.signal is not None:
        return Outcome(OutcomeKind.SIGNAL, signal=ended.signal)
    if ended.exit_code != 0 and _cuda_oom().search(stderr_tail):
        return Outcome(OutcomeKind.CUDA_OOM, ended.exit_code, message="CUDA out of memory")
    return Outcome(OutcomeKind.EXIT, ended.exit_code)


def after_attempt(job: Job, ended: Ended, outcome: Outcome) -> Next:
    """The state a running (or paused) job moves to once its attempt has ended."""
    if ended.requeue:
        return Next(Event.RETRY, JobState.QUEUED, outcome, cancel_waiters=False)
    if outcome.success:
        return Next(Event.SUCCEED, JobState.SUCCEEDED, outcome, cancel_waiters=True)
    if outcome.kind is OutcomeKind.KILLED:
        return Next(Event.KILL, JobState.KILLED, outcome, cancel_waiters=True)
    if retries_left(job, outcome) > 0:
        return Next(Event.RETRY, JobState.QUEUED, outcome, cancel_waiters=False)
    if outcome.kind is OutcomeKind.LOST:
        return Next(Event.LOSE, JobState.LOST, outcome, cancel_waiters=True)
    return Next(Event.FAIL, JobState.FAILED, outcome, cancel_waiters=True)


def retry_wait(ended_at: float, delay: float, now: float) -> tuple[float | None, str]:
    """When the retry of an attempt that ended at `ended_at` may start, by its --retry-delay
    counted from that end (None: now), and what the `retry` event adds to say so. The end,
    not when it was heard of: a restart that finds an attempt failed an hour ago, while no
    daemon ran, with `--retry-delay 10m`, runs it now, not 10 minutes after the restart."""
    due, given = ended_at + delay, format_given(delay)
    if due <= now:
        return None, f"; its --retry-delay {given} has passed since it ended"
    if now - ended_at < JUST_ENDED:
        return due, f"; runs again in {given} (--retry-delay)"
    return due, f"; runs again in {format_duration(due - now)} (--retry-delay {given} from its end)"


def grow_request(
    mem: int | None, peak: int, most: int | None, ran_on: int | None = None
) -> tuple[int | None, bool]:
    """The request after a CUDA out-of-memory failure, and whether it runs alone on its GPUs:
    the measured peak when it exceeds the request, at least 1.5x the request; more than
    `most` (reasons_never.most_mem: the largest --mem it could ask for and still run; None:
    no size bounds it), `most` itself, alone (never on a GPU smaller than it ran out of
    memory on); with neither known, alone on GPUs as large as those it ran out on (`ran_on`:
    what the smallest of them hands out; None: unknown)."""
    grown = max(peak, int((mem or 0) * 1.5))
    if grown <= (mem or 0):
        return ran_on, True
    if most is not None and grown > most:
        return most, True
    return grown, False


def stop_said(reason: OutcomeKind, requeue: bool) -> str:
    """A stop under way as `ls`, the job's events and the refusals name it: `killed`,
    `killed, then queued again` (a `retry` of a running job), `timeout`."""
    return reason.value + (", then queued again" if requeue else "")


@dataclass(frozen=True)
class Stopping:
    """A job in the grace of a stop: SIGTERM sent, its SIGKILL due in `left` seconds."""

    reason: OutcomeKind
    requeue: bool
    left: float


STOPPED_BY = {
    OutcomeKind.TIMEOUT: "--timeout",
    OutcomeKind.STALLED: "--no-output-timeout",
    OutcomeKind.LOG_TOO_LARGE: "--max-log-size",
}


def stop_begun(grace: float) -> str:
    """What a kill of a running job answers: `stopping (SIGTERM, then SIGKILL after 10s)`."""
    then = f"after {grace:g}s" if grace > 0 else "at once"
    return f"stopping (SIGTERM, then SIGKILL {then})"


def chosen_grace_refused(grace: float) -> str | None:
    """Why a grace chosen at a stop (`kill --grace`) is refused; None if it is taken."""
    if 0 <= grace <= LONGEST:  # (NaN is neither)
        return None
    return (
        f"grace must be 0 to 100 years (the seconds between SIGTERM and SIGKILL; 0: SIGKILL "
        f"at once), got {grace:g}"
    )


def stop_mode_grace_refused(mode: str, grace: float) -> str | None:
    """Why a daemon stop in `mode` (leave, drain, kill) refuses a chosen `grace`; None if
    it takes it: only a kill stops jobs."""
    if mode != "kill":
        return f"grace goes with the mode kill (--kill), not {mode}: leave it out"
    return chosen_grace_refused(grace)


def killed_while_stopping(stop: Stopping, was: float | None = None) -> str:
    """What a kill of a job in the grace of `stop` answers. Its SIGKILL stays when it was due,
    unless the kill chose a grace: then `stop` is the stop after it, and `was` the seconds
    its SIGKILL was due in before. A stop that was to end it otherwise (a retry's, queued
    again; a timeout's or a stall's, retried if it has retries left) now ends it killed: said
    so, as "already stopping" told a user who had just turned a retry back into a kill that
    nothing had changed."""
    left = f"SIGKILL in {stop.left:.1f}s"
    if was is not None:  # moved: said against when it was due, so the change shows
        now = "SIGKILL at once" if stop.left <= 0 else left
        left = f"{now}, not in {was:.1f}s"
    if stop.requeue:
        return f"stopping ({left}): it ends killed, no longer queued again"
    if stop.reason in STOPPED_BY:
        return f"stopping ({left}): it ends killed, no longer by its {STOPPED_BY[stop.reason]}"
    return f"already stopping ({left})"


TAKE_AN_ENDED_JOB = ("rm", "retry --hold")
"""Verbs refused while a job is being stopped that work once it has ended."""
TAKE_A_WAITING_JOB = ("hold", "edit", "move")
"""Verbs refused while a job is being stopped that work once it waits: once it has ended and
`retry --hold` has put it back held (queued again by a retry, it would start again at once)."""


def ended_refused(job_id: int, state: JobState, to: str) -> str:
    """Why a verb of waiting jobs (edit, move, priority; `to`: what it does, "move it") is
    refused for a job that ended, and the way that works: `retry --hold` puts it back held,
    the verb then takes it, and `release` runs it (pueue's `restart --edit`). A bare "already
    ended (succeeded)" left the user to find that way."""
    return (
        f"job {job_id} already ended ({state.value}): `gpuherd retry --hold {job_id}` puts it "
        f"back held, to {to} before it runs again (`gpuherd release {job_id}` runs it)"
    )


def refused_while_stopping(job_id: int, verb: str, stop: Stopping) -> str:
    """Why `verb` is refused for job `job_id` in the grace of `stop`, and what works then: the
    verb once the stop is over (the job queued again, or ended), or the verbs that change the
    stop itself. Told as to a running job, these gave advice the stop had made stale (`hold`:
    "it can: kill, pause, retry", pause refused then; `rm`: "kill it first", done already)."""
    said = stop_said(stop.reason, stop.requeue)
    head, by_kill = f"job {job_id} is being stopped ({said})", f"its SIGKILL in {stop.left:.1f}s"
    if verb == "pause":  # SIGSTOP would freeze it in the grace it has to save its work
        then = ", then it is queued again" if stop.requeue else ""
        return f"{head}: it is not paused during its grace; it ends by itself or at {by_kill}{then}"
    if stop.requeue and verb in (*TAKE_AN_ENDED_JOB, *TAKE_A_WAITING_JOB):
        # Queued again, it starts again in the same tick on the GPUs its end frees: there is
        # no moment to act in (and `retry --hold` never takes a queued job). A kill makes the
        # stop end it instead (the last word wins); then the verb for an ended job works.
        then = "rm" if verb == "rm" else "retry --hold"
        steps = f"gpuherd kill {job_id}; gpuherd wait -q {job_id}; gpuherd {then} {job_id}"
        done = "removes it" if verb == "rm" else "puts it back held"
        to = f", to {verb} it" if verb in ("edit", "move") else ""
        return f"{head}: it starts again as soon as it is queued; `{steps}` {done}{to}"
    if verb in TAKE_AN_ENDED_JOB:
        waited = f"gpuherd wait -q {job_id}; gpuherd {verb} {job_id}"
        return f"{head}: {verb} it once it has ended, or `{waited}`"
    if verb in TAKE_A_WAITING_JOB:
        to = "" if verb == "hold" else f", to {verb} it"
        return f"{head}: once it has ended, `gpuherd retry --hold {job_id}` puts it back held{to}"
    # What changes the stop: a kill (no longer queued again), a retry (queued again after it);
    # a kill during a kill, or a retry during a retry, changes nothing and is not offered.
    can = "kill" if stop.requeue else "retry"
    if not stop.requeue and stop.reason is not OutcomeKind.KILLED:  # a timeout's, a stall's
        can = "kill, retry"  # (a kill then ends it killed)
    return f"job {job_id}: cannot {verb} a job that is being stopped ({said}) (it can: {can})"


HELD_UNSTARTED = "not started, held as it was paused"
"""How the `retry-held` event of a job paused while it was starting, whose start then failed
late (NotStarted: a Ray node that left), begins. Queued again, its next start would run it
unpaused, where its user asked for it not to run: held, a `release` lets it run."""


def held_unstarted(job_id: int, message: str) -> str:
    """The detail of that event (`message`: why the start failed)."""
    return f"{HELD_UNSTARTED} (`gpuherd release {job_id}` runs it): {message}"


def dependency_failed(dep_id: int, dep_state: JobState) -> Outcome:
    """The outcome of a job cancelled as job `dep_id` ended in `dep_state`, not as it waited
    for: `job 12 ended (failed)` (`--after`), `job 12 ended (succeeded), ...` (`--after-fail`)."""
    said = f"job {dep_id} ended ({dep_state.value})"
    if dep_state is JobState.SUCCEEDED:
        said += ", and it waited for a failure (--after-fail)"
    return Outcome(OutcomeKind.DEPENDENCY_FAILED, message=said)


@dataclass(frozen=True)
class Rerun:
    """What a `retry` runs again ahead of a job that waits for jobs that ended otherwise than
    it waits for (never met: core/deps.never_met): for it to be able to run, each of them, and
    of those that wait in turn for one that ended so (cancelled as it did, dependency_failed,
    or by the user before it did), theirs (retry_chain.reruns)."""

    ids: tuple[int, ...]
    """Every such job, each once, the ones waited for first: as `gpuherd retry` takes them
    (ascending ids, unless an edit made a job wait for a later one)."""
    cause: tuple[int, JobState] | None = None
    """Of the job the hint names (the first that so ended), cancelled so itself: the job
    it waited for that ended so, and how."""
    succeeded: tuple[int, ...] = ()
    """Of `ids`, those that succeeded where a failure was waited for (--after-fail): their
    rerun lets the jobs waiting for them run only if it fails."""
    blocked: Blocked | None = None
    """The first of `ids` that `retry` refuses (none named then: the chain is submitted
    again)."""


def cancelled_at_once(
    job_ids: Sequence[int], dep_id: int, dep_state: JobState, rerun: Rerun | None = None
) -> str:
    """What a submission says of its jobs cancelled at once (dependency_failed), as job
    `dep_id`, which they wait for, already ended otherwise than they wait for: the same end
    as when it ends so a moment later (a script cannot tell which comes first), and how to
    run them again (with every job in `rerun`: `dep_id`'s alone by default)."""
    one = len(job_ids) == 1
    them = f"job {job_ids[0]} is" if one else f"jobs {format_ids(job_ids)} are"
    if dep_state is JobState.SUCCEEDED:  # (an --after-fail job's: nothing failed to act on)
        then = "--after-fail waits for a failure"
    elif rerun and rerun.blocked:
        then = f"{blocked_said(rerun.blocked)}; {submit_again(rerun.blocked, job_ids)}"
    else:
        then = _runs_again(rerun or Rerun((dep_id,)), job_ids)
    return (
        f"{them} cancelled at once: job {dep_id}, which {'it waits' if one else 'they wait'} "
        f"for, already {dep_state.value} ({then})"
    )


def retry_refused(job_id: int, dep_id: int, dep_state: JobState, rerun: Rerun | None = None) -> str:
    """Why `retry` of a job cancelled as dependency_failed is refused while job `dep_id`, which
    it waits for, stays in `dep_state`, an end that never lets it run: to retry both (all the
    jobs of `rerun`) runs the dependency again first. For an `--after-fail` job whose
    dependency succeeded, a rerun of that dependency lets it run only if the rerun fails:
    said so, not "retry both" alone (both would not run again: a second success cancels it
    again)."""
    rerun = rerun or Rerun((dep_id,), succeeded=(dep_id,) * (dep_state is JobState.SUCCEEDED))
    ended = f"job {job_id} waits for job {dep_id}, which ended ({dep_state.value}){_why(rerun)}"
    if rerun.blocked:  # no retry runs the chain: what does instead
        blocked = rerun.blocked
        return f"{ended}, and {blocked_said(blocked)}; {submit_again(blocked, [job_id])}"
    if dep_state is JobState.SUCCEEDED:  # (only an --after-fail job is left unmet by it)
        return (
            f"job {job_id} waits for job {dep_id} to fail (--after-fail), and it succeeded: "
            f"nothing failed to act on ({_runs_again(rerun, [job_id])})"
        )
    if len(rerun.ids) == 1:
        return f"{ended}: retry both (gpuherd retry {dep_id} {job_id})"
    command = f"gpuherd retry {retried_ids(rerun.ids, [job_id])}"
    if rerun.succeeded:
        command = _runs_again(rerun, [job_id])
    return f"{ended}: retry them all ({command})"


def _why(rerun: Rerun) -> str:
    """Of a job cancelled as one it waited for ended so (rerun.cause), how that one ended."""
    if rerun.cause and rerun.cause[1] is JobState.SUCCEEDED:  # nothing failed: said so
        return f" as job {rerun.cause[0]}, which it waited for to fail (--after-fail), succeeded"
    if rerun.cause:  # `dep_id` was cancelled as one it waited for ended badly
        return " as one it waited for did"
    return ""


def retry_refused_removed(job_id: int, dep_id: int, kind: str) -> str:
    """Why `retry` of a job cancelled as dependency_failed is refused once job `dep_id`, which
    it waits for (`kind`: its option), was removed (`gpuherd rm`): nothing tells any more
    whether it would have run, and a retry ran it as though that job had done what it waited
    for (a training run started without its data preparation)."""
    return (
        f"job {job_id} waits for job {dep_id} ({kind}), which was removed since: a retry "
        f"cannot know whether job {dep_id} did what it waits for; submit its command again "
        f"(gpuherd show {job_id}) to run it without that dependency"
    )


def retry_refused_waiting(job: Job, now: float) -> str:
    """Why `retry` of a waiting job is refused, and what it can do. One waiting out its
    --retry-delay is told that `release` starts it now, as it does a job held until its
    --begin time (it was told "it runs when its turn comes", as though nothing held it)."""
    if job.state is JobState.HELD:
        return (
            f"job {job.id} {what_it_is(job.state)}: only finished or running jobs can be "
            "retried (it can: kill, release, rm)"
        )
    if job.release_at is None:
        return f"job {job.id} is queued: it runs when its turn comes (it can: hold, kill, rm)"
    return (
        f"job {job.id} is queued, waiting out its --retry-delay until "
        f"{format_moment(job.release_at, now)}: `gpuherd release {job.id}` lets it start now "
        "(it can: release, hold, kill, rm)"
    )


def _runs_again(rerun: Rerun, job_ids: Sequence[int]) -> str:
    """`gpuherd retry ...`, the jobs of `rerun` then `job_ids`, and what it runs again: all
    of them, or, after a success where a failure was waited for, that job, and the jobs
    waiting for it only if it fails this time."""
    command = f"gpuherd retry {retried_ids(rerun.ids, job_ids)}"
    if not rerun.succeeded:
        every = "both" if len(job_ids) == 1 and len(rerun.ids) == 1 else "them all"
        return f"{command} runs {every} again"
    rest = [i for i in (*rerun.ids, *job_ids) if i not in rerun.succeeded]
    one = len(rerun.succeeded) == 1
    waiting = (
        f"job {rest[0]}" if len(rest) == 1 else f"the jobs waiting for {'it' if one else 'them'}"
    )
    return (
        f"{command} runs {_named(rerun.succeeded)} again, and {waiting} only if "
        f"{'it fails' if one else 'they fail'} this time"
    )


def _named(ids: Sequence[int]) -> str:
    return f"job {ids[0]}" if len(ids) == 1 else f"jobs {format_ids(ids)}"
