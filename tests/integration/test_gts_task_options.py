"""`gpuherd.sweep_from_config(config, task=<a task>)` applies the task's own options (hold,
gpus, timeout, retries, project, name, herd), as the task's `.sweep()` does: they were dropped
without a word (every point of a `hold=True` task ran at once, on a GPU for `gpus=0`, with no
timeout). A keyword of the call wins over the task's; `herd=` may be a home's folder, as a
task's is (it was an AttributeError: 'str' object has no attribute 'client')."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import gpuherd
from conftest import api_daemon
from gpuherd.pyapi import connect

GTS_OPTIONS = """
import gpuherd


@gpuherd.task(gpus=0, timeout="2h", retries=2, hold=True, project="gts")
def train(method, num_packing):
    return {"m": method}


class Point:  # GPU Task Scheduler's GPUTask protocol
    def __init__(self, config, work_dir):
        self._config = config

    def main(self):
        return self._config["method"]


held_point = gpuherd.task(gpus=0, timeout="1h", retries=2, project="gtsproj", hold=True)(Point)
named = gpuherd.task(hold=True, name="from-the-task")(Point)
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    """One daemon (4 fake GPUs) for the module, and a work folder holding gts_options.py."""
    with api_daemon(tmp_path_factory.mktemp("gts_options"), "gts_options", GTS_OPTIONS):
        yield connect()


def config(results: Path, gpu: list[Any] | None = None) -> dict[str, Any]:
    scheduler: dict[str, Any] = {"result_root_folder": str(results)}
    if gpu is not None:
        scheduler["gpu"] = gpu
    grid = {"method": ["A", "B"], "num_packing": [1]}
    return {"scheduler_config": scheduler, "test_config": grid}


def options(sweep: gpuherd.Sweep) -> list[tuple[Any, ...]]:
    """Each point's (state, GPUs, timeout, retries, project, only_gpus); the points killed."""
    infos = [job.info() for job in sweep.jobs()]
    sweep.kill()
    keys = ("state", "gpus_requested", "timeout", "retries", "project", "only_gpus")
    return [tuple(info[key] for key in keys) for info in infos]


def test_a_task_functions_options_apply_as_in_its_sweep(api: gpuherd.Herd, tmp_path: Path) -> None:
    import gts_options

    sweep = gpuherd.sweep_from_config(config(tmp_path / "f"), task=gts_options.train, herd=api)
    assert options(sweep) == [("held", 0, 7200.0, 2, "gts", [])] * 2
    via_sweep = gts_options.train.sweep(method=["A", "B"], num_packing=[1], name="viasweep")
    assert options(via_sweep) == [("held", 0, 7200.0, 2, "gts", [])] * 2  # (the same)


def test_a_task_of_a_gputask_class_keeps_its_options(api: gpuherd.Herd, tmp_path: Path) -> None:
    import gts_options

    # A gpu list names GPUs for points that use them: on none (the task's gpus=0), it was
    # refused as "only_gpus with gpus 0", an only_gpus the user never gave.
    cfg = config(tmp_path / "c", gpu=["0", "1"])
    sweep = gpuherd.sweep_from_config(cfg, task=gts_options.held_point, name="cls")
    assert options(sweep) == [("held", 0, 3600.0, 2, "gtsproj", [])] * 2


def test_the_calls_keywords_win_over_the_tasks(api: gpuherd.Herd, tmp_path: Path) -> None:
    import gts_options

    sweep = gpuherd.sweep_from_config(
        config(tmp_path / "k", gpu=[["0", "1"]]),
        task=gts_options.held_point,
        name="mine",
        gpus=2,
        timeout="3h",
        project="call",
    )
    assert sweep.name == "mine"
    assert options(sweep) == [("held", 2, 10800.0, 2, "call", [0, 1])] * 2


def test_a_tasks_name_names_the_sweep_and_the_config_gives_its_gpus(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    import gts_options

    # The task's gpus is 1 unless given: the config's gpu list (2 GPUs a point) decides then.
    sweep = gpuherd.sweep_from_config(config(tmp_path / "n", gpu=[["2", "3"]]), gts_options.named)
    assert sweep.name == "from-the-task"
    assert options(sweep) == [("held", 2, None, 0, None, [2, 3])] * 2


def test_a_herd_given_as_a_homes_folder_is_connected_to(
    api: gpuherd.Herd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gts_options

    home = api.client.home
    no_home = tmp_path / "no-home"
    no_home.write_text("")  # GPUHERD_HOME's cannot be connected to: the herd given must be
    monkeypatch.setenv("GPUHERD_HOME", str(no_home))
    for given in (str(home), home):  # the call's, and the task's (a Path)
        task = gpuherd.task(herd=given)(gts_options.held_point)
        call = {"herd": given} if isinstance(given, str) else {}
        kind = type(given).__name__
        sweep = gpuherd.sweep_from_config(
            config(tmp_path / kind), task=task, name=f"home-{kind}", **call
        )
        assert [api.job(i).info()["state"] for i in sweep.ids] == ["held", "held"]
        sweep.kill()
