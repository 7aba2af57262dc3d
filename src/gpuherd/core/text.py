"""Text from jobs, hooks and settings made safe to show, on a terminal or in a log file.

Pure, and shared by the CLI's tables (one line per value) and the daemon's hooks.log (a
hook's output, its lines kept): one set of escape sequences is dropped everywhere, so a
colour, a cursor move or a terminal title (OSC) stored in a name or printed by a hook is
never replayed by `gpuherd ls` or `cat hooks.log`. gpuherd's own error and warning lines
show them instead (said_line): there they are part of a value the user typed, and the line
names that value.
"""

from __future__ import annotations

import re
import shlex

NEWLINE = "⏎"
"""How a line break shows where a value must stay on one line (a multi-line on-end hook)."""

BIDI_CONTROLS = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
"""Characters that reorder the text around them: "rtl", U+202E, "evil" reads "rtllive"."""
_BIDI = {code: f"<U+{code:04X}>" for code in BIDI_CONTROLS}
_SEPARATORS = (0x2028, 0x2029)
"""Unicode's line and paragraph separators: line breaks to a terminal or an editor, though no
control character (a name holding one is refused: submission_text.control_in)."""
_TO_SPACE = {code: " " for code in [*range(0x20), *range(0x7F, 0xA0), *_SEPARATORS]} | _BIDI

# CSI (colours, cursor moves), OSC (titles, hyperlinks; ended by BEL or ST, or by the end of
# the text) and any other ESC + one character.
_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|.?)", re.DOTALL)
# Control characters but tab and newline (C1 too: a terminal may act on them).
_LINE_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def ascii_digits(text: str) -> bool:
    """Whether `text` is ASCII digits alone, a number int() reads: `²` and `٣` are digits to
    str.isdigit(), and int() refused them (a traceback, or `invalid literal for int()`)."""
    return text.isascii() and text.isdigit()


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
    return clean(_breaks_shown(text))


def _breaks_shown(text: str) -> str:
    return text.replace("\r\n", NEWLINE).replace("\n", NEWLINE)


_ESCAPED_CONTROLS = {
    code: repr(chr(code))[1:-1] for code in [*range(0x20), *range(0x7F, 0xA0), *_SEPARATORS]
} | _BIDI
"""Control characters as Python's repr shows them (`\\x1b`, `\\t`, `\\x85`), bidi controls as
`<U+202E>`."""


def said_line(text: str) -> str:
    """A line gpuherd says itself (an error, a warning) on one line, safe to print, showing
    the values it quotes as they are: line breaks as ⏎, escape sequences and other control
    characters as repr shows them (`'re\\x1b[31mtries'`, as a value quoted with !r is), bidi
    controls as `<U+202E>`. Not clean()'s: a sequence dropped, `config set
    $'re\\e[31mtries'` was refused as an unknown setting 'retries', and a `mkdir -p` advised
    named another folder than the one typed."""
    return _breaks_shown(text).translate(_ESCAPED_CONTROLS)


_CARETS = {code: f"^{chr(code ^ 0x40)}" for code in [*range(0x20), 0x7F] if code != 0x09}
"""C0 controls and DEL as `cat -v` and `less` show them: NUL ^@, ^A, ..., ESC ^[, DEL ^?
(a tab is expanded, after them: to the tab stop where they leave it)."""
_VISIBLE = _CARETS | {code: f"<U+{code:04X}>" for code in range(0x80, 0xA0)} | _BIDI


def visible(text: str) -> str:
    """A line a job wrote (a failure's log tail, a --live line), safe to print and shown as
    it is: escape sequences (colours) dropped, tabs as spaces to the next tab stop, other
    control characters visible: `^@` for a NUL (as spaces, a job that printed NULs read as
    one that printed blanks), `<U+0085>` for a C1 one, as a bidi control."""
    return drop_escapes(text).translate(_VISIBLE).expandtabs()


def visible_command(command: str) -> str:
    """A command on one line, shown as it is: its line breaks as ⏎ (as a listing shows a
    multi-line command), its other control characters as visible() shows a log's: ^A, not
    the blank that read as a space typed in the command."""
    return visible(command.replace("\r\n", NEWLINE).replace("\n", NEWLINE))


_NOT_ONE_LINE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\udc80-\udcff]"
)
"""What a shell word cannot show as it is on one line: controls (a newline), bidi controls,
and the bytes of a path that are not UTF-8 (os.fsdecode's surrogates)."""


_SHELL_SPECIAL = re.compile(r"[^\w@%+=:,./-]")
"""shlex's test of a word that needs quotes, but for letters beyond ASCII (`/home/josé`)."""


def shell_word(path: str) -> str:
    """`path` as one word that bash and zsh read back as it is, on one line: bare when it is
    plain (letters, digits, `/._-`...), in single quotes when it holds blanks or quotes
    (shlex), as `$'...'` when it holds control characters: single quotes would keep a
    newline, and the path span two lines."""
    if not _NOT_ONE_LINE.search(path):
        return shlex.quote(path) if _SHELL_SPECIAL.search(path) or not path else path
    return "$'" + "".join(_escaped(char) for char in path) + "'"


_ESCAPED = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escaped(char: str) -> str:
    """One character of a `$'...'` word."""
    if char in _ESCAPED:
        return _ESCAPED[char]
    if not _NOT_ONE_LINE.match(char):
        return char
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8: that byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"
