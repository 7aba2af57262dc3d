"""`gpuherd sweep rm NAME` in the daemon: a sweep's jobs removed as `gpuherd rm` removes them,
then its record; its results folder is the user's and stays (with the SUCCESS markers that
make a resubmission skip the points done). Submitting it meanwhile is refused (sweeps.py)."""

from __future__ import annotations

import shlex
from functools import partial
from typing import Any

from gpuherd.core.idspec import format_ids
from gpuherd.core.states import LIVE_STATES
from gpuherd.core.sweep import no_such_sweep, sweep_option
from gpuherd.core.units import plural
from gpuherd.engine_held_runs import REMOVED_NOW, held_run_running
from gpuherd.errors import Conflict, NotFound
from gpuherd.service import Service


async def remove_sweep(service: Service, name: str) -> dict[str, Any]:
    """Forget the sweep: its jobs as `gpuherd rm` removes them (queued and held ones
    cancelled, finished ones forgotten; PIECE at a time, so the daemon answers others
    meanwhile), then its record. Refused as a whole, nothing removed, while one of its
    jobs runs or is paused, or a run one was held for runs (engine_held_runs). Its
    results folder is the user's: kept, markers and all."""
    store = service.store
    row = store.get_sweep(name)
    if row is None:
        raise NotFound(no_such_sweep(name, store.sweep_names()))
    jobs = store.sweep_jobs(name)
    live = [job.id for job in jobs if job.state in LIVE_STATES]
    if live:
        raise Conflict(
            f"sweep {name!r} has {plural(len(live), 'job')} running or paused "
            f"({format_ids(live)}): nothing removed. Stop them first: gpuherd kill "
            f"$(gpuherd ls -q {sweep_option(name)}); once they have ended, "
            f"gpuherd sweep rm {'-- ' * name.startswith('-')}{shlex.quote(name)}"
        )
    if running := [why for job in jobs if (why := held_run_running(service.engine, job))]:
        one = len(running) == 1
        raise Conflict(
            f"sweep {name!r}: {'; '.join(running)}: nothing removed. End "
            f"{'that process' if one else 'those processes'} or wait for "
            f"{'it' if one else 'them'} to end, then remove the sweep {REMOVED_NOW}"
        )
    removing = service.sweeps_removing
    if name in removing:
        raise Conflict(f"sweep {name!r} is being removed already")
    removing.add(name)  # between pieces other clients are answered: none submits it
    ids, cancelled = [job.id for job in jobs], list[int]()  # (jobs that waited for them)
    try:
        remove = partial(service.remove, cancelled=cancelled)
        results = await service.in_pieces(remove, ids) if ids else []
    finally:
        removing.discard(name)
    # From here on nothing awaits, so what is checked is what is deleted.
    left = store.sweep_jobs(name)
    if left:
        raise Conflict(
            f"sweep {name!r}: {plural(sum(r.ok for r in results), 'job')} removed, but "
            f"{plural(len(left), 'job')} of it remain ({format_ids(j.id for j in left)}: "
            "submitted again meanwhile, or refused); its record is kept"
        )
    with store.transaction():
        store.delete_sweep(name)
        service.engine.publish({"event": "sweep-rm", "sweep": name})
    service.engine.set_sweep_cap(name, None)
    return {
        "name": name,
        "removed": sum(r.ok for r in results),
        "cancelled": sorted(set(cancelled) - set(ids)),  # (as `rm` names them; were unsaid)
        "results_dir": row.results_dir,
    }
