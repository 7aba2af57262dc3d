"""The dashboard's pages and the fragments that keep them live (GET only).

Each page renders its whole content on the server; the page's one SSE stream
(dashboard_streams.py) tells htmx when to fetch the fragment again. Every figure comes from
the Service verbs the JSON API answers with; actions are in dashboard_actions.py, the submit
page in dashboard_submit.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response

from gpuherd.api import (
    assets,
    dashboard_actions,
    dashboard_streams,
    dashboard_submit,
    log_cursor,
    scheduler_banner,
    views,
    views_jobs,
    views_sweeps,
)
from gpuherd.api.routes import RouteTable
from gpuherd.core.idspec import format_ids, parse_job_ids
from gpuherd.core.int64 import holds
from gpuherd.core.log_names import chosen_file
from gpuherd.core.states import OutcomeKind
from gpuherd.core.text import drop_escapes
from gpuherd.errors import Forbidden, NotFound
from gpuherd.jobfiles import open_job_file
from gpuherd.listing import LIVE_JOBS
from gpuherd.log_text import as_a_terminal_shows, utf8_complete
from gpuherd.service import Service
from gpuherd.service_jobs import no_job

routes = RouteTable(include_in_schema=False)
LOG_TAIL_BYTES = 64 * 1024
FAILURE_LINES, FAILURE_BYTES = 6, 4096
"""A failed attempt's stderr lines at the top of its page, read from its last 4 KiB."""


def install(app: FastAPI) -> None:
    """Add the dashboard to the app: pages, fragments, actions, streams and /static."""
    routes.install(app)
    dashboard_actions.routes.install(app)
    dashboard_submit.routes.install(app)
    dashboard_streams.routes.install(app)
    scheduler_banner.routes.install(app)


@routes.get("/static/{name}")
async def static_file(request: Request, name: str, v: str | None = None) -> Response:
    """A static file as this daemon read it at start (assets.py), whatever is on disk now."""
    return assets.response(name, v, request.headers.get("if-none-match"))


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def _mark(request: Request) -> str:
    """Where the daemon's changes stand as a page is drawn, taken before what it shows is read:
    the page's stream (`since=` in its sse-connect) then says `change` only for what came
    after (dashboard_streams.py), never for nothing (a second render of a big sweep)."""
    return _service(request).engine.changes.mark


def _overview(request: Request) -> dict[str, Any]:
    state = request.app.state
    return views.overview(_service(request), state.pid, state.socket_path)


# ---- overview ------------------------------------------------------------------------------


@routes.get("/", response_class=HTMLResponse)
async def overview_page(request: Request) -> HTMLResponse:
    since = _mark(request)
    return scheduler_banner.page(
        request, "overview.html", path="/", since=since, **_overview(request)
    )


@routes.get("/ui/ping")
async def ping() -> Response:
    """Nothing, for a page to ask whether it may still talk to the daemon (its token)."""
    return Response(status_code=204, headers={"cache-control": "no-store"})


@routes.get("/ui/overview", response_class=HTMLResponse)
async def overview_fragment(request: Request) -> HTMLResponse:
    return views.render("_overview.html", **_overview(request))


# ---- jobs ----------------------------------------------------------------------------------


def _jobs(request: Request) -> views_jobs.JobPage:
    return views_jobs.jobs_page(_service(request), views.JobFilter.from_query(request.query_params))


@routes.get("/jobs", response_class=HTMLResponse)
async def jobs_list(request: Request) -> HTMLResponse:
    since = _mark(request)
    try:
        # Ids no job can have (0, -3, past 64 bits) are refused, as `x` is: a banner for
        # job 99999999999999999999 linked a page that cannot exist.
        ids = parse_job_ids(request.query_params.get("submitted", ""))
    except ValueError:  # none, or a URL typed by hand: no banner, as other bad query values
        ids = []
    service = _service(request)
    known = service.store.known_ids(ids)  # `?submitted=9999`, kept or typed: not a job's
    ids = [job_id for job_id in ids if job_id in known]
    sweeps = views.sweep_names(service)
    draining = views.stopping(service) if ids else None
    cancelled = request.query_params.get("cancelled", "")
    page = _jobs(request)
    return scheduler_banner.page(
        request,
        "jobs.html",
        path="/jobs",
        since=since,
        page=page,
        sweep_error=views.sweep_error(page, sweeps),
        submitted=ids,
        warnings=dashboard_submit.cancelled_warnings(service, ids, cancelled),
        notes=[
            *dashboard_submit.submission_notes(service, ids, request.query_params.get("noted", "")),
            *dashboard_submit.past_begin_notes(ids, request.query_params.get("begun", "")),
        ],
        missing=dashboard_submit.missing_script_warnings(
            service, ids, request.query_params.get("missing", "")
        ),
        sweeps=sweeps,
        draining=draining,
        paused=service.engine.queue_paused,
    )


