"""`pause` and `resume` signal a job once the change is committed, and a change rolled back is
undone in memory: the SIGSTOP or SIGCONT went at once, before the commit, so a commit that
failed (a full disk, herd.db locked) left the job stopped where herd.db said `running`, or
running where it said `paused`. The engine is built as the daemon builds it, on the local
executor, which notes each signal and whether herd.db's transaction was still open."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import psutil
import pytest

from conftest import item, one_gpu_engine, serving
from gpuherd.core.states import JobState
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store
from integration.test_stop_after_commit import until
from waits import shell_stopped


class NotedSignals(LocalExecutor):
    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store
        self.sent: list[tuple[int, bool]] = []
        """(signal, whether herd.db had a transaction open) for each signal asked for."""

    def signal(self, pid: int, signum: int) -> None:
        self.sent.append((signum, self.store._db.in_transaction))
        super().signal(pid, signum)


def stopped(pid: int) -> bool:
    return shell_stopped(psutil.Process(pid))


def test_a_pause_and_a_resume_rolled_back_leave_the_job_as_it_was(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    executor = NotedSignals(store)

    async def main() -> None:
        engine = one_gpu_engine(tmp_path, store, executor)
        async with serving(engine, tmp_path) as service:
            job_item = item(tmp_path, "while :; do sleep 0.05; done", timeout=600.0)
            (job_id,) = service.submit([job_item])
            pid = (await until(lambda: engine.live.get(job_id), "the job to run")).pid
            deadline = engine.live[job_id].deadline

            with pytest.raises(RuntimeError), store.transaction():
                [said] = service.pause([job_id])
                assert said.ok and said.message.startswith("paused"), said
                assert executor.sent == []  # was: SIGSTOP at once, before the commit
                raise RuntimeError("herd.db refused the commit")
            assert executor.sent == [] and not stopped(pid)
            job, live = store.get_job(job_id), engine.live[job_id]
            assert job is not None and job.state is JobState.RUNNING, job
            assert (live.paused, live.time_left) == (False, None), live
            assert live.deadline is not None and not live.deadline.cancelled(), live
            assert abs(live.deadline.when() - deadline.when()) < 1.0  # (when(): of the loop)

            [said] = service.pause([job_id])  # asked again: stored, then signalled
            assert said.ok, said
            assert executor.sent == [(signal.SIGSTOP, False)]
            await until(lambda: stopped(pid), "the job to be stopped (SIGSTOP)")

            with pytest.raises(RuntimeError), store.transaction():
                [said] = service.resume([job_id])
                assert said.ok and said.message == "resumed", said
                raise RuntimeError("herd.db refused the commit")
            assert executor.sent == [(signal.SIGSTOP, False)] and stopped(pid)
            job, live = store.get_job(job_id), engine.live[job_id]
            assert job is not None and job.state is JobState.PAUSED, job
            assert (live.paused, live.deadline) == (True, None), live
            assert live.time_left is not None and 590 < live.time_left <= 600, live

            [said] = service.resume([job_id])
            assert said.ok, said
            assert executor.sent[1:] == [(signal.SIGCONT, False)]
            await until(lambda: not stopped(pid), "the job to run again (SIGCONT)")
            job = store.get_job(job_id)
            assert job is not None and job.state is JobState.RUNNING, job
            [said] = service.kill([job_id])
            assert said.ok, said
            await until(lambda: job_id not in engine.live, "the job to end")

    asyncio.run(main())
    store.close()
