"""`sweep status` of a large sweep whose template changed: the lines on points of another
command are told apart in one pass (the waiting ones and the others), not by comparing every
row with every waiting one (8 s for 20,000 points, on a loaded 2-core machine; 0.2 s for
40,000 in one pass: measured, not asserted here)."""

from __future__ import annotations

import json
from pathlib import Path

from gpuherd.cli.sweep_render import _other_commands
from gpuherd.core.sweep import Point
from gpuherd.sweep_checks import changed_values


def test_many_points_of_another_command_are_said_at_once() -> None:
    rows = [
        {
            "index": i,
            "state": "queued" if i % 2 else "succeeded",
            "other_command": f"echo v1 {i}",
            "params": {"x": i},
        }
        for i in range(40_000)
    ]
    lines = _other_commands("big", rows)
    assert lines[0].startswith("20,000 points ran another command than the sweep's now (echo v1 0")
    assert lines[1].startswith("20,000 points waiting to run (queued or held) will run another")
    assert "(echo v1 1, ...)" in lines[1]


def test_one_point_of_another_command_is_said_in_the_singular() -> None:
    # "1 point ran another command ...: their results are shown; ... runs them again".
    rows = [
        {"index": 0, "state": "succeeded", "other_command": "echo v1 0", "params": {"x": 0}},
        {"index": 1, "state": "queued", "other_command": "echo v1 1", "params": {"x": 1}},
    ]
    ran, waiting = _other_commands("one", rows)
    assert ran == (
        "1 point ran another command than the sweep's now (echo v1 0): its results are shown;"
        " submitting the sweep again with --force runs it again"
    )
    assert waiting.startswith(
        "1 point waiting to run (queued or held) will run another command than the sweep's now"
        " (echo v1 1): cancel it (gpuherd kill"
    )


def test_one_done_point_with_other_values_or_command_is_said_in_the_singular(
    tmp_path: Path,
) -> None:
    # "fixed values changed for 1 finished point (...): they are skipped and keep their
    # results; --force runs them again".
    def point(x: int, command: str, epochs: int) -> Point:
        folder = tmp_path / f"x={x}"
        folder.mkdir()
        ran = {"params": {"x": x, "epochs": 5}, "command": f"echo {x}"}
        (folder / "params.json").write_text(json.dumps(ran))
        return Point(x, {"x": x, "epochs": epochs}, ("x",), folder.name, str(folder), command)

    said = changed_values([point(1, "echo 1", 50), point(2, "echo v2 2", 5)])
    assert said == [
        "fixed values changed for 1 finished point (epochs: 5 -> 50): it is skipped and keeps"
        " its results; --force runs it again",
        "1 done point ran another command (echo 2): its results are kept; --force runs it again",
    ]
