"""`begin=` of `submit`, `sweep`, a task's options and `Job.edit` (pyapi_values.py), as the
epoch seconds the daemon takes, checked here so a wrong one is refused in the API's words."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from gpuherd.core.when import LATEST, parse_begin
from gpuherd.pyapi_types import WrongType, WrongValue


def begin_seconds(value: Any) -> float:
    """`begin` in epoch seconds: text as `--begin` takes it, a datetime (naive: local
    time), a timedelta from now (as "+2h"), or epoch seconds; checked here to be from 1970 to
    the year 9999, in the API's words (the daemon's named `--begin`; a list or an object
    raised json's "not JSON serializable")."""
    if isinstance(value, str):
        try:  # (its words name it: "invalid begin 'x': use now, ...")
            return parse_begin(value, time.time(), "begin")
        except ValueError as exc:
            raise WrongValue(str(exc)) from None
    try:
        if isinstance(value, timedelta):
            seconds = time.time() + value.total_seconds()
        elif isinstance(value, datetime):
            seconds = value.timestamp()
        elif isinstance(value, int | float) and not isinstance(value, bool):
            seconds = float(value)
        else:
            raise WrongType(
                f"begin is a datetime, a timedelta from now, text ('+2h', '23:30') or epoch "
                f"seconds, got {value!r} ({type(value).__name__})"
            )
    except (ValueError, OverflowError, OSError):  # datetime(1, 1, 1): "year 0 is out of…"
        seconds = -1.0
    if not 0 <= seconds <= LATEST:  # (NaN too)
        raise WrongValue(
            f"begin {value} is no time a job can start at: give one from 1970 to the year 9999"
        )
    return seconds


def refuse_hold_with_begin(options: Mapping[str, Any]) -> None:
    """WrongValue for `hold=True` with a `begin`: begin holds the job until then, so which
    was meant is unknown (the daemon refused it in its own words, `--hold` and `--begin`)."""
    if options.get("hold") and options.get("begin") is not None:
        raise WrongValue(
            f"give hold=True (held until a release) or begin={options['begin']!r} (held until "
            "then), not both"
        )
