"""Python tasks against a real daemon: what a second QA pass found in task results and in the
Python API's messages (return values JSON cannot hold, job options given to a call, sweep
options named like parameters, where warnings point, numpy float32, held sweep points).

Every wait has a timeout.
"""

from __future__ import annotations

import warnings
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


class Model:
    def __str__(self):
        return "Model(3 layers)"


@gpuherd.task(gpus=0, retries=2)
def per_class():
    import numpy as np

    y = np.array([3, 7, 3])
    scores = {label: 1 / (i + 2) for i, label in enumerate(np.unique(y))}
    return {**scores, "acc": 0.9, "lr": np.float32(0.01), "half": np.float16(0.1)}


@gpuherd.task(gpus=0, retries=0)
def same(value):
    return value


@gpuherd.task(gpus=0, retries=2)
def with_objects():
    return {("a", 1): 2, "model": Model(), "classes": {"b", "a"}, "steps": frozenset({3, 1})}


@gpuherd.task(gpus=0, retries=0)
def unwritable(run_dir):
    os.mkdir(os.path.join(run_dir, "result.json.tmp"))  # where result.json is written first
    return 1


@gpuherd.task(gpus=0, retries=0)
def train(lr, seed=0):
    return {"lr": lr, "seed": seed}


@gpuherd.task(gpus=0, retries=0)
def load(samples, shuffle=False):
    return [samples, shuffle]


@gpuherd.task(gpus=0, retries=0)
def anything(**config):
    return config
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    """One daemon (4 fake GPUs) for the module, and a work folder holding task_results_mod.py."""
    with api_daemon(tmp_path_factory.mktemp("results"), "task_results_mod", TASKS_MODULE):
        yield connect()


def next_id(api: gpuherd.Herd) -> int:
    """The id a witness job gets: one more than the last id seen if nothing was queued."""
    witness = api.submit("true", gpus=0)
    assert witness.wait(timeout=20) == "succeeded"
    return witness.id


# ---- 1. a return value JSON cannot hold as it is --------------------------------------------


def test_numpy_keys_and_narrow_floats_of_a_result_are_stored(api: gpuherd.Herd) -> None:
    pytest.importorskip("numpy")
    import task_results_mod

    # Before, the job failed after the function ran ("keys must be str, int, float, bool or
    # None, not int64"), and with retries the whole function ran again.
    job = task_results_mod.per_class.submit()
    assert job.result(timeout=30) == {"3": 0.5, "7": 1 / 3, "acc": 0.9, "lr": 0.01, "half": 0.1}
    assert job.info()["attempt"] == 1
    assert job.logs("stderr") == ""


def test_sets_come_back_as_lists_sorted_when_their_items_sort(api: gpuherd.Herd) -> None:
    import task_results_mod

    # Before, a set came back as its text: '{1, 2}'.
    assert task_results_mod.same.submit(value=[2, 1]).result(timeout=30) == [2, 1]
    job = task_results_mod.with_objects.submit()
    result = job.result(timeout=30)
    assert (result["classes"], result["steps"]) == (["a", "b"], [1, 3])


def test_what_json_cannot_hold_is_stored_as_text_and_said_in_one_line(api: gpuherd.Herd) -> None:
    import task_results_mod

    job = task_results_mod.with_objects.submit()
    result = job.result(timeout=30)
    assert (result["('a', 1)"], result["model"]) == (2, "Model(3 layers)")
    assert job.info()["attempt"] == 1  # the run was kept, not retried
    assert job.logs("stderr") == (
        "gpuherd worker: the return value was stored in result.json, with what JSON cannot "
        "hold as its text: result[('a', 1)] (a tuple key), result['model'] (a Model)\n"
    )


def test_a_result_that_cannot_be_written_fails_the_job_in_one_line(api: gpuherd.Herd) -> None:
    import task_results_mod

    job = task_results_mod.unwritable.submit()
    with pytest.raises(JobFailed) as failed:
        job.result(timeout=30)
    where = Path(job.info()["job_dir"]) / "result.json"
    said = f"the task returned, but its return value could not be written to {where}: "
    assert job.logs("stderr") == f"gpuherd worker: {said}Is a directory\n"  # no traceback
    assert str(failed.value).endswith(said + "Is a directory")


