"""Command lists as users write them (task files, `--file -`): pure parsing, no I/O."""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Iterable, Iterator, Sequence

MAX_COMMAND_BYTES = 128 * 1024 - 1
"""The job's shell gets the command as one argument, which Linux caps at 128 KiB with its NUL."""


def command_from_args(args: Sequence[str]) -> str:
    """One argument is a shell command as written; several are quoted and joined.

    So `submit "a && b"` keeps its shell syntax, and `submit -- echo 'a b'` keeps 'a b' whole.
    """
    if len(args) == 1:
        return args[0]
    return shlex.join(args)


class JobTooLong(ValueError):
    """A job of command_lines() longer than its `limit` by its lines `first` to `last`."""

    def __init__(self, first: int, last: int) -> None:
        super().__init__(f"the job on lines {first} to {last} is too long")
        self.first, self.last = first, last


class JobCutShort(ValueError):
    """The input of command_lines(strict=True) ended in a job's continuation: its lines
    `first` to `last`, the last ending in `\\` with no line after it to continue on."""

    def __init__(self, first: int, last: int) -> None:
        super().__init__(f"the job on lines {first} to {last} is continued past the input's end")
        self.first, self.last = first, last


def command_lines(
    lines: Iterable[str], limit: int | None = None, *, strict: bool = False
) -> Iterator[str]:
    """Jobs from lines: `#` comments and blank lines skipped, a trailing `\\` continues a job.

    Works on a stream: each job is yielded as soon as its last line has arrived. A job keeps
    its backslash-newlines, which the shell itself reads as continuations. With `limit`,
    JobTooLong as soon as a job has more UTF-8 bytes: lines continued without end (`yes 'x \\'`)
    are never held whole. With `strict`, JobCutShort for input that ends in a continuation:
    a job file's last line has nothing after its `\\` when the file was cut short (a generator
    that died, a copy cut off), and running the job's start could run the wrong command.
    """
    pending: list[str] = []
    first = size = 0
    read = _Read()
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if not pending:
            first = number
        if limit is not None:
            # The job's bytes but for what _job() strips at its end, all of which a next line
            # keeps: over the limit, the job is too long now or at its next line.
            size = size + 1 + len(line.encode()) if pending else len(line.lstrip().encode())
            if size > limit and len(_job([*pending, line]).encode()) > limit:
                raise JobTooLong(first, number)
        pending.append(line)
        # A `\` that ends a `# comment` continues nothing: sh ends the comment at the line
        # break. Joined, the next line's job ran but showed as part of the comment.
        commented = _continues(line) and read.ends_in_comment(line)
        if not _continues(line) or commented:
            job = "\n".join(pending).strip() if commented else _job(pending)
            pending = []
            read = _Read()
            if job:
                yield job
    job = _job(pending)  # input ended inside a continuation: run what there is, unless strict
    if job and strict:
        raise JobCutShort(first, first + len(pending) - 1)
    if job:
        yield job


def flat_command(command: str) -> str:
    """`command` on one line, as a listing shows it: each backslash-newline the shell reads
    as a continuation (a job file's `\\`-continued lines) is dropped, as the shell drops it,
    and the blanks around it become one space (`python train.py \\⏎    --lr 1` reads
    `python train.py --lr 1`; `--lr\\⏎1` reads `--lr1`, as the shell runs it). Other line
    breaks are kept: they separate commands, not words."""
    if "\\\n" not in command:
        return command
    lines = command.split("\n")
    text = lines[0]
    read = _Read()
    for before, line in itertools.pairwise(lines):
        commented = read.ends_in_comment(before)  # (each line read: its quotes count)
        if not _continues(text) or commented:  # (a comment's `\\` continues nothing)
            read.line_break()
            text += "\n" + line
        elif text[-2:-1].isspace() or line[:1].isspace():
            text = text[:-1].rstrip() + " " + line.lstrip()
        else:
            text = text[:-1] + line
    return text


