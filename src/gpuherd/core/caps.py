"""Which queued jobs are worth offering placement at all (pure).

The engine reads at most a window of queued jobs per pass (engine_scan.SCAN_LIMIT). Jobs that
placement would pass over for a cap, or for GPUs that have no room, must not use up that
window: 2,000 queued jobs of a project at its limit (or pinned to a busy GPU) left every job
behind them waiting with GPUs idle. They are skipped here, before the window is counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from gpuherd.core.model import Job


class Offering:
    """Skips the jobs that cannot start in this pass (see `worth_offering`).

    One per pass: the counts are shared by every stream it filters, so a sweep or project
    offered jobs from the queue's window is offered no more from the streams of one GPU
    count read after it (each job must reach it once only: the caller leaves out those
    already read).
    """

    def __init__(
        self,
        sweep_caps: Mapping[str, int],
        sweeps_running: Mapping[str, int],
        project_room: Mapping[str, int],
        open_gpus: Callable[[], frozenset[int]],
        hold_after: float,
    ) -> None:
        self._sweep_room = {s: cap - sweeps_running.get(s, 0) for s, cap in sweep_caps.items()}
        self._project_left = dict(project_room)
        self._open_gpus = open_gpus
        self._gpus: frozenset[int] | None = None
        self._hold_after = hold_after

    def filter(self, pending: Iterable[Job]) -> Iterator[Job]:
        sweep_room, project_left = self._sweep_room, self._project_left
        for job in pending:
            spec = job.spec
            sweep, project = spec.sweep, spec.project
            if (sweep in sweep_room and sweep_room[sweep] <= 0) or (
                project in project_left and project_left[project] <= 0
            ):
                continue
            if spec.only_gpus and job.queued_at > self._hold_after:
                if self._gpus is None:
                    self._gpus = self._open_gpus()
                if self._gpus.isdisjoint(spec.only_gpus):
                    continue
            if sweep in sweep_room:
                sweep_room[sweep] -= 1
            if project in project_left:
                project_left[project] -= 1
            yield job


def worth_offering(
    pending: Iterator[Job],
    sweep_caps: Mapping[str, int],
    sweeps_running: Mapping[str, int],
    project_room: Mapping[str, int],
    open_gpus: Callable[[], frozenset[int]],
    hold_after: float,
) -> Iterator[Job]:
    """`pending` less the jobs that cannot start in this pass.

    - A sweep with `--max-parallel` (`sweep_caps`, of which `sweeps_running` run) is offered
      no more jobs than it may still start: a sweep's points ask for the same resources, so
      one offered but not placed means the others would not fit either.
    - A project with a limit is offered no more jobs than `project_room` says may start:
      its first ones in queue order.
    - A job limited to some GPUs (`--only-gpus`) none of which is open to a job now
      (`open_gpus()`, asked once, at the first such job) is skipped, unless it has waited
      `hold_after` (a queued_at that old): then placement may have it hold GPUs.
    """
    offer = Offering(sweep_caps, sweeps_running, project_room, open_gpus, hold_after)
    return offer.filter(pending)