# ---- 2. job options and sweep options given to a task's call --------------------------------

JOB_OPTION = (
    "{f}() takes no parameter '{key}', and {key} is a job option: job options go in the "
    "task, @gpuherd.task({key}=...), or for one call in a task of the task, "
    "gpuherd.task({key}=...)({f}).{call}(...)"
)


def test_a_job_option_given_to_a_call_says_where_job_options_go(api: gpuherd.Herd) -> None:
    import task_results_mod as mod

    before = next_id(api)
    refusals = [
        (lambda: mod.same.submit(value=1, timeout="1h"), "same", "timeout", "submit"),
        (lambda: mod.same.sweep(value=[1], gpus=2), "same", "gpus", "sweep"),
        (lambda: mod.same.submit(value=1, name="n"), "same", "name", "submit"),
        (lambda: mod.anything.sweep(x=[1], priority=3), "anything", "priority", "sweep"),
    ]
    for call, f, key, how in refusals:
        with pytest.raises(TaskArgumentError) as refused:
            call()
        assert str(refused.value) == JOB_OPTION.format(f=f, key=key, call=how)
    assert next_id(api) == before + 1  # nothing was queued
    # Said there, they work: (a task's `name` option is its job's name; it was a TypeError)
    job = gpuherd.task(timeout="1h", name="renamed")(mod.same).submit(value=1)
    assert (job.result(timeout=30), job.info()["timeout"], job.info()["name"]) == (
        1,
        3600,
        "renamed",
    )


