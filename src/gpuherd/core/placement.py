"""Which queued jobs start now, and on which GPUs (pure: no I/O, no clock, no processes).

See DESIGN.md, "Placement". `plan` is called on every wake-up of the engine, so it is
written to be cheap: it keeps one small record per usable GPU and consumes the queue
lazily, stopping as soon as the running-job cap is reached.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from gpuherd.core.model import Assignment, Device, DeviceState, Job, Policy, Reservation

GIB = 1 << 30


def _gib(size: int) -> str:
    # core/units.py is being written in parallel; this keeps placement free of that dependency.
    return f"{size / GIB:.1f} GiB"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _usable(device: Device) -> bool:
    # A GPU running processes gpuherd did not start belongs to someone else right now.
    return device.state is DeviceState.ENABLED and device.foreign_processes == 0


@dataclass(slots=True)
class _Gpu:
    """What is left on one usable GPU during a pass."""

    index: int
    total: int | None
    free_slots: int
    free_mem: int | None
    """None when the GPU's memory size is unknown: memory then never limits it."""

    def rank(self) -> tuple[int, float, int]:
        # Most free slots, then most free memory, then lowest index: spreads jobs over the
        # GPUs and makes every pass deterministic. Unknown memory cannot run out, so it
        # ranks as the roomiest.
        mem = math.inf if self.free_mem is None else self.free_mem
        return (-self.free_slots, -mem, self.index)

    def has_mem(self, mem: int | None) -> bool:
        return mem is None or self.free_mem is None or self.free_mem >= mem

    def could_ever_hold(self, mem: int | None) -> bool:
        return mem is None or self.total is None or self.total >= mem


def _load(devices: Sequence[Device], reservations: Sequence[Reservation]) -> list[_Gpu]:
    """The usable GPUs, with what running and paused jobs already hold taken off."""
    gpus = {
        d.index: _Gpu(d.index, d.memory_total, d.slots, d.memory_total)
        for d in devices
        if _usable(d) and d.slots > 0
    }
    for r in reservations:
        for i in r.gpus:
            gpu = gpus.get(i)  # a GPU that is not usable (or was removed) has nothing to give
            if gpu is None:
                continue
            gpu.free_slots -= 1
            if gpu.free_mem is not None:
                gpu.free_mem -= r.mem
    return list(gpus.values())


class _Pass:
    """Capacity during one `plan` call: `open` lists the GPUs a later job may still get."""

    def __init__(self, devices: Sequence[Device], reservations: Sequence[Reservation]) -> None:
        self.usable = _load(devices, reservations)
        self.held: frozenset[int] | None = None
        self.cannot_hold: set[tuple[int, int | None]] = set()
        self._reopen([g for g in self.usable if g.free_slots > 0])

    def _reopen(self, gpus: list[_Gpu]) -> None:
        # `widest` and `roomiest` let most jobs that do not fit be turned away in O(1):
        # a long queue behind busy GPUs is mostly such jobs.
        self.open = gpus
        self.widest = len(gpus)
        mems = [math.inf if g.free_mem is None else g.free_mem for g in gpus]
        self.roomiest = max(mems, default=-math.inf)

    def choose(self, n: int, mem: int | None) -> list[_Gpu] | None:
        if n > self.widest or (mem is not None and mem > self.roomiest):
            return None
        fit = self.open if mem is None else [g for g in self.open if g.has_mem(mem)]
        if len(fit) < n:
            return None
        return fit if len(fit) == n else sorted(fit, key=_Gpu.rank)[:n]

    def take(self, gpus: list[_Gpu], mem: int | None) -> None:
        for g in gpus:
            g.free_slots -= 1
            if g.free_mem is not None and mem is not None:
                g.free_mem -= mem
        self._reopen([g for g in self.open if g.free_slots > 0])

    def hold(self, n: int, mem: int | None) -> bool:
        """Keep the n GPUs a starving job would get first away from the jobs behind it.

        Only GPUs that could ever hold the job count: holding a GPU that is too small
        would block small jobs and never help the big one. When too few such GPUs are
        usable (some draining or busy with foreign processes) nothing is held, so a job
        that cannot start at the moment does not freeze the whole queue.
        """
        if (n, mem) in self.cannot_hold:
            return False
        eligible = [g for g in self.usable if g.could_ever_hold(mem)]
        if len(eligible) < n:
            self.cannot_hold.add((n, mem))
            return False
        held = frozenset(g.index for g in sorted(eligible, key=_Gpu.rank)[:n])
        self.held = held
        self._reopen([g for g in self.open if g.index not in held])
        return True


