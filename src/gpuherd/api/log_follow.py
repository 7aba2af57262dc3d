"""Following a job's log (`gpuherd log -f`): server-sent events from its start to its end.

Without a fixed attempt the follow is of the job, not of one file: a job that has not started
is waited for, and when a retry starts another attempt the stream says so (an `attempt`
event) and goes on with that attempt's log.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import BinaryIO

from gpuherd.api.held_log import HeldLog
from gpuherd.broadcast import Change
from gpuherd.core.states import FINISHED_STATES
from gpuherd.errors import Conflict, InvalidValue, NotFound
from gpuherd.jobfiles import open_job_file, start_of_last_lines
from gpuherd.keep_alive import COMMENT, INTERVAL
from gpuherd.log_text import utf8_complete
from gpuherd.service import Service

CHUNK = 64 * 1024
"""Bytes of log text in one event."""
POLL = 0.2
"""Seconds between looks at a log that has not grown (files send no notification; a state
change of any job wakes the follow sooner)."""


Target = tuple[int, Path] | None
"""The attempt followed and its log; None before the job's first start."""


def log_of(service: Service, job_id: int, stream: str, attempt: int | None) -> Target:
    """The log to follow: of `attempt`, else of the job's latest attempt. An unknown job,
    stream or attempt raises (answered before the stream begins)."""
    try:
        return service.log_target(job_id, stream, attempt)
    except Conflict:
        if attempt:  # (0 means the latest, as for log_path)
            raise
        return None


def asked_offset(offset: int | None, lines: int | None) -> int:
    """The byte a log is asked from (0: its start), for `log` and `log/follow` alike: from
    `offset`, or from where its last `lines` lines begin, never both (`lines` alone was used,
    `offset` silently dropped)."""
    if offset is not None and lines is not None:
        raise InvalidValue("give offset (from that byte) or lines (the last N lines), not both")
    return offset or 0


def lines_start(f: BinaryIO, offset: int, lines: int | None) -> int:
    """Where an open log is read from, for `log` and `log/follow` alike: `offset`, or where
    its last `lines` lines begin; `lines` 0 is its end now (`tail -f -n 0`: only what comes
    from now on, and nothing for a log that is not followed)."""
    if lines is None:
        return offset
    if lines == 0:
        return max(offset, f.seek(0, os.SEEK_END))
    return max(offset, start_of_last_lines(f, lines))


def start_offset(target: Target, offset: int, lines: int | None) -> int:
    """Where a follow begins. Opening the log now answers a link or a pipe in its place with
    an error rather than an empty stream."""
    if target is None:  # not started: all it writes is new (also with `lines` 0)
        return 0
    try:
        with open_job_file(target[1]) as f:
            return lines_start(f, offset, lines)
    except FileNotFoundError:  # not written yet: from its first line
        return offset


async def follow_events(
    service: Service,
    job_id: int,
    stream: str,
    attempt: int | None,
    target: Target,
    position: int,
    raw: bool = False,
) -> AsyncIterator[str]:
    """`data` events with new text, `attempt` when the next attempt's log begins, `truncated`
    when the log was emptied or cut below where the follow had read (it goes on from its
    start, as `tail -f` does), then `end`.

    Text goes out in whole UTF-8 characters (a progress bar's █ is 3 bytes); once a log can
    no longer grow (its job ended, or a later attempt began) what is left goes out as it is.
    A keep-alive goes out after INTERVAL seconds without an event (keep_alive.py), so that a
    client tells a quiet job from a daemon that stopped answering.
    """
    changes = service.engine.changes.subscribe()
    log = HeldLog(keep_open=service.engine.executor.user_files)
    said = time.monotonic()  # when the stream last sent something
    try:
        while True:
            if cut_note := _truncated(log, target, position):  # (emptied, or logrotated)
                position, said = 0, time.monotonic()
                yield cut_note
            chunk = _read(log, target, position)  # before the state: the last lines are never lost
            cut = utf8_complete(chunk)
            if not cut:
                try:
                    state = service.job_states([job_id])[job_id]
                    latest = log_of(service, job_id, stream, None)
                except NotFound:  # removed meanwhile (`gpuherd rm`): before it ran, or after
                    yield _event("end", {"state": "removed", "ran": target is not None})
                    return
                # A log no longer grows once a later attempt began or the job ended.
                done = state in FINISHED_STATES or _number(latest) > _number(target)
                if done:
                    chunk = _read(log, target, position)
                    cut = len(chunk)
                if not cut and done:
                    if attempt or _number(latest) <= _number(target):
                        yield _event("end", {"state": state.value})
                        return
                    # Every attempt in turn, each from its start: retries that fail fast can
                    # run several attempts between two looks, and none may be skipped.
                    following = target
                    target = _next_attempt(service, job_id, stream, target)
                    position = log.position_in_next(_path(following), target[1], position)
                    if target[0] > 1:
                        yield _event("attempt", {"attempt": target[0]})
                        said = time.monotonic()
                    continue
            if cut and target is not None:  # (text is only ever read from a target)
                position += cut
                text = chunk[:cut].decode(errors="surrogateescape" if raw else "replace")
                yield _event("message", {"text": text, "attempt": target[0], "offset": position})
                said = time.monotonic()
                continue
            if (note := _idle_note(log, target, said)) is not None:
                yield note
                said = time.monotonic()
            if not await _looked_again(changes):
                return  # the daemon is stopping
    finally:
        service.engine.changes.unsubscribe(changes)
        log.close()


async def _looked_again(changes: asyncio.Queue[Change | None]) -> bool:
    """After POLL seconds, or sooner at a change of any job's state: False once the daemon
    is stopping (its change stream ends with None)."""
    try:
        return await asyncio.wait_for(changes.get(), POLL) is not None
    except TimeoutError:
        return True


def _idle_note(log: HeldLog, target: Target, said: float) -> str | None:
    """What a follow with no new text says, if anything: that its log was deleted, else a
    keep-alive once nothing went out for INTERVAL seconds (since `said`)."""
    if log.newly_deleted():
        return _event("deleted", {"attempt": _number(target), "path": str(log.path)})
    return COMMENT if time.monotonic() - said >= INTERVAL else None


def _truncated(log: HeldLog, target: Target, position: int) -> str | None:
    """A `truncated` event where the log was emptied or cut below `position` (`: > x.log`,
    logrotate's copytruncate): the follow reads on from its start, as `tail -f` does. It
    waited for the log to grow past `position` again, losing what was written below it."""
    if target is None or not log.shrunk_below(target[1], position):
        return None
    return _event("truncated", {"attempt": target[0], "path": str(target[1])})


def _read(log: HeldLog, target: Target, offset: int) -> bytes:
    return b"" if target is None else log.read(target[1], offset, CHUNK)


def _path(target: Target) -> Path | None:
    return None if target is None else target[1]


def _number(target: Target) -> int:
    """The attempt's number; 0 before the first."""
    return 0 if target is None else target[0]


def _next_attempt(service: Service, job_id: int, stream: str, target: Target) -> tuple[int, Path]:
    """The attempt after `target` (which exists: a later one began) and its log."""
    return service.log_target(job_id, stream, _number(target) + 1)


def _event(name: str, data: dict[str, object]) -> str:
    head = "" if name == "message" else f"event: {name}\n"  # unnamed: a plain data event
    return f"{head}data: {json.dumps(data)}\n\n"
