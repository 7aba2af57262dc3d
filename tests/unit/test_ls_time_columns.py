"""`ls --columns submitted,started,ended` say every moment with its seconds: a job at second
:00 showed `18:26` among `18:26:01` rows, which `sort` and `awk` read apart. A --begin time
(`held until 23:30`) keeps its shape: as it was given."""

from __future__ import annotations

from datetime import datetime

from gpuherd.cli.ls_table import COLUMNS
from gpuherd.core.when import format_moment

NOW = datetime(2026, 11, 25, 18, 30, 15).timestamp()


def test_time_columns_show_the_seconds_also_at_00() -> None:
    on_the_minute = datetime(2026, 11, 25, 18, 26).timestamp()
    job = {"created_at": on_the_minute, "started_at": on_the_minute + 1, "ended_at": None}
    cells = [COLUMNS[name].cell(job, NOW) for name in ("submitted", "started", "ended")]
    assert cells == ["18:26:00", "18:26:01", ""]
    yesterday = {"ended_at": datetime(2026, 11, 24, 23, 50).timestamp()}
    assert COLUMNS["ended"].cell(yesterday, NOW) == "Nov 24 23:50:00"
    last_year = {"ended_at": datetime(2025, 1, 5, 2, 0).timestamp()}
    assert COLUMNS["ended"].cell(last_year, NOW) == "2025-01-05 02:00:00"


def test_a_begin_time_keeps_its_shape() -> None:
    assert format_moment(datetime(2026, 11, 25, 23, 30).timestamp(), NOW) == "23:30"
    assert format_moment(datetime(2026, 11, 25, 23, 30, 5).timestamp(), NOW) == "23:30:05"
