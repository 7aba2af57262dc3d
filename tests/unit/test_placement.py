"""Placement: properties over random machines and queues, plus a few worked examples."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuherd.core.model import (
    Assignment,
    Device,
    DeviceState,
    ForeignMode,
    Job,
    JobSpec,
    Policy,
    Reservation,
    queue_order_key,
)
from gpuherd.core.placement import plan
from gpuherd.core.reasons import never_fits, why_waiting
from gpuherd.core.states import JobState
from scale import scaled

GIB = 1 << 30
NOW = 10_000.0
REMOVED_GPU = 99
"""An index no generated device has: a GPU that was taken out while a job still held it."""

PROPS = settings(max_examples=scaled(100, 500), deadline=None)
"""Examples a property draws: hypothesis' default in CI (its data generation is most of the
time: 200 took ~2 s a property alone, 9-13 s in the loaded suite; every run draws new ones),
more under GPUHERD_SOAK=full."""


def job(
    id: int,
    gpus: int = 1,
    mem: int | None = None,
    priority: int = 0,
    queued_at: float = NOW,
    exclusive: bool = False,
    ram: int | None = None,
    only_gpus: tuple[int, ...] = (),
    project: str | None = None,
) -> Job:
    spec = JobSpec(
        command="true",
        cwd="/tmp",
        gpus=gpus,
        mem=mem,
        exclusive=exclusive,
        ram=ram,
        only_gpus=only_gpus,
        project=project,
    )
    return Job(
        id=id,
        spec=spec,
        state=JobState.QUEUED,
        priority=priority,
        position=float(id),
        queued_at=queued_at,
    )


def usable(d: Device) -> bool:
    """Enabled with a slot: the GPUs placement may use at all (by some job kind)."""
    return d.state is DeviceState.ENABLED and d.slots > 0


def plain_ok(d: Device, policy: Policy) -> bool:
    """Other users' processes leave the GPU to jobs without --mem (and exclusive ones)."""
    return d.foreign_processes == 0 or policy.foreign in (ForeignMode.MEMORY, ForeignMode.IGNORE)


def share_ok(d: Device, policy: Policy) -> bool:
    return d.foreign_processes == 0 or policy.foreign is not ForeignMode.EXCLUSIVE


def cap_of(d: Device, policy: Policy) -> int | None:
    """Memory placement may hand out on the empty GPU: total, less margin and foreign use."""
    if d.memory_total is None:
        return None
    foreign = 0 if policy.foreign is ForeignMode.IGNORE else d.foreign_memory
    return d.memory_total - math.ceil(policy.keep_free * d.memory_total) - foreign


def kind(spec: JobSpec) -> str:
    return "exclusive" if spec.exclusive else "plain" if spec.mem is None else "sharing"


@dataclass
class Case:
    devices: list[Device]
    reservations: list[Reservation]
    pending: list[Job]
    policy: Policy
    host_free: int | None = None


# Strategies built once: composites that build them on every draw spend most of the time
# validating them.
_DEVICE = st.tuples(
    st.integers(1, 3),  # slots
    st.sampled_from([DeviceState.ENABLED] * 3 + [DeviceState.DRAINING]),
    st.sampled_from([None, 8 * GIB, 24 * GIB, 40 * GIB, 80 * GIB]),
    st.sampled_from([0, 0, 0, 1, 2]),  # foreign processes
    st.sampled_from([0, 1, 4, 20]),  # their GiB, when there are some
    st.sampled_from([None, None, None, 1, 2, 4]),  # max_jobs
)
_NODE = st.sampled_from([None, "a", "b", "b", "c"])
_RESERVATION_KIND = st.sampled_from(["plain", "plain", "sharing", "sharing", "exclusive"])


