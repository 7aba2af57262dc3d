"""The FastAPI application: routes are in jobs.py and system.py; errors become one JSON line.

The same app serves the dashboard (dashboard.py: pages at /, fragments and streams under
/ui, assets under /static) and the TCP listener's control (listener.py). Over TCP it is
wrapped in auth.TcpGate by the listener; over the Unix socket it is served as it is.
"""

from __future__ import annotations

import email.message
import functools
import json
import logging
import sqlite3
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.dependencies.models import Dependant
from fastapi.dependencies.utils import request_params_to_args
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute

from gpuherd import __version__
from gpuherd.api import dashboard, jobs, listener, sweeps, system
from gpuherd.api.askers_zone import InAskersZone
from gpuherd.api.auth import with_headers
from gpuherd.api.endpoints import (
    HerdApi,
    ReadsWholeNumbers,
    allowed_methods,
    dependants,
    given_twice,
    not_allowed,
    outside_enum,
    to_bare_path,
    unparsable,
    without_slash,
)
from gpuherd.api.limits import ASGIApp, CapsBody, Receive, Scope, Send
from gpuherd.api.numbers import gpu_text, not_an_object, too_large_problem, which_too_large
from gpuherd.api.own_home import ServesItsHome
from gpuherd.core.int64 import OutOfRange
from gpuherd.core.states import TransitionError
from gpuherd.errors import DaemonError, DiskFull, HerdError, InvalidValue
from gpuherd.service import Service

log = logging.getLogger("gpuherd.api")
VERSION_HEADER = (b"gpuherd-version", __version__.encode())
HEAD_SCOPE_KEY = "gpuherd.head"
"""Set in the scope of a HEAD request that AnswersHead passes on as a GET."""
NOT_JSON = (
    "the body must be JSON, sent with 'Content-Type: application/json' "
    "(curl: -H 'Content-Type: application/json')"
)


class SaysItsVersion:
    """Every answer names the gpuherd that gave it (`gpuherd-version`): a client of another
    version (the package was upgraded and this daemon not restarted) can say so."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            send = with_headers(send, [VERSION_HEADER])
        await self.app(scope, receive, send)


class AnswersHead:
    """HEAD is GET without the body (RFC 9110) on every GET endpoint: FastAPI routes GET
    alone, and `curl -I` got 405. The route runs as for a GET; uvicorn, which still sees the
    request's HEAD, sends the headers and drops the body, and a stream (`/events`) ends as
    any does when its client, having had the headers, leaves."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "HEAD":
            scope = {**scope, "method": "GET", HEAD_SCOPE_KEY: True}
        await self.app(scope, receive, send)


