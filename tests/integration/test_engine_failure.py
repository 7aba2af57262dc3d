"""An unexpected exception in the engine (a bug) neither hangs the queue nor floods its log.

Found: while `Engine._tick` raised AttributeError on every tick, `gpuherd run` of 2,000 jobs
ran them all but never exited (709 `running` in its herd.db), asyncio printing "Exception in
callback Engine._tick()" thousands of times. Here the engine's own methods are made to raise
(an in-process engine or run, as the daemon and `gpuherd run` build them): a callback of the
engine that raises (a job's exit) is logged once with its traceback and said by `daemon
status` while the queue goes on; a run whose scheduler fails stops its jobs, says so, exits
non-zero, and never hangs (engine_health.py, runner_failure.py)."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

import psutil
import pytest
from click.testing import CliRunner

from conftest import item, one_gpu_engine, serving, settled
from gpuherd.cli.run_cmd import run
from gpuherd.core.states import JobState
from gpuherd.engine import Engine
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store

BUG = "'Engine' object has no attribute 'oops'"


def bug(*args: Any) -> None:
    raise AttributeError(BUG)


def left(marker: str) -> list[int]:
    """Processes of this test's jobs still alive (their command holds `marker`)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        if proc.info["status"] != psutil.STATUS_ZOMBIE and marker in (proc.info["cmdline"] or []):
            found.append(proc.pid)
    return found


def test_a_callback_that_raises_is_said_once_and_the_queue_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store(tmp_path / "herd.db")

    async def main() -> tuple[dict[str, Any], JobState, object]:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        async with serving(engine, tmp_path) as service:
            on_exit = engine.attempts._on_exit
            broken: set[int] = set()

            def exits(job_id: int, attempt: int, status: Any) -> None:
                (bug if job_id in broken else on_exit)(job_id, attempt, status)

            engine.attempts._on_exit = exits  # (the callback a job's exit calls)
            for gpus in (1, 0):  # two ends the engine fails to take: one traceback
                [job_id] = service.submit([item(tmp_path, "true", gpus=gpus)])
                broken.add(job_id)
            for _ in range(300):
                if len([r for r in caplog.records if "callback failed" in r.message]) == 2:
                    break
                await asyncio.sleep(0.05)
            said = service.status(os.getpid(), "herd.sock")
            # The engine goes on: a job that fits starts, runs and is recorded.
            [cpu] = service.submit([item(tmp_path, "true", gpus=0)])
            await settled(store, cpu)
            cpu_job = store.get_job(cpu)
            assert cpu_job is not None
            handler = asyncio.get_running_loop().get_exception_handler()
        assert asyncio.get_running_loop().get_exception_handler() is None  # (closed: given back)
        return said, cpu_job.state, handler

    with caplog.at_level(logging.INFO, "gpuherd.engine"):
        said, cpu_state, handler = asyncio.run(asyncio.wait_for(main(), 60))
    store.close()
    failing = said["scheduler_failing"]
    assert failing.startswith("the scheduler failed at "), failing
    assert f"(AttributeError: {BUG}); see `gpuherd daemon log`" in failing
    assert "`gpuherd daemon restart`" in failing
    assert cpu_state is JobState.SUCCEEDED
    assert handler is not None
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.exc_info is not None for r in errors] == [True, False], errors
    assert "executors/local.py, _on_leader_exit" in errors[0].getMessage()
    assert "asyncio" not in {r.name for r in caplog.records}  # (its "Exception in callback")


@pytest.mark.parametrize("method", ["_do_paperwork", "_on_exit"])
def test_a_run_whose_scheduler_fails_kills_its_jobs_says_so_and_exits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, method: str
) -> None:
    """A failing tick (its paperwork), or a failing exit callback whose ends are never
    recorded (the run gives up on them): either way the run ends, its jobs killed."""
    marker = f"31.{os.getpid() % 1000}"  # (a sleep of its own: found, or not, afterwards)
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("true\n" + f"sleep {marker}\n" * 20)
    engine_method = getattr(Engine, method)

    def fails_later(self: Engine, *args: Any) -> Any:
        # Once jobs run: the end of `true`, or a tick with all 4 GPUs busy. (Not the third
        # tick: how fast the input came decided whether a job ran by then, under load.)
        if method == "_on_exit" or len(self.live) == 4:
            bug()
        return engine_method(self, *args)

    monkeypatch.setattr(Engine, method, fails_later)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        run, ["--fake-gpus", "4", "-q", "--output-dir", str(out), str(jobs)]
    )
    assert result.exit_code == 1, (result.output, result.stderr)
    error = f"gpuherd: error: the scheduler failed (AttributeError: {BUG}); its traceback"
    assert error in result.stderr, result.stderr
    # (its traceback: logged once, to stderr where no logging is set up, as in the CLI)
    tracebacks = [r for r in caplog.records if r.exc_info is not None]
    assert len(tracebacks) == 1, caplog.records
    assert "the scheduler failed (AttributeError" in result.stdout
    assert "starting nothing new, killing " in result.stdout
    assert "not run; logs in" in result.stdout.splitlines()[-1]
    assert left(marker) == []
