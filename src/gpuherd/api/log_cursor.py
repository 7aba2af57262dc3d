"""Where a job's page is in one of its logs (dashboard_streams.py): the text it has not shown
yet, in whole characters and escape sequences, read through the file held open (HeldLog)."""

from __future__ import annotations

import re
from pathlib import Path

from gpuherd.api.held_log import HeldLog
from gpuherd.log_text import utf8_complete

CHUNK = 64 * 1024
MAX_CATCH_UP = 1024 * 1024
"""A reader further behind than this skips to the last CHUNK bytes (the download has all)."""
_HALF_ESCAPE = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*|[()])?\Z")
"""The start of an escape sequence at the end of what was read: the rest is still to come."""


def escapes_complete(data: bytes) -> int:
    """How much of `data` to show now: all but an escape sequence begun at its end (shown
    half, it could not be recognised and removed; the next read has it whole). At most 256
    bytes are held back: more is no escape sequence but garbage, shown as it is."""
    half = _HALF_ESCAPE.search(data, max(0, len(data) - 256))
    return half.start() if half else len(data)


class LogCursor:
    """Where a reader is in one attempt's log, held open as `log -f` holds it (HeldLog)."""

    def __init__(self, stream: str, path: Path, offset: int, keep_open: bool) -> None:
        self.stream, self.path, self.offset = stream, path, offset
        self.log = HeldLog(keep_open)

    def read(self, final: bool) -> str:
        """New text since the last read ('' if none); `final`: the file will not grow."""
        with self.log.opened(self.path) as f:
            if f is None:  # not there yet, or a planted link: not served
                return ""
            size = f.seek(0, 2)
            skipped = ""
            if size < self.offset:  # emptied or cut under the page (logrotate's copytruncate)
                skipped, self.offset = "[log truncated: shown again from its start]\n", 0
            if size - self.offset > MAX_CATCH_UP:
                skipped = f"[… {size - CHUNK - self.offset} bytes skipped: see the full log]\n"
                self.offset = size - CHUNK
            data = b""
            if self.offset < size:  # (past the end: nothing, and no seek, which may fail)
                f.seek(self.offset)
                data = f.read(CHUNK)
        cut = len(data) if final else escapes_complete(data[: utf8_complete(data)])
        if not final and data[:cut].endswith(b"\r"):
            cut -= 1  # maybe half of a \r\n: a lone \r would wipe the line (_log_html)
        self.offset += cut
        return skipped + data[:cut].decode(errors="replace")

    @staticmethod
    def close(cursors: list[LogCursor]) -> None:
        """Let go of their logs (the stream ended, or its reader went away)."""
        for cursor in cursors:
            cursor.log.close()
