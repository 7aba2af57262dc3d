"""`--max-log-size`, enforced: every LOG_CHECK_EVERY seconds, one `stat` of each log of each
running job that has a cap; a job whose log grew past it is stopped as a --timeout stops it
(Engine.stop_job: SIGTERM, SIGKILL after its grace), and ends `log_too_large`.

A log deleted (`rm` to free space) or renamed away (logrotate without copytruncate) while its
job runs is still the file the job writes to, filling the disk all the same: the look at its
path alone found none, or a new empty one, and the job ran on past its cap for ever. The file
first seen at each path is remembered, and once the path leads elsewhere it is looked at
through the job's own descriptor of it (/proc/PID/fd), as long as the job holds one.

Not at every tick: a busy queue ticks every few milliseconds. The daemon reads the files it
shows (`gpuherd log`): a Ray job's logs are the copies its daemon appends to (ray_follow.py),
on the disk the cap protects, so the cap holds there too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from gpuherd import jobfiles
from gpuherd.core.log_caps import NO_BASES, LogBases, LogSize, log_too_large, over_cap
from gpuherd.core.model import Attempt, Job
from gpuherd.core.output_files import Files
from gpuherd.layout import Layout

if TYPE_CHECKING:
    from gpuherd.attempts import Live

log = logging.getLogger("gpuherd.engine")

LOG_CHECK_EVERY = 2.0
"""Seconds between looks at the capped jobs' log sizes: a job that writes 100 MB/s passes its
cap by at most ~200 MB before its stop begins."""

FileId = tuple[int, int]
"""A file's (st_dev, st_ino): which file a path led to, or a descriptor is of."""
NamedLogs = tuple[tuple[str, Path], ...]
"""An attempt's log files, each with its name as the reason says it."""
BASES_KEY = "log_bases"
"""The key of an attempt's start record (attempt.json) keeping its logs' bases, for a next
daemon: a retry re-attached after a restart counts what it wrote, not the whole file."""


def named_logs(layout: Layout, job: Job, attempt: int, files: Files | None) -> NamedLogs:
    """Where attempt `attempt` of `job` writes its stdout and stderr (`files`: as it recorded
    them): one file named `output` where both go to it (`--output` without `--error`)."""
    stdout, stderr = (layout.log_file(job, attempt, s, files) for s in ("stdout", "stderr"))
    if stdout == stderr:
        return (("output", stdout),)
    return (("stdout", stdout), ("stderr", stderr))


def log_sizes(logs: NamedLogs) -> list[LogSize]:
    """Each log's bytes now; one that is not there (yet) is left out."""
    sizes = []
    for name, path in logs:
        try:
            sizes.append((name, os.stat(path).st_size))
        except OSError:
            continue
    return sizes


def start_bases(layout: Layout, job: Job, attempt: Attempt, appended: Collection[str]) -> LogBases:
    """Where a capped attempt's logs begin: the size now of each it adds to (`appended`: the
    files of the user's choosing its job's earlier attempts wrote, `-o logs/%j.log`), taken
    before its spawn, so what it writes at once is its own. Every other log begins empty (its
    folder's, or a file the attempt empties as it starts), and is left out."""
    if job.spec.max_log_size is None or not appended:
        return NO_BASES
    bases = {}
    for name, path in named_logs(layout, job, attempt.number, attempt.files):
        if str(path) in appended:
            with contextlib.suppress(OSError):
                bases[name] = os.stat(path).st_size
    return {name: size for name, size in bases.items() if size}


def watch_logs(
    live: Live, layout: Layout, job: Job, files: Files | None, bases: LogBases | None
) -> None:
    """Have the look watch `live`'s logs, if its job has a cap: where they are, and where they
    began (`bases`; None: re-attached after a restart, as its start record kept them), kept
    in its start record (attempt.json) for a next daemon."""
    if job.spec.max_log_size is None:
        return
    live.max_log_size = job.spec.max_log_size
    live.logs = named_logs(layout, job, live.attempt, files)
    if bases is None:
        bases = recorded_bases(jobfiles.attempt_info(str(live.attempt_dir)))
    live.log_bases = bases
    if bases:
        live.started_info = {**live.started_info, BASES_KEY: dict(bases)}


def recorded_bases(info: Mapping[str, object] | None) -> dict[str, int]:
    """The bases an attempt's start record keeps (`log_bases` of its attempt.json), for one
    re-attached after a restart or ended while no daemon watched. None recorded (the daemon
    died within the attempt's first second, before the record): each log counts whole, which
    may stop it sooner, never later."""
    kept = (info or {}).get(BASES_KEY)
    if not isinstance(kept, dict):
        return {}
    return {
        name: size
        for name, size in kept.items()
        if isinstance(name, str) and isinstance(size, int) and not isinstance(size, bool)
    }


