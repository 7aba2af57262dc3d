"""A sweep's options from Python, as docs/sweeps.md and docs/python.md show them: a misspelt
keyword names the closest the sweep takes, and options that contradict each other are the
sweep's mistake, refused before anything is submitted (a dry run too). Real daemon, 4 fake
GPUs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuherd
from conftest import api_daemon
from gpuherd.errors import InvalidValue
from gpuherd.pyapi import connect

TASKS = """
import gpuherd


@gpuherd.task(gpus=0)
def square(n):
    return n * n
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    with api_daemon(tmp_path_factory.mktemp("sweep-keywords"), "sweep_keywords_mod", TASKS):
        yield connect()


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("result_dir", "results_dir"),
        ("dryrun", "dry_run"),
        ("sample", "samples"),
        ("param", "params"),  # (its own arguments, by keyword: it guessed 'ram')
        ("comand", "command"),
    ],
)
def test_a_misspelt_sweep_keyword_names_the_sweeps_own(
    api: gpuherd.Herd, typo: str, meant: str
) -> None:
    # It named only the job options (after, ..., timeout): neither the keyword meant nor
    # results_dir, dry_run or samples among what a sweep takes.
    with pytest.raises(TypeError, match=rf"unknown option '{typo}' \(did you mean '{meant}'\?\)"):
        api.sweep("echo {x}", {"x": [1]}, gpus=0, **{typo: "x"})
    assert api.sweeps() == []


def test_gpu_task_schedulers_config_names_a_misspelt_name(api: gpuherd.Herd) -> None:
    import sweep_keywords_mod

    config = {"scheduler_config": {"gpu": ["0"]}, "test_config": [{"n": [1]}]}
    with pytest.raises(TypeError, match=r"unknown option 'nmae' \(did you mean 'name'\?\)"):
        gpuherd.sweep_from_config(config, task=sweep_keywords_mod.square, nmae="mine")


@pytest.mark.parametrize("dry_run", [False, True])
def test_options_that_contradict_each_other_are_the_sweeps_not_a_jobs(
    api: gpuherd.Herd, tmp_path: Path, dry_run: bool
) -> None:
    # Every point has the options: the refusal said "job 1 of the submission: ...", and a
    # dry run previewed the points of a submission that would be refused.
    results = tmp_path / "results"
    kinds = [{"hold": True, "begin": "22:00"}, {"gpus": 0, "mem": "1GiB"}]
    for options in kinds:
        with pytest.raises(InvalidValue) as refused:
            api.sweep("echo {x}", {"x": [1, 2]}, results_dir=results, dry_run=dry_run, **options)
        assert "of the submission" not in str(refused.value)
        assert "not both" in str(refused.value) or "CPU-only" in str(refused.value)
    assert not results.exists()
    assert api.sweeps() == []
