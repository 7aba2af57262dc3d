"""What each GPU can still take during one placement pass (pure; the bookkeeping of placement.py).

Three kinds of jobs share the GPUs (DESIGN.md, "Placement"):

- PLAIN (no --mem): takes a slot. A GPU takes PLAIN jobs while it holds fewer gpuherd jobs
  than its slots.
- SHARING (--mem): bound by memory. It needs `mem` bytes free, where free is the GPU's
  memory less the margin (`Policy.keep_free`), less what other users' processes use (when
  counted; `Device.foreign_memory` includes memory in use that no listed process holds),
  less what every gpuherd job on the GPU holds. A PLAIN job owns its GPU unless
  the user gave the GPU more slots: a SHARING job joins it only while the count of jobs is
  below the slots. On a GPU of unknown memory size a SHARING job is treated as PLAIN.
- EXCLUSIVE: needs a GPU without any gpuherd job, and nothing joins it there.

`Device.max_jobs` caps the count of gpuherd jobs for every kind. A job's GPUs are all on one
node (`Device.node`; GPUs without a node are one more node): see `pick`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from gpuherd.core.model import Device, DeviceState, ForeignMode, JobSpec, Policy, Reservation


class Kind(Enum):
    PLAIN = "plain"
    SHARING = "sharing"
    EXCLUSIVE = "exclusive"


PLAIN, SHARING, EXCLUSIVE = Kind.PLAIN, Kind.SHARING, Kind.EXCLUSIVE


def kind_of(spec: JobSpec) -> Kind:
    if spec.exclusive:
        return EXCLUSIVE
    return PLAIN if spec.mem is None else SHARING


def reservation_kind(r: Reservation) -> Kind:
    if r.exclusive:
        return EXCLUSIVE
    return SHARING if r.shares else PLAIN


def margin(total: int, keep_free: float) -> int:
    """Bytes of a GPU of `total` bytes that placement never hands out."""
    return math.ceil(min(max(keep_free, 0.0), 1.0) * total)


def foreign_memory(device: Device, policy: Policy) -> int:
    """Bytes of other users' processes that count against the GPU's memory."""
    return 0 if policy.foreign is ForeignMode.IGNORE else device.foreign_memory


def capacity(device: Device, policy: Policy) -> int | None:
    """Bytes placement may hand out on an empty GPU now; None when the size is unknown."""
    total = device.memory_total
    if total is None:
        return None
    return total - margin(total, policy.keep_free) - foreign_memory(device, policy)


def foreign_blocks(device: Device, policy: Policy) -> tuple[bool, bool]:
    """(busy for PLAIN and EXCLUSIVE jobs, busy for SHARING jobs) by other users' processes."""
    if device.foreign_processes <= 0:
        return False, False
    mode = policy.foreign
    return mode in (ForeignMode.AUTO, ForeignMode.EXCLUSIVE), mode is ForeignMode.EXCLUSIVE


@dataclass(slots=True)
class Gpu:
    """One usable GPU and the gpuherd jobs on it (reservations, then this pass's choices)."""

    index: int
    slots: int
    max_jobs: int | None
    cap: int | None
    """What `capacity` gives: None = unknown size, memory then never limits the GPU."""
    plain_ok: bool
    """Not busy with other users' processes for PLAIN and EXCLUSIVE jobs."""
    share_ok: bool
    links: Mapping[int, int] = field(default_factory=dict)
    node: str | None = None
    size: int | None = None
    """The GPU's whole memory (None: unknown): the smallest that fits is taken first."""
    count: int = 0
    plain: int = 0
    exclusive: bool = False
    held: int = 0
    """Bytes held by gpuherd jobs (a PLAIN reservation's mem may be its measured use)."""

    @property
    def free_mem(self) -> int | None:
        return None if self.cap is None else self.cap - self.held

    def rank(self) -> tuple[int, int, float, float, int]:
        # Fewest jobs, then most free slots, then the smallest GPU, then most free memory,
        # then lowest index: spreads jobs over the GPUs (an idle GPU before a half-used one
        # with more slots: `--gpus 0,0,1` lets GPU 0 take two jobs, it does not fill GPU 0
        # first), keeps a big GPU for the jobs only it can run (best fit: a job without --mem
        # took the 80 GiB GPU beside idle 24 GiB ones, and a --mem 50GiB job waited behind
        # it), and makes every pass deterministic. Unknown memory cannot run out: it ranks
        # as the roomiest, and the biggest.
        free = self.free_mem
        spare = -math.inf if free is None else -free
        size = math.inf if self.size is None else self.size  # (its whole memory: not `cap`,
        # less what others use, which made a GPU others use the first pick)
        return (self.count, self.count - self.slots, size, spare, self.index)

    def fits(self, kind: Kind, mem: int | None) -> bool:
        """Whether one more job of this kind (and --mem) may join the GPU now."""
        if self.exclusive or (self.max_jobs is not None and self.count >= self.max_jobs):
            return False
        if kind is EXCLUSIVE:
            return self.plain_ok and self.count == 0 and self.holds_ever(mem)
        if kind is PLAIN or self.cap is None:
            return self.plain_ok and self.count < self.slots
        need = mem or 0
        return (
            self.share_ok
            and (self.plain == 0 or self.count < self.slots)
            and self.cap - self.held >= need
        )

    def holds_ever(self, mem: int | None) -> bool:
        return mem is None or self.cap is None or self.cap >= mem

    def could_ever_hold(self, kind: Kind, mem: int | None) -> bool:
        """Whether the GPU, once its gpuherd jobs are gone, would take such a job."""
        if self.max_jobs is not None and self.max_jobs < 1:
            return False
        if kind is SHARING and self.cap is not None:
            return self.share_ok and self.holds_ever(mem)
        return self.plain_ok and self.holds_ever(mem if kind is EXCLUSIVE else None)

    def add(self, kind: Kind, mem: int | None) -> None:
        self.count += 1
        self.held += mem or 0
        if kind is PLAIN:
            self.plain += 1
        elif kind is EXCLUSIVE:
            self.exclusive = True


