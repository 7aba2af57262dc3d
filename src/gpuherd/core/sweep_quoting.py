"""Each placeholder's value quoted for where it stands in the command template: bare
(`--lr {lr}`), inside double quotes (`--out "{run_dir}"`) or inside single quotes.

Users quote placeholders out of habit. A value shell-quoted inside the user's own quotes
kept its quotes (`--tag "{tag}"` passed `'hello world'`, quotes and all, and `"{run_dir}"` a
path with quotes in it whenever the folder name held a `~`), or split apart (`'{tag}'` gave
`''hello world''`: two arguments). So the template is read as sh reads it, once: quotes,
backslashes, comments, `$(...)` and backticks (whose inside is bare again), and each value
is escaped for its place, so that the program receives it unchanged wherever it stands.

Pure: no I/O. Part of the sweep core (sweep_names.render uses it).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import lru_cache

BARE, DOUBLE, SINGLE = "bare", "double", "single"
_SUB, _TICK, _COMMENT = "sub", "tick", "comment"
_WORD_START = frozenset(" \t\n;&|(){}")
"""After these (or at the start), `#` begins a comment."""
_DOUBLE_SPECIAL = re.compile(r'([\\"$`])')
"""What a backslash must escape inside double quotes (sh keeps every other character)."""


def quote_for(place: str, text: str) -> str:
    """`text` as sh must see it at `place` to pass it on unchanged, as one argument."""
    if place == DOUBLE:
        return _DOUBLE_SPECIAL.sub(r"\\\1", text)
    if place == SINGLE:
        return text.replace("'", "'\\''")  # end the quotes, an escaped quote, quote again
    return shlex.quote(text)


@lru_cache(maxsize=64)
def places(literals: tuple[str, ...]) -> tuple[str, ...]:
    """Where the placeholder after each literal piece of a template stands (BARE, DOUBLE or
    SINGLE). A placeholder's rendering leaves the quoting as it found it, so the pieces are
    read as one text. (Kept per template: a sweep renders it for every point.)"""
    reader = _Reader()
    found = []
    for literal in literals:
        reader.read(literal)
        found.append(reader.place())
        reader.prev = "x"  # a placeholder is a word's text: a `#` after it is no comment
    return tuple(found)


@dataclass
class _Frame:
    kind: str
    depth: int = 0
    """In a $( ): the parentheses open in it, its own included."""


class _Reader:
    """The stack of quoting contexts sh is in, read a character at a time."""

    def __init__(self) -> None:
        self.stack = [_Frame(BARE)]
        self.prev = " "
        self.escaped = False

    def place(self) -> str:
        kind = self.stack[-1].kind
        return kind if kind in (DOUBLE, SINGLE) else BARE

    def read(self, text: str) -> None:
        i = 0
        while i < len(text):
            i += self._step(text, i)

    def _step(self, text: str, i: int) -> int:
        """Read the character at `i` (and the one after, for `$(`); how many were read."""
        char, nxt = text[i], text[i + 1 : i + 2]
        kind = self.stack[-1].kind
        prev, self.prev = self.prev, char
        if self.escaped:
            self.escaped = False
        elif kind in (_COMMENT, SINGLE):  # only its end means anything
            if char == ("\n" if kind == _COMMENT else "'"):
                self.stack.pop()
        elif char == "\\":
            self.escaped = True
        elif char == "$" and nxt == "(":
            self.stack.append(_Frame(_SUB, 1))
            self.prev = "("
            return 2
        elif char == "`":
            if kind == _TICK:
                self.stack.pop()
            else:
                self.stack.append(_Frame(_TICK))
        elif kind == DOUBLE:
            if char == '"':
                self.stack.pop()
        else:
            self._bare(char, prev)
        return 1

    def _bare(self, char: str, prev: str) -> None:
        """Bare, or the inside of a $( ) or backticks: sh reads it as a command of its own."""
        frame = self.stack[-1]
        if char == "'":
            self.stack.append(_Frame(SINGLE))
        elif char == '"':
            self.stack.append(_Frame(DOUBLE))
        elif char == "#" and prev in _WORD_START:
            self.stack.append(_Frame(_COMMENT))
        elif frame.kind == _SUB and char in "()":
            frame.depth += 1 if char == "(" else -1
            if frame.depth == 0:
                self.stack.pop()