class AddsDashboard:
    """The dashboard's routes are added to the app at its first request outside /api/, not at
    start: most daemons serve the CLI alone, and FastAPI's analysis of them was CPU spent at
    every start (benchmarks/daemon_start.py). They follow the API's routes, as they did when
    added at start, and no /api/ path can be one of theirs: the same route answers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.added = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.added and scope["type"] == "http" and not scope["path"].startswith("/api/"):
            self.added = True
            dashboard.install(scope["app"])
        await self.app(scope, receive, send)


def create_app(service: Service, pid: int, socket_path: str) -> FastAPI:
    app = HerdApi(
        title="gpuherd", version=__version__, docs_url=None, redoc_url=None, redirect_slashes=False
    )
    app.state.service = service
    app.state.pid = pid
    app.state.socket_path = socket_path
    app.state.stop_mode = "leave"
    app.state.takes_body = {}  # refuse_body_where_none's, per route
    install_api(app)
    app.add_middleware(InAskersZone)  # (the moments of an answer said in the asker's zone)
    app.add_middleware(AddsDashboard)
    app.add_middleware(CapsBody)  # innermost of the three: its 413 names the version too
    # A request for another home (home_header.py) is refused before its body is read, in an
    # answer that names the version.
    app.add_middleware(ServesItsHome)
    app.add_middleware(SaysItsVersion)
    app.add_middleware(AnswersHead)

    @app.exception_handler(HerdError)
    async def herd_error(request: Request, exc: HerdError) -> Response:
        page = dashboard.error_page(request, exc.status, str(exc))
        return page or JSONResponse({"error": str(exc)}, status_code=exc.status)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        # An unknown path or method under /api answers as every API error does; an unknown
        # page as the dashboard's pages do; the rest (a fragment's, a static file's) as the API.
        if not request.url.path.startswith("/api/"):
            if exc.status_code == 404 and (moved := to_bare_path(request.app, request.scope)):
                return moved  # (a page's address typed with a trailing /)
            page = dashboard.error_page(request, 404) if exc.status_code == 404 else None
            return page or _other_http_error(request, exc)
        return _api_http_error(request, exc)

    @app.exception_handler(OverflowError)
    async def too_large(request: Request, exc: OverflowError) -> Response:
        # The one answer to a number past 64 bits, wherever it was: a route's check found it
        # (OutOfRange names it) or SQLite refused it (looked for in the request here).
        line = str(exc) if isinstance(exc, OutOfRange) else which_too_large(request)
        return dashboard.error_page(request, 404) or JSONResponse({"error": line}, status_code=422)

    @app.exception_handler(TransitionError)
    async def transition_error(_: Request, exc: TransitionError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=409)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        return _invalid(request, exc)

    @app.exception_handler(sqlite3.OperationalError)
    async def database_refused(request: Request, exc: sqlite3.OperationalError) -> Response:
        refusal = _database_refusal(service, exc)
        if refusal is None:
            return await crashed(request, exc)
        return await herd_error(request, refusal)

    @app.exception_handler(Exception)
    async def crashed(_: Request, exc: Exception) -> JSONResponse:
        log.exception("request failed")
        return JSONResponse(
            {"error": f"internal error ({type(exc).__name__}: {exc}); see daemon.log"},
            status_code=500,
        )

    return app


def _method(request: Request) -> str:
    return "HEAD" if request.scope.get(HEAD_SCOPE_KEY) else request.method


def _invalid(request: Request, exc: RequestValidationError) -> Response:
    if page := dashboard.error_page(request, 404):  # /jobs/abc: no such page
        return page
    errors = exc.errors()
    # `GET /jobs/kill` is a POST's path, not a job id that is no integer; `POST /jobs/1` a
    # GET's, whatever its body (a job's path: no route takes it with POST).
    if answer := _not_allowed(request):
        return answer
    if said := next(filter(None, map(too_large_problem, errors)), None):
        return JSONResponse({"error": said}, status_code=422)  # as SQLite's (too_large)
    whole_body = any(tuple(err.get("loc", ())) == ("body",) for err in errors)
    if whole_body and not _sent_json(request):  # curl -d: a form, not JSON
        return JSONResponse({"error": NOT_JSON}, status_code=415)
    problems = "; ".join(_problem(err) for err in errors)
    return JSONResponse({"error": f"invalid request: {problems}"}, status_code=422)


def _api_http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    if exc.status_code == 405:  # or 404: no method takes the path's values (`/jobs/abc`)
        return _not_allowed(request) or _no_endpoint(request)
    if exc.status_code == 404:
        return _no_endpoint(request)
    if exc.status_code == 400:  # FastAPI's: a body it could not read (not UTF-8, too deep)
        return JSONResponse({"error": unparsable(getattr(request, "_body", b""))}, 422)
    line = str(exc.detail)
    return JSONResponse({"error": line}, status_code=exc.status_code, headers=exc.headers)


def _no_endpoint(request: Request) -> JSONResponse:
    said = _no_such(request) or f"{_method(request)} {request.url.path} (/openapi.json lists them)"
    return JSONResponse({"error": f"no such endpoint: {said}"}, status_code=404)


def _no_such(request: Request) -> str | None:
    """What a path that some route takes but for its trailing `/` gets, in the 404's line
    (endpoints.without_slash): the path to use (None: not such a path)."""
    if bare := without_slash(request.app, request.scope):
        return f"{_method(request)} {request.url.path}: leave out the trailing / ({bare})"
    return None


def _other_http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """An unknown path or method outside /api that no page answers (`/static/`, `GET
    /ui/queue/explode`, `POST /jobs`), in the one shape of every error, `{"error": "one
    line"}` (docs/api.md): FastAPI's own was `{"detail": "Not Found"}`. Not /openapi.json's
    words: it describes the API alone."""
    path, allowed = request.url.path, (exc.headers or {}).get("Allow")
    if exc.status_code == 405 and allowed:
        line = not_allowed(_method(request), path, allowed.split(", "), described=False)
    elif exc.status_code == 404:
        said = _no_such(request) or f"{_method(request)} {path} (the dashboard is at /)"
        line = f"no such endpoint: {said}"
    else:
        line = str(exc.detail)
    return JSONResponse({"error": line}, status_code=exc.status_code, headers=exc.headers)


def _not_allowed(request: Request) -> JSONResponse | None:
    """The 405 of a path some route takes with another method, naming those (None: none)."""
    path = request.url.path
    allowed = allowed_methods(request.app, path)
    if not allowed or request.method in allowed:
        return None
    line = not_allowed(_method(request), path, allowed)
    return JSONResponse({"error": line}, status_code=405, headers={"Allow": ", ".join(allowed)})


def install_api(app: FastAPI) -> None:
    """The JSON API's routes, under /api/v1, each checked for what it does not take."""
    app.router.routes.extend(api_routes())


