"""core.text's said_line() (gpuherd's own error and warning lines, with the values they
quote shown as typed) and core.listing_filters' refusal of a filter holding a NUL byte."""

from __future__ import annotations

import pytest

from gpuherd.core.listing_filters import empty_filter
from gpuherd.core.text import said_line
from gpuherd.typed_name import prefixed


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # was `unknown setting 'retries'`: the sequence dropped, a setting that exists named
        ("unknown setting 're\x1b[31mtries'", "unknown setting 're\\x1b[31mtries'"),
        ("title \x1b]0;T\x07 end", "title \\x1b]0;T\\x07 end"),
        ("a\nb\r\nc", "a⏎b⏎c"),  # one line, as before
        ("nul\0 tab\t cr\r del\x7f c1\x85\x9b", "nul\\x00 tab\\t cr\\r del\\x7f c1\\x85\\x9b"),
        ("rtl\u202eevil", "rtl<U+202E>evil"),
        ("plain é 中 \\x1b", "plain é 中 \\x1b"),  # (a backslash typed stays as it is)
    ],
)
def test_said_line_shows_control_characters_as_typed(text: str, shown: str) -> None:
    assert said_line(text) == shown


def test_an_error_line_sends_no_control_character_to_the_terminal() -> None:
    line = prefixed("error", "--output /no\x1b[31m/x.log: the folder /no\x1b[31m does not exist")
    assert line.endswith(
        ": error: --output /no\\x1b[31m/x.log: the folder /no\\x1b[31m does not exist"
    )
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in line), repr(line)


@pytest.mark.parametrize("value", ["\0", "a\0b", " \0 "])
def test_a_filter_holding_a_nul_byte_is_refused(value: str) -> None:
    assert empty_filter("project", value, "--project", "leave --project out") == (
        "--project holds a NUL byte, which no job's project can: give a project, or leave"
        " --project out"
    )


def test_a_filter_that_can_match_is_taken() -> None:
    assert empty_filter("name", "resnet-*", "--name", "leave --name out") is None
    assert empty_filter("name", None, "--name", "leave --name out") is None


@pytest.mark.parametrize("separator", ["\u2028", "\u2029"])
def test_a_line_separator_breaks_no_line_that_gpuherd_prints(separator: str) -> None:
    """U+2028 and U+2029 are line breaks to a terminal or an editor: an error quoting a name
    that held one (refused since, but stored by an older gpuherd), a table cell or a shell
    word printed it raw, and the line went on, unprefixed, on the next."""
    from gpuherd.core.text import clean, shell_word

    escaped = repr(separator)[1:-1]
    assert prefixed("error", f"name a{separator}b").endswith(f": error: name a{escaped}b")
    assert clean(f"a{separator}b") == "a b"
    assert shell_word(f"a{separator}b") == f"$'a{escaped}b'"
