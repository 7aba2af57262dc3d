"""A later attempt than the database's runs (herd.db restored from an older backup): the
live job's own attempt is superseded, and the job adopted where its recorded GPUs have room,
else held (core/recovery.py: reconcile, take_over). Later attempts that ended are recorded
as they ended, the latest deciding the job's state (catch_up). A folder where a run is
recorded but could not be taken keeps it: the next attempt is numbered past it
(attempt_numbers.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

from gpuherd.attempt_numbers import next_number
from gpuherd.core.lifecycle import after_attempt, classify
from gpuherd.core.model import Device, Job, JobSpec, Policy, Reservation
from gpuherd.core.recovery import (
    Adopt,
    CatchUp,
    Finish,
    Found,
    Hold,
    Observed,
    Ran,
    Reattach,
    Supersede,
    Take,
    Unstart,
    back_to_queue,
    catch_up,
    reconcile,
    reservation,
    run_decides,
    runs_unwatched,
    take_over,
    unwatched,
    unwatched_run,
)
from gpuherd.core.states import Event, JobState, OutcomeKind
from gpuherd.executors.base import Executor, ExitStatus
from gpuherd.layout import Layout

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


def test_an_ended_attempt_with_a_later_one_that_ended_is_superseded() -> None:
    ended = Observed(pid=100, running=False, exit_code=1, recorded=True, ended_at=5.0)
    later = {1: catch_up(1, [ran(2)])}
    assert reconcile([job(1, JobState.RUNNING)], {1: ended}, NOW, later) == [
        Supersede(1, Finish(1, 1, None, 5.0))
    ]


def test_a_running_attempt_is_reattached_whatever_runs_after_it() -> None:
    seen = Observed(pid=100, running=True)
    assert reconcile([job(1, JobState.RUNNING)], {1: seen}, NOW, {1: found()}) == [Reattach(1, 100)]


def ran(
    attempt: int,
    exit_code: int | None = 0,
    signal: int | None = None,
    stop_reason: OutcomeKind | None = None,
) -> Ran:
    folder = f"/home/jobs/1/attempt-{attempt}"
    return Ran(attempt, 4000 + attempt, folder, 50.0, exit_code, signal, stop_reason)


def test_the_latest_later_attempt_decides() -> None:
    """Ended attempts before the latest are recorded with the job going back to the queue
    after each (never through a final state); the latest, if it ended, as it ended; if it
    runs, it is taken over once those before it are recorded."""
    assert catch_up(1, []) == CatchUp()
    assert not catch_up(1, [])
    failed, succeeded = ran(2, 1), ran(3, 0)
    assert catch_up(1, [failed, succeeded]) == CatchUp(
        (Take(1, failed, superseded=True), Take(1, succeeded, superseded=False))
    )
    assert catch_up(1, [failed, found(attempt=3)]) == CatchUp(
        (Take(1, failed, superseded=True),), found(attempt=3)
    )
    # One that runs while a later one ran is not the job's run (it was released meanwhile),
    # but runs on its GPUs: set aside, to be watched (before: left alone, unwatched).
    assert catch_up(1, [found(attempt=2), succeeded]) == CatchUp(
        (Take(1, succeeded, superseded=False),), aside=(found(attempt=2),)
    )
    assert catch_up(1, [found(attempt=1), failed, found(attempt=3)]) == CatchUp(
        (Take(1, failed, superseded=True),), found(attempt=3), (found(attempt=1),)
    )
    assert catch_up(1, [failed]).first() == "attempt 2 ran"
    assert catch_up(1, [found(attempt=2)]).first() == "attempt 2 runs"
    assert catch_up(1, [found(attempt=2), succeeded]).latest() == 3
    assert catch_up(1, [failed, found(attempt=3)]).latest() == 3


def test_a_taken_attempt_ends_as_its_folder_recorded_it() -> None:
    """The exit status; what the watching daemon wrote (it stopped it); or, with neither (no
    `exit` line: killed with SIGKILL, a power cut), lost, and retried per --retries."""
    assert classify(ran(2, 3).ended).kind is OutcomeKind.EXIT
    timed_out = ran(2, None, signal=15, stop_reason=OutcomeKind.TIMEOUT)
    assert classify(timed_out.ended).kind is OutcomeKind.TIMEOUT
    cut_short = ran(2, None)
    lost = classify(cut_short.ended)
    assert lost.kind is OutcomeKind.LOST
    once = Job(1, JobSpec("true", "/tmp"), JobState.RUNNING, attempt=2)
    assert after_attempt(once, cut_short.ended, lost).state is JobState.LOST
    retried = Job(1, JobSpec("true", "/tmp", retries=2), JobState.RUNNING, attempt=2)
    assert after_attempt(retried, cut_short.ended, lost).state is JobState.QUEUED


def test_a_job_goes_back_to_the_queue_by_the_verb_the_restore_undid() -> None:
    assert back_to_queue(JobState.QUEUED) is None
    assert back_to_queue(JobState.HELD) is Event.RELEASE
    for state in (JobState.FAILED, JobState.SUCCEEDED, JobState.CANCELLED, JobState.LOST):
        assert back_to_queue(state) is Event.RETRY


def test_a_held_run_reserves_what_its_job_would() -> None:
    shares = Job(1, JobSpec("true", "/tmp", mem=4 << 30, project="p"), JobState.HELD)
    assert reservation(shares, (0,)) == Reservation(1, (0,), 4 << 30, shares=True, project="p")
    assert reservation(shares, (0,), peak=6 << 30).mem == 6 << 30
    assert reservation(job(2), (1,)) == Reservation(2, (1,))


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


def test_a_hold_names_its_unwatched_run_for_ls() -> None:
    detail = f"{unwatched(2, 4242)}, but herd.db did not know it"
    assert unwatched_run(detail) == (2, 4242)
    assert unwatched_run("held by the user") is None
    assert runs_unwatched(2, 4242) == "held: attempt 2 runs unwatched (pid 4242)"
    # `gpuherd gpus` says the same of the run of a job released or cancelled meanwhile.
    assert runs_unwatched(2, 4242, JobState.CANCELLED).startswith("cancelled: attempt 2 runs")


def test_a_held_runs_end_decides_its_job_only_while_the_job_is_held_for_it() -> None:
    """Its end is the job's attempt's (a finished run never runs again), unless the user
    released or cancelled the job meanwhile, or held it again: that verb stands."""
    hold = f"{unwatched(2, 4242)}, but herd.db did not know it"
    assert run_decides(JobState.HELD, hold, (2, 4242))
    for state in (JobState.QUEUED, JobState.RUNNING, JobState.CANCELLED, JobState.SUCCEEDED):
        assert not run_decides(state, hold, (2, 4242))  # released (and maybe run) or killed
    assert not run_decides(JobState.HELD, "held by the user", (2, 4242))  # held again
    assert not run_decides(JobState.HELD, None, (2, 4242))
    assert not run_decides(JobState.HELD, hold, (3, 4242))  # another run: a later restore's


class Exits:
    """An executor that reads only recorded exits: an `exit_status` file (as Ray's)."""

    def recorded_exit(self, attempt_dir: str) -> ExitStatus | None:
        ran = (Path(attempt_dir) / "exit_status").exists()
        return ExitStatus(0, None, NOW) if ran else None


def next_of(root: Path, folders: dict[str, dict[str, object] | None], **layout: bool) -> object:
    """The next attempt of job 1 (at attempt 0) with these attempt folders in its folder,
    each with that attempt.json (None: none, but an exit recorded; {}: nothing in it)."""
    for name, info in folders.items():
        folder = root / "1" / name
        folder.mkdir(parents=True)
        if info is None:
            (folder / "exit_status").write_text("0\n")
        elif info:
            (folder / "attempt.json").write_text(json.dumps(info))
    queued = Job(1, JobSpec("true", "/tmp"), JobState.QUEUED)
    number, folder, why = next_number(Layout(root, **layout), cast(Executor, Exits()), queued)
    assert folder == str(root / "1" / f"attempt-{number}")
    return number, why


def test_the_next_attempt_is_numbered_past_a_run_the_database_does_not_know(
    tmp_path: Path,
) -> None:
    assert next_of(tmp_path / "a", {}) == (1, None)
    ran = {"id": 1, "attempt": 1}
    assert next_of(tmp_path / "b", {"attempt-1": ran}) == (
        2,
        "attempt 1's folder exists (a run herd.db does not know): this is attempt 2",
    )
    assert next_of(tmp_path / "c", {"attempt-1": None, "attempt-3": {}}) == (
        4,
        "attempt folders 1-3 exist (runs herd.db does not know): this is attempt 4",
    )


def test_a_folder_where_this_job_never_ran_is_used_again(tmp_path: Path) -> None:
    """Another job's (a sweep point run again by a new job), or one nothing ran in (a start
    recorded, then the daemon stopped before the spawn): as before."""
    assert next_of(tmp_path / "a", {"attempt-1": {"id": 9, "attempt": 1}}) == (1, None)
    assert next_of(tmp_path / "b", {"attempt-1": {}}) == (1, None)
