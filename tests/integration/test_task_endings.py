"""How a Python task's call ends, in its job, against a real daemon (4 fake GPUs): an `async
def` task is run, a generator returned is refused, `sys.exit(N)` is said, and an int too long
for JSON's readers is stored as text. Every wait has a timeout.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import gpuherd
from conftest import api_daemon
from gpuherd.pyapi import JobFailed, connect

NO_STATUS = "no process can exit with (0 to 255): exit 1"
TASKS_MODULE = """
import asyncio
import sys

import gpuherd


@gpuherd.task(gpus=0, retries=0)
async def fetch(x, run_dir):
    await asyncio.sleep(0.01)
    return {"x": x * 2, "in": run_dir}


async def _later(x):
    return [x]


@gpuherd.task(gpus=0, retries=0)
def hands_back_a_coroutine(x):
    return _later(x)


def _values(x):
    yield x


@gpuherd.task(gpus=0, retries=0)
def hands_back_a_generator(x):
    return _values(x)


@gpuherd.task(gpus=0, retries=0)
def leave(code):
    print("before the exit", flush=True)
    sys.exit(code)


@gpuherd.task(gpus=0, retries=0)
async def leave_async(code):
    sys.exit(code)


@gpuherd.task(gpus=0, retries=0)
def power(digits):
    return {"n": 10**digits, "small": 7}
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    with api_daemon(tmp_path_factory.mktemp("endings"), "task_endings_mod", TASKS_MODULE):
        yield connect()


def test_an_async_task_is_run_and_its_value_is_the_result(api: gpuherd.Herd) -> None:
    import task_endings_mod as mod

    # Before: succeeded, its body never run, result() the text '<coroutine object fetch ...>'.
    job = mod.fetch.submit(x=2)
    assert job.result(timeout=30) == {"x": 4, "in": job.info()["job_dir"]}
    assert job.logs("stderr") == ""  # (no "coroutine 'fetch' was never awaited")
    assert mod.hands_back_a_coroutine.submit(x=3).result(timeout=30) == [3]


def test_a_generator_returned_fails_the_job_in_one_line(api: gpuherd.Herd) -> None:
    import task_endings_mod as mod

    # Before: succeeded, result() the text '<generator object _values ...>'.
    job = mod.hands_back_a_generator.submit(x=1)
    with pytest.raises(JobFailed) as failed:
        job.result(timeout=30)
    said = (
        "hands_back_a_generator returned a generator: a job keeps a return value, and a "
        "generator's values come only as it is iterated (nothing iterated it); return a list "
        "instead (return list(...))"
    )
    assert job.logs("stderr") == f"gpuherd worker: {said}\n"
    assert str(failed.value) == f"job {job.id} (hands_back_a_generator) failed (exit 2): " + (
        f"gpuherd worker: {said}"
    )


def test_sys_exit_zero_is_a_success_without_a_result(api: gpuherd.Herd) -> None:
    import task_endings_mod as mod

    for code, called in ((0, "sys.exit(0)"), (None, "sys.exit()")):
        job = mod.leave.submit(code=code)
        assert job.result(timeout=30) is None
        assert job.logs() == "before the exit\n"
        assert job.logs("stderr") == (
            f"gpuherd worker: the task called {called} before it returned: the job succeeds, "
            "with no return value (job.result() is None)\n"
        )


def test_sys_exit_with_a_status_fails_the_job_saying_so(api: gpuherd.Herd) -> None:
    import task_endings_mod as mod

    # Before: `job 7 (leave) failed (exit 3)`, and not a word on its stderr of why.
    for task, code, status, said in (
        (mod.leave, 3, 3, "the task called sys.exit(3)"),
        (mod.leave_async, 4, 4, "the task called sys.exit(4)"),
        # (256 was exit status 0 to the shell: a success)
        (mod.leave, 256, 1, f"the task called sys.exit(256), which {NO_STATUS}"),
    ):
        job = task.submit(code=code)
        with pytest.raises(JobFailed) as failed:
            job.result(timeout=30)
        assert job.info()["exit_code"] == status
        assert job.logs("stderr") == f"gpuherd worker: {said}\n"
        assert str(failed.value).endswith(f"failed (exit {status}): gpuherd worker: {said}")
    job = mod.leave.submit(code="stopped: no data")  # as Python exits with text: it, then 1
    with pytest.raises(JobFailed, match=r"failed \(exit 1\): stopped: no data$"):
        job.result(timeout=30)


def test_an_int_too_long_for_json_readers_is_stored_as_its_text(api: gpuherd.Herd) -> None:
    import task_endings_mod as mod

    # Before: the job failed after the function ended (ValueError: Exceeds the limit (4300
    # digits) for integer string conversion).
    job = mod.power.submit(digits=5000)
    assert job.result(timeout=30) == {"n": "1" + "0" * 5000, "small": 7}
    assert job.info()["state"] == "succeeded"
    assert job.logs("stderr") == (
        "gpuherd worker: the return value was stored in result.json, with what JSON cannot "
        "hold as its text: result['n'] (an int of 5,001 digits, over the 4,300 Python reads "
        "back)\n"
    )
    longest = mod.power.submit(digits=200_000)  # (its digits would take a second to write)
    assert longest.result(timeout=30) == {"n": "<an int of 200,001 digits>", "small": 7}
    assert longest.logs("stderr").endswith(
        "result['n'] (an int of 200,001 digits, over the 4,300 Python reads back, stored as its "
        "length: too long to write out)\n"
    )
