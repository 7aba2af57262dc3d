"""Sizes and durations in other scripts' digits (`١٠GiB`, `٢h`) are refused, naming them in
ASCII digits: a regex's \\d and Fraction() read `١٠` as 10, and `--mem ١٠GiB` asked 10 GiB,
where every other number gpuherd reads (a count, a job id) is ASCII."""

from __future__ import annotations

import pytest

from gpuherd.core.log_caps import parse_log_cap
from gpuherd.core.units import memory_amount, parse_duration, parse_grace, parse_size


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("١٠GiB", "10GiB"),  # Arabic-Indic
        ("１０GiB", "10GiB"),  # fullwidth
        ("१.५ GiB", "1.5 GiB"),  # Devanagari, a fraction
        ("1٠", "10"),  # one digit of another script is enough
    ],
)
def test_a_size_in_other_digits_is_refused_with_its_ascii_form(text: str, written: str) -> None:
    said = f"invalid size {text!r}: write its digits as 0-9 ({written!r})"
    with pytest.raises(ValueError) as refused:
        parse_size(text)
    assert str(refused.value) == said
    with pytest.raises(ValueError) as refused:
        memory_amount(text)  # a sweep file's `mem:`, the Python API's mem=
    assert str(refused.value) == said


@pytest.mark.parametrize(
    ("text", "written"),
    [("٢h", "2h"), ("١:٣٠:٠٠", "1:30:00"), ("٩٠", "90"), ("1h٣٠m", "1h30m")],
)
def test_a_duration_in_other_digits_is_refused_with_its_ascii_form(text: str, written: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_duration(text)
    assert str(refused.value) == f"invalid duration {text!r}: write its digits as 0-9 ({written!r})"
    with pytest.raises(ValueError, match="write its digits as 0-9"):
        parse_grace("٠")  # (0 is a grace's: refused as a digit all the same)


def test_a_log_cap_says_none_after_it() -> None:
    with pytest.raises(ValueError) as refused:
        parse_log_cap("١٠G")
    assert (
        str(refused.value)
        == "invalid size '١٠G': write its digits as 0-9 ('10G'); or none (no cap)"
    )


def test_ascii_and_other_letters_are_read_as_before() -> None:
    assert parse_size("10GiB") == parse_size(" 10 gib ") == 10 * 2**30
    assert parse_size("10\u00a0GiB") == 10 * 2**30  # (a no-break space is a blank, no digit)
    assert parse_duration("1h30m") == 5400.0
    # `²` is no decimal digit: no regex's \d, refused as any other text.
    with pytest.raises(ValueError, match=r"invalid size '²GiB': use bytes or a value like"):
        parse_size("²GiB")