SHOWN_MOST = 1000
"""Characters of a command that one of `gpuherd run`'s lines shows: a 100 KB command shown
whole buried the run's other lines (while one of a few hundred, long paths and many options,
is common, and shown whole)."""


def shown_command(command: str) -> str:
    """`command` flat (as flat_command), cut to SHOWN_MOST characters, the last being `…`."""
    flat = flat_command(command)
    return flat if len(flat) <= SHOWN_MOST else flat[: SHOWN_MOST - 1] + "…"


_SPECIAL = re.compile(r"""[\\'"#]""")
_SPECIAL_IN_DOUBLE = re.compile(r'[\\"]')


class _Read:
    """How far sh has read a job, line by line: the quote open at a line's end, and the
    character before it (the one before a continuation's `\\`, which sh drops with its line
    break), so that a `#` at the next line's start is known to start a word or not."""

    def __init__(self) -> None:
        self._quote = ""  # ', " or none
        self._before = ""  # "": the job's start, where a word starts

    def line_break(self) -> None:
        """The line read ended at a line break that is no continuation."""
        self._before = "\n"

    def ends_in_comment(self, line: str) -> bool:
        """Read the next line of the job: whether its end is in a `# comment` (outside quotes,
        at a word's start), where a `\\` is the comment's, as sh reads it."""
        at, quote = 0, self._quote
        while True:
            if quote == "'":  # (nothing escapes in single quotes)
                at = line.find("'", at) + 1
                if not at:
                    break
                quote = ""
                continue
            found = (_SPECIAL_IN_DOUBLE if quote else _SPECIAL).search(line, at)
            if found is None:
                break
            char, at = found.group(), found.end()
            if char == "\\":
                at += 1  # what it escapes (at the line's end: the line break)
            elif char == "#":
                before = line[found.start() - 1] if found.start() else self._before
                if not before or before in _WORD_START:
                    self._quote = ""
                    return True
            else:
                quote = "" if quote else char
        self._quote = quote
        self._before = line[-2:-1] or self._before
        return False


def _continues(line: str) -> bool:
    """An odd number of trailing backslashes escapes the newline, as in sh."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _job(lines: list[str]) -> str:
    while lines and not lines[-1].strip():
        lines = lines[:-1]  # a blank line ends a continuation, as in sh
    text = "\n".join(lines).strip()
    return text[:-1].rstrip() if _continues(text) else text


_WORD_START = " \t\n;&|()"
"""What a `#` follows where it starts a comment (at a word's start, as sh reads it)."""


def shell_joined(command: str) -> str:
    """`command` with each line break the shell reads as a continuation taken out: a
    backslash ending a line outside single quotes and comments goes with its line break, as
    sh drops them; outside quotes the blanks around it become one space (`python train.py
    \\⏎    --lr 1` reads `python train.py --lr 1`), inside double quotes they stay. Unlike
    flat_command (a listing's view), exact: a line break inside single quotes is part of the
    word, and one after a comment ends the command, so both stay."""
    if "\\\n" not in command:
        return command
    out: list[str] = []
    quote = ""
    comment = False
    i = 0
    while i < len(command):
        c = command[i]
        if comment or quote == "'":
            comment = comment and c != "\n"
            quote = "" if quote == "'" and c == "'" else quote
            out.append(c)
        elif c == "\\" and command[i + 1 : i + 2] == "\n":
            i += 2
            if not quote:
                blank = bool(out) and out[-1] in " \t"
                while out and out[-1] in " \t":
                    out.pop()
                while i < len(command) and command[i] in " \t":
                    blank, i = True, i + 1
                out.append(" " * blank)
            continue
        elif c == "\\":
            out.append(command[i : i + 2])  # one piece: an escaped blank stays a word's
            i += 2
            continue
        else:
            if c in "'\"" and quote in ("", c):
                quote = "" if quote else c
            elif c == "#" and not quote and (not out or out[-1][-1:] in _WORD_START):
                comment = True
            out.append(c)
        i += 1
    return "".join(out)
