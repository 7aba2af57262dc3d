"""Git lookups (git_commit.py) on daemon threads of their own: never on asyncio's shared pool,
where a slow repository's git held other requests' threads (`ls`) and the daemon's exit
(asyncio.run waits for that pool). A process that stops (the daemon, `gpuherd run`) stops
its lookups (`stop`, also at exit): the gits still running are killed, not left behind to run
on past their GIT_TIMEOUT (their threads enforced it), and the lookups they were for never
answer (job_commits.py has the next daemon look again).

One lookup in flight per place (a working directory and a PATH), shared by every submission
that asks meanwhile; its answer is reused for REUSE seconds after it came (40 submissions
from one folder in a loop run git once, not 40 times). So an edit saved within that second
of a submission from the same folder may be recorded as the state before it."""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field

from gpuherd.git_commit import Gits, Stopped, git_commit

log = logging.getLogger(__name__)

STOP_WAIT = 1.0
"""Seconds `stop` waits for the lookups' threads once their gits are killed (milliseconds)."""
REUSE = 1.0
"""Seconds a lookup's answer is reused for the same place after it came."""

Where = tuple[str, str | None]
"""A working directory and the submitter's PATH: what git is run with."""


@dataclass
class _Lookup:
    answer: Future[str | None] = field(default_factory=Future)
    came: float | None = None
    """When it answered (the clock's time); None while git runs."""


class GitLookups:
    """The commits of places, each looked up on a daemon thread (thread-safe)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, reuse: float = REUSE):
        self._clock = clock
        self._reuse = reuse
        self._lock = threading.Lock()
        self._lookups: dict[Where, _Lookup] = {}
        self._gits = Gits()
        self._threads: set[threading.Thread] = set()

    def commit(self, place: Where) -> Future[str | None]:
        """The commit of `place` (None: not in a work tree, or no git): the lookup in flight
        for it, or the answer of one that came less than `reuse` seconds ago, or a new one.
        The future gets a result (never an exception), unless the lookups stopped first."""
        return self.commits([place])[place]

    def commits(self, places: Iterable[Where]) -> dict[Where, Future[str | None]]:
        """`commit` of each place; the new lookups run one after the other on one thread (a
        batch from many folders starts one thread, not one for each)."""
        wanted = list(dict.fromkeys(places))
        with self._lock:
            now = self._clock()
            for old in [p for p, x in self._lookups.items() if self._stale(x, now)]:
                del self._lookups[old]
            new = {p: _Lookup() for p in wanted if p not in self._lookups}
            self._lookups.update(new)
            found = {p: self._lookups[p].answer for p in wanted}
            if new and not self._gits.stopped:
                thread = threading.Thread(
                    target=self._look_up, args=(new,), name="gpuherd-git", daemon=True
                )
                self._threads.add(thread)
                thread.start()
        return found

    def stop(self, wait: float = STOP_WAIT) -> None:
        """Kill the gits running, start none, and wait for their threads (up to `wait`
        seconds): the lookups in flight never answer."""
        self._gits.stop()
        until = time.monotonic() + wait
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(max(0.0, until - time.monotonic()))

    def _stale(self, lookup: _Lookup, now: float) -> bool:
        return lookup.came is not None and now - lookup.came >= self._reuse

    def _look_up(self, lookups: dict[Where, _Lookup]) -> None:
        try:
            for place, lookup in lookups.items():
                try:
                    commit = git_commit(*place, gits=self._gits)
                except Stopped:
                    log.info(
                        "git in %s killed as gpuherd stops (a next daemon looks again)", place[0]
                    )
                    return
                except Exception:  # (git_commit catches what running git raises; a bug: none)
                    commit = None
                with self._lock:
                    lookup.came = self._clock()
                lookup.answer.set_result(commit)
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())


LOOKUPS = GitLookups()
"""The process's lookups (the daemon's submissions and sweeps share them)."""
atexit.register(LOOKUPS.stop)  # (`gpuherd run`'s end; the daemon stops them first)
