"""What one placement pass reads of the queue, and how far it got (a part of the engine).

A pass runs on every wake-up, and reading a queued job from the store costs some
microseconds: it reads the ready queue in dispatch order, but at most SCAN_LIMIT jobs worth
offering (the backfill depth). A CPU-only job is never blocked by GPU slots (DESIGN.md), so
it must not wait because thousands of GPU jobs that cannot start stand before it: once the
GPUs are taken, or the window is read, the CPU-only jobs are read on their own, through
their own index, up to the same depth. A job the last pass did not reach is told so
(`Scan.ahead`), not "starting".
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from gpuherd.core.model import Job, queue_order_key

if TYPE_CHECKING:
    from gpuherd.core.caps import Offering
    from gpuherd.store import Store

SCAN_LIMIT = 2000
"""How deep one placement pass looks into the queue for a job that fits, and again into the
CPU-only jobs behind what it read."""


class Window:
    """At most `limit` jobs of one stream per pass, and where the last pass stopped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.end: tuple[int, float, int] | None = None
        """The dispatch-order key of the last job read when the pass read `limit` jobs:
        jobs after it were not looked at. None when the pass read fewer."""

    def read(self, jobs: Iterable[Job]) -> Iterator[Job]:
        self.end = None  # a pass that does not read this stream at all reached nobody here

        def counted() -> Iterator[Job]:
            for count, job in enumerate(jobs, 1):
                yield job
                if count >= self.limit:
                    self.end = queue_order_key(job)
                    return

        return counted()

    def passed_over(self, job: Job) -> bool:
        """Whether the last pass stopped reading before `job`."""
        return self.end is not None and queue_order_key(job) > self.end


class Scan:
    def __init__(self, store: Store, limit: int = SCAN_LIMIT) -> None:
        self._store = store
        self._queue = Window(limit)
        self._cpu = Window(limit)

    @contextlib.contextmanager
    def reading(
        self, offer: Offering
    ) -> Iterator[tuple[Iterator[Job], Iterator[Job], dict[int, Job]]]:
        """(the window of the queue, the CPU-only jobs after what placement read of it, every
        job read by id), for one pass: placement reads them lazily; the store's cursors are
        closed on exit (a half-read statement would hold a read snapshot)."""
        pending = self._store.queued_ready()
        cpu = self._store.queued_ready(cpu_only=True)
        seen: dict[int, Job] = {}
        try:
            window = self._queue.read(offer.filter(pending))
            beyond = self._cpu.read(offer.filter(j for j in cpu if j.id not in seen))
            yield (
                (seen.setdefault(job.id, job) for job in window),
                (seen.setdefault(job.id, job) for job in beyond),
                seen,
            )
        finally:
            pending.close()
            cpu.close()

    def ahead(self, job: Job, most: int) -> int | None:
        """How many queued jobs (up to `most`) stand before `job` when the last pass stopped
        reading before it (it was offered no place, whatever room there is); None when it
        was read. A CPU-only job counts as read if the CPU-only stream reached it."""
        window = self._cpu if job.spec.gpus == 0 else self._queue
        if not window.passed_over(job):
            return None
        return self._store.count_queued_ahead(job, most)
