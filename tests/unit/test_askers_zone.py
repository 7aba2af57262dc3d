"""The zone a client's Gpuherd-Zone header names (api/askers_zone.py): its TZ where this
machine knows the name, else its offset; none (the daemon's own) for what names no zone."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone

import pytest

from gpuherd.api.askers_zone import askers_zone
from gpuherd.client_http import zone
from gpuherd.core.when import SAID_IN, format_moment


def test_a_named_zone_is_taken_with_its_summer_time() -> None:
    berlin = askers_zone("3600 Europe/Berlin")
    assert berlin is not None
    july = datetime(2026, 7, 1, 12, tzinfo=UTC).timestamp()
    assert datetime.fromtimestamp(july, berlin).hour == 14  # (CEST: +2, not the offset's +1)


@pytest.mark.parametrize(
    ("value", "hours"),
    [("-10800 XYZ+3", -3), ("19800", 5.5), ("-18000 EST+5 oops", -5), ("3600 ../etc/passwd", 1)],
)
def test_a_name_not_known_here_falls_back_to_the_offset(value: str, hours: float) -> None:
    assert askers_zone(value) == timezone(timedelta(hours=hours))


@pytest.mark.parametrize("value", ["", "junk", "99999999", "-86400", "1.5 ", " "])
def test_a_value_that_names_no_zone_is_the_daemons(value: str) -> None:
    assert askers_zone(value) is None


def test_a_client_at_the_daemons_offset_without_tz_is_in_its_zone() -> None:
    assert askers_zone(str(time.localtime().tm_gmtoff)) is None


def test_format_moment_says_a_moment_in_the_zone_set() -> None:
    at = datetime(2026, 12, 4, 15, 30, tzinfo=UTC).timestamp()
    token = SAID_IN.set(timezone(timedelta(hours=9)))
    try:
        assert format_moment(at, at) == "00:30"  # (Dec 5 there: today is Dec 5 too)
        assert format_moment(at, at - 86400) == "Dec 5 00:30"
    finally:
        SAID_IN.reset(token)


def test_the_client_sends_its_offset_and_its_tz(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", ":Asia/Tokyo")
    time.tzset()
    try:
        assert zone() == "32400 Asia/Tokyo"
        monkeypatch.setenv("TZ", "bad\r\nX-Injected: 1")
        assert "\n" not in zone() and "Injected" not in zone()
    finally:
        monkeypatch.undo()
        time.tzset()
