"""`sweep status` of a large sweep whose template changed: the lines on points of another
command are told apart in one pass (the waiting ones and the others), not by comparing every
row with every waiting one (8 s for 20,000 points, on a loaded 2-core machine; 0.2 s for
40,000 in one pass: measured, not asserted here)."""

from __future__ import annotations

from gpuherd.cli.sweep_render import _other_commands


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
