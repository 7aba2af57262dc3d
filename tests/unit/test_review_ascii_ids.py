"""Job ids and GPU indices are written in the digits 0-9 alone: a regex's \\d took other
scripts' digits (`٢`, Arabic-Indic 2), so `rm ٢` removed job 2 while `show ٢` called the id
invalid. And the latest date a --begin or --since takes, said as it is."""

from __future__ import annotations

from datetime import datetime

import pytest

from gpuherd.core.idspec import (
    gpu_index_list,
    parse_gpu_indices,
    parse_gpu_range,
    parse_ids,
    parse_job_ids,
)
from gpuherd.core.when import LATEST, parse_begin, parse_since

IDS_HINT = "use ids like 5, 3-7,9 or 1 2 3"
GPUS_HINT = "use GPU indices like 0, 0-3 or 0,2"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("٢", f"invalid job id '٢': {IDS_HINT}"),  # Arabic-Indic 2
        ("۳", f"invalid job id '۳': {IDS_HINT}"),  # Extended Arabic-Indic 3
        ("५", f"invalid job id '५': {IDS_HINT}"),  # Devanagari 5
        ("２", f"invalid job id '２': {IDS_HINT}"),  # fullwidth 2
        ("1,٢", f"invalid job id '٢' in '1,٢': {IDS_HINT}"),
        ("1-٣", f"invalid job id '1-٣': {IDS_HINT}"),
        ("1٢", f"invalid job id '1٢': {IDS_HINT}"),
    ],
)
def test_a_job_id_in_other_digits_is_refused(spec: str, message: str) -> None:
    for parse in (parse_ids, parse_job_ids):
        with pytest.raises(ValueError) as refused:
            parse(spec)
        assert str(refused.value) == message
    with pytest.raises(ValueError) as refused:
        parse_job_ids(["1", spec])  # several argv words: `rm 1 ٢`
    assert str(refused.value).startswith("invalid job id ")


@pytest.mark.parametrize("spec", ["٢", "0-٣", "０"])
def test_a_gpu_index_in_other_digits_is_refused(spec: str) -> None:
    message = f"invalid GPU index {spec!r}: {GPUS_HINT}"
    for parse in (parse_gpu_indices, gpu_index_list):
        with pytest.raises(ValueError) as refused:
            parse(spec)
        assert str(refused.value) == message
    with pytest.raises(ValueError) as refused:
        parse_gpu_range(spec, spec)  # (`daemon start --gpus`'s items: as it refused them)
    assert str(refused.value) == message


def test_ids_in_the_digits_0_to_9_are_taken_as_before() -> None:
    assert parse_job_ids("2") == [2]
    assert parse_job_ids(["1-3,9", "12"]) == [1, 2, 3, 9, 12]
    assert parse_gpu_indices("0-2,3") == [0, 1, 2, 3]
    assert parse_gpu_range("1-2", "1-2") == range(1, 3)


NOW = datetime(2026, 11, 25, 14, 30, 15).timestamp()
PAST_LATEST = "that is after 9999-12-30 00:00, the latest time gpuherd takes"


@pytest.mark.parametrize("text", ["9999-12-31", "9999-12-31T23:59", "9999-12-30T00:01"])
def test_a_moment_past_the_latest_names_the_latest_not_the_year(text: str) -> None:
    # It said `that is after the year 9999`, of dates in 9999.
    for parse in (parse_begin, parse_since):
        with pytest.raises(ValueError) as refused:
            parse(text, NOW)
        assert str(refused.value) == f"invalid time {text!r}: {PAST_LATEST}"


def test_the_latest_moment_itself_is_taken() -> None:
    assert parse_begin("9999-12-30T00:00", NOW) == LATEST == datetime(9999, 12, 30).timestamp()
    assert parse_begin("9999-12-29", NOW) == datetime(9999, 12, 29).timestamp()
