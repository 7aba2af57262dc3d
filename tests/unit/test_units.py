from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuherd.core.units import (
    first_named,
    format_duration,
    format_given,
    format_size,
    memory_amount,
    parse_duration,
    parse_memory,
    parse_size,
    plural,
)

GiB = 2**30
MiB = 2**20


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("24GiB", 24 * GiB),
        ("24GB", 24 * 10**9),
        ("24G", 24 * GiB),
        ("24g", 24 * GiB),
        ("24 gib", 24 * GiB),
        (" 24 GiB ", 24 * GiB),
        ("512MiB", 512 * MiB),
        ("512M", 512 * MiB),
        ("512MB", 512 * 10**6),
        ("1.5GiB", 3 * GiB // 2),
        (".5GiB", GiB // 2),
        ("2KiB", 2048),
        ("1TiB", 2**40),
        ("1024", 1024),
        ("1024B", 1024),
    ],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "GiB", "24X", "24 GiBs", "1.5", "2 4G", "1e3", "nan", "x24G"])
def test_parse_size_rejects_garbage_with_examples(text: str) -> None:
    with pytest.raises(ValueError, match=r"invalid size .*24GiB") as info:
        parse_size(text)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("text", ["0", "0GiB", "-5GiB", "-1"])
def test_parse_size_rejects_zero_and_negative(text: str) -> None:
    with pytest.raises(ValueError, match="greater than zero"):
        parse_size(text)


def test_parse_size_allow_zero() -> None:
    assert parse_size("0GiB", allow_zero=True) == 0
    with pytest.raises(ValueError, match="zero or more"):
        parse_size("-1GiB", allow_zero=True)


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (24 * GiB, "24.0 GiB"),
        (512 * MiB, "512.0 MiB"),
        (3 * GiB // 2, "1.5 GiB"),
        (512, "512 B"),
        (0, "0 B"),
        (MiB - 1, "1.0 MiB"),
        (2**40, "1.0 TiB"),
    ],
)
def test_format_size(n: int, expected: str) -> None:
    assert format_size(n) == expected


@given(st.integers(min_value=1, max_value=2**60))
def test_size_round_trip_within_display_precision(n: int) -> None:
    # One decimal of the chosen unit, and the unit is at most ~n: 5 % plus a rounding byte.
    assert abs(parse_size(format_size(n)) - n) <= n * 0.053 + 1


UNITS = {
    "B": 1,
    "k": 2**10,
    "KiB": 2**10,
    "KB": 10**3,
    "m": 2**20,
    "MiB": 2**20,
    "MB": 10**6,
    "g": 2**30,
    "GiB": 2**30,
    "GB": 10**9,
    "TiB": 2**40,
    "TB": 10**12,
}


@given(st.integers(min_value=1, max_value=10**6), st.sampled_from(sorted(UNITS)))
def test_parse_size_integer_with_unit(count: int, unit: str) -> None:
    assert parse_size(f"{count}{unit}") == count * UNITS[unit]
    assert parse_size(f"{count} {unit.upper()}") == count * UNITS[unit]


@given(
    st.integers(min_value=1, max_value=1023),
    st.booleans(),
    st.sampled_from([("KiB", 2**10), ("MiB", 2**20), ("GiB", 2**30), ("TiB", 2**40)]),
)
def test_whole_and_half_binary_sizes_round_trip_exactly(
    whole: int, half: bool, unit: tuple[str, int]
) -> None:
    name, factor = unit
    n = whole * factor + (factor // 2 if half else 0)
    text = f"{whole}.{5 if half else 0} {name}"
    assert format_size(n) == text
    assert parse_size(text) == n


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90", 90.0),
        ("90s", 90.0),
        ("1.5", 1.5),
        ("1.5m", 90.0),
        ("10m", 600.0),
        ("2h", 7200.0),
        ("1d", 86400.0),
        ("1h30m", 5400.0),
        ("2h30m10s", 9010.0),
        ("1h 30m", 5400.0),
        ("1H30M", 5400.0),
        ("3m05s", 185.0),
        ("2h01m", 7260.0),
        ("41.2s", 41.2),
    ],
)
def test_parse_duration(text: str, expected: float) -> None:
    assert parse_duration(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["", "2x", "h", "1h1h", "30m1h", "1.2.3s", "1e3", "inf", "nan"])
