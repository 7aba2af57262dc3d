"""The dashboard's server-sent event streams: one per page.

- `/ui/events` (overview, jobs, GPUs): a `change` event when the queue changed, at most one
  per COALESCE seconds however many jobs changed. A page gives its stream the mark it was
  drawn at (`since=`, Broadcast.mark): a stream that (re)connects says `change` only for
  changes it missed since (none: the page is not fetched again for nothing); without `since`,
  it says `change` at once.
- `/ui/jobs/{id}/stream` (a job's page): `stdout` and `stderr` events carry new log text as
  escaped HTML to append; `state` says the job changed; `attempt` that a new attempt began;
  `end` that nothing more will come (`state` on connect too, unless `since=` says nothing
  changed since the page was drawn). Each log event's id is `attempt:stdout:stderr` byte
  offsets, so a reconnect (Last-Event-ID, or `resume=`) goes on exactly where it stopped.
  With `live=1` (the job's page) a finished job's stream does not end: it waits for the job
  to change again (a retry), says `state`, and `attempt` once the new attempt begins; `end`
  comes only if the job is removed. The page stays live with its one stream. A new attempt
  is one past `latest=`, the job's latest when the page was drawn: also one begun before
  the stream connected.
"""

from __future__ import annotations

import asyncio
import html
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.responses import StreamingResponse

from gpuherd.api import views
from gpuherd.api.id_params import JobId
from gpuherd.api.log_cursor import LogCursor
from gpuherd.api.routes import RouteTable
from gpuherd.broadcast import GAP, Change
from gpuherd.core.int64 import holds, whole
from gpuherd.core.text import drop_escapes
from gpuherd.errors import HerdError
from gpuherd.service import Service

routes = RouteTable(include_in_schema=False)
COALESCE = 0.3
"""Seconds to gather state changes into one `change` event."""
SWEEP_COALESCE = 1.0
"""Seconds to gather changes before a sweep page (which reads every point's metrics) reloads;
longer for big sweeps (a table of 10,000 points takes about 0.3 s to build): one second per
SWEEP_JOBS_PER_SECOND of the sweeps' jobs, at most SWEEP_MAX_PAUSE."""
SWEEP_JOBS_PER_SECOND = 2000
SWEEP_MAX_PAUSE = 10.0
MAX_LOOKUPS = 50
"""More new jobs than this in one batch (a sweep submitted): refresh without asking each."""
POLL = 0.25
"""Seconds between looks at a running job's log files (they have no change notification)."""
WAITING_REFRESH = 1.0
"""A waiting job's page says why it waits, which other jobs' changes alter (a GPU freed, a
dependency done): after such a change its head is refreshed, at most once per this long."""
WAITING = ("queued", "held")
FINISHED = {"succeeded", "failed", "killed", "cancelled", "lost"}
SSE_HEADERS = {"cache-control": "no-store", "x-accel-buffering": "no"}
_NEWLINES = re.compile(r"\r\n|\r|\n")