@functools.cache
def api_routes() -> tuple[BaseRoute, ...]:
    """The JSON API's routes, analysed by FastAPI once per process and shared by its apps
    (a route keeps no app of its own: a request's is in its scope; nor dependency overrides,
    which gpuherd has none of). The analysis, ~70 pydantic adapters for ~30 routes, is ~45 ms
    of CPU, most of what making the app costs: the test suite's fork server does it once,
    before it forks the daemons of its tests (a forked start, `ls` and stop: 0.20 -> 0.13
    CPU-s). /openapi.json is as it was, byte for byte."""
    # The settings of FastAPI's own router, but for a JSON body's whole numbers (read_json).
    router = APIRouter(route_class=ReadsWholeNumbers)
    checked = [Depends(refuse_unknown_query), Depends(refuse_body_where_none)]
    for module in (jobs, system, listener, sweeps):  # routes.py: each route analysed once
        module.routes.install(router, prefix="/api/v1", dependencies=checked)
    return tuple(router.routes)


QUERY_TAKEN_EVERYWHERE = frozenset({"token"})
"""Read by the TCP gate (auth.TcpGate), before any route: `?token=` on an /api URL."""


async def refuse_unknown_query(request: Request) -> None:
    """A query parameter the endpoint does not take is refused, as a body's unknown field is:
    `?stat=failed` listed every job, as if no filter had been asked; so is one of a single
    value given twice (given_twice)."""
    if not request.query_params:  # (most requests: the route's names are not looked up)
        return
    params = [
        param for dep in dependants(request.scope["route"].dependant) for param in dep.query_params
    ]
    taken = {param.alias for param in params} | QUERY_TAKEN_EVERYWHERE
    unknown = [name for name in dict.fromkeys(request.query_params) if name not in taken]
    if unknown:
        where = f"{request.method} {request.url.path}"
        names = ", ".join(sorted(taken - QUERY_TAKEN_EVERYWHERE))
        takes = f"takes {names}" if names else "takes no query parameter"
        raise InvalidValue(
            f"invalid request: query.{unknown[0]}: unknown parameter (misspelt?): "
            f"{where} {takes} (/openapi.json describes it)"
        )
    if twice := given_twice(params, request.query_params):
        raise InvalidValue(twice)


async def refuse_body_where_none(request: Request) -> None:
    """A body sent to an endpoint that takes none (`/queue/pause`, `/gpus/0/drain`) is
    refused, as a body's unknown field is: `{"ids": [3]}` to /queue/pause paused the whole
    queue. An empty body or `{}` (what the CLI sends) is no body. A path or query value
    FastAPI refuses (`/gpus/abc/drain`) is told first, as without a body: this check, a
    dependency, runs before FastAPI reads them."""
    route = request.scope["route"]
    if request.method == "GET" or _takes_body(request.app.state.takes_body, route):
        return
    sent = await request.body()
    try:
        data = json.loads(sent) if sent.strip() else {}
    except (ValueError, RecursionError):  # `[[[…]]]` 100,000 deep: a 500 it was
        data = None
    if data == {} or _values_refused(route.dependant, request):  # (its error follows)
        return
    field = f"{next(iter(data))}: unknown field (misspelt?): " if isinstance(data, dict) else ""
    raise InvalidValue(
        f"invalid request: {field}{request.method} {request.url.path} takes no body "
        "(/openapi.json describes it)"
    )


