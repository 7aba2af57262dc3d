"""Routes on the queue, the GPUs and the daemon itself."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import Path, Request

from gpuherd.api.id_params import GpuIndex
from gpuherd.api.routes import RouteTable
from gpuherd.attempts import Live
from gpuherd.core.idspec import format_ids
from gpuherd.core.lifecycle import stop_mode_grace_refused
from gpuherd.core.model import DeviceState
from gpuherd.core.units import plural
from gpuherd.errors import Conflict, InvalidValue, NotFound
from gpuherd.service import Service
from gpuherd.wire_requests import ConfigRequest, GpuAddRequest, StopRequest

routes = RouteTable()
GPU_ACTIONS: dict[str, Any] = {"enum": ["drain", "enable"]}  # (for the schema; checked below)
_background: set[asyncio.Task[None]] = set()


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


@routes.post("/queue/pause")
async def pause_queue(request: Request) -> dict[str, Any]:
    return {"message": _service(request).pause_queue(True)}


@routes.post("/queue/resume")
async def resume_queue(request: Request) -> dict[str, Any]:
    return {"message": _service(request).pause_queue(False)}


@routes.get("/gpus")
async def gpus(request: Request) -> dict[str, Any]:
    return _service(request).gpus()


@routes.post("/gpus")
async def gpu_add(request: Request, body: GpuAddRequest) -> dict[str, Any]:
    return {"message": _service(request).gpu_add(body.index, body.slots)}


@routes.delete("/gpus/{index}")
async def gpu_remove(request: Request, index: GpuIndex) -> dict[str, Any]:
    return {"message": _service(request).gpu_remove(index)}


@routes.post("/gpus/{index}/{action}")
async def gpu_state(
    request: Request, index: GpuIndex, action: Annotated[str, Path(json_schema_extra=GPU_ACTIONS)]
) -> dict[str, Any]:
    states = {"drain": DeviceState.DRAINING, "enable": DeviceState.ENABLED}
    if action not in states:  # a path that names no endpoint: 404, as any other such path
        raise NotFound(
            f"no such endpoint: POST {request.url.path}: a GPU's actions are drain and enable "
            f"(POST /api/v1/gpus/{index}/drain)"
        )
    return {"message": _service(request).gpu_state(index, states[action])}


@routes.get("/config")
async def get_config(request: Request) -> dict[str, Any]:
    return {"settings": _service(request).config()}


@routes.post("/config")
async def set_config(request: Request, body: ConfigRequest) -> dict[str, Any]:
    return {"message": _service(request).set_config(body.name, body.value)}


@routes.get("/daemon")
async def status(request: Request) -> dict[str, Any]:
    service = _service(request)
    answer = service.status(request.app.state.pid, request.app.state.socket_path)
    # Runs herd.db does not know, holding GPUs (a restored backup): engine_unwatched.py.
    return {**answer, "unknown_runs": service.engine.set_aside.unwatched.view()}


@routes.post("/daemon/stop")
async def stop(request: Request, body: StopRequest) -> dict[str, Any]:
    if body.mode not in ("leave", "drain", "kill"):
        raise InvalidValue(f"unknown stop mode '{body.mode}': use leave, drain or kill")
    if body.grace is not None and (refused := stop_mode_grace_refused(body.mode, body.grace)):
        raise InvalidValue(refused)
    service = _service(request)
    engine, server = service.engine, request.app.state.server
    running = len(engine.live)
    if joined := _stopping_already(service.stop_mode, body.mode, running):
        return {"message": joined, "running": running}
    service.asked_to_stop(body.mode)

    async def stop_after_jobs() -> None:
        if left := await engine.drain(kill=body.mode == "kill", chosen=body.grace):
            service.left_running(left)
        engine.changes.close()  # open event streams end, so the server can close
        server.should_exit = True

    # Streams (log -f, wait, the dashboard) end only when the daemon does: during a drain
    # the jobs go on, and a follow cut now would wait in vain for another daemon.
    if body.mode == "leave":
        engine.changes.close()
        server.should_exit = True
        message = "stopping" + left_behind(list(engine.live.values()))
    else:
        task = asyncio.create_task(stop_after_jobs())
        _background.add(task)
        task.add_done_callback(_background.discard)
        verb = "killing" if body.mode == "kill" else "waiting for"
        message = f"stopping after {verb} {plural(running, 'running job')}"
        if not running:  # (not "after killing 0 running jobs")
            message = "no job was running: stopping"
        elif body.mode == "drain":
            message += paused_in_drain(list(engine.live.values()))
        elif paused := sum(1 for live in engine.live.values() if live.paused):
            # (`killing 2 running jobs` of one running and one paused, which `stop` tells apart)
            message = f"stopping after killing {_running_and_paused(running, paused)}"
    return {"message": message, "running": running}


def _stopping_already(asked: str | None, mode: str, running: int) -> str | None:
    """What a stop asked of a daemon stopping already is told, when it joins that stop
    (waits for it) instead of changing it; None when it changes it. A plain stop during a
    `stop --kill` ended the daemon at once: the kill's grace was cut short and its jobs left
    running, while that stop said "daemon stopped". A kill goes on whatever is asked after;
    a drain is ended now by a plain stop and hastened by a --kill (as documented); a plain
    stop, on its way out already, can no longer drain or kill: refused, said how to."""
    if asked is None or (asked == "drain" and mode != "drain"):
        return None
    if asked == "leave" and mode != "leave":
        raise Conflict(
            f"the daemon is stopping already, as another `gpuherd daemon stop` asked, without "
            f"--{mode}: running jobs go on; `gpuherd daemon start` once it has stopped, then "
            f"`gpuherd daemon stop --{mode}`"
        )
    jobs = plural(running, "running job")
    doing = {
        "kill": f" after killing {jobs}",
        "drain": f" once its {jobs} {'ends' if running == 1 else 'end'}",
    }.get(asked, "")
    return f"stopping already{doing}, as another stop asked: waiting for it"


def _running_and_paused(live: int, paused: int) -> str:
    """`1 running job and 1 paused job`, `2 paused jobs`: the jobs a --kill ends."""
    said = [
        plural(n, f"{kind} job") for n, kind in ((live - paused, "running"), (paused, "paused"))
    ]
    return " and ".join(part for part, n in zip(said, (live - paused, paused), strict=True) if n)


def paused_in_drain(lives: Sequence[Live]) -> str:
    """` (1 of them paused: it ends only once resumed, gpuherd resume 7)`: a drain waits for
    a paused job too, which without a word looked like a drain that never ends."""
    paused = sorted(live.job_id for live in lives if live.paused)
    if not paused:
        return ""
    which = "it ends" if len(paused) == 1 else "each ends"
    return f" ({len(paused)} of them paused: {which} only once resumed, gpuherd resume " + (
        f"{format_ids(paused)})"
    )


def left_behind(lives: Sequence[Live]) -> str:
    """What a plain stop leaves to the next daemon: `; 1 running job goes on, 1 paused job
    stays paused and the next daemon re-attaches; 1 job being killed: the next daemon
    finishes the kill`. A job in its grace is apart: its SIGKILL is the next daemon's to
    send (its stop is stored), so counted as running it hid a kill not done yet."""
    killing = sum(1 for live in lives if live.stop_reason is not None)
    paused = sum(1 for live in lives if live.paused and live.stop_reason is None)
    running = len(lives) - killing - paused
    kept = [
        plural(running, "running job") + (" goes on" if running == 1 else " go on"),
        plural(paused, "paused job") + (" stays paused" if paused == 1 else " stay paused"),
    ]
    said = ", ".join(part for part, n in zip(kept, (running, paused), strict=True) if n)
    if said:
        said = f"; {said} and the next daemon re-attaches"
    if killing:
        kills = "the kill" if killing == 1 else "the kills"
        said += f"; {plural(killing, 'job')} being killed: the next daemon finishes {kills}"
    return said
