"""The integers the queue stores: SQLite's INTEGER, 64 bits. A number of a request beyond them
(a job id, a priority, a count) is refused in one line naming its field, as the API says it:
`ids 99999999999999999999 is too large (at most 2**63 - 1)` (the CLI checks the job ids it
parses first, and says `job id N`: core/idspec.check_job_id)."""

from __future__ import annotations

import re

LARGEST = 2**63 - 1
"""The largest number an INTEGER column holds."""
LARGEST_SAID = "2**63 - 1"
"""LARGEST as messages say it (its 19 digits, 9223372036854775807, read as noise)."""
SMALLEST = -(2**63)
TOO_LARGE = f"is too large (at most {LARGEST_SAID})"
TOO_SMALL = "is too small (at least -2**63)"


class OutOfRange(OverflowError):
    """A number of a request past 64 bits, found before any of the request is carried out.

    An OverflowError, as SQLite's own for such a number: the API answers both alike (422 and
    the line, api/app.py). Not a ValueError: the dashboard's forms show a ValueError (a
    mistyped field) as their message and go on, and this one must stop the request there."""


def beyond(value: float) -> str:
    """Why `value`, outside the range, cannot be stored: too large, or too small."""
    return TOO_LARGE if value > 0 else TOO_SMALL


def holds(value: int) -> bool:
    """Whether an INTEGER column can hold `value` (no job has an id that it cannot)."""
    return SMALLEST <= value <= LARGEST


def fits(name: str, value: int) -> int:
    """`value` if the queue can store it; else OutOfRange, naming it by `name`."""
    if not holds(value):
        raise OutOfRange(f"{name} {value} {beyond(value)}")
    return value


MOST_DIGITS = 4300
"""The most digits int() reads from text (Python's limit, sys.get_int_max_str_digits()): past
it int() raised `ValueError: Exceeds the limit (4300 digits) for integer string conversion
... use sys.set_int_max_str_digits()`, a traceback in the CLI and the API's 422 `the body's
JSON nests lists or objects too deeply`. `whole` reads no such number."""


class LongNumber(int):
    """A whole number written with more digits than int() reads (MOST_DIGITS), not read: its
    value is past every bound a number is checked against (10**30, with its sign), its text is
    cut short where a line shows it (`99999...99999 (5,000 digits)`). It is only ever refused:
    as too large by the check that refuses one of 20 digits, in the same words."""

    shown: str

    def __new__(cls, sign: str, digits: str) -> LongNumber:
        number = super().__new__(cls, -(10**30) if sign == "-" else 10**30)
        number.shown = f"{sign}{digits[:5]}...{digits[-5:]} ({len(digits):,} digits)"
        return number

    def __str__(self) -> str:
        return self.shown

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return self.shown


WHOLE_TEXT = re.compile(r"[+-]?\d+", re.ASCII)
"""A whole number's text (blanks around it stripped) as a count is taken, `submit --retries`
and `config set retries` alike: ASCII, as int() alone took other scripts' digits (`٤`) and
`1_000`, which the job ids refuse (core/idspec.py) and no one means."""


def whole(text: str) -> int:
    """int(text) of ASCII digits after a sign (what each caller checked first), where one of
    more than MOST_DIGITS digits (leading zeros aside) is a LongNumber, for the caller's check
    to refuse as too large. The one place the CLI, the API's JSON and the dashboard's forms
    turn a whole number's text into a number (the API's path and query: pydantic's, said alike
    by api/numbers.too_large_problem)."""
    stripped = text.strip()
    sign = stripped[:1] if stripped[:1] in ("+", "-") else ""
    digits = stripped[len(sign) :]
    if len(digits) > MOST_DIGITS and digits.isascii() and digits.isdigit():
        significant = digits.lstrip("0")
        if len(significant) > MOST_DIGITS:
            return LongNumber(sign.replace("+", ""), significant)
        return int(sign + (significant or "0"))
    return int(text)
