"""GPU Task Scheduler code ported to gpuherd: which GPUs its config names, and required_env()
set before the task's module is imported, as that scheduler did."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuherd
from conftest import api_daemon
from gpuherd.errors import HerdError
from gpuherd.pyapi import connect

GTS_TASKS = """
import os

FLAGS_AT_IMPORT = os.environ.get("GTS_FLAGS")  # as theano reads THEANO_FLAGS when imported


class FlagsTask:  # GPU Task Scheduler's GPUTask protocol
    def __init__(self, config, work_dir):
        self._config, self._work_dir = config, work_dir

    def required_env(self):
        return {"GTS_FLAGS": f"floatX={self._config['floatX']}", "GTS_SEED": 7}

    def main(self):
        return {
            "at_import": FLAGS_AT_IMPORT,
            "seed": os.environ["GTS_SEED"],
            "gpu": os.environ["CUDA_VISIBLE_DEVICES"],
            "group": os.getpgrp(),
        }
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    """One daemon (4 fake GPUs) for the module, and a work folder holding gts_tasks.py."""
    with api_daemon(tmp_path_factory.mktemp("gts"), "gts_tasks", GTS_TASKS):
        yield connect()


def config(results: Path, gpu: list[object]) -> dict[str, object]:
    return {
        "scheduler_config": {"gpu": gpu, "result_root_folder": str(results)},
        "global_config": {"num_epoch": 2},
        "test_config": [{"floatX": ["float32", "float16"], "seed": [1, 2]}],
    }


def test_the_points_run_only_on_the_gpus_the_config_names(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    import gts_tasks

    # GPU Task Scheduler ran on the GPUs of scheduler_config.gpu only: 0 and 3 (of 4) stay free
    two = config(tmp_path / "two", ["1", "2"])
    sweep = gpuherd.sweep_from_config(two, task=gts_tasks.FlagsTask, herd=api, name="two")
    assert sweep.wait(timeout=30)
    assert [api.job(i).info()["only_gpus"] for i in sweep.ids] == [[1, 2]] * 4
    assert {row["metrics"]["gpu"] for row in sweep.results()} <= {"1", "2"}
    anywhere = gpuherd.sweep_from_config(
        config(tmp_path / "any", ["1"]),
        task=gts_tasks.FlagsTask,
        herd=api,
        name="any",
        only_gpus=None,
    )
    assert anywhere.wait(timeout=30)
    assert [api.job(i).info()["only_gpus"] for i in anywhere.ids] == [[]] * 4


def test_a_gpu_that_is_not_an_index_is_refused_naming_only_gpus(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    import gts_tasks

    uuids = config(tmp_path / "uuid", ["GPU-5f1c"])
    with pytest.raises(HerdError, match=r"'GPU-5f1c' is not a GPU index.*only_gpus="):
        gpuherd.sweep_from_config(uuids, task=gts_tasks.FlagsTask, herd=api, dry_run=True)


def test_required_env_is_set_before_the_task_module_is_imported(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    import gts_tasks

    flags = config(tmp_path / "flags", ["0"])
    sweep = gpuherd.sweep_from_config(flags, task=gts_tasks.FlagsTask, herd=api, name="flags")
    assert sweep.wait(timeout=30)
    rows = sweep.results()
    assert [r["metrics"]["at_import"] for r in rows] == [
        "floatX=" + r["params"]["floatX"] for r in rows
    ]
    assert {r["metrics"]["seed"] for r in rows} == {"7"}
    for row in rows:  # started again within the job: one attempt, in the job's process group
        info = api.job(row["job_id"]).info()
        assert (len(info["attempts"]), info["pid"]) == (1, row["metrics"]["group"])