@st.composite
def machines(draw: st.DrawFn) -> tuple[list[Device], list[Reservation]]:
    indices = draw(st.lists(st.integers(0, 15), min_size=1, max_size=8, unique=True))
    links: dict[int, dict[int, int]] = {i: {} for i in indices}
    if draw(st.integers(0, 2)) == 0:  # topology known on a third of the machines
        pairs = list(itertools.combinations(indices, 2))
        speeds = draw(st.lists(st.integers(0, 3), min_size=len(pairs), max_size=len(pairs)))
        for (a, b), speed in zip(pairs, speeds, strict=True):
            links[a][b] = links[b][a] = speed
    fields = draw(st.lists(_DEVICE, min_size=len(indices), max_size=len(indices)))
    nodes: list[str | None] = [None] * len(indices)
    if draw(st.integers(0, 2)) == 0:  # a cluster on a third of the machines (None: local)
        nodes = draw(st.lists(_NODE, min_size=len(indices), max_size=len(indices)))
    devices = [
        Device(
            index=i,
            slots=slots,
            state=state,
            memory_total=total,
            foreign_processes=foreign,
            foreign_memory=foreign_gib * GIB if foreign else 0,
            max_jobs=max_jobs,
            links=links[i],
            node=node,
        )
        for i, (slots, state, total, foreign, foreign_gib, max_jobs), node in zip(
            indices, fields, nodes, strict=True
        )
    ]
    # Reservations as the engine would have made them, except that measured use may have
    # grown past what the GPU had free (mem is drawn up to a GPU's whole size).
    count = dict.fromkeys(indices, 0)
    alone: set[int] = set()
    slots = {d.index: d.slots for d in devices}
    size = {d.index: d.memory_total for d in devices}
    reservations = []
    for job_id in range(1000, 1000 + draw(st.integers(0, 8))):
        what = draw(_RESERVATION_KIND)
        fit = {
            "plain": lambda i: count[i] < slots[i],
            "sharing": lambda i: True,
            "exclusive": lambda i: count[i] == 0,
        }[what]
        open_ = sorted(i for i in indices if i not in alone and fit(i))
        if not open_:
            continue
        gpus = draw(st.lists(st.sampled_from(open_), min_size=1, max_size=3, unique=True))
        for i in gpus:
            count[i] += 1
            if what == "exclusive":
                alone.add(i)
        if draw(st.integers(0, 3)) == 0:
            gpus.append(REMOVED_GPU)
        known = [m for i in gpus if (m := size.get(i)) is not None]
        mem = draw(st.integers(0, min(known, default=80 * GIB) // GIB)) * GIB
        reservations.append(
            Reservation(
                job_id=job_id,
                gpus=tuple(gpus),
                mem=mem,
                shares=what == "sharing",
                exclusive=what == "exclusive",
            )
        )
    # CPU-only jobs running: no GPU, but they count against max-running and cpu-jobs.
    reservations += [Reservation(2000 + i, ()) for i in range(draw(st.integers(0, 3)))]
    return devices, reservations


_JOB = st.tuples(
    st.sampled_from(["plain"] * 3 + ["sharing"] * 3 + ["exclusive"]),
    st.sampled_from([4, 8, 10, 20, 40, 80, 100]),  # --mem GiB of a sharing job
    st.sampled_from([None, None, 20, 100]),  # --mem GiB of an exclusive job
    st.sampled_from([None, None, None, 1, 4, 16]),  # --ram GiB
    st.sampled_from([0, 1, 1, 1, 2, 2, 3, 4]),  # gpus
    st.integers(0, 3),  # priority
    st.sampled_from([0.0, 10.0, 299.0, 300.0, 5000.0]),  # seconds queued
    # --only-gpus: mostly none; some name GPUs the machine may not have
    st.sampled_from([(), (), (), (), (0,), (1, 2), (0, 3, 5), (2, 4, 6, 8), (REMOVED_GPU,)]),
    st.sampled_from([None, None, "a", "b"]),  # --project
)
_PROJECT_LIMITS = st.sampled_from([(), (), (("a", 1),), (("a", 2), ("b", 1)), (("b", 3),)])


def queued_job(
    id: int,
    fields: tuple[str, int, int | None, int | None, int, int, float, tuple[int, ...], str | None],
) -> Job:
    what, sharing_gib, exclusive_gib, ram_gib, gpus, priority, waited, only, project = fields
    mem = {"plain": None, "sharing": sharing_gib, "exclusive": exclusive_gib}[what]
    return job(
        id,
        gpus=gpus,
        mem=None if mem is None else mem * GIB,
        priority=priority,
        queued_at=NOW - waited,
        exclusive=what == "exclusive",
        ram=None if ram_gib is None else ram_gib * GIB,
        only_gpus=only if gpus else (),  # a CPU-only job with --only-gpus is refused
        project=project,
    )


@st.composite
def cases(draw: st.DrawFn) -> Case:
    devices, reservations = draw(machines())
    projects = st.sampled_from([None, None, "a", "b"])
    reservations = [replace(r, project=draw(projects)) for r in reservations]
    size = draw(st.integers(0, 25))
    fields = draw(st.lists(_JOB, min_size=size, max_size=size))
    pending = [queued_job(i, f) for i, f in enumerate(fields)]
    pending.sort(key=queue_order_key)
    policy = Policy(
        reserve_after=300.0,
        max_running=draw(st.one_of(st.none(), st.integers(0, 12))),
        foreign=draw(st.sampled_from(list(ForeignMode))),
        keep_free=draw(st.sampled_from([0.0, 0.0, 0.1, 0.2])),
        keep_ram=draw(st.sampled_from([0, 0, 2 * GIB])),
        cpu_jobs=draw(st.one_of(st.none(), st.integers(0, 6))),
        project_limits=draw(_PROJECT_LIMITS),
    )
    host_free = draw(st.sampled_from([None, None, None, 0, 1, 4, 16, 64]))
    return Case(
        devices, reservations, pending, policy, None if host_free is None else host_free * GIB
    )


def run(case: Case) -> list[Assignment]:
    return plan(
        iter(case.pending),
        case.devices,
        case.reservations,
        case.policy,
        NOW,
        host_free=case.host_free,
    )


@dataclass
class Load:
    """gpuherd's jobs on one GPU."""

    count: int = 0
    plain: int = 0
    exclusive: bool = False
    mem: int = 0


def replay(case: Case, result: Sequence[Assignment]) -> Iterator[tuple[Job, dict[int, Load]]]:
    """Each assigned job with the load of its GPUs just before it started."""
    loads: dict[int, Load] = {}
    for r in case.reservations:
        for i in r.gpus:
            one = loads.setdefault(i, Load())
            one.count += 1
            one.plain += not (r.shares or r.exclusive)
            one.exclusive |= r.exclusive
            one.mem += r.mem
    by_id = {j.id: j for j in case.pending}
    for a in result:
        j = by_id[a.job_id]
        yield j, {i: loads.setdefault(i, Load()) for i in a.gpus}
        for i in a.gpus:
            one = loads[i]
            one.count += 1
            one.plain += kind(j.spec) == "plain"
            one.exclusive |= j.spec.exclusive
            one.mem += j.spec.mem or 0


@PROPS
@given(cases())
def test_a_job_is_placed_only_on_its_only_gpus(case: Case) -> None:
    by_id = {j.id: j for j in case.pending}
    for a in run(case):
        only = by_id[a.job_id].spec.only_gpus
        assert not only or set(a.gpus) <= set(only)


@given(cases())
def test_jobs_without_mem_never_overfill_slots(case: Case) -> None:
    devices = {d.index: d for d in case.devices}
    for j, before in replay(case, run(case)):
        for i, one in before.items():
            d = devices[i]
            if kind(j.spec) == "plain" or (kind(j.spec) == "sharing" and d.memory_total is None):
                assert one.count < d.slots


@PROPS
@given(cases())
def test_no_gpu_gets_more_jobs_than_its_limit(case: Case) -> None:
    devices = {d.index: d for d in case.devices}
    for _, before in replay(case, run(case)):
        for i, one in before.items():
            limit = devices[i].max_jobs
            assert limit is None or one.count < limit


@PROPS
@given(cases())
def test_each_job_gets_exactly_its_count_of_distinct_usable_gpus(case: Case) -> None:
    result = run(case)
    ok = {d.index for d in case.devices if usable(d)}
    asked = {j.id: j.spec.gpus for j in case.pending}
    assert len({a.job_id for a in result}) == len(result)
    for a in result:
        assert len(a.gpus) == asked[a.job_id]
        assert len(set(a.gpus)) == len(a.gpus)
        assert set(a.gpus) <= ok
        assert list(a.gpus) == sorted(a.gpus)


@PROPS
@given(cases())
def test_max_running_is_never_exceeded(case: Case) -> None:
    result = run(case)
    cap = case.policy.max_running
    if cap is not None:
        assert len(result) <= max(0, cap - len(case.reservations))


@PROPS
@given(cases())
def test_cpu_jobs_cap_is_never_exceeded(case: Case) -> None:
    result = run(case)
    cap = case.policy.cpu_jobs
    if cap is not None:
        running = sum(1 for r in case.reservations if not r.gpus)
        assert sum(1 for a in result if not a.gpus) <= max(0, cap - running)


@PROPS
@given(cases())
def test_cpu_only_jobs_are_only_blocked_by_a_cap_or_host_memory(case: Case) -> None:
    result = run(case)
    started = {a.job_id for a in result}
    cap, cpu_cap = case.policy.max_running, case.policy.cpu_jobs
    cpu_running = sum(1 for r in case.reservations if not r.gpus)
    cpu_running += sum(1 for a in result if not a.gpus)
    ram_used = sum(j.spec.ram or 0 for j in case.pending if j.id in started)
    for j in case.pending:
        if j.spec.gpus == 0 and j.id not in started:
            capped = cap is not None and len(case.reservations) + len(result) >= cap
            cpu_capped = cpu_cap is not None and cpu_running >= cpu_cap
            free = None if case.host_free is None else case.host_free - case.policy.keep_ram
            # Passed over for host memory: it asked more than was left when its turn came,
            # so more than is left after the whole pass.
            no_ram = free is not None and (j.spec.ram or 0) > free - ram_used
            assert capped or cpu_capped or no_ram or project_full(case, result, j)


def project_full(case: Case, result: Sequence[Assignment], j: Job) -> bool:
    """Whether the job's project has as many jobs running, after the pass, as its limit."""
    limit = dict(case.policy.project_limits).get(j.spec.project or "")
    if limit is None:
        return False
    started = {a.job_id for a in result}
    mine = sum(1 for r in case.reservations if r.project == j.spec.project)
    mine += sum(1 for p in case.pending if p.id in started and p.spec.project == j.spec.project)
    return mine >= limit


@given(cases())
def test_no_project_runs_more_jobs_than_its_limit(case: Case) -> None:
    started = {a.job_id for a in run(case)}
    for name, limit in case.policy.project_limits:
        before = sum(1 for r in case.reservations if r.project == name)
        new = sum(1 for j in case.pending if j.id in started and j.spec.project == name)
        assert new <= max(0, limit - before)


@dataclass
class Room:
    """The oracle's view of one usable GPU, written from the rules as stated."""

    device: Device
    cap: int | None
    plain_ok: bool
    share_ok: bool
    load: Load = field(default_factory=Load)

    def free(self) -> float:
        return math.inf if self.cap is None else self.cap - self.load.mem

    def fits(self, spec: JobSpec) -> bool:
        d, one, what = self.device, self.load, kind(spec)
        if one.exclusive or (d.max_jobs is not None and one.count >= d.max_jobs):
            return False
        if what == "exclusive":
            big = spec.mem is None or self.free() >= spec.mem
            return self.plain_ok and one.count == 0 and big
        if what == "plain" or self.cap is None:
            return self.plain_ok and one.count < d.slots
        assert spec.mem is not None
        owned = one.plain > 0 and one.count >= d.slots
        return self.share_ok and not owned and self.free() >= spec.mem

    def could_ever(self, spec: JobSpec) -> bool:
        empty = Room(self.device, self.cap, self.plain_ok, self.share_ok)
        return empty.fits(spec)

    def add(self, spec: JobSpec) -> None:
        self.load.count += 1
        self.load.plain += kind(spec) == "plain"
        self.load.exclusive |= spec.exclusive
        self.load.mem += spec.mem or 0


def preferred(candidates: list[Room], n: int) -> set[int] | None:
    """The GPUs a job for n of `candidates` gets: all on one node (None when no node has n);
    among nodes, the emptiest n, then the node with the fewest candidates, then the lowest
    index."""
    nodes: dict[str | None, list[Room]] = {}
    for r in candidates:
        nodes.setdefault(r.device.node, []).append(r)
    options = []
    for group in nodes.values():
        if len(group) >= n:
            chosen = preferred_on_one_node(group, n)
            taken = sum(r.load.count - r.device.slots for r in chosen)
            room = sum(r.free() for r in chosen)
            key = (taken, -room, len(group), min(r.device.index for r in chosen))
            options.append((key, chosen))
    if not options:
        return None
    return {r.device.index for r in min(options, key=lambda o: o[0])[1]}


def preferred_on_one_node(candidates: list[Room], n: int) -> list[Room]:
    def rank(r: Room) -> tuple[int, int, float, float, int]:
        size = math.inf if r.device.memory_total is None else r.device.memory_total
        return (r.load.count, r.load.count - r.device.slots, size, -r.free(), r.device.index)

    ranked = sorted(candidates, key=rank)
    if len(ranked) == n or n == 1 or not any(r.device.links for r in ranked):
        return ranked[:n]

    def speed(a: Room, b: Room) -> int:
        return max(a.device.links.get(b.device.index, 0), b.device.links.get(a.device.index, 0))

    # Every set of n (a test machine has at most 8 GPUs): the fastest slowest link, then
    # the most link in all, then the best ranks, worst member first.
    def key(chosen: tuple[int, ...]) -> tuple[int, int, tuple[int, ...]]:
        pairs = [speed(ranked[a], ranked[b]) for a, b in itertools.combinations(chosen, 2)]
        return -min(pairs), -sum(pairs), chosen[::-1]

    best = min(itertools.combinations(range(len(ranked)), n), key=key)
    return [ranked[i] for i in best]


def rooms_of(case: Case) -> dict[int, Room]:
    """The usable GPUs with what the reservations hold on them."""
    policy = case.policy
    rooms = {
        d.index: Room(d, cap_of(d, policy), plain_ok(d, policy), share_ok(d, policy))
        for d in case.devices
        if usable(d)
    }
    for r in case.reservations:
        for i in r.gpus:
            if i in rooms:
                one = rooms[i].load
                one.count += 1
                one.plain += not (r.shares or r.exclusive)
                one.exclusive |= r.exclusive
                one.mem += r.mem
    return rooms


@PROPS
@given(cases())
def test_greedy_in_order_no_job_that_fits_is_passed_over(case: Case) -> None:
    """Replays the queue with plain bookkeeping and checks every decision plan made."""
    result = run(case)
    by_job = {a.job_id: a for a in result}
    assert [a.job_id for a in result] == [j.id for j in case.pending if j.id in by_job]

    policy = case.policy
    rooms = rooms_of(case)
    held: set[int] = set()
    holder: int | None = None
    running = len(case.reservations)
    cap = policy.max_running
    cpu_left = None if policy.cpu_jobs is None else policy.cpu_jobs
    if cpu_left is not None:
        cpu_left -= sum(1 for r in case.reservations if not r.gpus)
    ram_left = None if case.host_free is None else case.host_free - policy.keep_ram
    project_left = {
        name: limit - sum(1 for r in case.reservations if r.project == name)
        for name, limit in policy.project_limits
    }
    for j in case.pending:
        n, ram = j.spec.gpus, j.spec.ram or 0
        if (
            (cap is not None and running >= cap)
            or (ram_left is not None and ram > ram_left)
            or (n == 0 and cpu_left is not None and cpu_left <= 0)
            or project_left.get(j.spec.project or "", 1) <= 0
        ):
            assert j.id not in by_job
            continue
        if n == 0 and cpu_left is not None:
            cpu_left -= 1
        only = j.spec.only_gpus
        allowed = [r for i, r in rooms.items() if not only or i in only]
        fits_on = [r for r in allowed if r.device.index not in held and r.fits(j.spec)]
        if j.id in by_job:
            gpus = by_job[j.id].gpus
            assert set(gpus) == (preferred(fits_on, n) if n else set())
            for i in gpus:
                rooms[i].add(j.spec)
            running += 1
            if j.spec.project in project_left:
                project_left[j.spec.project] -= 1
            ram_left = None if ram_left is None else ram_left - ram
            continue
        assert n > 0 and preferred(fits_on, n) is None, f"job {j.id} fits but was passed over"
        if holder is None and NOW - j.queued_at >= policy.reserve_after:
            could = preferred([r for r in allowed if r.could_ever(j.spec)], n)
            if could is not None:
                holder = j.id
                held = could


def counting(jobs: Iterator[Job], pulled: list[int]) -> Iterator[Job]:
    for j in jobs:
        pulled.append(j.id)
        yield j


def gpu_jobs_forever() -> Iterator[Job]:
    for i in itertools.count():
        # A bug would otherwise hang the run instead of failing it.
        assert i < 100_000, "plan kept reading an endless queue"
        yield job(i)


@PROPS
@given(machines(), st.integers(0, 30))
def test_plan_stops_reading_once_nothing_more_can_start(
    machine: tuple[list[Device], list[Reservation]], extra: int
) -> None:
    devices, reservations = machine
    _, free = _free_slots(devices, reservations)
    # Each job takes one slot, so the cap is reached no later than the GPUs fill up: after
    # that not even a CPU-only job could start, and plan must stop reading. (Jobs without
    # --mem, default policy: a GPU with other users' processes is busy.)
    cap = len(reservations) + min(extra, free)
    pulled: list[int] = []
    result = plan(
        counting(gpu_jobs_forever(), pulled), devices, reservations, Policy(max_running=cap), NOW
    )
    assert len(result) == cap - len(reservations)
    last = result[-1].job_id if result else -1
    assert pulled == list(range(last + 1))


def _free_slots(
    devices: Sequence[Device], reservations: Sequence[Reservation]
) -> tuple[dict[int, int], int]:
    held = Counter(i for r in reservations for i in r.gpus)
    alone = {i for r in reservations if r.exclusive for i in r.gpus}
    left = {
        d.index: min(d.slots, d.max_jobs or d.slots) - held[d.index]
        for d in devices
        if usable(d) and plain_ok(d, Policy()) and d.index not in alone
    }
    return left, sum(max(0, n) for n in left.values())


def test_full_gpus_and_cap_reached_read_nothing() -> None:
    devices = [Device(0), Device(1)]
    reservations = [Reservation(1, (0,)), Reservation(2, (1,))]
    pulled: list[int] = []
    jobs = counting(gpu_jobs_forever(), pulled)
    assert plan(jobs, devices, reservations, Policy(max_running=2), NOW) == []
    assert pulled == []


def test_higher_priority_job_takes_the_only_free_slot() -> None:
    devices = [Device(0), Device(1)]
    reservations = [Reservation(1, (0,))]
    pending = sorted([job(10, priority=0), job(11, priority=10)], key=queue_order_key)
    assert plan(pending, devices, reservations, Policy(), NOW) == [Assignment(11, (1,))]


def test_cpu_only_job_starts_when_all_gpus_are_busy() -> None:
    devices = [Device(0)]
    reservations = [Reservation(1, (0,))]
    pending = [job(10), job(11, gpus=0), job(12)]
    assert plan(pending, devices, reservations, Policy(), NOW) == [Assignment(11, ())]


def test_starving_big_job_holds_gpus_against_small_jobs_behind_it() -> None:
    devices = [Device(0), Device(1)]
    reservations = [Reservation(1, (0,))]
    big = job(10, gpus=2, queued_at=NOW - 301)
    small = job(11, gpus=1)
    policy = Policy(reserve_after=300)
    assert plan([big, small], devices, reservations, policy, NOW) == []
    # A CPU-only job is still welcome: it needs none of the held GPUs.
    cpu = job(12, gpus=0)
    assert plan([big, small, cpu], devices, reservations, policy, NOW) == [Assignment(12, ())]


def test_small_job_backfills_until_the_big_job_has_waited_long_enough() -> None:
    devices = [Device(0), Device(1)]
    reservations = [Reservation(1, (0,))]
    big = job(10, gpus=2, queued_at=NOW - 299)
    small = job(11, gpus=1)
    policy = Policy(reserve_after=300)
    assert plan([big, small], devices, reservations, policy, NOW) == [Assignment(11, (1,))]


def test_a_starving_job_holds_only_gpus_it_could_ever_use() -> None:
    devices = [
        Device(0, memory_total=80 * GIB),
        Device(1, memory_total=80 * GIB),
        Device(2, memory_total=16 * GIB),
        Device(3, memory_total=16 * GIB),
    ]
    reservations = [Reservation(1, (0,)), Reservation(2, (1,))]
    big = job(10, gpus=2, mem=40 * GIB, queued_at=0.0)
    small = [job(11), job(12)]
    assert plan([big, *small], devices, reservations, Policy(), NOW) == [
        Assignment(11, (2,)),
        Assignment(12, (3,)),
    ]


def test_a_job_that_cannot_start_on_the_usable_gpus_holds_nothing() -> None:
    devices = [Device(0, foreign_processes=1), Device(1), Device(2)]
    reservations = [Reservation(1, (1,))]
    big = job(10, gpus=3, queued_at=0.0)
    assert plan([big, job(11)], devices, reservations, Policy(), NOW) == [Assignment(11, (2,))]


def test_only_the_first_starving_job_holds_gpus() -> None:
    devices = [Device(i) for i in range(4)]
    reservations = [Reservation(1, (0,)), Reservation(2, (1,))]
    first = job(10, gpus=3, queued_at=0.0)  # holds 2, 3 and 0
    second = job(11, gpus=4, queued_at=0.0)
    assert plan([first, second, job(12)], devices, reservations, Policy(), NOW) == []
    devices.append(Device(4))
    assert plan([first, second, job(12)], devices, reservations, Policy(), NOW) == [
        Assignment(10, (2, 3, 4))
    ]


def test_jobs_spread_over_the_emptiest_gpus() -> None:
    devices = [Device(0, slots=2), Device(1, slots=2), Device(2, slots=2)]
    reservations = [Reservation(1, (0,))]
    pending = [job(10), job(11), job(12, gpus=2)]
    assert plan(pending, devices, reservations, Policy(), NOW) == [
        Assignment(10, (1,)),
        Assignment(11, (2,)),
        Assignment(12, (0, 1)),
    ]


def test_memory_picks_the_gpu_with_room_and_ignores_removed_gpus() -> None:
    devices = [Device(0, slots=2, memory_total=40 * GIB), Device(1, slots=2, memory_total=80 * GIB)]
    reservations = [Reservation(1, (1, 7), mem=50 * GIB)]
    pending = [job(10, mem=35 * GIB), job(11, mem=35 * GIB), job(12, mem=10 * GIB)]
    assert plan(pending, devices, reservations, Policy(), NOW) == [
        Assignment(10, (0,)),
        Assignment(12, (1,)),
    ]


def test_draining_and_foreign_gpus_are_not_used() -> None:
    devices = [
        Device(0, state=DeviceState.DRAINING),
        Device(1, foreign_processes=2),
        Device(2),
    ]
    assert plan([job(10), job(11)], devices, [], Policy(), NOW) == [Assignment(10, (2,))]


def test_why_waiting() -> None:
    devices = [Device(0, memory_total=80 * GIB), Device(1, memory_total=80 * GIB)]
    busy = [Reservation(1, (0,), mem=70 * GIB)]
    assert why_waiting(job(10, gpus=2), devices, busy) == "waiting for 2 free GPUs"
    assert why_waiting(job(10), devices, [*busy, Reservation(2, (1,))]) == (
        "waiting for a free GPU"
    )
    two = [Device(0, slots=2, memory_total=80 * GIB)]
    assert why_waiting(job(10, mem=20 * GIB), two, busy) == (
        "waiting for 20.0 GiB free on 1 GPU (job 1 holds 70.0 GiB of GPU 0)"
    )
    foreign = [Device(0, foreign_processes=1), Device(1)]
    assert why_waiting(job(10, gpus=2), foreign, []) == (
        "waiting for 2 free GPUs (GPU 0 is busy with other users' processes)"
    )
    assert why_waiting(job(10, gpus=0), devices, busy) == "starting"  # nothing holds it back
    capped = Policy(max_running=1)
    assert why_waiting(job(10, gpus=0), devices, busy, capped) == (
        "waiting for a run slot (1 running: config max-running)"
    )
    assert why_waiting(job(10, gpus=1), devices, busy, capped).startswith("waiting for a run")
    two_cpu = Policy(cpu_jobs=2)
    cpu_busy = [*busy, Reservation(2, ()), Reservation(3, ())]
    assert why_waiting(job(10, gpus=0), devices, cpu_busy, two_cpu) == (
        "waiting for a CPU slot (2 running: config cpu-jobs)"
    )
    assert why_waiting(job(10, gpus=0), devices, cpu_busy[:2], two_cpu) == "starting"


def test_a_job_with_only_gpus_waits_for_those_and_is_told_why() -> None:
    devices = [Device(0), Device(1), Device(2, state=DeviceState.DRAINING)]
    on_1 = [Reservation(1, (1,))]
    assert plan([job(10, only_gpus=(1,)), job(11)], devices, on_1, Policy(), NOW) == [
        Assignment(11, (0,))  # GPU 0 is free, but job 10 may use GPU 1 alone
    ]
    assert why_waiting(job(10, only_gpus=(1, 2)), devices, on_1) == (
        "waiting for a free GPU of --only-gpus 1,2 (GPU 1 is full of gpuherd jobs; "
        "GPU 2 is draining)"
    )
    assert why_waiting(job(10, only_gpus=(1, 7)), devices, on_1) == (
        "waiting for a free GPU of --only-gpus 1,7 "
        "(GPU 1 is full of gpuherd jobs; GPU 7 is not there now: `gpuherd gpus`)"
    )
    # A starving job holds GPUs it may use only; GPU 0 stays open to the jobs behind it.
    old = job(10, gpus=2, only_gpus=(1, 2), queued_at=NOW - 1000)
    two = [Device(0), Device(1), Device(2)]
    assert plan([old, job(11), job(12)], two, on_1, Policy(), NOW) == [Assignment(11, (0,))]


def test_a_wide_only_gpus_is_said_in_ranges() -> None:
    devices = [Device(i) for i in range(4)]
    wide = tuple(range(2, 4000))
    busy = [Reservation(1, (2,)), Reservation(2, (3,))]
    reason = why_waiting(job(10, only_gpus=wide), devices, busy)
    assert reason.startswith("waiting for a free GPU of --only-gpus 2-3999 (")
    assert "GPUs 4-3999 are not there now" in reason and len(reason) < 200


def test_a_limit_lowered_below_the_running_jobs_says_both() -> None:
    devices = [Device(i) for i in range(4)]
    two = [Reservation(1, (0,), project="p"), Reservation(2, (1,), project="p")]
    lower = Policy(project_limits=(("p", 1),), max_running=3)
    assert why_waiting(job(10, project="p"), devices, two, lower) == (
        "waiting for a run slot of project p (2 running, at most 1: config project-limits)"
    )
    exact = Policy(project_limits=(("p", 2),))
    assert why_waiting(job(10, project="p"), devices, two, exact) == (
        "waiting for a run slot of project p (2 running: config project-limits)"
    )
    assert why_waiting(job(10), devices, two, Policy(max_running=1)) == (
        "waiting for a run slot (2 running, at most 1: config max-running)"
    )


def test_never_fits_with_only_gpus() -> None:
    devices = [Device(0), Device(1), Device(2, state=DeviceState.DRAINING)]
    assert never_fits(1, None, devices, only=(2,)) is None  # draining passes
    assert never_fits(2, None, devices, only=(1,)) == (
        "asks for 2 GPUs but --only-gpus names 1: give fewer gpus (--gpus), at most 1, or name "
        "more in only_gpus (--only-gpus)"
    )
    assert never_fits(2, None, devices, only=(1, 5, 6)) == (
        "asks for 2 GPUs of --only-gpus 1,5,6, but gpuherd has no GPUs 5, 6"
        ": give fewer gpus (--gpus), at most 1, or other only_gpus (--only-gpus)"
    )
    # The most that would fit is said, not one less than asked: 2 of the 4 named are absent.
    assert never_fits(4, None, devices, only=(1, 2, 5, 6)) == (
        "asks for 4 GPUs of --only-gpus 1,2,5,6, but gpuherd has no GPUs 5, 6"
        ": give fewer gpus (--gpus), at most 2, or other only_gpus (--only-gpus)"
    )
    assert never_fits(1, None, devices, only=(5,)) == (  # nothing fewer fits: the GPUs there are
        "asks for 1 GPU of --only-gpus 5, but gpuherd has no GPU 5: name GPUs gpuherd has in "
        "only_gpus (--only-gpus): 0-2"
    )
    big = [Device(0, memory_total=80 * GIB), Device(1, memory_total=40 * GIB)]
    assert never_fits(1, 60 * GIB, big, only=(1,)) == (
        "asks for 60.0 GiB per GPU but the largest GPU of --only-gpus 1 has 40.0 GiB: give a "
        "smaller mem (--mem), at most 40.0 GiB"
    )  # not "the largest GPU", which GPU 0 (80 GiB) is
    three = [*big, Device(2, memory_total=80 * GIB)]
    assert never_fits(2, 60 * GIB, three, only=(0, 1)) == (
        "asks for 2 GPUs with 60.0 GiB each but only 1 GPU of --only-gpus 0,1 has that much"
        ": give fewer gpus (--gpus), at most 1, or other only_gpus (--only-gpus)"
    )


def test_cpu_jobs_cap_passes_over_cpu_only_jobs_and_not_the_gpu_jobs_behind_them() -> None:
    devices = [Device(0), Device(1)]
    pending = [job(10, gpus=0), job(11), job(12, gpus=0), job(13, gpus=0)]
    one_cpu = Policy(cpu_jobs=1)
    assert plan(iter(pending), devices, [Reservation(1, ())], one_cpu, NOW) == [
        Assignment(11, (0,))
    ]
    assert plan(iter(pending), devices, [], one_cpu, NOW) == [
        Assignment(10, ()),
        Assignment(11, (0,)),
    ]
    # With every GPU taken only CPU-only jobs are read, and no further than the cap.
    full = [Reservation(1, (0,)), Reservation(2, (1,))]
    assert plan(iter(pending), devices, full, Policy(cpu_jobs=2), NOW) == [
        Assignment(10, ()),
        Assignment(12, ()),
    ]


def test_never_fits() -> None:
    devices = [Device(0, memory_total=80 * GIB), Device(1, state=DeviceState.DRAINING)]
    assert (
        never_fits(3, None, devices)
        == "asks for 3 GPUs but gpuherd has only 2: give fewer gpus (--gpus), at most 2"
    )
    assert never_fits(1, None, []) == (
        "asks for 1 GPU but gpuherd has none: give gpus 0 (--gpus 0) for a CPU-only job"
    )
    assert never_fits(2, None, devices) is None
    assert never_fits(0, 10**15, []) is None
    big = [Device(0, memory_total=80 * GIB), Device(1, memory_total=40 * GIB)]
    assert never_fits(1, 100 * GIB, big) == (
        "asks for 100.0 GiB per GPU but the largest GPU has 80.0 GiB: give a smaller mem (--mem), "
        "at most 80.0 GiB"
    )
    assert never_fits(2, 60 * GIB, big) == (
        "asks for 2 GPUs with 60.0 GiB each but only 1 GPU has that much"
        ": give fewer gpus (--gpus), at most 1, or a smaller mem (--mem)"
    )
    assert never_fits(1, 60 * GIB, big) is None
    assert never_fits(2, 60 * GIB, [Device(0), Device(1)]) is None  # sizes unknown


def test_an_idle_gpu_goes_before_sharing_one_with_more_slots() -> None:
    # `--gpus 0,0,1` (gpu-hog): GPU 0 may take two jobs. Both had one free slot once GPU 0
    # held a job, and the tie went to GPU 0 while GPU 1 sat idle.
    devices = [Device(index=0, slots=2), Device(index=1, slots=1)]
    placed = plan(iter([job(1), job(2), job(3)]), devices, [], Policy(), NOW)
    assert [a.gpus for a in placed] == [(0,), (1,), (0,)]
    # `--gpus 0,0,1,2,2,2`: one job on each GPU before any shares.
    devices = [Device(index=0, slots=2), Device(index=1, slots=1), Device(index=2, slots=3)]
    placed = plan(iter([job(1), job(2), job(3)]), devices, [], Policy(), NOW)
    assert sorted(a.gpus for a in placed) == [(0,), (1,), (2,)]
