"""Job files as `submit --file` and `run` read them: UTF-8 text, one job a line.

Read as bytes and checked here, once for both: a binary file, a line longer than any command
can be (`/dev/zero` has no line break at all: it was read until memory ran out), a NUL byte
(`submit` said "job 2 of the submission", `run` ran the other lines), a job of
`\\`-continued lines that is (`run` started the others and `submit` named no line), a last
line ending in `\\` (a file cut short: its job's start ran as if whole), a closed standard
input, each get one line naming the file and the line.
"""

from __future__ import annotations

import codecs
import io
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from typing import BinaryIO

import click

from gpuherd.core.commands import MAX_COMMAND_BYTES, JobCutShort, JobTooLong, command_lines
from gpuherd.core.text import shell_word
from gpuherd.errors import HerdError
from gpuherd.input_watch import InputWatch, WatchedStream

STDIN_NAME = "standard input"

_READ_LIMIT = MAX_COMMAND_BYTES + len("\r\n")
"""The most bytes one line may take, its line break included: a longer one can never be a
command, so reading it to its end would only use up memory."""
_TOO_LONG = "longer than 128 KiB, more than a command can be: put it in a script file and run that"
EMPTY_NAME = "give a file of commands, one a line, or - to read the jobs from standard input"
"""What to give for a job file named by nothing (`--file "$JOBS"` with JOBS unset), said
after the option or argument: it was `cannot read : No such file or directory`."""


class JobFileUnopened(HerdError):
    """A job file that could not be opened (not there, a folder, not readable): `submit
    --file` refuses it as the mistake of the command line it is (exit 2); `run` keeps exit 1,
    which it documents for input that could not be read."""


def job_commands(file: str | None, watch: InputWatch | None = None) -> Iterable[str]:
    """The jobs of FILE (standard input for None or '-'): a file on disk is read whole, so a
    bad line is refused before any job starts; a pipe, a terminal or a device is read as a
    stream (a job as soon as its line arrives; its reads through `watch`, if given), and a bad
    line ends it there."""
    stream, name = _open(file)
    if not _is_regular_file(stream):
        if watch is not None:
            stream = io.BufferedReader(WatchedStream(stream, watch))
        return _capped_jobs(text_lines(stream, name), name)
    with stream:
        return list(_capped_jobs(text_lines(stream, name), name))


def submitted_file(file: str) -> list[str]:
    """The jobs of `submit --file FILE`, read whole before anything is sent. A FILE that
    cannot be opened is a mistake of the command line (exit 2, as every other: a typo'd
    name was exit 1); what it holds is checked as for `run`, a script refused as by `run`."""
    from gpuherd.cli.not_job_file import refuse_script

    if not file:
        raise click.UsageError(f"--file is empty: {EMPTY_NAME}")
    refuse_script(file, "submit", "--file")  # (its lines were queued as jobs of their own)
    try:
        return list(job_commands(file))
    except JobFileUnopened as exc:
        raise click.UsageError(str(exc)) from None


def no_command_in(file: str | None) -> str:
    """What `submit --file` says of a file of comments and blank lines (an empty one too):
    which file, since a script may give another than the user thinks, and what it should be."""
    piped = file is None or file == "-"
    name, put = (STDIN_NAME, "pipe in") if piped else (file_named(file or ""), "put in it")
    return (
        f"{name} holds no command (only comments or blank lines): {put} one command a line, "
        "as python train.py --lr 0.1"
    )


def text_lines(stream: BinaryIO, name: str) -> Iterator[str]:
    """The stream's lines as text, each as soon as it has arrived; HerdError for a line that
    is not UTF-8, holds a NUL byte or is longer than a command may be. A byte order mark at
    the start is dropped (editors on Windows write one; it would begin the first command)."""
    number = 0
    while raw := stream.readline(_READ_LIMIT):
        number += 1
        if len(raw) == _READ_LIMIT and not raw.endswith(b"\n"):
            raise HerdError(f"{name}: line {number} is {_TOO_LONG}")
        if number == 1:
            raw = raw.removeprefix(codecs.BOM_UTF8)
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HerdError(_not_utf8(name, number, raw, exc.start)) from None
        if "\0" in line:  # (a comment's too: the file is damaged, or not text)
            raise HerdError(
                f"{name}: line {number} holds a NUL byte (at character {line.index(chr(0)) + 1}):"
                " no program can receive it; remove it"
            )
        yield line


def _not_utf8(name: str, number: int, raw: bytes, at: int) -> str:
    """What to do with a line that is not UTF-8: most such files do hold commands, saved in
    another encoding (Windows PowerShell's `>` writes UTF-16; an older editor, Latin-1)."""
    from gpuherd.not_utf8 import not_utf8  # (only on this error's way)

    return not_utf8(name, raw, at, "a file of commands, one a line", number, "holds commands")


def _capped_jobs(lines: Iterable[str], name: str) -> Iterator[str]:
    """The jobs of the lines; HerdError for one that, its continued lines joined, is longer
    than a command may be, as soon as it is, and for one continued past the input's end (so
    for both `run` and `submit --file`)."""
    try:
        yield from command_lines(lines, MAX_COMMAND_BYTES, strict=True)
    except JobTooLong as exc:
        where = f"line {exc.first} is"
        if exc.last > exc.first:
            where = f"lines {exc.first} to {exc.last} (continued with '\\') are"
        raise HerdError(f"{name}: {where} {_TOO_LONG}") from None
    except JobCutShort as exc:
        job = f"the job of lines {exc.first} to {exc.last}" if exc.last > exc.first else "it"
        whole = "the input" if name == STDIN_NAME else "the file"
        raise HerdError(
            f"{name}: line {exc.last} ends in '\\' but nothing follows to continue {job}: "
            f"{whole} may have been cut short; complete the job, or remove the '\\'"
        ) from None


def _open(file: str | None) -> tuple[BinaryIO, str]:
    """The jobs' stream and its name for messages."""
    if file is None or file == "-":
        if sys.stdin is None:  # `<&-`: Python leaves sys.stdin None (main put /dev/null on fd 0)
            raise HerdError(
                "standard input is closed: give a job file, or pipe the jobs in (< jobs.txt)"
            )
        # Not sys.stdin.buffer: the run's reading thread may still wait in it at exit, and
        # Python, finalizing sys.stdin then, aborts (Fatal Python error: _enter_buffered_busy).
        return open(sys.stdin.fileno(), "rb", closefd=False), STDIN_NAME
    name = file_named(file)
    try:
        return open(file, "rb"), name  # a stream is read on, by the run's thread
    except IsADirectoryError as exc:  # (a folder's name typed for the file in it)
        raise JobFileUnopened(
            f"cannot read {name}: {exc.strerror}: give a file of commands, one per line"
        ) from None
    except FileNotFoundError as exc:  # (a typo, or a file meant to come on stdin)
        raise JobFileUnopened(
            f"cannot read {name}: {exc.strerror}: check the path, or give - to read the jobs "
            "from standard input"
        ) from None
    except OSError as exc:
        raise JobFileUnopened(f"cannot read {name}: {exc.strerror}") from None


def file_named(file: str) -> str:
    """The job file's name as messages say it: as typed, but for one that is not UTF-8,
    said with Python's escapes (`cannot read j\\udcff.txt`): as the shell reads it back
    (`$'j\\xff.txt'`), as the --output-dir error says such a name."""
    try:
        file.encode()
    except UnicodeEncodeError:  # (bytes that are not UTF-8 come from argv as lone surrogates)
        return shell_word(file)
    return file


def _is_regular_file(stream: BinaryIO) -> bool:
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError):
        return False
