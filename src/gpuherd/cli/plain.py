"""Plain-text tables and styles for the commands people run most (`ls`, `show`), and for the
sweep tables (`sweep status`, `sweep ls`).

No rich here: importing it costs about 20 ms, a third of a whole `gpuherd ls`. Text from
jobs and sweeps (names, commands, messages, parameters, metrics; column names too) is printed
as it is, never read as markup; escape sequences are dropped, other control characters
(tabs, newlines) shown as spaces and bidi controls as `<U+202E>`, so they cannot garble the
terminal or make text read as other text.
"""

from __future__ import annotations

import csv
import os
import re
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

# Where the daemon needs them too (hooks.log, the dashboard): one place, in the core.
from gpuherd.core.text import ascii_digits
from gpuherd.core.text import clean as clean
from gpuherd.core.text import show_bidi as show_bidi

PIPED_WIDTH = 200
"""Output to a pipe or file is read by people too (`ls | less`): cut at 200 columns, not 80."""
ELLIPSIS = "…"
GAP = "  "

_SGR = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "magenta": "35",
    "cyan": "36",
}

Cell = str | tuple[str, str]
"""A table cell: its text, or (text, style) with a style of _SGR."""


class Terminal:
    """Where the output goes: its width and whether it shows styles (a terminal does).

    NO_COLOR turns every style off, bold and dim too, and wins over FORCE_COLOR: who sets
    it wants text without escape sequences (a screen reader, a log of the terminal), and a
    bold header kept still wrote them."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = sys.stdout if stream is None else stream
        tty = self.stream.isatty()
        env = os.environ
        wanted = bool(env.get("FORCE_COLOR")) or (tty and env.get("TERM") != "dumb")
        self.styled = wanted and not env.get("NO_COLOR")
        self.width = _terminal_width(self.stream) if tty else PIPED_WIDTH
        self.encoding = getattr(self.stream, "encoding", None) or "utf-8"

    def shown(self, text: str) -> str:
        """`text` as the stream prints it: `?` for each character its encoding lacks (main's
        _replace_unencodable). A table lays its columns out by this, not by `text`: under a
        Latin-1 locale a CJK name's two-column characters print as one-column `?`s, and the
        columns after it moved left."""
        if text.isascii():
            return text
        try:
            text.encode(self.encoding)
        except UnicodeEncodeError:
            return text.encode(self.encoding, errors="replace").decode(self.encoding)
        return text

    def style(self, text: str, style: str) -> str:
        if not text or not self.styled or style not in _SGR:
            return text
        return f"\x1b[{_SGR[style]}m{text}\x1b[0m"

    def write(self, lines: Sequence[str]) -> None:
        if lines:
            self.stream.write("\n".join(lines) + "\n")


def csv_writer() -> Any:
    """A CSV writer to stdout (`ls --csv`, `sweep status --csv`) whose rows end in a newline,
    as sacct -P's: csv's default \\r\\n left a \\r on each row's last field for `read`, awk
    and cut (`--columns id,stderr`: `tail "$stderr"` found no such file)."""
    return csv.writer(sys.stdout, lineterminator="\n")


def _terminal_width(stream: TextIO) -> int:
    columns = os.environ.get("COLUMNS", "")
    if ascii_digits(columns) and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (OSError, ValueError):
        return 80


def cells(text: str) -> int:
    """Columns `text` takes on a terminal (wide East Asian characters take two)."""
    if text.isascii():
        return len(text)
    return sum(_char_cells(c) for c in text)


def _char_cells(char: str) -> int:
    # A mark drawn on the character before takes no column, whatever its combining class:
    # Thai and Hindi vowel signs are class 0 (`ที่ดิน` is 3 columns, not 5), as are emoji
    # variation selectors; so do format characters (a zero-width space or joiner), as wcwidth
    # counts them, but the soft hyphen a terminal shows.
    if unicodedata.combining(char) or unicodedata.category(char) in _NO_COLUMN:
        return 0 if char != "\u00ad" else 1
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


_NO_COLUMN = ("Mn", "Me", "Cf")


def cut(text: str, width: int) -> str:
    """`text` in at most `width` columns, ending in … when something was cut."""
    if cells(text) <= width:
        return text
    if width <= 0:
        return ""
    kept, used = [], 0
    for char in text:
        size = _char_cells(char)
        if used + size > width - 1:
            break
        kept.append(char)
        used += size
    return "".join(kept) + ELLIPSIS


def wrap(text: str, width: int, indent: str = "", break_long_words: bool = True) -> list[str]:
    """`text` in lines of at most `width` columns (as `cells` counts them: textwrap counts
    characters, and wide ones ran past the terminal), broken at its whitespace; the lines
    after the first start with `indent`. A word wider than a line is split over lines, or
    with `break_long_words` False put whole on a line of its own. At least one character
    goes on each line, so a line narrower than a wide character still ends."""
    lines: list[str] = []
    line: list[str] = []  # the words of the line being filled, and the blanks between them
    for chunk in _WORDS_AND_BLANKS.findall(text):
        if chunk[0] in _BLANKS:
            if line:  # (none at the start of a line)
                line.append(" " * len(chunk))
            continue
        while chunk:
            lead = indent if lines else ""
            room = width - cells(lead) - cells("".join(line))
            if cells(chunk) <= room:
                line.append(chunk)
                break
            if line:  # the word starts the next line
                lines.append(lead + "".join(line).rstrip(" "))
                line = []
            elif break_long_words:
                head = _head(chunk, room)
                lines.append(lead + head)
                chunk = chunk[len(head) :]
            else:
                lines.append(lead + chunk)
                break
    if line:
        lines.append((indent if lines else "") + "".join(line).rstrip(" "))
    return lines


_BLANKS = " \t\n\r\f\v"
"""Where lines may break, as textwrap's: a no-break space is not one."""
_WORDS_AND_BLANKS = re.compile(f"[^{_BLANKS}]+|[{_BLANKS}]+")


