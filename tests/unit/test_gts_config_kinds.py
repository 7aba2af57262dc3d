"""`gpuherd.sweep_from_config` given a config, a `force_rerun` or a `herd=` of the wrong kind:
refused in one line, as the API's WrongType, before anything is made or sent. They were
Python's AttributeErrors ('list' object has no attribute 'get'), and `force_rerun: "no"` was
read with bool(): True, every finished point run again. None of these asks a daemon."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import gpuherd
from gpuherd.client import Client
from gpuherd.errors import HerdError
from gpuherd.pyapi import Herd
from gpuherd.pyapi_types import WrongType


def train(lr: float, run_dir: str | None = None) -> float:  # a task sweep_from_config imports
    return lr


GRID = {"test_config": {"lr": [1, 2]}}


@pytest.fixture
def herd(tmp_path: Path) -> Herd:
    return Herd(Client(tmp_path / "home"))


def refusal(call: Any) -> str:
    with pytest.raises(WrongType) as refused:
        call()
    text = str(refused.value)
    assert isinstance(refused.value, HerdError) and "\n" not in text
    return text


@pytest.mark.parametrize(
    ("config", "shown"),
    [
        (None, "None (NoneType)"),
        ([GRID], "[{'test_config': {'lr': [1, 2]}}] (list)"),
        ("config.py", "'config.py' (str)"),
    ],
)
def test_a_config_that_is_no_dict_is_the_wrong_type(herd: Herd, config: Any, shown: str) -> None:
    said = refusal(lambda: gpuherd.sweep_from_config(config, train, herd=herd, dry_run=True))
    assert said == (
        "config is GPU Task Scheduler's config dict (scheduler_config, global_config, "
        f"test_config), got {shown}"
    )


def test_a_scheduler_config_that_is_no_dict_is_the_wrong_type(herd: Herd) -> None:
    # (5 was a TypeError from `key in 5`, looking for the separators)
    config = {**GRID, "scheduler_config": 5}
    said = refusal(lambda: gpuherd.sweep_from_config(config, train, herd=herd, dry_run=True))
    assert said == (
        "scheduler_config is a dict (gpu, result_root_folder, force_rerun, ...), got 5 (int)"
    )


@pytest.mark.parametrize("bad", ["no", "false", "", 0, 1, [False]])
def test_a_force_rerun_that_is_not_true_or_false_is_refused(herd: Herd, bad: Any) -> None:
    config = {**GRID, "scheduler_config": {"force_rerun": bad}}
    said = refusal(lambda: gpuherd.sweep_from_config(config, train, herd=herd, dry_run=True))
    kind = type(bad).__name__
    assert said == f"scheduler_config.force_rerun is True or False, got {bad!r} ({kind})"
    # in the words force= is refused in
    given = refusal(
        lambda: gpuherd.sweep_from_config(GRID, train, herd=herd, force=bad, dry_run=True)
    )
    assert said == "scheduler_config." + given.replace("force", "force_rerun", 1)


@pytest.mark.parametrize("bad", [5, b"/tmp/home", ["/tmp/home"]])
def test_a_herd_of_another_kind_is_refused_as_a_task_s_herd_is(herd: Herd, bad: Any) -> None:
    said = refusal(lambda: gpuherd.sweep_from_config(GRID, train, herd=bad, dry_run=True))
    assert said == refusal(lambda: gpuherd.task(herd=bad)(train))
    assert said.startswith("herd is a connection (herd=gpuherd.connect(...)) or a home's folder")
