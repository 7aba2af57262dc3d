"""A sweep whose point holds a lone surrogate (`"\\udc80"`) in its metrics.json, against a real
daemon (4 fake GPUs): every view of the whole sweep said `internal error
(PydanticSerializationError ...)` (`sweep status`, `sweep wait`, `Sweep.wait()`, `results()`),
as did one whose Python task returned such text (a file name decoded with "surrogateescape"),
while its `job.result()` answered it. Now the file is that point's unread metrics, said in its
`metrics_error`; the task's text is stored escaped, the same in its row and its result().
And `task.sweep(x=range(3))` sweeps the range's values, as `herd.sweep` does (it was refused as
one parameter value)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd, api_daemon
from gpuherd.pyapi import connect

TASKS_MODULE = """
import gpuherd


@gpuherd.task(gpus=0, retries=0)
def named(x):
    return {"file": "a\\udc80b", "x": x} if x else "a\\udc80b"
"""

SAID = "holds \\udc80, a lone surrogate (half of a UTF-16 pair), which is no character; write"


@pytest.fixture(scope="module")
def daemon_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Herd, gpuherd.Herd]]:
    with api_daemon(tmp_path_factory.mktemp("lone"), "lone_surrogate_mod", TASKS_MODULE) as herd:
        yield herd, connect()


def test_a_points_metrics_json_holding_one_is_its_unread_metrics(
    daemon_api: tuple[Herd, gpuherd.Herd], tmp_path: Path
) -> None:
    herd, api = daemon_api
    (tmp_path / "m1.json").write_text('{"tag": "\\udc80"}')
    (tmp_path / "m2.json").write_text('{"acc": 0.5}')
    command = f"cp {tmp_path}/m{{x}}.json {{run_dir}}/metrics.json"
    sweep = api.sweep(command, {"x": [1, 2]}, name="lone", results_dir=tmp_path / "r", gpus=0)
    assert sweep.wait(timeout=60)  # (HerdError: internal error)
    waited = herd.cli("sweep", "wait", "lone")
    assert waited.stdout.strip().endswith("2 of 2 points succeeded"), waited
    table = herd.json("sweep", "status", "lone")
    rows = {row["params"]["x"]: row for row in table["rows"]}
    error = f"{tmp_path / 'r' / 'x=1' / 'metrics.json'}: {SAID} its text as UTF-8"
    assert (rows[1]["metrics"], rows[1]["metrics_error"]) == ({}, error)
    assert rows[2]["metrics"] == {"acc": 0.5}
    shown = herd.cli("sweep", "status", "lone").stdout
    assert f"metrics not read: {error}" in shown
    with pytest.warns(UserWarning, match="^metrics not read: .* holds \\\\udc80, a lone"):
        assert [row["metrics"] for row in sweep.results()] == [{}, {"acc": 0.5}]


def test_a_tasks_text_holding_one_is_stored_escaped(daemon_api: tuple[Herd, gpuherd.Herd]) -> None:
    _, api = daemon_api
    import lone_surrogate_mod as mod  # type: ignore[import-not-found]

    sweep = mod.named.sweep(x=[0, 1], results_dir="named")
    assert sweep.wait(timeout=60)
    rows = sweep.results()
    assert [row["metrics"] for row in rows] == [
        {"result": "a\\udc80b"},
        {"file": "a\\udc80b", "x": 1},
    ]
    # The same in each job's result() as in its row (it answered the surrogate itself).
    assert [api.job(row["job_id"]).result() for row in rows] == [
        "a\\udc80b",
        {"file": "a\\udc80b", "x": 1},
    ]


def test_a_tasks_sweep_takes_a_range_as_its_values(daemon_api: tuple[Herd, gpuherd.Herd]) -> None:
    _, api = daemon_api
    import lone_surrogate_mod as mod

    dry = mod.named.sweep(x=range(3), name="ranged", dry_run=True)
    assert [command.rpartition("/")[2] for command in dry.commands] == ["x=0", "x=1", "x=2"]
    by_params = mod.named.sweep(params={"x": range(1, 3)}, name="ranged", dry_run=True)
    assert [command.rpartition("/")[2] for command in by_params.commands] == ["x=1", "x=2"]
    commands = api.sweep("echo {x}", {"x": range(3)}, dry_run=True).commands
    assert commands == ["echo 0", "echo 1", "echo 2"]
