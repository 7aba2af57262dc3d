"""What a task's job says it failed of, and what it returned, against a real daemon: the
error that ended the task, not a traceback logged before or printed as Python exited, nor an
exception group's box; a result whose folder is gone; a return value with a curve, whose
final numbers stay in the sweep table; keys JSON writes alike. Every wait has a timeout."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuherd
from conftest import api_daemon
from gpuherd.errors import HerdError
from gpuherd.pyapi import JobFailed, connect

TASKS_MODULE = """
import asyncio
import logging
import sys

import gpuherd


@gpuherd.task(gpus=0)
def handled_then_exit(code):
    try:
        1 / 0
    except ZeroDivisionError:
        logging.exception("batch 3 skipped, going on")  # handled, logged, gone on from
    if isinstance(code, int):
        print("error: checkpoint corrupt", file=sys.stderr)
    sys.exit(code)


class Conn:
    def __del__(self):
        raise OSError("socket already closed")


KEEP = []


@gpuherd.task(gpus=0)
def del_at_exit():
    KEEP.append(Conn())  # (its __del__ raises as Python exits, after the task's traceback)
    raise ValueError("loss diverged at step 7")


async def fail(error):
    raise error


@gpuherd.task(gpus=0)
async def group():
    async with asyncio.TaskGroup() as tasks:
        tasks.create_task(fail(ValueError("a")))
        tasks.create_task(fail(TypeError("b")))


@gpuherd.task(gpus=0)
def train(i):
    return {"acc": i / 10, "curve": [float(k) for k in range(150_000)]}  # (1.2 MB as JSON)


@gpuherd.task(gpus=0)
def per_class():
    return {1: 0.25, "1": 0.75}


@gpuherd.task(gpus=0)
def returns(x):
    return None if x == 0 else {"acc": x}
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    with api_daemon(tmp_path_factory.mktemp("ends"), "task_ends_mod", TASKS_MODULE):
        yield connect()


def failure(job: gpuherd.Job) -> str:
    with pytest.raises(JobFailed) as failed:
        job.result(timeout=60)
    return str(failed.value)


def test_the_error_that_ended_the_task_not_one_printed_after_it(api: gpuherd.Herd) -> None:
    import task_ends_mod as mod  # type: ignore[import-not-found]

    # Before: `OSError: socket already closed`, printed as Python exited.
    job = mod.del_at_exit.submit()
    assert (
        failure(job)
        == f"job {job.id} (del_at_exit) failed (exit 1): ValueError: loss diverged at step 7"
    )
    assert "Exception ignored in" in job.logs("stderr")  # (still there, as Python wrote it)
    # Before: `+------------------------------------`, the box's last border.
    job = mod.group.submit()
    assert failure(job) == (
        f"job {job.id} (group) failed (exit 1): ExceptionGroup: unhandled errors in a TaskGroup "
        "(2 sub-exceptions)"
    )


def test_a_sys_exit_after_a_logged_traceback_names_its_own_words(api: gpuherd.Herd) -> None:
    import task_ends_mod as mod

    # Before: `ZeroDivisionError: division by zero`, which the task had handled.
    job = mod.handled_then_exit.submit(code="fatal: dataset /data/x is empty")
    text = failure(job)
    assert (
        text == f"job {job.id} (handled_then_exit) failed (exit 1): fatal: dataset /data/x is empty"
    )
    assert job.logs("stderr").endswith(
        "fatal: dataset /data/x is empty\n"
        "gpuherd worker: the task called sys.exit('fatal: dataset /data/x is empty')\n"
    )
    job = mod.handled_then_exit.submit(code=4)
    assert (
        failure(job)
        == f"job {job.id} (handled_then_exit) failed (exit 4): error: checkpoint corrupt"
    )


def test_a_result_whose_folder_is_gone_is_an_error_not_none(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    import task_ends_mod as mod

    results = tmp_path / "res"
    sweep = mod.returns.sweep(x=[0, 1], results_dir=str(results), name="gone")
    sweep.wait(timeout=60)
    jobs = sweep.jobs()
    assert [job.result() for job in jobs] == [None, {"acc": 1}]  # (None: it returned None)
    shutil.rmtree(results)
    for job in jobs:  # Before: None, as a task that returned None
        with pytest.raises(HerdError, match=r"is gone \(moved or deleted\?\)") as gone:
            job.result()
        assert str(gone.value) == (
            f"cannot read job {job.id}'s result: its folder {job.info()['job_dir']} is gone "
            "(moved or deleted?), its result.json with it"
        )
    job = mod.returns.submit(x=0)
    assert job.result(timeout=60) is None
    folder = Path(job.info()["job_dir"])
    (folder / "job.json").unlink()  # (the folder emptied, or made again)
    with pytest.raises(HerdError, match=r"no longer holds its run's files \(emptied\?\)"):
        job.result()


def test_a_curve_returned_leaves_the_final_numbers_in_the_table(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    import task_ends_mod as mod

    sweep = mod.train.sweep(i=[1, 2], results_dir=str(tmp_path / "curves"), name="curves")
    sweep.wait(timeout=120)
    # Before: metrics {} for every point (metrics.json, the whole value, over 1 MiB, unread),
    # and sorting by acc refused: "no point's metrics.json holds a metric yet".
    assert [row["metrics"] for row in sweep.results()] == [{"acc": 0.1}, {"acc": 0.2}]
    assert [row["params"] for row in sweep.results("-acc", limit=1)] == [{"i": 2}]
    job = sweep.jobs()[0]
    returned = job.result()
    assert returned["acc"] == 0.1 and len(returned["curve"]) == 150_000  # (result.json: whole)
    metrics = Path(job.info()["job_dir"]) / "metrics.json"
    assert json.loads(metrics.read_text()) == {"acc": 0.1}


def test_keys_json_writes_alike_keep_both_values(api: gpuherd.Herd) -> None:
    import task_ends_mod as mod

    # Before: {'1': 0.75}, and not a word of the 0.25 lost.
    job = mod.per_class.submit()
    assert job.result(timeout=60) == {"1 (int)": 0.25, "1": 0.75}
    assert job.logs("stderr") == (
        "gpuherd worker: the return value was stored in result.json, with what JSON cannot "
        "hold as its text: result[1] (an int key written '1', as another key is: stored as "
        "'1 (int)')\n"
    )
