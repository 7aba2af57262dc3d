"""Finding a job's process again after a restart: a pid taken by another program while no
daemon ran is not the job's (it must not be re-attached to, and signalled on `kill`), the
jobs a crash left with no recorded pid are all found in one pass over /proc, and a job that
ends while the restart looks at it keeps its exit status."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from faults import NEXT_PID, take_pid

from conftest import Herd, item, one_gpu_engine, serving, wait_for
from gpuherd.core.states import JobState, OutcomeKind
from gpuherd.executors.local import LocalExecutor
from gpuherd.jobfiles import KEY_VARIABLE
from gpuherd.store import Store


def test_a_pid_taken_by_another_program_while_no_daemon_ran_is_not_the_job(
    daemon: Herd,
) -> None:
    job = daemon.submit("--", "sleep 300")
    pid = int(wait_for(lambda: daemon.job(job)["pid"], what="the job's pid"))
    daemon.cli("daemon", "stop")  # the job goes on...
    os.killpg(pid, signal.SIGKILL)  # ...and dies while no daemon runs (no exit recorded)
    try:
        wait_for(lambda: not psutil.pid_exists(pid), 5, "the job's shell to be reaped")
    except AssertionError:
        pytest.skip("nothing reaps orphans here: the pid cannot be taken again")
    impostor = take_pid(pid)
    if impostor is None:
        pytest.skip(f"cannot choose the next pid here ({NEXT_PID})")
    try:
        # As if the job had started just before it died: start times are known to the
        # second only, and within that slack the new program passed for the job.
        now = time.time()
        os.utime(daemon.home / "jobs" / str(job) / "attempt-1" / "process", (now, now))
        daemon.start()
        ended = daemon.wait_state(job, "lost", "failed", "killed", "succeeded", timeout=10)
        assert (ended["state"], ended["outcome"]) == ("lost", "lost")
        assert impostor.poll() is None  # not ours: left alone
    finally:
        impostor.kill()
        impostor.wait()


def test_a_restart_finds_the_leaders_of_many_jobs_in_one_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A daemon killed amid many starts leaves jobs recorded as started with no pid: the
    next one looks for each job's shell. A pass over /proc for each made that quadratic: 14 s
    for 500 jobs, and 1,000 took longer than `daemon start` waits for an answer."""
    keys = [f"recovery-test:{i}:1" for i in range(20)]
    shells = [
        subprocess.Popen(
            ["sleep", "60"], start_new_session=True, env={**os.environ, KEY_VARIABLE: key}
        )
        for key in keys
    ]
    # Popen returns once the kernel has begun the exec, before it has laid out the new
    # program's environment (/proc/PID/environ reads empty until then): a restart looks long
    # after its jobs began.
    wait_for(
        lambda: all(psutil.Process(s.pid).environ().get(KEY_VARIABLE) for s in shells),
        what="the shells' environments",
    )
    passes = 0
    process_iter = psutil.process_iter

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal passes
        passes += 1
        return process_iter(*args, **kwargs)

    monkeypatch.setattr(psutil, "process_iter", counted)
    executor = LocalExecutor()
    try:
        found = {key: executor.find_leader(i, 1, key) for i, key in enumerate(keys)}
        assert found == {key: shell.pid for key, shell in zip(keys, shells, strict=True)}
        assert executor.find_leader(99, 1, "recovery-test:99:1") is None  # never started
        assert passes == 1
    finally:
        executor.close()
        for shell in shells:
            shell.kill()
            shell.wait()


class EndsWhileLookedAt(LocalExecutor):
    """A restart's executor whose job ends just as it is asked whether the job runs: the
    `go` file lets the job finish, and the answer waits until it has."""

    def __init__(self, go: Path) -> None:
        super().__init__()
        self.go = go

    def is_running(
        self, pid: int, job_id: int, attempt: int, key: str, attempt_dir: str = ""
    ) -> bool:
        self.go.touch()
        wait_for(lambda: psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, what="its end")
        return super().is_running(pid, job_id, attempt, key, attempt_dir)


def test_a_job_that_ends_while_a_restart_looks_at_it_is_not_lost(tmp_path: Path) -> None:
    """The restart read the job's exit status before asking whether it ran: a job that ended
    between the two had neither a status nor a process, and was taken for `lost`."""
    go = tmp_path / "go"
    store = Store(tmp_path / "herd.db")

    async def first_daemon() -> int:
        async with serving(one_gpu_engine(tmp_path, store, LocalExecutor()), tmp_path) as service:
            waits = f"while [ ! -e {go} ]; do sleep 0.02; done"
            (job_id,) = service.submit([item(tmp_path, waits)])
            await until(lambda: store.get_job(job_id).pid)  # type: ignore[union-attr]
        return job_id  # its engine closed as by a crash: the job runs on, unwatched

    async def restart() -> None:
        engine = one_gpu_engine(tmp_path, store, EndsWhileLookedAt(go))
        engine.start()
        engine.close()

    job_id = asyncio.run(first_daemon())
    pid = store.get_job(job_id).pid  # type: ignore[union-attr]
    try:
        asyncio.run(restart())
        job = store.get_job(job_id)
        assert job is not None
        assert job.outcome is not None
        assert (job.state, job.outcome.kind, job.outcome.exit_code) == (
            JobState.SUCCEEDED,
            OutcomeKind.EXIT,
            0,
        )
    finally:
        go.touch()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)  # the job's shell was this test's child
        store.close()


async def until(condition: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)
