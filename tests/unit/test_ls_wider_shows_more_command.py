"""`gpuherd ls` gave the command less room on a wider terminal: at 80 columns and more the
command was cut first (down to 10 columns) to keep NAME and INFO whole, below 80 NAME and INFO
were cut first, so `COLUMNS=79` showed `python -c 'import tim…` and `COLUMNS=80` `python -c…`.
One cut order now holds at every width: the command down to 16 columns, then NAME and INFO
down to 10, then the command down to 10."""

from __future__ import annotations

import io
import time
from typing import Any

import pytest

from gpuherd.cli import plain
from gpuherd.cli.ls_table import job_lines
from unit.test_ls_narrow import _job as narrow_job

NOW = time.time()
COMMAND = "python -c 'import time; time.sleep(600)' --lr 0.1 --epochs 50"


def _job(job_id: int, state: str, **fields: Any) -> dict[str, Any]:
    return narrow_job(job_id, state, COMMAND, **fields)


# A long name and a long reason to wait: the columns the two rules cut in opposite orders.
JOBS = [
    _job(1, "running", name="exp-lr-0.1", gpus=[0], started_at=NOW - 20),
    _job(
        2,
        "queued",
        name="a-rather-long-experiment-name-lr0.1",
        gpus_requested=4,
        reason="waiting for 4 free GPUs",
    ),
]


def _table(width: int) -> list[str]:
    term = plain.Terminal(io.StringIO())
    term.width, term.styled = width, False
    return job_lines(JOBS, term=term)


def _command_shown(width: int) -> str:
    """The first row's command as the table shows it (the last column)."""
    lines = _table(width)
    return lines[1][lines[0].index("COMMAND") :]


def test_80_columns_show_no_less_of_the_command_than_79() -> None:
    assert _command_shown(79) == "python -c 'impo…"  # was `python -c 'import time…`
    assert _command_shown(80) == "python -c 'impo…"  # was `python -c…`
    # For it, INFO is cut at 80 as at 79 (it was whole at 80).
    assert "waiting for 4 fr…" in _table(79)[2]
    assert "waiting for 4 fre…" in _table(80)[2]


@pytest.mark.parametrize("width", range(60, 130))
def test_a_wider_terminal_never_shows_less_of_the_command(width: int) -> None:
    narrower, wider = _command_shown(width), _command_shown(width + 1)
    assert plain.cells(wider) >= plain.cells(narrower), (width, narrower, wider)
    assert all(plain.cells(line) <= width for line in _table(width))


def test_name_and_info_whole_before_the_command_gets_more_than_16() -> None:
    lines = _table(110)  # every column whole but the command, at 16
    assert "a-rather-long-experiment-name-lr0.1" in lines[2]
    assert "waiting for 4 free GPUs" in lines[2]
    assert _command_shown(110) == "python -c 'impo…"
    assert _command_shown(111) == "python -c 'impor…"


def test_rows_of_wide_cells_at_80_drop_a_column_as_at_79() -> None:
    """8 GPUs, a 9-digit priority, 4 days: the default columns do not fit 80 with the command
    at 16, so PRIO goes at 80 as at 79 (it stayed at 80, and the command was cut to 10)."""
    wide = [
        _job(1, "running", name="exp", gpus=list(range(8)), priority=123456789,
             started_at=NOW - 4 * 86400 - 15 * 3600),
        _job(2, "queued", name="a-rather-long-experiment-name-lr0.1", reason="waiting for job 1"),
    ]  # fmt: skip
    shown = {}
    for width in (79, 80):
        term = plain.Terminal(io.StringIO())
        term.width, term.styled = width, False
        lines = job_lines(wide, term=term)
        assert "PRIO" not in lines[0], lines
        shown[width] = lines[1][lines[0].index("COMMAND") :]
    assert shown[79] == shown[80] == "python -c 'impo…"
