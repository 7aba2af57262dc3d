"""Job states, outcomes and the one table of allowed transitions (pure)."""

from __future__ import annotations

from collections.abc import Collection
from enum import StrEnum


class JobState(StrEnum):
    QUEUED = "queued"
    HELD = "held"
    RUNNING = "running"
    PAUSED = "paused"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    KILLED = "killed"
    CANCELLED = "cancelled"
    LOST = "lost"


ACTIVE_STATES = frozenset({JobState.QUEUED, JobState.HELD, JobState.RUNNING, JobState.PAUSED})
LIVE_STATES = frozenset({JobState.RUNNING, JobState.PAUSED})
"""States in which a job has a process and holds GPUs."""
FINISHED_STATES = frozenset(
    {JobState.SUCCEEDED, JobState.FAILED, JobState.KILLED, JobState.CANCELLED, JobState.LOST}
)
BAD_END_STATES = FINISHED_STATES - {JobState.SUCCEEDED}
WAITING_STATES = frozenset({JobState.QUEUED, JobState.HELD})
"""States of a job that has not started: listings show such jobs in the order they are to
start (priority, then place), a held one where it would start once released."""
POINT_STATES = (*(state.value for state in JobState), "done", "missing")
"""A sweep point's states (`sweep status`): its latest job's, or, with no job in the
database, what its folder's markers say (`done`, `failed`) or `missing`."""


def split_waiting(
    states: Collection[JobState],
) -> tuple[tuple[JobState, ...], tuple[JobState, ...]]:
    """`states` as (those of jobs that started or ended, listed by id; the waiting ones,
    listed in the order they are to start)."""
    return (
        tuple(s for s in states if s not in WAITING_STATES),
        tuple(s for s in states if s in WAITING_STATES),
    )


def in_start_order(states: Collection[str]) -> bool:
    """Whether a listing of the jobs in `states` (none: every job) is in the order they are
    to start rather than by id: the waiting states alone (the dashboard's jobs table)."""
    return bool(states) and all(state in WAITING_STATES for state in states)


class OutcomeKind(StrEnum):
    """Why an attempt ended; kept apart from the state (see DESIGN.md, Job life)."""

    EXIT = "exit"  # the command exited; see exit_code (0 = success)
    SIGNAL = "signal"  # the command died of a signal it did not get from gpuherd
    KILLED = "killed"  # gpuherd stopped it on request (kill, retry of a running job)
    TIMEOUT = "timeout"
    STALLED = "stalled"  # printed nothing for --no-output-timeout, and was killed for it
    LOG_TOO_LARGE = "log_too_large"  # a log grew past --max-log-size, and it was stopped
    CUDA_OOM = "cuda_oom"
    SPAWN_ERROR = "spawn_error"
    DEPENDENCY_FAILED = "dependency_failed"
    CANCELLED = "cancelled"  # removed from the queue before it ran
    LOST = "lost"  # the process vanished and no exit status could be found


GPUHERD_STOPS = frozenset(
    {OutcomeKind.KILLED, OutcomeKind.TIMEOUT, OutcomeKind.STALLED, OutcomeKind.LOG_TOO_LARGE}
)
"""Outcomes of an attempt gpuherd itself stopped: the stop is why it ended, whatever its exit
status says (none at all, for one re-attached after a restart)."""


class Event(StrEnum):
    START = "start"
    SUCCEED = "succeed"
    FAIL = "fail"
    KILL = "kill"
    PAUSE = "pause"
    RESUME = "resume"
    HOLD = "hold"
    RELEASE = "release"
    CANCEL = "cancel"
    LOSE = "lose"
    RETRY = "retry"
    RETRY_HELD = "retry-held"
    """`retry --hold`: a finished job back in the queue, held (to edit it before it runs);
    also a job paused while it was starting, whose start then failed (core/lifecycle.py)."""


S = JobState
TRANSITIONS: dict[tuple[JobState, Event], JobState] = {
    (S.QUEUED, Event.START): S.RUNNING,
    (S.QUEUED, Event.HOLD): S.HELD,
    (S.QUEUED, Event.CANCEL): S.CANCELLED,
    (S.QUEUED, Event.FAIL): S.FAILED,  # a spawn error ends a job that never ran
    (S.HELD, Event.RELEASE): S.QUEUED,
    (S.HELD, Event.CANCEL): S.CANCELLED,
    (S.RUNNING, Event.SUCCEED): S.SUCCEEDED,
    (S.RUNNING, Event.FAIL): S.FAILED,
    (S.RUNNING, Event.KILL): S.KILLED,
    (S.RUNNING, Event.PAUSE): S.PAUSED,
    (S.RUNNING, Event.LOSE): S.LOST,
    (S.RUNNING, Event.RETRY): S.QUEUED,  # an automatic retry, or `retry` of a running job
    (S.PAUSED, Event.RESUME): S.RUNNING,
    (S.PAUSED, Event.SUCCEED): S.SUCCEEDED,  # a paused process can still be killed from outside
    (S.PAUSED, Event.FAIL): S.FAILED,
    (S.PAUSED, Event.KILL): S.KILLED,
    (S.PAUSED, Event.LOSE): S.LOST,
    (S.PAUSED, Event.RETRY): S.QUEUED,
    (S.PAUSED, Event.RETRY_HELD): S.HELD,  # paused while a start that then failed went on
    (S.FAILED, Event.RETRY): S.QUEUED,
    (S.KILLED, Event.RETRY): S.QUEUED,
    (S.LOST, Event.RETRY): S.QUEUED,
    (S.CANCELLED, Event.RETRY): S.QUEUED,
    (S.SUCCEEDED, Event.RETRY): S.QUEUED,
    (S.FAILED, Event.RETRY_HELD): S.HELD,
    (S.KILLED, Event.RETRY_HELD): S.HELD,
    (S.LOST, Event.RETRY_HELD): S.HELD,
    (S.CANCELLED, Event.RETRY_HELD): S.HELD,
    (S.SUCCEEDED, Event.RETRY_HELD): S.HELD,
}
del S


VERB_OF_EVENT = {
    Event.KILL: "kill",
    Event.CANCEL: "kill",
    Event.PAUSE: "pause",
    Event.RESUME: "resume",
    Event.HOLD: "hold",
    Event.RELEASE: "release",
    Event.RETRY: "retry",
}
"""The `gpuherd` verb that causes each event a person can cause (the rest are the engine's)."""


def what_it_is(state: JobState) -> str:
    """A job's state as a sentence says it: "is running", but "has ended (succeeded)": a
    finished state is how the job ended ("a job that is succeeded" reads wrong)."""
    return f"has ended ({state.value})" if state in FINISHED_STATES else f"is {state.value}"


class TransitionError(ValueError):
    """A state change that the TRANSITIONS table does not allow."""

    def __init__(self, state: JobState, event: Event) -> None:
        verbs = {VERB_OF_EVENT[e] for (s, e) in TRANSITIONS if s == state and e in VERB_OF_EVENT}
        if state not in (JobState.RUNNING, JobState.PAUSED):
            verbs.add("rm")
        hint = f"it can: {', '.join(sorted(verbs))}" if verbs else "it cannot change"
        super().__init__(f"cannot {event.value} a job that {what_it_is(state)} ({hint})")
        self.state = state
        self.event = event


def transition(state: JobState, event: Event) -> JobState:
    """The state after `event`, or TransitionError when the table does not allow it."""
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise TransitionError(state, event) from None


def can(state: JobState, event: Event) -> bool:
    return (state, event) in TRANSITIONS