def load(
    devices: Sequence[Device], reservations: Sequence[Reservation], policy: Policy
) -> list[Gpu]:
    """The enabled GPUs, with what running and paused jobs already hold added on."""
    gpus: dict[int, Gpu] = {}
    for d in devices:
        if d.state is not DeviceState.ENABLED or d.slots < 1:
            continue
        plain_busy, share_busy = foreign_blocks(d, policy)
        gpus[d.index] = Gpu(
            d.index,
            d.slots,
            d.max_jobs,
            capacity(d, policy),
            not plain_busy,
            not share_busy,
            d.links,
            d.node,
            d.memory_total,
        )
    for r in reservations:
        kind = reservation_kind(r)
        for i in r.gpus:
            gpu = gpus.get(i)  # a GPU that is draining (or was removed) has nothing to give
            if gpu is not None:
                gpu.add(kind, r.mem)
    return list(gpus.values())


def within(gpus: list[Gpu], only: tuple[int, ...]) -> list[Gpu]:
    """The GPUs of `gpus` a job limited to `only` (`--only-gpus`; () = any) may use."""
    return [g for g in gpus if g.index in only] if only else gpus


def link(a: Gpu, b: Gpu) -> int:
    return max(a.links.get(b.index, 0), b.links.get(a.index, 0))


def by_node(gpus: Iterable[Gpu]) -> dict[str | None, list[Gpu]]:
    groups: dict[str | None, list[Gpu]] = {}
    for g in gpus:
        groups.setdefault(g.node, []).append(g)
    return groups


def most_on_a_node(gpus: Iterable[Gpu]) -> int:
    """How many of `gpus` the node with the most of them has."""
    return max(map(len, by_node(gpus).values()), default=0)


def pick(candidates: list[Gpu], n: int) -> list[Gpu] | None:
    """The n GPUs a job gets among `candidates` (all fitting it), all on one node; None when
    no node has n of them.

    On one node (or without nodes), see `_pick_on`. With several nodes that have n
    candidates, the one whose n chosen GPUs are emptiest (most free slots, then most free
    memory, over the n), then the one with the fewest candidates (so 1-GPU jobs fill a
    node before starting on an idle one, which stays whole for a bigger job), then the
    lowest GPU index.
    """
    if len(candidates) < n:
        return None
    groups = by_node(candidates)
    if len(groups) == 1:
        return _pick_on(candidates, n)
    best: tuple[tuple[int, float, int, int], list[Gpu]] | None = None
    for group in groups.values():
        if len(group) < n:
            continue
        chosen = _pick_on(group, n)
        key = _node_key(chosen, len(group))
        if best is None or key < best[0]:
            best = key, chosen
    return None if best is None else best[1]


def _node_key(chosen: list[Gpu], candidates: int) -> tuple[int, float, int, int]:
    free = [g.free_mem for g in chosen]
    room = math.inf if None in free else sum(f for f in free if f is not None)
    taken = sum(g.count - g.slots for g in chosen)
    return taken, -room, candidates, min(g.index for g in chosen)


ENUMERATED = 256
"""Up to this many candidate sets (C(GPUs, n)) `_pick_on` compares them all; a 2-8 GPU
node never has more (C(8, 4) = 70). Beyond, it grows a set from each GPU in turn."""


