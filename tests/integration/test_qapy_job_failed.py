"""JobFailed names the error a task's traceback ends with: not a line written after it (an
atexit hook's, as wandb's), nor the second line of a message of many. Every wait has a timeout.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import gpuherd
from conftest import api_daemon, wait_for
from gpuherd.pyapi import JobFailed, connect

TASKS_MODULE = """
import atexit
import sys

import gpuherd


@gpuherd.task(gpus=0)
def diverge(lr):
    # as wandb does: a line on stderr as Python exits, after the traceback
    atexit.register(print, "wandb: Find logs at: ./wandb/run-1/logs", file=sys.stderr)
    raise ValueError(f"loss diverged at lr={lr}")


@gpuherd.task(gpus=0)
def load():
    raise RuntimeError("Error(s) in loading state_dict for Net:\\n\\tMissing key(s): fc.weight")


@gpuherd.task(gpus=0)
def quiet():
    print("no traceback: this line says why", file=sys.stderr)
    sys.exit(3)
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    with api_daemon(tmp_path_factory.mktemp("failed"), "qapy_failed_mod", TASKS_MODULE):
        yield connect()


def failure(job: gpuherd.Job) -> str:
    with pytest.raises(JobFailed) as failed:
        job.result(timeout=60)
    return str(failed.value)


def test_the_error_not_the_line_an_atexit_hook_wrote_after_it(api: gpuherd.Herd) -> None:
    from qapy_failed_mod import diverge  # type: ignore[import-not-found]

    job = diverge.submit(lr=10)
    text = failure(job)
    assert text == f"job {job.id} (diverge) failed (exit 1): ValueError: loss diverged at lr=10"
    assert "wandb: Find logs at" in job.logs("stderr")  # (still in the log, where it was)


def test_a_message_of_many_lines_keeps_its_type(api: gpuherd.Herd) -> None:
    from qapy_failed_mod import load

    job = load.submit()
    error = "RuntimeError: Error(s) in loading state_dict for Net:"
    assert failure(job) == f"job {job.id} (load) failed (exit 1): {error}"


def test_without_a_traceback_the_last_line_of_stderr(api: gpuherd.Herd) -> None:
    from qapy_failed_mod import quiet

    job = quiet.submit()
    assert failure(job) == f"job {job.id} (quiet) failed (exit 3): no traceback: this line says why"


def test_a_job_gpuherd_stopped_is_not_told_by_its_stderr(api: gpuherd.Herd) -> None:
    """A --timeout or a kill is why: the job's last stderr line was the shell's report of
    the SIGTERM (`failed (timeout): Terminated`) or its progress."""
    timed_out = api.submit("echo epoch 3 >&2; sleep 60", gpus=0, timeout=1)
    assert failure(timed_out) == f"job {timed_out.id} failed (timeout)"
    killed = api.submit("echo epoch 3 >&2; sleep 60", gpus=0)
    wait_for(lambda: "epoch 3" in killed.logs("stderr"), what="the job's first line")
    killed.kill()
    assert failure(killed) == f"job {killed.id} killed"
