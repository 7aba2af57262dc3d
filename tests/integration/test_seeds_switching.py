"""Users of the small tools gpuherd replaces (gpulimit, GPU Task Scheduler) switching
over: what they typed or configured there is answered or honoured here, never met with
silence or a bare "No such command"."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd, api_daemon
from gpuherd.pyapi import SweepWarning, connect


@pytest.mark.parametrize("words", [["help"], ["help", "submit"]])
def test_gpulimits_help_is_answered_with_where_help_is(herd: Herd, words: list[str]) -> None:
    error = herd.usage_error(*words)
    assert "gpuherd --help lists the commands" in error
    assert "gpuherd COMMAND --help" in error
    assert "(gpulimit's help)" in error


GTS_TASK = """
class Task:  # GPU Task Scheduler's GPUTask protocol
    def __init__(self, config, work_dir):
        self._config, self._work_dir = config, work_dir

    def main(self):
        pass
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    with api_daemon(tmp_path_factory.mktemp("seeds_gts"), "seeds_gts_task", GTS_TASK):
        yield connect()


def gts_config(results: Path, **scheduler: object) -> dict[str, object]:
    return {
        "scheduler_config": {"gpu": ["0"], "result_root_folder": str(results), **scheduler},
        "test_config": [{"lr": [0.1, 0.01]}],
    }


def test_gts_log_files_it_does_not_write_are_named_with_where_things_are(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    import seeds_gts_task

    logs = gts_config(
        tmp_path / "logs",
        log_file="train.log",
        scheduler_log_file_path="sched.log",
        config_string_value_maxlen=8,
    )
    with pytest.warns(SweepWarning) as told:
        gpuherd.sweep_from_config(logs, task=seeds_gts_task.Task, herd=api, dry_run=True)
    said = [str(w.message) for w in told]
    assert any(
        s.startswith("scheduler_config.log_file is not used here:") and "stdout.log" in s
        for s in said
    ), said
    assert any(s.startswith("scheduler_config.scheduler_log_file_path") for s in said), said
    assert any(s.startswith("scheduler_config.config_string_value_maxlen") for s in said), said


def test_a_gts_config_without_those_keys_warns_nothing(api: gpuherd.Herd, tmp_path: Path) -> None:
    import seeds_gts_task

    with warnings.catch_warnings():
        warnings.simplefilter("error", SweepWarning)
        gpuherd.sweep_from_config(
            gts_config(tmp_path / "plain"), task=seeds_gts_task.Task, herd=api, dry_run=True
        )
