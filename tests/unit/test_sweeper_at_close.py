"""A daemon's stop leaves its jobs running for the next daemon, also when a pass for
leftovers (executors/local_escaped.LeftoverSweeper, asked after every job's end) is under way
as it stops. Before, that pass, done after the close, found every attempt ended (the closed
executor watches none) and SIGKILLed the running jobs: `lost` at the next start. Nor does a
stop asked of a closed executor reach a job (a check for silence due after the stop did)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from test_local_executor import TIMEOUT, alive, request, wait_until

from gpuherd.executors import local_escaped
from gpuherd.executors.local import LocalExecutor

HOME_ID = f"closing{os.getpid()}"
"""A home id of this test's own: its passes kill no other test run's processes."""
KEY = f"{HOME_ID}:7:1"


def watched_job(executor: LocalExecutor, tmp_path: Path) -> int:
    """A job that runs until killed, launched and watched: its shell's pid."""
    job = request(tmp_path, "while :; do sleep 0.05; done", extra_env={"GPUHERD_ATTEMPT_KEY": KEY})
    pid = executor.launch(job)
    executor.watch(pid, job.attempt_dir, KEY, lambda status: None)
    return pid


def left_running(closed: Callable[[Path], Coroutine[Any, Any, int]], tmp_path: Path) -> None:
    """Run `closed` (it returns the job's pid, having asserted it alive), then end the job."""
    try:
        pid = asyncio.run(closed(tmp_path))
    finally:
        local_escaped.signal_attempt(KEY, (signal.SIGKILL,))
    os.waitpid(pid, 0)  # (the job's shell is this test's child)


async def pass_under_way_at_the_close(tmp_path: Path) -> int:
    executor = LocalExecutor()
    pid = watched_job(executor, tmp_path)
    await wait_until(lambda: pid in local_escaped.home_processes(HOME_ID), "the job's key")
    # The scanner's thread busy until the close: the pass asked now (as after a job's end)
    # is done while the executor closes, and its answer reaches the loop after.
    busy = threading.Event()
    executor._scanner.submit(busy.wait, TIMEOUT)
    executor.end_leftovers(HOME_ID)
    await wait_until(lambda: executor._sweeper._timer is None, "the pass to be asked")
    busy.set()
    executor.close()  # the daemon stops: the job runs on
    await asyncio.sleep(0)  # what the pass found reaches the loop
    # Whatever the pass went on to kill is killed before this, on the same thread.
    await asyncio.wrap_future(executor._scanner.submit(lambda: None))
    assert alive(pid)
    return pid


async def stopped_after_the_close(tmp_path: Path) -> int:
    executor = LocalExecutor()
    pid = watched_job(executor, tmp_path)
    executor.close()  # the daemon stops: the job runs on
    executor.terminate(pid, grace=0)
    executor.signal(pid, signal.SIGKILL)
    await asyncio.sleep(0.1)  # (a SIGKILL after a grace of 0 is due by now)
    assert alive(pid)
    return pid


def test_a_pass_under_way_at_the_close_kills_no_job_left_running(tmp_path: Path) -> None:
    left_running(pass_under_way_at_the_close, tmp_path)


def test_a_closed_executor_signals_no_job(tmp_path: Path) -> None:
    left_running(stopped_after_the_close, tmp_path)
