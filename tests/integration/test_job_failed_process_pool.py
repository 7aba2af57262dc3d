"""A ProcessPoolExecutor whose worker waits for a task's job that fails hands the parent the
JobFailed itself, against a real daemon (4 fake GPUs): the pool broke instead ("A process in
the process pool was terminated abruptly"), as JobFailed could not be unpickled. The handle it
carries works in the parent. Every wait has a timeout."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import pytest

import gpuherd
from conftest import api_daemon
from gpuherd.pyapi import JobFailed, connect

TASKS = '''
import gpuherd


@gpuherd.task(gpus=0)
def diverge(lr):
    raise ValueError(f"loss diverged at lr={lr}")


def train_and_wait(lr):
    """What a pool's worker runs: submits the task and waits for what it returns."""
    return diverge.submit(lr=lr).result(timeout=60)
'''


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    with api_daemon(tmp_path_factory.mktemp("pool"), "pool_tasks", TASKS):
        yield connect(start=False)


def test_a_pool_worker_s_job_failed_reaches_the_parent_as_it_was(api: gpuherd.Herd) -> None:
    from pool_tasks import train_and_wait  # type: ignore[import-not-found]

    spawn = multiprocessing.get_context("spawn")  # (a fresh interpreter: macOS's default)
    with ProcessPoolExecutor(1, mp_context=spawn) as pool, pytest.raises(JobFailed) as failed:
        pool.submit(train_and_wait, 10).result(timeout=120)
    job = failed.value.job
    assert str(failed.value) == (
        f"job {job.id} (diverge) failed (exit 1): ValueError: loss diverged at lr=10"
    )
    assert failed.value.state == "failed"
    assert job.herd.client.home == api.client.home and job.state() == "failed"
    assert "ValueError: loss diverged at lr=10" in job.logs("stderr")  # (asked from here)
