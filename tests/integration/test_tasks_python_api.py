"""The Python task API against a real daemon: what a QA pass found wrong in it.

Scripts are run as users run them (`python script.py`, `python - < script.py`), and their
jobs by the daemon (4 fake GPUs): every wait has a timeout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuherd
from conftest import api_daemon
from gpuherd.errors import HerdError
from gpuherd.pyapi import JobFailed, connect
from gpuherd.tasks import TaskArgumentError

TASKS_MODULE = """
import os
import gpuherd


@gpuherd.task(gpus=0, retries=0)
def add(a, b):
    return a + b


@gpuherd.task(gpus=0, retries=0)
def same(value):
    return value


@gpuherd.task(gpus=0, retries=0)
def boom(x):
    raise ValueError(f"boom {x}")


@gpuherd.task(gpus=0, retries=1)
def measure(data, fail_first=False):
    if fail_first and os.environ["GPUHERD_ATTEMPT"] == "1":
        raise RuntimeError("the first attempt fails")
    return len(data)


@gpuherd.task(gpus=0, retries=0)
def train(lr, seed, run_dir):
    return {"lr": lr, "seed": seed}


@gpuherd.task(gpus=1, retries=0, priority=3, project="inner")
def devices():
    return os.environ["CUDA_VISIBLE_DEVICES"]


on_two = gpuherd.task(gpus=2, priority=7)(devices)


@gpuherd.task(gpus=3)
@gpuherd.task(gpus=1, retries=0, project="stacked")
def stacked():
    return os.environ["CUDA_VISIBLE_DEVICES"]


@gpuherd.task(retries=0)
def one_by_default():
    return os.environ["CUDA_VISIBLE_DEVICES"]
"""
POOL_SCRIPT = """
import multiprocessing as mp
import sys
import gpuherd


def square(x):
    return x * x


@gpuherd.task(gpus=0, retries=0)
def pool_sum(method):
    with mp.get_context(method).Pool(2) as pool:
        return sum(pool.map(square, range(5)))


if __name__ == "__main__":
    print(pool_sum.submit(method=sys.argv[1]).id)
"""
NO_GUARD_SUBMIT = """
import gpuherd


@gpuherd.task(gpus=0, retries=0)
def plus_one(x):
    return x + 1


print(plus_one.submit(x=1).id)  # no `if __name__ == "__main__":` around it
"""
NO_GUARD_SWEEP = """
import gpuherd


@gpuherd.task(gpus=0, retries=0)
def plus_one(x):
    return x + 1


sweep = plus_one.sweep(x=[1, 2], results_dir="points")
print(sweep.wait(timeout=60), *sweep.ids)
"""
SPAWN_CHILD = """
import multiprocessing as mp
from gpuherd.tasks_guard import BootstrapError, refuse_while_loading

try:
    refuse_while_loading("submit")
except BootstrapError as exc:
    print(__name__, exc, flush=True)


def nothing():
    pass


if __name__ == "__main__":
    child = mp.get_context("spawn").Process(target=nothing)
    child.start()
    child.join(30)
"""
ONE_TASK = """
import gpuherd


@gpuherd.task(gpus=0)
def plus_one(x):
    return x + 1