def sse(event: str, data: str, event_id: str | None = None) -> str:
    """One server-sent event; every line of `data` gets its own `data:` field."""
    lines = [f"event: {event}"]
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines += [f"data: {line}" for line in _NEWLINES.split(data)]
    return "\n".join(lines) + "\n\n"


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def _stream(events: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(events, media_type="text/event-stream", headers=SSE_HEADERS)


def _connected(since: str) -> str:
    """What a page's stream says first: with the page's mark, nothing (what was missed since
    comes as changes); without, `change` at once (fetch what you may have missed)."""
    return "retry: 2000\n\n" + ("" if since else sse("change", "connected"))


@routes.get("/ui/events")
async def page_events(request: Request, since: str = "") -> StreamingResponse:
    service = _service(request)

    async def events() -> AsyncIterator[str]:
        changes = service.engine.changes.subscribe(since=since or None)
        try:
            yield _connected(since)
            while True:
                if await changes.get() is None:
                    return  # the daemon is stopping
                await asyncio.sleep(COALESCE)
                while not changes.empty():
                    if changes.get_nowait() is None:
                        return
                yield sse("change", "1")
        finally:
            service.engine.changes.unsubscribe(changes)

    return _stream(events())


@routes.get("/ui/sweep-events")
async def sweeps_events(request: Request, since: str = "") -> StreamingResponse:
    """`change` when a job of any sweep changed (the sweeps page)."""
    service = _service(request)
    return _stream(_sweep_changes(service, lambda: views.sweep_names(service), since))


@routes.get("/ui/sweep-events/{name}")
async def sweep_events(request: Request, name: str, since: str = "") -> StreamingResponse:
    """`change` when a job of sweep `name` changed (its page)."""
    return _stream(_sweep_changes(_service(request), lambda: [name], since))


async def _sweep_changes(
    service: Service, names: Callable[[], list[str]], since: str
) -> AsyncIterator[str]:
    """At most one `change` per SWEEP_COALESCE seconds (more for big sweeps) when a job of
    the sweeps `names()` changed, since the page's mark `since` (without: one at once).
    Whether a job belongs to one is asked once per job."""
    changes = service.engine.changes.subscribe(since=since or None)
    known: dict[int, bool] = {}
    try:
        yield _connected(since)
        while True:
            batch = [await changes.get()]
            await asyncio.sleep(_pause(service, names()))
            while not changes.empty():
                batch.append(changes.get_nowait())
            if None in batch:
                return  # the daemon is stopping
            ids = {c["id"] for c in batch if c is not None and isinstance(c.get("id"), int)}
            # A removed sweep: its jobs are gone (no longer found to be the sweep's), so
            # `sweep rm` says so once, by name (no longer among names() on the sweeps page).
            removed = any(c is not None and c.get("event") == "sweep-rm" for c in batch)
            if removed or GAP in batch or (ids and _touches(service, ids, names, known)):
                yield sse("change", "1")
    finally:
        service.engine.changes.unsubscribe(changes)


def _pause(service: Service, names: list[str]) -> float:
    jobs = sum(service.page_jobs(sweep=name, limit=0)[0] for name in names)
    return min(SWEEP_MAX_PAUSE, max(SWEEP_COALESCE, jobs / SWEEP_JOBS_PER_SECOND))


def _touches(
    service: Service, ids: set[int], names: Callable[[], list[str]], known: dict[int, bool]
) -> bool:
    """Is one of the jobs `ids` part of one of the sweeps? (Many new ids: assume so.)"""
    unknown = ids - known.keys()
    if len(unknown) > MAX_LOOKUPS:
        return True
    if len(known) > 100_000:
        known.clear()
    sweeps = names() if unknown else []
    for job_id in unknown:
        known[job_id] = any(
            service.page_jobs(search=f"#{job_id}", sweep=sweep, limit=0)[0] for sweep in sweeps
        )
    return any(known.get(job_id) for job_id in ids)


def _resume(text: str) -> tuple[int, int, int] | None:
    """ATTEMPT:OUT:ERR, where a page's stream stopped; None for text that is no such place
    (ignored, as a browser's stale Last-Event-ID: a number past 64 bits, or of more digits
    than int() reads, stopped the stream after its `state`, with no `end`)."""
    parts = text.split(":")
    if len(parts) != 3 or not all(p.isascii() and p.isdigit() for p in parts):
        return None
    numbers = [whole(p) for p in parts]
    return (numbers[0], numbers[1], numbers[2]) if all(map(holds, numbers)) else None


@routes.get("/ui/jobs/{job_id}/stream")
async def job_events(
    request: Request,
    job_id: JobId,
    attempt: int = 0,
    out: int = 0,
    err: int = 0,
    resume: str = "",
    live: bool = False,
    since: str = "",
    latest: int | None = None,
) -> StreamingResponse:
    service = _service(request)
    start = _resume(request.headers.get("last-event-id", "")) or _resume(resume)
    if start is not None:
        attempt, out, err = start
    page = _Page(attempt, out, err, live, since, latest)
    return _stream(_follow(service, job_id, page))


@dataclass(frozen=True)
class _Page:
    """What a job's page shows, as its stream's URL says."""

    number: int
    """The attempt whose logs it shows (0: the latest)."""
    out: int
    err: int
    """How far it shows them (byte offsets)."""
    live: bool
    since: str
    """The mark its head was drawn at ('': unknown, it may have missed anything)."""
    latest: int | None
    """The job's latest attempt when the page was drawn (None: as the stream finds it). A
    page showing that one follows the job's next attempt; one showing an older one stays."""


_GONE = sse("state", "1") + sse("end", "gone")
"""What a job page's stream says of its job removed: `state` first, so the page fetches its
head, which answers `no job N` in its message area (with `end` alone the stream closed and the
page went on showing the job, its buttons too, as if nothing had happened)."""


async def _follow(service: Service, job_id: int, page: _Page) -> AsyncIterator[str]:
    """The logs of the page's attempt from its offsets, and the job's changes (since the
    page's mark; without, `state` at once). A live page, once everything is read, waits for
    the job to change again rather than end (a finished job retried: its page follows the
    new attempt)."""
    changes = service.engine.changes.subscribe(since=page.since or None)
    cursors: list[LogCursor] = []
    try:
        job = _show(service, job_id)
        if job is None:
            yield "retry: 1000\n\n" + _GONE
            return
        # Compared with the attempt the page knew, not the one found now: an attempt begun
        # between the page's render and this connection is a new one (the page follows it).
        now = int(job["attempt"])
        latest = now if page.latest is None else min(max(page.latest, page.number), now)
        number = page.number if 1 <= page.number <= latest else latest
        cursors = _cursors(service, job_id, number, page.out, page.err)
        # Without the page's mark it may have missed anything: its head is fetched again.
        yield "retry: 1000\n\n" + ("" if page.since else sse("state", "1"))
        pace = _Pace()
        while True:
            if job["attempt"] != latest:
                following, latest = number == latest, int(job["attempt"])
                if following and number:  # a new attempt: the page follows it from its start
                    yield sse("attempt", str(latest))
                    return
                if following:  # the first attempt began
                    number = latest
                    cursors = _cursors(service, job_id, number, 0, 0)
            finished = job["state"] in FINISHED or number < latest
            events = _new_text(cursors, number, finished)
            if events:
                for event in events:
                    yield event
                continue
            if finished and not page.live:
                yield sse("end", "1")
                return
            # Finished logs do not grow: wait for a change, with no look at the files.
            changed = await _job_changed(changes, job_id, pace.timeout(finished))
            if changed is None:
                return  # the daemon is stopping
            if not pace.due(changed, job["state"] in WAITING):
                continue
            job = _show(service, job_id)
            if job is None:
                yield _GONE
                return
            yield sse("state", "1")
    finally:
        service.engine.changes.unsubscribe(changes)
        LogCursor.close(cursors)


class _Pace:
    """When a job's page is told `state`: at each change of the job, and for a waiting job
    after other jobs' changes too (they alter why it waits), at most once per
    WAITING_REFRESH."""

    def __init__(self) -> None:
        self.told = time.monotonic()
        self.others: float | None = None
        """Since when other jobs' changes are not yet told (None: none are pending)."""

    def timeout(self, finished: bool) -> float | None:
        wait = None if finished else POLL  # a finished job's logs do not grow
        if self.others is None:
            return wait
        left = max(0.0, self.others + WAITING_REFRESH - time.monotonic())
        return left if wait is None else min(wait, left)

    def due(self, changed: bool | str, waiting: bool) -> bool:
        """Whether to tell `state` now (and then it counts as told)."""
        if changed is OTHERS and waiting and self.others is None:
            self.others = self.told
        now = time.monotonic()
        if changed is True or (self.others is not None and now >= self.others + WAITING_REFRESH):
            self.told, self.others = now, None
            return True
        return False


def _show(service: Service, job_id: int) -> dict[str, Any] | None:
    try:
        return service.show(job_id)
    except HerdError:
        return None  # removed


OTHERS = "others"


async def _job_changed(
    changes: asyncio.Queue[Change | None], job_id: int, timeout: float | None
) -> bool | str | None:
    """Did job `job_id` change (or may it have: a gap; or its queue was paused or resumed)
    within `timeout` seconds? OTHERS: another job changed. None: the daemon is stopping."""
    try:
        change = await asyncio.wait_for(changes.get(), timeout)
    except TimeoutError:
        return False
    if change is None:
        return None
    if change is GAP or change.get("id") == job_id or "queue_paused" in change:
        return True
    return OTHERS


def _new_text(cursors: list[LogCursor], number: int, finished: bool) -> list[str]:
    """Events for what the logs gained since the last look, as escaped HTML."""
    events = []
    for cursor in cursors:
        text = cursor.read(final=finished)
        if text:
            offsets = f"{number}:{cursors[0].offset}:{cursors[1].offset}"
            events.append(sse(cursor.stream, _log_html(text), offsets))
    return events


CARRIAGE_RETURN = '<i class="cr"></i>'
"""Where a log redraws its line (logs.js wipes the line there, as a terminal would)."""


def _log_html(text: str) -> str:
    """Escaped log text. A carriage return that redraws a line (tqdm's progress bars) is sent
    as a marker: in server-sent events it would arrive as a line break, a line per redraw."""
    # A page shows a colour code as a box and `[32m` (the downloaded log keeps them).
    text = _last_drawings(drop_escapes(text).replace("\r\n", "\n"))
    return html.escape(text, quote=False).replace("\r", CARRIAGE_RETURN)


def _last_drawings(text: str) -> str:
    """`text` with each line redrawn in place cut to what logs.js would leave of it: its
    last drawing. A marker stays only where the line began in an earlier event (it wipes
    that) or may be drawn again by a later one (the text so far shows until then). Sent one
    per redraw, a fast progress bar's thousands of markers a second kept the page busy."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        drawings = line.split("\r")
        redraws = len(drawings) - 1
        if not redraws:
            continue
        if i == len(lines) - 1 and not drawings[-1]:  # ends with a return: waits for more
            wipe = "\r" if i == 0 and redraws > 1 else ""
            lines[i] = wipe + drawings[-2] + "\r"
        else:
            lines[i] = ("\r" if i == 0 else "") + drawings[-1]
    return "\n".join(lines)


def _cursors(service: Service, job_id: int, number: int, out: int, err: int) -> list[LogCursor]:
    if not number:
        return []
    held = service.engine.executor.user_files  # (HeldLog's keep_open)
    return [
        LogCursor(stream, service.log_path(job_id, stream, number), offset, held)
        for stream, offset in (("stdout", out), ("stderr", err))
    ]
