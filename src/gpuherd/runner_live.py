"""`gpuherd run --live`: the jobs' output on the run's terminal as they write it.

Jobs write to stdout.log and stderr.log in their attempt folders (the job shell's
redirections, unchanged); this follows those files, as `gpuherd log -f` does on the daemon's
side, and hands the reporter whole lines, which it tags with the job's number. Everything is
printed by the run's loop alone, a line at a time, so the lines of jobs that run at once never
mix mid-line. What a job leaves without a newline is printed when its attempt ends.

The files are read on a timer that runs only while a followed job runs: without --live,
nothing is added to a job's start or end.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from gpuherd.core.states import JobState
from gpuherd.core.text import shell_word
from gpuherd.errors import Forbidden
from gpuherd.jobfiles import LOGS, open_job_file
from gpuherd.layout import Layout, attempt_path
from gpuherd.log_text import as_a_terminal_shows, utf8_complete

POLL = 0.2
"""Seconds between two reads of the followed logs (files send no notification)."""
READ_MOST = 256 * 1024
"""Bytes read from one log per poll: a job that floods its log cannot hold up the run (its
next start): the rest comes at the next polls, or at the job's end."""
FINISH_MOST = 1024 * 1024
"""Bytes of a log shown at most when its attempt ends: a job that wrote faster than the polls
read (READ_MOST each) leaves more unread, of which only its last lines are shown, the rest
named as skipped. Showing all of it would hold the run's loop for seconds (50 MB: 8 s), and
with it the ends and starts of the other jobs, whose run times would count that wait."""
LONGEST = 16 * 1024
"""Bytes of the longest line shown whole: a longer one is shown in pieces of this size."""
PROGRESS_EVERY = 10.0
"""Seconds between two showings of a progress bar redrawn in place (`\\r`, as tqdm does):
its latest drawing, not one line per redraw; its last one when its line ends."""
GOES_ON = (JobState.RUNNING.value, JobState.PAUSED.value)
"""States in which a started attempt still runs: any other ends it (its end, a retry)."""


class LiveReporter(Protocol):
    def output(self, number: int, stream: str, line: str) -> None:
        """One whole line that job `number` wrote to `stream` (stdout or stderr)."""

    def flush(self) -> None: ...


class Lines:
    """One log's bytes, cut into the lines to show. Pure: the clock comes in as `now`."""

    def __init__(self) -> None:
        self._pending = b""
        self._drawn_at: float | None = None
        """When the unfinished line's redraws began, or it was last shown; None: none."""

    def feed(self, data: bytes, now: float) -> list[str]:
        *whole, rest = (self._pending + data).split(b"\n")
        lines = [_shown(piece) for line in whole for piece in _pieces(line)]
        if whole:
            self._drawn_at = None
        # A line redrawn in place keeps only its last two drawings: the one shown, and the
        # one being drawn (which may be written after its \r or before it).
        if (last := rest.rfind(b"\r")) > 0:
            rest = rest[rest.rfind(b"\r", 0, last) + 1 :]
        *long, self._pending = _pieces(rest)
        lines += [_shown(piece) for piece in long]
        if b"\r" in self._pending:
            if self._drawn_at is None:
                self._drawn_at = now  # a bar that ends soon is shown once, when it ends
            elif data and now - self._drawn_at >= PROGRESS_EVERY:  # (a stuck bar: not again)
                if drawing := _shown(self._pending):
                    lines.append(drawing)
                self._drawn_at = now
        return lines

    def drop(self) -> int:
        """Forget the unfinished line (its end is being skipped); return its length."""
        dropped, self._pending, self._drawn_at = len(self._pending), b"", None
        return dropped

    def finish(self) -> list[str]:
        """The unfinished last line, if it shows anything: the log ended."""
        rest, self._pending = self._pending, b""
        return [shown] if rest and (shown := _shown(rest)) else []


def _pieces(line: bytes) -> list[bytes]:
    """A line in pieces of LONGEST bytes at most, never cut inside a UTF-8 character; the
    last may be shorter (a line that fits is one piece)."""
    pieces = []
    while len(line) > LONGEST:
        cut = utf8_complete(line[:LONGEST]) or LONGEST
        pieces.append(line[:cut])
        line = line[cut:]
    return [*pieces, line]


