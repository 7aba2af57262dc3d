"""json_parse.parse_json on JSON that Python's parser cannot take, or that what reads the value
next could not: lists and objects nested more than MAX_DEPTH levels, numbers of more digits
than Python converts. Each is a PastParser (a NotJson) that says what to write instead; before,
a RecursionError went through every caller (a sweep's whole table: `internal error`), and a
long number's error advised `sys.set_int_max_str_digits()`."""

from __future__ import annotations

import pytest

from gpuherd.json_parse import MAX_DEPTH, NotJson, PastParser, parse_json

TOO_DEEP = "lists and objects nested more than 100 levels inside each other; nest them less"


def nested(levels: int) -> str:
    """An object holding lists: `levels` levels of lists and objects in all."""
    return '{"a": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 2_000, 100_000])
def test_too_deep_says_so(levels: int) -> None:
    for data in (nested(levels), nested(levels).encode(), nested(levels).encode("utf-16")):
        with pytest.raises(PastParser) as refused:
            parse_json(data)
        assert str(refused.value) == TOO_DEEP
        assert isinstance(refused.value, NotJson)  # (what every caller catches already)


def test_as_deep_as_allowed_is_read() -> None:
    value = parse_json(nested(MAX_DEPTH))
    for _ in range(MAX_DEPTH - 1):
        value = value["a"] if isinstance(value, dict) else value[0]
    assert value == []


def test_many_brackets_shallow_are_read() -> None:
    """Brackets in text, and many lists side by side, are no depth."""
    data = '{"text": "' + "[" * 500 + '", "pairs": ' + str([[i, i] for i in range(500)]) + "}"
    assert len(parse_json(data)["pairs"]) == 500


def test_a_number_of_too_many_digits_says_to_quote_it() -> None:
    with pytest.raises(PastParser) as refused:
        parse_json('{"acc": ' + "9" * 5000 + "}")
    assert str(refused.value) == "a number of more than 4300 digits: quote it to keep it as text"
    assert parse_json('{"acc": ' + "9" * 4300 + "}")["acc"] == int("9" * 4300)
