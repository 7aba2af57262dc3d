"""Routes on sweeps: submit (expand, resume), list, one sweep's results table, remove."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query, Request

from gpuherd.api.routes import RouteTable
from gpuherd.errors import InvalidValue
from gpuherd.gc_pause import collector_paused
from gpuherd.job_commits import commit_of
from gpuherd.service import Service
from gpuherd.store_rows import LARGEST
from gpuherd.submission import env_problem
from gpuherd.submission_text import reject_not_utf8_in, reject_nul
from gpuherd.sweep_reads import sweep_listing, sweep_status
from gpuherd.sweep_removal import remove_sweep
from gpuherd.sweeps import Sweeps
from gpuherd.wire_requests import SweepRequest

routes = RouteTable()


def _sweeps(request: Request) -> Sweeps:
    service: Service = request.app.state.service
    return Sweeps(service)


@routes.post("/sweeps")
async def submit(request: Request, body: SweepRequest) -> dict[str, Any]:
    """Expand the spec, skip done and queued points, submit the rest; say how many of each."""
    reject_nul("sweep: ", cwd=body.cwd, env=body.env)
    reject_not_utf8_in("sweep: ", body.spec)
    if problem := env_problem({**body.env, **body.options.env_overrides}, 0):
        raise InvalidValue(f"sweep: {problem}")  # once, not for each of its points
    path = body.env.get("PATH")
    git = None if body.dry_run else await commit_of((body.cwd, path))  # (job_commits.py)
    return await _sweeps(request).submit(body, git)


@routes.get("/sweeps")
async def listing(request: Request) -> dict[str, Any]:
    """Read off the loop (sweep_reads.py): every point of every sweep is judged."""
    with collector_paused():
        return {"sweeps": await sweep_listing(request.app.state.service)}


@routes.get("/sweeps/{name}")
async def table(
    request: Request,
    name: str,
    sort: str | None = None,
    state: Annotated[list[str] | None, Query()] = None,
    limit: Annotated[int | None, Query(ge=1, le=LARGEST)] = None,
    paths: bool = False,
) -> dict[str, Any]:
    """The results table; with `paths`, each point's `job_dir` and `log_files` too, which
    read every point's job and files (~35 ms per 1,000 points): only what shows them asks
    (`sweep status --json`, the Python API's status()), not the table or CSV."""
    service = request.app.state.service
    with collector_paused():  # 40,000 points' rows: ~400,000 objects kept (gc_pause.py)
        # Read off the loop (sweep_reads.py): a 20,000-point table held it 0.5-3 s.
        return await sweep_status(service, name, sort, state or (), limit, paths)


@routes.delete("/sweeps/{name}")
async def remove(request: Request, name: str) -> dict[str, Any]:
    """Remove the sweep's jobs (as `rm`, in pieces) and its record; its results folder stays."""
    return await remove_sweep(request.app.state.service, name)
