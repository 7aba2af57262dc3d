"""What a queued job's reason to wait depends on (pure; the words are core/reasons.py's).

Nearly all of it is the job's shape, what it asks for: the points of a sweep, the jobs of a
queue, mostly ask alike, so a listing words it once per shape (reasons.shape_waits; `ls
--json` of 100,000 queued jobs worded it 100,000 times). Only a job that would fit now has a
reason of its own: the jobs placement has not read yet ahead of it, or whose turn it is
(`Fits`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from gpuherd.core.capacity import Kind, kind_of
from gpuherd.core.model import JobSpec

AHEAD_COUNTED = 10_000
"""Jobs ahead of a waiting one are counted up to this many ("over 10,000" beyond): a count
walks the queue, and `ls` may word hundreds of reasons at once."""


class Shape(NamedTuple):
    """Every field of a job's spec that shape_waits reads (and no other: it cannot read them),
    and that never_runs reads (submission.py: judged once per shape too)."""

    gpus: int
    mem: int | None
    only: tuple[int, ...]
    kind: Kind
    ram: int | None
    project: str | None


def shape_of(spec: JobSpec) -> Shape:
    return Shape(spec.gpus, spec.mem, spec.only_gpus, kind_of(spec), spec.ram, spec.project)


@dataclass(frozen=True, slots=True)
class Fits:
    """A job of its shape would fit now: it waits for the queued jobs placement has not
    read ahead of it, or for its turn."""

    turn: str
    """Its turn: "starting" for a CPU-only job; the GPUs held for an older job."""
    held: str | None = None
    """Its turn, with the job that holds the GPUs it fits only with named: told to every
    job but that one."""
    holder: int | None = None

    def reason(self, job_id: int, ahead: Callable[[int], int | None] | None) -> str:
        """`ahead(most)`: how many queued jobs (up to `most`) stand before this one when the
        last pass did not read it; None when it did."""
        turn = self.held if self.held is not None and job_id != self.holder else self.turn
        return ahead_text(ahead) or turn


def ahead_text(ahead: Callable[[int], int | None] | None) -> str | None:
    counted = ahead(AHEAD_COUNTED + 1) if ahead is not None else None
    if not counted:  # read by placement (or the jobs ahead of it have gone since)
        return None
    if counted > AHEAD_COUNTED:
        return f"waiting: over {AHEAD_COUNTED:,} jobs ahead in the queue"
    return f"waiting: {counted:,} job{'' if counted == 1 else 's'} ahead in the queue"


def worded(waits: str | Fits, job_id: int, ahead: Callable[[int], int | None] | None) -> str:
    """A job's reason from its shape's (reasons.shape_waits)."""
    return waits if isinstance(waits, str) else waits.reason(job_id, ahead)
