"""An executor that cannot start a job there and then (NotStarted: a cluster node that left
between placement and start) sends it back to the queue; the job keeps its retries and runs.

The engine is built as the daemon builds it, with the local executor behind a door that
refuses the first launch (what the Ray executor does when the chosen node is gone).
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Callable, Collection
from pathlib import Path

import pytest

from conftest import item, one_gpu_engine, serving, settled
from gpuherd.core.model import Job, Outcome
from gpuherd.core.states import FINISHED_STATES, JobState, OutcomeKind
from gpuherd.engine import Engine
from gpuherd.errors import HerdError
from gpuherd.executors.base import ExitStatus, LaunchRequest, NotStarted, SpawnError
from gpuherd.executors.local import LocalExecutor
from gpuherd.listing import ListingQuery
from gpuherd.store import Store
from gpuherd.sweeps import Sweeps
from gpuherd.wire_requests import SweepRequest


class NodeGoneOnce(LocalExecutor):
    def __init__(self) -> None:
        super().__init__()
        self.refused: list[tuple[int, int]] = []

    def launch(self, request: LaunchRequest) -> int:
        if not self.refused:
            self.refused.append((request.job_id, request.attempt))
            raise NotStarted("node n1 left the cluster before this attempt started")
        return super().launch(request)


def test_a_job_not_started_goes_back_to_the_queue_with_its_retries(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    executor = NodeGoneOnce()

    async def main() -> None:
        async with serving(one_gpu_engine(tmp_path, store, executor), tmp_path) as service:
            (job_id,) = service.submit([item(tmp_path, "echo ran")])
            await settled(store, job_id)

        job = store.get_job(job_id)
        assert job is not None and job.state is JobState.SUCCEEDED, job
        assert executor.refused == [(job_id, 1)]
        assert job.attempt == 1  # the refused start is not an attempt: no retry was used
        assert [a.number for a in store.attempts(job_id)] == [1]
        events = [(e.event, e.to_state) for e in store.events(job_id)]
        assert events[:3] == [("submit", "queued"), ("start", "running"), ("retry", "queued")]
        assert ("succeed", "succeeded") in events
        retry = next(e for e in store.events(job_id) if e.event == "retry")
        assert retry.detail is not None and "node n1 left" in retry.detail
        assert (tmp_path / "jobs" / str(job_id) / "attempt-1" / "stdout.log").read_text() == "ran\n"

    asyncio.run(main())
    store.close()


LATE = 1.5
"""Seconds after its launch that StartsLate tells a start did not happen: past the second
after which an attempt's attempt.json is written (Attempts._record_start)."""


class StartsLate(LocalExecutor):
    """Starts as the Ray executor does: `launch` returns a handle at once, and `watch` tells
    LATE s later that the start did not happen (`unstarted`: what Ray's executor finds once
    the actor's creation failed, off the event loop). Once; later starts run here."""

    def __init__(self, unstarted: Exception, runs_before: int = 0) -> None:
        super().__init__()
        self.unstarted: Exception | None = unstarted
        self.runs_before = runs_before
        """Launches that run, before the one that does not start."""
        self.handles: list[int] = []

    def launch(self, request: LaunchRequest) -> int:
        if self.unstarted is None or self.runs_before:
            self.runs_before -= 1
            return super().launch(request)
        self.handles.append(request.job_id * 1000 + request.attempt)
        return self.handles[-1]

    def watch(
        self, pid: int, attempt_dir: str, key: str, on_exit: Callable[[ExitStatus], None]
    ) -> None:
        if pid not in self.handles:
            return super().watch(pid, attempt_dir, key, on_exit)
        error, self.unstarted = self.unstarted, None
        status = ExitStatus(exit_code=None, signal=None, ended_at=time.time(), unstarted=error)
        asyncio.get_running_loop().call_later(LATE, on_exit, status)


def run_one(tmp_path: Path, executor: LocalExecutor, command: str) -> Job:
    """Submit one job to an engine on `executor`; the job once it has ended (or 10 s)."""
    store = Store(tmp_path / "herd.db")

    async def main() -> int:
        async with serving(one_gpu_engine(tmp_path, store, executor), tmp_path) as service:
            (job_id,) = service.submit([item(tmp_path, command)])
            await ended(store, job_id)
        return job_id

    job = store.get_job(asyncio.run(main()))
    store.close()
    assert job is not None
    return job


async def ended(store: Store, job_id: int, timeout: float = 10.0) -> None:
    await in_state(store, job_id, FINISHED_STATES, timeout)


