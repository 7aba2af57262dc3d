"""reconcile(): after a daemon restart, one action per job the database says is live."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuherd.core.model import Job, JobSpec, StopRequest
from gpuherd.core.recovery import Drain, Finish, Observed, Reattach, Unstart, reconcile
from gpuherd.core.states import JobState, OutcomeKind

NOW = 1000.0


def live_job(job_id: int, state: JobState = JobState.RUNNING, stop_at: float | None = None) -> Job:
    spec = JobSpec(command="sleep 60", cwd="/tmp", grace=10.0)
    stop = StopRequest(OutcomeKind.KILLED, stop_at) if stop_at is not None else None
    return Job(id=job_id, spec=spec, state=state, attempt=1, stop=stop)


def test_recorded_exit_finishes_with_that_code() -> None:
    seen = Observed(pid=100, running=False, exit_code=3, recorded=True, ended_at=12.5)
    assert reconcile([live_job(1)], {1: seen}, NOW) == [Finish(1, 3, None, 12.5)]


def test_recorded_signal_finishes_with_that_signal() -> None:
    seen = Observed(pid=100, running=False, signal=9, recorded=True, ended_at=3.0)
    assert reconcile([live_job(1)], {1: seen}, NOW) == [Finish(1, None, 9, 3.0)]


def test_a_recorded_exit_of_an_attempt_verified_alive_is_no_end_it_is_reattached() -> None:
    # Before: finished (its processes killed) on an `exit 0` line the job itself wrote in its
    # attempt's `process` file; its shell between writing its own and exiting is re-attached
    # too, and the line read once it has ended.
    seen = Observed(pid=100, running=True, exit_code=0, recorded=True, ended_at=1.0)
    assert reconcile([live_job(1)], {1: seen}, NOW) == [Reattach(1, 100)]


def test_alive_and_not_recorded_is_reattached() -> None:
    seen = Observed(pid=4242, running=True)
    assert reconcile([live_job(5)], {5: seen}, NOW) == [Reattach(5, 4242)]


def test_paused_job_alive_is_reattached() -> None:
    seen = Observed(pid=4242, running=True)
    assert reconcile([live_job(5, JobState.PAUSED)], {5: seen}, NOW) == [Reattach(5, 4242)]


def test_no_pid_at_all_is_unstarted() -> None:
    assert reconcile([live_job(2)], {2: Observed(pid=None, running=False)}, NOW) == [Unstart(2)]


def test_pid_known_but_dead_without_status_is_lost() -> None:
    seen = Observed(pid=999, running=False, ended_at=None)
    actions = reconcile([live_job(3)], {3: seen}, NOW)
    assert actions == [Finish(3, None, None, None)]


def test_a_stop_whose_leader_ended_drains_what_it_left_within_its_grace() -> None:
    # The kill came 4 s ago with a 10 s grace: its children have 6 s left to save.
    seen = Observed(
        pid=77, running=False, signal=15, recorded=True, ended_at=NOW - 1, outlived=True
    )
    assert reconcile([live_job(6, stop_at=NOW - 4)], {6: seen}, NOW) == [Drain(6, 77)]
    unrecorded = Observed(pid=77, running=False, outlived=True)  # its shell was replaced
    assert reconcile([live_job(6, stop_at=NOW - 4)], {6: unrecorded}, NOW) == [Drain(6, 77)]


def test_what_outlives_the_grace_ends_with_the_job() -> None:
    # The grace ran out while no daemon ran: the job ends now, and the start-up pass kills
    # what it left.
    seen = Observed(
        pid=77, running=False, signal=15, recorded=True, ended_at=NOW - 9, outlived=True
    )
    assert reconcile([live_job(6, stop_at=NOW - 10)], {6: seen}, NOW) == [
        Finish(6, None, 15, NOW - 9)
    ]
    lost = Observed(pid=77, running=False, outlived=True, ended_at=NOW)
    assert reconcile([live_job(6, stop_at=NOW - 12)], {6: lost}, NOW) == [
        Finish(6, None, None, NOW)
    ]


def test_processes_left_by_a_job_nobody_stopped_are_not_waited_for() -> None:
    seen = Observed(pid=77, running=False, exit_code=0, recorded=True, ended_at=5.0, outlived=True)
    assert reconcile([live_job(6)], {6: seen}, NOW) == [Finish(6, 0, None, 5.0)]


def test_job_missing_from_observed_is_unstarted() -> None:
    assert reconcile([live_job(4)], {}, NOW) == [Unstart(4)]


def test_no_live_jobs_no_actions() -> None:
    assert reconcile([], {1: Observed(pid=1, running=True)}, NOW) == []


def test_actions_follow_the_input_order() -> None:
    jobs = [live_job(i) for i in (9, 2, 7, 4)]
    observed = {
        9: Observed(pid=90, running=True),
        2: Observed(pid=20, running=False, exit_code=0, recorded=True),
        4: Observed(pid=40, running=False),
    }
    assert reconcile(jobs, observed, NOW) == [
        Reattach(9, 90),
        Finish(2, 0, None, None),
        Unstart(7),
        Finish(4, None, None, None),
    ]


observed_strategy = st.builds(
    Observed,
    pid=st.one_of(st.none(), st.integers(1, 2**22)),
    running=st.booleans(),
    exit_code=st.one_of(st.none(), st.integers(0, 255)),
    signal=st.one_of(st.none(), st.integers(1, 64)),
    recorded=st.booleans(),
    ended_at=st.one_of(st.none(), st.floats(0, 1e9)),
    outlived=st.booleans(),
)


@settings(deadline=None, max_examples=200)
@given(
    ids=st.lists(st.integers(1, 10_000), unique=True, max_size=30),
    data=st.data(),
)
def test_exactly_one_matching_action_per_live_job(ids: list[int], data: st.DataObject) -> None:
    stops = st.one_of(st.none(), st.floats(NOW - 20, NOW + 20))
    jobs = [live_job(i, stop_at=data.draw(stops)) for i in ids]
    seen_ids = data.draw(st.lists(st.sampled_from(ids), unique=True) if ids else st.just([]))
    observed = {i: data.draw(observed_strategy) for i in seen_ids}
    # Observations of jobs that are not live are ignored.
    observed[20_000] = Observed(pid=1, running=True)

    actions = reconcile(jobs, observed, NOW)

    assert len(actions) == len(jobs)
    assert [a.job_id for a in actions] == ids
    for job, action in zip(jobs, actions, strict=True):
        job_id, seen = job.id, observed.get(job.id)
        in_grace = job.stop is not None and job.stop.at + job.spec.grace > NOW
        if seen is not None and seen.outlived and seen.pid is not None and in_grace:
            assert action == Drain(job_id, seen.pid)
        elif seen is not None and seen.running and seen.pid is not None:
            assert action == Reattach(job_id, seen.pid)
        elif seen is None or (not seen.recorded and seen.pid is None):
            assert action == Unstart(job_id)
        elif seen.recorded:
            assert action == Finish(job_id, seen.exit_code, seen.signal, seen.ended_at)
        else:
            assert action == Finish(job_id, None, None, seen.ended_at)
