"""What one placement pass reads of the queue, and how far it got (a part of the engine).

A pass runs on every wake-up, and reading a queued job from the store costs some
microseconds: it reads the ready queue in dispatch order, but at most SCAN_LIMIT jobs worth
offering (the backfill depth). A job that fits must not wait because thousands of jobs of
another shape that cannot start stand before it (a CPU-only job behind GPU jobs, a 1-GPU job
behind 4-GPU ones): once the window is read, placement reads the queued jobs of each GPU
count it could still place on their own, through one index, each up to the same depth
(`behind`; placement asks only for the counts that fit the GPUs open then). Jobs that
cannot start in the pass are not read at all where that is known before: CPU-only jobs past
cpu-jobs, and jobs asking for more GPUs than are open unless one may reserve GPUs
(`reading`). A job the last pass did not reach is told so (`Scan.ahead`), not "starting".
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import TYPE_CHECKING

from gpuherd.core.model import Job, queue_order_key

if TYPE_CHECKING:
    from gpuherd.core.caps import Offering
    from gpuherd.store import Store

SCAN_LIMIT = 2000
"""How deep one placement pass looks into the queue for a job that fits, and again into the
jobs of each GPU count behind what it read."""


class Window:
    """At most `limit` jobs of one stream per pass, and where the last pass stopped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.end: tuple[int, float, int] | None = None
        """The dispatch-order key of the last job read when the pass read `limit` jobs:
        jobs after it were not looked at. None when the pass read fewer."""
        self.whole = False
        """Whether the last pass read the stream to its end (it left nobody behind)."""

    def read(self, jobs: Iterable[Job]) -> Iterator[Job]:
        self.end = None  # a pass that does not read this stream at all reached nobody here
        self.whole = False

        def counted() -> Iterator[Job]:
            for count, job in enumerate(jobs, 1):
                yield job
                if count >= self.limit:
                    self.end = queue_order_key(job)
                    return
            self.whole = True

        return counted()

    def passed_over(self, job: Job) -> bool:
        """Whether the last pass stopped reading before `job`."""
        return self.end is not None and queue_order_key(job) > self.end


