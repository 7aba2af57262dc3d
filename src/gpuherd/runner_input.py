"""`gpuherd run`'s input: commands as jobs, read on a thread of their own (a line that arrives
while jobs run is scheduled at once), in input order or longest first."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from gpuherd.core.ordering import longest_first
from gpuherd.git_lookups import LOOKUPS
from gpuherd.input_watch import InputWatch
from gpuherd.job_commits import GIT_WAIT
from gpuherd.wire import SubmitItem

JobSource = Iterable[SubmitItem]
Numbered = tuple[int, SubmitItem]
"""A job and its place in the input (from 0): its folder and its number in the report."""

INPUT_BATCH = 500
"""The most lines handed over, and submitted, at one wake-up of the run's loop: the engine
ticks between batches."""


@dataclass(frozen=True)
class Skipped:
    """Job `number` of the input, not run: it succeeded before, in `folder` (runner_rerun.py)."""

    number: int
    folder: str


@dataclass(frozen=True)
class NotRun:
    """Job `number` of the input, not run: its folder holds another job's success, which
    running it there would overwrite; `why` says so, and what to do (runner_rerun.py)."""

    number: int
    why: str


Arrival = Numbered | Skipped | NotRun | BaseException | None
"""What the reading thread hands over: a job, one skipped or not run (--skip-succeeded), the
error that ended the input, or its end."""


class Held:
    """How many jobs --order longest-first has read and not handed over yet: it reads the whole
    input first, so a run stopped meanwhile (a stream that never ends, then Ctrl-C) counts
    them as not run; and those read once the run was over (HandOver). (Written by the input's
    thread alone.)"""

    count = 0


class CommandItems:
    """The jobs, each with the git commit of `cwd` (job.json's `git`), looked up once, on a
    thread started now, at the run's start: a job read once git answered has it; the first
    waits for it until GIT_WAIT after the start at most (as a daemon's submission does), so a
    slow repository's git never holds the run's first job; those read before it answered go
    without, and get it when it comes (`lookup`: runner_commits.py)."""

    def __init__(self, commands: Iterable[str], gpus: int, cwd: str, env: dict[str, str]):
        self.lookup = LOOKUPS.commit((cwd, env.get("PATH")))
        until = time.monotonic() + GIT_WAIT
        self._items = _with_commit(commands, gpus, cwd, env, self.lookup, until)

    def __iter__(self) -> Iterator[SubmitItem]:
        return self._items


items_from_commands = CommandItems


def _with_commit(
    commands: Iterable[str],
    gpus: int,
    cwd: str,
    env: dict[str, str],
    lookup: Future[str | None],
    until: float,
) -> Iterator[SubmitItem]:
    for number, command in enumerate(commands):
        if number == 0:
            with contextlib.suppress(TimeoutError):
                lookup.result(timeout=max(0.0, until - time.monotonic()))
        commit = lookup.result() if lookup.done() else None
        yield SubmitItem(command=command, cwd=cwd, env=env, gpus=gpus, git=commit)


def drain(queue: asyncio.Queue[Any], most: int | None = None) -> list[Any]:
    """What the queue holds now (its first `most`, if given)."""
    items: list[Any] = []
    while not queue.empty() and (most is None or len(items) < most):
        items.append(queue.get_nowait())
    return items


def cancelled_get(get: asyncio.Future[Any]) -> list[Any]:
    """Cancel a pending `queue.get()`; what it had taken from the queue already, if anything
    (a cancelled get that had not leaves its item in the queue, for `drain`)."""
    get.cancel()
    return [get.result()] if get.done() and not get.cancelled() else []


def by_longest_first(
    numbered: Iterable[Numbered], times: Mapping[str, float], held: Held
) -> Iterator[Numbered]:
    """A generator, so that the whole input is read on the feeding thread. An input that
    fails midway (a stream's bad line) still runs the lines read before it, as in input
    order, then fails: they were held, and ended `not run`."""
    read = []
    failed: Exception | None = None
    try:
        for entry in numbered:
            read.append(entry)
            held.count += 1
    except Exception as exc:  # (as feed_in_thread catches it)
        failed = exc
    for entry in longest_first(read, lambda entry: times.get(entry[1].command)):
        held.count -= 1
        yield entry
    if failed is not None:
        raise failed


def feed_in_thread(source: Iterable[Numbered], put: Callable[[Arrival], None]) -> None:
    """Read the source on a thread, so a line that arrives while jobs run is scheduled at once;
    each arrival handed over by `put` (HandOver)."""

    def feed() -> None:
        try:
            for item in source:
                put(item)
        except Exception as exc:  # a generator or a file that fails midway
            put(exc)
        finally:
            put(None)

    threading.Thread(target=feed, name="gpuherd-run-input", daemon=True).start()


class HandOver:
    """Puts an arrival on the run's queue from the input's thread (in the order put). Those put
    while the loop is busy go over together, at one wake-up: a wake-up each (100,000 lines
    read while the loop started jobs) filled the loop's wake-up pipe, which also carries the
    signals it handles, and a Ctrl-C or SIGTERM then was lost, with a traceback. At most
    INPUT_BATCH wait: the thread then waits for the loop (which it would otherwise keep from
    the GIL, reading on: the first jobs started a second late). Once the run is over, `left`
    takes what was not handed over, and what arrives after."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        held: Held,
        watch: InputWatch | None = None,
    ) -> None:
        self._loop = loop
        self.queue: asyncio.Queue[Arrival] = asyncio.Queue()
        self._held = held  # (counts the jobs that arrive once the run is over, as not run)
        self._watch = watch or InputWatch()
        self._pending: list[Arrival] = []
        self._taken = threading.Condition()
        self._over = False

    def _hand(self) -> None:
        with self._taken:
            arrived = self._pending.copy()
            self._pending.clear()
            self._taken.notify()
        for arrival in arrived:
            self.queue.put_nowait(arrival)

    def __call__(self, arrival: Arrival) -> None:
        if arrival is None or isinstance(arrival, BaseException):
            self._watch.ended()  # (no job: `left` need not find it)
        with self._taken:
            full = len(self._pending) >= INPUT_BATCH
            while full and not (self._over or self._loop.is_closed()):
                self._taken.wait(0.1)
                full = len(self._pending) >= INPUT_BATCH
            if self._over:  # counted as not run if a job, else nothing more to say
                self._held.count += isinstance(arrival, tuple | NotRun)
                return
            self._pending.append(arrival)
            if len(self._pending) > 1:
                return  # the wake-up asked for the first takes this one too
        # A run stopped (Ctrl-C) with its input still open closes its loop while this thread
        # reads on: what arrives then has nowhere to go. Dropped, not a traceback at exit
        # (`Exception in thread gpuherd-run-input: ... Event loop is closed`).
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._hand)

    def left(self) -> list[Arrival]:
        """Once the run is over (on the loop's thread): the arrivals not handed over yet, once
        the input's thread has settled (input_watch.py: SETTLE at most); those it hands over
        from now on are counted in `held`."""
        with self._taken:
            self._over = True
            self._taken.notify()
        self._watch.settled()
        with self._taken:
            left = self._pending.copy()
            self._pending.clear()
            return left
