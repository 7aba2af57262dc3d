"""`--begin` times as people write them, and as `ls` shows them (local time); the past
moments `ls --since/--until` take."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuherd.core.when import format_moment, parse_begin, parse_since

NOW = datetime(2026, 11, 25, 14, 30, 15).timestamp()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("+90s", NOW + 90),
        ("+2h", NOW + 7200),
        (" +1h30m ", NOW + 5400),
        ("now", NOW),
        ("+0s", NOW),  # refused before, though a +DURATION: it is now
        ("+0", NOW),
        (" + 0.0m", NOW),
        ("23:30", datetime(2026, 11, 25, 23, 30).timestamp()),
        ("14:30", datetime(2026, 11, 26, 14, 30).timestamp()),  # passed today: tomorrow
        ("14:30:15", datetime(2026, 11, 26, 14, 30, 15).timestamp()),  # exactly now: tomorrow
        ("7:05:09", datetime(2026, 11, 26, 7, 5, 9).timestamp()),
        ("2026-11-26", datetime(2026, 11, 26).timestamp()),
        ("2026-11-26T02:00", datetime(2026, 11, 26, 2, 0).timestamp()),
        ("2026-11-26 02:00:30", datetime(2026, 11, 26, 2, 0, 30).timestamp()),
        ("2026-11-26T02:00+00:00", datetime.fromisoformat("2026-11-26T02:00+00:00").timestamp()),
        ("2001-01-01T00:00", datetime(2001, 1, 1).timestamp()),  # the past is allowed
        # Slurm's forms (sbatch --begin), for hands used to them: refused before
        ("now+2hours", NOW + 7200),
        ("now+30minutes", NOW + 1800),
        ("now+1day", NOW + 86400),
        ("NOW+1Week", NOW + 604800),
        ("now+60", NOW + 60),  # seconds, as Slurm
        ("now+2h", NOW + 7200),
        ("now + 1h30m", NOW + 5400),
    ],
)
def test_begin_forms(text: str, expected: float) -> None:
    assert parse_begin(text, NOW) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "tomorrow",
        "+",
        "+-1h",
        "+-0s",
        "24:00",
        "12:60",
        "9:5",
        "2026-13-01",
        "+2x",
        "now+2years",
    ],
)
def test_bad_begin_says_what_forms_there_are(text: str) -> None:
    # `now` is taken: the message lists it.
    with pytest.raises(ValueError, match=r"invalid time .*use now, \+DURATION .*\(23:30\).*T02:00"):
        parse_begin(text, NOW)


@given(
    now=st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)),
    hour=st.integers(0, 23),
    minute=st.integers(0, 59),
)
def test_a_time_of_day_is_its_next_occurrence(now: datetime, hour: int, minute: int) -> None:
    start = now.timestamp()
    at = parse_begin(f"{hour}:{minute:02d}", start)
    assert start < at <= start + timedelta(days=1, hours=1).total_seconds()  # (a DST day)
    moment = datetime.fromtimestamp(at)
    assert (moment.hour, moment.minute, moment.second) == (hour, minute, 0)


def test_format_moment_names_the_day_only_when_it_is_not_today() -> None:
    assert format_moment(datetime(2026, 11, 25, 23, 30).timestamp(), NOW) == "23:30"
    assert format_moment(NOW + 30, NOW) == "14:30:45"
    assert format_moment(datetime(2026, 11, 26, 2, 0).timestamp(), NOW) == "Nov 26 02:00"
    assert format_moment(datetime(2027, 1, 5, 2, 0).timestamp(), NOW) == "2027-01-05 02:00"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("+99999999999999999999h", "more than 100 years away"),
        ("+3000000d", "more than 100 years away"),
        ("9999-12-31T12:00", "that is after 9999-12-30 00:00, the latest time gpuherd takes"),
    ],
)
def test_a_begin_no_date_can_show_is_refused(text: str, why: str) -> None:
    # Accepted before, such a job then broke `ls` and `show` for the whole queue.
    with pytest.raises(ValueError) as refused:
        parse_begin(text, NOW)
    assert str(refused.value) == f"invalid time {text!r}: {why}"
    assert parse_begin("9999-01-01", NOW) == datetime(9999, 1, 1).timestamp()


def test_format_moment_of_a_time_no_date_can_show_gives_the_number() -> None:
    assert format_moment(1e300, NOW) == f"{1e300:.0f} (epoch seconds)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2d", NOW - 2 * 86400),
        ("-2d", NOW - 2 * 86400),
        (" 1h30m ", NOW - 5400),
        ("now-2days", NOW - 2 * 86400),  # Slurm's (sacct -S)
        ("now-90", NOW - 90),
        ("now - 12h", NOW - 12 * 3600),
        ("now", NOW),
        ("today", datetime(2026, 11, 25).timestamp()),
        ("Yesterday", datetime(2026, 11, 24).timestamp()),
        ("9:00", datetime(2026, 11, 25, 9, 0).timestamp()),
        ("14:30:15", NOW),  # exactly now: now
        ("23:30", datetime(2026, 11, 24, 23, 30).timestamp()),  # still ahead today: yesterday's
        ("2026-11-20", datetime(2026, 11, 20).timestamp()),
        ("2026-11-20T14:00", datetime(2026, 11, 20, 14, 0).timestamp()),
        ("2026-11-20 14:00:30.5", datetime(2026, 11, 20, 14, 0, 30, 500000).timestamp()),
    ],
)
def test_since_forms(text: str, expected: float) -> None:
    assert parse_since(text, NOW) == expected


@pytest.mark.parametrize("text", ["", "soon", "+2h", "2x", "1 day", "24:00", "2026-13-01"])
def test_bad_since_says_what_forms_there_are(text: str) -> None:
    with pytest.raises(ValueError, match=r"invalid time .*use a time ago \(2d, 12h, 30m\), today"):
        parse_since(text, NOW)


def test_a_since_too_long_ago_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^invalid time '99999999999h': more than 100 years ago$"):
        parse_since("99999999999h", NOW)


@given(
    now=st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)),
    hour=st.integers(0, 23),
    minute=st.integers(0, 59),
)
def test_a_since_time_of_day_is_its_last_occurrence(now: datetime, hour: int, minute: int) -> None:
    start = now.timestamp()
    at = parse_since(f"{hour}:{minute:02d}", start)
    assert start - timedelta(days=1, hours=1).total_seconds() <= at <= start  # (a DST day)
    moment = datetime.fromtimestamp(at)
    assert (moment.hour, moment.minute, moment.second) == (hour, minute, 0)
