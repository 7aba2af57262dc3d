"""Parsing a JSON file that a person or a program wrote, with one line that says what is
wrong when it is not JSON: where the parser stopped, in words, rather than Python's own
("Expecting value: line 1 column 11 (char 10)", or a codec's name the file was never in)."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

MAX_DEPTH = 100
"""Levels of lists and objects inside each other a file may hold. json recurses once a level,
and so does what reads the value next (a sweep's table, the daemon's answer, the client's
reading of it), each deeper in a stack of some 1,000 calls: a metrics.json nested 2,000 deep
raised RecursionError, and one nested 950 deep would have, further on. No file gpuherd reads
nests more than a few levels."""


class NotJson(ValueError):
    """A file that is not valid JSON: says where the parser stopped; `cut_off` when that is
    its end (a value begun and not ended: a write cut short, or still going on)."""

    def __init__(self, message: str, cut_off: bool = False) -> None:
        super().__init__(message)
        self.cut_off = cut_off


class PastParser(NotJson):
    """Valid JSON, maybe, but more than Python reads: lists and objects nested more than
    MAX_DEPTH levels, a number of more digits than Python converts. The message says what to
    write instead."""


class NotText(NotJson):
    """A file that is not UTF-8 text (nor UTF-16 or 32, which JSON may be in): binary data,
    or text in another encoding; or text holding a lone surrogate (LONE_SURROGATE)."""


def parse_json(data: bytes | str) -> Any:
    """The value `data` holds; raises NotText, PastParser or NotJson."""
    try:
        # As json.loads decodes bytes (UTF-8, or UTF-16 or 32 as its first bytes say), with
        # "surrogatepass": the UTF-8 bytes of a surrogate are one too. Decoded here, the text
        # is looked through for them below.
        if isinstance(data, bytes):
            data = data.decode(json.detect_encoding(data), "surrogatepass")
        value = json.loads(data)
    except RecursionError:  # (before, it went through every caller: `internal error`)
        raise PastParser(TOO_DEEP) from None
    except UnicodeDecodeError as exc:
        # Python's own words named the codec it guessed ("'utf-16-le' codec can't decode
        # bytes in position 4-5"), which the file was never meant to be in.
        raise NotText(f"not UTF-8 text (at byte {exc.start:,}); write it as UTF-8 JSON") from None
    except ValueError as exc:  # JSONDecodeError
        raise _not_json(exc) from None
    if _nests(data) and _too_deep(value):
        raise PastParser(TOO_DEEP)
    if _MAY_HOLD_SURROGATE.search(data) and (lone := _lone_surrogate(value)) is not None:
        raise NotText(LONE_SURROGATE.format(f"\\u{ord(lone):04x}"))
    return value


LONE_SURROGATE = (
    "holds {}, a lone surrogate (half of a UTF-16 pair), which is no character; write its "
    "text as UTF-8"
)
"""Why a text holding a lone surrogate, which JSON's `\\udc80` escape gives (as json.dumps
writes a name Python decoded with "surrogateescape"), is refused: valid JSON, but no UTF-8
encodes it, so no answer of the daemon holding it could be written. One in a point's
metrics.json failed every view of its whole sweep (`internal error
(PydanticSerializationError ...)`)."""
_MAY_HOLD_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")
"""A surrogate's escape (or one of a valid pair), or a surrogate itself: most text holds
neither, and its value is not walked."""
_SURROGATE = re.compile("[\ud800-\udfff]")


TOO_DEEP = (
    f"lists and objects nested more than {MAX_DEPTH} levels inside each other; nest them less"
)


def too_many_digits(exc: ValueError) -> str | None:
    """What to write instead of a number of more digits than Python converts, which JSON, YAML
    and TOML take, where `exc` is the error it gave (None for other errors): its own words,
    "Exceeds the limit (4300 digits) for integer string conversion ... use
    sys.set_int_max_str_digits() to increase the limit", no user of the daemon can follow.
    The sweep-file reader's wording (sweepfile_text.py), for any file read."""
    if "integer string conversion" not in str(exc):
        return None
    digits = sys.get_int_max_str_digits()
    return f"a number of more than {digits} digits: quote it to keep it as text"


def _nests(data: bytes | str) -> bool:
    """Whether `data` may nest more than MAX_DEPTH levels: holds that many brackets at least
    (a count in C; most files hold a few, and are not walked)."""
    if isinstance(data, bytes):
        return data.count(b"[") + data.count(b"{") > MAX_DEPTH
    return data.count("[") + data.count("{") > MAX_DEPTH


def _too_deep(value: Any) -> bool:
    """Whether `value` nests lists and objects more than MAX_DEPTH levels: level by level, not
    by recursion, which is what must not go that deep."""
    level = [value]
    for _ in range(MAX_DEPTH):
        level = [
            item
            for held in level
            if isinstance(held, list | dict)
            for item in (held.values() if isinstance(held, dict) else held)
        ]
        if not level:
            return False
    return any(isinstance(held, list | dict) for held in level)


def _lone_surrogate(value: Any) -> str | None:
    """A lone surrogate one of `value`'s texts holds (a key or a value), else None; walked
    with a list, not by recursion (as _too_deep)."""
    left = [value]
    while left:
        held = left.pop()
        if isinstance(held, str):
            if found := _SURROGATE.search(held):
                return found.group()
        elif isinstance(held, dict):
            left += held
            left += held.values()
        elif isinstance(held, list):
            left += held
    return None


def _not_json(exc: ValueError) -> NotJson:
    """Why a file is not JSON, with the line and column where the parser gave up: at its end,
    that the file stops mid-value (json's "Expecting ',' delimiter" there named what would
    have come next, not what is wrong)."""
    if not isinstance(exc, json.JSONDecodeError):
        said = too_many_digits(exc)
        return PastParser(said) if said else NotJson(f"not valid JSON: {exc}")
    # (a string never closed ran to the end: json names where it began, "Unterminated
    # string starting at", cut short of its place; a line break in one is another error)
    if exc.msg.startswith("Unterminated string"):
        exc = json.JSONDecodeError(exc.msg, exc.doc, len(exc.doc.rstrip()))
    if exc.doc[exc.pos :].strip() == "":
        where = f"line {exc.lineno}, column {exc.colno}"
        return NotJson(
            f"not valid JSON: it stops mid-value at {where} (cut off, or still being written?)",
            True,
        )
    said = exc.msg.removesuffix(" at")  # (json's "Invalid control character at" + where)
    return NotJson(f"not valid JSON at line {exc.lineno}, column {exc.colno}: {said}")
