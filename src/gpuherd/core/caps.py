"""Which queued jobs are worth offering placement at all (pure).

The engine reads at most a window of queued jobs per pass (engine_scan.SCAN_LIMIT). Jobs that
placement would pass over for a cap, or for GPUs that have no room, must not use up that
window: 2,000 queued jobs of a project at its limit (or pinned to a busy GPU) left every job
behind them waiting with GPUs idle. They are skipped here, before the window is counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial

from gpuherd.core.model import Device, DeviceState, Job, Policy, Reservation
from gpuherd.core.placement import open_gpus, project_room
from gpuherd.core.waiting import Shape, shape_of


class _Room:
    """How many more jobs of each group (a sweep with `--max-parallel`, a project with a
    limit) a pass may offer, counted per shape (core/waiting.Shape: what a job asks for): a
    job that does not fit says nothing of a smaller one of its group behind it (a project's,
    or an edited sweep point's, 2-GPU job kept its 1-GPU ones off a free GPU). Placement
    keeps to the caps itself."""

    def __init__(self, room: Mapping[str, int]) -> None:
        self._room = dict(room)
        self._offered: Counter[tuple[str, Shape | None]] = Counter()

    def key(self, group: str | None, job: Job) -> tuple[str, Shape | None] | None:
        """What the job counts as, or None when its group (if any) has no cap; (group, None)
        when the group may start none: full whatever the shape, which is not worked out (a
        sweep at its cap with 100,000 points queued: ~1 us a point, each pass)."""
        if group is None or (room := self._room.get(group)) is None:
            return None
        return (group, None) if room <= 0 else (group, shape_of(job.spec))

    def full(self, key: tuple[str, Shape | None] | None) -> bool:
        return key is not None and self._offered.get(key, 0) >= self._room[key[0]]

    def take(self, key: tuple[str, Shape | None] | None) -> None:
        if key is not None:
            self._offered[key] += 1


def sweep_room(sweep_caps: Mapping[str, int], sweeps_running: Mapping[str, int]) -> dict[str, int]:
    """How many more jobs each sweep with a cap (`--max-parallel`) may start."""
    return {s: cap - sweeps_running.get(s, 0) for s, cap in sweep_caps.items()}


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
        enabled: int | None = None,
    ) -> None:
        self._sweeps = _Room(sweep_room(sweep_caps, sweeps_running))
        self._projects = _Room(project_room)
        self._open_gpus = open_gpus
        self._gpus: frozenset[int] | None = None
        self.hold_after = hold_after
        """A job queued since then or before has starved: it may hold GPUs."""
        self.enabled = enabled
        """The GPUs enabled (None: not said): a job asking for more can neither start nor
        hold any (capacity.Pass.hold)."""

    def open_now(self) -> frozenset[int]:
        """The GPUs open to some job as the pass begins (`open_gpus()`, asked once)."""
        if self._gpus is None:
            self._gpus = self._open_gpus()
        return self._gpus

    def filter(self, pending: Iterable[Job]) -> Iterator[Job]:
        sweeps, projects = self._sweeps, self._projects
        for job in pending:
            spec = job.spec
            if sweeps.full(sweep := sweeps.key(spec.sweep, job)):
                continue
            if projects.full(project := projects.key(spec.project, job)):
                continue
            if (
                spec.only_gpus
                and job.queued_at > self.hold_after
                and self.open_now().isdisjoint(spec.only_gpus)
            ):
                continue
            sweeps.take(sweep)
            projects.take(project)
            yield job


def pass_offering(
    sweep_caps: Mapping[str, int],
    sweeps_running: Mapping[str, int],
    devices: Sequence[Device],
    reservations: Sequence[Reservation],
    policy: Policy,
    now: float,
) -> Offering:
    """The Offering of the engine's pass at `now`: the caps as they stand, the GPUs open as
    it begins, a job starving once it has waited `policy.reserve_after`."""
    return Offering(
        sweep_caps,
        sweeps_running,
        project_room(reservations, policy),
        partial(open_gpus, devices, reservations, policy),
        now - policy.reserve_after,
        sum(1 for d in devices if d.state is DeviceState.ENABLED and d.slots >= 1),
    )


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
      no more jobs of each shape than it may still start (`_Room`): its points mostly ask
      for the same resources, so one offered but not placed means the others would not fit
      either.
    - A project with a limit is offered no more jobs of each shape than `project_room` says
      may start: its first ones in queue order.
    - A job limited to some GPUs (`--only-gpus`) none of which is open to a job now
      (`open_gpus()`, asked once, at the first such job) is skipped, unless it has waited
      `hold_after` (a queued_at that old): then placement may have it hold GPUs.
    """
    offer = Offering(sweep_caps, sweeps_running, project_room, open_gpus, hold_after)
    return offer.filter(pending)