def _head(text: str, width: int) -> str:
    """The longest start of `text` within `width` columns; its first character at least.
    The combining characters after one stay with it (they take no column)."""
    used = 0
    for end, char in enumerate(text):
        used += _char_cells(char)
        if used > width and end > 0:
            return text[:end]
    return text


def table(
    term: Terminal,
    headers: Sequence[str],
    rows: Sequence[Sequence[Cell]],
    shrink: Sequence[int | tuple[int, int]] = (),
    min_width: int = 10,
    widest: Mapping[int, int] | None = None,
) -> list[str]:
    """Left-aligned columns two spaces apart, a bold header, no trailing blanks.

    The columns in `widest` (index: columns) are never wider than that, with …. A table
    wider than the terminal then cuts the columns in `shrink` (by index, first one first)
    down to `min_width` each, or down to the floor given with the index, `(index, floor)`
    (a column named twice is cut in two steps: `ls` cuts its command to 16 columns before
    NAME and INFO, and further after them); the other columns are always shown whole.
    """
    headers = [term.shown(clean(h)) for h in headers]  # a column may be named by data
    texts = [[term.shown(text) for text in row] for row in _texts(rows)]
    widths = _widths(headers, texts)
    for index, most in (widest or {}).items():
        widths[index] = min(widths[index], max(most, cells(headers[index])))
    excess = _span(widths) - term.width
    for step in shrink:
        if excess <= 0:
            break
        index, least = step if isinstance(step, tuple) else (step, min_width)
        floor = max(least, cells(headers[index]))
        cut_by = min(excess, max(0, widths[index] - floor))
        widths[index] -= cut_by
        excess -= cut_by
    styles = [[None if isinstance(c, str) else c[1] for c in row] for row in rows]
    lines = [_line(term, headers, ["bold"] * len(headers), widths)]
    lines += [_line(term, row, style, widths) for row, style in zip(texts, styles, strict=True)]
    return lines


def table_width(headers: Sequence[str], rows: Sequence[Sequence[Cell]]) -> int:
    """Columns a `table` of these rows takes, uncut: a caller with a narrower layout of the
    same data (`gpus`) chooses by it."""
    return _span(_widths([clean(h) for h in headers], _texts(rows)))


def least_widths(
    headers: Sequence[str], rows: Sequence[Sequence[Cell]], shrink: Sequence[int], least: int = 10
) -> list[int]:
    """Each column's width in a `table` of these rows at the least: a column of `shrink` cut
    as far as `table` cuts it (to `least`, or its header's width), the others whole. A caller
    whose table may not fit even so (`sweep status`, of many metrics) leaves columns out by
    them (the table's width: their sum, and GAP between)."""
    heads = [clean(h) for h in headers]
    widths = _widths(heads, _texts(rows))
    for index in shrink:
        widths[index] = min(widths[index], max(least, cells(heads[index])))
    return widths


def _texts(rows: Sequence[Sequence[Cell]]) -> list[list[str]]:
    return [[clean(c if isinstance(c, str) else c[0]) for c in row] for row in rows]


def _widths(headers: Sequence[str], texts: Sequence[Sequence[str]]) -> list[int]:
    widths = [cells(h) for h in headers]
    for row in texts:
        widths = [max(w, cells(t)) for w, t in zip(widths, row, strict=True)]
    return widths


def _span(widths: Sequence[int]) -> int:
    """Columns a table with columns this wide takes, gaps included."""
    return sum(widths) + len(GAP) * (len(widths) - 1)


def _line(
    term: Terminal, texts: Sequence[str], styles: Sequence[str | None], widths: Sequence[int]
) -> str:
    parts = []
    for text, style, width in zip(texts, styles, widths, strict=True):
        shown = cut(text, width)
        pad = " " * (width - cells(shown))
        parts.append((term.style(shown, style) if style else shown) + pad)
    return GAP.join(parts).rstrip(" ")
