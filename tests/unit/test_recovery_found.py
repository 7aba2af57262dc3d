"""A later attempt than the database's runs (herd.db restored from an older backup): the
live job's own attempt is superseded, and the job adopted where its recorded GPUs have room,
else held (core/recovery.py: reconcile, take_over)."""

from __future__ import annotations

from gpuherd.core.model import Device, Job, JobSpec, Policy, Reservation
from gpuherd.core.recovery import (
    Adopt,
    Finish,
    Found,
    Hold,
    Observed,
    Reattach,
    Supersede,
    Unstart,
    reconcile,
    take_over,
)
from gpuherd.core.states import JobState

NOW = 1000.0
GPUS = [Device(0), Device(1)]


def job(job_id: int, state: JobState = JobState.QUEUED, mem: int | None = None) -> Job:
    return Job(job_id, JobSpec("sleep 60", "/tmp", mem=mem), state, attempt=1)


def found(gpus: tuple[int, ...] | None = (0,), attempt: int = 2) -> Found:
    return Found(attempt, 4242, f"/home/jobs/1/attempt-{attempt}", gpus)


def test_an_ended_attempt_with_a_later_one_running_is_superseded() -> None:
    ended = Observed(pid=100, running=False, exit_code=1, recorded=True, ended_at=5.0)
    never = Observed(pid=None, running=False)
    live = [job(1, JobState.RUNNING), job(2, JobState.RUNNING)]
    later = {1: found(), 2: found()}
    assert reconcile(live, {1: ended, 2: never}, NOW, later) == [
        Supersede(1, Finish(1, 1, None, 5.0)),
        Supersede(2, Unstart(2)),
    ]


def test_a_running_attempt_is_reattached_whatever_runs_after_it() -> None:
    seen = Observed(pid=100, running=True)
    assert reconcile([job(1, JobState.RUNNING)], {1: seen}, NOW, {1: found()}) == [Reattach(1, 100)]


def test_a_found_attempt_is_adopted_on_its_free_gpus() -> None:
    assert take_over([(job(1), found((1,)))], GPUS, [], Policy()) == [Adopt(1, found((1,)))]


def test_a_gpu_another_job_holds_is_taken() -> None:
    held = [Reservation(7, (0,))]
    [decision] = take_over([(job(1), found((0,)))], GPUS, held, Policy())
    assert decision == Hold(1, found((0,)), "GPU 0 is taken by job 7")


def test_what_was_adopted_first_takes_its_gpus() -> None:
    decided = take_over([(job(1), found()), (job(2), found())], GPUS, [], Policy())
    assert decided == [Adopt(1, found()), Hold(2, found(), "GPU 0 is taken by job 1")]


def test_jobs_that_declare_memory_share_a_gpu() -> None:
    big = [Device(0, memory_total=80 << 30)]
    held = [Reservation(7, (0,), 10 << 30, shares=True)]
    mine = job(1, mem=10 << 30)
    assert take_over([(mine, found())], big, held, Policy()) == [Adopt(1, found())]


def test_unknown_or_absent_gpus_are_held() -> None:
    unknown, absent = found(None), found((0, 5))
    decided = take_over([(job(1), unknown), (job(2), absent)], GPUS, [], Policy())
    assert decided == [
        Hold(1, unknown, "its folder does not record its GPUs (no attempt.json)"),
        Hold(2, absent, "GPU 5 is not among this daemon's GPUs"),
    ]


def test_a_job_without_gpus_is_adopted() -> None:
    assert take_over([(job(1), found(()))], GPUS, [], Policy()) == [Adopt(1, found(()))]
