"""`--begin` (and `ls --since`) times as the local clock reads them: a date written right but
naming no such day or hour is told which part, as `25:00` is told `no such time of day` (it
was told only the forms to use, which it already followed); and a time the clock skips for
summer time (02:30 of the night it goes from 02:00 to 03:00) is the moment of the jump, 03:00,
as cron runs it, not 03:30, after the jobs of 03:00."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from gpuherd.core.when import format_moment, parse_begin, parse_since


@pytest.fixture
def berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local time zone: Europe/Berlin (summer time 2026-03-29 02:00 -> 03:00,
    back 2026-10-25 03:00 -> 02:00)."""
    if not Path("/usr/share/zoneinfo/Europe/Berlin").exists():
        pytest.skip("no time zone data")
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("berlin")
def test_a_begin_in_the_hour_summer_time_skips_is_the_moment_of_the_jump() -> None:
    evening = datetime(2026, 3, 28, 23, 0).timestamp()
    jump = datetime(2026, 3, 29, 3, 0).timestamp()  # 01:00 UTC
    assert jump - evening == 3 * 3600
    for text in ("02:30", "2026-03-29T02:30", "2026-03-29T02:00", "2026-03-29 02:59:59"):
        assert parse_begin(text, evening) == jump, text  # was 03:30 for 02:30: after 03:00
    assert format_moment(parse_begin("02:30", evening), evening) == "Mar 29 03:00"
    assert parse_begin("03:00", evening) == jump
    assert parse_begin("01:59", evening) == jump - 60
    noon = datetime(2026, 3, 29, 12, 0).timestamp()
    assert parse_since("02:30", noon) == jump


@pytest.mark.usefixtures("berlin")
def test_times_the_clock_shows_once_or_twice_are_as_they_were() -> None:
    night = datetime(2026, 10, 25, 1, 0).timestamp()
    assert parse_begin("02:30", night) - night == 1.5 * 3600  # the first 02:30, as before
    assert (
        parse_begin("2026-11-26T02:00:00.5", night)
        == datetime(2026, 11, 26, 2, 0, 0, 500000).timestamp()
    )
    assert parse_begin("2026-03-29T02:30+01:00", night) == datetime(2026, 3, 29, 3, 30).timestamp()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("2026-02-30", "day is out of range for month"),
        ("2026-13-01", "month must be in 1..12"),
        ("2026-11-26T24:00", "hour must be in 0..23"),
        ("2026-11-26T02:60+01:00", "minute must be in 0..59"),
    ],
)
def test_a_date_with_no_such_day_or_hour_says_which(text: str, why: str) -> None:
    for parse in (parse_begin, parse_since):
        with pytest.raises(ValueError) as refused:
            parse(text, time.time())
        assert str(refused.value).startswith(
            f"invalid time '{text}': no such date or time ({why}); use "
        )


@pytest.mark.parametrize("text", ["tomorrow", "2026-2-3", "2026-11-26T02:00+25:00"])
def test_text_not_written_as_a_date_is_told_the_forms_alone(text: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_begin(text, time.time())
    assert str(refused.value) == (
        f"invalid time '{text}': use now, +DURATION (+30m, +2h), a time of day (23:30) or a "
        "date and time (2026-11-26T02:00)"
    )