def test_parse_duration_rejects_garbage_with_examples(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_duration(text)
    message = str(info.value)
    assert message.startswith(f"invalid duration {text!r}")
    assert "90s, 10m, 2h, 1h30m" in message
    assert "\n" not in message


def test_parse_duration_message_matches_the_documented_one() -> None:
    with pytest.raises(ValueError) as info:
        parse_duration("2x")
    assert str(info.value) == (
        "invalid duration '2x': use a number of seconds or a value like 90s, 10m, 2h, 1h30m,"
        " 2:00:00 ([D-]HH:MM:SS or MM:SS)"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2:00:00", 7200.0),
        ("02:00:00", 7200.0),
        ("1:30", 90.0),
        ("90:00", 5400.0),
        ("0:01", 1.0),
        ("00:00:01", 1.0),
        ("100:00:00", 360000.0),
        ("1:5", 65.0),
        ("1-00:00:00", 86400.0),
        ("1-12:30:15", 86400.0 + 12 * 3600 + 30 * 60 + 15),
        ("0-23:59:59", 86399.0),
        ("36500-00:00:00", 100 * 365 * 86400.0),
    ],
)
def test_parse_duration_reads_slurm_clock_forms(text: str, expected: float) -> None:
    # Slurm's --time: MM:SS, HH:MM:SS, D-HH:MM:SS; the first field has no upper bound.
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("1:60", "minutes and seconds must be below 60"),
        ("1:00:60", "minutes and seconds must be below 60"),
        ("1:60:00", "minutes and seconds must be below 60"),
        ("1-24:00:00", "hours after a day count must be below 24"),
    ],
)
def test_parse_duration_rejects_clock_fields_out_of_range(text: str, reason: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_duration(text)
    message = str(info.value)
    assert message.startswith(f"invalid duration {text!r}: {reason}; ")
    assert "90s, 10m, 2h, 1h30m, 2:00:00" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    "text",
    [
        "1:2:3:4",
        "1-02:00",
        "1-2",
        "1::00",
        ":30",
        "1:30:",
        "1.5:00",
        "1:30.5",
        "1:300",
        "1h:30",
        "1-",
    ],
)
def test_parse_duration_rejects_other_clock_shapes(text: str) -> None:
    with pytest.raises(ValueError, match=rf"^invalid duration {re.escape(repr(text))}: use "):
        parse_duration(text)


@pytest.mark.parametrize("text", ["0:00", "00:00:00", "0-00:00:00", "-1:00", "-1-00:00:00"])
def test_parse_duration_rejects_zero_and_negative_clocks(text: str) -> None:
    with pytest.raises(ValueError, match="greater than zero"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["9" * 400 + ":00", "36501-00:00:00", "876001:00:00"])
def test_parse_duration_rejects_clocks_longer_than_100_years(text: str) -> None:
    with pytest.raises(ValueError, match=r"invalid duration .*: longer than 100 years$"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["0", "0s", "0h0m", "-5", "-1h"])
def test_parse_duration_rejects_zero_and_negative(text: str) -> None:
    with pytest.raises(ValueError, match="greater than zero"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["9" * 400, "99999999999999999999h", "36501d"])
