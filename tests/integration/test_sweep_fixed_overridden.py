"""A key both in a sweep's `fixed` and in every grid (or random) lost its fixed value without a
word: each point took the grid's. The daemon refuses it as the Python API and sweep files do,
naming the key; a key only some grids vary stays the others' value."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.errors import InvalidValue


def test_a_fixed_key_every_point_varies_is_refused_over_http(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    spec = {"name": "both", "command": "echo {lr}", "grids": [{"lr": [1, 2]}], "fixed": {"lr": 5}}
    with pytest.raises(InvalidValue) as refused:
        daemon.client.post("/sweeps", {"spec": spec, "cwd": str(work), "dry_run": True})
    assert str(refused.value) == (
        "invalid sweep: fixed.lr: lr is also in grid, which gives every point its own lr, so the"
        " fixed value would reach no point: give lr in one of them (fixed for one value, grid"
        " for several values)"
    )
    drawn = {
        "name": "drawn",
        "command": "echo {lr}",
        "random": {"lr": {"kind": "uniform", "low": 0, "high": 1}},
        "samples": 2,
        "fixed": {"lr": 5},
    }
    with pytest.raises(InvalidValue, match=r"^invalid sweep: fixed\.lr: lr is also in random,"):
        daemon.client.post("/sweeps", {"spec": drawn, "cwd": str(work), "dry_run": True})
    assert not (work / "results").exists()


def test_a_fixed_key_only_some_grids_vary_is_the_other_grids_value(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    spec = {
        "name": "some",
        "command": "echo {lr} {bs}",
        "grids": [{"lr": [1], "bs": [1]}, {"bs": [2]}],
        "fixed": {"lr": 5},
    }
    answer = daemon.client.post("/sweeps", {"spec": spec, "cwd": str(work), "dry_run": True})
    assert answer["commands"] == ["echo 1 1", "echo 5 2"]


def test_a_task_request_with_a_fixed_key_every_point_varies_is_refused_too(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """A task's fixed values are its function's keywords (the daemon leaves them to its call),
    but one every point's own value overrides reaches none all the same."""
    daemon, work = shared_daemon, shared_work
    spec = {"name": "task-both", "command": "true", "grids": [{"lr": [1, 2]}], "fixed": {"lr": 5}}
    request = {"spec": spec, "cwd": str(work), "dry_run": True, "task": True}
    with pytest.raises(InvalidValue, match=r"^invalid sweep: fixed\.lr: lr is also in grid,"):
        daemon.client.post("/sweeps", request)