def _shown(line: bytes) -> str:
    """A line's text as a terminal leaves it; bytes that are not UTF-8 as U+FFFD."""
    return as_a_terminal_shows(line.decode(errors="replace"))


@dataclass
class _Log:
    path: str
    stream: str
    lines: Lines = field(default_factory=Lines)
    file: IO[bytes] | None = None
    refused: bool = False
    """Not a plain file (a link the job planted in its place): never read."""


class LiveOutput:
    """The logs of the jobs' running attempts, read as they grow.

    `numbers` maps job id to the job's number in the run; `folder_of(number)` is its folder."""

    def __init__(
        self,
        reporter: LiveReporter,
        layout: Layout,
        numbers: Mapping[int, int],
        folder_of: Callable[[int], str],
    ) -> None:
        self._reporter = reporter
        self._layout = layout
        self._numbers = numbers
        self._folder_of = folder_of
        self._followed: dict[int, list[_Log]] = {}
        self._timer: asyncio.TimerHandle | None = None

    def take(self, change: dict[str, Any]) -> None:
        """Follow an attempt that started; print the rest of one that ended (before the
        run's line that says how it ended)."""
        job_id = change.get("id")
        if not isinstance(job_id, int) or job_id not in self._numbers:
            return
        if job_id in self._followed and (
            change.get("event") == "start" or (change.get("state") not in GOES_ON)
        ):
            self._finish(job_id)
        attempt = change.get("attempt")
        if change.get("event") == "start" and isinstance(attempt, int):
            named = self._folder_of(self._numbers[job_id])
            folder = attempt_path(self._layout, job_id, named, attempt)
            self._followed[job_id] = [
                _Log(f"{folder}/{log}", log.removesuffix(".log")) for log in LOGS
            ]
            if self._timer is None:
                self._timer = asyncio.get_running_loop().call_later(POLL, self._poll)

    def close(self) -> None:
        for job_id in list(self._followed):
            self._finish(job_id)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _poll(self) -> None:
        self._timer = None
        now = time.monotonic()
        for job_id, logs in self._followed.items():
            for log in logs:
                self._show(job_id, log, log.lines.feed(_read(log, READ_MOST), now))
        self._reporter.flush()
        if self._followed:
            self._timer = asyncio.get_running_loop().call_later(POLL, self._poll)

    def _finish(self, job_id: int) -> None:
        now = time.monotonic()
        for log in self._followed.pop(job_id):
            if skipped := _skip_to_tail(log):
                skipped += log.lines.drop()
                note = f"… ({skipped:,} bytes not shown: written faster than --live shows them;"
                self._show(job_id, log, [f"{note} whole in {shell_word(log.path)})"])
            while data := _read(log, READ_MOST):  # to its end: the attempt wrote its last
                self._show(job_id, log, log.lines.feed(data, now))
            self._show(job_id, log, log.lines.finish())
            if log.file is not None:
                log.file.close()

    def _show(self, job_id: int, log: _Log, lines: list[str]) -> None:
        number = self._numbers[job_id]
        for line in lines:
            self._reporter.output(number, log.stream, line)


def _skip_to_tail(log: _Log) -> int:
    """Move past what `log` holds unread but its last FINISH_MOST bytes, to the start of a
    line in them; return the bytes moved past (0: the rest is short enough to show)."""
    _read(log, 0)  # (opens it: an attempt that ended before the first poll)
    if log.file is None:
        return 0
    with contextlib.suppress(OSError):
        at, size = log.file.tell(), os.fstat(log.file.fileno()).st_size
        if size - at <= FINISH_MOST:
            return 0
        log.file.seek(size - FINISH_MOST)
        tail = log.file.read(FINISH_MOST)
        # The first line that starts in it; not after its last byte, the newline that ends
        # one long line (which showed nothing of it): that is shown from here, in pieces.
        line_start = tail.find(b"\n", 0, len(tail) - 1) + 1
        log.file.seek(size - FINISH_MOST + line_start)
        return size - FINISH_MOST + line_start - at
    return 0


def _read(log: _Log, most: int) -> bytes:
    """What `log` holds past what was read of it; b"" while the job has not created it."""
    if log.file is None and not log.refused:
        try:
            log.file = open_job_file(log.path)
        except FileNotFoundError:
            return b""
        except (OSError, Forbidden):
            log.refused = True
    if log.file is None:
        return b""
    with contextlib.suppress(OSError):
        return log.file.read(most)
    return b""