@routes.get("/ui/jobs", response_class=HTMLResponse)
async def jobs_fragment(request: Request) -> HTMLResponse:
    paused = _service(request).engine.queue_paused
    return views.render("_jobs.html", page=_jobs(request), paused=paused)


# ---- one job -------------------------------------------------------------------------------


def _log_tail(path: Path, most: int = LOG_TAIL_BYTES) -> tuple[str, int, bool]:
    """The end of a log as (text, size in bytes, cut): the page starts; the stream goes on."""
    try:
        with open_job_file(path) as f:
            size = f.seek(0, 2)
            start = max(0, size - most)
            f.seek(start)
            data = f.read(size - start)
    except (FileNotFoundError, Forbidden):  # (Forbidden: no plain file, `--output /dev/null`)
        return "", 0, False
    if start:
        data = data[data.find(b"\n") + 1 :]  # begin on a whole line
    cut = log_cursor.escapes_complete(data[: utf8_complete(data)])
    if data[:cut].endswith(b"\r"):
        # Left for the stream to send: a line being redrawn (a progress bar) is overwritten
        # by what comes next, which the page must know (the text shown has no \r left).
        cut -= 1
    text = drop_escapes(data[:cut].decode(errors="replace"))
    text = as_a_terminal_shows(text)
    return text, size - (len(data) - cut), start > 0


def _job(request: Request, job_id: int, with_logs: bool = True) -> dict[str, Any]:
    if not holds(job_id):  # SQLite refuses to look it up: the page said "no such page"
        raise no_job(job_id)
    service = _service(request)
    job = service.show(job_id)
    asked = request.query_params.get("attempt", "").strip()
    try:
        wanted = int(asked) if asked.isascii() and asked.isdigit() else None
    except ValueError:  # more digits than Python converts
        wanted = None
    number = wanted if wanted and 1 <= wanted <= job["attempt"] else job["attempt"]
    # An attempt the job does not have (a link kept from another job, a URL typed), or no
    # number at all (`?attempt=x`, shown silently as if asked for): the latest is shown, as
    # a page past the last points to the last, and the page says so.
    missing = None
    if wanted is None and asked:
        missing = _no_such_attempt(job, asked)
    elif wanted is not None and wanted != number:
        missing = _no_such_attempt(job, wanted)
    logs: dict[str, dict[str, Any]] = {}
    for stream in ("stdout", "stderr"):
        note = None
        if number and with_logs:
            text, offset, cut = _log_tail(service.log_path(job_id, stream, number))
            if not offset:  # why nothing is there, as `gpuherd log` says it (/dev/null, say)
                note = service.no_log(job_id, stream, number)
        else:
            text, offset, cut = "", 0, False
        file = _chosen_file(job, stream, number)
        logs[stream] = {"text": text, "offset": offset, "cut": cut, "note": note, "file": file}
    return {
        "job": job,
        "number": number,
        "logs": logs,
        "failure": _failure(service, job, number),
        "job_dir": job["job_dir"],
        "missing": missing,
        "empty_log": _empty_log(job, number),
    }


def _empty_log(job: dict[str, Any], number: int) -> str:
    """What attempt `number`'s log box says while it is empty (an empty black box said
    nothing): the job not started, the attempt going on, or over with nothing written."""
    ran = next((a for a in job["attempts"] if a["number"] == number), None)
    if ran is None:
        return "nothing yet: the job has not started"
    return "(empty)" if ran["ended_at"] else "nothing yet"


def _failure(service: Service, job: dict[str, Any], number: int) -> str:
    """The last lines of attempt `number`'s stderr if it failed ('' if not, or if it wrote
    none), which its page shows at the top: below the facts, at 700 px, they were two screens
    down. An attempt stopped on request (kill) is no failure to explain."""
    ran = next((a for a in job["attempts"] if a["number"] == number), None)
    if ran is None or not ran["ended_at"] or ran["outcome"] == OutcomeKind.KILLED:
        return ""
    if ran["outcome"] == OutcomeKind.EXIT and ran["exit_code"] == 0:
        return ""
    text = _log_tail(service.log_path(job["id"], "stderr", number), FAILURE_BYTES)[0]
    return "\n".join(text.splitlines()[-FAILURE_LINES:])


def _chosen_file(job: dict[str, Any], stream: str, number: int) -> str | None:
    """The file of the user's choosing (--output, --error) that attempt `number`'s `stream`
    went to, named above its log as `show` names it (the log box alone did not say where the
    output is); before the first start, where the first one's will go. None: in its folder."""
    ran = next((a for a in job["attempts"] if a["number"] == number), None)
    if ran is None:  # (not begun: the job's files as they are now)
        chosen = job["output"] if stream == "stdout" else job["error"] or job["output"]
        return job["log_files"][stream] if chosen else None
    return chosen_file(ran, stream)


