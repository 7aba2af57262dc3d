"""Job files as `run` and `submit --file` read them (gpuherd.cli.job_input): UTF-8 text, lines
no longer than a command can be, a byte order mark dropped; bad input named by file and line."""

from __future__ import annotations

import io

import pytest

from gpuherd.cli.job_input import text_lines
from gpuherd.core.commands import MAX_COMMAND_BYTES
from gpuherd.errors import HerdError


def test_the_longest_command_line_is_read_whole_with_either_line_break() -> None:
    longest = b"y" * MAX_COMMAND_BYTES
    stream = io.BytesIO(longest + b"\r\n" + longest + b"\n" + b"echo last")
    assert [len(line) for line in text_lines(stream, "jobs.txt")] == [
        MAX_COMMAND_BYTES + 2,
        MAX_COMMAND_BYTES + 1,
        len("echo last"),
    ]


def test_a_longer_line_is_refused_by_number_without_reading_it_whole() -> None:
    # /dev/zero has no line break at all: it was read until memory ran out.
    stream = io.BytesIO(b"echo first\n" + b"\0" * (16 * MAX_COMMAND_BYTES))
    lines = text_lines(stream, "/dev/zero")
    assert next(lines) == "echo first\n"
    with pytest.raises(HerdError) as info:
        next(lines)
    assert str(info.value) == (
        "/dev/zero: line 2 is longer than 128 KiB, more than a command can be: put it in a "
        "script file and run that"
    )
    assert stream.tell() <= len("echo first\n") + MAX_COMMAND_BYTES + 2


def test_text_that_is_not_utf8_is_refused_at_its_line_and_reading_stops_there() -> None:
    stream = io.BytesIO(b"echo ok\necho \xff\xfe\necho never\n")
    lines = text_lines(stream, "standard input")
    assert next(lines) == "echo ok\n"
    with pytest.raises(HerdError) as info:
        next(lines)
    assert str(info.value) == (
        "standard input is not text (UTF-8) at line 2: give a file of commands, one a line"
    )
    assert stream.read() == b"echo never\n"  # left unread


def test_a_byte_order_mark_is_dropped_at_the_start_only() -> None:
    bom = "\ufeff".encode()
    stream = io.BytesIO(bom + b"echo one\n" + bom + b"echo two\n")
    assert list(text_lines(stream, "jobs.txt")) == ["echo one\n", "\ufeffecho two\n"]
