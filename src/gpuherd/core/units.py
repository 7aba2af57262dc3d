"""Sizes and durations as people type them ("24GiB", "1h30m") and as gpuherd prints them."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import TypeVar

_T = TypeVar("_T")

_SIZE_UNITS: dict[str, int] = {
    "": 1,
    "b": 1,
    "k": 2**10,
    "kib": 2**10,
    "kb": 10**3,
    "m": 2**20,
    "mib": 2**20,
    "mb": 10**6,
    "g": 2**30,
    "gib": 2**30,
    "gb": 10**9,
    "t": 2**40,
    "tib": 2**40,
    "tb": 10**12,
}
_SIZE_HELP = "use bytes or a value like 512MiB, 24GiB, 1.5GiB (GB = 10**9 bytes, GiB = 2**30)"

_FORMAT_UNITS = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))

_DURATION_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
_NUMBER = r"(\d+(?:\.\d*)?|\.\d+)"
_DURATION_HELP = (
    "use a number of seconds or a value like 90s, 10m, 2h, 1h30m, 2:00:00 ([D-]HH:MM:SS or MM:SS)"
)


@cache
def _size_re() -> re.Pattern[str]:
    # Compiled on first use, not at import: `gpuherd ls` and `run` parse no size.
    return re.compile(r"([+-]?)\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)")


@cache
def _clock_re() -> re.Pattern[str]:
    # Slurm's --time forms: MM:SS, HH:MM:SS, D-HH:MM:SS (whole numbers only).
    return re.compile(r"(?:(\d+)-)?(\d+)(?::(\d{1,2}))?:(\d{1,2})")


def _clock_seconds(text: str, compact: str) -> int | None:
    """Seconds in a clock form ("90:00", "2:00:00", "1-12:00:00"), None if it is not one."""
    match = _clock_re().fullmatch(compact)
    if match is None:
        return None
    days, first, middle, last = match.groups()
    if days is not None and middle is None:  # "1-02:00" is not a form gpuherd reads
        return None
    fields = [first, last] if middle is None else [first, middle, last]
    if any(int(field) >= 60 for field in fields[1:]):
        raise ValueError(
            f"invalid duration {text!r}: minutes and seconds must be below 60; {_DURATION_HELP}"
        )
    if days is not None and int(first) >= 24:
        raise ValueError(
            f"invalid duration {text!r}: hours after a day count must be below 24; {_DURATION_HELP}"
        )
    seconds = 0
    for field in fields:
        seconds = seconds * 60 + int(field)
    return seconds + int(days or 0) * 86400


@cache
def _duration_re() -> re.Pattern[str]:
    # Compiled on first use, as _size_re. Units in falling order, each at most once, so
    # "30m1h" or "1h1h" is rejected as a typo.
    return re.compile("".join(f"(?:{_NUMBER}{unit})?" for unit, _ in _DURATION_UNITS))


def _refuse_other_digits(kind: str, text: str) -> None:
    """Refuse a size or a duration in other scripts' digits (`١٠GiB`, `٢h`), naming it in
    ASCII ones: a regex's \\d, float() and Fraction() read `١٠` as 10, where every other number
    gpuherd reads is ASCII (core/int64.WHOLE_TEXT, the job ids)."""
    if text.isascii():
        return
    import unicodedata  # (only for text beyond ASCII)

    written = "".join(str(unicodedata.decimal(char, char)) for char in text.strip())
    if written != text.strip():
        raise ValueError(f"invalid {kind} {text!r}: write its digits as 0-9 ({written!r})")


def parse_size(text: str, *, allow_zero: bool = False) -> int:
    """Bytes in `text`: "24GiB", "24G" and "24 gib" are 24 * 2**30; "24GB" is 24 * 10**9.

    A plain integer is bytes. Zero is rejected unless `allow_zero` (for "memory used").
    """
    _refuse_other_digits("size", text)
    match = _size_re().fullmatch(text.strip().lower())
    if match is None or match.group(3) not in _SIZE_UNITS:
        raise ValueError(f"invalid size {text!r}: {_SIZE_HELP}")
    sign, number, unit = match.groups()
    if not unit and "." in number:
        raise ValueError(
            f"invalid size {text!r}: a size without a unit is whole bytes; {_SIZE_HELP}"
        )
    # Fraction, not float: "1.1TiB" must give the same bytes on every machine. (Imported here:
    # fractions loads decimal, which `gpuherd ls` does not need.)
    from fractions import Fraction

    value = round(Fraction(number) * _SIZE_UNITS[unit])
    if sign == "-" or value < 0 or (value == 0 and not allow_zero):
        limit = "zero or more" if allow_zero else "greater than zero"
        raise ValueError(f"invalid size {text!r}: must be {limit}; {_SIZE_HELP}")
    return value


BARE_LEAST = 2**20
"""The least memory request (--mem, --ram) taken as a number without a unit: below it, bytes
are never meant (`--mem 10` for 10 GiB asked for 10 bytes, and any number of such jobs shared
a GPU). Scripts that pass byte counts pass far more."""


class MissingUnit(ValueError):
    """A memory request without a unit under BARE_LEAST: `number` is what was given."""

    def __init__(self, number: str) -> None:
        # The unit likely meant: `--mem 80` is 80 GiB, but `mem=1048575` was offered as
        # 1048575GiB (a PiB), where a count of thousands is more likely MiB.
        self.example = f"{number}{'GiB' if int(number) < 1024 else 'MiB'}"
        super().__init__(f"{number} is {number} bytes: give a unit, e.g. {self.example}")
        self.number = number


def parse_memory(text: str) -> int:
    """Bytes a job asks for (--mem, --ram): as parse_size, but MissingUnit for a number
    without a unit under BARE_LEAST (1 MiB)."""
    value = parse_size(text)
    number = text.strip()
    if value < BARE_LEAST and number.isdigit():
        raise MissingUnit(number)
    return value


def memory_amount(value: int | str) -> int:
    """parse_memory for text; a whole number is bytes, refused (MissingUnit) under
    BARE_LEAST as a bare number in text is: `mem: 10` in a sweep file, `mem=10` in Python."""
    if isinstance(value, str):
        return parse_memory(value)
    if 0 < value < BARE_LEAST:
        raise MissingUnit(str(value))
    return value


def format_size(n: int) -> str:
    """ "24.0 GiB", "512.0 MiB", "512 B": binary units, one decimal."""
    if n < 0:
        return "-" + format_size(-n)
    for name, factor in _FORMAT_UNITS:
        # Also move up where the unit below would round to "1024.0": 2**20 - 1 is "1.0 MiB".
        if n >= factor or round(n / (factor // 1024), 1) >= 1024:
            return f"{n / factor:.1f} {name}"
    return f"{n} B"


def format_size_down(n: int) -> str:
    """A limit of `n` bytes as format_size says it, but never more than the limit once parsed
    back (`at most 23.9 GiB`: a 24564 MiB GPU is "24.0 GiB", and --mem 24GiB does not fit on
    it). parse_size rounds to whole bytes, so 21.6GiB still fits under 21.6 GiB less 0.4 B."""
    for name, factor in _FORMAT_UNITS:
        if n >= factor:
            tenths = (n * 10 + 4) // factor  # the most whose bytes round to no more than n
            return f"{tenths / 10:.1f} {name}"
    return f"{max(n, 0)} B"


LONGEST = 100 * 365 * 86400.0
"""The longest duration anything takes (a timeout, a grace period): longer ones are typos,
and would overflow what prints them."""


def parse_duration(text: str, *, allow_zero: bool = False) -> float:
    """Seconds in `text`: "90", "90s", "1.5m", "2h", "1d", "1h30m", "2h30m10s", and Slurm's
    clock forms "MM:SS", "HH:MM:SS", "D-HH:MM:SS" ("90:00", "2:00:00", "1-12:00:00"). Zero
    is rejected unless `allow_zero` (a grace chosen at a stop: parse_grace)."""
    _refuse_other_digits("duration", text)
    compact = re.sub(r"\s+", "", text.lower())
    if compact.startswith("-"):
        raise ValueError(f"invalid duration {text!r}: must be greater than zero; {_DURATION_HELP}")
    plain = re.fullmatch(_NUMBER, compact)
    clock = None if plain else _clock_seconds(text, compact)
    match = None if plain or clock is not None else _duration_re().fullmatch(compact)
    seconds: float
    if plain is not None:
        seconds = float(plain.group(1))
    elif clock is not None:
        # Compared as an int before float(): "9...9:00" has more digits than a float holds.
        if clock > LONGEST:
            raise ValueError(f"invalid duration {text!r}: longer than 100 years")
        seconds = float(clock)
    elif match is not None and compact:
        seconds = sum(
            float(part) * factor
            for part, (_, factor) in zip(match.groups(), _DURATION_UNITS, strict=True)
            if part is not None
        )
    else:
        raise ValueError(f"invalid duration {text!r}: {_DURATION_HELP}")
    if seconds <= 0 and not allow_zero:  # (never below: a "-" is refused above)
        raise ValueError(f"invalid duration {text!r}: must be greater than zero; {_DURATION_HELP}")
    if not seconds <= LONGEST:  # inf too
        raise ValueError(f"invalid duration {text!r}: longer than 100 years")
    return seconds


def parse_grace(text: str) -> float:
    """A grace chosen at a stop (`kill --grace`): a duration as parse_duration reads it, or
    0 ("0", "0s", "0m"): the SIGKILL at once, which a stop may ask (a timeout of 0 is a
    typo)."""
    if re.sub(r"\s+", "", text).startswith("-"):
        raise ValueError(
            f"invalid grace {text!r}: must be 0 (SIGKILL at once) or more; {_DURATION_HELP}"
        )
    return parse_duration(text, allow_zero=True)


def format_duration(seconds: float) -> str:
    """ "41.2s", "3m05s", "2h01m", "3d04h": two fields at most, the smaller one truncated."""
    if not math.isfinite(seconds):
        raise ValueError(f"cannot format duration {seconds!r}: not a finite number")
    if seconds < 0:
        return "-" + format_duration(-seconds)
    # Compare after rounding, so 59.97 prints as "1m00s" and never as "60.0s".
    if round(seconds, 1) < 60:
        return f"{seconds:.1f}s"
    total = round(seconds)
    if total < 3600:
        return f"{total // 60}m{total % 60:02d}s"
    if total < 86400:
        return f"{total // 3600}h{total % 3600 // 60:02d}m"
    return f"{total // 86400}d{total % 86400 // 3600:02d}h"


def format_given(seconds: float) -> str:
    """A duration someone gave (`--retry-delay 30s`) as one is typed: `30s`, `5m`, `1h30m`,
    `2.5s`. format_duration's `30.0s` and `1h00m` suit times measured, not times chosen."""
    whole = round(seconds) if math.isfinite(seconds) else -1
    if whole != seconds or whole <= 0:  # a fraction, 0, a negative
        return f"{seconds:g}s" if 0 <= seconds < 60 else format_duration(seconds)
    parts = []
    for unit, size in _DURATION_UNITS:
        count, whole = divmod(whole, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)


def plural(n: int, word: str) -> str:
    """`1 GPU`, `2 GPUs`, `1,200 jobs`: a count with its noun (regular plurals only), grouped
    by thousands as the dashboard writes counts (an id is a name, never written so)."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def and_list(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def not_a_choice(name: str, given: object, choices: Sequence[str]) -> str | None:
    """`order 'fastest': give 'given' or 'longest-first'`: what a Python keyword or an API
    field says of a value not among its `choices` (the CLI's click.Choice refuses it first);
    None for one of them."""
    if isinstance(given, str) and given in choices:
        return None
    return f"{name} {given!r}: give {' or '.join(map(repr, choices))}"


def first_named(items: Sequence[_T], name: Callable[[_T], str], most: int = 3) -> str:
    """The first `most` of `items`, each as `name` says it, joined by `; `, and how many more
    there are (`a; b; c; 4 more`): a line that names some of thousands of points."""
    named = "; ".join(name(item) for item in items[:most])
    return named + (f"; {len(items) - most} more" if len(items) > most else "")
