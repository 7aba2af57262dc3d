"""The integers the queue stores: SQLite's INTEGER, 64 bits. A number of a request beyond them
(a job id, a priority, a count) is refused in one line naming its field, as the API says it:
`ids 99999999999999999999 is too large (at most 2**63 - 1)` (the CLI checks the job ids it
parses first, and says `job id N`: core/idspec.check_job_id)."""

from __future__ import annotations

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