def _no_such_attempt(job: dict[str, Any], wanted: int | str) -> str:
    """`job 3 has no attempt 99: it has attempts 1-2, showing attempt 2`; for a `wanted`
    that is no number, `job 3 has no attempt 'x': ...`."""
    if isinstance(wanted, str):
        wanted = repr(wanted[:40])  # (a URL typed: its text, cut; bidi shown: job.html)
    numbers = [int(a["number"]) for a in job["attempts"]]
    if not numbers:
        return f"job {job['id']} has no attempt {wanted}: it has not started yet"
    has = f"attempt {numbers[0]}" if len(numbers) == 1 else f"attempts {format_ids(numbers)}"
    return (
        f"job {job['id']} has no attempt {wanted}: it has {has}, showing attempt {job['attempt']}"
    )


@routes.get("/jobs/{job_id}", response_class=HTMLResponse)
async def job_page(request: Request, job_id: int) -> HTMLResponse:
    since = _mark(request)
    return scheduler_banner.page(
        request, "job.html", path="/jobs", since=since, **_job(request, job_id)
    )


@routes.get("/ui/jobs/{job_id}", response_class=HTMLResponse)
async def job_fragment(request: Request, job_id: int) -> HTMLResponse:
    since = _mark(request)  # the head's own: its page's stream resumes from it (dashboard.js)
    return views.render("_job.html", since=since, **_job(request, job_id, with_logs=False))


# ---- submit, GPUs --------------------------------------------------------------------------


@routes.get("/submit", response_class=HTMLResponse)
async def submit_page(request: Request) -> HTMLResponse:
    return dashboard_submit.submit_page(request, dashboard_submit.SubmitForm.defaults())


def _gpus(request: Request) -> dict[str, Any]:
    service = _service(request)
    live, _ = service.ls(LIVE_JOBS)
    return {"gpus": service.gpus(), "live": {job["id"]: job for job in live}}


@routes.get("/gpus", response_class=HTMLResponse)
async def gpus_page(request: Request) -> HTMLResponse:
    since = _mark(request)
    return scheduler_banner.page(request, "gpus.html", path="/gpus", since=since, **_gpus(request))


@routes.get("/ui/gpus", response_class=HTMLResponse)
async def gpus_fragment(request: Request) -> HTMLResponse:
    return views.render("_gpus.html", **_gpus(request))


# ---- sweeps ---------------------------------------------------------------------------------


def _sweeps(request: Request) -> dict[str, Any]:
    return {"sweeps": views_sweeps.listing(_service(request))}


@routes.get("/sweeps", response_class=HTMLResponse)
async def sweeps_page(request: Request) -> HTMLResponse:
    since = _mark(request)
    return scheduler_banner.page(
        request, "sweeps.html", path="/sweeps", since=since, **_sweeps(request)
    )


@routes.get("/ui/sweeps", response_class=HTMLResponse)
async def sweeps_fragment(request: Request) -> HTMLResponse:
    return views.render("_sweeps.html", **_sweeps(request))


def _sweep(request: Request, name: str) -> views_sweeps.SweepPage:
    query = views_sweeps.SweepQuery.from_query(request.query_params)
    return views_sweeps.sweep_page(_service(request), name, query)


@routes.get("/sweeps/{name}", response_class=HTMLResponse)
async def sweep_page(request: Request, name: str) -> HTMLResponse:
    since = _mark(request)
    try:
        page = _sweep(request, name)
    except NotFound:
        return scheduler_banner.page(
            request, "sweep.html", http_status=404, path="/sweeps", name=name, page=None
        )
    return scheduler_banner.page(
        request, "sweep.html", path="/sweeps", name=name, page=page, since=since
    )


@routes.get("/ui/sweeps/{name}", response_class=HTMLResponse)
async def sweep_fragment(request: Request, name: str) -> HTMLResponse:
    try:
        page = _sweep(request, name)
    except NotFound:  # removed (`gpuherd sweep rm`) while its page was open
        return views.render("_sweep_gone.html", name=name)
    return views.render("_sweep.html", name=name, page=page)


def error_page(request: Request, status: int, message: str | None = None) -> HTMLResponse | None:
    """An error on a page (not /api, not a fragment) as an HTML page: `message` (e.g. 'no
    job 7'), or for none 'no such page' (an unknown path, or one whose id is no number)."""
    path = request.url.path
    if path.startswith(("/api/", "/ui/", "/static/")):
        return None
    message = message or f"no such page: {path}" + _not_a_job(path)
    # Drawn from nothing of the daemon's (an app made without a service draws it too: tests
    # of the routes): the scheduler's banner comes with the page's first poll.
    return views.render(
        "error.html", http_status=status, path=path, message=message, scheduler=None
    )


def _not_a_job(path: str) -> str:
    """`/jobs/abc` (a name typed for a number; a `#12` copied whole): what a job's page is."""
    parts = path.strip("/").split("/")
    if len(parts) != 2 or parts[0] != "jobs" or parts[1].isdigit():
        return ""
    return f": {unquote(parts[1])!r} is no job number (job 12's page is /jobs/12)"
