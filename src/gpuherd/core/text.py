"""Text from jobs, hooks and settings made safe to show, on a terminal or in a log file.

Pure, and shared by the CLI's tables (one line per value) and the daemon's hooks.log (a
hook's output, its lines kept): one set of escape sequences is dropped everywhere, so a
colour, a cursor move or a terminal title (OSC) stored in a name or printed by a hook is
never replayed by `gpuherd ls` or `cat hooks.log`.
"""

from __future__ import annotations

import re

NEWLINE = "⏎"
"""How a line break shows where a value must stay on one line (a multi-line on-end hook)."""

BIDI_CONTROLS = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
"""Characters that reorder the text around them: "rtl", U+202E, "evil" reads "rtllive"."""
_BIDI = {code: f"<U+{code:04X}>" for code in BIDI_CONTROLS}
_TO_SPACE = {code: " " for code in [*range(0x20), *range(0x7F, 0xA0)]} | _BIDI

# CSI (colours, cursor moves), OSC (titles, hyperlinks; ended by BEL or ST, or by the end of
# the text) and any other ESC + one character.
_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|.?)", re.DOTALL)
# Control characters but tab and newline (C1 too: a terminal may act on them).
_LINE_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def drop_escapes(text: str) -> str:
    """`text` without its escape sequences."""
    return _ESCAPES.sub("", text) if "\x1b" in text else text


def clean(text: str) -> str:
    """`text` safe to print on one line: escape sequences dropped, other control characters
    (newlines too; C1 ones, which some terminals act on) as spaces, bidi controls shown as
    `<U+202E>` (what is shown is what is stored, in its order)."""
    return drop_escapes(text).translate(_TO_SPACE)


def clean_lines(text: str) -> str:
    """`text` safe to write to a log read with `cat`: escape sequences dropped, line breaks
    (CR LF, CR) as newlines, tabs kept, other control characters as `?`."""
    text = drop_escapes(text).replace("\r\n", "\n")
    return _LINE_CONTROLS.sub(lambda m: "\n" if m.group() == "\r" else "?", text)


def show_bidi(text: str) -> str:
    """`text` with its bidi controls shown as `<U+202E>`, nothing else changed (the
    dashboard, whose templates escape the rest)."""
    return text.translate(_BIDI)


def one_line(text: str) -> str:
    """clean(), with line breaks (LF, CR LF) as ⏎: a multi-line value (an on-end hook) on
    the one line of a table or of hooks.log's header."""
    return clean(text.replace("\r\n", NEWLINE).replace("\n", NEWLINE))
