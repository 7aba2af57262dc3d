"""Caps on how many jobs of one group (a sweep) run at once (pure)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpuherd.core.model import Job


def within_caps(
    pending: Iterator[Job], caps: Mapping[str, int], running: Mapping[str, int]
) -> Iterator[Job]:
    """Offer placement no more of a capped sweep's jobs than it may still start.

    Applied to the queue before placement, which stays unaware of sweeps: a sweep's points
    ask for the same resources, so one offered but not placed means the others would not
    fit either.
    """
    room = {sweep: cap - running.get(sweep, 0) for sweep, cap in caps.items()}
    for job in pending:
        sweep = job.spec.sweep
        if sweep in room:
            if room[sweep] <= 0:
                continue
            room[sweep] -= 1
        yield job