def _place_gpu_jobs(
    jobs: Iterator[Job],
    state: _Pass,
    policy: Policy,
    now: float,
    room: int | None,
    out: list[Assignment],
) -> bool:
    """Place jobs while some GPU is open; True when the running-job cap is reached."""
    for job in jobs:
        n = job.spec.gpus
        if n == 0:
            out.append(Assignment(job.id, ()))
        elif n < 0:
            continue  # invalid; refused at submit time, never placed
        else:
            chosen = state.choose(n, job.spec.mem)
            if chosen is None:
                if (
                    state.held is None
                    and now - job.queued_at >= policy.reserve_after
                    and state.hold(n, job.spec.mem)
                    and not state.open
                ):
                    return False
                continue
            state.take(chosen, job.spec.mem)
            out.append(Assignment(job.id, tuple(sorted(g.index for g in chosen))))
        if room is not None and len(out) >= room:
            return True
        if not state.open:
            return False
    return False


def plan(
    pending: Iterable[Job],
    devices: Sequence[Device],
    reservations: Sequence[Reservation],
    policy: Policy,
    now: float,
    cpu_jobs_waiting: bool = True,
) -> list[Assignment]:
    """The jobs to start now and their GPUs, in the order decided.

    `pending` must already be in dispatch order (`queue_order_key`) with dependencies met;
    it is consumed lazily and not past the point where `policy.max_running` is reached.
    Once every GPU is taken, the rest of the queue is read only if `cpu_jobs_waiting`
    (a CPU-only job further back could still start); the caller knows that cheaply.

    Starvation: the first job (in order) that asks for GPUs, does not fit, has waited at
    least `policy.reserve_after` and could run on the usable GPUs holds the GPUs it would
    get first, and no later job in this pass may use them. Only one job holds per pass:
    it is the first blocked job in order, nothing queued behind it lands on the GPUs it
    holds, so they only gain room until it starts; then the next starving job takes its
    turn. Letting every starving job hold GPUs would idle far more
    of the machine for no extra guarantee.
    """
    room = None if policy.max_running is None else policy.max_running - len(reservations)
    out: list[Assignment] = []
    if room is not None and room <= 0:
        return out
    state = _Pass(devices, reservations)
    jobs = iter(pending)
    if state.open and _place_gpu_jobs(jobs, state, policy, now, room, out):
        return out
    if not cpu_jobs_waiting:
        return out
    # Every GPU is taken or held: only CPU-only jobs can still start, and a hold would
    # change nothing now, so the rest of the queue is read with the cheapest test.
    for job in jobs:
        if job.spec.gpus == 0:
            out.append(Assignment(job.id, ()))
            if room is not None and len(out) >= room:
                break
    return out


def why_waiting(job: Job, devices: Sequence[Device], reservations: Sequence[Reservation]) -> str:
    """A short reason why a queued job (dependencies met) is not running, given current load."""
    n = job.spec.gpus
    mem = job.spec.mem
    if n <= 0:
        return "waiting for a run slot (max_running reached)"
    usable = _load(devices, reservations)
    if len(usable) < n:
        draining = sum(1 for d in devices if d.state is DeviceState.DRAINING)
        foreign = sum(
            1 for d in devices if d.state is DeviceState.ENABLED and d.foreign_processes > 0
        )
        causes = [
            f"{_plural(foreign, 'GPU')} in use by other processes" if foreign else "",
            f"{draining} draining" if draining else "",
        ]
        detail = ", ".join(c for c in causes if c)
        return f"waiting for {_plural(n, 'usable GPU')}" + (f" ({detail})" if detail else "")
    free = [g for g in usable if g.free_slots > 0]
    if len(free) < n:
        return "waiting for a free GPU" if n == 1 else f"waiting for {n} free GPUs"
    if mem is not None and sum(1 for g in free if g.has_mem(mem)) < n:
        return f"waiting for {_gib(mem)} free on {_plural(n, 'GPU')}"
    return "waiting for its turn (GPUs held for an older blocked job, or max_running reached)"


def never_fits(job_gpus: int, job_mem: int | None, devices: Sequence[Device]) -> str | None:
    """Why no arrangement of `devices` could ever run such a job, or None if one could.

    Load is ignored; enabled and draining GPUs count (draining is temporary), GPUs with
    foreign processes count too (those processes may go away).
    """
    if job_gpus < 0:
        return f"asks for {job_gpus} GPUs; the count must be 0 or more"
    if job_gpus == 0:
        return None
    configured = [
        d for d in devices if d.state in (DeviceState.ENABLED, DeviceState.DRAINING) and d.slots > 0
    ]
    if job_gpus > len(configured):
        count = len(configured)
        have = "none is" if count == 0 else f"only {count} {'is' if count == 1 else 'are'}"
        return f"asks for {_plural(job_gpus, 'GPU')} but {have} configured"
    if job_mem is None:
        return None
    big = [d for d in configured if d.memory_total is None or d.memory_total >= job_mem]
    if len(big) >= job_gpus:
        return None
    if not big:
        largest = max(d.memory_total or 0 for d in configured)
        return f"asks for {_gib(job_mem)} per GPU but the largest GPU has {_gib(largest)}"
    return (
        f"asks for {job_gpus} GPUs with {_gib(job_mem)} each but only "
        f"{len(big)} {'GPU has' if len(big) == 1 else 'GPUs have'} that much"
    )
