"""What one placement pass reads of the queue, and how far it got (a part of the engine).

A pass runs on every wake-up, and reading a queued job from the store costs some
microseconds: it reads the ready queue in dispatch order, but at most SCAN_LIMIT jobs worth
offering (the backfill depth). A job that fits must not wait because thousands of jobs of
another shape that cannot start stand before it (a CPU-only job behind GPU jobs, a 1-GPU job
behind 4-GPU ones): once the window is read, placement reads the queued jobs of each GPU
count it could still place on their own, through one index, each up to the same depth
(`behind`; placement asks only for the counts that fit the GPUs open then). A job the last
pass did not reach is told so (`Scan.ahead`), not "starting".
"""

from __future__ import annotations

import contextlib
import heapq
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

        `behind(gpus)`, asked once the window is read as far as placement goes: the queued
        jobs of `gpus` GPUs it did not read, in dispatch order (nothing when it read the whole
        queue). Placement reads them all lazily; the store's cursors are closed on exit (a
        half-read statement would hold a read snapshot)."""
        opened: list[Generator[Job, None, None]] = []
        seen: dict[int, Job] = {}
        self._shapes = {}
        self._cpu_read = cpu_jobs

        def shape(gpus: int) -> Iterator[Job]:
            stream = self._store.queued_ready(gpus)
            opened.append(stream)
            window = self._shapes[gpus] = Window(self._limit)
            for job in window.read(offer.filter(j for j in stream if j.id not in seen)):
                yield seen.setdefault(job.id, job)

        def behind(gpus: int) -> Iterator[Job]:
            return iter(()) if self._queue.whole else shape(gpus)

        try:
            window = self._queue.read(offer.filter(self._queue_streams(opened, cpu_jobs)))
            yield (seen.setdefault(job.id, job) for job in window), behind, seen
        finally:
            for stream in opened:
                stream.close()

    def _queue_streams(
        self, opened: list[Generator[Job, None, None]], cpu_jobs: bool
    ) -> Iterator[Job]:
        """The ready queue in dispatch order, its CPU-only jobs read only while one may start
        (`cpu_full`): where some are queued beside GPU jobs, the streams of each GPU count
        (one index) merged; else the queue's own (one statement: the usual pass, ~0.1 ms
        less)."""
        shapes = self._store.gpus_queued()
        if shapes is None or shapes[0] > 0 or (cpu_jobs and shapes[1] == 0):
            opened.append(whole := self._store.queued_ready())  # (of one kind, or none)
            return whole if shapes is None or shapes[0] > 0 else self._while_cpu_open(whole)
        counts = range(0 if cpu_jobs else 1, shapes[1] + 1)
        read = [self._store.queued_ready(n) for n in counts]
        opened += read
        streams: list[Iterator[Job]] = list(read)
        if cpu_jobs:
            streams[0] = self._while_cpu_open(streams[0])
        return heapq.merge(*streams, key=queue_order_key)

    def _while_cpu_open(self, jobs: Iterator[Job]) -> Iterator[Job]:
        """CPU-only `jobs` until placement may start no more of them."""
        for job in jobs:
            if not self._cpu_read:
                return
            yield job

    def cpu_full(self) -> None:
        """Placement may start no more CPU-only job in this pass: the window reads no more
        of them (it read them all to its end, each passed over, with GPUs open)."""
        self._cpu_read = False

    def ahead(self, job: Job, most: int) -> int | None:
        """How many queued jobs (up to `most`) stand before `job` when the last pass stopped
        reading before it (it was offered no place, whatever room there is); None when it
        was read. A job behind the window counts as read if the stream of its GPU count
        reached it. A CPU-only job the pass did not read waits for a CPU slot (reasons.py)."""
        if not self._queue.passed_over(job) or (job.spec.gpus == 0 and not self._cpu_read):
            return None
        shape = self._shapes.get(job.spec.gpus)
        if shape is not None and not shape.passed_over(job):
            return None
        return self._store.count_queued_ahead(job, most)
