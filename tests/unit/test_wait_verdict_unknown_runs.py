"""`sweep wait`'s line on points no job of herd.db ran, judged `failed` by the end of a run it
does not know that their folders recorded (unknown_ended.py): it said `its folder holds
FAILURE`, which such a folder does not (no daemon watched the run to write a marker). The
daemon's side is tests/reliability/test_unknown_runs_ended.py."""

from __future__ import annotations

from typing import Any

import pytest

from gpuherd.cli.wait_verdict import points_verdict
from gpuherd.client_wait import Waited


def jobless(folder: str, state: str, **unknown_run: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"folder": folder, "state": state, "job_id": None}
    if unknown_run:
        row["unknown_run"] = {"attempt": 1, "pid": 100, "signal": None, **unknown_run}
    return row


def said(rows: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = points_verdict(rows, Waited({}, True, {}), quiet=True)
    return status, capsys.readouterr().err


def test_a_point_judged_by_an_unknown_run_says_how_that_run_ended(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = [
        jobless("x=1", "done", job_id=3, exit_code=0),
        jobless("x=2", "failed", job_id=4, exit_code=1),
        jobless("x=3", "failed"),  # removed: its folder holds FAILURE
    ]
    assert said(rows, capsys) == (
        1,
        "point x=2: failed (no job in herd.db; job 4 attempt 1, a run it does not know"
        " (restored from an older backup?), ended in its folder with exit 1)\n"
        "point x=3: failed (no job left; its folder holds FAILURE)\n",
    )


def test_points_judged_by_unknown_runs_share_a_line_per_way_they_ended(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = [
        jobless("x=1", "failed", job_id=3, exit_code=1),
        jobless("x=2", "failed", job_id=4, exit_code=None, signal=9),
        jobless("x=3", "failed", job_id=5, exit_code=1),
    ]
    assert said(rows, capsys)[1] == (
        "points x=1, x=3: failed (no job in herd.db; runs it does not know (restored from an"
        " older backup?) ended in their folders with exit 1)\n"
        "point x=2: failed (no job in herd.db; job 4 attempt 1, a run it does not know"
        " (restored from an older backup?), ended in its folder with signal 9)\n"
    )