def test_parse_duration_rejects_more_than_100_years(text: str) -> None:
    # Before, all but the first were taken: `kill` then said "SIGKILL after 3.6e+23s".
    with pytest.raises(ValueError, match=r"invalid duration .*: longer than 100 years$"):
        parse_duration(text)
    assert parse_duration("36500d") == 100 * 365 * 86400


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (0, "0.0s"),
        (41.23, "41.2s"),
        (59.94, "59.9s"),
        (59.97, "1m00s"),
        (185, "3m05s"),
        (3599.6, "1h00m"),
        (7290, "2h01m"),
        (100000, "1d03h"),
        (-5, "-5.0s"),
    ],
)
def test_format_duration(seconds: float, expected: str) -> None:
    assert format_duration(seconds) == expected


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (30, "30s"),
        (2.5, "2.5s"),
        (90, "1m30s"),
        (300, "5m"),
        (3600, "1h"),
        (5400, "1h30m"),
        (3725, "1h2m5s"),
        (86400, "1d"),
        (90.5, "1m30s"),
    ],
)
def test_format_given_shows_a_duration_as_it_is_typed(seconds: float, expected: str) -> None:
    assert format_given(seconds) == expected  # `ls`: "(--retry-delay 30s)", not "30.0s"
    assert parse_duration(expected) == pytest.approx(seconds, abs=0.5)  # and reads back


@pytest.mark.parametrize("bad", [float("inf"), float("nan")])
def test_format_duration_rejects_non_finite(bad: float) -> None:
    with pytest.raises(ValueError, match="not a finite number"):
        format_duration(bad)


@given(st.floats(min_value=0.05, max_value=10**8, allow_nan=False))
def test_duration_round_trip_within_display_precision(seconds: float) -> None:
    shown = format_duration(seconds)
    # Two fields are shown, the smaller one truncated; the error is below one smaller unit.
    if seconds < 59.95:
        tolerance = 0.05
    elif seconds < 3599.5:
        tolerance = 0.5
    elif seconds < 86399.5:
        tolerance = 60.5
    else:
        tolerance = 3600.5
    assert abs(parse_duration(shown) - seconds) <= tolerance + 1e-9


def test_plural_counts_one_thing_without_an_s() -> None:
    assert plural(1, "GPU") == "1 GPU"
    assert plural(0, "GPU") == "0 GPUs"
    assert plural(3, "more waiting job") == "3 more waiting jobs"


def test_plural_groups_a_count_by_thousands_as_the_dashboard_does() -> None:
    # `stopping after waiting for 1200 running jobs` beside the dashboard's `1–50 of 10,504`.
    assert plural(1200, "running job") == "1,200 running jobs"
    assert plural(1_000_000, "point") == "1,000,000 points"


@pytest.mark.parametrize("text", ["10", " 512 ", "1048575"])
def test_a_memory_request_without_a_unit_under_1_mib_is_refused(text: str) -> None:
    # `--mem 10` asked for 10 bytes: any number of such jobs shared a GPU.
    with pytest.raises(ValueError, match=rf"^{text.strip()} is {text.strip()} bytes: give a unit"):
        parse_memory(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1048576", 2**20), ("10737418240", 10 * 2**30), ("10GiB", 10 * 2**30), ("10B", 10)],
)
def test_a_memory_request_with_a_unit_or_a_byte_count_of_a_mib_or_more_is_taken(
    text: str, expected: int
) -> None:
    assert parse_memory(text) == expected  # scripts that pass byte counts keep working


@pytest.mark.parametrize("value", [10, "10", 2**20 - 1])
def test_a_whole_number_of_bytes_under_1_mib_is_refused_as_text_is(value: int | str) -> None:
    # `mem: 10` in a sweep file, `mem=10` in Python: as `--mem 10`, 10 bytes is never meant.
    with pytest.raises(ValueError, match=r"is \d+ bytes: give a unit"):
        memory_amount(value)


def test_a_whole_number_of_a_mib_or_more_is_bytes() -> None:
    assert memory_amount(2**20) == 2**20 and memory_amount(10 * 2**30) == 10 * 2**30
    assert memory_amount("10GiB") == 10 * 2**30


def test_first_named_names_three_and_counts_the_rest() -> None:
    assert first_named([1, 2], str) == "1; 2"
    assert first_named(list(range(1, 8)), lambda n: f"x={n}") == "x=1; x=2; x=3; 4 more"
    assert first_named([], str) == ""
