"""A job's run time: how long its latest attempt has run, its paused intervals left out (pure).

`gpuherd pause` stops a job's processes (SIGSTOP) and `resume` continues them; the store keeps
both as events. A job paused for an hour has not run for that hour, so `ls`, `show` and the
dashboard leave it out of the job's time, as its --timeout does: the time shown stands still
while the job is paused and goes on from there once it is resumed. A pause still on when the
job ended (it was killed while paused) lasts to its end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpuherd.core.states import OutcomeKind
from gpuherd.core.units import format_duration

PAUSE, RESUME = "pause", "resume"
"""The events (core.states.Event values) that begin and end a pause."""

RAN_ITS_COURSE = frozenset({OutcomeKind.EXIT, OutcomeKind.SIGNAL, OutcomeKind.CUDA_OOM})
"""Outcomes of an attempt that ended on its own: its run time is one measured to its end.
Not so one gpuherd stopped (a kill, --timeout, --no-output-timeout, --max-log-size: it ran
at least that long, and would have run on) or one lost (its end is its last sign of life, not
its end), nor one that never began (spawn_error)."""


def pauses(
    events: Iterable[tuple[float, str]], since: float, until: float | None = None
) -> tuple[float, float | None]:
    """(seconds paused in the pauses that are over, when the pause still on began or None),
    from a job's events (time, name) in order, those before `since` (the attempt's start: an
    earlier attempt's pauses) left out. `until`, the attempt's end, ends a pause still on."""
    total, paused_at = 0.0, None
    for at, event in events:
        if at < since:
            continue
        if event == PAUSE and paused_at is None:
            paused_at = at
        elif event == RESUME and paused_at is not None:
            total, paused_at = total + max(0.0, at - paused_at), None
    if paused_at is not None and until is not None:
        total, paused_at = total + max(0.0, until - paused_at), None
    return total, paused_at


def paused_until(end: float, paused_seconds: float, paused_at: float | None) -> float:
    """Seconds paused in all by `end`: those of the pauses over, and the one still on."""
    return paused_seconds + (max(0.0, end - paused_at) if paused_at is not None else 0.0)


def ran_for(job: Mapping[str, Any], now: float) -> tuple[float, float] | None:
    """(seconds run, seconds paused) of a job view's (wire.job_view) latest attempt by its
    end, or `now`; None for a job not started. A view from a daemon that does not count
    pauses has no `paused_seconds`: it ran, then, the whole time since its start."""
    start = job.get("started_at")
    if not start or job["state"] in ("queued", "held"):
        return None
    end = job.get("ended_at") or now
    paused = paused_until(end, job.get("paused_seconds") or 0.0, job.get("paused_at"))
    return max(0.0, end - start - paused), paused


def measured_run_time(
    started_at: float | None, ended_at: float | None, outcome: str | None, paused: float = 0.0
) -> float | None:
    """Seconds an ended attempt ran (`paused` seconds left out), when that is known: what
    `--order longest-first` goes by. None where it is not (not ended, or not RAN_ITS_COURSE):
    the few seconds a lost or killed run had, taken for its length, put its job last, as a
    short one, when it may be the longest; not known to be short, it goes first."""
    if not started_at or ended_at is None or outcome not in RAN_ITS_COURSE:
        return None
    return max(0.0, ended_at - started_at - paused)


def timeout_at(job: Mapping[str, Any]) -> float | None:
    """When a running job's --timeout stops its latest attempt (epoch seconds): its start,
    plus the pauses over (its timeout stood still in them, attempts.py), plus the timeout.
    None for a job without one, or not running: a paused job's timeout stands still."""
    start, timeout = job.get("started_at"), job.get("timeout")
    if job["state"] != "running" or not start or not timeout:
        return None
    return float(start + (job.get("paused_seconds") or 0.0) + timeout)


def run_time_text(job: Mapping[str, Any], now: float, paused_too: bool = False) -> str:
    """A job view's run time as `ls` and the dashboard show it; "" for a job not started.
    `paused_too` adds the time it spent paused (`show`, a job's page)."""
    times = ran_for(job, now)
    if times is None:
        return ""
    ran, paused = times
    text = format_duration(ran)
    if paused_too and paused:
        text += f" (and {format_duration(paused)} paused)"
    return text
