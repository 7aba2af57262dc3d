"""A daemon's stop leaves its jobs running for the next daemon; its event loop runs a moment
longer (asyncio.run's teardown), and a job's check for silence (`--no-output-timeout ...
--on-no-output kill`) must not stop the job then: before, a check that came due in that
moment found the job silent and stopped it (SIGTERM), although the daemon had let it go."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

import psutil

from conftest import item, one_gpu_engine, serving
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store

SILENCE = 0.3
"""The job's --no-output-timeout, in seconds: checked SILENCE_CHECKS times as long
(silence_watch.py)."""


def test_a_check_for_silence_after_the_stop_leaves_the_job_running(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    job_shell = 0

    async def stopped_daemon() -> None:
        nonlocal job_shell
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        async with serving(engine, tmp_path) as service:
            silent = item(tmp_path, "sleep 60", no_output_timeout=SILENCE, kill_on_no_output=True)
            (job_id,) = service.submit([silent])
            while not (job_shell := store.get_job(job_id).pid or 0):  # type: ignore[union-attr]
                await asyncio.sleep(0.01)
        # The loop runs on past the silence the job was allowed: its checks come due now.
        await asyncio.sleep(SILENCE * 3)

    try:
        asyncio.run(stopped_daemon())
        job = psutil.Process(job_shell)
        assert job.status() != psutil.STATUS_ZOMBIE, "the job was stopped after the stop"
    finally:
        if job_shell:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(job_shell, signal.SIGKILL)
            os.waitpid(job_shell, 0)  # (the job's shell is this test's child)
        store.close()
