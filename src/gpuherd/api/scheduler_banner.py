"""The banner atop every dashboard page while the scheduler fails, or after one of its
callbacks broke (engine_health.TickHealth), in the words of `gpuherd daemon status`: the
error, since when, and where the daemon log with its traceback is. Before, the pages showed
jobs queued and GPUs idle, and no reason.

Every page is drawn with it (`page`), then asks for it again every 5 s (`/ui/scheduler`,
base.html): a failing pass changes no job, so no page's event stream would say so, and the
job and submit pages fetch nothing else on a timer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse

from gpuherd import paths
from gpuherd.api import views
from gpuherd.api.forms import service_of
from gpuherd.api.routes import RouteTable
from gpuherd.engine_health import TickHealth

routes = RouteTable(include_in_schema=False)


@dataclass(frozen=True)
class SchedulerTrouble:
    failing: bool
    """Passes fail now: no queued job starts. False: a callback of the engine broke, at `at`."""
    at: float
    """Since when passes fail, or when the callback broke."""
    error: str
    """`JSONDecodeError: Expecting value: ...`, as the daemon logged it."""
    log: Path
    """The daemon log, which has the traceback (`gpuherd daemon log` prints it)."""


def trouble(health: TickHealth, home: Path) -> SchedulerTrouble | None:
    """What the banner says, None while the scheduler works: a failing pass first, as `daemon
    status` says it (TickHealth.status), else a callback that broke (for the daemon's life)."""
    log = paths.daemon_log(home)
    if health.failing is not None:
        return SchedulerTrouble(True, *health.failing, log)
    if health.broken is not None:
        return SchedulerTrouble(False, *health.broken, log)
    return None


def _of(request: Request) -> SchedulerTrouble | None:
    service = service_of(request)
    return trouble(service.engine.health, service.home)


def page(request: Request, name: str, /, *, http_status: int = 200, **context: Any) -> HTMLResponse:
    """A dashboard page (a template extending base.html), drawn with the banner."""
    return views.render(name, http_status=http_status, scheduler=_of(request), **context)


@routes.get("/ui/scheduler", response_class=HTMLResponse)
async def banner_fragment(request: Request) -> HTMLResponse:
    """The banner alone (empty while the scheduler works), for the pages' poll."""
    return views.render("_scheduler.html", scheduler=_of(request))
