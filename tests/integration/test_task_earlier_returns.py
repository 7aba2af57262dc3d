"""An earlier run's result.json and metrics.json never stand as the result of a later run of
a task in the same folder that returned none (it returned None, called sys.exit(0) or
sys.exit(3), or raised): a retried job, a sweep point run again with force=True (both with a
real daemon, 4 fake GPUs), and `gpuherd run` again into the same --output-dir (no daemon).
Every wait has a timeout.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuherd
from conftest import GPUHERD_BIN, api_daemon
from gpuherd.errors import HerdError
from gpuherd.pyapi import JobFailed, connect

TASKS_MODULE = """
import sys
from pathlib import Path

import gpuherd

ENDING = Path(__file__).with_name("ending.txt")


@gpuherd.task(gpus=0, retries=0)
def step(x):
    how = ENDING.read_text().strip()
    if how == "exit0":
        sys.exit(0)
    if how == "exit3":
        sys.exit(3)
    if how == "raise":
        raise RuntimeError("no value this time")
    if how == "value":
        return {"acc": x * 10}
    if how == "number":  # (not a dict: its metrics.json, {"result": ...}, says not which)
        return x + 1000
    return None
"""
ENDINGS = ["none", "exit0", "exit3", "raise"]
SUCCEEDS = {"none": True, "exit0": True, "exit3": False, "raise": False}
RETURN_FILES = ("result.json", "metrics.json")
RUN_OPTIONS = ("--fake-gpus", "1", "--gpus-per-job", "0", "--output-dir")


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("earlier")
    with api_daemon(root, "earlier_mod", TASKS_MODULE):
        yield root / "work"


def _ending(work: Path, how: str) -> None:
    (work / "ending.txt").write_text(how)


def _result(job: gpuherd.Job) -> object:
    try:
        return job.result(timeout=60)
    except JobFailed:
        return "failed"


@pytest.mark.parametrize("how", ENDINGS)
def test_a_retry_that_returns_nothing_has_no_result_of_the_attempt_before(
    work: Path, how: str
) -> None:
    import earlier_mod as mod

    _ending(work, "value")
    job = mod.step.submit(x=1)
    assert job.result(timeout=60) == {"acc": 10}
    _ending(work, how)
    job.retry()
    assert _result(job) == (None if SUCCEEDS[how] else "failed")
    folder = Path(job.info()["job_dir"])
    assert [name for name in RETURN_FILES if (folder / name).exists()] == []
    # (the attempt before's metrics are kept, in its own folder: docs/sweeps.md)
    assert json.loads((folder / "attempt-1" / "metrics.json").read_text()) == {"acc": 10}


@pytest.mark.parametrize("how", ENDINGS)
def test_a_forced_sweep_point_that_returns_nothing_shows_no_earlier_metrics(
    work: Path, how: str
) -> None:
    import earlier_mod as mod

    _ending(work, "value")
    name = f"earlier-{how}"
    first = mod.step.sweep(x=[2], results_dir=f"results/{how}", name=name)
    first.wait(timeout=60)
    assert [row["metrics"] for row in first.results()] == [{"acc": 20}]
    _ending(work, how)
    again = mod.step.sweep(x=[2], results_dir=f"results/{how}", name=name, force=True)
    assert again.wait(timeout=60) is SUCCEEDS[how]
    (row,) = again.results()
    assert row["metrics"] == {} and row["state"] == ("succeeded" if SUCCEEDS[how] else "failed")
    (job,) = [j for j in again.jobs() if j.id == row["job_id"]]
    assert _result(job) == (None if SUCCEEDS[how] else "failed")
    status = subprocess.run(  # (the CLI's table, as a user reads it)
        [GPUHERD_BIN, "sweep", "status", name, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
        check=True,
    )
    assert "acc" not in status.stdout


@pytest.mark.parametrize("how", ENDINGS)
def test_gpuherd_run_again_into_one_folder_shows_no_earlier_return_value(
    work: Path, how: str
) -> None:
    # `gpuherd run` starts a job in its folder again without moving its metrics.json aside:
    # the worker left the earlier run's there (its result.json it removed), and a run that
    # returned nothing showed {"acc": 30} as its metrics.
    output = work / f"run-{how}"
    (work / f"lines-{how}.txt").write_text(
        # (this interpreter's: the `python` on PATH may not have gpuherd, as in CI's venv)
        f"{shlex.quote(sys.executable)} -m gpuherd.worker earlier_mod:step "
        "--params '{\"x\": 3}'\n"
    )

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [GPUHERD_BIN, "run", *RUN_OPTIONS, str(output), str(work / f"lines-{how}.txt")],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
            env=_env(),
        )

    _ending(work, "value")
    assert run().returncode == 0
    (folder,) = output.iterdir()
    assert json.loads((folder / "metrics.json").read_text()) == {"acc": 30}
    _ending(work, how)
    assert run().returncode == (0 if SUCCEEDS[how] else 1)
    assert [name for name in RETURN_FILES if (folder / name).exists()] == []


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("XDG_RUNTIME_DIR", None)
    return env


def test_an_earlier_jobs_result_is_its_own_once_its_sweep_point_ran_again(work: Path) -> None:
    # The earlier job's result() read the point's folder, which the later job's run has now:
    # it answered the later job's value (or None while that one ran), never its own.
    import earlier_mod as mod

    herd = connect()
    (work / "write_metrics.py").write_text(
        "import json, os, sys\n"
        "path = os.path.join(os.environ['GPUHERD_JOB_DIR'], 'metrics.json')\n"
        "json.dump({'m': int(sys.argv[1])}, open(path, 'w'))\n"
    )
    runs = []
    for m in (1, 2):  # a command's metrics.json: read from its own run's files
        sweep = herd.sweep(
            f"python write_metrics.py {m} {{x}}",
            {"x": [1]},
            name="own-command",
            results_dir="results/own-command",
            force=True,
            cwd=work,
        )
        assert sweep.wait(timeout=60)
        runs.append(max(sweep.jobs(), key=lambda job: job.id))
    assert [job.result(timeout=10) for job in runs] == [{"m": 1}, {"m": 2}]

    def task_run(how: str) -> gpuherd.Job:
        _ending(work, how)
        sweep = mod.step.sweep(x=[4], results_dir="results/own-task", name="own-task", force=True)
        assert sweep.wait(timeout=60)
        return max(sweep.jobs(), key=lambda job: job.id)

    returned_none, returned_value, latest = task_run("none"), task_run("number"), task_run("value")
    assert returned_none.result(timeout=10) is None  # (it said {"acc": 40}: the later one's)
    assert returned_value.result(timeout=10) == 1004  # its own result.json, kept
    # Moved aside by a gpuherd that kept no result.json (metrics.json alone): not guessed.
    folder = Path(latest.info()["job_dir"])
    (folder / "previous-runs" / "2" / "result.json").unlink()
    with pytest.raises(HerdError) as not_kept:
        returned_value.result(timeout=10)
    assert str(not_kept.value) == (
        f"job {returned_value.id}'s return value was not kept: its sweep point ran again "
        f"since, in the same folder {folder}; what it returned is in "
        f"{folder / 'previous-runs' / '2' / 'metrics.json'} (a dict as it was, another value "
        'as {"result": value})'
    )
    assert latest.result(timeout=10) == {"acc": 40}
