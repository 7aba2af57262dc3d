"""`ls --since 02:30` typed in the hour a clock set back for winter time shows twice: the last
02:30 is the one the clock showed last, the first pass's when the second's is still ahead. It
went back a whole day more (the second pass's 02:30 was ahead, so yesterday's was taken)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuherd.core.when import parse_since, said_in

BERLIN = "Europe/Berlin"  # back from 03:00 CEST to 02:00 CET on 2027-10-31 (01:00 UTC)
NIGHT = datetime(2027, 10, 31, 0, 0, tzinfo=UTC)  # 02:00 CEST: the first pass


def _zone(name: str) -> ZoneInfo:
    if not Path("/usr/share/zoneinfo", name).exists():
        pytest.skip("no time zone data")
    return ZoneInfo(name)


def _utc(at: float) -> datetime:
    return datetime.fromtimestamp(at, UTC)


@pytest.fixture
def berlin_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's own time zone Berlin (the CLI's case: SAID_IN is the daemon's)."""
    _zone(BERLIN)
    monkeypatch.setenv("TZ", BERLIN)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("berlin_process")
def test_a_time_of_day_in_the_second_pass_takes_the_first_pass_already_past() -> None:
    now = datetime(2027, 10, 31, 1, 15, tzinfo=UTC).timestamp()  # 02:15 CET, 2nd
    # The first pass's 02:30 (CEST), 45 minutes ago; it was 2027-10-30 00:30 UTC, a day more.
    assert _utc(parse_since("02:30", now)) == datetime(2027, 10, 31, 0, 30, tzinfo=UTC)
    # One the second pass has shown already: that one, the last.
    assert _utc(parse_since("02:10", now)) == datetime(2027, 10, 31, 1, 10, tzinfo=UTC)
    assert _utc(parse_since("01:30", now)) == datetime(2027, 10, 30, 23, 30, tzinfo=UTC)


def _last_shown(hour: int, minute: int, now: float, zone: ZoneInfo) -> float:
    """The last whole minute up to `now` at which the clock in `zone` showed hour:minute,
    found by walking back minute by minute (Berlin's offsets are whole hours)."""
    at = now - now % 60
    while True:
        shown = datetime.fromtimestamp(at, zone)
        if (shown.hour, shown.minute) == (hour, minute):
            return at
        at -= 60


@given(
    after=st.integers(0, 4 * 3600),  # from 02:00 CEST to 05:00 CET: both passes and after
    hour=st.integers(0, 4),
    minute=st.integers(0, 59),
)
def test_a_since_time_of_day_is_the_last_moment_the_clock_showed_it(
    after: int, hour: int, minute: int
) -> None:
    zone = _zone(BERLIN)
    now = NIGHT.timestamp() + after
    with said_in(zone):
        at = parse_since(f"{hour}:{minute:02d}", now)
    assert at == _last_shown(hour, minute, now, zone), _utc(now)


def test_the_day_before_is_taken_when_no_pass_of_today_is_past() -> None:
    now = (NIGHT - timedelta(minutes=30)).timestamp()  # 01:30 CEST, before either 02:30
    with said_in(_zone(BERLIN)):
        at = parse_since("02:30", now)
    assert _utc(at) == datetime(2027, 10, 30, 0, 30, tzinfo=UTC)