def _pick_on(candidates: list[Gpu], n: int) -> list[Gpu]:
    """The n GPUs a job gets among `candidates` of one node (at least n, all fitting it).

    Without link information: the n best-ranked. With it: the set whose slowest link is
    fastest (a collective runs at the pace of its slowest link), then whose links add up
    to most, then the best-ranked (`_links_key`); so a 2-GPU job
    gets a free NVLinked pair rather than the two emptiest GPUs, wherever the pair is.
    """
    if len(candidates) == n:
        return candidates
    ranked = sorted(candidates, key=Gpu.rank)
    if n == 1 or not any(g.links for g in candidates):
        return ranked[:n]
    speed = [[link(a, b) for b in ranked] for a in ranked]
    if math.comb(len(ranked), n) <= ENUMERATED:
        sets: Iterable[Sequence[int]] = itertools.combinations(range(len(ranked)), n)
    else:
        sets = (_grow(speed, seed, n) for seed in range(len(ranked)))
    best = min(sets, key=lambda chosen: _links_key(speed, chosen))
    return [ranked[i] for i in sorted(best)]


def _links_key(speed: list[list[int]], chosen: Sequence[int]) -> tuple[int, int, list[int]]:
    """Smaller is better: the fastest slowest link, the most link in all, then the best
    ranks, worst member first (`chosen` are positions in rank order): an idle pair beats
    the idlest GPU with a busy one, and without links the n best-ranked win."""
    pairs = [speed[a][b] for a, b in itertools.combinations(chosen, 2)]
    return -min(pairs), -sum(pairs), sorted(chosen, reverse=True)


def _grow(speed: list[list[int]], seed: int, n: int) -> list[int]:
    """n positions from `seed`: again and again the one whose slowest link to those chosen
    is fastest, then the best-ranked (for nodes with too many sets to compare them all)."""
    chosen, slowest = [seed], list(speed[seed])
    while len(chosen) < n:
        # max() keeps the first of equals, and positions are in rank order.
        rest = (i for i in range(len(slowest)) if i not in chosen)
        best = max(rest, key=slowest.__getitem__)
        chosen.append(best)
        slowest = [min(s, t) for s, t in zip(slowest, speed[best], strict=True)]
    return chosen


class Pass:
    """Capacity during one `plan` call; the `*_open` lists name the GPUs a later job may get."""

    def __init__(
        self, devices: Sequence[Device], reservations: Sequence[Reservation], policy: Policy
    ) -> None:
        self.usable = load(devices, reservations, policy)
        self.held: frozenset[int] = frozenset()
        self.holder: int | None = None
        """The job the `held` GPUs are kept for (one a pass: placement.py's `plan`)."""
        self.cannot_hold: set[tuple[Kind, int, int | None, tuple[int, ...]]] = set()
        self._reopen()

    def _reopen(self) -> None:
        # The open lists and `share_room` let most jobs that do not fit be turned away in
        # O(1): a long queue behind busy GPUs is mostly such jobs. Every GPU open to an
        # EXCLUSIVE job is open to a PLAIN one.
        gpus = [g for g in self.usable if g.index not in self.held]
        self.plain_open = [g for g in gpus if g.fits(PLAIN, None)]
        self.excl_open = [g for g in self.plain_open if g.count == 0]
        self.share_open = [g for g in gpus if g.fits(SHARING, 0)]
        free = [g.free_mem for g in self.share_open]
        self.share_room = sorted((math.inf if f is None else f for f in free), reverse=True)
        self.open = bool(self.plain_open or self.share_open)

    def choose(
        self, kind: Kind, n: int, mem: int | None, only: tuple[int, ...] = ()
    ) -> list[Gpu] | None:
        """The GPUs a job gets now (None: it does not fit); `only`: the GPUs it may use."""
        if kind is PLAIN:
            fit = self.plain_open
        elif kind is SHARING:
            need = mem or 0
            if n > len(self.share_room) or self.share_room[n - 1] < need:
                return None
            fit = [g for g in self.share_open if g.fits(SHARING, need)]
        else:
            fit = (
                self.excl_open if mem is None else [g for g in self.excl_open if g.fits(kind, mem)]
            )
        return pick(within(fit, only), n)

    def take(self, gpus: list[Gpu], kind: Kind, mem: int | None) -> None:
        for g in gpus:
            g.add(kind, mem)
        self._reopen()

    def hold(
        self, holder: int, kind: Kind, n: int, mem: int | None, only: tuple[int, ...] = ()
    ) -> bool:
        """Keep the n GPUs a starving job (`holder`, its id) would get first away from the
        jobs behind it.

        Only GPUs that could ever hold the job count: holding a GPU that is too small
        would block small jobs and never help the big one. When too few such GPUs are
        usable on one node (some draining or busy with other users' processes) nothing is
        held, so a job that cannot start at the moment does not freeze the whole queue.
        """
        key = (kind, n, mem, only)
        if key in self.cannot_hold:
            return False
        chosen = pick([g for g in within(self.usable, only) if g.could_ever_hold(kind, mem)], n)
        if chosen is None:
            self.cannot_hold.add(key)
            return False
        self.held = frozenset(g.index for g in chosen)
        self.holder = holder
        self._reopen()
        return True
