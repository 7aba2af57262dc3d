"""An attempt a restart found running that the database did not know (engine_held_runs.py)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuherd.core.model import Reservation
from gpuherd.gpu_processes import RunKey


@dataclass
class HeldRun:
    """An attempt the database did not know, found running by a restart, whose job was held
    for it (engine_held_runs.py): watched until it ends, its GPUs reserved for it."""

    job_id: int
    attempt: int
    pid: int
    reservation: Reservation | None
    """What it holds; None where its GPUs are not known (nothing is reserved for it)."""
    folder: str
    """The attempt's folder."""
    job_dir: str
    gpus: tuple[int, ...] = ()
    """The GPUs it runs on, as far as known (its attempt is recorded on them)."""
    started_at: float | None = None
    peak: int = 0
    sweep: str | None = None
    """Its job's sweep, if a point of one: the run counts toward the sweep's --max-parallel."""

    @property
    def key(self) -> RunKey:
        return (self.job_id, self.attempt)
