"""The job state machine: the TRANSITIONS table is the only source of allowed changes."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuherd.core.states import (
    ACTIVE_STATES,
    BAD_END_STATES,
    FINISHED_STATES,
    LIVE_STATES,
    TRANSITIONS,
    VERB_OF_EVENT,
    Event,
    JobState,
    TransitionError,
    can,
    transition,
)

S = JobState
E = Event

ALL_PAIRS = list(itertools.product(JobState, Event))
FORBIDDEN = [pair for pair in ALL_PAIRS if pair not in TRANSITIONS]
ALLOWED = [pair for pair in ALL_PAIRS if pair in TRANSITIONS]


def allowed_events(state: JobState) -> set[Event]:
    return {e for (s, e) in TRANSITIONS if s == state}


# ---- the table, pair by pair ----------------------------------------------------------------


@pytest.mark.parametrize(("state", "event"), ALLOWED, ids=lambda x: x.value)
def test_allowed_pair_gives_the_table_state(state: JobState, event: Event) -> None:
    assert can(state, event)
    assert transition(state, event) is TRANSITIONS[(state, event)]
    assert isinstance(transition(state, event), JobState)


@pytest.mark.parametrize(("state", "event"), FORBIDDEN, ids=lambda x: x.value)
def test_forbidden_pair_raises_with_state_and_allowed_events(state: JobState, event: Event) -> None:
    assert not can(state, event)
    with pytest.raises(TransitionError) as info:
        transition(state, event)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.state is state
    assert err.event is event
    message = str(err)
    assert state.value in message
    assert event.value in message
    allowed = allowed_events(state)
    assert allowed, f"{state} has no way out at all"
    # The hint names the verbs a person can use, and only those.
    hint = {part.strip(" )") for part in message.split("it can:", 1)[1].split(",")}
    verbs = {VERB_OF_EVENT[e] for e in allowed if e in VERB_OF_EVENT}
    assert hint == verbs | ({"rm"} if state not in LIVE_STATES else set())


def test_the_table_has_forbidden_pairs_and_allowed_pairs() -> None:
    assert len(ALLOWED) + len(FORBIDDEN) == len(JobState) * len(Event)
    assert ALLOWED and FORBIDDEN


def test_transition_error_for_a_state_without_any_way_out_says_so() -> None:
    # No state has an empty row today; the message still names the state and event.
    err = TransitionError(S.SUCCEEDED, E.START)
    assert "succeeded" in str(err)
    assert "start" in str(err)
    assert "(it can: retry, rm)" in str(err)


def test_a_refusal_names_only_what_a_person_can_do() -> None:
    # The engine's own events (fail, lose, succeed, start) are no commands.
    assert str(TransitionError(S.RUNNING, E.HOLD)) == (
        "cannot hold a job that is running (it can: kill, pause, retry)"
    )
    assert str(TransitionError(S.HELD, E.PAUSE)) == (
        "cannot pause a job that is held (it can: kill, release, rm)"
    )


# ---- finished states ------------------------------------------------------------------------


@pytest.mark.parametrize("state", sorted(FINISHED_STATES), ids=str)
def test_finished_states_only_allow_retry(state: JobState) -> None:
    assert allowed_events(state) == {E.RETRY, E.RETRY_HELD}
    assert transition(state, E.RETRY) is S.QUEUED
    assert transition(state, E.RETRY_HELD) is S.HELD  # `retry --hold`
    for event in set(Event) - {E.RETRY, E.RETRY_HELD}:
        with pytest.raises(TransitionError):
            transition(state, event)


def test_design_job_life_transitions_are_all_in_the_table() -> None:
    """DESIGN.md, Job life: every arrow drawn there is allowed."""
    drawn = {
        (S.QUEUED, S.RUNNING),
        (S.RUNNING, S.SUCCEEDED),
        (S.RUNNING, S.FAILED),
        (S.RUNNING, S.KILLED),
        (S.QUEUED, S.HELD),
        (S.HELD, S.QUEUED),
        (S.RUNNING, S.PAUSED),
        (S.PAUSED, S.RUNNING),
        (S.QUEUED, S.CANCELLED),
        (S.HELD, S.CANCELLED),
        (S.RUNNING, S.LOST),
        (S.FAILED, S.QUEUED),
        (S.KILLED, S.QUEUED),
        (S.LOST, S.QUEUED),
    }
    table = {(s, to) for (s, _), to in TRANSITIONS.items()}
    assert drawn <= table


def test_each_row_has_one_target_per_event() -> None:
    # A dict cannot hold two targets, but the table must also not map to unknown states.
    assert set(TRANSITIONS.values()) <= set(JobState)
    assert {s for s, _ in TRANSITIONS} <= set(JobState)


# ---- the state sets -------------------------------------------------------------------------


def test_active_and_finished_partition_all_states() -> None:
    assert set(JobState) == ACTIVE_STATES | FINISHED_STATES
    assert not ACTIVE_STATES & FINISHED_STATES


def test_live_states_are_active_and_hold_a_process() -> None:
    assert {S.RUNNING, S.PAUSED} == LIVE_STATES
    assert LIVE_STATES <= ACTIVE_STATES
    assert {S.QUEUED, S.HELD} == ACTIVE_STATES - LIVE_STATES


def test_bad_end_states_are_finished_but_not_succeeded() -> None:
    assert FINISHED_STATES - {S.SUCCEEDED} == BAD_END_STATES
    assert S.SUCCEEDED not in BAD_END_STATES


def test_every_state_is_reachable_from_queued() -> None:
    seen = {S.QUEUED}
    frontier = [S.QUEUED]
    while frontier:
        state = frontier.pop()
        for event in allowed_events(state):
            nxt = transition(state, event)
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    assert seen == set(JobState)


def test_every_active_state_can_reach_a_finished_state() -> None:
    for start in ACTIVE_STATES:
        seen = {start}
        frontier = [start]
        while frontier:
            state = frontier.pop()
            for event in allowed_events(state):
                nxt = transition(state, event)
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
        assert seen & FINISHED_STATES, start


# ---- properties -----------------------------------------------------------------------------


@settings(deadline=None, max_examples=200)
@given(
    start=st.sampled_from([S.QUEUED, S.HELD]),
    events=st.lists(st.sampled_from(list(Event)), max_size=60),
)
def test_guarded_event_sequences_stay_inside_the_table(
    start: JobState, events: list[Event]
) -> None:
    state = start
    path: list[tuple[JobState, Event, JobState]] = []
    for event in events:
        if not can(state, event):
            with pytest.raises(TransitionError):
                transition(state, event)
            continue
        nxt = transition(state, event)
        assert isinstance(nxt, JobState)
        assert nxt in set(JobState)
        path.append((state, event, nxt))
        state = nxt

    for before, event, after in path:
        # Entering a live state from outside: only START of a queued job.
        if after in LIVE_STATES and before not in LIVE_STATES:
            assert (before, event) == (S.QUEUED, E.START)
        # Within the live states: RUNNING -> PAUSED by PAUSE, PAUSED -> RUNNING by RESUME.
        if before in LIVE_STATES and after in LIVE_STATES:
            assert (before, event, after) in {
                (S.RUNNING, E.PAUSE, S.PAUSED),
                (S.PAUSED, E.RESUME, S.RUNNING),
            }
        # A held job goes nowhere live directly: it is released (to queued) or cancelled.
        if before is S.HELD:
            assert after in {S.QUEUED, S.CANCELLED}
        # Leaving a finished state is always a retry back to the queue (held, or not).
        if before in FINISHED_STATES:
            assert (event, after) in {(E.RETRY, S.QUEUED), (E.RETRY_HELD, S.HELD)}


@settings(deadline=None, max_examples=200)
@given(events=st.lists(st.sampled_from(list(Event)), max_size=60))
def test_a_held_job_reaches_a_live_state_only_through_queued_and_start(
    events: list[Event],
) -> None:
    state = S.HELD
    path = [state]
    for event in events:
        if not can(state, event):
            continue
        nxt = transition(state, event)
        if nxt is S.QUEUED:
            # Back to the queue only by release (of a held job) or retry (of any other).
            assert event is (E.RELEASE if state is S.HELD else E.RETRY)
        if nxt in LIVE_STATES and state not in LIVE_STATES:
            assert (state, event) == (S.QUEUED, E.START)
            assert S.QUEUED in path
        state = nxt
        path.append(state)
