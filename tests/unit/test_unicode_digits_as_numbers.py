"""Numbers typed with digits that are digits to str.isdigit() but not to int() (`²`, `³`):
`--listen 127.0.0.1:²` said `invalid literal for int() with base 10: '²'`, and COLUMNS=²
ended `gpuherd ls` in a traceback. They are refused, or passed over, as other text is."""

from __future__ import annotations

import io

import pytest

from gpuherd.cli import plain
from gpuherd.errors import InvalidValue
from gpuherd.listen_address import parse_address


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("127.0.0.1:²", "invalid port in listen address '127.0.0.1:²': use 0-65535"),
        ("²", "invalid listen address '²': use HOST:PORT, e.g. 127.0.0.1:8888"),
        ("[::1]:³", "invalid port in listen address '[::1]:³': use 0-65535"),
    ],
)
def test_a_listen_address_with_such_digits_is_refused_in_words(typed: str, said: str) -> None:
    with pytest.raises(InvalidValue) as refused:
        parse_address(typed)
    assert str(refused.value) == said
    assert parse_address("8888") == ("127.0.0.1", 8888)


def test_columns_of_such_digits_are_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "²")  # (a stream with no terminal: the width falls back to 80)
    assert plain._terminal_width(io.StringIO()) == 80
    monkeypatch.setenv("COLUMNS", "120")
    assert plain._terminal_width(io.StringIO()) == 120
