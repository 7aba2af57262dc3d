"""A Python user's slips, refused at once with what was meant (docs/python.md's trial).

A keyword typo of a task's call names the parameter or the job option it is closest to
(`gpu=1` was the job option gpus, not a parameter to add); a task defined under the script's
`if __name__ == "__main__":` is refused by the decorator, not by every job of it later; a
field `Job.edit` does not take names the closest one, by edit's own names (`env`). Each is
refused before anything reaches a daemon: none runs here, so a call that went on would fail
otherwise (NotRunning)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gpuherd
from gpuherd.client import Client
from gpuherd.pyapi import Herd, Job
from gpuherd.tasks import TaskArgumentError


def train(lr: float, seed: int = 0) -> float:
    return lr * seed


@pytest.fixture
def no_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("GPUHERD_HOME", str(home))
    return home


def test_a_parameters_typo_names_the_parameter(no_daemon: Path) -> None:
    task = gpuherd.task(gpus=0)(train)
    with pytest.raises(TaskArgumentError) as refused:
        task.submit(lrr=0.1, seed=1)
    assert str(refused.value) == (
        "train() takes no parameter 'lrr' (did you mean 'lr'?); add it to the signature "
        "(or **kwargs)"
    )


@pytest.mark.parametrize("call", ["submit", "sweep"])
def test_a_job_options_typo_names_the_job_option_and_where_it_goes(
    no_daemon: Path, call: str
) -> None:
    task = gpuherd.task(gpus=0)(train)
    with pytest.raises(TaskArgumentError) as refused:
        getattr(task, call)(lr=[0.1] if call == "sweep" else 0.1, gpu=1)
    assert str(refused.value) == (
        "train() takes no parameter 'gpu'; did you mean gpus? gpus is a job option: job "
        "options go in the task, @gpuherd.task(gpus=...), or for one call in a task of the "
        f"task, gpuherd.task(gpus=...)(train).{call}(...)"
    )


def train_any(lr: float, **extra: object) -> float:
    return lr


@pytest.mark.parametrize("call", ["submit", "sweep"])
def test_a_job_option_given_to_a_function_with_kwargs_is_refused_too(
    no_daemon: Path, call: str
) -> None:
    """**kwargs took `gpus=2` as a parameter the function never read: the job ran on the
    task's GPUs, without a word."""
    task = gpuherd.task(gpus=0)(train_any)
    with pytest.raises(TaskArgumentError) as refused:
        getattr(task, call)(
            lr=[0.1] if call == "sweep" else 0.1, timeout=[60] if call == "sweep" else 60
        )
    assert str(refused.value) == (
        "train_any() takes no parameter 'timeout' but through its **kwargs, and timeout is a "
        "job option: job options go in the task, @gpuherd.task(timeout=...), or for one call "
        f"in a task of the task, gpuherd.task(timeout=...)(train_any).{call}(...)"
    )


def run(folder: Path, text: str) -> subprocess.CompletedProcess[str]:
    script = folder / "demo.py"
    script.write_text(textwrap.dedent(text))
    return subprocess.run(
        [sys.executable, str(script)], cwd=folder, capture_output=True, text=True, timeout=60
    )


def test_a_task_defined_under_the_main_block_is_refused_by_the_decorator(
    no_daemon: Path, tmp_path: Path
) -> None:
    done = run(
        tmp_path,
        """
        import gpuherd

        if __name__ == "__main__":
            @gpuherd.task(gpus=0)
            def train(lr):
                return lr
            print("decorated")
        """,
    )
    assert done.returncode == 1 and "decorated" not in done.stdout
    assert done.stderr.splitlines()[-1] == (
        'gpuherd.errors.HerdError: train is defined under `if __name__ == "__main__":` in '
        f"{tmp_path / 'demo.py'}, which a job does not run (it loads the script as "
        "multiprocessing's spawn does): define train above that block, at the script's top "
        "level"
    )


def test_a_task_defined_above_the_main_block_or_also_bound_there_is_taken(
    no_daemon: Path, tmp_path: Path
) -> None:
    done = run(
        tmp_path,
        """
        import gpuherd

        @gpuherd.task(gpus=0)
        def train(lr):
            return lr

        def helper(x):
            return x

        if __name__ == "__main__":
            def helper(x):  # bound above too: the job finds the one above
                return -x
            gpuherd.task(gpus=0)(helper)
            gpuherd.task(gpus=0)(train)
            print("decorated")
        """,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "decorated\n", "")


def test_an_edit_field_typo_names_the_field_by_edits_own_names(no_daemon: Path) -> None:
    job = Job(Herd(Client(no_daemon)), 7)
    with pytest.raises(TypeError) as refused:
        job.edit(gpu=2)
    assert str(refused.value) == (
        "'gpu' cannot be edited (did you mean 'gpus'?); fields: after, after_any, after_fail, "
        "begin, command, cwd, env, error, exclusive, gpus, grace, max_log_size, mem, name, "
        "only_gpus, output, project, ram, retries, retry_delay, timeout"
    )
