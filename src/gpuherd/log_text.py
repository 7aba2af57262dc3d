"""A log's text as gpuherd shows it: its tail, cut at whole UTF-8 characters, each line as a
terminal leaves it (progress bars redrawn in place). Where its last lines begin: log_lines.py."""

from __future__ import annotations

import os
from pathlib import Path

from gpuherd.errors import Forbidden
from gpuherd.jobfiles import open_job_file

TAIL_BYTES = 64 * 1024

_LEADS = ((2, 0b110), (3, 0b1110), (4, 0b11110))
"""UTF-8 lead bytes: (length of the character, the byte's top bits)."""


def utf8_complete(data: bytes) -> int:
    """Length of the longest prefix of `data` that does not end inside a UTF-8 character."""
    n = len(data)
    for back in range(1, min(4, n) + 1):
        byte = data[n - back]
        if byte & 0xC0 == 0x80:
            continue  # a continuation byte: look further back for the lead byte
        need = next((size for size, lead in _LEADS if byte >> (7 - size) == lead), 1)
        return n if back >= need else n - back
    return n


def tail(path: Path, max_bytes: int = TAIL_BYTES) -> str:
    try:
        with open_job_file(path) as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - max_bytes))
            return f.read().decode(errors="replace")
    except (OSError, Forbidden):
        return ""


def as_a_terminal_shows(text: str) -> str:
    """`text` with each line as a terminal leaves it: a progress bar redrawn in place (`\r`,
    as tqdm does) is its last drawing, not one line per redraw."""
    lines = text.replace("\r\n", "\n").split("\n")
    return "\n".join(line.rstrip("\r").rpartition("\r")[2] for line in lines)


def tail_lines(path: Path, lines: int) -> list[str]:
    """The last `lines` lines as a terminal shows them (tqdm's redraws would push the
    traceback out of the tail); ended by a newline alone (not a form feed, U+0085, U+2028).
    Blank lines it ends with are left out: a message followed by them (`print(msg, end="\\n\\n")`,
    a tool's footer) showed only those, none of why it failed."""
    text = as_a_terminal_shows(tail(path)).rstrip()
    return text.split("\n")[-lines:] if text else []