class Scan:
    def __init__(self, store: Store, limit: int = SCAN_LIMIT) -> None:
        self._store = store
        self._limit = limit
        self._queue = Window(limit)
        self._shapes: dict[int, Window] = {}
        """The streams of one GPU count the last pass read behind its window, by count."""
        self._cpu_read = True
        """Whether the last pass read every CPU-only job it reached (False once as many ran,
        or were placed, as cpu-jobs lets: those after it wait for a CPU slot)."""
        self._blocked_from: int | None = None
        """The fewest GPUs a job may ask for that were not open as the last pass began
        (None: it read them all): the window read such jobs only while one might hold GPUs,
        and those it left wait for GPUs, not their turn."""
        self._hold_open = True
        """Whether no job held GPUs yet in this pass."""

    @contextlib.contextmanager
    def reading(
        self, offer: Offering, cpu_jobs: bool = True
    ) -> Iterator[tuple[Iterator[Job], Callable[[int], Iterator[Job]], dict[int, Job]]]:
        """(the window of the queue, `behind`, every job read by id), for one pass.

        The window reads CPU-only jobs only while one may start: without `cpu_jobs` (as
        many run as cpu-jobs lets) none, and none once placement says `cpu_full`. Placement
        would pass over each of them, but read them all to the window's end while a GPU was
        open: 1,500 of them queued took a third of the daemon's time, each pass building
        every one (a queue of `--gpus 0` jobs ran at ~90 jobs/s).

        Likewise the jobs that ask for more GPUs than are open (`offer.open_now()`): they
        can only hold GPUs, so the window reads those of one count only if one of its first
        `limit` jobs has starved (`offer.hold_after`), and no more once placement says
        `held`. 2,100 queued 4-GPU jobs with 3 GPUs free took 12-20 ms a pass, each read
        and passed over.

        `behind(gpus)`, asked once the window is read as far as placement goes: the queued
        jobs of `gpus` GPUs it did not read, in dispatch order (nothing when it read the whole
        queue). Placement reads them all lazily; the store's cursors are closed on exit (a
        half-read statement would hold a read snapshot)."""
        opened: list[Generator[Job, None, None]] = []
        seen: dict[int, Job] = {}
        self._shapes = {}
        self._cpu_read = cpu_jobs
        self._hold_open = True
        self._blocked_from = None  # (known once the window is read: `_gate`)

        def shape(gpus: int) -> Iterator[Job]:
            stream = self._store.queued_ready(gpus)
            opened.append(stream)
            window = self._shapes[gpus] = Window(self._limit)
            for job in window.read(offer.filter(j for j in stream if j.id not in seen)):
                yield seen.setdefault(job.id, job)

        def behind(gpus: int) -> Iterator[Job]:
            return iter(()) if self._queue.whole else shape(gpus)

        try:
            window = self._queue.read(offer.filter(self._queue_streams(opened, offer)))
            yield (seen.setdefault(job.id, job) for job in window), behind, seen
        finally:
            for stream in opened:
                stream.close()

    def _queue_streams(
        self, opened: list[Generator[Job, None, None]], offer: Offering
    ) -> Iterator[Job]:
        """The ready queue in dispatch order, less what `reading` leaves out: the stream of
        each GPU count (one index) merged, each read while a job of it may start or hold;
        where every count is read alike, the queue's own stream (one statement: the usual
        pass, ~0.1 ms less). Nothing is asked before the first job is (a pass with every
        GPU taken may read none: 0.06 ms with 100,000 queued, not 0.7)."""
        counts = self._store.gpus_queued()
        if counts is None:  # (a damaged count, or very many: read whole; damaged rows set aside)
            opened.append(whole := self._store.queued_ready())
            yield from whole
            return
        gates = {n: self._gate(n, offer) for n in counts}
        kept = {n: gate for n, gate in gates.items() if gate is not _SKIP}
        if len(set(gates.values())) == 1 and kept:  # (every count read alike)
            opened.append(whole := self._store.queued_ready())
            yield from _gated(whole, next(iter(kept.values())))
            return
        read = [self._store.queued_ready(n) for n in kept]
        opened += read
        streams = [_gated(stream, gate) for stream, gate in zip(read, kept.values(), strict=True)]
        yield from heapq.merge(*streams, key=queue_order_key)

    def _gate(self, gpus: int, offer: Offering) -> Callable[[], bool] | None:
        """While the jobs of `gpus` GPUs are worth reading in this pass: None = throughout,
        _SKIP = not at all."""
        if gpus == 0:
            return self._cpu_open if self._cpu_read else _SKIP
        if gpus == 1:  # (the window is read only while some GPU is open)
            return None
        if self._blocked_from is None:
            self._blocked_from = len(offer.open_now()) + 1
        if gpus < self._blocked_from:
            return None
        if offer.enabled is not None and gpus > offer.enabled:
            return _SKIP  # (no hold either: too few GPUs, some drained or removed)
        if not self._store.starving_queued(gpus, offer.hold_after, self._limit):
            return _SKIP
        return self._may_hold

    def _cpu_open(self) -> bool:
        return self._cpu_read

    def _may_hold(self) -> bool:
        return self._hold_open

    def cpu_full(self) -> None:
        """Placement may start no more CPU-only job in this pass: the window reads no more
        of them (it read them all to its end, each passed over, with GPUs open)."""
        self._cpu_read = False

    def held(self) -> None:
        """A job holds GPUs in this pass: the window reads no more jobs that could only
        have held (those asking for more GPUs than were open)."""
        self._hold_open = False

    def ahead(self, job: Job, most: int) -> int | None:
        """How many queued jobs (up to `most`) stand before `job` when the last pass stopped
        reading before it (it was offered no place, whatever room there is); None when it
        was read. A job behind the window counts as read if the stream of its GPU count
        reached it. A CPU-only job the pass did not read waits for a CPU slot, one asking
        for more GPUs than were open for GPUs (reasons.py)."""
        gpus, blocked = job.spec.gpus, self._blocked_from
        if (
            not self._queue.passed_over(job)
            or (gpus == 0 and not self._cpu_read)
            or (blocked is not None and gpus >= blocked)
        ):
            return None
        shape = self._shapes.get(job.spec.gpus)
        if shape is not None and not shape.passed_over(job):
            return None
        return self._store.count_queued_ahead(job, most)


def _skip() -> bool:
    return False


_SKIP: Callable[[], bool] = _skip
"""A gate that reads nothing: no job of its stream can start or hold in this pass."""


def _gated(jobs: Iterator[Job], gate: Callable[[], bool] | None) -> Iterator[Job]:
    """`jobs` while `gate()` says so (None: all of them)."""
    if gate is None:
        return jobs
    return itertools.takewhile(lambda _: gate(), jobs)
