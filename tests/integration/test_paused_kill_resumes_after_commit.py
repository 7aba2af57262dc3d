"""`kill` of a paused job resumes it with its SIGTERM, once the stop is committed: the SIGCONT
went at once, before the commit, so a commit that failed (a full disk, herd.db locked) or a
crash of the daemon before it left the job running, unasked, where herd.db said `paused`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psutil
import pytest

from conftest import Herd, communicated, item, one_gpu_engine, serving, wait_for
from gpuherd.core.states import FINISHED_STATES, JobState
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store
from integration.test_stop_after_commit import until
from waits import shell_stopped


def stopped(pid: int) -> bool:
    return shell_stopped(psutil.Process(pid))


def test_a_kill_of_a_paused_job_rolled_back_leaves_it_paused(tmp_path: Path) -> None:
    store, executor = Store(tmp_path / "herd.db"), LocalExecutor()
    terms = tmp_path / "terms"

    async def main() -> None:
        engine = one_gpu_engine(tmp_path, store, executor)
        async with serving(engine, tmp_path) as service:
            command = f"trap 'echo term >> {terms}; exit 143' TERM; while :; do sleep 0.05; done"
            (job_id,) = service.submit([item(tmp_path, command, grace=5.0, timeout=600.0)])
            pid = (await until(lambda: engine.live.get(job_id), "the job to run")).pid
            [paused] = service.pause([job_id])
            assert paused.ok, paused
            await until(lambda: stopped(pid), "the job to be stopped (SIGSTOP)")
            with pytest.raises(RuntimeError), store.transaction():
                [said] = service.kill([job_id])
                assert said.ok and "stopping (SIGTERM" in said.message, said
                assert stopped(pid)  # was: SIGCONT already, before the commit
                raise RuntimeError("herd.db refused the commit")
            assert stopped(pid) and not terms.exists()
            job, live = store.get_job(job_id), engine.live[job_id]
            assert job is not None and (job.state, job.stop) == (JobState.PAUSED, None), job
            assert (live.paused, live.stop_reason, live.deadline) == (True, None, None), live
            assert live.time_left is not None and 590 < live.time_left <= 600, live
            # Asked again, the kill is done: resumed with its SIGTERM, it runs its handler.
            [said] = service.kill([job_id])
            assert said.ok and "stopping (SIGTERM" in said.message, said
            await until(lambda: (j := store.get_job(job_id)) and j.state in FINISHED_STATES, "")

        job = store.get_job(job_id)
        assert job is not None and job.state is JobState.KILLED, job
        assert terms.read_text() == "term\n"

    asyncio.run(main())
    store.close()


def test_a_kill_of_a_paused_job_cut_off_by_a_crash_leaves_it_paused(
    herd: Herd, tmp_path: Path
) -> None:
    mark, terms = tmp_path / "hold", tmp_path / "terms"
    herd.env["GPUHERD_TEST_STOP_HOLD"] = str(mark)  # held before the stop's commit
    herd.start("--fake-gpus", "1")
    command = f"trap 'echo term >> {terms}; exit 143' TERM; while :; do sleep 0.05; done"
    job = herd.submit("--grace", "5s", "--", command)
    pid = herd.wait_state(job, "running")["pid"]
    herd.cli("pause", str(job))
    wait_for(lambda: stopped(pid), what="the job to be stopped (SIGSTOP)")
    kill = herd.popen("kill", str(job))
    try:
        wait_for(mark.exists, 30, "the daemon to hold before the kill's commit")
        assert stopped(pid)  # was: running again, SIGCONTed before the commit
        herd.kill9_held()
    finally:
        communicated(kill)
    del herd.env["GPUHERD_TEST_STOP_HOLD"]
    herd.start("--fake-gpus", "1")
    after = herd.job(job)
    assert (after["state"], after["pid"]) == ("paused", pid), after
    assert stopped(pid) and not terms.exists()
    herd.cli("kill", str(job))
    assert herd.wait_state(job, "killed")["attempt"] == 1
    assert terms.read_text() == "term\n"