def ended_reason(logs: NamedLogs, cap: int, bases: LogBases = NO_BASES) -> str:
    """What the end of an attempt stopped for its cap says, by its logs as it ended (what they
    hold, the grace's output too): `its stdout log reached 2.3 MiB, over --max-log-size ...`."""
    return log_too_large(over_cap(log_sizes(logs), cap, bases), cap, bases)


class LogCapWatch:
    """The periodic look: started with the engine's loop, stopped as the engine closes."""

    def __init__(
        self,
        live: Mapping[int, Live],
        on_over: Callable[[int], object],
        every: float = LOG_CHECK_EVERY,
    ) -> None:
        self._live = live
        self._on_over = on_over
        self._every = every
        self._timer: asyncio.TimerHandle | None = None
        self._seen: dict[tuple[int, Path], FileId] = {}
        """By (job id, log path): the file first seen there, which the job writes to."""

    def start(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(self._every, self._look)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _look(self) -> None:
        try:
            self.check()
        finally:
            if self._timer is not None:  # (else stopped meanwhile)
                self.start()

    def check(self) -> list[int]:
        """Stop each running job with a log over its cap; their ids. One being stopped
        already (by a kill, its timeout, its cap) is left to that stop; a paused one writes
        nothing, and is looked at again once resumed."""
        lives = list(self._live.values())
        running = {live.job_id for live in lives}
        self._seen = {key: seen for key, seen in self._seen.items() if key[0] in running}
        over = [
            live.job_id
            for live in lives
            if live.max_log_size is not None
            and live.stop_reason is None
            and not live.paused
            and over_cap(self._sizes(live), live.max_log_size, live.log_bases)
        ]
        for job_id in over:
            # Each on its own: its SIGTERM goes before its stop is stored, and a full disk
            # (what runaway logs make) failing one store must not leave the others running.
            try:
                self._on_over(job_id)
            except Exception:
                log.exception("could not record the stop of job %d for its log size", job_id)
        return over

    def _sizes(self, live: Live) -> list[LogSize]:
        """Each of `live`'s logs' bytes now (log_sizes's), a log deleted or renamed away
        counted by the file its job still writes to."""
        sizes = []
        for name, path in live.logs:
            size = self._size(live, path)
            if size is not None:
                sizes.append((name, size))
        return sizes

    def _size(self, live: Live, path: Path) -> int | None:
        """The bytes of the log at `path`: of the file there, or, where the file the job
        writes is gone from it (the one first seen there; one never seen, deleted) but still
        open in the job, the larger of the two (a job on a Ray cluster has its log made anew
        by name, which grows instead); None when neither is there."""
        key = (live.job_id, path)
        try:
            named: os.stat_result | None = os.stat(path)
        except OSError:
            named = None
        seen = self._seen.get(key)
        if named is not None and seen in (None, _file_id(named)):
            self._seen[key] = _file_id(named)
            return named.st_size
        held = held_file(live.pid, path, seen)
        if held is not None:
            self._seen[key] = _file_id(held)
            return max(held.st_size, 0 if named is None else named.st_size)
        if named is None:
            return None
        self._seen[key] = _file_id(named)  # the job no longer holds the one seen before
        return named.st_size


def _file_id(status: os.stat_result) -> FileId:
    return (status.st_dev, status.st_ino)


def held_file(pid: int, path: Path, seen: FileId | None) -> os.stat_result | None:
    """The status of the log that was at `path`, as process `pid` holds it open: the file
    `seen` there before, wherever it is now; not seen (deleted before a look, or while no
    daemon ran), the one the kernel names `PATH (deleted)`. None when `pid` holds no such
    descriptor (or is gone, or there is no /proc to tell)."""
    fds = f"/proc/{pid}/fd"
    deleted = f"{os.path.realpath(path)} (deleted)"  # (as the job's shell opened it)
    try:
        names = os.listdir(fds)
    except OSError:
        return None
    for fd in names:
        try:
            if seen is None and os.readlink(f"{fds}/{fd}") != deleted:
                continue
            status = os.stat(f"{fds}/{fd}")  # (the file itself, also once deleted)
        except OSError:  # (closed meanwhile)
            continue
        if seen is None or _file_id(status) == seen:
            return status
    return None
