"""A task through a ProcessPoolExecutor (it could not be pickled: "it's not the same object
as __main__.train"), and `herd=` a home's folder (ignored: the job went to GPUHERD_HOME's
daemon), against a real daemon (4 fake GPUs). Every wait has a timeout."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import gpuherd
from conftest import api_daemon
from gpuherd.pyapi import connect

TASKS = """
import gpuherd


@gpuherd.task(gpus=0)
def double(lr):
    return lr * 2
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    with api_daemon(tmp_path_factory.mktemp("pool"), "pool_task_mod", TASKS):
        yield connect(start=False)


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_a_pool_submits_a_task_by_its_submit(api: gpuherd.Herd, method: str) -> None:
    from pool_task_mod import double  # type: ignore[import-not-found]

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context(method)) as pool:
        job = pool.submit(double.submit, lr=0.1).result(timeout=120)
        bigger = gpuherd.task(gpus=1, name="bigger")(double)  # (a task of it: options kept)
        other = pool.submit(bigger.submit, lr=1).result(timeout=120)
    assert job.result(timeout=60) == 0.2 and other.result(timeout=60) == 2
    assert (len(other.info()["gpus"]), other.info()["name"]) == (1, "bigger")


def test_herd_as_a_home_s_folder_sends_the_jobs_there(
    api: gpuherd.Herd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pool_task_mod import double

    elsewhere = tmp_path / "not-a-home"
    elsewhere.write_text("")  # (GPUHERD_HOME a file: a connect() to it fails, starting nothing)
    monkeypatch.setenv("GPUHERD_HOME", str(elsewhere))
    there = gpuherd.task(herd=str(api.client.home))(double)
    job = there.submit(lr=2)
    assert job.herd.client.home == api.client.home
    assert job.result(timeout=60) == 4
    assert there.sweep(lr=[1, 2], dry_run=True).herd.client.home == api.client.home


def test_a_task_with_a_sweeps_cap_submits_one_job(api: gpuherd.Herd) -> None:
    """`max_parallel` caps the task's sweeps; its submit passed it to the job, which refused
    it as a sweep's cap: such a task could never be submitted."""
    from pool_task_mod import double

    capped = gpuherd.task(max_parallel=2)(double)
    assert capped.submit(lr=3).result(timeout=60) == 6
