"""Finding a job's actor again by its name (daemon side): for a restart's recovery, which
re-attaches it, and for a listing, which only asks whether its job still runs.

A listing (`ls`, `show`, the dashboard) runs on the daemon's event loop: it asks through the
cluster link (ray_link.py), refused at once while the cluster does not answer, and waits at
most CHECK_TIMEOUT s. `ray.get_actor` alone would wait while the head is away (up to a
minute, or until it is back), and every client of the daemon with it.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import ray

from gpuherd.executors.base import CannotTell
from gpuherd.executors.ray_errors import first_line
from gpuherd.executors.ray_link import ClusterDown, ClusterLink

log = logging.getLogger("gpuherd.ray")

LOOKUP_TIMEOUT = 10.0
"""Seconds a restart's recovery gives a found actor to answer."""
CHECK_TIMEOUT = 1.0
"""Seconds a listing waits at most to learn whether an actor's job still runs."""

_ray: Any = ray  # ray.get's overloads do not type an actor method's result


def reattach(name: str, namespace: str) -> Any | None:
    """The job actor `name`, found and answering (a restart's recovery follows it again);
    None when there is none. One that does not answer is killed: never left to run on
    unwatched (a silent second run after a retry)."""
    try:
        actor = _ray.get_actor(name, namespace=namespace)
    except ValueError:
        return None  # no such actor: it ended, or was never created
    try:
        info: dict[str, Any] = _ray.get(actor.info.remote(), timeout=LOOKUP_TIMEOUT)
    except Exception as exc:
        log.warning("job actor %s does not answer (%s); killing it", name, first_line(exc))
        with contextlib.suppress(Exception):
            ray.kill(actor, no_restart=True)
        return None
    log.info("found job actor %s on %s (node %s)", name, info["host"], info["node_id"][:8])
    return actor


def job_runs(link: ClusterLink, name: str, namespace: str) -> bool:
    """Whether the job of actor `name` still runs, asked through `link` within
    CHECK_TIMEOUT s, changing nothing; CannotTell when that cannot be learned now.

    Asked of the actor, not of what the executor follows: a re-attached actor whose job is
    held is followed by nothing, and an actor outlives its job (it keeps the exit status
    until a daemon pulls it)."""

    def ask() -> int | None:
        actor = _ray.get_actor(name, namespace=namespace)
        status: int | None = _ray.get(actor.status.remote(), timeout=CHECK_TIMEOUT)
        return status

    try:
        status = link.call(ask, timeout=CHECK_TIMEOUT)
    except ValueError:
        return False  # no such actor: its job has ended (and its status was pulled)
    except ClusterDown as exc:
        raise CannotTell(str(exc)) from exc
    except Exception as exc:  # its node does not answer, or the actor is dying
        raise CannotTell(f"its Ray actor does not answer: {first_line(exc)}") from exc
    return status is None
