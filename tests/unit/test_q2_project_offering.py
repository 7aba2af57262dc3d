"""core.caps.worth_offering and project limits, sweep caps: a job of a project (or of a sweep
with --max-parallel) that does not fit does not keep a smaller job of the same group from
being offered; placement then starts it, within the group's limit."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuherd.core.caps import worth_offering
from gpuherd.core.model import Device, Job, JobSpec, Policy, Reservation
from gpuherd.core.placement import plan
from gpuherd.core.states import JobState

NOW = 1_000_000.0


def job(
    id: int,
    gpus: int = 1,
    project: str | None = "p",
    mem: int | None = None,
    sweep: str | None = None,
) -> Job:
    spec = JobSpec("true", "/", gpus=gpus, project=project, mem=mem, sweep=sweep)
    return Job(id, spec, JobState.QUEUED, queued_at=NOW)


def offered(jobs: list[Job], room: int) -> list[Job]:
    found = worth_offering(iter(jobs), {}, {}, {"p": room}, lambda: frozenset({1}), NOW - 300)
    return list(found)


def test_a_project_offers_each_shape_as_many_jobs_as_may_start() -> None:
    jobs = [job(1, gpus=2), job(2), job(3), job(4, gpus=2), job(5, mem=2**30), job(6, project=None)]
    # p may start 1 more: its first job of each shape is offered, the repeats are not.
    assert [j.id for j in offered(jobs, room=1)] == [1, 2, 5, 6]
    assert [j.id for j in offered(jobs, room=2)] == [1, 2, 3, 4, 5, 6]
    assert [j.id for j in offered(jobs, room=0)] == [6]


def test_a_small_job_of_a_project_starts_beside_its_big_one_that_waits() -> None:
    devices = [Device(0, "u0"), Device(1, "u1")]
    running = [Reservation(99, (0,))]  # GPU 0 busy: the 2-GPU job cannot start
    policy = Policy(project_limits=(("p", 1),))
    jobs = offered([job(1, gpus=2), job(2)], room=1)
    starts = plan(jobs, devices, running, policy, NOW)
    assert [(a.job_id, a.gpus) for a in starts] == [(2, (1,))]


def test_a_sweep_cap_is_kept_by_placement_for_jobs_of_every_shape() -> None:
    # An edited point (2 GPUs) that does not fit no longer keeps the others off a free GPU,
    # and the cap (1 more) holds however many shapes were offered.
    devices = [Device(0, "u0"), Device(1, "u1"), Device(2, "u2")]
    running = [Reservation(99, (0,))]
    points = [job(1, gpus=3, project=None, sweep="s")]
    points += [job(i, project=None, sweep="s") for i in (2, 3)]
    points += [job(4, mem=2**30, project=None, sweep="s")]
    found = worth_offering(iter(points), {"s": 2}, {"s": 1}, {}, lambda: frozenset(), NOW - 300)
    jobs = list(found)
    assert [j.id for j in jobs] == [1, 2, 4]
    starts = plan(jobs, devices, running, Policy(), NOW, sweep_room={"s": 1})
    assert [a.job_id for a in starts] == [2]
    assert plan(jobs, devices, running, Policy(), NOW, sweep_room={"s": 0}) == []


SHAPES = st.tuples(
    st.integers(0, 2), st.sampled_from([None, "p"]), st.sampled_from([None, "s"]), st.booleans()
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(SHAPES, max_size=12),
    st.sets(st.integers(0, 3), max_size=3),
    st.integers(0, 2),
    st.integers(0, 2),
)
def test_offered_and_placed_jobs_keep_every_cap(
    shapes: list[tuple[int, str | None, str | None, bool]],
    busy: set[int],
    project_left: int,
    sweep_left: int,
) -> None:
    """Whatever shapes a group's jobs have, no more of them start than its room, and a job
    of a group with room that fits on its own is never left with its GPUs idle."""
    devices = [Device(i, f"u{i}", memory_total=2**34) for i in range(4)]
    running = [Reservation(99 + i, (i,)) for i in sorted(busy)]
    jobs = [
        job(i, gpus, project, 2**30 if mem and gpus else None, sweep)
        for i, (gpus, project, sweep, mem) in enumerate(shapes, 1)
    ]
    policy = Policy(project_limits=(("p", project_left),))
    found = worth_offering(iter(jobs), {"s": sweep_left}, {}, {"p": project_left}, frozenset, NOW)
    starts = plan(list(found), devices, running, policy, NOW, sweep_room={"s": sweep_left})
    started = {a.job_id: jobs[a.job_id - 1].spec for a in starts}
    assert sum(spec.project == "p" for spec in started.values()) <= project_left
    assert sum(spec.sweep == "s" for spec in started.values()) <= sweep_left
    if not started:  # then no job that the caps let start fits the free GPUs alone
        free = 4 - len(busy)
        for j in jobs:
            capped = (j.spec.project == "p" and not project_left) or (
                j.spec.sweep == "s" and not sweep_left
            )
            assert capped or j.spec.gpus > free, j
