"""Parsing a JSON file that a person or a program wrote, with one line that says what is
wrong when it is not JSON: where the parser stopped, in words, rather than Python's own
("Expecting value: line 1 column 11 (char 10)", or a codec's name the file was never in)."""

from __future__ import annotations

import json
from typing import Any


class NotJson(ValueError):
    """A file that is not valid JSON: says where the parser stopped; `cut_off` when that is
    its end (a value begun and not ended: a write cut short, or still going on)."""

    def __init__(self, message: str, cut_off: bool = False) -> None:
        super().__init__(message)
        self.cut_off = cut_off


class NotText(NotJson):
    """A file that is not UTF-8 text (nor UTF-16 or 32, which JSON may be in): binary data,
    or text in another encoding."""


def parse_json(data: bytes | str) -> Any:
    """The value `data` holds; raises NotText or NotJson."""
    try:
        return json.loads(data)
    except UnicodeDecodeError as exc:
        # Python's own words named the codec it guessed ("'utf-16-le' codec can't decode
        # bytes in position 4-5"), which the file was never meant to be in.
        raise NotText(f"not UTF-8 text (at byte {exc.start:,}); write it as UTF-8 JSON") from None
    except ValueError as exc:  # JSONDecodeError
        raise _not_json(exc) from None


def _not_json(exc: ValueError) -> NotJson:
    """Why a file is not JSON, with the line and column where the parser gave up: at its end,
    that the file stops mid-value (json's "Expecting ',' delimiter" there named what would
    have come next, not what is wrong)."""
    if not isinstance(exc, json.JSONDecodeError):
        return NotJson(f"not valid JSON: {exc}")
    if exc.doc[exc.pos :].strip() == "":
        where = f"line {exc.lineno}, column {exc.colno}"
        return NotJson(
            f"not valid JSON: it stops mid-value at {where} (cut off, or still being written?)",
            True,
        )
    return NotJson(f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")