def _takes_body(known: dict[int, bool], route: Any) -> bool:
    """Whether `route` or a dependency of it reads a body: its tree walked once, then `known`
    (the app's, by the route's id: the app keeps its routes; a route is not hashable)."""
    if (takes := known.get(id(route))) is None:
        takes = known[id(route)] = any(dep.body_params for dep in dependants(route.dependant))
    return takes


def _values_refused(dependant: Dependant, request: Request) -> bool:
    """Whether FastAPI refuses a path or query value of the request (`/gpus/abc/drain`), or
    the route will: a path value outside the `enum` its schema lists (`/gpus/0/explode`, a 404
    that names the actions; told "takes no body" when sent one, it was)."""
    return any(
        request_params_to_args(dep.path_params, request.path_params)[1]
        or request_params_to_args(dep.query_params, request.query_params)[1]
        or outside_enum(dep.path_params, request.path_params)
        for dep in dependants(dependant)
    )


def _database_refusal(service: Service, exc: sqlite3.OperationalError) -> HerdError | None:
    """The one line for a database that refused a request through no bug of the daemon (None
    for any other error): nothing of the request was stored, and it works once that is over."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    if name.startswith("SQLITE_FULL"):  # tests/reliability/test_disk_faults.py
        log.warning("a request found the disk under the database full: %s", exc)
        return DiskFull(DATABASE_FULL.format(path=service.store.path))
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        # Another program (an open `sqlite3` shell, a backup) held a lock on herd.db for
        # longer than the store waits.
        log.warning("a request found the database locked by another program: %s", exc)
        return DaemonError(DATABASE_BUSY)
    return None


DATABASE_FULL = (
    "the disk holding the queue's database ({path}) is full: free some space on it, then try "
    "again (`gpuherd ls --all` shows what was done)"
)
DATABASE_BUSY = (
    "the queue's database is locked by another program (an open `sqlite3` shell, a backup): "
    "close it, then try again (`gpuherd ls --all` shows what was done)"
)


def _sent_json(request: Request) -> bool:
    """Whether the request said its body is JSON, as FastAPI reads it (`application/json`,
    `application/*+json`); FastAPI leaves any other body unparsed."""
    header = email.message.Message()
    header["content-type"] = request.headers.get("content-type", "")
    subtype = header.get_content_subtype()
    return header.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


UNKNOWN_FIELD = ("unexpected_keyword_argument", "extra_forbidden")


def _problem(err: Any) -> str:
    """One problem of a request, named by its field: `jobs.0.gpus: Input should be …`."""
    loc = [str(part) for part in err.get("loc", ())]
    if loc[:1] == ["body"]:
        loc = loc[1:]
    kind = err.get("type")
    if kind == "json_invalid":
        why = err.get("ctx", {}).get("error", "JSON decode error")
        return f"the body is not valid JSON ({why})"
    if not loc:
        return "the body must be a JSON object (/openapi.json describes each endpoint's)"
    if kind in UNKNOWN_FIELD:
        return f"{'.'.join(loc)}: unknown field (misspelt?)"
    if kind == "greater_than_equal" and loc == ["query", "attempt"]:  # (0 was the latest)
        return (
            f"query.attempt: attempts are numbered from 1, got {err.get('input')}: leave "
            "attempt out for the latest"
        )
    if said := not_an_object(err):  # `{"jobs": [1]}`
        return f"{'.'.join(loc)}: {said}"
    if said := gpu_text(err):  # `"only_gpus": ""`: named by the field and the CLI's option
        return said
    return f"{'.'.join(loc)}: {err.get('msg')}"
