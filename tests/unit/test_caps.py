"""core.caps.worth_offering: which queued jobs the engine offers placement at all."""

from __future__ import annotations

from typing import Any

from gpuherd.core.caps import worth_offering
from gpuherd.core.model import Job, JobSpec
from gpuherd.core.states import JobState

NOW = 1_000_000.0


def job(id: int, queued_at: float = NOW, **spec: Any) -> Job:
    return Job(id, JobSpec("true", "/", **spec), JobState.QUEUED, queued_at=queued_at)


def offered(jobs: list[Job], **kw: Any) -> list[int]:
    args: dict[str, Any] = {
        "sweep_caps": {},
        "sweeps_running": {},
        "project_room": {},
        "open_gpus": lambda: frozenset({0, 1}),
        "hold_after": NOW - 300,
    }
    args.update(kw)
    return [j.id for j in worth_offering(iter(jobs), **args)]


def test_caps_offer_a_group_only_as_many_jobs_as_may_start() -> None:
    jobs = [job(1, sweep="s"), job(2, sweep="s"), job(3, project="p"), job(4, project="p")]
    jobs += [job(5, sweep="s", project="p"), job(6)]
    got = offered(jobs, sweep_caps={"s": 3}, sweeps_running={"s": 1}, project_room={"p": 1})
    # s may start 2 more (1, 2); p 1 more (3); job 5 is of both: the sweep is full.
    assert got == [1, 2, 3, 6]
    # A job skipped for one cap takes no room of the other.
    got = offered(
        [job(1, sweep="s", project="p"), job(2, sweep="s")],
        sweep_caps={"s": 1},
        project_room={"p": 0},
    )
    assert got == [2]


def test_pinned_jobs_on_closed_gpus_are_skipped_unless_they_may_hold() -> None:
    asked: list[int] = []

    def gpus() -> frozenset[int]:
        asked.append(1)
        return frozenset({1})

    jobs = [job(1), job(2, only_gpus=(0,)), job(3, only_gpus=(0, 1)), job(4, only_gpus=(0,))]
    jobs.append(job(5, only_gpus=(0,), queued_at=NOW - 1000))  # waited: it may hold GPU 0
    assert offered(jobs, open_gpus=gpus) == [1, 3, 5]
    assert asked == [1]  # the GPUs were worked out once, and only for a pinned job
    assert offered([job(1), job(2)], open_gpus=gpus) == [1, 2] and asked == [1]