def test_a_sweep_option_named_like_a_parameter_must_say_whose_it_is(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    import task_results_mod as mod

    # Before, seed=5 was the sweep's random seed, and train ran with seed=0.
    with pytest.raises(TaskArgumentError) as refused:
        mod.train.sweep(lr=[0.1], seed=5, results_dir=tmp_path / "a")
    assert str(refused.value) == (
        "train() has a parameter 'seed', and seed is also the sweep's own option: give train's "
        "value as fixed={'seed': 5} (or a list, seed=[5], to sweep it), and the sweep's as "
        "sweep_seed=5"
    )
    with pytest.raises(TaskArgumentError, match=r"the sweep's as sweep_shuffle=True$"):
        mod.load.sweep(samples=[1, 2], shuffle=True)
    with pytest.raises(TaskArgumentError, match=r"fixed=\{'samples': 3\}"):
        mod.load.sweep(shuffle=[True], samples=3)
    fixed = mod.train.sweep(lr=[0.1], fixed={"seed": 5}, name="fixed", results_dir=tmp_path)
    assert fixed.wait(timeout=30)
    assert [r["metrics"] for r in fixed.results()] == [{"lr": 0.1, "seed": 5}]
    drawn = mod.train.sweep(
        lr=[0.1, 0.2, 0.3], sweep_samples=2, sweep_seed=7, sweep_name="drawn", dry_run=True
    )
    assert (drawn.submission["seed"], len(drawn.commands)) == (7, 2)
    # A function that names no such parameter takes them as the sweep's, as before.
    other = mod.anything.sweep(x=[1, 2, 3], samples=1, seed=3, dry_run=True)
    assert (other.submission["seed"], len(other.commands)) == (3, 1)


# ---- 3. a sweep's warnings, from Python ----------------------------------------------------


def test_a_tasks_sweep_warns_at_the_callers_line_in_python_words(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    import task_results_mod as mod

    assert mod.same.sweep(value=[1], name="moved", results_dir=tmp_path / "first").wait(30)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod.same.sweep(value=[1], name="moved", results_dir=tmp_path / "second", dry_run=True)
    (warning,) = caught
    assert (warning.category, warning.filename) == (gpuherd.SweepWarning, __file__)  # was tasks.py
    assert str(warning.message).endswith("(use another name= to keep both)")  # was --name


# ---- 4. numpy float32 parameters -----------------------------------------------------------


def test_float32_parameters_are_the_numbers_they_show(api: gpuherd.Herd, tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    import task_results_mod as mod

    # Before: 0.009999999776482582, in the job's parameters and in folder names.
    job = mod.same.submit(value={"lr": np.float32(0.01), "w": np.array([0.1], np.float16)})
    assert '{"value": {"lr": 0.01, "w": [0.1]}}' in job.info()["command"]
    assert job.result(timeout=30) == {"lr": 0.01, "w": [0.1]}
    lrs = np.array([0.01, 0.3], dtype=np.float32)
    sweep = mod.train.sweep(
        lr=lrs, fixed={"seed": np.float32(1.1)}, name="f32", results_dir=tmp_path
    )
    assert sorted(Path(r["run_dir"]).name for r in sweep.results()) == ["lr=0.01", "lr=0.3"]
    assert sweep.wait(timeout=30)
    assert [r["metrics"] for r in sweep.results()] == [
        {"lr": 0.01, "seed": 1.1},
        {"lr": 0.3, "seed": 1.1},
    ]


# ---- 5. Sweep.wait() and held points -------------------------------------------------------


def test_sweep_wait_does_not_wait_for_held_points(api: gpuherd.Herd, tmp_path: Path) -> None:
    import task_results_mod as mod

    # Before, wait() without a timeout never returned: held points wait for a release.
    held = gpuherd.task(hold=True)(mod.same).sweep(value=[1, 2], name="held", results_dir=tmp_path)
    assert held.wait(timeout=10) is False  # at once: no TimeoutError
    assert [r["state"] for r in held.results()] == ["held", "held"]
    api.client.post("/jobs/release", {"ids": held.ids})
    assert held.wait(timeout=30) is True


# ---- 6. dry_run from Python lists what would be submitted ----------------------------------


def test_a_python_dry_run_lists_only_what_would_be_submitted(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    import task_results_mod as mod

    assert mod.same.sweep(value=[1, 2], name="dry", results_dir=tmp_path).wait(timeout=30)
    dry = mod.same.sweep(value=[1, 2, 3], name="dry", results_dir=tmp_path, dry_run=True)
    assert [c.rsplit("/", 1)[-1] for c in dry.commands] == ["value=3"]
    assert (dry.submission["points"], dry.submission["skipped_done"]) == (3, 2)
    assert (
        mod.same.sweep(value=[1, 2], name="dry", results_dir=tmp_path, dry_run=True).commands == []
    )


def test_a_tasks_sweep_into_an_empty_results_dir_is_refused(api: gpuherd.Herd) -> None:
    # It ran, in results/NAME: a task's sweep takes the folder as Herd.sweep does (checked there).
    import task_results_mod as mod

    with pytest.raises(HerdError) as refused:
        mod.same.sweep(value=[1], name="nowhere", results_dir="")
    assert str(refused.value) == (
        "invalid sweep: results_dir: empty; give the folder of the points' folders, or leave"
        " results_dir out (results/NAME)"
    )
    assert "nowhere" not in [sweep["name"] for sweep in api.sweeps()]


def test_a_tasks_sweep_named_empty_is_refused(api: gpuherd.Herd) -> None:
    # Siblings of herd.sweep(name="") and a sweep file's `name: ""` (refused): a task's
    # sweep, and sweep_from_config's, took "" for the function's name without a word.
    import task_results_mod as mod

    config = {"test_config": {"value": [1]}}
    for sweep in (
        lambda: mod.same.sweep(value=[1], name="", dry_run=True),
        lambda: gpuherd.sweep_from_config(config, mod.same, name="", herd=api, dry_run=True),
    ):
        with pytest.raises(HerdError, match=r"^invalid sweep: name: empty; give the sweep a name,"):
            sweep()
    named = mod.same.sweep(value=[1], name="given", dry_run=True)
    assert (named.name, mod.same.sweep(value=[1], dry_run=True).name) == ("given", "same")
    # The name given wins over the task's own job name (which named the sweep instead).
    renamed = gpuherd.task(name="own")(mod.same)
    assert renamed.sweep(value=[1], name="given", dry_run=True).name == "given"
    assert renamed.sweep(value=[1], dry_run=True).name == "own"
    assert "same" not in [sweep["name"] for sweep in api.sweeps()]
