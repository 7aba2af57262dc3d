"""Routes on jobs: submit, list, show, act, edit, logs, wait. Each parses, calls Service."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, BinaryIO

from fastapi import Depends, Header, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import PlainTextResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException
from starlette.types import Receive, Scope, Send

from gpuherd import job_commits, keep_alive
from gpuherd.api import log_follow
from gpuherd.api.change_events import RESUME_HEADER, change_events
from gpuherd.api.endpoints import EventStream, allowed_methods
from gpuherd.api.id_params import AttemptNumber, JobId
from gpuherd.api.job_wait import waited
from gpuherd.api.routes import RouteTable
from gpuherd.core.listing_filters import empty_filter
from gpuherd.core.states import LIVE_STATES
from gpuherd.core.sweep_spec import no_such_sweep
from gpuherd.core.when import window_refusal
from gpuherd.edit_warnings import EditedJob, edit_warnings
from gpuherd.errors import Conflict, Forbidden, InvalidValue, NotFound
from gpuherd.gc_pause import collector_paused
from gpuherd.jobfiles import open_job_file
from gpuherd.listing import ListingQuery, states_named
from gpuherd.listing_reader import encoded, let_go
from gpuherd.service import Service
from gpuherd.service_jobs import VERBS
from gpuherd.store_rows import LARGEST, JobFilter
from gpuherd.submission_folders import refuse_own_folders
from gpuherd.wire import ActionResult
from gpuherd.wire_requests import (
    EditRequest,
    IdsRequest,
    MoveRequest,
    PrioritiesRequest,
    PriorityRequest,
    SubmitRequest,
    WaitRequest,
)

routes = RouteTable()
# Queries' numbers stop at LARGEST: SQLite's and a file offset's limit (a larger `limit` was
# a 500, a larger log `offset` broke the stream after its 200).
DOWNLOAD_CHUNK = 1024 * 1024
"""Bytes read and sent at a time when a log is fetched whole."""


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


@routes.post("/jobs")
async def submit(request: Request, body: SubmitRequest) -> dict[str, Any]:
    """`draining`: the daemon is stopping once its running jobs end; these wait for the next.
    `cancelled`: the ids of jobs cancelled at once (dependency_failed), as a job they wait for
    already ended badly; `warnings` says so, a line for people (the CLI's `warning:`).
    Each job gets the git commit of its working directory, if any (job_commits.py)."""
    service = _service(request)
    items = body.items()
    refuse_own_folders(items, service.home)  # (a file, a link, another job's folder)
    fill = await job_commits.note_commits(items)  # (off the loop: git status on a thread)
    submitted = job_commits.submit(service, items, fill)  # (and those git has yet to answer for)
    return {
        "ids": submitted.ids,
        "draining": service.engine.stopping,
        "cancelled": sorted(submitted.cancelled),
        "warnings": submitted.warnings(),
    }


@routes.get("/jobs", response_model=dict[str, Any])
async def list_jobs(
    request: Request,
    state: Annotated[list[str] | None, Query()] = None,
    project: str | None = None,
    sweep: str | None = None,
    name: str | None = None,
    since: Annotated[float | None, Query(allow_inf_nan=False)] = None,
    until: Annotated[float | None, Query(allow_inf_nan=False)] = None,
    all: bool = False,
    limit: Annotated[int | None, Query(ge=1, le=LARGEST)] = None,
    newest: bool = False,
    ids_only: bool = False,
) -> dict[str, Any] | Response:
    """`filtered` names the filters applied: a client asking for a filter an older daemon
    ignores (it lists every job) must not act on that list (`kill $(ls -q --sweep S)`).
    `since` and `until` are epoch seconds (JobFilter says which jobs they pick). `more`:
    how many jobs that match the limit left out, `more_earlier` of them before the first
    listed (the oldest finished ones: core/nearest_now.py), the rest after the last.
    `unreadable`: the jobs left out as their rows cannot be read (id, and why: the way out).
    A filter that picks no job is refused (_refuse_no_match), as `ls` refuses it, and so is
    a `sweep` no job and no sweep has (_known_sweep)."""
    _refuse_no_match({"project": project, "sweep": sweep, "name": name}, since, until)
    match = JobFilter(project, sweep, name, since, until)
    query = ListingQuery(states_named(state or ()), match, all, limit, newest)
    filtered = {"filtered": ["project", "sweep", "name", "since", "until"]}
    service = _service(request)
    if ids_only:
        ids = await service.ls_ids_off_loop(query)
        _known_sweep(service, sweep, bool(ids))
        return {"ids": ids, **filtered}
    # The collector held off until the views are gone (ListingReader.listing says why).
    with collector_paused():
        jobs, left = await service.ls_off_loop(query)
        _known_sweep(service, sweep, bool(jobs or left.total or left.unreadable))
        more = {
            "more": left.total,
            "more_earlier": left.earlier,
            "database_replaced": service.database_replaced(),  # (`ls` says it too)
            "unreadable": [{"id": job_id, "error": why} for job_id, why in left.unreadable],
        }
        # Encoded off the loop: 100,000 jobs' JSON is ~0.2 s of it (listing_reader.py); the
        # views let go of there too, before the collector is back.
        body = await asyncio.to_thread(encoded, jobs, {**more, **filtered})
        await asyncio.to_thread(let_go, jobs)
    if len(body) <= DOWNLOAD_CHUNK:
        return Response(body, media_type="application/json")
    # Handed to the socket whole, a 50 MB answer was copied twice over by asyncio's transport
    # (what the socket did not take at once), on the loop: 0.1-0.3 s held. In pieces instead,
    # the loop let go between (uvicorn also waits there while the client is behind).
    return _InPieces(body, media_type="application/json")


def _known_sweep(service: Service, sweep: str | None, found: bool) -> None:
    """NotFound (`no sweep named 'lr-sweeep' (did you mean 'lr-sweep'?): ...`, as `GET
    /sweeps/{name}` says it) for a `sweep` that found no job as no sweep has that name: an
    empty list, a 200, made `kill $(ls -q --sweep TYPO)` stop nothing, without a word, in
    every client. Asked only then: a sweep's jobs prove it is known (`sweep rm` takes them)."""
    if sweep is not None and not found and service.store.get_sweep(sweep) is None:
        raise NotFound(no_such_sweep(sweep, service.store.sweep_names()))


def _refuse_no_match(
    texts: dict[str, str | None], since: float | None, until: float | None
) -> None:
    """InvalidValue for a filter that names nothing (`?project=`: a script's unset variable)
    or a window no job can be in (`since` to come, or after `until`), in `ls`'s and the
    Python API's words. Before, each was matched: an empty list, a 200, which a script could
    not tell from "no job of that project" (and a future `since` listed every job not
    finished)."""
    for key, value in texts.items():
        if refusal := empty_filter(key, value, f"{key} (--{key})", "leave it out"):
            raise InvalidValue(refusal)
    if refusal := window_refusal(since, until, time.time(), ("since", "until")):
        raise InvalidValue(refusal)


class _InPieces(Response):
    """A body sent DOWNLOAD_CHUNK bytes at a time (with its content-length), the loop let go
    between. Not a StreamingResponse: under uvicorn (ASGI 2.3) that one cancels its stream
    when the client goes, and the CancelledError's traceback held the stream's frames, and
    with them the whole answer (68 MB for 100,000 jobs), in a cycle until a full collection:
    +70 MB of the daemon's memory per `ls` stopped midway. Here nothing is cancelled: once
    the client is gone uvicorn drops what is sent, and the answer goes with the response."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start = {"type": "http.response.start", "status": self.status_code}
        await send({**start, "headers": self.raw_headers})
        whole = memoryview(self.body)
        for at in range(0, len(whole), DOWNLOAD_CHUNK):
            if at:
                await asyncio.sleep(0)
            piece = whole[at : at + DOWNLOAD_CHUNK]
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


@routes.get("/jobs/wait")
async def wait(
    request: Request,
    ids: Annotated[list[JobId], Query()],
    timeout: float = 30.0,
) -> dict[str, Any]:
    """Answer once every named job has finished, or when `timeout` runs out (long poll).
    `endings`: how each job that ended but did not succeed ended (`failed (exit 7)`), read
    once, when the answer is made. The timeout is checked as the POST's is, in its words
    (job_wait.py): the query's own bounds said FastAPI's."""
    return await waited(_service(request), ids, timeout)


@routes.post("/jobs/wait")  # before /jobs/{action}, which would take "wait" for an action
async def wait_posted(request: Request, body: WaitRequest) -> dict[str, Any]:
    """GET /jobs/wait's answer, with the ids and timeout in the body (WaitRequest); with
    `any`, as soon as one of the jobs has finished."""
    return await waited(_service(request), body.ids, body.timeout, any_finished=body.any)


@routes.get("/jobs/{job_id}")
async def show(request: Request, job_id: JobId) -> dict[str, Any]:
    return _service(request).show(job_id)


@routes.post("/jobs/edit")  # before /jobs/{action}, which would take "edit" for its action
async def edit(request: Request, body: EditRequest) -> Response:
    """`warnings`: what a submission of the jobs as edited would warn of, each line once for
    the jobs it names (edit_warnings.py), for people (the CLI's `warning:`)."""
    service = _service(request)
    edited: list[EditedJob] = []
    results = await service.in_pieces(
        lambda ids: service.edit(ids, body.changes(), body.clear, edited), body.ids
    )
    return _results(results, warnings=edit_warnings(service.engine, edited))


@routes.post("/jobs/priority")  # before /jobs/{action}, which would take it for an action
async def priorities(request: Request, body: PrioritiesRequest) -> Response:
    return _results(await _service(request).set_priorities(body.ids, body.priority))


def _verb(
    request: Request,
    # The schema lists the verbs; the route refuses another itself, saying which there are.
    action: Annotated[str, PathParam(json_schema_extra={"enum": list(VERBS)})],
) -> str:
    """The verb of `POST /jobs/{action}`, checked as a dependency, so before the body is:
    `/jobs/explode` sent no body was told to send JSON, and only then that it is no verb."""
    if action not in VERBS:
        if allowed_methods(request.app, request.url.path):  # `POST /jobs/1`: a job's path
            raise HTTPException(405)  # answered as every 405 is (app._api_http_error)
        raise NotFound(f"unknown action '{action}': use one of {', '.join(VERBS)}")
    return action


@routes.post("/jobs/{action}")
async def act(
    request: Request, action: Annotated[str, Depends(_verb)], body: IdsRequest
) -> Response:
    return _results(await _service(request).act(action, body.ids, body.grace))


def _results(results: list[ActionResult], **more: list[str]) -> Response:
    # Encoded here: FastAPI's generic encoder took 0.3 s for the 20,000 answers of a sweep.
    answers = [r.to_wire() for r in results]
    return Response(json.dumps({"results": answers, **more}), media_type="application/json")


@routes.post("/jobs/{job_id}/priority")
async def priority(request: Request, job_id: JobId, body: PriorityRequest) -> dict[str, Any]:
    return {"message": _service(request).set_priority(job_id, body.priority)}


@routes.post("/jobs/{job_id}/move")
async def move(request: Request, job_id: JobId, body: MoveRequest) -> dict[str, Any]:
    return {"message": _service(request).move(job_id, body.first, body.before, body.swap)}


@routes.get("/jobs/{job_id}/log", response_class=PlainTextResponse)
async def log(
    request: Request,
    job_id: JobId,
    stream: str = "stdout",
    attempt: Annotated[AttemptNumber | None, Query(ge=1, le=LARGEST)] = None,
    offset: Annotated[int | None, Query(ge=0, le=LARGEST)] = None,
    lines: Annotated[int | None, Query(ge=0, le=LARGEST)] = None,
) -> Response:
    """The log's bytes as they are, from `offset` or from where its last `lines` lines begin
    (0: none), up to its size now. Streamed in chunks read on a worker thread: a log of
    gigabytes never sits in the daemon's memory, and the engine's loop never waits for the
    disk."""
    offset = log_follow.asked_offset(offset, lines)
    service = _service(request)
    number, path = service.log_target(job_id, stream, attempt)
    try:
        f = open_job_file(path)
    except FileNotFoundError:
        _not_written_yet(service, job_id, stream, number, path)
        return PlainTextResponse("")
    except Forbidden:  # `--output /dev/null` is said so; a link planted in its place is not served
        _no_log(service, job_id, stream, number)
        raise
    try:
        start = log_follow.lines_start(f, offset, lines)
        end = f.seek(0, os.SEEK_END)
    except OSError:
        f.close()
        raise
    return StreamingResponse(_log_chunks(f, start, end), media_type="text/plain; charset=utf-8")


def _not_written_yet(service: Service, job_id: int, stream: str, number: int, path: Path) -> None:
    """Return if a log that is not there may still come (missing_log); else raise why not,
    rather than answer an empty log."""
    if error := missing_log(service, job_id, stream, number, path):
        raise error


def missing_log(
    service: Service, job_id: int, stream: str, number: int, path: Path
) -> Conflict | NotFound | None:
    """Why the log at `path`, not there, will not come: the attempt never started (Conflict,
    saying why), or the log is gone (its folder deleted, or the file: NotFound). None: it may
    still come, the attempt runs, in its folder, and has not opened its log yet. The API's
    answer and the job page's words (dashboard_job.py), one wording for both."""
    state = service.job_states([job_id])[job_id]
    latest, _ = service.log_target(job_id, "stdout", None)
    if state in LIVE_STATES and number == latest and path.parent.is_dir():
        return None
    if note := service.no_log(job_id, stream, number):
        return Conflict(note)
    why = "" if path.parent.is_dir() else " (its folder was deleted)"
    return NotFound(f"job {job_id}: its log file is gone: {path}{why}")


def _no_log(service: Service, job_id: int, stream: str, number: int) -> None:
    """Conflict saying why that attempt's log has nothing to show (Service.no_log), if it
    is a reason of the job's own."""
    if note := service.no_log(job_id, stream, number):
        raise Conflict(note)


def _log_chunks(f: BinaryIO, start: int, end: int) -> Iterator[bytes]:
    """A plain generator: Starlette runs each step on a worker thread."""
    with f:
        left = end - start
        if left <= 0:  # from past the end: nothing (a seek there may fail: EINVAL)
            return
        f.seek(start)
        while left > 0 and (data := f.read(min(DOWNLOAD_CHUNK, left))):
            left -= len(data)
            yield data


@routes.get("/jobs/{job_id}/log/follow", response_class=EventStream)
async def follow(
    request: Request,
    job_id: JobId,
    stream: str = "stdout",
    attempt: Annotated[AttemptNumber | None, Query(ge=1, le=LARGEST)] = None,
    offset: Annotated[int | None, Query(ge=0, le=LARGEST)] = None,
    lines: Annotated[int | None, Query(ge=0, le=LARGEST)] = None,
    from_attempt: Annotated[AttemptNumber | None, Query(ge=1, le=LARGEST)] = None,
    raw: bool = False,
) -> StreamingResponse:
    """Server-sent events: `data` events carry new log text (with its attempt and the offset
    after it), an `attempt` event says that the job's next attempt began (its log follows), an
    `end` event closes the stream. Without `attempt`, a job that has not started yet is waited
    for. With `lines`, the text starts with the log's last `lines` lines (as `tail -f -n`;
    0: only what is written from now on).
    `from_attempt` with `offset` resumes a follow where it was cut (a daemon restart): from
    that point of that attempt's log, then on through later attempts. With `raw`, bytes that
    are not UTF-8 come as the escapes `\\udcXX` (Python's surrogateescape), not as U+FFFD,
    so that a client writes the log's bytes as they were (`gpuherd log -f` as `gpuherd log`)."""
    if attempt and from_attempt:
        raise InvalidValue("give attempt (that attempt only) or from_attempt, not both")
    offset = log_follow.asked_offset(offset, lines)
    service = _service(request)
    target = log_follow.log_of(service, job_id, stream, attempt or from_attempt)
    if target is not None and not os.path.lexists(target[1]):
        _not_written_yet(service, job_id, stream, *target)
    try:
        start = log_follow.start_offset(target, offset, lines)
    except Forbidden:  # as for `log`: `--output /dev/null` is said so
        if target is not None:  # (always: only a log opened can be refused)
            _no_log(service, job_id, stream, target[0])
        raise
    events = log_follow.follow_events(service, job_id, stream, attempt, target, start, raw)
    # The keep-alive's interval, named: a client gives up on a daemon that misses a few.
    kept = {keep_alive.HEADER: f"{keep_alive.INTERVAL:g}"}
    return StreamingResponse(events, media_type="text/event-stream", headers=kept)


@routes.get("/events", response_class=EventStream)
async def events(
    request: Request, last_event_id: Annotated[str | None, Header(alias=RESUME_HEADER)] = None
) -> StreamingResponse:
    """Server-sent events: one `data` line per state change, as JSON, with its `id`; sent back
    as `Last-Event-ID`, the changes after it (change_events.py)."""
    stream = change_events(_service(request).engine.changes, last_event_id)
    return StreamingResponse(stream, media_type="text/event-stream")
