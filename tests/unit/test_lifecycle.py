"""What an ended attempt means: classify() its outcome, after_attempt() the next state."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuherd.core.lifecycle import (
    Ended,
    Stopping,
    after_attempt,
    classify,
    dependency_failed,
    killed_while_stopping,
    retries_left,
    retry_wait,
)
from gpuherd.core.model import Job, JobSpec, Outcome
from gpuherd.core.states import (
    LIVE_STATES,
    Event,
    JobState,
    OutcomeKind,
    transition,
)

OOM_TAIL = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 3, in <module>\n'
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
)


def make_job(retries: int = 0, attempt: int = 1, state: JobState = JobState.RUNNING) -> Job:
    return Job(
        id=7,
        spec=JobSpec(command="python train.py", cwd="/tmp", retries=retries),
        state=state,
        attempt=attempt,
    )


# ---- classify -------------------------------------------------------------------------------


def test_exit_zero_is_success() -> None:
    outcome = classify(Ended(exit_code=0, signal=None))
    assert outcome.kind is OutcomeKind.EXIT
    assert outcome.exit_code == 0
    assert outcome.success


def test_exit_three_is_exit_three() -> None:
    outcome = classify(Ended(exit_code=3, signal=None))
    assert outcome == Outcome(OutcomeKind.EXIT, 3)
    assert not outcome.success
    assert outcome.describe() == "exit 3"


def test_signal_nine_is_signal() -> None:
    outcome = classify(Ended(exit_code=None, signal=9))
    assert outcome.kind is OutcomeKind.SIGNAL
    assert outcome.signal == 9
    assert outcome.exit_code is None
    assert not outcome.success
    assert outcome.describe() == "signal 9"


def test_no_exit_code_and_no_signal_is_lost() -> None:
    outcome = classify(Ended(exit_code=None, signal=None))
    assert outcome.kind is OutcomeKind.LOST
    assert not outcome.success
    assert outcome.message


@pytest.mark.parametrize("reason", [OutcomeKind.TIMEOUT, OutcomeKind.KILLED, OutcomeKind.STALLED])
@pytest.mark.parametrize(
    ("code", "sig"), [(0, None), (1, None), (143, None), (None, 15), (None, None)]
)
def test_stop_reason_wins_over_exit_code_and_signal(
    reason: OutcomeKind, code: int | None, sig: int | None
) -> None:
    outcome = classify(Ended(exit_code=code, signal=sig, stop_reason=reason), OOM_TAIL)
    assert outcome.kind is reason
    assert not outcome.success


def test_cuda_oom_in_stderr_tail_of_a_failed_exit() -> None:
    outcome = classify(Ended(exit_code=1, signal=None), OOM_TAIL)
    assert outcome.kind is OutcomeKind.CUDA_OOM
    assert outcome.exit_code == 1
    assert not outcome.success


def test_cuda_oom_text_does_not_spoil_a_success() -> None:
    outcome = classify(Ended(exit_code=0, signal=None), OOM_TAIL)
    assert outcome.kind is OutcomeKind.EXIT
    assert outcome.success


def test_failed_exit_without_oom_text_stays_exit() -> None:
    outcome = classify(Ended(exit_code=1, signal=None), "ValueError: bad lr\n")
    assert outcome == Outcome(OutcomeKind.EXIT, 1)


@settings(deadline=None, max_examples=200)
@given(
    code=st.one_of(st.none(), st.integers(0, 255)),
    sig=st.one_of(st.none(), st.integers(1, 64)),
    reason=st.sampled_from([None, OutcomeKind.TIMEOUT, OutcomeKind.KILLED]),
    tail=st.sampled_from(["", OOM_TAIL, "some log\n"]),
)
def test_classify_success_only_for_a_plain_exit_zero(
    code: int | None, sig: int | None, reason: OutcomeKind | None, tail: str
) -> None:
    outcome = classify(Ended(code, sig, stop_reason=reason), tail)
    expected_success = code == 0 and sig is None and reason is None
    assert outcome.success is expected_success


# ---- retries_left ---------------------------------------------------------------------------


@pytest.mark.parametrize(("attempt", "left"), [(1, 2), (2, 1), (3, 0), (4, 0)])
def test_retries_left_with_two_retries(attempt: int, left: int) -> None:
    assert retries_left(make_job(retries=2, attempt=attempt)) == left


def test_retries_left_without_retries() -> None:
    assert retries_left(make_job(retries=0, attempt=1)) == 0


@pytest.mark.parametrize(("attempt", "retried"), [(1, True), (2, True), (3, False)])
def test_two_retries_means_attempts_one_and_two_are_retried(attempt: int, retried: bool) -> None:
    job = make_job(retries=2, attempt=attempt)
    ended = Ended(exit_code=1, signal=None)
    nxt = after_attempt(job, ended, classify(ended))
    assert (nxt.state is JobState.QUEUED) is retried
    assert nxt.event is (Event.RETRY if retried else Event.FAIL)


# ---- retry_wait -----------------------------------------------------------------------------


def test_a_retry_delay_counts_from_the_attempts_end() -> None:
    """Heard as it happens, a failure's retry waits the whole delay; found by a restart, it
    waits what is left of it (before: the whole delay again, from the restart)."""
    now = 10_000.0
    assert retry_wait(now - 0.2, 600, now) == (now + 599.8, "; runs again in 10m (--retry-delay)")
    ended_2m_ago = now - 120
    assert retry_wait(ended_2m_ago, 600, now) == (
        now + 480,
        "; runs again in 8m00s (--retry-delay 10m from its end)",
    )
    # Failed an hour ago with --retry-delay 10m: due now.
    assert retry_wait(now - 3600, 600, now) == (
        None,
        "; its --retry-delay 10m has passed since it ended",
    )


# ---- after_attempt --------------------------------------------------------------------------


def test_success_moves_to_succeeded() -> None:
    ended = Ended(0, None)
    nxt = after_attempt(make_job(retries=3), ended, classify(ended))
    assert nxt.event is Event.SUCCEED
    assert nxt.state is JobState.SUCCEEDED
    assert nxt.outcome.success
    assert nxt.cancel_waiters  # those waiting for it to fail (--after-fail)


def test_failure_with_retries_left_is_retried() -> None:
    ended = Ended(1, None)
    nxt = after_attempt(make_job(retries=1, attempt=1), ended, classify(ended))
    assert nxt.event is Event.RETRY
    assert nxt.state is JobState.QUEUED
    assert nxt.outcome == Outcome(OutcomeKind.EXIT, 1)
    assert not nxt.cancel_waiters


def test_failure_without_retries_fails_and_cancels_waiters() -> None:
    ended = Ended(1, None)
    nxt = after_attempt(make_job(retries=0), ended, classify(ended))
    assert nxt.event is Event.FAIL
    assert nxt.state is JobState.FAILED
    assert nxt.cancel_waiters


@pytest.mark.parametrize(
    ("ended", "tail"),
    [
        (Ended(None, 9), ""),
        (Ended(1, None), OOM_TAIL),
        (Ended(None, 15, stop_reason=OutcomeKind.TIMEOUT), ""),
    ],
    ids=["signal", "cuda_oom", "timeout"],
)
def test_other_bad_outcomes_fail_without_retries(ended: Ended, tail: str) -> None:
    nxt = after_attempt(make_job(retries=0), ended, classify(ended, tail))
    assert nxt.state is JobState.FAILED
    assert nxt.cancel_waiters
    nxt = after_attempt(make_job(retries=1), ended, classify(ended, tail))
    assert nxt.state is JobState.QUEUED
    assert not nxt.cancel_waiters


def test_killed_is_killed_and_not_retried_even_with_retries_left() -> None:
    ended = Ended(None, 15, stop_reason=OutcomeKind.KILLED)
    nxt = after_attempt(make_job(retries=5, attempt=1), ended, classify(ended))
    assert nxt.event is Event.KILL
    assert nxt.state is JobState.KILLED
    assert nxt.outcome.kind is OutcomeKind.KILLED
    assert nxt.cancel_waiters


def test_lost_without_retries_is_lost() -> None:
    ended = Ended(None, None)
    nxt = after_attempt(make_job(retries=0), ended, classify(ended))
    assert nxt.event is Event.LOSE
    assert nxt.state is JobState.LOST
    assert nxt.outcome.kind is OutcomeKind.LOST
    assert nxt.cancel_waiters


def test_lost_with_retries_left_is_retried() -> None:
    ended = Ended(None, None)
    nxt = after_attempt(make_job(retries=1, attempt=1), ended, classify(ended))
    assert nxt.state is JobState.QUEUED
    assert not nxt.cancel_waiters


@pytest.mark.parametrize(
    "ended",
    [
        Ended(0, None, requeue=True),
        Ended(1, None, requeue=True),
        Ended(None, 15, stop_reason=OutcomeKind.KILLED, requeue=True),
        Ended(None, None, requeue=True),
    ],
    ids=["exit0", "exit1", "killed", "lost"],
)
def test_requeue_goes_back_to_the_queue_regardless(ended: Ended) -> None:
    nxt = after_attempt(make_job(retries=0, attempt=9), ended, classify(ended))
    assert nxt.event is Event.RETRY
    assert nxt.state is JobState.QUEUED
    assert not nxt.cancel_waiters


def test_dependency_failed_names_the_dependency() -> None:
    outcome = dependency_failed(3, JobState.FAILED)
    assert outcome.kind is OutcomeKind.DEPENDENCY_FAILED
    assert "3" in outcome.describe()
    assert "failed" in outcome.describe()


# ---- properties -----------------------------------------------------------------------------


ended_strategy = st.builds(
    Ended,
    exit_code=st.one_of(st.none(), st.integers(0, 255)),
    signal=st.one_of(st.none(), st.integers(1, 64)),
    stop_reason=st.sampled_from([None, OutcomeKind.TIMEOUT, OutcomeKind.KILLED]),
    requeue=st.booleans(),
)


@settings(deadline=None, max_examples=200)
@given(
    ended=ended_strategy,
    tail=st.sampled_from(["", OOM_TAIL]),
    retries=st.integers(0, 5),
    attempt=st.integers(1, 8),
    live=st.sampled_from(sorted(LIVE_STATES)),
)
def test_next_state_is_what_the_table_says_for_a_live_job(
    ended: Ended, tail: str, retries: int, attempt: int, live: JobState
) -> None:
    job = make_job(retries=retries, attempt=attempt, state=live)
    outcome = classify(ended, tail)
    nxt = after_attempt(job, ended, outcome)
    assert transition(live, nxt.event) is nxt.state
    assert nxt.outcome == outcome
    # Waiters that wait for another end are cancelled exactly when the job ends for good.
    assert nxt.cancel_waiters is (nxt.state is not JobState.QUEUED)


@settings(deadline=None, max_examples=200)
@given(
    retries=st.integers(0, 20),
    failures=st.lists(
        st.sampled_from(
            [
                Ended(1, None),
                Ended(None, 9),
                Ended(None, None),
                Ended(None, 15, stop_reason=OutcomeKind.TIMEOUT),
                Ended(2, None),
            ]
        ),
        min_size=1,
        max_size=5,
    ),
)
def test_always_failing_job_gets_exactly_retries_plus_one_attempts(
    retries: int, failures: list[Ended]
) -> None:
    job = make_job(retries=retries, attempt=0, state=JobState.QUEUED)
    attempts = 0
    for i in range(retries + 10):
        job = Job(
            id=job.id,
            spec=job.spec,
            state=transition(job.state, Event.START),
            attempt=job.attempt + 1,
        )
        attempts += 1
        ended = failures[i % len(failures)]
        nxt = after_attempt(job, ended, classify(ended, OOM_TAIL))
        job = Job(id=job.id, spec=job.spec, state=nxt.state, attempt=job.attempt)
        if nxt.state is not JobState.QUEUED:
            assert nxt.state in {JobState.FAILED, JobState.LOST}
            assert nxt.cancel_waiters
            break
    assert attempts == retries + 1


@pytest.mark.parametrize(
    "line",
    [
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
        "RuntimeError: CUDA error: out of memory",  # cuBLAS, cuDNN, a new CUDA context
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating "
        "tensor with shape[1024,1024,1024] and type float on /device:GPU:0",
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying",
        "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
    ],
)
def test_the_frameworks_out_of_memory_errors_are_cuda_oom(line: str) -> None:
    outcome = classify(Ended(exit_code=1, signal=None), stderr_tail=f"Traceback\n{line}\n")
    assert outcome.kind is OutcomeKind.CUDA_OOM
    assert classify(Ended(exit_code=1, signal=None), "ValueError: out of range").kind is (
        OutcomeKind.EXIT
    )


@pytest.mark.parametrize(
    ("reason", "requeue", "said"),
    [
        (OutcomeKind.KILLED, False, "already stopping (SIGKILL in 7.2s)"),
        (
            OutcomeKind.KILLED,
            True,
            "stopping (SIGKILL in 7.2s): it ends killed, no longer queued again",
        ),
        (
            OutcomeKind.TIMEOUT,
            False,
            "stopping (SIGKILL in 7.2s): it ends killed, no longer by its --timeout",
        ),
        (
            OutcomeKind.STALLED,
            False,
            "stopping (SIGKILL in 7.2s): it ends killed, no longer by its --no-output-timeout",
        ),
    ],
)
def test_a_kill_during_a_stop_says_whether_it_changed_how_the_job_ends(
    reason: OutcomeKind, requeue: bool, said: str
) -> None:
    assert killed_while_stopping(Stopping(reason, requeue, 7.23)) == said
