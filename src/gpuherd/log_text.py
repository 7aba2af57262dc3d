"""A log's text as gpuherd shows it: its tail, cut at whole UTF-8 characters, each line as a
terminal leaves it (progress bars redrawn in place), a line whose start is not shown marked
with CUT. Where its last lines begin: log_lines.py."""

from __future__ import annotations

import os
from pathlib import Path

from gpuherd.errors import Forbidden
from gpuherd.jobfiles import open_job_file

TAIL_BYTES = 64 * 1024
CUT = "…"
"""Put where a line shown lost its start: the part of the log that was read began inside it."""

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


def read_end(path: Path, most: int) -> tuple[bytes, int, bool]:
    """The last `most` bytes of the log at `path`, its size, and whether they begin inside a
    line (its start not among them). One byte more is read to tell: bytes that begin just
    after a newline begin a whole line. A character cut in two at their start is left out.
    Raises OSError (FileNotFoundError: no log yet) and Forbidden (no plain file)."""
    with open_job_file(path) as f:
        size = f.seek(0, os.SEEK_END)
        start = max(0, size - most - 1)
        f.seek(start)
        data = f.read(size - start)
    if size <= most:
        return data, size, False
    begun, data = data[:1] != b"\n", data[1:]
    skip = 0
    while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:  # continuation bytes
        skip += 1
    return data[skip:], size, begun


def as_a_terminal_shows(text: str, begun: bool = False) -> str:
    """`text` with each line as a terminal leaves it: a progress bar redrawn in place (`\r`,
    as tqdm does) is its last drawing, not one line per redraw. `begun`: `text` begins inside
    a line (read from the middle of a log). Its last drawing is shown whole where it begins
    in `text` (after a `\r`), else the end of the line that is there, after CUT (the page
    dropped it: a failure whose last line was longer than the part read showed nothing); a
    line of which `text` holds no character is left out."""
    lines = [line.rstrip("\r") for line in text.replace("\r\n", "\n").split("\n")]
    shown = [line.rpartition("\r")[2] for line in lines]
    if begun and "\r" not in lines[0]:
        if lines[0]:
            shown[0] = CUT + shown[0]
        elif len(shown) > 1:
            del shown[0]
    return "\n".join(shown)


def tail_lines(path: Path, lines: int, longest: int | None = None) -> list[str]:
    """The last `lines` lines as a terminal shows them (tqdm's redraws would push the
    traceback out of the tail), of the log's last TAIL_BYTES; ended by a newline alone (not
    a form feed, U+0085, U+2028). A line begun before those bytes shows its end, after CUT.
    Blank lines it ends with are left out: a message followed by them (`print(msg, end="\\n\\n")`,
    a tool's footer) showed only those, none of why it failed. `longest`: a line of more
    characters shows its end alone, after CUT (a page's summary of a failure)."""
    try:
        data, _, begun = read_end(path, TAIL_BYTES)
    except (OSError, Forbidden):
        return []
    text = as_a_terminal_shows(data.decode(errors="replace"), begun).rstrip()
    found = text.split("\n")[-lines:] if text else []
    if longest is None:
        return found
    keep = longest - len(CUT)
    return [line if len(line) <= longest else CUT + line[len(line) - keep :] for line in found]
