"""Job files as `run` and `submit --file` read them (gpuherd.cli.job_input): UTF-8 text, lines
no longer than a command can be, a byte order mark dropped; bad input named by file and line."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuherd.cli import job_input
from gpuherd.cli.job_input import STDIN_NAME, job_commands, text_lines
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
        "standard input is not UTF-8 text (byte 0xff at line 2): if it holds commands, save it "
        "as UTF-8 (from Latin-1: iconv -f LATIN1 -t UTF-8)"
    )
    assert stream.read() == b"echo never\n"  # left unread


def test_a_binary_file_is_no_text_in_any_encoding() -> None:
    """A program given as a job file: no advice to convert it from Latin-1."""
    lines = text_lines(io.BytesIO(b"\x7fELF\x02\x01\x01\x00\x00\xf0\x9f\n"), "/usr/bin/python3")
    with pytest.raises(HerdError) as info:
        next(lines)
    assert str(info.value) == (
        "/usr/bin/python3 is not text (line 1 holds a NUL byte, as a program or an archive "
        "does): give a file of commands, one a line"
    )


def test_a_byte_order_mark_is_dropped_at_the_start_only() -> None:
    bom = "\ufeff".encode()
    stream = io.BytesIO(bom + b"echo one\n" + bom + b"echo two\n")
    assert list(text_lines(stream, "jobs.txt")) == ["echo one\n", "\ufeffecho two\n"]


# ---- a job of continued lines: the same cap, for `run` and `submit --file` alike ------------


def continued(total: int, tail: str = "") -> str:
    """A job of continued lines whose joined command is `total` bytes (`tail` after each
    line's backslash; the shell's newline between lines counts)."""
    head = "echo " + "x" * 60_000 + f" \\{tail}\n"
    rest = total - (len(head) - len(tail) - 1) - 1  # the newline between the lines
    return head + "y" * rest + "\n"


def test_a_continued_job_as_long_as_a_command_may_be_is_read(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("echo first\n" + continued(MAX_COMMAND_BYTES) + "echo last\n")
    commands = list(job_commands(str(jobs)))
    assert [len(c.encode()) for c in commands] == [10, MAX_COMMAND_BYTES, 9]


def test_a_continued_job_longer_than_a_command_names_its_lines(tmp_path: Path) -> None:
    # `run` read it and started the other jobs; `submit` said "job 2 of the submission".
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("echo first\n\n# two lines\n" + continued(MAX_COMMAND_BYTES + 1) + "echo x\n")
    with pytest.raises(HerdError) as info:
        job_commands(str(jobs))
    assert str(info.value) == (
        f"{jobs}: lines 4 to 5 (continued with '\\') are longer than 128 KiB, more than a "
        "command can be: put it in a script file and run that"
    )


def test_what_the_shell_strips_of_a_job_is_not_counted(tmp_path: Path) -> None:
    # Leading blanks and the blanks before a last backslash are not the command's.
    jobs = tmp_path / "jobs.txt"
    job = continued(MAX_COMMAND_BYTES).rstrip("\n")
    jobs.write_text(" " * 100 + job + " " * 100 + "\\\n\necho last\n")
    commands = list(job_commands(str(jobs)))
    assert [len(c.encode()) for c in commands] == [MAX_COMMAND_BYTES, 9]


def test_one_line_longer_than_a_command_by_its_last_byte_is_named_alone(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.txt"
    jobs.write_bytes(b"echo first\n" + b"y" * (MAX_COMMAND_BYTES + 1) + b"\n")
    with pytest.raises(HerdError, match=f"^{jobs}: line 2 is longer than 128 KiB, more"):
        job_commands(str(jobs))


def test_lines_continued_without_end_are_refused_without_reading_them_all() -> None:
    line = b"x" * 999 + b" \\\n"
    stream = io.BytesIO(line * 10_000)  # 10 MB of one job
    jobs = _capped_stream(stream)
    with pytest.raises(HerdError, match=r"^standard input: lines 1 to 1\d\d \(continued"):
        next(jobs)
    assert stream.tell() < 2 * MAX_COMMAND_BYTES


def _capped_stream(stream: io.BytesIO) -> Iterator[str]:
    """The jobs of a stream as `run` reads standard input: one at a time."""
    return iter(job_input._capped_jobs(text_lines(stream, STDIN_NAME), STDIN_NAME))


def test_a_nul_byte_is_refused_at_its_line_and_reading_stops_there() -> None:
    # `submit --file` named "job 2 of the submission"; `run` ran the other lines.
    stream = io.BytesIO(b"echo ok\n# a comment is a line too\necho a\0b\necho never\n")
    lines = text_lines(stream, "jobs.txt")
    assert [next(lines), next(lines)] == ["echo ok\n", "# a comment is a line too\n"]
    with pytest.raises(HerdError) as info:
        next(lines)
    assert str(info.value) == (
        "jobs.txt: line 3 holds a NUL byte (at character 7): no program can receive it; remove it"
    )
    assert stream.read() == b"echo never\n"  # left unread


def test_a_nul_byte_in_a_continued_line_names_that_line(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.txt"
    jobs.write_bytes(b"echo first\n\necho a \\\n  b\0 \\\n  c\necho last\n")
    with pytest.raises(HerdError, match=f"^{jobs}: line 4 holds a NUL byte \\(at character 4\\)"):
        job_commands(str(jobs))
