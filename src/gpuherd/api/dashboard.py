"""The dashboard's pages and the fragments that keep them live (GET only).

Each page renders its whole content on the server; the page's one SSE stream
(dashboard_streams.py) tells htmx when to fetch the fragment again. Every figure comes from
the Service verbs the JSON API answers with; actions are in dashboard_actions.py, the submit
page in dashboard_submit.py.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response

from gpuherd.api import (
    assets,
    dashboard_actions,
    dashboard_job,
    dashboard_streams,
    dashboard_submit,
    scheduler_banner,
    views,
    views_jobs,
    views_sweeps,
)
from gpuherd.api.id_params import JobId
from gpuherd.api.routes import RouteTable
from gpuherd.core.idspec import format_ids, parse_job_ids
from gpuherd.errors import NotFound
from gpuherd.listing import LIVE_JOBS
from gpuherd.service import Service

routes = RouteTable(include_in_schema=False)


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
    removed = _removed(service, request.query_params.get("removed", ""))
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
        removed=removed,
    )


def _removed(service: Service, text: str) -> str:
    """`job 7: removed`, for a job removed from its own page (dashboard_actions.py sends it
    here, `?removed=7`); '' for ids of jobs there are (a URL kept, or typed) or none."""
    try:
        ids = parse_job_ids(text)
    except ValueError:  # none, or a URL typed by hand: no message
        return ""
    known = service.store.known_ids(ids)
    gone = [job_id for job_id in ids if job_id not in known]
    return f"job{'s' * (len(gone) > 1)} {format_ids(gone)}: removed" if gone else ""


@routes.get("/ui/jobs", response_class=HTMLResponse)
async def jobs_fragment(request: Request) -> HTMLResponse:
    paused = _service(request).engine.queue_paused
    return views.render("_jobs.html", page=_jobs(request), paused=paused)


# ---- one job -------------------------------------------------------------------------------


def _job(request: Request, job_id: int, with_logs: bool = True) -> dict[str, Any]:
    asked = request.query_params.get("attempt", "")
    return dashboard_job.job_view(_service(request), job_id, asked, with_logs)


@routes.get("/jobs/{job_id}", response_class=HTMLResponse)
async def job_page(request: Request, job_id: JobId) -> HTMLResponse:
    since = _mark(request)
    return scheduler_banner.page(
        request, "job.html", path="/jobs", since=since, **_job(request, job_id)
    )


@routes.get("/ui/jobs/{job_id}", response_class=HTMLResponse)
async def job_fragment(request: Request, job_id: JobId) -> HTMLResponse:
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


async def _sweeps(request: Request) -> dict[str, Any]:
    return {"sweeps": await views_sweeps.listing(_service(request))}


@routes.get("/sweeps", response_class=HTMLResponse)
async def sweeps_page(request: Request) -> HTMLResponse:
    since = _mark(request)
    return scheduler_banner.page(
        request, "sweeps.html", path="/sweeps", since=since, **await _sweeps(request)
    )


@routes.get("/ui/sweeps", response_class=HTMLResponse)
async def sweeps_fragment(request: Request) -> HTMLResponse:
    return views.render("_sweeps.html", **await _sweeps(request))


async def _sweep(request: Request, name: str) -> views_sweeps.SweepPage:
    query = views_sweeps.SweepQuery.from_query(request.query_params)
    return await views_sweeps.sweep_page(_service(request), name, query)


@routes.get("/sweeps/{name}", response_class=HTMLResponse)
async def sweep_page(request: Request, name: str) -> HTMLResponse:
    since = _mark(request)
    try:
        page = await _sweep(request, name)
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
        page = await _sweep(request, name)
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
    if len(parts) != 2 or parts[0] != "jobs" or (parts[1].isascii() and parts[1].isdigit()):
        return ""
    return f": {unquote(parts[1])!r} is no job number (job 12's page is /jobs/12)"
