"""`gpuherd ls` on a narrow terminal (`COLUMNS=40`): it printed about 70 columns whatever the
width (each of NAME, INFO and COMMAND cut to 10 at the least, the others whole), so every row
wrapped. Below 80 columns it now drops its least useful default columns (an empty one first,
then PRIO, NAME, GPUS, INFO, TIME) until the command keeps some room, and cuts the command
with an ellipsis; 80 columns and more print as before."""

from __future__ import annotations

import io
import time
from typing import Any

import pytest

from gpuherd.cli import ls_table, plain
from gpuherd.cli.ls_table import job_lines

NOW = time.time()


def _job(job_id: int, state: str, command: str, **fields: Any) -> dict[str, Any]:
    job = {
        "id": job_id,
        "name": None,
        "state": state,
        "outcome": None,
        "exit_code": None,
        "signal": None,
        "message": None,
        "gpus": [],
        "gpus_requested": 1,
        "pid": None,
        "priority": 0,
        "command": command,
        "created_at": NOW - 100,
        "started_at": None,
        "ended_at": None,
        "reason": None,
        "paused_seconds": 0.0,
        "seconds": None,
    }
    return {**job, **fields}


JOBS = [
    _job(
        1,
        "failed",
        "python train.py --lr 0.1 --batch-size 128 --epochs 50",
        name="a-long-experiment-name",
        outcome="exit",
        exit_code=2,
        gpus=[0],
        started_at=NOW - 90,
        ended_at=NOW - 80,
        seconds=10.0,
    ),
    _job(2, "running", "sleep 300", gpus=[0, 1], gpus_requested=2, started_at=NOW - 5),
    _job(3, "queued", "sleep 200", reason="waiting for a free GPU"),
]


def _lines(width: int, jobs: list[dict[str, Any]] = JOBS, **options: Any) -> list[str]:
    term = plain.Terminal(io.StringIO())
    term.width, term.styled = width, False
    # The jobs' times as of now (ls reads the clock): a run long after the module's import,
    # on a loaded machine, drew a wider TIME (`1m03s` for `5s`) and cut INFO further.
    later = time.time() - NOW
    moved = ("created_at", "started_at", "ended_at")
    jobs = [{k: v + later if k in moved and v else v for k, v in job.items()} for job in jobs]
    return job_lines(jobs, term=term, **options)


def _headers(lines: list[str]) -> list[str]:
    return lines[0].split()


@pytest.mark.parametrize(
    ("width", "headers"),
    [
        (30, ["ID", "STATE", "COMMAND"]),
        (40, ["ID", "STATE", "TIME", "COMMAND"]),
        (50, ["ID", "STATE", "TIME", "INFO", "COMMAND"]),
        (60, ["ID", "STATE", "GPUS", "TIME", "INFO", "COMMAND"]),
        (70, ["ID", "STATE", "NAME", "GPUS", "TIME", "INFO", "COMMAND"]),
        (79, ["ID", "STATE", "NAME", "GPUS", "PRIO", "TIME", "INFO", "COMMAND"]),
    ],
)
def test_a_narrow_terminal_gets_the_columns_that_fit(width: int, headers: list[str]) -> None:
    lines = _lines(width)
    assert _headers(lines) == headers
    assert all(plain.cells(line) <= width for line in lines), lines
    assert lines[1].endswith("…")  # the long command cut, with an ellipsis
    assert lines[1].split()[:2] == ["1", "failed"]


def test_an_empty_column_goes_first() -> None:
    unnamed = [{**job, "name": None} for job in JOBS]
    assert _headers(_lines(64, unnamed)) == [
        "ID", "STATE", "GPUS", "PRIO", "TIME", "INFO", "COMMAND",
    ]  # fmt: skip
    assert "PRIO" not in _headers(_lines(64))  # (named: PRIO goes first)


@pytest.mark.parametrize("width", [80, 100, 200])
def test_80_columns_and_more_are_as_before(width: int) -> None:
    lines = _lines(width)
    assert _headers(lines) == [ls_table.COLUMNS[name].header for name in ls_table.DEFAULT_COLUMNS]
    # INFO whole where the command keeps 16 columns; at 80 the command was cut to 10 for
    # it, less than 79 columns showed (test_ls_wider_shows_more_command.py).
    assert ("waiting for a fre…" if width == 80 else "waiting for a free GPU") in lines[3]
    assert plain.cells(lines[1][lines[0].index("COMMAND") :]) >= 16


def test_columns_chosen_all_stay() -> None:
    chosen = ("id", "name", "prio", "command")
    lines = _lines(20, columns=chosen)
    assert _headers(lines) == ["ID", "NAME", "PRIO", "COMMAND"]


def test_a_short_command_takes_no_more_than_it_needs() -> None:
    short = [_job(7, "running", "true", gpus=[0], started_at=NOW - 1)]
    lines = _lines(60, short)
    assert lines[1].endswith("true")
    assert "…" not in "".join(lines)
