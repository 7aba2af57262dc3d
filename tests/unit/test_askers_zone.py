"""The zone a client's Gpuherd-Zone header names (api/askers_zone.py): its TZ where this
machine knows the name, else its offset; none (the daemon's own) for what names no zone."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from gpuherd.api.askers_zone import _sent, askers_zone
from gpuherd.client_http import zone
from gpuherd.core.when import SAID_IN, format_moment, parse_begin, parse_since


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


def test_begin_and_since_are_read_in_the_zone_set() -> None:
    # The dashboard's `begin 23:30` typed in Tokyo was 23:30 of the daemon's zone.
    tokyo = ZoneInfo("Asia/Tokyo")
    now = datetime(2026, 12, 4, 15, 0, tzinfo=UTC).timestamp()  # 00:00 of Dec 5 in Tokyo
    token = SAID_IN.set(tokyo)
    try:
        at = datetime.fromtimestamp(parse_begin("23:30", now), tokyo)
        assert (at.day, at.hour, at.minute) == (5, 23, 30)
        at = datetime.fromtimestamp(parse_begin("2026-12-06T02:00", now), tokyo)
        assert (at.day, at.hour) == (6, 2)
        assert (
            parse_begin("2026-12-06T02:00+00:00", now)
            == datetime(2026, 12, 6, 2, tzinfo=UTC).timestamp()
        )  # (an offset written is honoured)
        assert parse_since("today", now) == datetime(2026, 12, 5, tzinfo=tokyo).timestamp()
    finally:
        SAID_IN.reset(token)


@pytest.mark.parametrize(
    ("headers", "sent"),
    [
        ([(b"gpuherd-zone", b"32400 Asia/Tokyo")], "32400 Asia/Tokyo"),
        ([(b"cookie", b"a=1; gpuherd_zone=32400%20Asia%2FTokyo; b=2")], "32400 Asia/Tokyo"),
        ([(b"cookie", b"gpuherd_zonex=1; x_gpuherd_zone=2")], None),
        ([(b"cookie", b"x=1")], None),
        ([], None),
    ],
)
def test_the_zone_is_the_headers_else_the_cookies(
    headers: list[tuple[bytes, bytes]], sent: str | None
) -> None:
    assert _sent(headers) == sent


def test_a_time_the_clock_skips_there_is_the_jump_as_cron_runs_it() -> None:
    # With a zone set, the dashboard's `02:30` of the night summer time begins was read as
    # 03:30, after a `03:00` job (the README's rule held only for the daemon's own zone).
    berlin = ZoneInfo("Europe/Berlin")
    token = SAID_IN.set(berlin)
    try:
        skipped = parse_begin("2027-03-28T02:30", 0)
        assert skipped == parse_begin("2027-03-28T03:00", 0)
        assert datetime.fromtimestamp(skipped, berlin).hour == 3
        twice = parse_begin("2027-10-31T02:30", 0)  # shown twice: the first
        assert datetime.fromtimestamp(twice, UTC).hour == 0  # (02:30 CEST is 00:30 UTC)
    finally:
        SAID_IN.reset(token)
