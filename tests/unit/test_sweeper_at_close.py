"""A daemon's stop leaves its jobs running for the next daemon, also when a pass for
leftovers (executors/local_escaped.LeftoverSweeper, asked after every job's end) is under way
as it stops. Before, that pass, done after the close, found every attempt ended (the closed
executor watches none) and SIGKILLed the running jobs: `lost` at the next start."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path

from test_local_executor import TIMEOUT, alive, request, wait_until

from gpuherd.executors import local_escaped
from gpuherd.executors.local import LocalExecutor

HOME_ID = f"closing{os.getpid()}"
"""A home id of this test's own: its passes kill no other test run's processes."""
KEY = f"{HOME_ID}:7:1"


def test_a_pass_under_way_at_the_close_kills_no_job_left_running(tmp_path: Path) -> None:
    async def main() -> int:
        executor = LocalExecutor()
        job = request(
            tmp_path, "while :; do sleep 0.05; done", extra_env={"GPUHERD_ATTEMPT_KEY": KEY}
        )
        pid = executor.launch(job)
        executor.watch(pid, job.attempt_dir, KEY, lambda status: None)
        await wait_until(
            lambda: pid in local_escaped.home_processes(HOME_ID), "the job to carry its key"
        )
        # The scanner's thread busy until the close: the pass asked now (as after a job's
        # end) is done while the executor closes, and its answer reaches the loop after.
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

    try:
        pid = asyncio.run(main())
    finally:
        local_escaped.signal_attempt(KEY, (signal.SIGKILL,))
    os.waitpid(pid, 0)  # (the job's shell is this test's child)
