"""A spawned job's pid is committed with the next tick's changes (PID_RECORD_DELAY,
engine_spawns.py), not in a transaction of its own; a daemon that stops inside that window
still writes it, so the next daemon finds the running job by its recorded pid.

The engine is built as the daemon builds it; the executor asks the loop to close the engine
right after the tick that spawned the job, before any later tick could record the pid.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from conftest import group_members, item, one_gpu_engine, serving, wait_for
from gpuherd.core.states import JobState
from gpuherd.executors.base import LaunchRequest
from gpuherd.executors.local import LocalExecutor
from gpuherd.executors.local_records import read_process_file
from gpuherd.store import Store


class StopAfterFirstSpawn(LocalExecutor):
    def __init__(self) -> None:
        super().__init__()
        self.pids: list[int] = []
        self.stop = asyncio.Event()

    def launch(self, request: LaunchRequest) -> int:
        pid = super().launch(request)
        self.pids.append(pid)
        asyncio.get_running_loop().call_soon(self.stop.set)  # after this tick, at once
        return pid


def test_a_daemon_stopping_right_after_a_spawn_still_records_the_pid(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    executor = StopAfterFirstSpawn()

    async def main() -> int:
        async with serving(one_gpu_engine(tmp_path, store, executor), tmp_path) as service:
            (job_id,) = service.submit([item(tmp_path, "sleep 30")])
            await asyncio.wait_for(executor.stop.wait(), timeout=10)
            job = store.get_job(job_id)
            assert job is not None and job.pid is None  # not yet: it waits for the next tick
        return job_id

    job_id = asyncio.run(main())
    (pid,) = executor.pids
    try:
        job = store.get_job(job_id)
        assert job is not None and job.state is JobState.RUNNING
        assert job.pid == pid
        assert [a.pid for a in store.attempts(job_id)] == [pid]
        spawns = [e.detail for e in store.events(job_id) if e.event == "spawn"]
        assert spawns == [f"pid {pid}"]
        attempt_dir = tmp_path / "jobs" / str(job_id) / "attempt-1"
        wait_for(lambda: read_process_file(str(attempt_dir))[0] == pid, what="the shell's pid line")
    finally:
        os.killpg(pid, signal.SIGKILL)
        os.waitpid(pid, 0)  # the job's shell is this process's child: leave no zombie
        wait_for(lambda: not group_members(pid), what="the job's group to end")
        store.close()