print(plus_one.submit(x=1).id)
"""
GUARD_ADVICE = (
    "a module's top level runs again in every job of its tasks, so put the calls that "
    'submit jobs under `if __name__ == "__main__":`'
)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    """One daemon (4 fake GPUs) for the module, and a work folder holding tasks_qa_mod.py."""
    with api_daemon(tmp_path_factory.mktemp("tasks"), "tasks_qa_mod", TASKS_MODULE):
        yield connect()


def run_script(
    folder: Path, text: str, *args: str, stdin: bool = False, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run `text` as a script in `folder` (`python script.py ARGS`, or `python - < script.py`
    with `stdin`)."""
    script = folder / "script.py"
    script.write_text(textwrap.dedent(text))
    return subprocess.run(
        [sys.executable, "-", *args] if stdin else [sys.executable, str(script), *args],
        input=script.read_text() if stdin else None,
        cwd=folder,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def next_id(api: gpuherd.Herd) -> int:
    """The id the next job gets (a witness job's): nothing was submitted in between if it
    is one more than the last id the test saw."""
    witness = api.submit("true", gpus=0)
    assert witness.wait(timeout=20) == "succeeded"
    return witness.id


# ---- 1. "spawn" multiprocessing in a task of a script ---------------------------------------


@pytest.mark.parametrize("method", ["spawn", "forkserver", "fork"])
def test_a_scripts_task_can_start_processes_with_any_start_method(
    api: gpuherd.Herd, tmp_path: Path, method: str
) -> None:
    # Before, with "spawn" the pool's children could not import `__gpuherd_main__` (where the
    # worker had loaded the script): the pool replaced them for ever and the job never ended.
    done = run_script(tmp_path, POOL_SCRIPT, method)
    assert done.returncode == 0, done.stderr
    job = api.job(int(done.stdout))
    try:
        assert job.wait(timeout=45) == "succeeded", job.logs("stderr")
    finally:
        job.kill()  # a job that hangs must not hold the next tests' slots
    assert job.result() == 30
    assert "Error" not in job.logs("stderr")


# ---- 2. submit() at a module's top level, without the main guard ------------------------------


def test_a_submit_at_a_scripts_top_level_fails_its_job_instead_of_submitting_for_ever(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    done = run_script(tmp_path, NO_GUARD_SUBMIT)
    assert done.returncode == 0, done.stderr
    job = api.job(int(done.stdout))
    assert job.wait(timeout=30) == "failed"
    script = tmp_path / "script.py"
    said = f"gpuherd worker: submit() was called while loading {script}: {GUARD_ADVICE}\n"
    assert job.logs("stderr") == said  # one line, no traceback
    with pytest.raises(JobFailed, match="submit\\(\\) was called while loading"):
        job.result()
    assert next_id(api) == job.id + 1  # the job submitted no other job


def test_a_sweep_waited_for_at_a_scripts_top_level_ends(api: gpuherd.Herd, tmp_path: Path) -> None:
    # Before, each point's job ran the top level again: its sweep skipped the points already
    # queued, then waited for them, that is for itself, for ever.
    done = run_script(tmp_path, NO_GUARD_SWEEP, timeout=90)
    assert done.returncode == 0, done.stderr
    all_done, *ids = done.stdout.split()
    assert all_done == "False" and len(ids) == 2
    said = f"gpuherd worker: sweep() was called while loading {tmp_path / 'script.py'}: "
    for job_id in ids:
        assert api.job(int(job_id)).logs("stderr") == said + GUARD_ADVICE + "\n"
    assert next_id(api) == int(ids[-1]) + 1


def test_a_process_spawned_by_multiprocessing_refuses_to_submit_while_it_starts(
    tmp_path: Path,
) -> None:
    done = run_script(tmp_path, SPAWN_CHILD)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "__mp_main__ submit() was called while loading the main script in a process "
        f"multiprocessing started: {GUARD_ADVICE}\n"
    )  # the parent process, running the script as __main__, was not refused


# ---- 3. a command template that ends in .yaml -----------------------------------------------


def test_a_template_ending_in_a_sweep_file_suffix_is_a_template(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    template = "python eval.py --lr {lr} --config base.yaml"
    Path("eval.py").touch()  # (in the jobs' folder: else a warning says it is not there)
    dry = api.sweep(template, {"lr": [1, 2]}, dry_run=True)
    assert dry.commands == [
        "python eval.py --lr 1 --config base.yaml",
        "python eval.py --lr 2 --config base.yaml",
    ]
    with pytest.raises(HerdError) as refused:  # as `gpuherd sweep base.yaml -p lr=1` is
        api.sweep("base.yaml", {"lr": [1]})
    assert (
        str(refused.value) == "give the parameters in the sweep file base.yaml, or params, not both"
    )
    (tmp_path / "s.yml").write_text("command: echo {a}\ngrid:\n  a: [1, 2]\n")
    assert api.sweep(str(tmp_path / "s.yml"), dry_run=True).commands == ["echo 1", "echo 2"]


# ---- 4. large parameters --------------------------------------------------------------------


def test_parameters_too_large_for_a_command_line_reach_the_task(api: gpuherd.Herd) -> None:
    import tasks_qa_mod

    # Before, the job failed to start: "Argument list too long".
    job = tasks_qa_mod.measure.submit(data="x" * 200_000, fail_first=True)
    assert job.result(timeout=30) == 200_000
    info = job.info()
    assert info["attempt"] == 2  # the retry read them too, from the job's folder
    assert "--params-file" in info["command"] and len(info["command"]) < 1000
    assert (Path(info["job_dir"]) / "task-params.json").is_file()
    assert list((api.client.home / "task-params").iterdir()) == []  # moved into the job's folder
    small = tasks_qa_mod.measure.submit(data="x" * 100)
    assert "--params '{" in small.info()["command"]
    assert small.result(timeout=30) == 100


def test_a_large_parameters_file_goes_with_a_job_removed_before_it_ran(
    api: gpuherd.Herd,
) -> None:
    import tasks_qa_mod

    api.client.post("/queue/pause")
    never, ran = (tasks_qa_mod.measure.submit(data="x" * 20_000) for _ in range(2))
    staged = list((api.client.home / "task-params").iterdir())
    assert len(staged) == 2
    never.kill()  # cancelled: a retry would still need its parameters
    assert len(list((api.client.home / "task-params").iterdir())) == 2
    api.client.post("/jobs/rm", {"ids": [never.id]})
    (left,) = (api.client.home / "task-params").iterdir()
    assert str(left) in ran.info()["command"]
    api.client.post("/queue/resume")
    assert ran.result(timeout=30) == 20_000


# ---- 5. Job.result() ------------------------------------------------------------------------


def test_result_waits_and_is_the_return_value(api: gpuherd.Herd) -> None:
    import tasks_qa_mod

    assert tasks_qa_mod.add.submit(a=1, b=2).result(timeout=30) == 3  # was {"result": 3}
    three = tasks_qa_mod.add.submit(a=1, b=2)
    three.wait(timeout=30)
    assert (Path(three.info()["job_dir"]) / "metrics.json").read_text() == '{\n  "result": 3\n}\n'
    assert tasks_qa_mod.same.submit(value={"result": 3}).result(timeout=30) == {"result": 3}
    assert tasks_qa_mod.same.submit(value=None).result(timeout=30) is None
    assert tasks_qa_mod.same.submit(value=[1, "a"]).result(timeout=30) == [1, "a"]
    command = api.submit('echo \'{"acc": 0.5}\' > "$GPUHERD_JOB_DIR/metrics.json"', gpus=0)
    assert command.result(timeout=30) == {"acc": 0.5}  # a command's metrics.json
    assert api.submit("true", gpus=0).result(timeout=30) is None


def test_result_of_a_job_that_did_not_succeed_raises(api: gpuherd.Herd) -> None:
    import tasks_qa_mod

    failed = tasks_qa_mod.boom.submit(x=1)
    with pytest.raises(JobFailed) as raised:
        failed.result(timeout=30)
    assert str(raised.value) == f"job {failed.id} (boom) failed (exit 1): ValueError: boom 1"
    assert (raised.value.job, raised.value.state) == (failed, "failed")
    slow = api.submit("sleep 60", gpus=0)
    with pytest.raises(TimeoutError, match="still unfinished"):
        slow.result(timeout=0.3)
    slow.kill()
    with pytest.raises(JobFailed, match=f"^job {slow.id} killed"):
        slow.result(timeout=30)
    held = api.submit("true", gpus=0, hold=True)
    held.kill()
    with pytest.raises(HerdError, match=f"^job {held.id} cancelled \\(cancelled by the user\\)$"):
        held.result(timeout=30)


# ---- 6. a call checked against the signature at submit ---------------------------------------


def test_a_call_that_does_not_fit_the_signature_is_refused_at_submit(api: gpuherd.Herd) -> None:
    import tasks_qa_mod

    before = next_id(api)
    with pytest.raises(TaskArgumentError) as missing:
        tasks_qa_mod.train.submit(lr=1)
    assert (
        str(missing.value) == "cannot call train() with ['lr']: missing a required argument: 'seed'"
    )
    assert isinstance(missing.value, TypeError) and isinstance(missing.value, HerdError)
    with pytest.raises(TaskArgumentError, match="train\\(\\) takes no parameter 'bs'"):
        tasks_qa_mod.train.submit(lr=1, seed=2, bs=3)
    with pytest.raises(TaskArgumentError, match="missing a required argument: 'seed'"):
        tasks_qa_mod.train.sweep(lr=[1, 2], dry_run=True)
    with pytest.raises(TaskArgumentError, match="takes no parameter 'bs'"):
        tasks_qa_mod.train.sweep(lr=[1], bs=[1], fixed={"seed": 0}, dry_run=True)
    assert next_id(api) == before + 1  # nothing was queued
    assert tasks_qa_mod.train.submit(lr=1, seed=2).result(timeout=30) == {"lr": 1, "seed": 2}


# ---- 7. numpy values ------------------------------------------------------------------------


def test_numpy_values_are_taken_as_numbers_and_lists(api: gpuherd.Herd, tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    import tasks_qa_mod

    job = tasks_qa_mod.train.submit(lr=np.float32(0.5), seed=np.int64(3))
    assert job.result(timeout=30) == {"lr": 0.5, "seed": 3}
    same = tasks_qa_mod.same.submit(value={"v": np.array([[1, 2]]), "b": np.bool_(True)})
    assert same.result(timeout=30) == {"v": [[1, 2]], "b": True}
    sweep = tasks_qa_mod.train.sweep(
        lr=np.array([0.1, 0.2]), seed=np.arange(2), results_dir=tmp_path / "np", dry_run=True
    )
    assert [c.rsplit("/", 1)[-1] for c in sweep.commands] == [
        "lr=0.1,seed=0",
        "lr=0.1,seed=1",
        "lr=0.2,seed=0",
        "lr=0.2,seed=1",
    ]
    dry = api.sweep(
        "echo {x} {y}", {"x": np.array([16, 32])}, fixed={"y": np.int32(0)}, dry_run=True
    )
    assert dry.commands == ["echo 16 0", "echo 32 0"]


# ---- 8. a task in a script read from standard input -----------------------------------------


def test_a_task_in_a_script_read_from_stdin_is_pickled_and_runs(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    # No job could read the script again: the function is pickled at submit, as a notebook's
    # (test_notebook_tasks.py); it was refused at decoration.
    done = run_script(tmp_path, ONE_TASK, stdin=True)
    assert done.returncode == 0, done.stderr
    job = api.job(int(done.stdout.split()[-1]))
    assert job.result(timeout=30) == 2
    assert " -m gpuherd.worker --function-file " in job.info()["command"]


# ---- 9. a task made of a task: the new options are the task's ------------------------------


def _asked(job: gpuherd.Job) -> tuple[str, int, int, str | None]:
    """What the job ran on and was queued with: its GPUs, gpus asked, priority, project."""
    result = job.result(timeout=30)
    info = job.info()
    return result, info["gpus_requested"], info["priority"], info["project"]


def test_a_task_made_of_a_task_takes_the_new_options_and_keeps_the_others(
    api: gpuherd.Herd,
) -> None:
    # gpuherd.task(gpus=2)(a_task) ran with the inner task's options: functools.update_wrapper
    # copied the inner task's attributes (its options) over the new ones.
    import tasks_qa_mod

    two = _asked(tasks_qa_mod.on_two.submit())
    assert (len(two[0].split(",")), *two[1:]) == (2, 2, 7, "inner")
    one = _asked(tasks_qa_mod.devices.submit())  # the inner task is left as it was
    assert (len(one[0].split(",")), *one[1:]) == (1, 1, 3, "inner")
    three = _asked(tasks_qa_mod.stacked.submit())  # stacked decorators: the outer one wins
    assert (len(three[0].split(",")), *three[1:]) == (3, 3, 0, "stacked")
    default = _asked(tasks_qa_mod.one_by_default.submit())
    assert (len(default[0].split(",")), default[1]) == (1, 1)
    assert tasks_qa_mod.on_two.fn is tasks_qa_mod.devices.fn
    assert tasks_qa_mod.on_two.__gpuherd_task__ is tasks_qa_mod.devices.fn
