"""`--begin` times: when a job may start, as a person writes it and reads it back; and the
past moments `ls --since/--until` take (parse_since), by the same rules where they can be.

Pure: the current time is passed in; times of day are local (the machine's time zone), and
a moment is said in the zone of whoever asked (SAID_IN) where that is not this process's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timedelta, tzinfo

from gpuherd.core.units import parse_duration

SAID_IN: ContextVar[tzinfo | None] = ContextVar("said_in", default=None)
"""The zone moments are said and read in; None: this process's. The daemon sets it to the
client's for the request it answers (api/askers_zone.py): the daemon of a systemd unit runs
in UTC, its user's shell in TZ=Europe/Berlin, who typed `edit 7 --begin 23:30` and read back
`begin none -> 22:30`; the dashboard's `23:30` was the daemon's too."""

_HELP = (
    "use now, +DURATION (+30m, +2h), a time of day (23:30) or a date and time (2026-11-26T02:00)"
)
_ZERO = r"(0+(\.0*)?|\.0+)[dhms]?"
"""A duration of nothing (+0s, +0): a --begin of now, where parse_duration wants more."""
LATEST = datetime(9999, 12, 30).timestamp()  # a day short: any time zone still shows it
"""The last moment a --begin may name: later ones cannot be shown as a date."""
LATEST_SAID = "9999-12-30 00:00"
"""LATEST as a refusal names it: `after the year 9999` was said of 9999-12-31, in that year."""
BEGIN_RANGE = "a time (epoch seconds) from 1970 to the year 9999"
"""What a `begin` must be, as the API's refusals say it (one before 1970 was told `before the
year 9999`, which it is)."""


def parse_begin(text: str, now: float, name: str = "time") -> float:
    """Epoch seconds of `text`: "+2h" (from now; Slurm's "now+2hours" too), "23:30" (its
    next occurrence: today, or tomorrow once it is past), "2026-11-26" (that midnight),
    "2026-11-26T02:00" or "2026-11-26 02:00" (an explicit offset such as "+01:00" is
    honoured), or "now".
    Errors name the value as `name` (`invalid time 'x'`, which the CLI puts after its flag;
    Python's keyword; the dashboard's box)."""
    value = _from_slurm(text.strip())
    if value == "now":
        return now
    if value.startswith("+"):
        if re.fullmatch(_ZERO, value[1:].strip().lower()):
            return now
        try:
            seconds = parse_duration(value[1:])
        except ValueError as exc:
            far = str(exc).endswith("longer than 100 years")
            raise ValueError(
                f"invalid {name} {text!r}: " + ("more than 100 years away" if far else _HELP)
            ) from None
        return now + seconds
    moment = _time_of_day(value, now, f"invalid {name} {text!r}", _HELP)
    if moment is not None:
        if local_timestamp(moment) <= now:
            moment += timedelta(days=1)
        return local_timestamp(moment)
    return _date_time(value, f"invalid {name} {text!r}", _HELP)


_SINCE_HELP = (
    "use a time ago (2d, 12h, 30m), today, yesterday, a time of day (23:30) or a date"
    " (2026-11-20, 2026-11-20T14:00)"
)
_AGO = re.compile(r"-?\s*(\d+(\.\d*)?|\.\d+)\s*[a-z].*")
"""A duration with its unit (2d, 1h30m), maybe after a minus: that long ago. A bare number
is no duration here: `--since 20261120` meant a date, not 234 days ago."""


def parse_since(text: str, now: float, name: str = "time") -> float:
    """Epoch seconds of a past moment, as `ls --since` takes it: "2d", "-2d" or Slurm's
    "now-2days" (that long ago), "today" and "yesterday" (their midnight), "23:30" (its last
    occurrence: today, or yesterday while it is still ahead), "2026-11-20" (that midnight),
    "2026-11-20T14:00" (as --begin takes it), or "now". Errors name the value as `name`."""
    value = _from_slurm(text.strip())
    bad = f"invalid {name} {text!r}"
    word = value.lower()
    if word == "now":
        return now
    if word in ("today", "yesterday"):
        midnight = _clock(now).replace(hour=0, minute=0, second=0, microsecond=0)
        return local_timestamp(midnight - timedelta(days=word == "yesterday"))
    if _AGO.fullmatch(word):
        try:
            return now - parse_duration(word.lstrip("-"))
        except ValueError as exc:
            far = str(exc).endswith("longer than 100 years")
            why = "more than 100 years ago" if far else _SINCE_HELP
            raise ValueError(f"{bad}: {why}") from None
    moment = _time_of_day(value, now, bad, _SINCE_HELP)
    if moment is not None:
        past = [at for at in _passes(moment) if at <= now]
        return past[-1] if past else _passes(moment - timedelta(days=1))[-1]
    return _date_time(value, bad, _SINCE_HELP)


def _passes(moment: datetime) -> list[float]:
    """Epoch seconds at which the clock shows `moment` (naive: local time), earliest first:
    two in the hour a clock set back for winter time shows twice, else one. `_clock` gives
    a moment of that hour's second pass fold 1, which its time of day kept: `ls --since
    02:30` typed at 02:15 of the second pass took yesterday's 02:30, the second pass's
    still being ahead, where the first, 45 minutes ago, was the last."""
    first = local_timestamp(moment.replace(fold=0))
    zone = SAID_IN.get()
    try:
        second = moment.replace(tzinfo=zone, fold=1).timestamp()
    except (ValueError, OverflowError, OSError):  # next to the year 1 or 9999: no jump there
        return [first]
    return [first, second] if second > first else [first]


def local_timestamp(moment: datetime) -> float:
    """Epoch seconds of `moment` (naive: local time). A local time the clock skips (02:30 of
    a night it goes from 02:00 to 03:00 for summer time) is the moment of the jump, when the
    clock shows 03:00, as cron runs what falls in the skipped hour: Python's own reading of
    it, 03:30, started a `--begin 02:30` job after a `--begin 03:00` one."""
    if moment.tzinfo is not None:
        return moment.timestamp()
    zone = SAID_IN.get()  # (the naive moment is the wall clock there: local_timestamp's zone)
    at = moment.replace(tzinfo=zone).timestamp()  # (fold 0: in the skipped hour, read as the
    try:  # clock before it; fold 1 is later than `at` for a time seen twice)
        before = moment.replace(tzinfo=zone, fold=1).timestamp()
    except (ValueError, OverflowError, OSError):  # next to the year 1 or 9999: no jump there
        return at
    if before >= at:  # a time the clock shows once, or twice (the first: fold 0)
        return at
    while at - before > 0.01:  # the wall clock is below `moment` up to the jump, past it after
        middle = (before + at) / 2
        before, at = (middle, at) if _clock(middle) < moment else (before, middle)
    return float(round(at))


def _time_of_day(value: str, now: float, bad: str, help_text: str) -> datetime | None:
    """`value` as a time of day ("23:30", "7:05:09") on the day of `now`; None when it is
    not written as one. `bad` starts the error (`invalid time '24:00'`)."""
    clock = re.fullmatch(r"(\d{1,2}):(\d{2})(?::(\d{2}))?", value)
    if not clock:
        return None
    hour, minute, second = (int(part or 0) for part in clock.groups())
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError(f"{bad}: no such time of day; {help_text}")
    return _clock(now).replace(hour=hour, minute=minute, second=second, microsecond=0)


_NO_SUCH = re.compile(
    r"(month|day|hour|minute|second) (must be in [\d.]+|is out of range for month)"
)
"""datetime's words for a part of a date or time that has no such value (2026-02-30)."""


def _date_time(value: str, bad: str, help_text: str) -> float:
    """`value` as a date, or a date and time (local time unless it gives an offset)."""
    try:
        at = local_timestamp(datetime.fromisoformat(value))  # naive = local time (SAID_IN's)
    except ValueError as exc:
        # Written as a date, but no such day or hour (2026-02-30, 24:00): say which part,
        # as `25:00` is told `no such time of day`; it was told only the forms, which it had.
        why = str(exc)
        if not _NO_SUCH.fullmatch(why):
            raise ValueError(f"{bad}: {help_text}") from None
        raise ValueError(f"{bad}: no such date or time ({why}); {help_text}") from None
    except (OverflowError, OSError):
        raise ValueError(f"{bad}: {help_text}") from None
    if not math.isfinite(at):
        raise ValueError(f"{bad}: {help_text}")
    if at > LATEST:
        raise ValueError(f"{bad}: that is after {LATEST_SAID}, the latest time gpuherd takes")
    return at


_SLURM_OFFSET = re.compile(
    r"now\s*([+-])\s*(\d+)\s*(second|minute|hour|day|week)?s?", re.IGNORECASE
)
_SLURM_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}


def _from_slurm(value: str) -> str:
    """Slurm's `now+2hours` (`sbatch --begin`; seconds when no unit is given) as +DURATION,
    and `now-2days` (`sacct -S`) as -DURATION, for hands used to them; `now+2h` as `+2h`,
    `now-2h` as `-2h`. Any other text as it was."""
    offset = _SLURM_OFFSET.fullmatch(value)
    if offset:
        sign, count, unit = offset.groups()
        return f"{sign}{int(count) * _SLURM_UNITS[(unit or 'second').lower()]}s"
    if value.lower().startswith("now") and value[3:].lstrip()[:1] in ("+", "-"):
        return value[3:].lstrip()
    return value


def window_refusal(
    since: float | None,
    until: float | None,
    now: float,
    names: tuple[str, str] = ("--since", "--until"),
) -> str | None:
    """Why a listing's window (`ls --since/--until`, `Herd.jobs(since=, until=)`) can hold
    no job: `since` still to come, or after `until`; None for a window that can. `names` are
    the two as the caller takes them (the CLI's options, Python's keywords)."""
    if since is not None and since > now:
        return (
            f"{names[0]} {format_moment(since, now)} is in the future: give a past moment "
            "(2d: 2 days ago, yesterday, 23:30: the last 23:30)"
        )
    if since is not None and until is not None and since > until:
        return (
            f"{names[0]} {format_moment(since, now)} is after {names[1]} "
            f"{format_moment(until, now)}: give the earlier moment to {names[0]}"
        )
    return None


@contextmanager
def said_in(zone: tzinfo | None) -> Iterator[None]:
    """SAID_IN set to `zone` meanwhile (None: this process's own)."""
    token = SAID_IN.set(zone)
    try:
        yield
    finally:
        SAID_IN.reset(token)


def _clock(at: float) -> datetime:
    """`at` as the clock shows it where it is said and read (SAID_IN, else this process's
    zone): naive, as local_timestamp takes it back."""
    zone = SAID_IN.get()
    return (
        datetime.fromtimestamp(at)
        if zone is None
        else datetime.fromtimestamp(at, zone).replace(tzinfo=None)
    )


def format_moment(at: float, now: float, seconds: bool = False) -> str:
    """ "23:30" today, "Nov 26 02:00" on another day, "2027-01-05 02:00" in another year
    (seconds only when there are some: a --begin time as it was given). `seconds`: always
    (`ls`'s SUBMITTED, STARTED, ENDED: a job at :00 showed `18:26` among `18:26:01` rows,
    which `sort` and `awk` read apart)."""
    try:
        moment, today = _clock(at), _clock(now)
    except (ValueError, OverflowError, OSError):  # beyond any date (an older gpuherd let it in)
        return f"{at:.0f} (epoch seconds)"
    clock = moment.strftime("%H:%M:%S" if seconds or moment.second else "%H:%M")
    if moment.date() == today.date():
        return clock
    if moment.year == today.year:
        return f"{moment.strftime('%b')} {moment.day} {clock}"
    return f"{moment.strftime('%Y-%m-%d')} {clock}"


def past_begin_hint(begin: float | None, now: float, count: int = 1) -> str | None:
    """What to say of a --begin already past (`--begin 2020-01-01`): the job starts at once,
    which a typo'd year or day did not mean. A second's slack: `now` and +0s are no mistake."""
    if begin is None or begin >= now - 1:
        return None
    jobs = "the job" if count == 1 else "the jobs"
    return f"--begin {format_moment(begin, now)} is already past: {jobs} may start now"