async def in_state(
    store: Store, job_id: int, states: Collection[JobState], timeout: float = 10.0
) -> None:
    """Wait until the job is in one of `states`, or `timeout` passed (the caller asserts)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = store.get_job(job_id)
        if job is not None and job.state in states:
            return
        await asyncio.sleep(0.05)


def test_a_start_found_late_not_to_have_happened_queues_the_job_again(tmp_path: Path) -> None:
    """As a launch that raised NotStarted: its retries untouched, its attempt's number and
    folder used again (not skipped as a run's)."""
    executor = StartsLate(NotStarted("Ray node n1 left the cluster before this attempt started"))
    job = run_one(tmp_path, executor, "echo ran")
    assert job.state is JobState.SUCCEEDED, job
    assert executor.handles == [job.id * 1000 + 1]
    assert job.attempt == 1
    store = Store(tmp_path / "herd.db")
    assert [a.number for a in store.attempts(job.id)] == [1]
    events = store.events(job.id)
    store.close()
    events = [e for e in events if e.event != "spawn"]  # (its pid, or handle, recorded)
    assert [(e.event, e.to_state) for e in events] == [
        ("submit", "queued"),
        ("start", "running"),
        ("retry", "queued"),
        ("start", "running"),
        ("succeed", "succeeded"),
    ]
    assert events[2].detail == (
        "not started, queued again: Ray node n1 left the cluster before this attempt started"
    )
    assert events[3].detail is None  # (no attempt number skipped)
    assert (tmp_path / "jobs" / str(job.id) / "attempt-1" / "stdout.log").read_text() == "ran\n"


class StartsLateThenPauses(StartsLate):
    """StartsLate, with the queue paused as its start is told not to have happened: the job
    stays queued, its folders as that left them (the next start would write them again)."""

    engine: Engine

    def watch(
        self, pid: int, attempt_dir: str, key: str, on_exit: Callable[[ExitStatus], None]
    ) -> None:
        def paused_first(status: ExitStatus) -> None:
            if status.unstarted is not None:
                self.engine.set_queue_paused(True)
            on_exit(status)

        super().watch(pid, attempt_dir, key, paused_first)


@pytest.mark.parametrize("runs_before", [0, 1])
def test_a_start_found_late_not_to_have_happened_leaves_the_folders_as_before_it(
    tmp_path: Path, runs_before: int
) -> None:
    """As a launch that raised NotStarted leaves them: job.json is the attempt before's end
    (none before it: no job.json), and the attempt's folder has no attempt.json. Before,
    job.json said the attempt that never started was running, until the next start."""
    executor = StartsLateThenPauses(NotStarted("Ray node n1 left the cluster"), runs_before)
    store = Store(tmp_path / "herd.db")

    async def main() -> int:
        executor.engine = one_gpu_engine(tmp_path, store, executor)
        async with serving(executor.engine, tmp_path) as service:
            (job_id,) = service.submit([item(tmp_path, "exit 3", retries=1)])
            await queued_again(store, job_id)
        return job_id

    job_id = asyncio.run(main())
    job = store.get_job(job_id)
    store.close()
    assert job is not None and (job.state, job.attempt) == (JobState.QUEUED, runs_before), job
    folder = tmp_path / "jobs" / str(job_id)
    unstarted = folder / f"attempt-{runs_before + 1}"
    assert unstarted.is_dir()  # (made for its start)
    assert not (unstarted / "attempt.json").exists()
    if runs_before:
        ran = json.loads((folder / "attempt-1" / "attempt.json").read_text())
        assert (ran["attempt"], ran["outcome"], ran["exit_code"]) == (1, "exit", 3), ran
        assert json.loads((folder / "job.json").read_text()) == ran
        assert (folder / "job.json").samefile(folder / "attempt-1" / "attempt.json")
    else:
        assert not (folder / "job.json").exists()


async def queued_again(store: Store, job_id: int, timeout: float = 10.0) -> None:
    """Wait until the job is queued again after a start that did not happen (or `timeout`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any((e.detail or "").startswith("not started") for e in store.events(job_id)):
            return
        await asyncio.sleep(0.05)


class StartsLateSignalled(StartsLate):
    """StartsLate, recording the signals sent to the start that does not happen (a handle:
    no process of this machine must get them)."""

    def __init__(self, unstarted: Exception) -> None:
        super().__init__(unstarted)
        self.signalled: list[tuple[int, int]] = []

    def signal(self, pid: int, signum: int) -> None:
        if pid in self.handles:
            self.signalled.append((pid, signum))
        else:
            super().signal(pid, signum)


async def stays(store: Store, job_id: int, seconds: float) -> str:
    """The job's state, if it stays the same for `seconds`; else what it became."""
    job = store.get_job(job_id)
    first = None if job is None else job.state.value
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = store.get_job(job_id)
        if job is None or job.state.value != first:
            return "gone" if job is None else job.state.value
        await asyncio.sleep(0.05)
    return str(first)


def test_a_job_paused_while_starting_whose_start_fails_late_is_held_until_released(
    tmp_path: Path,
) -> None:
    """Before, it was queued again and its next start ran it, unpaused: its user had asked
    for it not to run. Held, `ls` says why, and a release runs it."""
    executor = StartsLateSignalled(NotStarted("Ray node n1 left the cluster"))
    store = Store(tmp_path / "herd.db")

    async def main() -> tuple[int, str | None, str]:
        async with serving(one_gpu_engine(tmp_path, store, executor), tmp_path) as service:
            (job_id,) = service.submit([item(tmp_path, "echo ran")])
            await in_state(store, job_id, {JobState.RUNNING})  # (its start under way: LATE s)
            assert service.pause([job_id])[0].ok
            await in_state(store, job_id, {JobState.HELD})
            held_state = await stays(store, job_id, 1.0)  # past RETRY_NOT_STARTED's wake
            rows, _ = service.ls(ListingQuery((JobState.HELD,)))
            reason = next((r["reason"] for r in rows if r["id"] == job_id), None)
            service.release([job_id])
            await settled(store, job_id)
        return job_id, reason, held_state

    job_id, reason, held_state = asyncio.run(main())
    job = store.get_job(job_id)
    events = [e for e in store.events(job_id) if e.event != "spawn"]
    store.close()
    assert held_state == "held"
    assert reason == "held: paused while starting, and the start failed"
    assert executor.signalled == [(job_id * 1000 + 1, signal.SIGSTOP)]
    assert [(e.event, e.to_state) for e in events] == [
        ("submit", "queued"),
        ("start", "running"),
        ("pause", "paused"),
        ("retry-held", "held"),
        ("release", "queued"),
        ("start", "running"),
        ("succeed", "succeeded"),
    ]
    assert events[3].detail == (
        f"not started, held as it was paused (`gpuherd release {job_id}` runs it): "
        "Ray node n1 left the cluster"
    )
    assert job is not None and (job.state, job.attempt) == (JobState.SUCCEEDED, 1), job
    assert (tmp_path / "jobs" / str(job_id) / "attempt-1" / "stdout.log").read_text() == "ran\n"


def test_a_start_found_late_to_have_failed_fails_the_job_as_a_spawn_error(tmp_path: Path) -> None:
    message = "starting job 1 (attempt 1) on the Ray cluster: the GCS refused it"
    job = run_one(tmp_path, StartsLate(SpawnError(message)), "echo ran")
    assert (job.state, job.outcome) == (
        JobState.FAILED,
        Outcome(OutcomeKind.SPAWN_ERROR, message=message),
    )
    store = Store(tmp_path / "herd.db")
    [attempt] = store.attempts(job.id)
    events = store.events(job.id)
    store.close()
    assert attempt.outcome == job.outcome
    assert (events[-1].event, events[-1].to_state, events[-1].detail) == ("fail", "failed", message)


class BrokenOnce(LocalExecutor):
    """A launch that fails in a way no executor means to (a bug): once."""

    def __init__(self) -> None:
        super().__init__()
        self.broke = False

    def launch(self, request: LaunchRequest) -> int:
        if not self.broke:
            self.broke = True
            raise KeyError("a bug in the executor")
        return super().launch(request)


def test_a_launch_that_fails_unexpectedly_fails_its_job_and_the_queue_goes_on(
    tmp_path: Path,
) -> None:
    # Before, the exception escaped the engine's tick: the job stayed "running" with no
    # process, for ever (kill could not end it), and its GPU stayed taken.
    store = Store(tmp_path / "herd.db")

    async def main() -> None:
        async with serving(one_gpu_engine(tmp_path, store, BrokenOnce()), tmp_path) as service:
            items = [item(tmp_path, f"echo {n}") for n in ("first", "second")]
            first, second = service.submit(items)
            await settled(store, second)  # one GPU: the second runs once the first let it go

        broken, fine = store.get_job(first), store.get_job(second)
        assert broken is not None and broken.state is JobState.FAILED, broken
        assert broken.outcome is not None and broken.outcome.kind.value == "spawn_error"
        message = broken.outcome.message
        assert message == "gpuherd could not start it: KeyError('a bug in the executor')"
        assert fine is not None and fine.state is JobState.SUCCEEDED, fine

    asyncio.run(main())
    store.close()


def test_a_sweep_rolled_back_tells_watchers_of_no_job(tmp_path: Path) -> None:
    # The results folder is a file: no params.json can be written, and the whole sweep is
    # refused. Its jobs were inserted first; watchers heard of them before the fix.
    store = Store(tmp_path / "herd.db")
    results = tmp_path / "results"
    spec = {"name": "s", "command": "echo {x}", "grids": [{"x": [1, 2, 3]}]}
    spec["results_dir"] = str(results)

    async def main() -> list[object]:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        async with serving(engine, tmp_path) as service:
            heard = engine.changes.subscribe(backlog=0)
            results.write_text("not a folder")
            with pytest.raises(HerdError, match="cannot write"):
                await Sweeps(service).submit(SweepRequest(spec=spec, cwd=str(tmp_path)))
            await asyncio.sleep(0.1)  # a tick would start a job that was not rolled back
            return [heard.get_nowait() for _ in range(heard.qsize())]

    assert asyncio.run(main()) == []
    assert store.count_jobs() == 0
    store.close()
