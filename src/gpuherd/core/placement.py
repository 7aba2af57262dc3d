"""Which queued jobs start now, and on which GPUs (pure: no I/O, no clock, no processes).

See DESIGN.md, "Placement", and core/capacity.py for what a GPU can take. `plan` is called
on every wake-up of the engine, so it is written to be cheap: it keeps one small record per
usable GPU and consumes the queue lazily, stopping as soon as nothing more can start.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import ParamSpec

from gpuherd.core.capacity import (
    EXCLUSIVE,
    PLAIN,
    SHARING,
    Gpu,
    Pass,
)
from gpuherd.core.model import (
    Assignment,
    Device,
    Job,
    JobSpec,
    Policy,
    Reservation,
    queue_order_key,
)

P = ParamSpec("P")


@dataclass(slots=True)
class _Budget:
    """What may still start in one pass; None = no limit."""

    room: int | None
    """More jobs of any kind (`max_running`)."""
    ram: int | None
    """Host memory still to give out (beyond `keep_ram`)."""
    cpu: int | None
    """More CPU-only jobs (`cpu_jobs`)."""
    projects: dict[str, int]
    """More jobs of each project that has a limit (`project_limits`)."""
    sweeps: dict[str, int]
    """More jobs of each sweep that has a cap (`--max-parallel`)."""
    cpu_full: Callable[[], None] | None = None
    """Told once `cpu` reaches 0 (`place`'s `cpu_full`)."""
    held: Callable[[], None] | None = None
    """Told once a starving job holds GPUs (`place`'s `held`)."""

    def allows(self, spec: JobSpec) -> bool:
        """Whether the limits let the job start (whatever the GPUs say)."""
        return not (
            (self.ram is not None and (spec.ram or 0) > self.ram)
            or (spec.gpus == 0 and self.cpu is not None and self.cpu <= 0)
            or (spec.project is not None and self.projects.get(spec.project, 1) <= 0)
            or (spec.sweep is not None and self.sweeps.get(spec.sweep, 1) <= 0)
        )

    def take(self, spec: JobSpec) -> bool:
        """Count the job as started; True when nothing more may start (`max_running`)."""
        if self.ram is not None:
            self.ram -= spec.ram or 0
        if spec.gpus == 0 and self.cpu is not None:
            self.cpu -= 1
            if self.cpu == 0 and self.cpu_full is not None:
                self.cpu_full()
        if spec.project in self.projects:
            self.projects[spec.project] -= 1
        if spec.sweep in self.sweeps:
            self.sweeps[spec.sweep] -= 1
        if self.room is not None:
            self.room -= 1
            return self.room <= 0
        return False


def _place_gpu_jobs(
    jobs: Iterator[Job],
    state: Pass,
    policy: Policy,
    now: float,
    budget: _Budget,
    out: list[Assignment],
    may_hold: bool = True,
) -> bool:
    """Place jobs while some GPU is open; True when the running-job cap is reached."""
    for job in jobs:
        spec = job.spec
        n = spec.gpus
        if n < 0 or not budget.allows(spec):
            continue  # (a negative count is refused at submit time, never placed)
        if n == 0:
            out.append(Assignment(job.id, ()))
        else:
            mem = spec.mem
            kind = EXCLUSIVE if spec.exclusive else PLAIN if mem is None else SHARING  # kind_of
            chosen = state.choose(kind, n, mem, spec.only_gpus)
            if chosen is None:
                if (
                    may_hold
                    and state.holder is None
                    and now - job.queued_at >= policy.reserve_after
                    and state.hold(job.id, kind, n, mem, spec.only_gpus)
                ):
                    if budget.held is not None:
                        budget.held()
                    if not state.open:
                        return False
                continue
            state.take(chosen, kind, mem)
            out.append(Assignment(job.id, tuple(sorted(g.index for g in chosen))))
        if budget.take(spec):
            return True
        if not state.open:
            break
    return False


class _Behind:
    """The jobs `plan` reads behind the window: the streams of each GPU count `behind(gpus)`
    gives, left as they are once read (less the jobs placed from the window)."""

    def __init__(self, behind: Callable[[int], Iterable[Job]], placed: set[int]) -> None:
        self._behind = behind
        self._placed = placed
        self._streams: dict[int, Iterator[Job]] = {}
        self._heads: dict[int, Job] = {}
        """The job read from each stream and not handed on yet."""

    def _stream(self, gpus: int) -> Iterator[Job]:
        if gpus not in self._streams:
            placed = self._placed
            self._streams[gpus] = (j for j in self._behind(gpus) if j.id not in placed)
        return self._streams[gpus]

    def _push(self, heap: list[tuple[tuple[int, float, int], int]], gpus: int) -> None:
        job = next(self._stream(gpus), None)
        if job is not None:
            self._heads[gpus] = job
            heapq.heappush(heap, (queue_order_key(job), gpus))

    def merged(self, shapes: Iterable[int], state: Pass) -> Iterator[Job]:
        """The streams of `shapes` as one, in dispatch order; a stream is read no further
        once fewer GPUs are open than its jobs ask for (none of them can start)."""
        heap: list[tuple[tuple[int, float, int], int]] = []
        for gpus in shapes:
            self._push(heap, gpus)
        while heap:
            _, gpus = heapq.heappop(heap)
            job = self._heads.pop(gpus)
            if gpus > 0 and gpus > len(_open_indices(state)):
                continue
            yield job
            self._push(heap, gpus)

    def rest(self, gpus: int) -> Iterator[Job]:
        """The stream of `gpus` from the first job it has not handed on (opened, if it was
        not yet, only when read)."""
        head = self._heads.pop(gpus, None)
        if head is not None:
            yield head
        yield from self._stream(gpus)


@dataclass(frozen=True, slots=True)
class Hold:
    """The GPUs a pass kept for a starving job (`plan`, "Starvation"): no job behind it
    got them. Why a job that would fit waits names it (core/reasons.py)."""

    job_id: int
    gpus: frozenset[int]


@dataclass(frozen=True, slots=True)
class Placed:
    starts: list[Assignment]
    """The jobs to start now and their GPUs, in the order decided."""
    hold: Hold | None
    """The GPUs kept for a starving job in this pass, if any."""


def place(
    pending: Iterable[Job],
    devices: Sequence[Device],
    reservations: Sequence[Reservation],
    policy: Policy,
    now: float,
    cpu_jobs_waiting: bool = True,
    host_free: int | None = None,
    behind: Callable[[int], Iterable[Job]] | None = None,
    sweep_room: Mapping[str, int] | None = None,
    cpu_full: Callable[[], None] | None = None,
    held: Callable[[], None] | None = None,
) -> Placed:
    """The jobs to start now and their GPUs, in the order decided, and the GPUs held.

    `pending` must already be in dispatch order (`queue_order_key`) with dependencies met;
    it is consumed lazily and not past the point where `policy.max_running` is reached.
    Once every GPU is taken (or `pending` is read to its end), the rest of the queue is
    read only if `cpu_jobs_waiting` (a CPU-only job further back could still start); the
    caller knows that cheaply.

    A caller that reads only a window of the queue passes `behind`: `behind(gpus)` gives
    the queued jobs that ask for `gpus` GPUs, in dispatch order (they may repeat jobs of
    `pending`: one placed from it is not placed twice). A job that fits must not wait
    because jobs of another shape that cannot start fill the window. Once `pending` is read
    to its end with GPUs still open, the streams of 0 up to as many GPUs as are open are
    read as one, in dispatch order, under the same limits and budget as the window; once
    every GPU is taken, the CPU-only stream alone. They never hold GPUs (below): the job
    the window's hold protects is older than all of them, and a pass that reads only some
    shapes behind the window cannot tell which of those jobs is the first in line.
    `cpu_full` is called once the CPU-only jobs of `policy.cpu_jobs` are all placed: from
    then on `pending` may leave CPU-only jobs out (none of them can start in this pass).
    `held` is called once a job holds GPUs (below): from then on `pending` may leave out
    the jobs that ask for more GPUs than were open as the pass began (they could only
    have held).

    Host memory: `host_free` is the memory the machine has available now, less what running
    jobs' --ram holds and they do not use yet (core/host_ram.py: the engine takes it off);
    None = unknown, no check. A job starts only if `host_free`, less the --ram of the jobs
    placed before it in this pass, less its own --ram, stays at or above `policy.keep_ram`.
    A job without --ram counts as 0: it is never held back by the request of a job placed
    before it, but once the machine is below the margin (running jobs' --ram held) nothing
    starts at all (gpulimit's SAFETY_KEEP_MEMORY).
    This applies to CPU-only jobs too.

    CPU-only jobs: at most `policy.cpu_jobs` run at once (reservations without GPUs count);
    past that, one is passed over like a GPU job that does not fit, holding nothing. So is
    a job of a project that has `policy.project_limits` jobs running (reservations count
    by their project), and one of a sweep that may start no more (`sweep_room`: how many
    more each sweep with `--max-parallel` may start).

    Starvation: the first job (in order) that asks for GPUs, does not fit, has waited at
    least `policy.reserve_after` since it could first start (`Job.queued_at`: not while it
    waited for other jobs or a retry delay) and could run on the usable GPUs holds the GPUs
    it would get first, and no later job in this pass may use them. Only one job holds per pass:
    it is the first blocked job in order, nothing queued behind it lands on the GPUs it
    holds, so they only gain room until it starts; then the next starving job takes its
    turn. Letting every starving job hold GPUs would idle far more of the machine for no
    extra guarantee. Host memory is not held: a job whose --ram does not fit now is
    passed over without holding anything (a request larger than the machine would
    otherwise idle GPUs for ever).
    """
    room = None if policy.max_running is None else policy.max_running - len(reservations)
    out: list[Assignment] = []
    ram_left = None if host_free is None else host_free - policy.keep_ram
    if (room is not None and room <= 0) or (ram_left is not None and ram_left < 0):
        return Placed(out, None)
    budget = _Budget(
        room,
        ram_left,
        cpu_slots_left(reservations, policy),
        project_room(reservations, policy),
        dict(sweep_room or {}),
        cpu_full,
        held,
    )
    state = Pass(devices, reservations, policy)
    _place(iter(pending), state, policy, now, budget, out, cpu_jobs_waiting, behind)
    holder = state.holder
    return Placed(out, None if holder is None else Hold(holder, state.held))


def _starts_only(place: Callable[P, Placed]) -> Callable[P, list[Assignment]]:
    def plan(*args: P.args, **kwargs: P.kwargs) -> list[Assignment]:
        return place(*args, **kwargs).starts

    plan.__doc__ = "The jobs to start now and their GPUs, in the order decided (`place`'s starts)."
    return plan


plan = _starts_only(place)
"""`place` without the hold (the tests and the benchmarks ask only what starts)."""


def _place(
    jobs: Iterator[Job],
    state: Pass,
    policy: Policy,
    now: float,
    budget: _Budget,
    out: list[Assignment],
    cpu_jobs_waiting: bool,
    behind: Callable[[int], Iterable[Job]] | None,
) -> None:
    """`place`'s pass over the queue, once the limits leave room for some job."""
    if state.open and _place_gpu_jobs(jobs, state, policy, now, budget, out):
        return
    cpu_wanted = cpu_jobs_waiting and budget.cpu != 0
    if behind is not None:
        # A job of `pending` passed over (no room, a limit) is passed over again: capacity
        # and budgets only shrink in a pass.
        streams = _Behind(behind, {a.job_id for a in out})
        if state.open:
            shapes = range(0 if cpu_wanted else 1, len(_open_indices(state)) + 1)
            merged = streams.merged(shapes, state)
            if _place_gpu_jobs(merged, state, policy, now, budget, out, may_hold=False):
                return
        jobs = streams.rest(0)
    if not cpu_wanted:
        return
    # Every GPU is taken or held: only CPU-only jobs can still start, and a hold would
    # change nothing now, so the rest of the queue is read with the cheapest test.
    for job in jobs:
        if job.spec.gpus != 0 or not budget.allows(job.spec):
            continue
        out.append(Assignment(job.id, ()))
        if budget.take(job.spec) or budget.cpu == 0:
            break


def project_room(reservations: Sequence[Reservation], policy: Policy) -> dict[str, int]:
    """How many more jobs of each project with a limit (`policy.project_limits`) may start."""
    if not policy.project_limits:
        return {}
    running = Counter(r.project for r in reservations if r.project is not None)
    return {name: limit - running[name] for name, limit in policy.project_limits}


def cpu_slots_left(reservations: Sequence[Reservation], policy: Policy) -> int | None:
    """How many more CPU-only jobs may start under `policy.cpu_jobs` (None: no cap)."""
    if policy.cpu_jobs is None:
        return None
    return max(policy.cpu_jobs - sum(1 for r in reservations if not r.gpus), 0)


def open_gpus(
    devices: Sequence[Device], reservations: Sequence[Reservation], policy: Policy
) -> frozenset[int]:
    """The GPUs a job could start on now, by slots or memory (`--only-gpus` jobs that name
    none of them are not worth reading: core/caps.py)."""
    return frozenset(_open_indices(Pass(devices, reservations, policy)))


def _open_indices(state: Pass) -> set[int]:
    open_now: Iterable[Gpu] = itertools.chain(state.plain_open, state.share_open)
    return {g.index for g in open_now}


def gpus_open(
    devices: Sequence[Device], reservations: Sequence[Reservation], policy: Policy
) -> bool:
    """Whether some job asking for GPUs could start now (by slots, memory or both).

    The engine's cheap test before reading GPU jobs from the queue: with jobs that declare
    --mem, a GPU whose slots are all taken may still have room.
    """
    return Pass(devices, reservations, policy).open
