"""While a job's next attempt runs (`--retries`, `gpuherd retry`), its folder holds no
SUCCESS or FAILURE: the attempt before's marker went as it started, where a script or a
sweep's resume would have taken the running retry for that end. The attempt folders keep
their own; an attempt that did not start after all puts the marker back. Real daemon (4 fake
GPUs), a real `gpuherd run`, and an engine whose executor refuses a start; real processes."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_not_started import queued_again

from conftest import Herd, RunProcess, Runs, item, one_gpu_engine, serving, stays, wait_for
from gpuherd.core.states import JobState
from gpuherd.engine import Engine
from gpuherd.executors.base import ExitStatus, LaunchRequest, NotStarted
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store

MARKERS = ("SUCCESS", "FAILURE")


def second_attempt(work: Path, first_exit: int) -> str:
    """Attempt 1 ends with `first_exit`; attempt 2 says it runs, then waits for `go`."""
    return (
        f"cd {work}; if [ -e first_done ]; then touch second_runs; "
        "until [ -e go ]; do sleep 0.05; done; "
        f"else touch first_done; exit {first_exit}; fi"
    )


def markers(folder: Path) -> list[str]:
    return [name for name in MARKERS if (folder / name).exists()]


def no_marker_while_it_runs(job_dir: Path, work: Path, attempt_1: str) -> None:
    """Attempt 2 runs (gated on `go`) and attempt 1's end is written: the job's folder has no
    marker, for as long as it is watched (attempt 1's end is written after its retry's start,
    in the same pass of the daemon: it must not land in the job's folder then either)."""
    wait_for((work / "second_runs").exists, what="attempt 2 to run")
    wait_for((job_dir / "attempt-1" / attempt_1).exists, what="attempt 1's end to be written")
    stays(lambda: markers(job_dir) == [], 0.5, f"no marker in {job_dir} while attempt 2 runs")


def ended_while_attempt_2_runs(job_dir: Path, work: Path) -> list[dict[str, Any]]:
    """The job folder's job.json, read over and over until it names attempt 2 (whose start is
    recorded a second in): each reading, taken while attempt 2 ran, that said the job ended.
    Attempt 1's end is written after its retry's start, in the same pass of the daemon: it
    wrote job.json too, which said "ended" for that second while the retry ran."""
    said_ended: list[dict[str, Any]] = []
    deadline = time.monotonic() + 30
    while True:
        runs = (work / "second_runs").exists()  # (looked at first: it ran as job.json was read)
        try:
            info = json.loads((job_dir / "job.json").read_text())
        except (OSError, ValueError):  # none yet (attempt 1 ended within its first second)
            info = {}
        if runs and "ended_at" in info:
            said_ended.append(info)
        if info.get("attempt") == 2:
            return said_ended
        assert time.monotonic() < deadline, f"{job_dir / 'job.json'} never named attempt 2"
        time.sleep(0.01)


def test_job_json_says_no_end_while_the_retry_runs(shared_daemon: Herd, shared_work: Path) -> None:
    job_id = shared_daemon.submit("--retries", "1", second_attempt(shared_work, 3))
    job_dir = shared_daemon.home / "jobs" / str(job_id)
    assert ended_while_attempt_2_runs(job_dir, shared_work) == []
    ended = json.loads((job_dir / "attempt-1" / "attempt.json").read_text())
    assert (ended["attempt"], ended["exit_code"]) == (1, 3)  # its own folder has its end
    ends_with_success(shared_daemon, job_id, job_dir, shared_work)


def test_gpuherd_run_job_json_says_no_end_while_the_retry_runs(runs: Runs) -> None:
    """Attempt 1 runs in the job's folder: its job.json is attempt 1's own file."""
    run, job_dir, work = run_with_a_retry(runs)
    assert ended_while_attempt_2_runs(job_dir, work) == []
    (work / "go").touch()
    status, _, err = run.finish()
    assert status == 0, err
    assert json.loads((job_dir / "job.json").read_text())["exit_code"] == 0


def run_with_a_retry(runs: Runs) -> tuple[RunProcess, Path, Path]:
    """A `gpuherd run` of one job whose attempt 1 fails and attempt 2 waits for `go`: the run,
    the job's folder, and the folder the job works in."""
    out, work = runs.root / "out", runs.root / "work"
    work.mkdir()
    run = runs.start("--fake-gpus", "1", "--retries", "1", "--output-dir", str(out))
    run.write(second_attempt(work, 3) + "\n")
    run.close_stdin()
    return run, out / "job_0", work


def ends_with_success(herd: Herd, job_id: int, job_dir: Path, work: Path) -> None:
    (work / "go").touch()
    herd.wait_state(job_id, "succeeded")
    wait_for(lambda: markers(job_dir) == ["SUCCESS"], what="the job folder's SUCCESS")
    assert markers(job_dir / "attempt-2") == ["SUCCESS"]


@pytest.mark.parametrize("first_exit", [3, 0], ids=["retries-after-failure", "retry-a-success"])
def test_a_running_retry_leaves_the_job_folder_without_a_marker(
    shared_daemon: Herd, shared_work: Path, first_exit: int
) -> None:
    herd = shared_daemon
    retries = ["--retries", "1"] if first_exit else []
    job_id = herd.submit(*retries, second_attempt(shared_work, first_exit))
    job_dir = herd.home / "jobs" / str(job_id)
    attempt_1 = "FAILURE" if first_exit else "SUCCESS"
    if not first_exit:  # it succeeded: `gpuherd retry` runs it again
        herd.wait_state(job_id, "succeeded")
        wait_for(lambda: markers(job_dir) == ["SUCCESS"], what="attempt 1's SUCCESS")
        herd.cli("retry", str(job_id))
    no_marker_while_it_runs(job_dir, shared_work, attempt_1)
    assert herd.job(job_id)["state"] == "running"
    assert markers(job_dir / "attempt-1") == [attempt_1]  # its own folder keeps its end
    ends_with_success(herd, job_id, job_dir, shared_work)


def test_gpuherd_run_retry_leaves_the_job_folder_without_a_marker(runs: Runs) -> None:
    """`gpuherd run` runs attempt 1 in the job's folder itself: its FAILURE goes too."""
    run, job_dir, work = run_with_a_retry(runs)
    wait_for((work / "second_runs").exists, what="attempt 2 to run")
    wait_for((job_dir / "job.json").exists, what="attempt 2's start to be written")
    stays(lambda: markers(job_dir) == [], 0.5, f"no marker in {job_dir} while attempt 2 runs")
    (work / "go").touch()
    status, _, err = run.finish()
    assert status == 0, err
    assert markers(job_dir) == markers(job_dir / "attempt-2") == ["SUCCESS"]


class Attempt2NotStarted(LocalExecutor):
    """Attempt 2's start does not happen, once: `launch` raises NotStarted (as Ray's executor
    does for a node gone), or, `late`, its watch tells so (an actor that could not be made).
    The queue is paused then: the job stays queued, its folders as that left them."""

    engine: Engine

    def __init__(self, late: bool) -> None:
        super().__init__()
        self.late, self.handle = late, 0
        self.seen: list[str] | None = None
        """The job folder's markers as attempt 2 was handed to the executor."""

    def launch(self, request: LaunchRequest) -> int:
        if request.attempt != 2 or self.seen is not None:
            return super().launch(request)
        self.seen = markers(Path(request.attempt_dir).parent)
        if not self.late:
            self.engine.set_queue_paused(True)
            raise NotStarted("node n1 left the cluster")
        self.handle = request.job_id * 1000 + 2
        return self.handle

    def watch(
        self, pid: int, attempt_dir: str, key: str, on_exit: Callable[[ExitStatus], None]
    ) -> None:
        if pid != self.handle:
            return super().watch(pid, attempt_dir, key, on_exit)
        self.engine.set_queue_paused(True)
        error = NotStarted("Ray node n1 left the cluster before this attempt started")
        status = ExitStatus(exit_code=None, signal=None, ended_at=time.time(), unstarted=error)
        asyncio.get_running_loop().call_later(0.2, on_exit, status)


@pytest.mark.parametrize("late", [False, True], ids=["at-once", "late"])
def test_a_retry_that_did_not_start_puts_the_marker_back(tmp_path: Path, late: bool) -> None:
    executor = Attempt2NotStarted(late)
    store = Store(tmp_path / "herd.db")

    async def main() -> int:
        executor.engine = one_gpu_engine(tmp_path, store, executor)
        async with serving(executor.engine, tmp_path) as service:
            # (a retry delay: attempt 1's end is written before attempt 2 starts)
            job = item(tmp_path, "exit 3", retries=1, retry_delay=0.2)
            (job_id,) = service.submit([job])
            await queued_again(store, job_id)
        return job_id

    job_id = asyncio.run(main())
    job = store.get_job(job_id)
    store.close()
    assert job is not None and (job.state, job.attempt) == (JobState.QUEUED, 1), job
    assert executor.seen == []  # gone as attempt 2 started
    folder = tmp_path / "jobs" / str(job_id)
    assert markers(folder) == ["FAILURE"]  # the attempt before's again
    assert (folder / "FAILURE").samefile(folder / "attempt-1" / "FAILURE")
